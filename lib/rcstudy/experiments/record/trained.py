"""Did the trained readers learn? Their training curves, and the candidate rankers judged on the
evaluation queries against a random guess (:mod:`rcstudy.learning`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from IPython.display import Markdown

from ... import learning
from ...data.records import ClozeQuery
from ...prompts.record import cloze_items
from ...report import md_text
from .config import Config
from ..section import Section
from .table4 import Readers, Table4

#: What the full profile would spend on each row (:func:`rcstudy.plan.row_needs`), given :func:`full_profile_rows`.
FullProfile = Callable[[dict[str, dict]], dict[str, str]]


@dataclass(frozen=True, kw_only=True)
class Trained(Section):
    """The loss checks of the candidate rankers (the evidence the claims resting on them read),
    and the training curves: panel title → line-label prefix → one curve per seed."""

    checks: dict[str, learning.LossCheck]
    curves: dict[str, dict[str, list]]
    seeds: tuple[int, ...]


def loss_checks(cfg: Config, t4: Table4, r: Readers, train: Sequence[ClozeQuery]) -> dict[str, learning.LossCheck]:
    """Did the candidate classifiers learn? Each is judged on the evaluation queries: its exact
    match, seed by seed, against the exact match of a random guess among the same query's
    candidates (:func:`~.methods.random_guess`, one chance per query), seeds then queries resampled; a row
    learned only when the whole interval of the difference is above 0. The training loss is shown
    beside it against ln k (ASReader chooses among each training query's candidates, the mean ln
    of their number, :func:`rcstudy.learning.guessing_k`; the encoder ranker among
    ``ranker.train_options`` of them) and decides nothing: ASReader can fit a few hundred training
    queries and still guess on dev. The span readers choose among spans, not candidates."""
    chance = t4.results["Random Guess"]
    counts = [len(it.options) for it in cloze_items(train, fill=False) if it.label is not None]
    guessing = learning.guessing_k(counts) if counts else None
    out = {}
    for key, name, k, runs in (("ASReader", "ASReader", guessing, r.asreader),
                               ("ranker", f"The encoder ranker ({cfg.model})", cfg.ranker.train_options or guessing,
                                r.ranker)):
        if not runs or k is None:
            continue
        ids = [i for i in runs[0].result.ids if i in set(chance.ids)]
        em = np.vstack([run.result.subset(ids).em for run in runs])
        out[key] = learning.check(name, [run.losses for run in runs], k, correct=em, chance=chance.subset(ids).em,
                                  heldout="the evaluation queries (exact match)")
    return out


def full_profile_rows(cfg: Config) -> dict[str, dict]:
    """Each candidate ranker's jobs in the full profile, as :func:`rcstudy.plan.row_needs` selects
    them: a row averages its seeds, so every job of its step is its counterpart there."""
    return {"ASReader": {"step": "asreader_job", "every": True},
            f"The encoder ranker ({cfg.model})": {"step": "ranker_job", "every": True}}


def training_curves(cfg: Config, r: Readers) -> dict[str, dict[str, list]]:
    """The training-loss panels: title → line-label prefix → one curve per seed."""
    def losses(runs) -> list:
        return [run.losses for run in runs]

    return {"ASReader (from scratch)": {"": losses(r.asreader)},
            f"Encoder ranker ({cfg.model})": {"": losses(r.ranker)},
            "DocQA-lite (from scratch)": {"w/o ELMo, ": losses(r.docqa), "w/ ELMo, ": losses(r.elmo)},
            f"Span extractor ({cfg.model})": {"": losses(r.extractor)}}


def trained_section(cfg: Config, train: Sequence[ClozeQuery], t4: Table4, r: Readers,
                    full_profile: FullProfile | None = None) -> Trained:
    """The training curves, and whether each candidate ranker learned; a row that did not says
    what the full profile would spend on it where ``full_profile`` is given."""
    checks = loss_checks(cfg, t4, r, train)
    stuck = {c.name for c in checks.values() if not c.learned}
    if full_profile and stuck:
        checks = learning.with_full_profile(checks, full_profile(
            {row: sel for row, sel in full_profile_rows(cfg).items() if row in stuck}))
    shown = list(checks.values())
    return Trained(tables={"record_trained": learning.table(shown)},
                   facts={"record_loss_warnings": Markdown(md_text(learning.warnings_text(shown)))},
                   checks=checks, curves=training_curves(cfg, r), seeds=cfg.seeds)
