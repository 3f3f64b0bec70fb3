"""Ablation (Figure 3): the encoder retrained with partial input, beside the paper's bars."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ... import papers
from ...claims import ClaimEvidence
from ...report import paper_vs_ours
from .config import P, Config
from .data import LogiQAData
from .predictions import paired_gap, score
from ..section import Section
from .systems import Systems


@dataclass(frozen=True, kw_only=True)
class Ablations(Section):
    """Figure 3 beside the paper's, and its bars."""

    bars: pd.DataFrame  # per ablation: ours (interval) and the paper's bar


def ablation_claims(cfg: Config, s: Systems, data: LogiQAData) -> tuple[ClaimEvidence, ...]:
    """Every ablation costs accuracy; the paragraph costs more than the question. Both rest on the
    full-input model having learned (without that there is nothing to lose), not on the ablated
    models: an ablated model left at chance is what an ablation can find (Figure 3's no-paragraph
    bar is near chance), and the paired intervals judge it."""
    rows = {x.name: x for x in s.ablations}
    drops = {a: paired_gap(rows["full input"], rows[a], data, "full", a) for a in cfg.ablations}
    out = [ClaimEvidence("ablations-drop", {"drops": {a: ci for a, (ci, _) in drops.items()}},
                         "; ".join(text for _, text in drops.values()), rests_on=(s.main.name,))]
    if {"no paragraph", "no question"} <= set(cfg.ablations):
        ci, text = paired_gap(rows["no question"], rows["no paragraph"], data, "no question", "no paragraph")
        out.append(ClaimEvidence("paragraph-matters-more", {"diff": ci}, text, rests_on=(s.main.name,)))
    else:
        out.append(ClaimEvidence("paragraph-matters-more", None, "needs both the no-paragraph and the no-question ablations"))
    return tuple(out)


def ablation_section(cfg: Config, s: Systems, data: LogiQAData) -> Ablations:
    """Figure 3 beside the paper's, the bars' data (interval, paper), the facts and the claims."""
    acc = {x.name: score(x, data, "en-test") for x in s.ablations}
    paper = papers.table(P, "Figure 3")
    ours = pd.DataFrame({"RoBERTa Test": {n: a.seeds for n, a in acc.items()}})
    bars = pd.DataFrame({"ours": {n: a.ci for n, a in acc.items()},
                         "paper": {n: paper["RoBERTa Test"].get(n, np.nan) for n in acc}})
    facts = {"logiqa_abl_n": acc["full input"].n,
             **{f"logiqa_abl_{n.replace(' ', '_')}": a.seeds.mean for n, a in acc.items()}}
    return Ablations(tables={"logiqa_figure3": paper_vs_ours(paper, ours)}, facts=facts,
                     claims=ablation_claims(cfg, s, data), bars=bars)
