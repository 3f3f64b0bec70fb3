"""The LogiQA files as the chapter reads them, and the page's first sections: the released splits
("The data"), the training set built from LogiQA 2.0 ("Training data") and Table 2 ("Statistics")."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ... import papers
from ...baselines import lexical
from ...data import hub
from ...data import logiqa as lq
from ...data.records import MCItem
from ...jobs import loaded_once
from ...report import md_text, paper_vs_ours
from .config import P, Config, Dataset
from ..section import Section

LENGTH_BINS = (0, 100, 150, 200, np.inf)
LENGTH_LABELS = ("(0,100]", "(100,150]", "(150,200]", "(200,+∞)")
DEDUP_SENSITIVITY = (0.2, 0.3, 0.4, 0.5, 0.7, 0.9)  # thresholds whose removals the training-data text reports
EXACT_COPY = 0.95  # paragraph similarity above which a LogiQA 2.0 item is (almost) an exact copy


def key(lang: str, split: str) -> str:
    return f"{lang}-{split}"


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


def job_data(dataset: Dataset) -> LogiQAData:
    """:func:`load_data`, read once per process (:func:`rcstudy.jobs.loaded_once`): by the jobs
    and by the page that reads their outputs."""
    return loaded_once(load_data, dataset)


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
# The data


@dataclass(frozen=True, kw_only=True)
class Splits(Section):
    """The released splits: their diagnostics, and the answer shares the page plots."""

    answer_shares: pd.DataFrame  # long: split, answer, share (%)
    majority: dict[str, float]  # split → share (%) of its most frequent answer (the majority lines)


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


def splits_section(cfg: Config, data: LogiQAData) -> Splits:
    """The data: what the released files hold, where they come from, and the paper's numbers the page quotes."""
    diag = split_diagnostics(data)
    source = Markdown(md_text(f"LogiQA 1.0 from {hub.describe('logiqa', cfg.dataset.source)} and "
                              f"LogiQA 2.0 from {hub.describe('logiqa2', cfg.dataset.logiqa2_source)}"))
    return Splits(tables={"logiqa_splits": diag.round(1)},
                  facts=paper_facts() | data_facts(data, diag) | {"logiqa_data_source": source},
                  answer_shares=answer_shares(data), majority=diag.loc["majority answer (%)"].to_dict())


# --------------------------------------------------------------------------------------------
# Training data


@dataclass(frozen=True, kw_only=True)
class TrainingData(Section):
    """The training set: LogiQA 2.0 deduplicated against LogiQA 1.0, or the official Train.txt."""

    similarity: np.ndarray | None  # each LogiQA 2.0 item's best paragraph similarity (None: official Train.txt)


def training_data_section(cfg: Config, data: LogiQAData) -> TrainingData:
    """The deduplication table (LogiQA 2.0 training only) and the facts about the training set."""
    threshold = cfg.dataset.dedup_threshold
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
    facts = {
        "logiqa_train_text": text,
        "logiqa_n_train": len(train.items),
        "logiqa_extra_kept": 0 if d is None
        else int((d.best_similarity >= threshold).sum() - (d.best_similarity >= EXACT_COPY).sum()),
        "logiqa_dedup_threshold": threshold,
    }
    return TrainingData(tables=tables, facts=facts, similarity=None if d is None else d.best_similarity)


# --------------------------------------------------------------------------------------------
# Statistics (Table 2)


@dataclass(frozen=True, kw_only=True)
class Statistics(Section):
    """Table 2 under four tokenisers, and the Test questions' lengths (the histogram)."""

    lengths: np.ndarray  # words per Test question


def statistics_section(data: LogiQAData) -> Statistics:
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
    return Statistics(tables={"logiqa_table2": paper_vs_ours(paper, ours, digits=2),
                              "logiqa_table2_tokenisers": means.round(2)},
                      facts=facts, lengths=np.array([item_length(it) for it in data.splits["en-test"]]))
