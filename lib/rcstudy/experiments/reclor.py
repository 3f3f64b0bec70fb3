"""The ReClor chapter's pipeline: data statistics, option-only models, EASY/HARD, Table 7.

A *family* names what is trained: ``"fastText"`` (:mod:`rcstudy.baselines.ngram`),
``"Bi-LSTM"`` (:mod:`rcstudy.baselines.bilstm`) or a pretrained encoder (any model name of
:mod:`rcstudy.models`), which is either kept **frozen** (mean-pooled features computed once
and cached, then one linear option-scoring head per seed) or **fine-tuned** whole
(:func:`rcstudy.models.mc.finetune_and_predict`). *Fields* are the inputs: ``"A"`` (options
only), ``"QA"`` or ``"CQA"``. Every run is cached on disk, keyed by its settings, seed and the
fingerprints of its training and evaluation items.

The test labels are hidden, so EASY/HARD (Eq. 1) is computed on **val** (option-only models
trained on all of train) and, as an extension, on **train** by k-fold cross-fitting.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from .. import bias, papers, report
from ..baselines import bilstm, ngram
from ..cache import cached
from ..data import dataset_file, reclor
from ..data.records import MCItem
from ..models import mc
from ..runtime import Runtime
from ..settings import exports_dir
from ..stats import mean_sd

NGRAM, BILSTM = "fastText", "Bi-LSTM"
SCRATCH = (NGRAM, BILSTM)
MODES = ("frozen", "finetune")
INPUT_LABELS = {"A": "(A)", "QA": "(Q, A)", "CQA": "(C, Q, A)"}
#: Our family names → the paper's model names (Tables 6, 7, 9).
PAPER_NAMES = {
    NGRAM: "fastText", BILSTM: "Bi-LSTM", "openai-gpt": "GPT", "gpt2": "GPT-2",
    "bert-base-uncased": "BERT_BASE", "bert-large-uncased": "BERT_LARGE",
    "xlnet-base-cased": "XLNet_BASE", "xlnet-large-cased": "XLNet_LARGE",
    "roberta-base": "RoBERTa_BASE", "roberta-large": "RoBERTa_LARGE",
}
EXPORT_SPLIT = "reclor_easy_hard.csv"


# --- data ----------------------------------------------------------------------------------

def data_files() -> list[Path]:
    """The split files every cached result depends on."""
    return [dataset_file(reclor.DATASET, f"{s}.json") for s in reclor.SPLITS]


def subsample(items: Sequence[MCItem], n: int | None, seed: int) -> list[MCItem]:
    """``n`` items drawn without replacement (kept in file order); all of them when ``n`` is None."""
    if n is None or n >= len(items):
        return list(items)
    keep = np.sort(np.random.default_rng(seed).choice(len(items), size=n, replace=False))
    return [items[i] for i in keep]


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


@contextlib.contextmanager
def one_thread():
    """Run small tensor operations (a linear head, a small LSTM) on one thread.

    Their steps are too small to share between threads: on a 2-core machine shared with other
    work, two threads made them 10-20 times slower in our measurements.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


# --- runs ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Settings:
    """How each family is trained.

    ``train_questions[fields]`` caps the training questions of the Bi-LSTM and pretrained runs
    of Table 7 (None: all; one subsample shared by every run, so the input settings compare
    fairly); fastText always trains on all of train. The option-only runs of Eq. 1 train on
    ``option_only_questions`` (None: all).
    """

    seeds: tuple[int, ...] = (1, 2, 3, 4)
    transformer_mode: str = "frozen"
    max_length: Mapping[str, int] = field(default_factory=lambda: {"A": 64, "QA": 128, "CQA": 256})
    train_questions: Mapping[str, int | None] = field(default_factory=lambda: {"A": None, "QA": None, "CQA": None})
    head: Mapping = field(default_factory=lambda: {"epochs": 30, "lr": 1e-2})
    finetune: Mapping = field(default_factory=dict)
    fasttext: Mapping = field(default_factory=dict)
    bilstm: Mapping = field(default_factory=dict)
    option_only_questions: int | None = None
    crossfit_folds: int = 5
    fold_seed: int = 0
    subsample_seed: int = 0

    def __post_init__(self):
        if self.transformer_mode not in MODES:
            raise ValueError(f"transformer_mode must be one of {MODES}, got {self.transformer_mode!r}")

    def describe(self, family: str, fields: str, n_train: int) -> str:
        """One line saying exactly what a run trains (used beside the tables)."""
        if family == NGRAM:
            c = ngram.NgramConfig(fields=fields, **self.fasttext)
            return (f"fastText-style bag of {c.word_ngrams}-grams, dim {c.dim}, {c.epochs} epochs of SGD (lr {c.lr}), "
                    f"{n_train:,} training questions")
        if family == BILSTM:
            c = bilstm.BiLSTMConfig(fields=fields, **self.bilstm)
            if not c.lr_step:
                decay = ""
            elif c.epochs > c.lr_step:
                decay = f", ×{c.lr_gamma} every {c.lr_step} epochs as in the paper"
            else:
                decay = f"; the paper's ×{c.lr_gamma} decay every {c.lr_step} epochs does not start within them"
            return (f"Bi-LSTM from scratch ({c.layers} layers, {c.hidden} units per direction, random {c.emb_dim}-d "
                    f"embeddings), {c.epochs} epoch(s) of Adam (lr {c.lr}{decay}), {n_train:,} training questions")
        if self.transformer_mode == "frozen":
            epochs = self.head.get("epochs", inspect.signature(mc.fit_linear_head).parameters["epochs"].default)
            return (f"{family} frozen (mean-pooled features, max {self.max_length[fields]} tokens) + linear head, "
                    f"{epochs} head epochs, {n_train:,} training questions")
        cfg = self.mc_config(family, fields, 0)
        return (f"{family} fine-tuned, {cfg.epochs} epochs, lr {cfg.lr}, batch {cfg.batch_size * cfg.grad_accum}, "
                f"max {cfg.max_length} tokens, {n_train:,} training questions")

    def mc_config(self, model: str, fields: str, seed: int) -> mc.MCConfig:
        """Fine-tuning settings: Table 9's column for the model (BERT_BASE's for models not in the
        paper), then any value given in ``finetune`` on top."""
        col = PAPER_NAMES.get(model, "BERT_BASE")
        t9 = lambda row: papers.value("reclor", "Table 9", row, col)  # noqa: E731
        base = {"lr": t9("Learning Rate"), "weight_decay": t9("Weight Decay"), "warmup": t9("Warm-up Proportion"),
                "epochs": t9("Number of Epochs"), "max_length": int(t9("Max Seq Length"))}
        return mc.MCConfig(model=model, fields=fields, seed=seed, **{**base, **self.finetune})


class Runner:
    """Trains and evaluates families on the ReClor splits, caching every run."""

    def __init__(self, settings: Settings, splits: Mapping[str, Sequence[MCItem]], rt: Runtime):
        self.s, self.splits, self.rt = settings, splits, rt
        self._features: dict[tuple[str, str], dict[str, np.ndarray]] = {}
        self._data = data_files()

    def train_items(self, family: str, fields: str, *, option_only: bool = False) -> list[MCItem]:
        """The training questions of a Table 7 run, or of an option-only run of Eq. 1 (see :class:`Settings`)."""
        if option_only:
            n = self.s.option_only_questions
        else:
            n = None if family == NGRAM else self.s.train_questions.get(fields)
        return subsample(self.splits["train"], n, self.s.subsample_seed)

    def features(self, model: str, fields: str, items: Sequence[MCItem]) -> np.ndarray:
        """Frozen-encoder features of ``items``, computed (and cached) once per item."""
        bank = self._features.setdefault((model, fields), {})
        missing = [it for it in items if it.id not in bank]
        if missing:
            feats = mc.frozen_features(model, missing, fields, self.rt, max_length=self.s.max_length[fields])
            bank.update(zip((it.id for it in missing), feats))
        return np.stack([bank[it.id] for it in items])

    def scores(self, family: str, fields: str, seed: int, train: Sequence[MCItem],
               eval_sets: Mapping[str, Sequence[MCItem]]) -> dict[str, np.ndarray]:
        """Option scores (higher = more likely right) on each evaluation set, for one seed."""
        if family not in SCRATCH and self.s.transformer_mode == "finetune":
            return mc.finetune_and_predict(self.s.mc_config(family, fields, seed), train, dict(eval_sets), self.rt)
        key = {"family": family, "fields": fields, "seed": seed, "train": mc.items_fingerprint(train),
               "eval": {k: mc.items_fingerprint(v) for k, v in eval_sets.items()}}
        if family == NGRAM:
            cfg = ngram.NgramConfig(fields=fields, seed=seed, **self.s.fasttext)
            return cached("reclor_fasttext", {**key, "cfg": asdict(cfg)},
                          lambda: ngram.fit_predict_mc(train, dict(eval_sets), cfg), data_files=self._data)
        if family == BILSTM:
            cfg = bilstm.BiLSTMConfig(fields=fields, seed=seed, **self.s.bilstm)

            def train_bilstm():
                with contextlib.nullcontext() if self.rt.cuda else one_thread():
                    return bilstm.fit_predict_mc(train, dict(eval_sets), cfg, self.rt.device)

            return cached("reclor_bilstm", {**key, "cfg": asdict(cfg)}, train_bilstm, data_files=self._data)

        def frozen():
            labelled = [it for it in train if it.label is not None]
            feats = {k: self.features(family, fields, v) for k, v in eval_sets.items()}
            train_feats = self.features(family, fields, labelled)
            with one_thread():
                head = mc.fit_linear_head(train_feats, [it.label for it in labelled], seed, **self.s.head)
                return {k: mc.head_logits(head, f) for k, f in feats.items()}

        params = {**key, "max_length": self.s.max_length[fields], "head": dict(self.s.head)}
        return cached("reclor_frozen_heads", params, frozen, data_files=self._data)

    def seed_runs(self, family: str, fields: str, eval_sets: Mapping[str, Sequence[MCItem]], *,
                  option_only: bool = False) -> dict[str, np.ndarray]:
        """Scores for every seed, stacked: ``{set: (seeds, items, options)}``."""
        train = self.train_items(family, fields, option_only=option_only)
        per_seed = [self.scores(family, fields, s, train, eval_sets) for s in self.s.seeds]
        return {k: np.stack([r[k] for r in per_seed]) for k in eval_sets}

    def cross_fit(self, family: str, fields: str = "A") -> np.ndarray:
        """Out-of-fold scores on all of train for every seed, (seeds, items, options).

        The folds are the same for every seed and family, so the per-seed intersections compare
        models trained on the same data."""
        train = self.splits["train"]
        folds = bias.kfold(len(train), self.s.crossfit_folds, self.s.fold_seed)
        return np.stack([
            bias.cross_fit(train, folds, lambda tr, held, s=s: self.scores(family, fields, s, tr, {"held": held})["held"])
            for s in self.s.seeds])


# --- EASY / HARD ---------------------------------------------------------------------------

def correctness(scores: np.ndarray, items: Sequence[MCItem]) -> np.ndarray:
    """(seeds, items, options) scores → (seeds, items) booleans."""
    return np.stack([bias.correct(s, items) for s in scores])


def easy_hard(runs: Mapping[str, np.ndarray], items: Sequence[MCItem]) -> bias.EasyHard:
    """Eq. 1 from each family's per-seed scores on ``items``."""
    return bias.EasyHard.from_runs([it.id for it in items], {m: correctness(r, items) for m, r in runs.items()})


def export_easy_hard(splits: Mapping[str, bias.EasyHard], path: Path | None = None) -> Path:
    """Write every split's EASY/HARD table to one CSV (see the chapter for the columns)."""
    path = Path(path or exports_dir() / EXPORT_SPLIT)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.concat([eh.frame(name) for name, eh in splits.items()], ignore_index=True).to_csv(path, index=False)
    return path


def export_test_predictions(name: str, scores: np.ndarray, test_items: Sequence[MCItem]) -> Path:
    """The leaderboard file (``.npy`` of option indices, element i answers ``test_i``) of one run."""
    safe = re.sub(r"[^\w.-]+", "_", name)
    return reclor.write_leaderboard_file(test_items, np.asarray(scores).argmax(axis=1),
                                         exports_dir() / f"reclor_test_preds_{safe}.npy")


# --- tables --------------------------------------------------------------------------------

def paper_name(family: str) -> str:
    return PAPER_NAMES.get(family, family)


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
    if family in PAPER_NAMES:
        return f"{PAPER_NAMES[family]} {INPUT_LABELS[fields]}"
    return f"{family} {INPUT_LABELS[fields]} · paper: {stand_in}"


def paper_row(family: str, fields: str, stand_in: str) -> str:
    return f"{PAPER_NAMES.get(family, stand_in)} {INPUT_LABELS[fields]}"


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

