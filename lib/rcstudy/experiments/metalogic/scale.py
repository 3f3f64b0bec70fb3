"""More training data (Tables 15–16, Figure 5): systems re-trained on nested random subsets of train."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ... import papers
from ...baselines import metagraph as gen
from ...claims import ClaimEvidence
from ...jobs import Outputs
from ...metrics import metalogic as mm
from ...stats import mean_sd
from .config import PAPER, Config, scaled_generators
from .data import ratio_subsets
from .generation import Generated
from .intervals import PassageScores, gain_interval, share_ends
from .runs import FeatureFits, scale_step
from .scores import COLUMN_NAMES, OURS_NAMES, SCALE_PANELS, T3
from ..section import Section


@dataclass(frozen=True, kw_only=True)
class DataScale(Section):
    """Our data-scale runs beside the paper's tables."""

    frame: pd.DataFrame  # one row per system × share × subset draw


def scale_frame(cfg: Config, splits, g: Generated, outputs: Outputs, fits: FeatureFits) -> pd.DataFrame:
    """Every data-scale run's test scores: the feature model's (its fits) and each re-trained
    generator's (its jobs' outputs), one row per system, share and subset draw."""
    sc, train, test = cfg.scale, splits["train"], splits["test"]
    frames = []
    if "features" in sc.methods:
        frames.append(pd.DataFrame([{"ratio": ratio, "seed": seed, "n_train": len(subset),
                                     **mm.evaluate(test, fits.scale[(ratio, seed)])}
                                    for seed in sc.seeds for ratio, subset in ratio_subsets(train, sc.ratios, seed).items()]
                                   ).assign(system=OURS_NAMES["features"]))
    for m in scaled_generators(cfg):
        recs = []
        for s in sc.seeds:
            for ratio, subset in ratio_subsets(g.train, sc.ratios, s).items():
                step, arguments = scale_step(cfg, g, m, s, ratio, subset)
                out = outputs.of(step, **arguments)
                recs.append({"ratio": ratio, "seed": s, "n_train": len(subset),
                             **mm.evaluate(g.test, gen.parse_outputs(m, out["test"]))})
        frames.append(pd.DataFrame(recs).assign(system=g.names[m]))
    return pd.concat(frames).rename(columns=COLUMN_NAMES)


def scale_claim(cfg: Config, splits, fits: FeatureFits, early: float, late: float) -> ClaimEvidence:
    """The feature model gains more up to ~20 % of train than after it (``early``, ``late``: its gains)."""
    sc = cfg.scale
    if "features" not in sc.methods or len(sc.ratios) < 3:
        return ClaimEvidence("scale-fast-then-flat", None, "the feature model is not run at three data shares here")
    lo, mid, hi = (PassageScores(splits["test"], [fits.scale[(r, s)] for s in sc.seeds]) for r in share_ends(sc.ratios))
    gain = gain_interval(lo, mid, hi)
    return ClaimEvidence("scale-fast-then-flat", {"early_minus_late": gain},
                         f"{OURS_NAMES['features']}: +{early:.1f} then +{late:.1f} points; early − late {gain} (subset "
                         "draws, then test passages, resampled)")


def scale_section(cfg: Config, splits, g: Generated, outputs: Outputs, fits: FeatureFits) -> DataScale:
    """Tables 15–16 (ours, mean ± sd over subset draws, beside the paper's), the feature model's
    gains (smallest share → ~20 %, ~20 % → all; every system's if it is not run) and the claim."""
    sc = cfg.scale
    scale = scale_frame(cfg, splits, g, outputs, fits)
    feat = scale[scale.system == OURS_NAMES["features"]] if "features" in sc.methods else scale
    curve = feat.groupby("ratio")[SCALE_PANELS].mean().mean(axis=1)
    lo, mid, hi = share_ends(list(curve.index))
    early, late = float(curve[mid] - curve[lo]), float(curve[hi] - curve[mid])
    facts = dict(metalogic_scale_gain_early=early, metalogic_scale_gain_late=late, metalogic_scale_mid=100 * mid,
                 metalogic_scale_systems=", ".join(sorted(scale.system.unique())),
                 metalogic_scale_draws=len(sc.seeds), metalogic_scale_smallest=int(scale.n_train.min()))
    tables = {"metalogic_table15_ours": scale.groupby(["system", "ratio"])[T3].agg(lambda v: mean_sd(list(v))),
              "metalogic_table15_paper": papers.table(PAPER, "Table 15"),
              "metalogic_table16_paper": papers.table(PAPER, "Table 16")}
    return DataScale(tables=tables, facts=facts, claims=(scale_claim(cfg, splits, fits, early, late),), frame=scale)
