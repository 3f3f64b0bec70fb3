"""The benchmark's settings: its stages, its presets (``cpu``, ``gpu``, ``tiny``) and every size of a
run (:class:`BenchConfig`), and :class:`BenchSettings`, the typed overrides of a preset that the
book's benchmark page accepts as a parameter."""

from __future__ import annotations

import typing
from dataclasses import dataclass, fields, make_dataclass, replace

from .config import param

STAGES = ("train", "quality", "score", "curves", "precision", "replicas", "book")
#: The keys of a results record that each stage writes.
STAGE_KEYS = {"train": ("training", "flops"), "quality": ("quality",), "score": ("scoring",), "curves": ("curves",),
              "precision": ("precision",), "replicas": ("replicas", "utilisation"), "book": ("book",)}
#: What each preset runs unless ``--stages`` says otherwise. The tiny preset (the tests, the smoke
#: book) leaves out the precision stage: it repeats the training and scoring of the others.
DEFAULT_STAGES = {"cpu": ("train", "quality", "score", "curves", "precision"),
                  "gpu": ("train", "quality", "score", "curves", "precision"),
                  "tiny": ("train", "quality", "score", "curves"),
                  "gpu-check": ("replicas",)}
@dataclass(frozen=True)
class BenchConfig:
    mc_model: str = "minilm-l6"
    train_steps: int = 100
    batch_size: int = 8  # questions per optimiser step
    eval_batch_size: int = 32
    max_length: int = 256
    lr: float = 2e-5
    seed: int = 0
    eval_items: int | None = None  # ReClor val questions to score (None: all 500)
    quality_fields: str = "A"  # what the quality stage's models read: the options alone, which they learn from
    quality_questions: int | None = None  # ReClor train questions of the quality stage (None: all not held out)
    # train questions held out of the quality stage's training and scored with val: on 500 items
    # alone, runs that agree on 9 in 10 get a 90% paired interval of ±2.2 to ±2.4 points, which
    # reaches past a ±3 margin whenever the two differ by a point; on 1,500 about ±1.3
    quality_holdout: int = 1000
    quality_epochs: float = 3
    equivalence_margin: float = 3.0  # points: the TOST margin of the quality stage
    lm_model: str = "smollm2-135m"
    lm_items: int | None = None  # LogiQA test questions of the scoring stage (None: all 651)
    precision_lm_items: int | None = 100  # ... of the precision stage, which scores them twice
    record_items: int | None = 50  # ReCoRD eval queries of the scoring stage's record task (None: all)
    lm_batch_size: int = 8  # sequences per forward pass, the same for both scorers
    peak_size: int = 2048  # n of the n×n matmuls that measure the peak
    peak_reps: int = 5
    curve_sizes: tuple[int, ...] = (16, 32, 64, 128)  # questions (items) of each point of the cost curves
    curve_lengths: tuple[int, ...] = (128, 256, 512)  # tokens per (context, option) of the length curve
    curve_length_questions: int = 32  # questions of each point of the length curve
    book_profile: str = "quick"
    book_cold: bool = False  # also measure a cold build (an hour on 2 cores) instead of reading it
    book_edited: str = "reclor"  # the chapter whose text the warm rebuild treats as edited
    # the replicas stage: full-size random-weight replicas of the full profile's models
    replica_full_size: bool = True  # False: the tiny replicas (the tests, on a CPU)
    replica_mc_model: str = "roberta-large"  # fine-tuned, ours against the tuned Trainer
    replica_train_steps: int = 20
    replica_batch_size: int = 16
    replica_max_length: int = 256  # the paper's
    trainer_compile: bool = False  # also the tuned Trainer with torch.compile (compiling takes minutes)
    replica_lm_model: str = "meta-llama/Llama-2-7b-hf"  # scores LogiQA options and generates
    replica_lm_items: int = 64
    replica_harness: bool = True  # lm-evaluation-harness's logiqa task on the same replica
    replica_generate_prompts: int = 8
    replica_generate_tokens: int = 32
    replica_generate_batch: int = 4
    plan_check_chapter: str = "reclor"  # one full-profile job of it, on replicas, against its plan
    plan_check_questions: int | None = None  # its training questions (None: all of the data's)


PRESETS = {
    # a quiet 2-core CPU machine: about 1.5 hours for every stage but the book (78 min on 2026-11-27)
    "cpu": BenchConfig(),
    # one GPU: one epoch of ReClor train at 32 questions a step, all of LogiQA test; the quality
    # stage takes as many steps as the cpu preset's (3 epochs at 8 questions a step: at 32 and 2
    # epochs neither run learned on an H200, final losses 1.32 and 1.31)
    "gpu": BenchConfig(train_steps=144, batch_size=32, eval_batch_size=64, quality_epochs=12, lm_items=None,
                       lm_batch_size=32, record_items=None, curve_sizes=(80, 160, 320, 640),
                       curve_length_questions=128, peak_size=8192, peak_reps=10),
    # one GPU, the replicas stage alone: full-size replicas of roberta-large and Llama-2-7B, and one
    # full-profile job of the ReClor chapter against its plan; about 5 minutes on one H100
    "gpu-check": BenchConfig(eval_batch_size=64, lm_batch_size=32, peak_size=8192, peak_reps=10),
    # the tests and the smoke profile: tiny random models, a handful of items
    "tiny": BenchConfig(mc_model="tiny-bert", train_steps=2, batch_size=2, eval_batch_size=4, eval_items=4,
                        quality_questions=4, quality_holdout=2, quality_epochs=1, lm_model="tiny-llama", lm_items=3,
                        record_items=2, precision_lm_items=3, lm_batch_size=4, peak_size=128, peak_reps=2,
                        curve_sizes=(2, 4), curve_lengths=(16, 32), curve_length_questions=2,
                        replica_full_size=False, replica_train_steps=2, replica_batch_size=2, replica_max_length=32,
                        replica_lm_items=3, replica_generate_prompts=2, replica_generate_tokens=3,
                        replica_generate_batch=2, plan_check_questions=4),
}


def config_from(preset: str, overrides: dict | None = None) -> BenchConfig:
    """A preset with ``overrides`` (``{"train_steps": 20}``) applied; unknown keys are an error."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    names = {f.name for f in fields(BenchConfig)}
    unknown = sorted(set(overrides or {}) - names)
    if unknown:
        raise ValueError(f"unknown benchmark setting(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    return replace(PRESETS[preset], **(overrides or {}))


#: The ranges of the benchmark's settings that are not positive (:data:`rcstudy.config.POSITIVE`).
_RANGES = {"seed": {"ge": 0}}

#: Overrides of a preset, each field one of :class:`BenchConfig`'s, none by default (the preset's
#: value): a closed, typed section of the benchmark page's configuration.
BenchSettings = make_dataclass(
    "BenchSettings",
    [(f.name, typing.get_type_hints(BenchConfig)[f.name] | None,
      param(None, f"{f.name} (none: the preset's)", **_RANGES.get(f.name, {})))
     for f in fields(BenchConfig)],
    frozen=True)
BenchSettings.__module__ = __name__


def preset_overrides(settings) -> dict:
    """The settings a :class:`BenchSettings` gives (its fields that are not None)."""
    return {f.name: getattr(settings, f.name) for f in fields(settings) if getattr(settings, f.name) is not None}
