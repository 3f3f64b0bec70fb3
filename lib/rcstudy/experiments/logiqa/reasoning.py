"""Reasoning types: two proxies for the paper's unreleased labels of the Test questions, their
shares beside the paper's (Figure 2), and accuracy by type (Table 7)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ... import papers
from ...claims import ClaimEvidence
from ...data import logiqa as lq
from ...data.records import MCItem
from ...papers.logiqa import TYPE_NAMES
from ...report import paper_vs_ours
from ...stats import hierarchical_ci
from .config import P, Config
from .data import LogiQAData
from .predictions import Predictions, per_item_accuracy
from ..section import Section
from .systems import Systems

#: Keyword cues for the five types, read from the definitions in the paper's §3.2.
TYPE_CUES = {
    "categorical": re.compile(r"\b(all|every(one)?|any|no|none|some|each)\b"),
    "sufficient": re.compile(r"(?<!only )\bif\b|\bthen\b"),
    "necessary": re.compile(r"only if|unless|only when|necessary|must .* to|without .* (cannot|can't)"),
    "disjunctive": re.compile(r"either .* or|\bor\b"),
    "conjunctive": re.compile(r"both .* and|at the same time|neither .* nor|\band\b"),
}
PROXY = "LogiQA 2.0 labels (proxy)"


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
        PROXY: TypeLabels(PROXY, {q: p.meta["types"] for q, p in matched.items()}, len(test)),
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


@dataclass(frozen=True, kw_only=True)
class ReasoningTypes(Section):
    """Figure 2: both proxy labellings of Test, and the shares of each type beside the paper's."""

    sources: dict[str, TypeLabels]  # labelling → its labels
    shares: pd.DataFrame  # type × (paper, both proxies), % of test questions


def reasoning_types_section(cfg: Config, data: LogiQAData) -> ReasoningTypes:
    """The two proxy labellings of Test, Figure 2 beside the paper's, and the facts."""
    threshold, test = cfg.dataset.match_threshold, data.splits["en-test"]
    sources = type_labels(test, data.logiqa2, threshold=threshold)
    proxy = sources[PROXY]
    fig2 = pd.concat([papers.table(P, "Figure 2")["% of test"].rename("paper (manual)")]
                     + [s.shares().rename(index=TYPE_NAMES) for s in sources.values()], axis=1)
    facts = {
        "logiqa_matched": len(proxy.types),
        "logiqa_gold_agree": 100 * gold_agreement(test, data.logiqa2, threshold=threshold),
        "logiqa_suff_proxy": fig2.loc[TYPE_NAMES["sufficient"], proxy.source],
        "logiqa_suff_paper": fig2.loc[TYPE_NAMES["sufficient"], "paper (manual)"],
    }
    return ReasoningTypes(tables={"logiqa_figure2": fig2.round(1)}, facts=facts, sources=sources, shares=fig2)


# --------------------------------------------------------------------------------------------
# Reasoning types (Table 7)


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


@dataclass(frozen=True, kw_only=True)
class TypeAccuracy(Section):
    """Table 7 under both proxy labellings, and the encoder's accuracy by type beside the paper's."""

    frame: pd.DataFrame  # type × (paper RoBERTa, our encoder under each proxy)


def categorical_claim(s: Systems, data: LogiQAData, proxy: TypeLabels) -> ClaimEvidence:
    """The encoder's accuracy on each type (the proxy labels), categorical against the others."""
    main = s.main.correct("en-test", data.gold("en-test"))
    index = {it.id: i for i, it in enumerate(data.splits["en-test"])}
    type_ci = {}
    for t in lq.REASONING_TYPES:
        vals = main[:, [index[i] for i, ts in proxy.types.items() if t in ts]]
        if np.isfinite(vals).any():
            type_ci[t] = hierarchical_ci(vals)
    others = {t: ci for t, ci in type_ci.items() if t != "categorical"}
    return ClaimEvidence(
        "categorical-easiest",
        {"categorical": type_ci["categorical"], "others": others} if "categorical" in type_ci and others else None,
        "; ".join(f"{t} {ci} (n={sum(t in ts for ts in proxy.types.values())})" for t, ci in type_ci.items()),
        rests_on=(s.main.name,))


def type_accuracy_section(cfg: Config, s: Systems, data: LogiQAData, types: ReasoningTypes) -> TypeAccuracy:
    """Table 7 under each proxy labelling (every system, names as in the paper), beside the
    paper's RoBERTa column, and the plot's frame."""
    model = cfg.encoder.model
    t7 = {src: type_table(s.analysed, data, labels).rename(index=TYPE_NAMES) for src, labels in types.sources.items()}
    paper_t7 = papers.table(P, "Table 7")
    tables = {}
    for src, table in t7.items():
        short = src.split()[0].lower()
        tables[f"logiqa_table7_{short}"] = paper_vs_ours(paper_t7, table[[model]].rename(columns={model: "RoBERTa"}))
        tables[f"logiqa_table7_all_{short}"] = table.round(1)
    frame = pd.DataFrame({"paper RoBERTa": paper_t7["RoBERTa"],
                          f"ours {model} (LogiQA 2.0 labels)": t7[PROXY][model],
                          f"ours {model} (keyword heuristic)": t7["keyword heuristic (proxy)"][model]})
    return TypeAccuracy(tables=tables, claims=(categorical_claim(s, data, types.sources[PROXY]),), frame=frame)
