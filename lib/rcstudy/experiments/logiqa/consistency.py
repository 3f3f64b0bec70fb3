"""The paper's numbers, checked against each other."""

from __future__ import annotations

import pandas as pd

from ... import papers
from .config import P
from .data import LogiQAData
from ..section import Section


def consistency_section(data: LogiQAData) -> Section:
    """Table 5 and Table 7 weighted back to Table 3, the test set's size by each account, and the ceiling."""
    t5 = papers.table(P, "Table 5")
    weighted = float((t5.loc["#Instances"] * t5.loc["RoBERTa"]).sum() / t5.loc["#Instances"].sum())
    shares = papers.table(P, "Figure 2")["% of test"]
    t7w = float((shares.values * papers.table(P, "Table 7")["RoBERTa"].values).sum() / shares.sum())
    roberta = papers.value(P, "Table 3", "RoBERTa", "LogiQA Test")
    test_n = papers.value(P, "§3.2", "test set", "paragraph-question pairs")
    checks = pd.DataFrame([
        {"check": "Table 5 bin accuracies weighted by bin counts", "value": weighted, "compare with": roberta},
        {"check": "Table 5 instance count", "value": float(t5.loc["#Instances"].sum()), "compare with": test_n},
        {"check": "Table 7 accuracies weighted by the Figure 2 shares", "value": t7w, "compare with": roberta},
        {"check": "Ceiling in the introduction", "value": papers.value(P, "§1", "Ceiling Performance", "LogiQA Test"),
         "compare with": papers.value(P, "Table 3", "Ceiling Performance", "LogiQA Test")},
        {"check": "Released test questions", "value": float(len(data.splits["en-test"])), "compare with": test_n},
    ]).set_index("check")
    return Section(tables={"logiqa_consistency": checks.round(2)}, facts={
        "logiqa_t5_weighted": weighted,
        "logiqa_t7_weighted": t7w,
        "logiqa_t5_first_count": float(t5.loc["#Instances"].iloc[0] * t5.loc["RoBERTa"].iloc[0] / 100),
    })
