"""The MetaLogic chapter's parameters (the defaults are the quick profile, the book's default)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...config import ChapterConfig, param, section
from ...models.registry import ModelName
from .. import shared

PAPER = "metalogic"
Method = Literal["once", "multitask"]
METHOD_NAMES = {"once": "All-at-Once", "multitask": "Multitask"}


@dataclass(frozen=True)
class Seq2Seq(shared.TextToTextTraining):
    """Fine-tuning the generator (All-at-Once, Multitask) on the official target strings."""

    model: ModelName = param("smollm2-135m", "generator: decoder-only smollm2-135m (tiny-llama: smoke), minilm-l6 "
                                       "or a Hub id (t5-large)")
    methods: tuple[Method, ...] = param(("once",), "settings to train: once (All-at-Once), multitask")
    seeds: tuple[int, ...] = param((0,), "training seeds of each setting", ge=0)
    n_train: int | None = param(None, "training passages (none: all)")
    # 20 steps of 8 passages: what two CPU cores afford for the top blocks of SmolLM2
    max_steps: int | None = param(20, "optimiser steps per model (none: use epochs)")
    optimizer: Literal["adamw", "adafactor"] = param("adamw", "optimiser (the paper: adafactor)")
    train_layers: int | None = param(10, "decoder-only models: fine-tune only the top N blocks (none: every weight)")
    evaluations: int | None = param(2, "dev evaluations, evenly spaced over training; the best is kept "
                                       "(none: the last step)")
    n_dev: int | None = param(12, "dev passages those evaluations decode (none: all)")
    checkpoint_every: int | None = param(None, "optimiser steps between checkpoints (none: only at the end)")
    stop_after_minutes: float | None = param(None, "stop (and keep a checkpoint) after this long; run again "
                                                   "to resume")


@dataclass(frozen=True)
class Decoding:
    """What the trained generators decode, and how."""

    input_format: Literal["paper", "released"] = param(
        "paper", "test-time inputs: paper (with sentence ids and variables) or released (official inference code)")
    n_test: int | None = param(40, "test passages decoded (none: all)")
    infer_max_src_len: int = param(256, "inference truncation of inputs (tokens)")
    gen_max_len: int = param(128, "generated tokens at most (greedy decoding)")
    eval_batch_size: int = param(20, "passages decoded at once")


@dataclass(frozen=True)
class FewShot:
    """A causal LM prompted with solved examples, then the test passage (All-at-Once format)."""

    model: ModelName | None = param("smollm2-135m", "causal LM prompted with solved examples (none: skip)")
    shots: int = param(1, "solved examples in the prompt", ge=0)
    n: int | None = param(8, "test passages it answers (none: all)")
    max_new_tokens: int = param(128, "generated tokens at most")


@dataclass(frozen=True)
class Scale:
    """The data-scale curve (Figure 5): systems re-trained on nested random subsets of train."""

    ratios: tuple[float, ...] = param((0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0), "shares of the training passages", gt=0, le=1)
    seeds: tuple[int, ...] = param((0, 1, 2), "random subsets per share", ge=0)
    methods: tuple[str, ...] = param(("features",), "systems re-trained at each share: features and any of "
                                                    "seq2seq.methods")


@dataclass(frozen=True)
class ErrorAnalysis:
    """The rule-based error categories (Table 5)."""

    system: str = param("features", "whose dev predictions are categorised: features, once or multitask")
    n: int | None = param(50, "dev passages drawn at random (none: all)")


@dataclass(frozen=True)
class Config(ChapterConfig):
    chapter = "metalogic"
    datasets = ("metalogic",)
    seq2seq: Seq2Seq = section(Seq2Seq, "fine-tuning the generator (see rcstudy params metalogic)")
    decoding: Decoding = section(Decoding, "what the trained generators decode, and how")
    fewshot: FewShot = section(FewShot, "the few-shot prompted LM")
    scale: Scale = section(Scale, "the data-scale curve (Figure 5)")
    error_analysis: ErrorAnalysis = section(ErrorAnalysis, "the error categories (Table 5)")
    draw_ids: tuple[str, ...] = param(("train_4341",), "test passages drawn gold vs predicted (plus the best, "
                                                      "median and worst)")

    def __post_init__(self):
        known = ("features", "once", "multitask")
        for name in (*self.scale.methods, self.error_analysis.system):
            if name not in known:
                raise ValueError(f"unknown system {name!r}; choose one of {', '.join(known)}")


def engine_config(cfg: Config, seed: int):
    """The :class:`~rcstudy.models.seq2seq.Seq2SeqConfig` of one training seed: the ``seq2seq``
    section's training settings (:class:`~rcstudy.experiments.shared.TextToTextTraining`), with
    the ``decoding`` section's lengths and batch and the run's checkpointing."""
    t, d = cfg.seq2seq, cfg.decoding
    return t.engine(t.model, seed, infer_max_src_len=d.infer_max_src_len, gen_max_len=d.gen_max_len,
                    eval_batch_size=d.eval_batch_size, checkpoint_every=t.checkpoint_every,
                    evaluations=t.evaluations, train_layers=t.train_layers)


def scaled_generators(cfg: Config) -> list[str]:
    """The fine-tuned methods re-trained at each data share (those the chapter trains at all)."""
    return [m for m in cfg.scale.methods if m in cfg.seq2seq.methods]
