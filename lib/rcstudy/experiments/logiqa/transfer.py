"""Transfer (Table 4): the encoder trained on ReClor, then on LogiQA, beside LogiQA alone."""

from __future__ import annotations

import pandas as pd

from ... import papers
from ...claims import ClaimEvidence
from ...report import paper_vs_ours
from .config import P
from .data import LogiQAData
from .predictions import SPLIT_COLUMNS, paired_gap, score
from ..section import Section
from .systems import Systems

SOURCE_NOTE = " (source: ReClor, not RACE/COSMOS)"


def transfer_text(s: Systems, data: LogiQAData) -> str:
    """What the transfer rows scored on the Test sample, or why there are none."""
    if not s.transfer:
        return (f"ReClor is not in the data folder ({s.transfer_missing}), so the transfer runs are "
                f"skipped; the table shows the paper's numbers only.")
    t4 = [score(x, data, "en-test") for x in s.transfer]
    then = (f" and ReClor → LogiQA {t4[2].seeds.mean:.1f}%" if len(t4) > 2 else
            "; ReClor → LogiQA is not trained in this run (`-p transfer.then_logiqa=true` adds it: one more "
            "fine-tuning on all of LogiQA's training set)")
    return (f"On the same {t4[0].n} Test questions, the model trained on LogiQA only scores "
            f"{t4[0].seeds.mean:.1f}% and the ReClor-only model {t4[1].seeds.mean:.1f}%{then}.")


def transfer_claims(s: Systems, data: LogiQAData) -> tuple[ClaimEvidence, ...]:
    """The source alone scores below LogiQA alone; source → LogiQA gains nothing over LogiQA alone."""
    if not s.transfer:
        return tuple(ClaimEvidence(id, None, "no ReClor data here; RACE and COSMOS are not available")
                     for id in ("source-only-lower", "transfer-no-gain"))
    only, source_only = s.transfer[:2]
    ci, text = paired_gap(only, source_only, data, "LogiQA only", "ReClor only")
    lower = ClaimEvidence("source-only-lower", {"diff": ci}, text + SOURCE_NOTE,
                          rests_on=(s.main.name, source_only.name))
    if len(s.transfer) < 3:
        return lower, ClaimEvidence("transfer-no-gain", None,
                                    "ReClor → LogiQA is not trained in this run (transfer.then_logiqa)")
    ci, text = paired_gap(s.transfer[2], only, data, "ReClor → LogiQA", "LogiQA only")
    return lower, ClaimEvidence("transfer-no-gain", {"diff": ci}, text + SOURCE_NOTE,
                                rests_on=(s.main.name, s.transfer[2].name))


def transfer_section(s: Systems, data: LogiQAData) -> Section:
    """Table 4 beside the paper's, the facts and the claims."""
    ours = pd.DataFrame({SPLIT_COLUMNS[k].split()[-1]: {x.name: sc.seeds for x in s.transfer
                                                        if (sc := score(x, data, k)) is not None}
                         for k in ("en-eval", "en-test")})
    ours.loc["Random (theoretical)"] = 25.0
    return Section(tables={"logiqa_table4": paper_vs_ours(papers.table(P, "Table 4"), ours)},
                   facts={"logiqa_source_n": s.source_n, "logiqa_transfer_text": transfer_text(s, data)},
                   claims=transfer_claims(s, data))
