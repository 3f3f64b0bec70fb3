"""The RULE chapter's parameters (defaults: the quick profile), and the prompt settings and fine-tuned models
they name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

from ...config import ChapterConfig, param, section
from ...models.mc import MCConfig
from ...models.seq2seq import Seq2SeqConfig
from ...models.registry import ModelName
from ...prompts.rule import ZERO_SHOT_COT
from .. import shared


SCORINGS = ("letter", "option", "generate")
SCORING_NAMES = {"letter": "letter prob.", "option": "option LL", "generate": "generated"}


def _check_settings(specs: Sequence[str], where: str) -> None:
    for spec in specs:
        try:
            PromptSetting.parse(spec)
        except ValueError as e:
            raise ValueError(f"{where}: {spec!r} is not shots:family:scoring ({e})") from None


_SHARED = shared.RECLOR_ENCODER


@dataclass(frozen=True)
class EncoderSection(shared.FineTuning):
    """The multiple-choice encoder fine-tuned on ReClor (the paper's DeBERTa-v3), every weight.
    The defaults are the shared ReClor model's settings (:mod:`rcstudy.experiments.shared`): the
    RULE chapter reads the model the ReClor chapter trained."""

    model: ModelName = param(_SHARED.model, "multiple-choice encoder fine-tuned on ReClor (full: a Hub name)")
    train_questions: int | None = param(
        None, "ReClor training questions drawn, RULE main questions then dropped; the text-to-text models too (None: all)")
    sample_mains: int | None = param(
        300, "main questions (with all their subquestions) every fine-tuned model is scored on (None: all)")

    def mc_config(self, seed: int) -> MCConfig:
        """The engine's configuration for one seed, on (context, question, option)."""
        return self.engine(self.model, "CQA", seed)


@dataclass(frozen=True)
class Seq2SeqSection(shared.TextToTextTraining):
    """Text-to-text models fine-tuned on ReClor in UnifiedQA's format (the paper's UnifiedQA-v2):
    Adafactor at a constant 1e-4, as UnifiedQA was trained; a target is one option."""

    models: tuple[ModelName, ...] = param((), "text-to-text models fine-tuned on ReClor in UnifiedQA's format (full: UnifiedQA-v2)")
    epochs: int = param(1, "training epochs")
    lr: float = param(1e-4, "learning rate (constant after the warm-up)")
    optimizer: Literal["adamw", "adafactor"] = param("adafactor", "optimiser (UnifiedQA's: adafactor)")
    max_src_len: int = param(512, "input tokens; the context is cut first")
    max_tgt_len: int = param(128, "target tokens: one option")

    def seq2seq_config(self, model: str, seed: int) -> Seq2SeqConfig:
        """The engine's configuration for one model and seed."""
        return self.engine(model, seed)


@dataclass(frozen=True)
class LMSection:
    """Causal language models prompted with the released prompts."""

    models: tuple[ModelName, ...] = param(("smollm2-135m",), "causal LMs prompted with the released prompts")
    # quick: zero-shot, and one shot with ReClor's and with RULE's exemplars (the exemplars claim's
    # pair); each one-shot setting is 52 batches of about 10 s on 2 cores, about 9 minutes of the hour
    settings: tuple[str, ...] = param(("0:vanilla:letter", "1:vanilla:letter", "1:subq:letter"),
                                      "prompt settings, shots:family:scoring")
    sample_mains: int | None = param(100, "main questions (with all their subquestions) the LMs answer (None: all)")
    max_length: int = param(2048, "tokens; longer prompts are cut from the left")
    cot_max_new_tokens: int = param(256, "generated tokens for chain-of-thought settings")
    aggregation: Literal["per_split_mean", "pooled"] = param(
        "per_split_mean", "LM scores: mean ± sd over the 5 splits, or pooled")
    exclude_exemplar_items: bool = param(True, "leave out questions that are exemplars of their own prompt")

    def __post_init__(self):
        _check_settings(self.settings, "lm.settings")


@dataclass(frozen=True)
class AnalysesSection:
    """The paper's follow-ups and our extensions: which run, and their settings."""

    alignment: bool = param(True, "the rationale-alignment follow-up (§5)")
    rationale_augmentation: bool = param(True, "Table 5: rationales appended to the main questions (LM sample)")
    rationale_settings: tuple[str, ...] = param(("0:vanilla:letter",), "prompt settings for Table 5 (shots:family:scoring)")
    context_ablation: bool = param(True, "Appendix M: the evaluations again without the context")
    ablation_settings: tuple[str, ...] = param(("0:vanilla:letter",), "LM settings re-run without it")
    length: bool = param(True, "Appendix I: accuracy against question and option length")
    length_bins: int = param(4, "quantile bins per kind of question")
    types: bool = param(True, "Appendix L: accuracy by ReClor question type (keyword rule)")

    def __post_init__(self):
        _check_settings(self.rationale_settings, "analyses.rationale_settings")
        _check_settings(self.ablation_settings, "analyses.ablation_settings")


@dataclass(frozen=True)
class Config(ChapterConfig):
    """The RULE chapter's parameters; the defaults are the quick profile (the book's default)."""

    chapter = "rule"
    datasets = ("rule", "reclor")  # ReClor train: the fine-tuned models' training set
    encoder: EncoderSection = section(EncoderSection, "the multiple-choice encoder fine-tuned on ReClor")
    seq2seq: Seq2SeqSection = section(Seq2SeqSection, "text-to-text models fine-tuned on ReClor")
    lm: LMSection = section(LMSection, "the prompted language models")
    analyses: AnalysesSection = section(AnalysesSection, "the follow-up analyses and their settings")
    seeds: tuple[int, ...] = param((_SHARED.seed,), "training seeds of every fine-tuned model", ge=0)
    sample_seed: int = param(0, "seed of every draw (training questions, main-question samples, bootstrap)", ge=0)

    def __post_init__(self):
        if not self.seeds:
            raise ValueError("seeds: at least one seed")


@dataclass(frozen=True)
class PromptSetting:
    """``shots`` exemplars of ``family`` (vanilla: ReClor questions; subq: RULE subquestions; the
    cot_* families, or zero_shot_cot), scored by answer-letter probability (``letter``), by the
    option text's mean log-likelihood per token (``option``), or read from greedy output (``generate``)."""

    shots: int
    family: str = "vanilla"
    scoring: str = "letter"

    def __post_init__(self):
        if self.scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {SCORINGS}, got {self.scoring!r}")
        if self.family.startswith("cot") or self.family == ZERO_SHOT_COT:
            if self.scoring != "generate":
                raise ValueError("chain-of-thought prompts are read from generated text (scoring='generate')")

    @property
    def setting(self) -> str:
        return {0: "zero-shot", 1: "one-shot", 5: "five-shot"}.get(self.shots, f"{self.shots}-shot")

    @property
    def label(self) -> str:
        if self.family == ZERO_SHOT_COT:
            head = "zero-shot CoT"
        elif self.shots == 0:
            head = "zero-shot"
        else:
            source = {"vanilla": "ReClor exemplars", "subq": "RULE exemplars"}.get(self.family,
                                                                                   self.family.replace("_", " "))
            head = f"{self.setting}, {source}"
        return f"{head} ({SCORING_NAMES[self.scoring]})"

    @classmethod
    def parse(cls, spec: str) -> "PromptSetting":
        """``"0:vanilla:letter"`` → ``PromptSetting(0, "vanilla", "letter")`` (the parameter-cell form)."""
        shots, family, scoring = spec.split(":")
        return cls(int(shots), family, scoring)


@dataclass(frozen=True)
class EncoderSetup:
    """A model fine-tuned on ReClor: a multiple-choice encoder (``MCConfig``, all weights, as the
    paper's DeBERTa-v3) or a text-to-text model (``Seq2SeqConfig``, UnifiedQA's format).

    ``train_questions`` draws that many ReClor training questions (:func:`rcstudy.sampling.draw`,
    the ReClor chapter's draw; None: all), and the RULE main questions among them are then dropped.
    """

    cfg: object  # rcstudy.models.mc.MCConfig or rcstudy.models.seq2seq.Seq2SeqConfig
    train_questions: int | None = None
    subsample_seed: int = 0

    @property
    def seed(self) -> int:
        return self.cfg.seed


def trained_setups(cfg: Config) -> tuple[str, dict[str, list[EncoderSetup]]]:
    """Every model to fine-tune on ReClor, one setup per seed: the encoder's name and all setups."""
    draw = {"train_questions": cfg.encoder.train_questions, "subsample_seed": cfg.sample_seed}
    encoder_name = f"{cfg.encoder.model}, fine-tuned on ReClor"
    setups = {encoder_name: [EncoderSetup(cfg.encoder.mc_config(seed), **draw) for seed in cfg.seeds]}
    for m in cfg.seq2seq.models:
        setups[f"{m}, fine-tuned on ReClor (text to text)"] = [
            EncoderSetup(cfg.seq2seq.seq2seq_config(m, seed), **draw) for seed in cfg.seeds]
    return encoder_name, setups
