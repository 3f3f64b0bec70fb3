"""What one section of a chapter's page computes, as a value the chapter composes, and the claims
judged on what the sections found.

A section is a function from the chapter's config and its inputs (data, the jobs' outputs) to a
:class:`Section` (or a subclass adding its figures' data). ``run()`` composes the sections of its
page; :func:`judge_claims` judges each claim the paper's module declares on the evidence one
section found for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import pandas as pd

from .. import papers
from ..claims import ClaimEvidence
from ..learning import LossCheck
from ..report import ClaimLog


@dataclass(frozen=True, kw_only=True)
class Section:
    """A section's tables (by download name) with the captions that name a system or a sample
    size, the facts its prose quotes (glue name → value) and the evidence it found for the paper's
    claims it tests."""

    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    captions: Mapping[str, str] = field(default_factory=dict)
    facts: Mapping[str, object] = field(default_factory=dict)
    claims: tuple[ClaimEvidence, ...] = ()


def judge_claims(paper: str, sections: Sequence[Section], checks: Mapping[str, LossCheck] | None = None
                 ) -> ClaimLog:
    """Each claim and check that ``rcstudy.papers.<paper>`` declares (``CLAIMS``, then ``CHECKS``,
    in their order), judged on the evidence a section found for it; ``checks``: whether each
    trained row learned, by its name, for the claims resting on it. A declared claim that no
    section found evidence for is a KeyError naming it."""
    checks = checks or {}
    log = ClaimLog(paper)
    found = {c.id: c for section in sections for c in section.claims}
    for spec in [*papers.claims(paper), *papers.checks(paper)]:
        if spec.id not in found:
            raise KeyError(f"no section of the {paper} chapter found evidence for its claim {spec.id!r}")
        c = found[spec.id]
        log.judge(c.id, c.evidence, c.text, rests_on=[checks[n] for n in c.rests_on if n in checks])
    return log


def composed(paper: str, parts: Sequence[Section], checks: Mapping[str, LossCheck] | None = None) -> dict:
    """What every chapter's results hold of its sections, in page order: their tables and facts
    merged (keyword arguments of :class:`rcstudy.report.ChapterResults`) and the claims judged."""
    return {"tables": {k: v for p in parts for k, v in p.tables.items()},
            "facts": {k: v for p in parts for k, v in p.facts.items()},
            "claims": judge_claims(paper, parts, checks)}
