"""The configurations of the book's pages that are not papers (front and back matter)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .bench_presets import PRESETS, STAGES, BenchSettings
from .config import ChapterConfig, param, section


@dataclass(frozen=True)
class IntroConfig(ChapterConfig):
    """The introduction computes its tables from the registries; it has no parameters."""

    chapter = "intro"


@dataclass(frozen=True)
class ScorecardConfig(ChapterConfig):
    """The scorecard gathers the claims of the published chapters; it has no parameters."""

    chapter = "scorecard"


@dataclass(frozen=True)
class TeachingConfig(ChapterConfig):
    chapter = "teaching"
    timings_profile: str = param("quick", "whose measured run times decide what runs live in class")
    session_minutes: int = param(90, "length of one class session")
    live_share: float = param(0.25, "a chapter runs live when its run takes at most this share of a session", gt=0, le=1)


@dataclass(frozen=True)
class BenchmarksConfig(ChapterConfig):
    chapter = "benchmarks"
    results_dir: str = param("benchmarks/results", "where `python -m rcstudy bench` wrote its results")
    run_preset: Literal[tuple(PRESETS)] | None = param(
        None, "a bench preset to run from the page first (none: only read results)")
    run_settings: BenchSettings = section(BenchSettings, "overrides of that preset's sizes, e.g. {train_steps: 1}")
    run_stages: tuple[Literal[STAGES], ...] = param((), "the stages of that run (empty: the preset's)")


CONFIGS: dict[str, type[ChapterConfig]] = {
    c.chapter: c for c in (IntroConfig, ScorecardConfig, TeachingConfig, BenchmarksConfig)}
