"""The LogiQA chapter's parameters: the files read, the samples drawn, and each system's settings
(the defaults are the quick profile, the book's)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ...baselines.readers import ReaderConfig
from ...config import ChapterConfig, ConfigError, param, section
from ...data import hub
from ...models import mc
from ...models.registry import ModelName
from .. import shared

P = "logiqa"
Ablation = Literal["no paragraph", "no question", "options only"]


@dataclass(frozen=True)
class Dataset:
    """Which LogiQA 1.0 files are read, and how the training set and the type labels are built."""

    languages: tuple[Literal["en", "zh"], ...] = param(("en", "zh"), "LogiQA 1.0 languages read (Chinese: rule-based rows)")
    dedup_threshold: float = param(0.3, "TF-IDF cosine of paragraphs: LogiQA 2.0 items at or above it are dropped", ge=0, le=1)
    match_threshold: float = param(0.5, "TF-IDF cosine of whole items: LogiQA 2.0 type labels for LogiQA 1.0 test items", ge=0, le=1)
    source: str = param(hub.FOLDER, "where LogiQA 1.0 comes from: folder ($RCSTUDY_DATA/logiqa), hub (the public "
                                    "copy, English only, with Train) or a directory in the copy's layout")
    logiqa2_source: str = param(hub.FOLDER, "where LogiQA 2.0 comes from: folder ($RCSTUDY_DATA/logiqa2), hub (the "
                                            "public copy) or a directory in the copy's layout")

    def __post_init__(self):
        hub.check_source("logiqa", self.source)
        hub.check_source("logiqa2", self.logiqa2_source)
        if self.source != hub.FOLDER and "zh" in self.languages:
            raise ConfigError(f"dataset.source={self.source}: the Hub copy of LogiQA is English only; "
                              f"set dataset.languages=[en]")


@dataclass(frozen=True)
class Sizes:
    """The evaluation subsamples, and the seed of every sample the chapter draws."""

    n_dev: int | None = param(None, "Eval questions the encoder is scored on (None: all 651)")
    n_test_sub: int | None = param(None, "Test questions for ablations and transfer (None: all 651)")
    seed: int = param(0, "seed of every draw: training questions, the Eval and Test subsamples, ReClor questions", ge=0)


@dataclass(frozen=True)
class Readers:
    """The neural readers trained from scratch (the paper's SAR, GA and Co-Matching rows)."""

    names: tuple[Literal["sar", "ga", "comatch"], ...] = param(("sar", "ga", "comatch"), "readers trained: Stanford attentive, gated-attention, co-matching")
    seeds: tuple[int, ...] = param((0,), "seeds of the from-scratch readers", ge=0)
    n_train: int | None = param(400, "training questions for the readers (None: all)")
    epochs: int = param(2, "training epochs (the best epoch on Eval is kept)")
    hidden: int = param(64, "hidden size")
    max_passage: int = param(200, "paragraph tokens kept")
    glove_path: str | None = param(None, "a local glove.6B.100d.txt; None: random embeddings")

    def config(self, model: str, seed: int) -> ReaderConfig:
        return ReaderConfig(model=model, seed=seed, hidden=self.hidden, epochs=self.epochs,
                            max_passage=self.max_passage, glove_path=self.glove_path)


_SHARED = shared.RECLOR_ENCODER


@dataclass(frozen=True)
class Encoder(shared.FineTuning):
    """The fine-tuned multiple-choice encoder (the paper's RoBERTa role): Table 3, the ablations,
    transfer and the analyses. Its model, input length and training settings are the shared ReClor
    model's (:mod:`rcstudy.experiments.shared`), so that model is the transfer rows' source stage;
    only its batch on LogiQA differs."""

    model: ModelName = param(_SHARED.model, "the fine-tuned encoder (full: a Hub name)")
    extra_models: tuple[ModelName, ...] = param((), "more encoders for Table 3 only (full: bert-base-uncased)")
    seeds: tuple[int, ...] = param((_SHARED.seed,), "encoder seeds (also of the ablated and transfer runs)", ge=0)
    n_train: int | None = param(None, "training questions for the encoder (None: all)")
    # LogiQA's training set is smaller than ReClor's: at 16 questions a step, one epoch is too few
    # updates for MiniLM to leave the loss of guessing; 8 doubles the updates at the same cost
    batch_size: int = param(8, "questions per optimiser step on LogiQA")

    def mc(self, seed: int, fields: str = "CQA") -> mc.MCConfig:
        """The engine's configuration of this encoder for one seed and input."""
        return self.engine(self.model, fields, seed)


@dataclass(frozen=True)
class LM:
    """The causal LM scored zero-shot by option log-likelihood (a modern row, not in the paper)."""

    model: ModelName = param("smollm2-135m", "causal LM scored zero-shot (full: a Hub name)")
    batch_size: int = param(8, "options scored per forward pass")
    n_test: int | None = param(None, "Test questions it scores (None: all 651)")


@dataclass(frozen=True)
class Transfer:
    """Table 4: the encoder trained on ReClor (the source available here: the shared ReClor model
    with the default settings), then on LogiQA."""

    n_source: int | None = param(None, "ReClor training questions drawn, RULE's main questions then left out (None: all)")
    then_logiqa: bool = param(True, "also continue the source model on LogiQA (one more full fine-tuning)")
    source_epochs: float = param(_SHARED.epochs, "training epochs on ReClor")
    source_lr: float = param(_SHARED.lr, "peak learning rate on ReClor")
    source_batch_size: int = param(_SHARED.batch_size, "questions per optimiser step on ReClor")

    def source_mc(self, encoder: Encoder, seed: int) -> mc.MCConfig:
        """The source stage's settings: the encoder's, but for these three on ReClor (by default,
        the shared ReClor model's)."""
        return replace(encoder, epochs=self.source_epochs, lr=self.source_lr,
                       batch_size=self.source_batch_size).mc(seed)


@dataclass(frozen=True)
class Config(ChapterConfig):
    """The LogiQA chapter's parameters; the defaults are the quick profile (the book's)."""

    chapter = "logiqa"
    datasets = ("logiqa", "logiqa2")
    dataset: Dataset = section(Dataset, "the LogiQA files read, deduplication and type matching")
    sizes: Sizes = section(Sizes, "evaluation subsamples and the seed of every draw")
    readers: Readers = section(Readers, "the neural readers trained from scratch")
    encoder: Encoder = section(Encoder, "the fine-tuned multiple-choice encoder")
    lm: LM = section(LM, "the zero-shot language model")
    ablations: tuple[Ablation, ...] = param(("no paragraph", "no question"),
                                            "partial inputs the encoder is retrained with (Figure 3)")
    transfer: Transfer = section(Transfer, "transfer from ReClor (Table 4)")

    def data_sources(self) -> dict[str, str]:
        chosen = {"logiqa": self.dataset.source, "logiqa2": self.dataset.logiqa2_source}
        return {name: source for name, source in chosen.items() if source != hub.FOLDER}
