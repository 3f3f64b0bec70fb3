"""What the RULE page shows."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ...data.rule import RuleData
from ...report import ChapterResults


@dataclass
class Results(ChapterResults):
    """What the RULE page shows: tables and facts, and the data behind its figures."""

    data: RuleData = None
    captions: dict[str, str] = field(default_factory=dict)  # captions that name a system
    lm_unavailable: list[str] = field(default_factory=list)
    systems_rows: dict[str, dict] = field(default_factory=dict)  # every system we ran: its metrics
    by_split: pd.DataFrame | None = None  # subquestions per split and type
    per_main_counts: pd.Series | None = None  # main questions by number of subquestions
    bars: pd.DataFrame | None = None  # Selective and Eliminative accuracy per system
    points: pd.DataFrame | None = None  # MainQ, SubQ and Consistency per system
    human: dict[str, float] = field(default_factory=dict)  # the paper's human scores (Table 2)
    length_curves: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict)
    hard_table: pd.DataFrame | None = None
    chance_sub: float = 25.0
    length_bins: int = 4
    losses: dict[str, list] = field(default_factory=dict)  # the fine-tuned encoder → one loss curve per seed
