"""What one section of the ReClor page computes, as a value the chapter composes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import pandas as pd

from ...claims import ClaimEvidence


@dataclass(frozen=True, kw_only=True)
class Section:
    """A section's tables (by download name), the facts its prose quotes (glue name → value) and
    the evidence it found for the paper's claims it tests; a section adds its figures' data."""

    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    facts: Mapping[str, object] = field(default_factory=dict)
    claims: tuple[ClaimEvidence, ...] = ()
