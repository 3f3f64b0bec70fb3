"""Lexical overlap (Table 6): how often each system picks the option that shares most words with
the paragraph and question, beside the paper's."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd

from ... import papers
from ...baselines import lexical
from ...claims import ClaimEvidence
from ...data.records import MCItem
from ...report import paper_vs_ours
from ...stats import hierarchical_paired
from .config import P, Config
from .data import LogiQAData
from .predictions import Predictions, Score
from ..section import Section
from .systems import Systems


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


@dataclass(frozen=True, kw_only=True)
class Overlap(Section):
    """Table 6 (both readings of its accuracy), and the scatter's points, ours and the paper's."""

    points: pd.DataFrame  # ours: overlap ratio and Test accuracy per system
    paper: pd.DataFrame  # the paper's: the same for its rows


def overlap_claims(cfg: Config, s: Systems, data: LogiQAData) -> tuple[ClaimEvidence, ...]:
    """Trained models pick the best-matching option more often than the gold answer is it; the
    fine-tuned encoder least often of them."""
    test = data.splits["en-test"]
    bm = best_match(test)
    gold_bm = (bm == data.gold("en-test")).astype(float)

    def overlap_runs(x: Predictions) -> np.ndarray:
        """(seeds, questions): 1 where the prediction is the best-matching option, NaN where not evaluated."""
        p = x.preds["en-test"]
        return np.where(p >= 0, (p == bm[None, :]).astype(float), np.nan)

    over = {x.name: hierarchical_paired(overlap_runs(x), gold_bm) for x in s.trained}
    main_over = overlap_runs(s.main)
    more = {r.name: hierarchical_paired(overlap_runs(r), main_over) for r in s.readers}
    model = cfg.encoder.model
    return (ClaimEvidence("models-overmatch", {"over": over},
                          "; ".join(f"{n} {ci.estimate:+.1f} [{ci.low:+.1f}, {ci.high:+.1f}]" for n, ci in over.items()),
                          rests_on=tuple(over)),
            ClaimEvidence("pretrained-least-overlap", {"more": more},
                          "; ".join(f"{n} − {model}: {ci.estimate:+.1f} [{ci.low:+.1f}, {ci.high:+.1f}]"
                                    for n, ci in more.items()),
                          rests_on=(s.main.name, *more)))


def overlap_section(cfg: Config, s: Systems, data: LogiQAData, acc: dict[str, Score]) -> Overlap:
    """Table 6 beside the paper's and with both readings, the scatter's points (``acc``: Table 3's
    scores), the paper's, and the claims."""
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
    return Overlap(tables={"logiqa_table6": paper_vs_ours(paper_t6, t6[["Overlap Ratio", "Accuracy(%)"]]),
                           "logiqa_table6_both": t6.round(1)},
                   facts={"logiqa_gold_overlap": t6.loc["Gold-standard", "Overlap Ratio"]},
                   claims=overlap_claims(cfg, s, data), points=points, paper=paper)
