"""Length (Table 5): accuracy per length bin of the Test questions, beside the paper's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ... import papers
from ...claims import ClaimEvidence
from ...report import paper_vs_ours
from ...stats import bootstrap_ci, hierarchical_difference
from .config import P, Config
from .data import LENGTH_LABELS, LogiQAData, length_bucket
from .predictions import Predictions, Score, per_item_accuracy
from .results import best_reader
from ..section import Section
from .systems import Systems


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


@dataclass(frozen=True, kw_only=True)
class Lengths(Section):
    """Table 5 beside the paper's, and the length plot's data."""

    points: pd.DataFrame  # accuracy per length bin with intervals
    paper: np.ndarray  # the paper's RoBERTa per length bin


def length_claim(s: Systems, data: LogiQAData, points: pd.DataFrame) -> ClaimEvidence:
    """The encoder on the longest bin with questions against the shortest: a bootstrap over the
    questions of the two bins (two independent groups, each resampled on its own, the seeds above them)."""
    ends = points[points.system == s.main.name].set_index("length").iloc[[0, -1]]
    bucket = length_bucket(data.splits["en-test"])
    short, long = (bucket == LENGTH_LABELS.index(lab) for lab in ends.index)
    main = s.main.correct("en-test", data.gold("en-test"))
    diff = hierarchical_difference(main[:, long], main[:, short])
    return ClaimEvidence("length-not-negative", None if ends.index[0] == ends.index[1] else {"diff": diff},
                         ", ".join(f"{k}: {r.accuracy:.1f}% [{r.low:.1f}, {r.high:.1f}] (n={r.n})"
                                   for k, r in ends.iterrows()) + f"; longest − shortest {diff}",
                         rests_on=(s.main.name,))


def lengths_section(cfg: Config, s: Systems, data: LogiQAData, acc: dict[str, Score]) -> Lengths:
    """Table 5 beside the paper's, the length plot's points (``acc``: Table 3's scores pick the
    best reader), the facts and the claim."""
    model = cfg.encoder.model
    t5 = length_table(s.analysed, data)
    paper = papers.table(P, "Table 5")
    table = paper_vs_ours(paper.rename(index={"RoBERTa": f"RoBERTa / {model}"}),
                          t5.rename(index={model: f"RoBERTa / {model}"}).astype(float))
    points = length_points([s.main, best_reader(s, acc), s.rules[0]], data)
    share = 100 * t5.loc["#Instances"] / t5.loc["#Instances"].sum()
    facts = {"logiqa_len_short": share.iloc[0],
             "logiqa_len_short_paper": 100 * paper.loc["#Instances"].iloc[0] / paper.loc["#Instances"].sum()}
    return Lengths(tables={"logiqa_table5": table}, facts=facts, claims=(length_claim(s, data, points),),
                   points=points, paper=paper.loc["RoBERTa"].to_numpy())
