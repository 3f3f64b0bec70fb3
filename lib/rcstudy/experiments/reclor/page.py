"""The ReClor page: its jobs executed, then one section after another, then the claims judged on
the sections' evidence."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

import rcstudy.experiments.reclor.work as work  # the jobs and their steps (jobs.execute runs them)

from ...jobs import execute
from ...models.loading import load_tokenizer
from ...report import ChapterResults
from ...runtime import Runtime
from .biases import option_length, token_bias
from .config import P, Config
from .dataset import data_section, setting_section, tokenizer_functions
from .easy_hard import cross_fitted_section, option_only_section
from ..section import composed
from .table7 import FullProfile, leaderboard_section, main_results, table7_section
from .work import chapter_runs, job_runner


@dataclass
class Results(ChapterResults):
    """The chapter's tables, facts and claims, and the data of its figures."""

    chance: float  # accuracy (%) of a random guess
    option_lengths: pd.DataFrame  # WordPiece length of every training option, and whether it is right
    overlap: pd.DataFrame  # our Table 27 on val (paper names)
    runs_right: np.ndarray  # per val item: how many option-only (model, seed) runs got it right
    easy_hard_bars: pd.DataFrame  # long: Table 7 row, subset (EASY/HARD), accuracy (mean over seeds)
    by_type: pd.DataFrame  # long: (C, Q, A) model, subset, question type, n, accuracy (Figure 4)
    losses: dict[str, list[np.ndarray]]  # Table 7 row → one loss curve per seed


def run(cfg: Config, rt: Runtime, *, full_profile: FullProfile | None = None) -> Results:
    """Everything the chapter shows, computed from ``cfg`` (the data come from ``$RCSTUDY_DATA``)
    and from what its jobs (:func:`~.work.jobs`) return. ``full_profile``: given the trained
    rows that did not learn (:func:`~.table7.full_profile_rows`), what the full profile would
    spend on each (the page passes :func:`rcstudy.plan.row_needs`)."""
    runner = job_runner(cfg, rt)
    splits, val = runner.splits, runner.splits["val"]
    runs = chapter_runs(cfg, execute(work, cfg, rt))
    tok_fns = tokenizer_functions(load_tokenizer(cfg.tokens.tokenizer))
    lengths, option_only = option_length(splits, tok_fns), option_only_section(cfg, runner, runs, val)
    m = main_results(cfg, runs, val, option_only.eh, full_profile)
    table7 = table7_section(cfg, runner, m, val, option_only.eh)
    parts = [setting_section(cfg, val), data_section(cfg, splits, tok_fns),
             token_bias(splits["train"], tok_fns["WordPiece"], cfg.tokens), lengths, option_only,
             cross_fitted_section(cfg, splits, runs, option_only.eh), table7,
             leaderboard_section(cfg, m, splits["test"])]
    return Results(**composed(P, parts, table7.checks),
                   chance=100 / len(val[0].options),
                   option_lengths=lengths.lengths, overlap=option_only.overlap, runs_right=option_only.eh.runs_right,
                   easy_hard_bars=table7.bars, by_type=table7.by_type, losses=table7.losses)
