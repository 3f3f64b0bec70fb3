"""The LogiQA chapter's pipeline: data diagnostics, statistics, reasoning-type labels, the
rule-based, from-scratch and pretrained systems, and the paper's analyses (ablation, transfer,
length, lexical overlap, reasoning types). :func:`run` computes everything the page shows from a
:class:`Config`.

Every system ends up as a :class:`Predictions`: for each evaluated split (``"en-eval"``,
``"en-test"``, ``"zh-eval"``, ``"zh-test"``) an array (seeds × items) of predicted option
indices over the *whole* split, ``-1`` where an item was not evaluated (subsampled runs). The
analyses then average over seeds item by item, so every table is computed the same way.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from .. import exports, learning, papers, sampling
from ..baselines import lexical
from ..baselines.option_lm import option_logliks
from ..baselines.readers import READERS, ReaderConfig, train_reader_cached
from ..cache import file_checksum
from ..config import ChapterConfig, ConfigError, param, section
from ..data import hub
from ..data import logiqa as lq
from ..data import reclor
from ..data.records import MCItem
from ..errors import DataFileMissing
from ..jobs import Job, Tokens, causal_option_tokens, loaded_once, mc_tokens
from ..models import mc
from ..models.registry import ModelName, split_revision
from ..models.sequential import finetune_stages_predict
from ..papers.logiqa import TYPE_NAMES
from ..prompts.logiqa import ABLATION_FIELDS, ablation_items, lm_context, lm_continuation
from ..report import ChapterResults, ClaimLog, md_text, paper_vs_ours
from ..runtime import Runtime
from ..stats import (Interval, MeanSD, bootstrap_ci, hierarchical_ci, hierarchical_difference, hierarchical_paired,
                     mean_sd)
from . import shared

P = "logiqa"
SPLIT_COLUMNS = {"en-eval": "LogiQA Dev", "en-test": "LogiQA Test", "zh-eval": "Chinese Dev", "zh-test": "Chinese Test"}
LENGTH_BINS = (0, 100, 150, 200, np.inf)
LENGTH_LABELS = ("(0,100]", "(100,150]", "(150,200]", "(200,+∞)")
EXPORT_FILE = "logiqa_predictions.json"
ROW_NAMES = {"bert-base-uncased": "BERT", "roberta-base": "RoBERTa"}  # our systems that play a paper row
DEDUP_SENSITIVITY = (0.2, 0.3, 0.4, 0.5, 0.7, 0.9)  # thresholds whose removals the training-data text reports
EXACT_COPY = 0.95  # paragraph similarity above which a LogiQA 2.0 item is (almost) an exact copy
Ablation = Literal["no paragraph", "no question", "options only"]


# --------------------------------------------------------------------------------------------
# Configuration


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
class Encoder:
    """The fine-tuned multiple-choice encoder (the paper's RoBERTa role): Table 3, the ablations,
    transfer and the analyses. Its model and input length are the shared ReClor model's
    (:mod:`rcstudy.experiments.shared`), so that model is the transfer rows' source stage."""

    model: ModelName = param(_SHARED.model, "the fine-tuned encoder (full: a Hub name)")
    extra_models: tuple[ModelName, ...] = param((), "more encoders for Table 3 only (full: bert-base-uncased)")
    seeds: tuple[int, ...] = param((_SHARED.seed,), "encoder seeds (also of the ablated and transfer runs)", ge=0)
    n_train: int | None = param(None, "training questions for the encoder (None: all)")
    max_length: int = param(_SHARED.max_length, "tokens per option sequence")
    epochs: float = param(_SHARED.epochs, "training epochs on LogiQA")
    lr: float = param(_SHARED.lr, "peak learning rate on LogiQA")
    # LogiQA's training set is smaller than ReClor's: at 16 questions a step, one epoch is too few
    # updates for MiniLM to leave the loss of guessing; 8 doubles the updates at the same cost
    batch_size: int = param(8, "questions per optimiser step on LogiQA")

    def mc(self, seed: int, fields: str = "CQA") -> mc.MCConfig:
        """The engine's configuration for one seed and input (the only place it is built)."""
        return mc.MCConfig(model=self.model, fields=fields, max_length=self.max_length, epochs=self.epochs,
                           lr=self.lr, batch_size=self.batch_size, seed=seed)


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
    then_logiqa: bool = param(False, "also continue the source model on LogiQA (one more full fine-tuning)")
    source_epochs: float = param(_SHARED.epochs, "training epochs on ReClor")
    source_lr: float = param(_SHARED.lr, "peak learning rate on ReClor")
    source_batch_size: int = param(_SHARED.batch_size, "questions per optimiser step on ReClor")

    def source_mc(self, encoder: Encoder, seed: int) -> mc.MCConfig:
        """The source stage's settings: the encoder's model and input, trained on ReClor with these
        (by default, the shared ReClor model's)."""
        return replace(encoder.mc(seed), epochs=self.source_epochs, lr=self.source_lr,
                       batch_size=self.source_batch_size)


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
    ablations: tuple[Ablation, ...] = param(("no paragraph",),
                                            "partial inputs the encoder is retrained with (Figure 3)")
    transfer: Transfer = section(Transfer, "transfer from ReClor (Table 4)")

    def data_sources(self) -> dict[str, str]:
        chosen = {"logiqa": self.dataset.source, "logiqa2": self.dataset.logiqa2_source}
        return {name: source for name, source in chosen.items() if source != hub.FOLDER}


def key(lang: str, split: str) -> str:
    return f"{lang}-{split}"


# --------------------------------------------------------------------------------------------
# Data


@dataclass
class LogiQAData:
    """Every LogiQA 1.0 split read here (by ``"en-test"``-style keys), in both label readings,
    the training set, and LogiQA 2.0 dev+test (the reasoning-type source)."""

    splits: dict[str, list[MCItem]]
    position: dict[str, list[MCItem]]  # the same files read naively (answer letter = line)
    train: lq.TrainingSet
    logiqa2: list[MCItem]
    files: list[Path]

    def gold(self, split_key: str) -> np.ndarray:
        return np.array([it.label for it in self.splits[split_key]])


def load_data(dataset: Dataset) -> LogiQAData:
    splits, position, files = {}, {}, []
    src = hub.resolve("logiqa", dataset.source)
    for lang in dataset.languages:
        for split in ("eval", "test"):
            splits[key(lang, split)] = lq.load_logiqa(split, lang, source=dataset.source)
            position[key(lang, split)] = lq.load_logiqa(split, lang, label_mode="position", source=dataset.source)
            files += [lq.logiqa_path(split, lang)] if src is None else hub.files(src, [split])
    train = lq.training_set("en", threshold=dataset.dedup_threshold, source=dataset.source,
                            logiqa2_source=dataset.logiqa2_source)
    logiqa2 = lq.load_logiqa2("dev", dataset.logiqa2_source) + lq.load_logiqa2("test", dataset.logiqa2_source)
    files += lq.logiqa2_files(["dev", "test"], dataset.logiqa2_source)
    return LogiQAData(splits, position, train, logiqa2, sorted(set(files + train.files)))


GLUED_PERIOD = re.compile(r"(?<=[a-z])\.(?=[A-Z])")


def fix_glued_periods(text: str) -> str:
    """Insert the missing space in "park.These" (a lower-case letter, a period, a capital)."""
    return GLUED_PERIOD.sub(". ", text)


def split_diagnostics(data: LogiQAData) -> pd.DataFrame:
    """Per split: size, label-order facts, labels left in the text, duplicates, answer shares."""
    rows = {}
    for k, items in data.splits.items():
        naive = data.position[k]
        pairs = Counter((lq.normalise(it.context), lq.normalise(it.question)) for it in items)
        paragraphs = Counter(lq.normalise(it.context) for it in items)
        letters = Counter("ABCD"[it.label] for it in items)
        rows[k] = {
            "questions": len(items),
            "blocks printed out of order": sum(it.meta["permuted"] for it in items),
            "answers that differ if the letter is read as the line": sum(a.answer != b.answer
                                                                        for a, b in zip(items, naive)),
            "blocks with a label left in the text": sum(bool(it.meta["unlabelled"]) for it in items),
            "glued sentence periods": sum(len(GLUED_PERIOD.findall(it.context)) for it in items),
            "duplicate paragraph-question pairs": sum(c - 1 for c in pairs.values()),
            "paragraphs with more than one question": sum(c > 1 for c in paragraphs.values()),
            **{f"answer {c} (%)": 100 * letters[c] / len(items) for c in "ABCD"},
            "majority answer (%)": 100 * lexical.majority_class_accuracy([it.label for it in items]),
        }
    return pd.DataFrame(rows)


def answer_shares(data: LogiQAData) -> pd.DataFrame:
    """Long table (split, answer, share %) for the answer-letter plot, training set included."""
    sets = {**data.splits, "training set": data.train.items}
    rows = []
    for name, items in sets.items():
        counts = Counter("ABCD"[it.label] for it in items)
        rows += [{"split": name, "answer": c, "share (%)": 100 * counts[c] / len(items)} for c in "ABCD"]
    return pd.DataFrame(rows)


def paragraph_leak(train: Sequence[MCItem], test: Sequence[MCItem]) -> int:
    """Test items whose normalised paragraph also appears in the training data."""
    seen = {lq.normalise(it.context) for it in train}
    return sum(lq.normalise(it.context) in seen for it in test)


STAT_TOKENIZERS = {
    "whitespace": str.split,
    "whitespace, glued periods fixed": lambda s: fix_glued_periods(s).split(),
    r"\w+": lambda s: re.findall(r"\w+", s),
    r"\w+ and punctuation": lambda s: re.findall(r"\w+|[^\w\s]", s),
}


def token_statistics(items: Sequence[MCItem]) -> pd.DataFrame:
    """Table 2 under each tokeniser: mean and max tokens per paragraph, question and option."""
    rows = []
    for name, tok in STAT_TOKENIZERS.items():
        parts = {"Paragraph": [len(tok(it.context)) for it in items],
                 "Question": [len(tok(it.question)) for it in items],
                 "Candidate Answer": [len(tok(o)) for it in items for o in it.options]}
        for part, lengths in parts.items():
            rows.append({"tokeniser": name, "row": part, "Ave. tokens": float(np.mean(lengths)),
                         "Max. tokens": float(np.max(lengths))})
    return pd.DataFrame(rows)


def item_length(item: MCItem) -> int:
    """Table 5's length: whitespace words of the paragraph, the question and all four options."""
    return sum(len(t.split()) for t in (item.context, item.question, *item.options))


def length_bucket(items: Sequence[MCItem]) -> np.ndarray:
    """Index (0-3) of each item's Table 5 length bin."""
    lengths = np.array([item_length(it) for it in items])
    return np.searchsorted(np.array(LENGTH_BINS[1:-1]), lengths, side="left")


# --------------------------------------------------------------------------------------------
# Reasoning types


#: Keyword cues for the five types, read from the definitions in the paper's §3.2.
TYPE_CUES = {
    "categorical": re.compile(r"\b(all|every(one)?|any|no|none|some|each)\b"),
    "sufficient": re.compile(r"(?<!only )\bif\b|\bthen\b"),
    "necessary": re.compile(r"only if|unless|only when|necessary|must .* to|without .* (cannot|can't)"),
    "disjunctive": re.compile(r"either .* or|\bor\b"),
    "conjunctive": re.compile(r"both .* and|at the same time|neither .* nor|\band\b"),
}


def heuristic_types(item: MCItem) -> tuple[str, ...]:
    """The types whose cue occurs in the paragraph or question (a heuristic proxy: it overcounts)."""
    text = f"{item.context} {item.question}".lower()
    return tuple(t for t, cue in TYPE_CUES.items() if cue.search(text))


@dataclass
class TypeLabels:
    """Reasoning-type labels of the test items from one source."""

    source: str
    types: dict[str, tuple[str, ...]]  # item id → types (only labelled items)
    n_items: int  # test items in all

    def shares(self) -> pd.Series:
        """Percent of labelled items carrying each type (multi-label, so they sum above 100)."""
        counts = Counter(t for ts in self.types.values() for t in ts)
        n = max(len(self.types), 1)
        return pd.Series({t: 100 * counts[t] / n for t in lq.REASONING_TYPES}, name=self.source)


def type_labels(test: Sequence[MCItem], logiqa2: Sequence[MCItem], *, threshold: float) -> dict[str, TypeLabels]:
    """Two proxies for the unreleased labels: LogiQA 2.0's labels of the matched items, and cues."""
    matched = lq.match_items(test, logiqa2, threshold=threshold)
    return {
        "LogiQA 2.0 labels (proxy)": TypeLabels("LogiQA 2.0 labels (proxy)",
                                                {q: p.meta["types"] for q, p in matched.items()}, len(test)),
        "keyword heuristic (proxy)": TypeLabels("keyword heuristic (proxy)",
                                                {it.id: heuristic_types(it) for it in test}, len(test)),
    }


def gold_agreement(test: Sequence[MCItem], logiqa2: Sequence[MCItem], *, threshold: float) -> float:
    """Share of matched pairs whose right options also match (the LogiQA 1.0 gold option is most
    similar to the LogiQA 2.0 gold option): a check that the matching pairs the same questions."""
    matched = lq.match_items(test, logiqa2, threshold=threshold)
    by_id = {it.id: it for it in test}
    agree = [lq.similarity_matrix([by_id[q].answer], list(p.options), stop_words=False)[0].argmax() == p.label
             for q, p in matched.items()]  # stop words kept: options often differ only by "not"/"no"
    return float(np.mean(agree)) if agree else float("nan")


# --------------------------------------------------------------------------------------------
# Systems and their predictions


@dataclass
class Predictions:
    name: str
    category: str
    trained_on: str  # what the system learned from, in words ("—" for rules)
    preds: dict[str, np.ndarray]  # split key → (seeds, items) option indices, -1 = not evaluated
    extra: dict = field(default_factory=dict)

    def correct(self, split_key: str, gold: np.ndarray) -> np.ndarray:
        """(seeds, items) 1.0/0.0 correctness, NaN where not evaluated."""
        p = self.preds[split_key]
        return np.where(p >= 0, (p == gold[None, :]).astype(float), np.nan)

    def evaluated(self, split_key: str) -> np.ndarray:
        return (self.preds[split_key] >= 0).all(axis=0)


def full_length(pred: np.ndarray, positions: np.ndarray, n: int) -> np.ndarray:
    """Predictions on a subsample placed into a split-length array (-1 elsewhere)."""
    out = np.full(n, -1, dtype=int)
    out[positions] = pred
    return out


def restrict(pred: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """(seeds, items) predictions with every item outside ``positions`` marked not evaluated (-1)."""
    out = np.full_like(pred, -1)
    out[:, positions] = pred[:, positions]
    return out


def lexical_systems(data: LogiQAData) -> list[Predictions]:
    """Random (majority answer), word matching, sliding window and SW+D on every split."""
    systems = {"Word Matching": {}, "Sliding Window": {}, "Sliding Window + Distance": {}}
    for k, items in data.splits.items():
        lang = k.split("-")[0]
        wm = lexical.PAPER_WM if lang == "en" else lexical.PAPER_WM_ZH
        systems["Word Matching"][k] = lexical.word_matching_scores(items, wm)
        systems["Sliding Window"][k] = lexical.sliding_window_scores(items, lang=lang)
        systems["Sliding Window + Distance"][k] = lexical.sliding_window_scores(items, lang=lang, distance=True)
    return [Predictions(name, "Rule-based", "—", {k: lexical.first_argmax(s)[None, :] for k, s in by_split.items()},
                        {"scores": by_split})
            for name, by_split in systems.items()]


def majority_system(data: LogiQAData) -> Predictions:
    """Always answer the training set's most frequent letter (what a label-biased model learns)."""
    top = Counter(it.label for it in data.train.items).most_common(1)[0][0]
    return Predictions(f"Majority answer ({'ABCD'[top]})", "Random", "answer shares of the training set",
                       {k: np.full((1, len(v)), top) for k, v in data.splits.items()})


def reader_train_items(data: LogiQAData, readers: Readers, sample_seed: int) -> list[MCItem]:
    return sampling.draw(data.train.items, readers.n_train, sample_seed)


def reader_run(data: LogiQAData, readers: Readers, name: str, seed: int, sample_seed: int, device: str):
    """One from-scratch reader and seed, trained on (a sample of) the training set, early-stopped
    on English Eval, evaluated on English Eval and Test (cached)."""
    dev, test = data.splits["en-eval"], data.splits["en-test"]
    return train_reader_cached(readers.config(name, seed), reader_train_items(data, readers, sample_seed), dev,
                               {"en-eval": dev, "en-test": test}, device)


def reader_systems(data: LogiQAData, readers: Readers, sample_seed: int, device: str = "cpu") -> list[Predictions]:
    """The from-scratch readers (:func:`reader_run`), every seed."""
    train = reader_train_items(data, readers, sample_seed)
    out = []
    for name in readers.names:
        runs = [reader_run(data, readers, name, s, sample_seed, device) for s in readers.seeds]
        preds = {k: np.stack([r.logits[k].argmax(1) for r in runs]) for k in ("en-eval", "en-test")}
        out.append(Predictions(READERS[name][0], "Deep learning (re-impl.)", f"{len(train)} training questions",
                               preds, {"dev_curves": [r.dev_accuracy for r in runs],
                                       "losses": [r.losses for r in runs], "best_epoch": [r.best_epoch for r in runs],
                                       "vocab": runs[0].vocab_size}))
    return out


def encoder_train_items(data: LogiQAData, encoder: Encoder, sizes: Sizes) -> list[MCItem]:
    return sampling.draw(data.train.items, encoder.n_train, sizes.seed)


def eval_positions(data: LogiQAData, sizes: Sizes) -> dict[str, np.ndarray]:
    """Positions scored by the encoder: an Eval sample, the whole Test, and the Test sample."""
    return {"en-eval": sampling.draw_positions(len(data.splits["en-eval"]), sizes.n_dev, sizes.seed),
            "en-test": np.arange(len(data.splits["en-test"])),
            "test-sub": sampling.draw_positions(len(data.splits["en-test"]), sizes.n_test_sub, sizes.seed + 1)}


def encoder_eval_sets(data: LogiQAData, sizes: Sizes) -> dict[str, list[MCItem]]:
    pos = eval_positions(data, sizes)
    return {k: [data.splits[k][i] for i in pos[k]] for k in ("en-eval", "en-test")}


def encoder_run(data: LogiQAData, encoder: Encoder, sizes: Sizes, seed: int, rt: Runtime) -> dict[str, np.ndarray]:
    """One seed of the fine-tuned encoder: logits on the Eval sample and Test, and its losses (cached)."""
    return mc.finetune_and_predict(encoder.mc(seed), encoder_train_items(data, encoder, sizes),
                                   encoder_eval_sets(data, sizes), rt)


def plm_system(data: LogiQAData, encoder: Encoder, sizes: Sizes, rt: Runtime) -> Predictions:
    """The fine-tuned encoder (the paper's BERT/RoBERTa rows) on Eval (sample) and Test."""
    train = encoder_train_items(data, encoder, sizes)
    pos = eval_positions(data, sizes)
    sets = encoder_eval_sets(data, sizes)
    preds, losses = {k: [] for k in sets}, []
    for seed in encoder.seeds:
        out = encoder_run(data, encoder, sizes, seed, rt)
        for k in sets:
            preds[k].append(full_length(out[k].argmax(1), pos[k], len(data.splits[k])))
        losses.append(out["losses"])
    return Predictions(encoder.model, "Pre-trained (fine-tuned)", f"{len(train)} training questions",
                       {k: np.stack(v) for k, v in preds.items()}, {"losses": losses})


def ablation_sets(data: LogiQAData, encoder: Encoder, sizes: Sizes, name: str) -> tuple[list[MCItem], list[MCItem]]:
    """The training items and the Test sample of one ablation, with its partial input."""
    test = data.splits["en-test"]
    sub = [test[i] for i in eval_positions(data, sizes)["test-sub"]]
    return ablation_items(encoder_train_items(data, encoder, sizes), name), ablation_items(sub, name)


def ablation_run(data: LogiQAData, encoder: Encoder, sizes: Sizes, name: str, seed: int, rt: Runtime) -> dict[str, np.ndarray]:
    """One ablation and seed: retrained with partial input, logits on the Test sample (cached)."""
    train, sub = ablation_sets(data, encoder, sizes, name)
    return mc.finetune_and_predict(encoder.mc(seed, ABLATION_FIELDS[name]), train, {"en-test": sub}, rt)


def ablation_systems(data: LogiQAData, encoder: Encoder, sizes: Sizes, main: Predictions, ablations: Sequence[str],
                     rt: Runtime) -> list[Predictions]:
    """Retrain and evaluate with partial input on the Test sample (Figure 3).

    The full-input bar is the main model restricted to the same sample.
    """
    pos = eval_positions(data, sizes)["test-sub"]
    n = len(data.splits["en-test"])
    out = [Predictions("full input", main.category, main.trained_on, {"en-test": restrict(main.preds["en-test"], pos)})]
    for name in ablations:
        preds, losses = [], []
        for seed in encoder.seeds:
            res = ablation_run(data, encoder, sizes, name, seed, rt)
            preds.append(full_length(res["en-test"].argmax(1), pos, n))
            losses.append(res["losses"])
        out.append(Predictions(name, "Ablation", main.trained_on, {"en-test": np.stack(preds)}, {"losses": losses}))
    return out


def transfer_systems(data: LogiQAData, encoder: Encoder, transfer: Transfer, sizes: Sizes, main: Predictions,
                     source: Sequence[MCItem], source_name: str, rt: Runtime) -> list[Predictions]:
    """Table 4: the encoder trained on LogiQA only, on the source only, and (``then_logiqa``)
    source → LogiQA, all with the same sequential recipe, scored on the Eval and Test samples.
    A source stage trains with ``transfer``'s settings, a LogiQA stage with the encoder's; one
    stage of LogiQA is the Table 3 model, so the LogiQA-only row is ``main`` on those samples."""
    target = encoder_train_items(data, encoder, sizes)
    pos = eval_positions(data, sizes)
    sets = transfer_eval_sets(data, sizes)
    where = {"en-eval": pos["en-eval"], "en-test": pos["test-sub"]}
    m = encoder.model
    out = [Predictions(f"{m}_LogiQA", "Transfer", f"{len(target)} LogiQA",
                       {k: restrict(main.preds[k], where[k]) for k in sets})]
    names = [f"{m}_{source_name}", f"{m}_{source_name} → LogiQA"]
    trained = [f"{len(source)} {source_name}", f"{len(source)} {source_name}, then {len(target)} LogiQA"]
    for name, trained_on, stages in zip(names, trained, transfer_row_stages(source, target, transfer.then_logiqa)):
        preds, losses = {k: [] for k in sets}, []
        for seed in encoder.seeds:
            res = transfer_run(data, encoder, transfer, sizes, stages, seed, rt)
            for k in sets:
                preds[k].append(full_length(res[k].argmax(1), where[k], len(data.splits[k])))
            losses.append(res["losses"][-1])  # the last stage's: what the row's model learned last
        out.append(Predictions(name, "Transfer", trained_on, {k: np.stack(v) for k, v in preds.items()},
                               {"losses": losses}))
    return out


def transfer_row_stages(source: Sequence[MCItem], target: Sequence[MCItem], then_logiqa: bool) -> list[list[Sequence[MCItem]]]:
    """Table 4's trained rows, each as the item sets it is fine-tuned on in turn: the source alone,
    then (``then_logiqa``) the source and LogiQA."""
    return [[source], [source, target]] if then_logiqa else [[source]]


def transfer_eval_sets(data: LogiQAData, sizes: Sizes) -> dict[str, list[MCItem]]:
    """Table 4's evaluation sets: the Eval sample and the Test sample."""
    pos = eval_positions(data, sizes)
    return {"en-eval": [data.splits["en-eval"][i] for i in pos["en-eval"]],
            "en-test": [data.splits["en-test"][i] for i in pos["test-sub"]]}


def transfer_run(data: LogiQAData, encoder: Encoder, transfer: Transfer, sizes: Sizes,
                 stages: Sequence[Sequence[MCItem]], seed: int, rt: Runtime) -> dict[str, np.ndarray]:
    """One Table 4 row and seed: the encoder fine-tuned on each stage in turn (the source with
    ``transfer``'s settings, LogiQA with the encoder's), scored on the Eval and Test samples (cached)."""
    cfgs = [transfer.source_mc(encoder, seed), encoder.mc(seed)][:len(stages)]
    return finetune_stages_predict(stages, transfer_eval_sets(data, sizes), cfgs, rt)


def lm_items(data: LogiQAData, lm: LM, sizes: Sizes) -> tuple[np.ndarray, list[MCItem]]:
    """The Test positions the zero-shot LM scores, and those items."""
    pos = sampling.draw_positions(len(data.splits["en-test"]), lm.n_test, sizes.seed + 1)
    return pos, [data.splits["en-test"][i] for i in pos]


def lm_system(data: LogiQAData, lm: LM, sizes: Sizes, rt: Runtime) -> Predictions:
    """Zero-shot log-likelihood scoring with a causal LM on Test (all of it, or ``lm.n_test``
    questions): each option is scored as the continuation of the paragraph and question. The row
    is the harness's ``acc`` (summed log-likelihood); ``extra["acc_norm"]`` holds the predictions
    of its ``acc_norm`` (log-likelihood per character of the option)."""
    n = len(data.splits["en-test"])
    pos, items = lm_items(data, lm, sizes)
    out = option_logliks(lm.model, items, rt, batch_size=lm.batch_size)
    return Predictions(f"{lm.model} (zero-shot LL)", "Zero-shot LM", "no LogiQA training",
                       {"en-test": full_length(out["sum"].argmax(1), pos, n)[None, :]},
                       {"acc_norm": full_length(out["per_char"].argmax(1), pos, n)[None, :]})


def reclor_source(transfer: Transfer, sample_seed: int) -> list[MCItem]:
    """The ReClor training questions the transfer rows learn from: the shared ReClor model's
    (:func:`rcstudy.experiments.shared.reclor_training_questions`) of a draw of ``n_source``
    (``DataFileMissing`` without ReClor or RULE)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a subsampled ReClor copy warns about its size
        source_all = reclor.load_split("train")
    return shared.reclor_training_questions(sampling.draw(source_all, transfer.n_source, sample_seed))


@dataclass
class Systems:
    """Every system the chapter runs, by role."""

    majority: Predictions
    rules: list[Predictions]  # word matching, sliding window, SW+D
    readers: list[Predictions]
    main: Predictions  # the fine-tuned encoder
    extra: list[Predictions]  # more encoders (Table 3 only)
    lm: Predictions
    ablations: list[Predictions]  # "full input" first
    transfer: list[Predictions]  # LogiQA only, source only, source → LogiQA; empty without ReClor
    source_n: int  # ReClor training questions (0 without ReClor)

    @property
    def table3(self) -> list[Predictions]:
        return [self.majority, *self.rules, *self.readers, self.main, *self.extra, self.lm]

    @property
    def trained(self) -> list[Predictions]:
        return [*self.readers, self.main, *self.extra, self.lm]

    @property
    def analysed(self) -> list[Predictions]:
        """The systems of the length, overlap and type analyses."""
        return [*self.rules, *self.trained]

    @property
    def everything(self) -> list[Predictions]:
        return [*self.table3, *self.ablations, *self.transfer]

    def loss_checks(self, data: "LogiQAData", split_key: str = "en-test") -> dict[str, learning.LossCheck]:
        """Did each trained row learn? Every row that reports its training losses, judged by its
        accuracy on LogiQA Test against chance (seeds, then questions, resampled; its training
        loss is shown beside it, never decisive)."""
        gold = data.gold(split_key)
        return {x.name: learning.check(x.name, x.extra["losses"], 4, correct=x.correct(split_key, gold),
                                       heldout="LogiQA Test")
                for x in self.everything if x.extra.get("losses") and split_key in x.preds}


# --------------------------------------------------------------------------------------------
# Tables


@dataclass(frozen=True)
class Score:
    """Accuracy (%) of one system on one split: seeds, a bootstrap interval, and its n."""

    seeds: MeanSD
    ci: Interval
    n: int


def score(system: Predictions, data: LogiQAData, split_key: str) -> Score | None:
    if split_key not in system.preds:
        return None
    keep = system.evaluated(split_key)
    correct = system.correct(split_key, data.gold(split_key))[:, keep]
    # seeds are resampled above questions: a seed is another run, not more questions
    return Score(mean_sd(100 * correct.mean(axis=1)), hierarchical_ci(correct), int(keep.sum()))


def results_table(systems: Sequence[Predictions], data: LogiQAData, *, name_map: dict[str, str] | None = None,
                  splits: Sequence[str] = tuple(SPLIT_COLUMNS)) -> pd.DataFrame:
    """Rows = systems (renamed by ``name_map`` to the paper's rows), columns = Table 3's, cells MeanSD."""
    rows = {}
    for s in systems:
        row = (name_map or {}).get(s.name, s.name)
        rows[row] = {SPLIT_COLUMNS[k]: sc.seeds for k in splits if (sc := score(s, data, k)) is not None}
    return pd.DataFrame.from_dict(rows, orient="index")


def detail_table(systems: Sequence[Predictions], data: LogiQAData, split_key: str = "en-test") -> pd.DataFrame:
    """Per system on one split: seeds, mean ± sd, the 95% bootstrap interval, n, training data."""
    rows = []
    for s in systems:
        sc = score(s, data, split_key)
        if sc is None:
            continue
        rows.append({"system": s.name, "category": s.category, "seeds": sc.seeds.n, "accuracy (mean ± sd)": str(sc.seeds),
                     "95% bootstrap CI": f"[{sc.ci.low:.1f}, {sc.ci.high:.1f}]", "items": sc.n,
                     "trained on": s.trained_on})
    return pd.DataFrame(rows).set_index("system")


def per_item_accuracy(system: Predictions, data: LogiQAData, split_key: str) -> np.ndarray:
    """Seed-averaged correctness per item (NaN where not evaluated)."""
    out = np.full(len(data.splits[split_key]), np.nan)
    if split_key in system.preds:
        keep = system.evaluated(split_key)
        out[keep] = system.correct(split_key, data.gold(split_key))[:, keep].mean(axis=0)
    return out


def length_table(systems: Sequence[Predictions], data: LogiQAData, split_key: str = "en-test") -> pd.DataFrame:
    """Table 5: items per length bin, and each system's accuracy (%) per bin."""
    items = data.splits[split_key]
    bucket = length_bucket(items)
    rows = {"#Instances": {lab: int((bucket == b).sum()) for b, lab in enumerate(LENGTH_LABELS)}}
    for s in systems:
        acc = per_item_accuracy(s, data, split_key)
        rows[s.name] = {lab: 100 * np.nanmean(acc[bucket == b]) if np.isfinite(acc[bucket == b]).any() else np.nan
                        for b, lab in enumerate(LENGTH_LABELS)}
    return pd.DataFrame.from_dict(rows, orient="index")


def length_points(systems: Sequence[Predictions], data: LogiQAData, split_key: str = "en-test") -> pd.DataFrame:
    """Long table: system, bin, accuracy and its 95% bootstrap interval (for the length plot)."""
    bucket = length_bucket(data.splits[split_key])
    rows = []
    for s in systems:
        acc = per_item_accuracy(s, data, split_key)
        for b, lab in enumerate(LENGTH_LABELS):
            vals = acc[(bucket == b) & np.isfinite(acc)]
            if len(vals):
                ci = bootstrap_ci(vals, scale=100)
                rows.append({"system": s.name, "length": lab, "accuracy": ci.estimate, "low": ci.low, "high": ci.high,
                             "n": len(vals)})
    return pd.DataFrame(rows)


def best_match(items: Sequence[MCItem], context: str = "pq") -> np.ndarray:
    """The option with the highest word-matching overlap (Table 6's "best-matching candidate")."""
    return lexical.first_argmax(lexical.word_matching_scores(items, replace(lexical.PAPER_WM, context=context)))


def overlap_table(systems: Sequence[Predictions], data: LogiQAData, split_key: str = "en-test", *,
                  context: str = "pq") -> pd.DataFrame:
    """Table 6 for each system and the gold answers.

    Overlap Ratio: % of items where the prediction is the best-matching option. Accuracy, two
    readings: P(right | prediction is the best match) — the one the paper's anchor rows fit —
    and P(right | the gold answer is the best match).
    """
    items = data.splits[split_key]
    bm, gold = best_match(items, context), data.gold(split_key)
    gold_is_bm = gold == bm
    rows = {}
    for s in systems:
        p = s.preds[split_key]
        keep = s.evaluated(split_key)
        p, g, b, gb = p[:, keep], gold[keep], bm[keep], gold_is_bm[keep]
        on_bm = p == b[None, :]
        right = p == g[None, :]
        rows[s.name] = {
            "Overlap Ratio": 100 * on_bm.mean(),
            "Accuracy(%)": 100 * right[on_bm].mean() if on_bm.any() else np.nan,
            "accuracy when gold is the best match": 100 * right[:, gb].mean() if gb.any() else np.nan,
            "items": int(keep.sum()),
        }
    rows["Gold-standard"] = {"Overlap Ratio": 100 * gold_is_bm.mean(), "Accuracy(%)": 100.0,
                             "accuracy when gold is the best match": 100.0, "items": len(items)}
    return pd.DataFrame.from_dict(rows, orient="index")


def per_item_overlap(system: Predictions, data: LogiQAData, split_key: str = "en-test", *,
                     context: str = "pq") -> np.ndarray:
    """Seed-averaged 1/0 "the prediction is the best-matching option" per item (NaN where not evaluated)."""
    out = np.full(len(data.splits[split_key]), np.nan)
    keep = system.evaluated(split_key)
    bm = best_match(data.splits[split_key], context)
    out[keep] = (system.preds[split_key][:, keep] == bm[None, keep]).mean(axis=0)
    return out


def type_table(systems: Sequence[Predictions], data: LogiQAData, labels: TypeLabels,
               split_key: str = "en-test") -> pd.DataFrame:
    """Table 7: accuracy (%) on the labelled test items of each type, and n per type."""
    items = data.splits[split_key]
    index = {it.id: i for i, it in enumerate(items)}
    rows = {}
    for t in lq.REASONING_TYPES:
        pos = np.array([index[i] for i, ts in labels.types.items() if t in ts], dtype=int)
        row = {"items": len(pos)}
        for s in systems:
            acc = per_item_accuracy(s, data, split_key)[pos] if len(pos) else np.array([])
            acc = acc[np.isfinite(acc)]
            row[s.name] = 100 * acc.mean() if len(acc) else np.nan
        rows[t] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def export_predictions(systems: Sequence[Predictions], data: LogiQAData) -> Path:
    """Write every system's predictions ``{system: {split: {item id: [option per seed]}}}`` to the
    exports folder, with the data files' checksums."""
    payload = {"data": {p.name: file_checksum(p) for p in data.files}, "systems": {}}
    for s in systems:
        payload["systems"][s.name] = {
            k: {it.id: [int(x) for x in p[:, i]] for i, it in enumerate(data.splits[k]) if (p[:, i] >= 0).all()}
            for k, p in s.preds.items()}
    return exports.write_json(EXPORT_FILE, payload)


# --------------------------------------------------------------------------------------------
# The chapter: one function per section of the page, then run()


@dataclass
class Results(ChapterResults):
    """The chapter's tables, facts and claims, and the data of its figures."""

    systems: Systems
    answer_shares: pd.DataFrame  # long: split, answer, share (%)
    similarity: np.ndarray | None  # each LogiQA 2.0 item's best paragraph similarity (None: official Train.txt)
    majority: dict[str, float]  # split → share (%) of its most frequent answer (the majority lines)
    lengths: np.ndarray  # words per Test question
    type_shares: pd.DataFrame  # Figure 2: paper and both proxies
    reader_curves: dict[str, list[list[float]]]  # reader → Eval accuracy per epoch, one list per seed
    accuracy_bars: pd.DataFrame  # English Test, paper and ours, per Table 3 row
    ablation: pd.DataFrame  # per ablation: ours (interval) and the paper's bar
    length_points: pd.DataFrame  # accuracy per length bin with intervals
    paper_length: np.ndarray  # the paper's RoBERTa per length bin
    overlap_points: pd.DataFrame  # ours: overlap ratio and Test accuracy per system
    paper_overlap: pd.DataFrame  # the paper's: the same for its rows
    type_accuracy: pd.DataFrame  # Table 7: paper and our encoder under both proxies
    losses: dict[str, list] = field(default_factory=dict)  # trained row → one training-loss curve per seed


def paper_facts() -> dict:
    """The paper's numbers the prose quotes."""
    return {
        "logiqa_p_pairs": papers.value(P, "Table 2", "# Paragraph-Question Pairs", "value"),
        **{f"logiqa_p_{name}": papers.value(P, "Table 3", row, "LogiQA Test")
           for row, name in (("RoBERTa", "roberta"), ("BERT", "bert"), ("Human Performance", "human"))},
        "logiqa_p_test": papers.value(P, "§3.2", "test set", "paragraph-question pairs"),
        "logiqa_p_t5n": float(papers.table(P, "Table 5").loc["#Instances"].sum()),
        "logiqa_p_split": "/".join(f"{papers.value(P, '§5', 'split', c):.0f}" for c in ("train %", "dev %", "test %")),
        "logiqa_p_gold_overlap": papers.value(P, "Table 6", "Gold-standard", "Overlap Ratio"),
    }


def eval_top(diag: pd.DataFrame) -> str:
    """The most frequent answer letter of English Eval."""
    return max("ABCD", key=lambda c: diag.loc[f"answer {c} (%)", "en-eval"])


def data_facts(data: LogiQAData, diag: pd.DataFrame) -> dict:
    n_test = len(data.splits["en-test"])
    flips = diag.loc["answers that differ if the letter is read as the line", "en-test"]
    top = eval_top(diag)
    return {
        "logiqa_n_test": n_test,
        "logiqa_halfwidth": 100 * 1.96 * np.sqrt(0.3 * 0.7 / n_test),  # a 95% interval around 30% accuracy
        "logiqa_n_eval": len(data.splits["en-eval"]),
        "logiqa_permuted": int(diag.loc["blocks printed out of order", "en-test"]),
        "logiqa_flips": int(flips),
        "logiqa_flip_pts": 100 * flips / n_test,
        "logiqa_labels_left": int(diag.loc["blocks with a label left in the text"].sum()),
        "logiqa_glued": int(diag.loc["glued sentence periods"].filter(like="en-").sum()),
        "logiqa_eval_top": top,
        "logiqa_eval_top_share": diag.loc[f"answer {top} (%)", "en-eval"],
        "logiqa_test_major": diag.loc["majority answer (%)", "en-test"],
        "logiqa_test_shared": int(diag.loc["paragraphs with more than one question", "en-test"]),
        "logiqa_eval_a": diag.loc["answer A (%)", "en-eval"],
    }


def training_data(data: LogiQAData, threshold: float) -> tuple[dict[str, pd.DataFrame], dict]:
    """The deduplication table (LogiQA 2.0 training only) and the facts about the training set."""
    train, d = data.train, data.train.dedup
    tables = {}
    if d is None:
        text = (f"The official {train.source} is present and is used as it is ({len(train.items)} questions); "
                f"{paragraph_leak(train.items, data.splits['en-test'])} test questions share "
                f"their paragraph with a training question.")
    else:
        tables["logiqa_dedup"] = pd.Series(d.counts(), name="LogiQA 2.0 dev+test").to_frame()
        removed = {t: int((d.best_similarity >= t).sum()) for t in DEDUP_SENSITIVITY}
        text = (f"Of the {d.counts()['candidates']} LogiQA 2.0 dev+test items, {d.exact} repeat a LogiQA 1.0 "
                f"paragraph exactly and {d.near} nearly (cosine ≥ {threshold}), so "
                f"{len(train.items)} remain for training. A threshold of 0.5 would remove "
                f"{removed[0.5]} items, and 0.9 would remove {removed[0.9]}.")
    return tables, {
        "logiqa_train_text": text,
        "logiqa_n_train": len(train.items),
        "logiqa_extra_kept": 0 if d is None
        else int((d.best_similarity >= threshold).sum() - (d.best_similarity >= EXACT_COPY).sum()),
        "logiqa_dedup_threshold": threshold,
    }


def statistics(data: LogiQAData) -> tuple[dict[str, pd.DataFrame], dict]:
    """Table 2 (whitespace tokens) beside the paper's, the four tokenisers, and the facts."""
    train = data.train
    stat_items = data.splits["en-eval"] + data.splits["en-test"] + (train.items if train.dedup is None else [])
    stats = token_statistics(stat_items)
    ours = stats[stats.tokeniser == "whitespace"].set_index("row")[["Ave. tokens", "Max. tokens"]]
    paper = papers.table(P, "Table 2").loc[["Paragraph", "Question", "Candidate Answer"], ["Ave. tokens", "Max. tokens"]]
    means = stats.pivot(index="tokeniser", columns="row", values="Ave. tokens")
    close = {part: list(means.index[(means[part] / paper.loc[part, "Ave. tokens"] - 1).abs() <= 0.05])
             for part in paper.index}
    facts = {}
    for part, short in (("Paragraph", "p"), ("Question", "q"), ("Candidate Answer", "o")):
        facts[f"logiqa_{short}_mean"] = ours.loc[part, "Ave. tokens"]
        facts[f"logiqa_{short}_paper"] = paper.loc[part, "Ave. tokens"]
    facts["logiqa_stat_text"] = " ".join(f"{part}: within 5% under {', '.join(toks)}." if toks else
                                         f"{part}: no tokeniser comes within 5%." for part, toks in close.items())
    facts["logiqa_stat_n"] = len(stat_items)
    return {"logiqa_table2": paper_vs_ours(paper, ours, digits=2), "logiqa_table2_tokenisers": means.round(2)}, facts


def reasoning_types(data: LogiQAData, threshold: float) -> tuple[dict[str, TypeLabels], pd.DataFrame, dict]:
    """The two proxy labellings of Test, Figure 2 beside the paper's, and the facts."""
    test = data.splits["en-test"]
    sources = type_labels(test, data.logiqa2, threshold=threshold)
    proxy = sources["LogiQA 2.0 labels (proxy)"]
    fig2 = pd.concat([papers.table(P, "Figure 2")["% of test"].rename("paper (manual)")]
                     + [s.shares().rename(index=TYPE_NAMES) for s in sources.values()], axis=1)
    return sources, fig2, {
        "logiqa_matched": len(proxy.types),
        "logiqa_gold_agree": 100 * gold_agreement(test, data.logiqa2, threshold=threshold),
        "logiqa_suff_proxy": fig2.loc[TYPE_NAMES["sufficient"], proxy.source],
        "logiqa_suff_paper": fig2.loc[TYPE_NAMES["sufficient"], "paper (manual)"],
    }


def word_matching_grid(data: LogiQAData) -> tuple[pd.DataFrame, dict]:
    """Every word-matching variant on Test and Eval, and what tie-breaking alone does on Eval."""
    grid = pd.DataFrame(lexical.word_matching_grid(data.splits["en-test"])).set_index("variant")[["accuracy"]]
    grid["Eval accuracy"] = pd.DataFrame(lexical.word_matching_grid(data.splits["en-eval"])).set_index("variant")["accuracy"]
    grid = grid.rename(columns={"accuracy": "Test accuracy"}).sort_values("Test accuracy")
    ties = grid.reset_index()
    ties["base"] = ties["variant"].str.rsplit("/", n=1).str[0]
    tie_gap = ties.pivot_table(index="base", columns=ties["variant"].str.rsplit("/", n=1).str[1], values="Eval accuracy")
    return grid, {
        "logiqa_wm_lo": grid["Test accuracy"].min(),
        "logiqa_wm_hi": grid["Test accuracy"].max(),
        "logiqa_tie_gap": float((tie_gap["random"] - tie_gap["first"]).abs().max()),
        "logiqa_tie_random_wins": f"{int((tie_gap['random'] > tie_gap['first']).sum())} of the {len(tie_gap)}",
    }


def transfer_rows(cfg: Config, data: LogiQAData, main: Predictions, rt: Runtime) -> tuple[list[Predictions], int, str | None]:
    """Table 4's trained rows, the ReClor questions they used, and why they are missing (None: ran)."""
    try:
        source = reclor_source(cfg.transfer, cfg.sizes.seed)
    except DataFileMissing as e:
        return [], 0, str(e.path)
    rows = transfer_systems(data, cfg.encoder, cfg.transfer, cfg.sizes, main, source, "ReClor", rt)
    return rows, len(source), None


def systems(cfg: Config, data: LogiQAData, rt: Runtime) -> tuple[Systems, str | None]:
    """Every system of the chapter (cached where trained), and why transfer is missing (None: ran)."""
    rules = lexical_systems(data)
    readers = reader_systems(data, cfg.readers, cfg.sizes.seed, device=str(rt.device))
    main = plm_system(data, cfg.encoder, cfg.sizes, rt)
    extra = [plm_system(data, replace(cfg.encoder, model=m), cfg.sizes, rt) for m in cfg.encoder.extra_models]
    lm = lm_system(data, cfg.lm, cfg.sizes, rt)
    ablations = ablation_systems(data, cfg.encoder, cfg.sizes, main, cfg.ablations, rt)
    transfer, source_n, missing = transfer_rows(cfg, data, main, rt)
    return Systems(majority_system(data), rules, readers, main, extra, lm, ablations, transfer, source_n), missing


def setting_facts(cfg: Config, s: Systems, profile: str | None) -> dict:
    """How the trained rows were trained and scored, in words (the "how our setting differs" notes)."""
    enc = cfg.encoder
    sizes = {"reader training questions": cfg.readers.n_train, "encoder training questions": enc.n_train,
             "Eval questions scored by the encoder": cfg.sizes.n_dev,
             "Test questions for the ablations and transfer": cfg.sizes.n_test_sub,
             "Test questions the zero-shot LM scores": cfg.lm.n_test,
             "ReClor questions for transfer": cfg.transfer.n_source}
    cut = [f"{n} {what}" for what, n in sizes.items() if n is not None]
    run = f"This {profile} run" if profile else "This run"
    return {
        "logiqa_reader_train": s.readers[0].trained_on,
        "logiqa_reader_vocab": s.readers[0].extra["vocab"],
        "logiqa_model": enc.model,
        "logiqa_lm": cfg.lm.model,
        "logiqa_plm_train": s.main.trained_on,
        "logiqa_plm_sched": f"{whole(enc.epochs)} epoch(s), lr {enc.lr}, batch {enc.batch_size}, "
                            f"at most {enc.max_length} tokens",
        "logiqa_source_sched": f"{whole(cfg.transfer.source_epochs)} epoch(s), lr {cfg.transfer.source_lr}, "
                               f"batch {cfg.transfer.source_batch_size}",
        "logiqa_seeds": len(enc.seeds),
        "logiqa_dev_n": int(s.main.evaluated("en-eval").sum()),
        "logiqa_sizes_text": (f"{run} subsamples the trained rows: " + ", ".join(cut) + " (the full profile uses all "
                              "of them)." if cut else f"{run} trains and scores every row on all of its data."),
    }


def whole(x: float) -> float | int:
    """A whole number as an int, so that ``1.0`` epochs read as ``1``."""
    return int(x) if float(x).is_integer() else x


def table3(s: Systems, data: LogiQAData) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ours in Table 3's rows and columns (MeanSD cells), and the paper's Table 3."""
    rows = {x.name: ROW_NAMES.get(split_revision(x.name)[0]) for x in s.table3}  # a pinned Hub id plays its row too
    name_map = {x.name: rows[x.name] or x.name for x in s.table3}
    name_map.update({x.name: f"{x.name} (fine-tuned)" for x in [s.main, *s.extra] if not rows.get(x.name)})
    ours = results_table(s.table3, data, name_map=name_map)
    ours.loc["Random (theoretical)"] = pd.Series({SPLIT_COLUMNS[k]: 100 * lexical.uniform_expected_accuracy(v)
                                                  for k, v in data.splits.items()})
    return ours, papers.table(P, "Table 3")


def accuracy_bars(ours: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """English Test accuracy per Table 3 row that we score: the paper's (NaN: not its row) and ours."""
    rows = [r for r in ours.index if pd.notna(ours.loc[r, "LogiQA Test"])]
    return pd.DataFrame({"paper": [paper["LogiQA Test"].get(r, np.nan) for r in rows],
                         "ours": [getattr(v, "mean", v) for v in ours.loc[rows, "LogiQA Test"]]}, index=rows)


def best_reader(s: Systems, acc: dict[str, Score]) -> Predictions:
    return max(s.readers, key=lambda r: acc[r.name].seeds.mean)


def lm_facts(s: Systems, data: LogiQAData) -> dict:
    """The zero-shot LM under both of lm-evaluation-harness's accuracies, and why they differ:
    a summed log-likelihood favours options with fewer tokens, which ``acc_norm`` corrects."""
    keep = s.lm.evaluated("en-test")
    gold = data.gold("en-test")[keep]
    acc = s.lm.preds["en-test"][0][keep] == gold
    norm = s.lm.extra["acc_norm"][0][keep] == gold
    items = [it for it, k in zip(data.splits["en-test"], keep) if k]
    shortest = np.array([int(np.argmin([len(o) for o in it.options])) for it in items])
    ci_acc, ci_norm = bootstrap_ci(acc.astype(float), scale=100), bootstrap_ci(norm.astype(float), scale=100)
    return {
        "logiqa_lm_n": int(keep.sum()),
        "logiqa_lm_acc": f"{ci_acc.estimate:.1f}% [{ci_acc.low:.1f}, {ci_acc.high:.1f}]",
        "logiqa_lm_acc_norm": f"{ci_norm.estimate:.1f}% [{ci_norm.low:.1f}, {ci_norm.high:.1f}]",
        "logiqa_lm_picks_shortest": 100 * float(np.mean(s.lm.preds["en-test"][0][keep] == shortest)),
        "logiqa_lm_norm_picks_shortest": 100 * float(np.mean(s.lm.extra["acc_norm"][0][keep] == shortest)),
        "logiqa_gold_shortest": 100 * float(np.mean(gold == shortest)),
    }


def results_facts(s: Systems, acc: dict[str, Score]) -> dict:
    sw_ci, best = acc["Sliding Window"].ci, best_reader(s, acc)
    return {
        "logiqa_wm_test": acc["Word Matching"].seeds.mean,
        "logiqa_sw_test": acc["Sliding Window"].seeds.mean,
        "logiqa_main_test": acc[s.main.name].seeds.mean,
        "logiqa_main_ci": f"[{acc[s.main.name].ci.low:.1f}, {acc[s.main.name].ci.high:.1f}]",
        "logiqa_lm_test": acc[s.lm.name].seeds.mean,
        "logiqa_best_reader": best.name,
        "logiqa_best_reader_test": acc[best.name].seeds.mean,
        "logiqa_sw_paper": papers.value(P, "Table 3", "Sliding Window", "LogiQA Test"),
        "logiqa_sw_text": "MCTest's algorithm reproduces that here." if sw_ci.high < 25 else
        "MCTest's algorithm does not reproduce that here: its 95% interval "
        f"[{sw_ci.low:.1f}, {sw_ci.high:.1f}] {'includes' if sw_ci.low <= 25 else 'lies above'} chance.",
    }


def ablation(s: Systems, data: LogiQAData) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Figure 3 beside the paper's, the bars' data (interval, paper) and the facts."""
    acc = {x.name: score(x, data, "en-test") for x in s.ablations}
    paper = papers.table(P, "Figure 3")
    ours = pd.DataFrame({"RoBERTa Test": {n: a.seeds for n, a in acc.items()}})
    bars = pd.DataFrame({"ours": {n: a.ci for n, a in acc.items()},
                         "paper": {n: paper["RoBERTa Test"].get(n, np.nan) for n in acc}})
    facts = {"logiqa_abl_n": acc["full input"].n,
             **{f"logiqa_abl_{n.replace(' ', '_')}": a.seeds.mean for n, a in acc.items()}}
    return paper_vs_ours(paper, ours), bars, facts


def transfer(s: Systems, data: LogiQAData, missing: str | None) -> tuple[pd.DataFrame, dict]:
    """Table 4 beside the paper's, and the facts."""
    ours = pd.DataFrame({SPLIT_COLUMNS[k].split()[-1]: {x.name: sc.seeds for x in s.transfer
                                                        if (sc := score(x, data, k)) is not None}
                         for k in ("en-eval", "en-test")})
    ours.loc["Random (theoretical)"] = 25.0
    facts = {"logiqa_source_n": s.source_n}
    if s.transfer:
        t4 = [score(x, data, "en-test") for x in s.transfer]
        then = (f" and ReClor → LogiQA {t4[2].seeds.mean:.1f}%" if len(t4) > 2 else
                "; ReClor → LogiQA is not trained in this run (`-p transfer.then_logiqa=true` adds it: one more "
                "fine-tuning on all of LogiQA's training set)")
        facts["logiqa_transfer_text"] = (
            f"On the same {t4[0].n} Test questions, the model trained on LogiQA only scores "
            f"{t4[0].seeds.mean:.1f}% and the ReClor-only model {t4[1].seeds.mean:.1f}%{then}.")
    else:
        facts["logiqa_transfer_text"] = (f"ReClor is not in the data folder ({missing}), so the transfer runs are "
                                         f"skipped; the table shows the paper's numbers only.")
    return paper_vs_ours(papers.table(P, "Table 4"), ours), facts


def lengths(cfg: Config, s: Systems, data: LogiQAData, acc: dict[str, Score]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Table 5 beside the paper's, the length plot's points, and the facts."""
    model = cfg.encoder.model
    t5 = length_table(s.analysed, data)
    paper = papers.table(P, "Table 5")
    table = paper_vs_ours(paper.rename(index={"RoBERTa": f"RoBERTa / {model}"}),
                          t5.rename(index={model: f"RoBERTa / {model}"}).astype(float))
    points = length_points([s.main, best_reader(s, acc), s.rules[0]], data)
    share = 100 * t5.loc["#Instances"] / t5.loc["#Instances"].sum()
    return table, points, {
        "logiqa_len_short": share.iloc[0],
        "logiqa_len_short_paper": 100 * paper.loc["#Instances"].iloc[0] / paper.loc["#Instances"].sum(),
    }


def overlap(cfg: Config, s: Systems, data: LogiQAData, acc: dict[str, Score]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Table 6 (both readings of its accuracy), the scatter's points, ours and the paper's."""
    model = cfg.encoder.model
    t6 = overlap_table(s.analysed, data).rename(index={model: f"{model} (fine-tuned)"})
    ours = t6.drop(index=["Gold-standard"])
    points = pd.DataFrame({"Overlap Ratio": ours["Overlap Ratio"],
                           "accuracy": [acc[n.replace(" (fine-tuned)", "")].seeds.mean for n in ours.index]},
                          index=ours.index)
    paper_t6, paper_t3 = papers.table(P, "Table 6"), papers.table(P, "Table 3")
    rows = [r for r in paper_t6.index if r in paper_t3.index]
    paper = pd.DataFrame({"Overlap Ratio": paper_t6.loc[rows, "Overlap Ratio"],
                          "accuracy": paper_t3.loc[rows, "LogiQA Test"]})
    return t6, points, paper


def type_tables(s: Systems, data: LogiQAData, sources: dict[str, TypeLabels]) -> dict[str, pd.DataFrame]:
    """Table 7 under each proxy labelling: every system, by type (names as in the paper)."""
    return {src: type_table(s.analysed, data, labels).rename(index=TYPE_NAMES) for src, labels in sources.items()}


def type_accuracy(cfg: Config, t7: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The paper's RoBERTa by type beside our encoder under both proxies (the Table 7 plot)."""
    model = cfg.encoder.model
    return pd.DataFrame({"paper RoBERTa": papers.table(P, "Table 7")["RoBERTa"],
                         f"ours {model} (LogiQA 2.0 labels)": t7["LogiQA 2.0 labels (proxy)"][model],
                         f"ours {model} (keyword heuristic)": t7["keyword heuristic (proxy)"][model]})


def consistency(n_test: int) -> tuple[pd.DataFrame, dict]:
    """The paper's numbers checked against each other."""
    t5 = papers.table(P, "Table 5")
    weighted = float((t5.loc["#Instances"] * t5.loc["RoBERTa"]).sum() / t5.loc["#Instances"].sum())
    shares = papers.table(P, "Figure 2")["% of test"]
    t7w = float((shares.values * papers.table(P, "Table 7")["RoBERTa"].values).sum() / shares.sum())
    roberta = papers.value(P, "Table 3", "RoBERTa", "LogiQA Test")
    test_n = papers.value(P, "§3.2", "test set", "paragraph-question pairs")
    checks = pd.DataFrame([
        {"check": "Table 5 bin accuracies weighted by bin counts", "value": weighted, "compare with": roberta},
        {"check": "Table 5 instance count", "value": float(t5.loc["#Instances"].sum()), "compare with": test_n},
        {"check": "Table 7 accuracies weighted by the Figure 2 shares", "value": t7w, "compare with": roberta},
        {"check": "Ceiling in the introduction", "value": papers.value(P, "§1", "Ceiling Performance", "LogiQA Test"),
         "compare with": papers.value(P, "Table 3", "Ceiling Performance", "LogiQA Test")},
        {"check": "Released test questions", "value": float(n_test), "compare with": test_n},
    ]).set_index("check")
    return checks.round(2), {
        "logiqa_t5_weighted": weighted,
        "logiqa_t7_weighted": t7w,
        "logiqa_t5_first_count": float(t5.loc["#Instances"].iloc[0] * t5.loc["RoBERTa"].iloc[0] / 100),
    }


def judge_claims(cfg: Config, s: Systems, data: LogiQAData, acc: dict[str, Score], points: pd.DataFrame,
                 proxy: TypeLabels, checks: Mapping[str, learning.LossCheck]) -> ClaimLog:
    """The evidence for each of the paper's claims (``rcstudy.papers.logiqa.CLAIMS``); ``checks``:
    whether each trained row learned (:meth:`Systems.loss_checks`)."""
    log = ClaimLog(P)
    model = cfg.encoder.model
    gold = data.gold("en-test")
    runs = {x.name: x.correct("en-test", gold) for x in s.everything}  # (seeds, questions), NaN: not evaluated

    def rests_on(*names: str) -> list[learning.LossCheck]:
        """The loss checks of the rows among ``names`` that were trained here (rules and the LM have none)."""
        return [checks[n] for n in names if n in checks]

    def compare(a: str, b: str, name_a: str, name_b: str) -> tuple[Interval, str]:
        """Paired 95% interval of accuracy(a) − accuracy(b) on the questions both answered (each
        system's seeds resampled, the same questions for both), and its text."""
        ci = hierarchical_paired(runs[a], runs[b])
        return ci, f"{name_a} − {name_b}: {ci.estimate:+.1f} points [{ci.low:+.1f}, {ci.high:+.1f}]"

    human = papers.value(P, "Table 3", "Human Performance", "LogiQA Test")
    best = max(s.trained, key=lambda x: acc[x.name].ci.high)
    log.judge("far-below-humans", {"best": acc[best.name].ci, "human": human,
                                   "chance": papers.value(P, "Table 3", "Random (theoretical)", "LogiQA Test")},
              f"best upper bound {acc[best.name].ci.high:.1f}% ({best.name}) vs {human:.0f}%")
    rule_ci = {n: acc[n].ci for n in ("Word Matching", "Sliding Window")}
    log.judge("rules-near-chance", {"rules": rule_ci}, "; ".join(f"{n} {ci}" for n, ci in rule_ci.items()))
    log.judge("sw-below-random", {"sw": rule_ci["Sliding Window"]}, f"{rule_ci['Sliding Window']}")
    readers = {r.name: acc[r.name].ci for r in s.readers}
    log.judge("deep-around-30", {"readers": readers}, ", ".join(f"{n} {a}%" for n, a in readers.items()),
              rests_on=rests_on(*readers))
    reader = best_reader(s, acc)
    ci, text = compare(s.main.name, reader.name, model, reader.name)
    log.judge("pretrained-beat-readers", {"diff": ci}, text, rests_on=rests_on(s.main.name, reader.name))

    if "zh" in cfg.dataset.languages:
        # Chinese − English accuracy, each language's questions resampled on its own
        gaps = {x.name: hierarchical_difference(x.correct("zh-test", data.gold("zh-test")), runs.get(x.name, x.correct(
            "en-test", gold))) for x in s.rules[:2]}
        log.judge("zh-same-level", {"gaps": gaps}, ", ".join(f"{n}: Chinese − English {g} points"
                                                             for n, g in gaps.items()))
    else:
        log.judge("zh-same-level", None, "Chinese LogiQA is not read in this run (dataset.languages)")

    drops = {a: compare("full input", a, "full", a) for a in cfg.ablations}
    log.judge("ablations-drop", {"drops": {a: ci for a, (ci, _) in drops.items()}},
              "; ".join(text for _, text in drops.values()), rests_on=rests_on(s.main.name, *cfg.ablations))
    if {"no paragraph", "no question"} <= set(cfg.ablations):
        ci, text = compare("no question", "no paragraph", "no question", "no paragraph")
        log.judge("paragraph-matters-more", {"diff": ci}, text, rests_on=rests_on("no question", "no paragraph"))
    else:
        log.judge("paragraph-matters-more", None, "needs both the no-paragraph and the no-question ablations")

    if s.transfer:
        only, src_only = (x.name for x in s.transfer[:2])
        ci, text = compare(only, src_only, "LogiQA only", "ReClor only")
        log.judge("source-only-lower", {"diff": ci}, text + " (source: ReClor, not RACE/COSMOS)",
                  rests_on=rests_on(s.main.name, src_only))
        if len(s.transfer) > 2:
            ci, text = compare(s.transfer[2].name, only, "ReClor → LogiQA", "LogiQA only")
            log.judge("transfer-no-gain", {"diff": ci}, text + " (source: ReClor, not RACE/COSMOS)",
                      rests_on=rests_on(s.main.name, s.transfer[2].name))
        else:
            log.judge("transfer-no-gain", None, "ReClor → LogiQA is not trained in this run (transfer.then_logiqa)")
    else:
        for id in ("source-only-lower", "transfer-no-gain"):
            log.judge(id, None, "no ReClor data here; RACE and COSMOS are not available")

    ends = points[points.system == s.main.name].set_index("length").iloc[[0, -1]]  # shortest and longest bins with questions
    # longest − shortest: a bootstrap over the questions of the two bins (two independent groups,
    # each resampled on its own, the seeds above them)
    bucket = length_bucket(data.splits["en-test"])
    short, long = (bucket == LENGTH_LABELS.index(lab) for lab in ends.index)
    length_diff = hierarchical_difference(runs[s.main.name][:, long], runs[s.main.name][:, short])
    log.judge("length-not-negative", None if ends.index[0] == ends.index[1] else {"diff": length_diff},
              ", ".join(f"{k}: {r.accuracy:.1f}% [{r.low:.1f}, {r.high:.1f}] (n={r.n})" for k, r in ends.iterrows())
              + f"; longest − shortest {length_diff}",
              rests_on=rests_on(s.main.name))

    gold_bm = (best_match(data.splits["en-test"]) == data.gold("en-test")).astype(float)
    bm = best_match(data.splits["en-test"])

    def overlap_runs(x: Predictions) -> np.ndarray:
        """(seeds, questions): 1 where the prediction is the best-matching option, NaN where not evaluated."""
        p = x.preds["en-test"]
        return np.where(p >= 0, (p == bm[None, :]).astype(float), np.nan)

    over = {x.name: hierarchical_paired(overlap_runs(x), gold_bm) for x in s.trained}
    log.judge("models-overmatch", {"over": over},
              "; ".join(f"{n} {ci.estimate:+.1f} [{ci.low:+.1f}, {ci.high:+.1f}]" for n, ci in over.items()),
              rests_on=rests_on(*over))
    main_over = overlap_runs(s.main)
    more = {r.name: hierarchical_paired(overlap_runs(r), main_over) for r in s.readers}
    log.judge("pretrained-least-overlap", {"more": more},
              "; ".join(f"{n} − {model}: {ci.estimate:+.1f} [{ci.low:+.1f}, {ci.high:+.1f}]" for n, ci in more.items()),
              rests_on=rests_on(s.main.name, *more))

    index = {it.id: i for i, it in enumerate(data.splits["en-test"])}
    type_ci = {}
    for t in lq.REASONING_TYPES:
        vals = runs[s.main.name][:, [index[i] for i, ts in proxy.types.items() if t in ts]]
        if np.isfinite(vals).any():
            type_ci[t] = hierarchical_ci(vals)
    others = {t: ci for t, ci in type_ci.items() if t != "categorical"}
    log.judge("categorical-easiest",
              {"categorical": type_ci["categorical"], "others": others} if "categorical" in type_ci and others else None,
              "; ".join(f"{t} {ci} (n={sum(t in ts for ts in proxy.types.values())})" for t, ci in type_ci.items()),
              rests_on=rests_on(s.main.name))
    return log


def full_profile_rows(cfg: Config, s: Systems) -> dict[str, dict]:
    """Each trained row's jobs in the full profile, as :func:`rcstudy.plan.row_needs` selects them:
    the readers and ablations by name, the main encoder as the full profile's main encoder, an
    extra encoder by model, the transfer rows by row; a row the full profile does not run as such
    (a reader, an ablation or an extra model it leaves out) by its step alone."""
    full = Config.load("full")

    def rows(step: str, key: str, value, among) -> dict:
        return {"step": step, "arguments": {key: value}} if value in among else {"step": step}

    out = {READERS[n][0]: rows("reader_job", "name", n, full.readers.names) for n in cfg.readers.names}
    out |= {x.name: rows("encoder_job", "model", x.name, full.encoder.extra_models) for x in s.extra}
    out[s.main.name] = {"step": "encoder_job", "arguments": {"model": full.encoder.model}}
    out |= {x.name: rows("ablation_job", "name", x.name, full.ablations) for x in s.ablations[1:]}
    out |= {x.name: {"step": "transfer_job", "arguments": {"row": row}} for row, x in enumerate(s.transfer[1:])}
    return out


def run(cfg: Config, rt: Runtime, *, profile: str | None = None,
        full_profile: Callable[[dict[str, dict]], dict[str, str]] | None = None) -> Results:
    """Everything the chapter shows, computed from ``cfg`` (the data come from ``$RCSTUDY_DATA``);
    ``profile`` names the run in the prose. ``full_profile``: given :func:`full_profile_rows` of
    the rows that did not learn, what the full profile would spend on each (the page passes
    :func:`rcstudy.plan.row_needs`), said in their warnings and in the claims resting on them."""
    data = load_data(cfg.dataset)
    diag = split_diagnostics(data)
    tables = {"logiqa_splits": diag.round(1)}
    facts = paper_facts() | data_facts(data, diag)
    facts["logiqa_data_source"] = Markdown(md_text(f"LogiQA 1.0 from {hub.describe('logiqa', cfg.dataset.source)} and "
                                                   f"LogiQA 2.0 from {hub.describe('logiqa2', cfg.dataset.logiqa2_source)}"))
    more, f = training_data(data, cfg.dataset.dedup_threshold)
    tables |= more
    facts |= f
    more, f = statistics(data)
    tables |= more
    facts |= f
    type_sources, fig2, f = reasoning_types(data, cfg.dataset.match_threshold)
    tables["logiqa_figure2"] = fig2.round(1)
    facts |= f
    grid, f = word_matching_grid(data)
    tables["logiqa_wm_grid"] = grid.round(2)
    facts |= f

    s, missing = systems(cfg, data, rt)
    checks = s.loss_checks(data)
    stuck = {c.name for c in checks.values() if not c.learned}
    if full_profile and stuck:
        checks = learning.with_full_profile(checks, full_profile(
            {row: sel for row, sel in full_profile_rows(cfg, s).items() if row in stuck}))
    tables["logiqa_trained"] = learning.table(list(checks.values()))
    facts["logiqa_loss_warnings"] = Markdown(md_text(learning.warnings_text(list(checks.values()))))
    acc = {x.name: score(x, data, "en-test") for x in s.table3}
    facts |= setting_facts(cfg, s, profile) | results_facts(s, acc) | lm_facts(s, data)
    ours_t3, paper_t3 = table3(s, data)
    tables["logiqa_table3"] = paper_vs_ours(paper_t3, ours_t3)
    tables["logiqa_table3_test"] = detail_table(s.table3, data)
    tables["logiqa_figure3"], ablation_bars, f = ablation(s, data)
    facts |= f
    tables["logiqa_table4"], f = transfer(s, data, missing)
    facts |= f
    tables["logiqa_table5"], points, f = lengths(cfg, s, data, acc)
    facts |= f
    t6, overlap_points, paper_overlap = overlap(cfg, s, data, acc)
    tables["logiqa_table6"] = paper_vs_ours(papers.table(P, "Table 6"), t6[["Overlap Ratio", "Accuracy(%)"]])
    tables["logiqa_table6_both"] = t6.round(1)
    facts["logiqa_gold_overlap"] = t6.loc["Gold-standard", "Overlap Ratio"]
    t7 = type_tables(s, data, type_sources)
    paper_t7 = papers.table(P, "Table 7")
    for src, table in t7.items():
        short = src.split()[0].lower()
        tables[f"logiqa_table7_{short}"] = paper_vs_ours(paper_t7, table[[cfg.encoder.model]].rename(
            columns={cfg.encoder.model: "RoBERTa"}))
        tables[f"logiqa_table7_all_{short}"] = table.round(1)
    tables["logiqa_consistency"], f = consistency(len(data.splits["en-test"]))
    facts |= f

    claims = judge_claims(cfg, s, data, acc, points, type_sources["LogiQA 2.0 labels (proxy)"], checks)
    export_predictions(s.everything, data)
    return Results(
        tables, facts, claims, systems=s, answer_shares=answer_shares(data),
        similarity=None if data.train.dedup is None else data.train.dedup.best_similarity,
        majority=diag.loc["majority answer (%)"].to_dict(),
        lengths=np.array([item_length(it) for it in data.splits["en-test"]]), type_shares=fig2,
        reader_curves={r.name: r.extra["dev_curves"] for r in s.readers},
        accuracy_bars=accuracy_bars(ours_t3, paper_t3), ablation=ablation_bars, length_points=points,
        paper_length=papers.table(P, "Table 5").loc["RoBERTa"].to_numpy(),
        overlap_points=overlap_points, paper_overlap=paper_overlap, type_accuracy=type_accuracy(cfg, t7),
        losses={x.name: x.extra["losses"] for x in s.everything if x.extra.get("losses")})


# --------------------------------------------------------------------------------------------
# Jobs: the heavy computations of :func:`run`, one by one (:mod:`rcstudy.jobs`)


def job_data(dataset: Dataset) -> LogiQAData:
    """:func:`load_data`, read once per process (:func:`rcstudy.jobs.loaded_once`)."""
    return loaded_once(load_data, dataset)


def transfer_stages(cfg: Config, data: LogiQAData) -> list[list[Sequence[MCItem]]]:
    """:func:`transfer_row_stages` of the chapter's source and LogiQA items; none without ReClor."""
    try:
        source = reclor_source(cfg.transfer, cfg.sizes.seed)
    except DataFileMissing:
        return []
    return transfer_row_stages(source, encoder_train_items(data, cfg.encoder, cfg.sizes), cfg.transfer.then_logiqa)


def reader_job(cfg: Config, rt: Runtime, name: str, seed: int) -> None:
    reader_run(job_data(cfg.dataset), cfg.readers, name, seed, cfg.sizes.seed, str(rt.device))


def encoder_job(cfg: Config, rt: Runtime, model: str, seed: int) -> None:
    encoder_run(job_data(cfg.dataset), replace(cfg.encoder, model=model), cfg.sizes, seed, rt)


def ablation_job(cfg: Config, rt: Runtime, name: str, seed: int) -> None:
    ablation_run(job_data(cfg.dataset), cfg.encoder, cfg.sizes, name, seed, rt)


def transfer_job(cfg: Config, rt: Runtime, row: int, seed: int) -> None:
    data = job_data(cfg.dataset)
    transfer_run(data, cfg.encoder, cfg.transfer, cfg.sizes, transfer_stages(cfg, data)[row], seed, rt)


def lm_job(cfg: Config, rt: Runtime) -> None:
    data = job_data(cfg.dataset)
    option_logliks(cfg.lm.model, lm_items(data, cfg.lm, cfg.sizes)[1], rt, batch_size=cfg.lm.batch_size)


#: The context length :func:`rcstudy.models.lm.load_lm` gives the LM (or the model's own limit, if shorter).
LM_MAX_LENGTH = 2048


def lm_tokens(items: Sequence[MCItem], batch_size: int) -> Tokens:
    """The tokens the zero-shot LM runs to score every option of ``items``
    (:func:`rcstudy.baselines.option_lm.option_scores`): each item's context once per
    ``batch_size`` of its options, whose key/value cache then serves each option
    (:func:`rcstudy.jobs.causal_option_tokens`)."""
    return causal_option_tokens([lm_context(it) for it in items],
                                [[lm_continuation(o) for o in it.options] for it in items], LM_MAX_LENGTH, batch_size)


def jobs(cfg: Config) -> list[Job]:
    """Every training and scoring run of :func:`run`, as jobs that fill the cache entries it reads:
    the readers, each encoder and ablation per seed, the transfer rows per seed (source → LogiQA
    after the source alone, whose model it continues), and the zero-shot LM."""
    data = job_data(cfg.dataset)
    enc = cfg.encoder
    out = []
    n_reader = len(reader_train_items(data, cfg.readers, cfg.sizes.seed))
    for name in cfg.readers.names:
        for seed in cfg.readers.seeds:
            out.append(Job(P, "train", f"reader {name} seed {seed}", name, "CQA", seed, items=n_reader,
                           epochs=cfg.readers.epochs, step="reader_job", arguments={"name": name, "seed": seed}))
    train = encoder_train_items(data, enc, cfg.sizes)
    scored = mc_tokens([it for items in encoder_eval_sets(data, cfg.sizes).values() for it in items], "CQA", enc.max_length)
    for model in (enc.model, *enc.extra_models):
        for seed in enc.seeds:
            out.append(Job(P, "train", f"encoder {split_revision(model)[0]} seed {seed}", model, "CQA", seed, items=len(train),
                           epochs=enc.epochs, train_tokens=round(mc_tokens(train, "CQA", enc.max_length) * enc.epochs),
                           score_tokens=scored, step="encoder_job", arguments={"model": model, "seed": seed}))
    for name in cfg.ablations:
        fields = ABLATION_FIELDS[name]
        items, sub = ablation_sets(data, enc, cfg.sizes, name)
        for seed in enc.seeds:
            out.append(Job(P, "train", f"ablation {name} seed {seed}", enc.model, fields, seed, items=len(items),
                           epochs=enc.epochs, train_tokens=round(mc_tokens(items, fields, enc.max_length) * enc.epochs),
                           score_tokens=mc_tokens(sub, fields, enc.max_length), step="ablation_job",
                           arguments={"name": name, "seed": seed}))
    scored = mc_tokens([it for items in transfer_eval_sets(data, cfg.sizes).values() for it in items], "CQA", enc.max_length)
    for row, stages in enumerate(transfer_stages(cfg, data)):
        # the second row continues the first row's cached model: only its LogiQA stage is trained here
        trained = list(zip(stages, [cfg.transfer.source_epochs, enc.epochs]))[row:]
        tokens = sum(mc_tokens(items, "CQA", enc.max_length) * e for items, e in trained)
        for seed in enc.seeds:
            source_only = f"transfer ReClor seed {seed}"
            out.append(Job(P, "train", [source_only, f"transfer ReClor → LogiQA seed {seed}"][row], enc.model, "CQA",
                           seed, items=sum(len(items) for items, _ in trained), epochs=sum(e for _, e in trained),
                           train_tokens=round(tokens),
                           score_tokens=scored, step="transfer_job", arguments={"row": row, "seed": seed},
                           after=(source_only,) if row else ()))
    _, items = lm_items(data, cfg.lm, cfg.sizes)
    out.append(Job(P, "score", f"zero-shot {split_revision(cfg.lm.model)[0]}", cfg.lm.model, "CQ+A", items=len(items),
                   tokens=lm_tokens(items, cfg.lm.batch_size), step="lm_job"))
    return out
