"""Support against rebut, and operator by operator (Table 14, Figures 3 and 4)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ... import papers
from ...claims import ClaimEvidence
from ...metrics import metalogic as mm
from ...report import paper_vs_ours
from ...stats import hierarchical_paired
from .config import PAPER
from .generation import Generated, Table3
from .predictors import Baselines
from .scores import OPS, OURS_NAMES, T14_STEPS, means, operator_frame, score_frame
from ..section import Section


@dataclass(frozen=True, kw_only=True)
class StepTypes(Section):
    """Table 14 beside the paper's, and the two figures' frames (the paper's rows and ours)."""

    step_plot: pd.DataFrame  # Figure 3
    operator_plot: pd.DataFrame  # Figure 4


def rebut_claim(t3: Table3) -> ClaimEvidence:
    """Rebut steps against support steps of the discussed system, and against the empty prediction."""
    main = t3.main_label
    scores = t3.scores[main]
    reb_sup = hierarchical_paired(scores.column("Rebut All"), scores.column("Support All"), scale=1.0)
    reb_empty = scores.paired(t3.refs["empty"], "Rebut All")
    return ClaimEvidence("rebut-easier", {"rebut_minus_support": reb_sup, "rebut_over_empty": reb_empty},
                         f"{main}: Rebut All − Support All {reb_sup}; Rebut All − the empty prediction's {reb_empty}")


def step_types_section(splits, g: Generated, t3: Table3, baselines: Baselines) -> StepTypes:
    """Table 14 (step types, per-operator formula F1) of every system on its test passages, the
    group sizes, the figures' frames, the facts and the rebut claim."""
    test, base = splits["test"], baselines.predictions
    systems = {**{g.names[m]: (g.test, g.preds[m]) for m in g.names},
               **{k: (graphs, [p]) for k, (graphs, p) in t3.fewshot.items()},
               OURS_NAMES["features"]: (test, [base["features"]]), OURS_NAMES["trivial"]: (test, [base["trivial"]])}
    step_rows, op_rows = [], []
    for name, (graphs, runs) in systems.items():
        step_rows.append(score_frame({name: runs}, graphs, mm.STEP_TYPE_COLUMNS))
        frame, sizes = operator_frame({name: runs}, graphs)
        op_rows.append(frame)
        if graphs is test:
            test_sizes = sizes
    ours = pd.concat([pd.concat(step_rows), pd.concat(op_rows)], axis=1)
    paper = papers.table(PAPER, "Table 14")
    t14 = means(ours)
    step_plot = pd.concat([paper[T14_STEPS].rename(index=lambda r: f"paper: {r}"), t14[T14_STEPS]])
    op_plot = pd.concat([paper[OPS].loc[["Once (large)", "MetGen (11b)"]].rename(index=lambda r: f"paper: {r}"),
                         t14[OPS]])
    facts = dict(metalogic_main_support_f1=float(t14.loc[t3.main_label, "Support F1"]),
                 metalogic_main_rebut_f1=float(t14.loc[t3.main_label, "Rebut F1"]),
                 metalogic_empty_rebut_f1=baselines.means.loc["empty", "Rebut F1"])
    return StepTypes(tables={"metalogic_table14": paper_vs_ours(paper, ours),
                             "metalogic_operator_sizes": pd.DataFrame({"nodes in the test split": test_sizes}).T},
                     facts=facts, claims=(rebut_claim(t3),), step_plot=step_plot, operator_plot=op_plot)
