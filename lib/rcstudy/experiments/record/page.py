"""The ReCoRD page: its jobs executed, then one section after another, then the claims judged on
the sections' evidence."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

import rcstudy.experiments.record.work as work  # the jobs and their steps (jobs.execute runs them)

from ...jobs import execute
from ...report import ChapterResults
from ...runtime import Runtime
from .config import PAPER, Config
from .corpus import overview_section, statistics_section
from ..section import composed
from .table4 import readers, table4_section
from .trained import FullProfile, trained_section
from .work import chapter_data, training_queries


@dataclass
class Results(ChapterResults):
    """The chapter's tables, facts and claims, and the data of its figures."""

    mode: str
    example: str  # one evaluation query as every method sees it (markdown)
    funnel: pd.Series  # the paper's Figure 2
    lengths: pd.DataFrame  # per-query distributions, train and evaluation
    table4: pd.DataFrame  # ours: EM/F1 intervals per row
    paper_table4: pd.DataFrame
    curves: dict[str, dict[str, list]]  # panel → line prefix → per-seed losses
    seeds: tuple[int, ...]


def run(cfg: Config, rt: Runtime, *, full_profile: FullProfile | None = None) -> Results:
    """Everything the chapter shows, computed from ``cfg`` (the data come from ``cfg.data_source``)
    and from what its jobs (:func:`~.work.jobs`) return.
    ``full_profile``: given the rows that did not learn (:func:`~.trained.full_profile_rows`), what
    the full profile would spend on each (the page passes :func:`rcstudy.plan.row_needs`)."""
    data = chapter_data(cfg)
    train_q = training_queries(cfg, data)
    r = readers(cfg, execute(work, cfg, rt))
    overview, statistics = overview_section(cfg, data, train_q), statistics_section(data, train_q)
    table4 = table4_section(cfg, train_q, data.eval, r)
    trained = trained_section(cfg, train_q, table4, r, full_profile)
    parts = [overview, statistics, table4, trained]
    return Results(**composed(PAPER, parts, {c.name: c for c in trained.checks.values()}),
                   mode=overview.mode, example=overview.example, funnel=statistics.funnel, lengths=statistics.lengths,
                   table4=table4.ours, paper_table4=table4.paper, curves=trained.curves, seeds=trained.seeds)
