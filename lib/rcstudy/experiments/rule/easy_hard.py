"""Our extension: the RULE main questions by ReClor's EASY/HARD split."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from ... import exports
from ...data.rule import RuleData
from ...settings import exports_dir
from ...stats import difference_interval
from ..section import Section
from .units import Prompted, System, Trained, per_main, pooled, seed_label


def easy_hard_table(systems: Mapping[str, System], labels: pd.Series) -> pd.DataFrame:
    """Per system and ReClor subset of the main question: MainQ, MainQ-wise SubQ and Consistency,
    with the HARD − EASY difference of MainQ-wise SubQ and its bootstrap interval."""
    rows = []
    for name, system in systems.items():
        ev = system.evals[0] if len(system.evals) == 1 else pooled(system.data, system.evals)
        f = per_main(system.data, ev).join(labels.rename("subset"), how="inner").dropna(subset=["sub_acc"])
        easy, hard = f[f["subset"] == "EASY"], f[f["subset"] == "HARD"]
        row = {"system": name, "EASY mains": len(easy), "HARD mains": len(hard)}
        for part, g in (("EASY", easy), ("HARD", hard)):
            row[f"MainQ {part}"] = 100 * g["main_right"].mean() if len(g) else np.nan
            row[f"MainQ-wise SubQ {part}"] = 100 * g["sub_acc"].mean() if len(g) else np.nan
            row[f"Consistency {part}"] = 100 * g["consistent"].mean() if len(g) else np.nan
        row["SubQ: HARD − EASY"] = difference_interval(hard["sub_acc"], easy["sub_acc"])
        rows.append(row)
    return pd.DataFrame(rows).set_index("system")


@dataclass(frozen=True, kw_only=True)
class EasyHard(Section):
    """Our extension: each system's scores on RULE main questions by ReClor subset (None: not testable here)."""

    table: pd.DataFrame | None


def labelled_table(data: RuleData, trained: Trained, prompted: Prompted) -> tuple[pd.DataFrame | None, str]:
    """The EASY/HARD table of the encoder (each seed) and the prompted settings, by the ReClor
    chapter's export, and the text saying how many main questions it labels (or why there is none)."""
    labels = exports.read_easy_hard()
    if labels is None:
        return None, (f"The ReClor chapter's export {exports.EASY_HARD} is not in {exports_dir()}: "
                      "run the ReClor chapter first. This analysis is not testable here.")
    covered = labels.reindex([m.id for m in data.mains]).dropna()
    systems = {**{seed_label(trained.encoder_name, r): r for r in trained.encoder_runs}, **prompted.systems}
    if not (len(covered) and systems):
        return None, ("None of the RULE main questions has an EASY/HARD label in the export "
                      f"({len(labels)} labelled ReClor questions), so this analysis is not testable here.")
    return easy_hard_table(systems, labels), (f"{len(covered)} of the {len(data.mains)} RULE main questions have a "
                                              f"label: {int((covered == 'HARD').sum())} HARD and "
                                              f"{int((covered == 'EASY').sum())} EASY.")


def easy_hard_section(data: RuleData, trained: Trained, prompted: Prompted) -> EasyHard:
    """Our extension: the RULE main questions by ReClor's EASY/HARD split (the ReClor chapter's export)."""
    hard, text = labelled_table(data, trained, prompted)
    tables = {} if hard is None else {"rule_easy_hard": hard.round(1)}
    if hard is None or not len(hard):
        return EasyHard(tables=tables, facts={"rule_hard_text": text, "rule_hard_diffs": "n/a",
                                              "rule_hard_verdict": "no system could be compared"}, table=hard)
    diffs = hard["SubQ: HARD − EASY"]
    n_clear = sum(d.high < 0 or d.low > 0 for d in diffs)
    enc = hard.loc[[n for n in hard.index if n.startswith(trained.encoder_name)]]
    verdict = (f"{n_clear} of {len(diffs)} systems show a difference whose 95% interval excludes zero"
               + (f". The split itself is visible in the encoder's main answers: {enc['MainQ EASY'].mean():.1f} % "
                  f"right on EASY and {enc['MainQ HARD'].mean():.1f} % on HARD main questions (mean over seeds)"
                  if len(enc) else ""))
    return EasyHard(tables=tables, table=hard,
                    facts={"rule_hard_text": text, "rule_hard_diffs": "; ".join(f"{n}: {d}" for n, d in diffs.items()),
                           "rule_hard_verdict": verdict})
