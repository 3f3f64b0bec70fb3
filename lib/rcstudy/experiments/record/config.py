"""The ReCoRD chapter's parameters: one section per method (defaults: the quick profile, the book's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...baselines import span_readers as sr
from ...baselines.asreader import ASReaderConfig
from ...config import ChapterConfig, param, section
from ...data import hub
from ...models import mc
from ...models.registry import ModelName
from .. import shared

#: The paper's key in :mod:`rcstudy.papers` (its tables and claims).
PAPER = "record"


@dataclass(frozen=True)
class Sizes:
    """How many queries each method trains on and is scored on (seeded samples)."""

    train: int | None = param(None, "cap on training queries (seeded sample; None: all)")
    lm_eval: int | None = param(None, "evaluation queries the LM scores (seeded sample; None: all)")
    span_eval: int | None = param(80, "evaluation queries the span readers score (seeded sample; None: all)")
    seed: int = param(0, "seed of these samples", ge=0)


@dataclass(frozen=True)
class LMBaseline:
    """The paper's language-model baseline."""

    model: ModelName = param("smollm2-135m", "causal LM that scores the filled-in sequences (full: a Hub name)")
    scoring: Literal["full", "mean"] = param("full", '"full": the paper\'s sequence log-probability; "mean": per token')
    batch_size: int = param(16, "continuations scored per forward pass")


@dataclass(frozen=True)
class RankerConfig(shared.FineTuning):
    """The fine-tuned encoder ranker (not in the paper): a multiple-choice encoder over the filled-in
    queries, trained with the book's settings (:class:`rcstudy.experiments.shared.FineTuning`) but
    for the four below."""

    fields: Literal["QA", "CQA"] = param("QA", '"QA": the filled-in query alone; "CQA": passage + filled-in query')
    # a filled-in query alone is short; the quick profile trains on a few hundred queries, so a
    # higher rate over two epochs in smaller batches gives the ranker enough updates to learn
    max_length: int = param(64, "tokens per filled-in query")
    epochs: float = param(2.0, "training epochs")
    lr: float = param(4e-4, "peak learning rate")
    batch_size: int = param(8, "queries per optimiser step (before accumulation)")
    train_options: int | None = param(4, "candidates per training query (gold + random others; None: all)")

    def mc_config(self, model: str, seed: int) -> mc.MCConfig:
        """The multiple-choice engine's settings for ``model`` and one seed, on the ranker's input."""
        return self.engine(model, self.fields, seed)


@dataclass(frozen=True)
class DocQASettings:
    """DocQA-lite, trained from scratch, without and with ELMo-style frozen features."""

    emb: int = param(50, "word embedding size")
    char_filters: int = param(32, "character-CNN filters")
    hidden: int = param(32, "GRU size (the original: 100)")
    epochs: int = param(2, "training epochs")
    max_answer_len: int = param(15, "longest answer span, in tokens")
    vocab_size: int = param(20000, "vocabulary: the most frequent training words")
    elmo_model: ModelName = param("minilm-l6", 'frozen encoder whose layers "DocQA w/ ELMo" mixes (full: a Hub name)')
    elmo_layers: tuple[int, ...] | None = param((2, 4, 6), "its hidden layers in the scalar mix (None: all)", ge=0)

    def engine(self, elmo: bool) -> sr.DocQAConfig:
        """The span reader's settings, with the ELMo-style features or without."""
        return sr.DocQAConfig(emb=self.emb, char_filters=self.char_filters, hidden=self.hidden, epochs=self.epochs,
                              vocab_size=self.vocab_size, max_answer_len=self.max_answer_len,
                              features=self.elmo_model if elmo else None,
                              feature_layers=self.elmo_layers if elmo else None)


@dataclass(frozen=True)
class ExtractorSettings:
    """The fine-tuned encoder span extractor (not in the paper), over sliding windows."""

    max_length: int = param(192, "window length in tokens")
    stride: int = param(64, "overlap of consecutive windows")
    epochs: float = param(1, "training epochs")
    lr: float = param(1e-4, "peak learning rate")
    batch_size: int = param(8, "windows per optimiser step")

    def engine(self, model: str) -> sr.ExtractorConfig:
        """The span extractor's settings for ``model``."""
        return sr.ExtractorConfig(model=model, max_length=self.max_length, stride=self.stride, epochs=self.epochs,
                                  lr=self.lr, batch_size=self.batch_size)


@dataclass(frozen=True)
class Config(ChapterConfig):
    """The ReCoRD chapter's parameters; the defaults are the quick profile (the book's)."""

    chapter = "record"
    datasets = ("record",)
    data_source: str = param(hub.FOLDER, "where ReCoRD comes from: folder (the files in $RCSTUDY_DATA/record), hub "
                                         "(SuperGLUE's copy on the Hub) or a directory in that copy's layout")
    model: ModelName = param("minilm-l6", "encoder that the ranker and the span extractor fine-tune (full: a Hub name)")
    seeds: tuple[int, ...] = param((0,), "training seeds of every trained method", ge=0)
    random_mode: Literal["mention", "unique"] = param(
        "mention", 'random guess draws a "mention" or a distinct "unique" candidate')
    sizes: Sizes = section(Sizes, "how many queries each method trains on and is scored on")
    lm: LMBaseline = section(LMBaseline, "the paper's language-model baseline")
    ranker: RankerConfig = section(RankerConfig, "the fine-tuned encoder ranker (not in the paper)")
    asreader: ASReaderConfig = section(ASReaderConfig, "the attention-sum reader, trained from scratch")
    docqa: DocQASettings = section(DocQASettings, "DocQA-lite without and with ELMo-style features")
    extractor: ExtractorSettings = section(ExtractorSettings, "the fine-tuned span extractor (not in the paper)")

    def __post_init__(self):
        hub.check_source("record", self.data_source)

    def data_sources(self) -> dict[str, str]:
        return {"record": self.data_source} if self.data_source != hub.FOLDER else {}

