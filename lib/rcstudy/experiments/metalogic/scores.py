"""Scores of predicted metagraphs as the page's tables show them: one row per system, each score
the mean ± sd over the system's runs (seeds)."""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from ...data import metalogic as ml
from ...data.metalogic import Metagraph, Prediction
from ...metrics import metalogic as mm
from ...stats import mean_sd

COLUMN_NAMES = {"node_f1": "Node F1", "node_all": "Node All", "step_f1": "Step F1", "step_all": "Step All",
                "formula_f1": "Formula F1", "formula_all": "Formula All", "cert_acc": "Cert. Acc",
                "cert_all": "Cert. All", "cert_macro_f1": "Cert. F1*", "overall_all": "Overall All",
                "support_f1": "Support F1", "support_all": "Support All", "rebut_f1": "Rebut F1",
                "rebut_all": "Rebut All"}
OPERATOR_NAMES = {ml.IMP: "→", ml.AND: "∧", ml.OR: "∨", ml.BOX: "□", ml.DIA: "◇", ml.NEG: "¬", "none": "N/A"}
T3 = [COLUMN_NAMES[c] for c in mm.MAIN_COLUMNS]
T14_STEPS = [COLUMN_NAMES[c] for c in mm.STEP_TYPE_COLUMNS]
OPS = list(OPERATOR_NAMES.values())
SCALE_PANELS = ["Node F1", "Step F1", "Formula F1", "Cert. Acc", "Cert. F1*", "Overall All"]
OURS_NAMES = {"features": "Features (logistic regression)", "rules": "Rules (Tables 13, 20–22)",
              "trivial": "Trivial structure", "empty": "Empty"}

Runs = Sequence[Mapping[str, Prediction]]  # one system's predictions, one mapping (passage id → prediction) per run


def score_frame(systems: Mapping[str, Runs], graphs: Sequence[Metagraph], columns=mm.MAIN_COLUMNS,
                variant: str = "official") -> pd.DataFrame:
    """One row per system: mean ± sd over its runs (seeds) of each score, as MeanSD cells."""
    rows = {}
    for name, runs in systems.items():
        scores = [mm.evaluate(graphs, preds, variant) for preds in runs]
        rows[name] = {COLUMN_NAMES[c]: mean_sd([s[c] for s in scores]) for c in columns}
    return pd.DataFrame.from_dict(rows, orient="index")


def means(frame: pd.DataFrame) -> pd.DataFrame:
    """A MeanSD frame as plain floats (the means)."""
    return frame.map(lambda v: getattr(v, "mean", v)).astype(float)


def operator_frame(systems: Mapping[str, Runs], graphs: Sequence[Metagraph]) -> tuple[pd.DataFrame, dict[str, int]]:
    """Mean per-operator formula F1 of each system (mean over runs) and the group sizes."""
    rows, sizes = {}, {}
    for name, runs in systems.items():
        per = [mm.per_operator(graphs, preds) for preds in runs]
        rows[name] = {OPERATOR_NAMES[op]: mean_sd([p[op][0] for p in per]) for op in mm.OPERATOR_GROUPS}
        sizes = {OPERATOR_NAMES[op]: per[0][op][1] for op in mm.OPERATOR_GROUPS}
    return pd.DataFrame.from_dict(rows, orient="index"), sizes


def confusion(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction]) -> pd.DataFrame:
    """Gold degree (rows) × predicted degree (columns, "unresolved" included)."""
    labels = list(ml.DEGREE_WORDS)
    cols = labels + ["unresolved"]
    m = pd.DataFrame(0, index=pd.Index(labels, name="gold"), columns=pd.Index(cols, name="predicted"))
    for g in graphs:
        p = preds.get(g.id, Prediction())
        for sid, node in g.nodes.items():
            d = p.degrees.get(sid, ml.UNRESOLVED)
            m.loc[labels[node.degree], cols[d] if d in range(5) else "unresolved"] += 1
    return m
