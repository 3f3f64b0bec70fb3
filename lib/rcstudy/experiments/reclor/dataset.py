"""ReClor's splits, and the page's data sections: split sizes (§3.2), Table 2 under three
tokenisations and the question types (Table 3)."""

from __future__ import annotations

import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ... import papers, report
from ...data import dataset_file, hub, reclor
from ...data.records import MCItem
from ...report import md_code, md_text
from .config import P, Config
from ..section import Section


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




def setting_section(cfg: Config, val: Sequence[MCItem]) -> Section:
    """What the whole page quotes: the seeds, the headline model, chance, and the paper's numbers."""
    chance = 100 / len(val[0].options)
    p_test, p_easy = papers.value(P, "§3.2", "test", "items"), papers.value(P, "Table 6", "Union", "Number")
    return Section(facts={
        "reclor_n_seeds": len(cfg.seeds), "reclor_model": Markdown(md_code(cfg.headline)),
        "reclor_chance": chance, "reclor_chance4": chance * (chance / 100) ** 3,
        "reclor_n_types": len(reclor.QUESTION_TYPES),
        "reclor_p_train": papers.value(P, "§3.2", "train", "items"),
        "reclor_p_test": p_test,
        "reclor_p_easy": p_easy,
        "reclor_p_hard": p_test - p_easy,
        "reclor_p_epochs": papers.value(P, "Table 9", "Number of Epochs", "BERT_BASE"),
        "reclor_paper_easy_pct": 100 * p_easy / p_test,
    })


def table2(items: Sequence[MCItem], tok_fns) -> tuple[pd.DataFrame, str]:
    """Table 2 beside the paper's, and the tokenisation whose lengths come closest to its."""
    table = dataset_statistics(items, tok_fns)
    table.insert(0, "paper", [f"{v:,.0f}" if float(v).is_integer() else f"{v:.1f}"
                              for v in papers.table(P, "Table 2").loc[table.index, "ReClor"]])
    rows = ("Context Len", "Question Len", "Option Len")
    lens = {name: {c: float(table.loc[c, name]) for c in rows} for name in TOKENIZATIONS}
    paper_lens = {c: papers.value(P, "Table 2", c, "ReClor") for c in rows}
    return table, min(TOKENIZATIONS, key=lambda n: sum(abs(lens[n][c] - paper_lens[c]) for c in paper_lens))


def data_section(cfg: Config, splits: Mapping[str, Sequence[MCItem]], tok_fns) -> Section:
    """Split sizes (§3.2), Table 2 under three tokenisations, and the question types (Table 3)."""
    train, val, test = splits["train"], splits["val"], splits["test"]
    table, closest = table2([*train, *val, *test], tok_fns)
    types = question_types(splits)
    ours = types[["test (%)", "val (%)", "train (%)"]].rename(columns={"test (%)": "Test (%)"})
    paper = papers.table(P, "Table 3")
    typed_test = types["test (n)"].sum()
    tables = {"reclor_splits": side_by_side(papers.table(P, "§3.2"), split_sizes(splits)),
              "reclor_table2": table, "reclor_table3": side_by_side(paper, ours)}
    facts = {"reclor_n_train": len(train), "reclor_n_val": len(val), "reclor_n_test": len(test),
             "reclor_test_labelled": sum(it.label is not None for it in test),
             "reclor_t2_closest": Markdown(f"**{md_text(closest)}**"),
             "reclor_t3_gap": float((ours["Test (%)"] - paper["Test (%)"]).abs().max() if typed_test else np.nan),
             "reclor_t3_typed": int(typed_test),
             "reclor_data_source": Markdown(md_text(hub.describe("reclor", cfg.data_source)))}
    return Section(tables=tables, facts=facts)
