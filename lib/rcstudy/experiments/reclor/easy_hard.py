"""EASY and HARD (Eq. 1): the option-only runs on val (Tables 6 and 27), and on train by k-fold
cross-fitting, both labellings exported. The test labels are hidden, so EASY/HARD is computed on
**val** (option-only models trained on all of train) and, as an extension, on **train**."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ... import bias, exports, papers, report
from ...claims import ClaimEvidence
from ...data.records import MCItem
from ...report import md_code, md_text
from ...stats import hierarchical_ci, mean_sd
from .config import P, SCRATCH, Config, paper_name
from .dataset import side_by_side
from .runs import Runner
from ..section import Section
from .work import Runs


def correctness(scores: np.ndarray, items: Sequence[MCItem]) -> np.ndarray:
    """(seeds, items, options) scores → (seeds, items) booleans."""
    return np.stack([bias.correct(s, items) for s in scores])


def easy_hard(runs: Mapping[str, np.ndarray], items: Sequence[MCItem]) -> bias.EasyHard:
    """Eq. 1 from each family's per-seed scores on ``items``."""
    return bias.EasyHard.from_runs([it.id for it in items], {m: correctness(r, items) for m, r in runs.items()})


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


@dataclass(frozen=True, kw_only=True)
class OptionOnly(Section):
    """Eq. 1 on val: the split, and the figure's data (Table 27 and how many runs got each item right)."""

    eh: bias.EasyHard
    overlap: pd.DataFrame  # our Table 27 on val (paper names)


def options_only_claim(runs: Mapping[str, np.ndarray], val: Sequence[MCItem], chance: float) -> ClaimEvidence:
    """A pretrained option-only model beats chance (its margin over chance, seeds then questions resampled)."""
    accuracy = {f: seed_accuracies(correctness(r, val)).mean() for f, r in runs.items()}
    # intervals resample seeds, then questions (rcstudy.stats.hierarchical_ci): a seed is a run, not more items
    pretrained = {f: hierarchical_ci(correctness(r, val) - chance / 100) for f, r in runs.items() if f not in SCRATCH}
    return ClaimEvidence("options-only", {"margins": pretrained} if pretrained else None,
                         "; ".join(f"{paper_name(f)} {a:.1f}%" for f, a in accuracy.items())
                         + ("" if pretrained else " (no pretrained option-only model in bias_models)"))


def option_only_section(cfg: Config, runner: Runner, runs: Runs, val: Sequence[MCItem]) -> OptionOnly:
    """Eq. 1 on val: the option-only runs, the split, Tables 6 and 27 and the facts."""
    eh = easy_hard(runs.option_only, val)
    trained = {f: cfg.describe_run(f, "A", len(runner.train_items(f, "A", option_only=True)), option_only=True)
               for f in cfg.bias_models}
    overlap = eh.overlap()
    overlap.index = overlap.columns = [paper_name(m) for m in overlap.columns]
    tables = {"reclor_table6": side_by_side(papers.table(P, "Table 6"), table6(eh, runs.option_only, val)),
              "reclor_table27": overlap}
    facts = {"reclor_bias_trained": Markdown("; ".join(f"**{md_text(f)}**: {md_text(d)}" for f, d in trained.items())),
             "reclor_n_easy": int(eh.easy.sum()), "reclor_n_hard": int(eh.hard.sum()),
             "reclor_easy_pct": 100 * eh.easy.mean()}
    claim = options_only_claim(runs.option_only, val, 100 / len(val[0].options))
    return OptionOnly(tables=tables, facts=facts, claims=(claim,), eh=eh, overlap=overlap)


def cross_fitted_section(cfg: Config, splits: Mapping[str, Sequence[MCItem]], runs: Runs,
                         eh_val: bias.EasyHard) -> Section:
    """Eq. 1 on train by cross-fitting; both labellings exported; the val-vs-train table."""
    train, val = splits["train"], splits["val"]
    eh_train = easy_hard(runs.cross_fitted, train)
    path = exports.write_easy_hard({"val": eh_val, "train": eh_train})

    def column(items, family_runs, eh):
        return {**{paper_name(m): summary(seed_accuracies(correctness(r, items))) for m, r in family_runs.items()},
                "EASY items": int(eh.easy.sum()), "EASY %": 100 * eh.easy.mean()}

    table = pd.DataFrame({"val (trained on train)": column(val, runs.option_only, eh_val),
                          "train (cross-fitted)": column(train, runs.cross_fitted, eh_train)})
    folds = cfg.crossfit.folds
    facts = {"reclor_folds": folds, "reclor_fold_share": 100 * (folds - 1) / folds,
             "reclor_export_name": Markdown(md_code(path.name)),
             "reclor_export_rows": len(eh_val.ids) + len(eh_train.ids)}
    return Section(tables={"reclor_easy_hard_sizes": table.map(report.cell)}, facts=facts)
