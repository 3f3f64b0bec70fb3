"""Did the trained readers learn? Their training curves, and each reader judged on the evaluation
queries against a random guess (:mod:`rcstudy.learning`): the candidate rankers by their exact
match and their held-out loss, the span readers by their exact match decoded among the candidates."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np
from IPython.display import Markdown

from ... import learning
from ...data.records import ClozeQuery
from ...prompts.record import cloze_items
from ...report import md_text
from .config import Config
from ..section import Section
from .methods import MethodResult, SeedRun, SpanRun
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


#: The held-out loss column of a span reader: it keeps no score for each candidate.
SPAN_NO_LOSS = "n/a: it scores spans, and keeps no score for each candidate"


def scored_by_both(ids: Sequence[str], chance: MethodResult) -> list[str]:
    """The queries of ``ids`` that the random guess scored too, in their order."""
    guessed = set(chance.ids)
    return [i for i in ids if i in guessed]


def ranker_check(name: str, k: float, runs: Sequence[SeedRun], chance: MethodResult, mode: str) -> learning.LossCheck:
    """A candidate ranker on the evaluation queries: its exact match, seed by seed, and its
    held-out loss, each against the same random guess among the query's candidates
    (:func:`~.methods.random_guess` drawing ``mode``). ReCoRD's gold answer can be several
    candidate strings (an entity named two ways): a query's loss is −ln of the summed probability
    of its gold candidates, and the guess's is −ln of the share of the draw they take (ln(k / g)
    for g gold of k candidates drawn evenly); a query with no gold candidate has no loss. The
    guess is the one accuracy is judged against, a mention by default, not an even pick among
    candidate strings: ASReader sums its attention over each candidate's mentions, so an untrained
    reader attending evenly already gives the mention draw's probabilities."""
    ids = scored_by_both(runs[0].result.ids, chance)
    em = np.vstack([run.result.subset(ids).em for run in runs])
    logits = np.stack([run.candidates.subset(ids)[0] for run in runs])
    gold = runs[0].candidates.subset(ids)[1]
    return learning.check(name, [run.losses for run in runs], k, correct=em, chance=chance.subset(ids).em,
                          scores=logits, labels=gold,
                          guessing=runs[0].candidates.guessing(ids, mode),
                          heldout="the evaluation queries (exact match)")


def span_check(name: str, k: float, runs: Sequence[SpanRun], chance: MethodResult) -> learning.LossCheck:
    """A span reader on its evaluation queries: its exact match decoded among the candidate
    mentions, seed by seed, against a random guess among them. Its training loss (at the gold
    span's start and end tokens) has no ln k to compare with, and it keeps no score per candidate,
    so it has no held-out loss (:data:`SPAN_NO_LOSS`)."""
    ids = scored_by_both(runs[0].candidates.ids, chance)
    em = np.vstack([run.candidates.subset(ids).em for run in runs])
    check = learning.check(name, None, k, correct=em, chance=chance.subset(ids).em,
                           heldout="the evaluation queries (exact match among the candidates)")
    return replace(check, no_loss=SPAN_NO_LOSS)


def reader_names(cfg: Config) -> dict[str, str]:
    """Each trained reader's row in the table of trained rows, by its field of :class:`~.table4.Readers`."""
    return {"asreader": "ASReader", "ranker": f"The encoder ranker ({cfg.model})", "docqa": "DocQA-lite w/o ELMo",
            "elmo": "DocQA-lite w/ ELMo", "extractor": f"The span extractor ({cfg.model})"}


def loss_checks(cfg: Config, t4: Table4, r: Readers, train: Sequence[ClozeQuery]) -> dict[str, learning.LossCheck]:
    """Did each trained reader learn? Each is judged on the evaluation queries against a random
    guess (:func:`~.methods.random_guess`, one chance per query), seeds then queries resampled; a
    row learned only when the whole interval of the difference is above 0, or, for a candidate
    ranker, when its held-out loss is below guessing's (:func:`ranker_check`). The rankers'
    training loss is shown beside it against ln k (ASReader chooses among each training query's
    candidates, the mean ln of their number, :func:`rcstudy.learning.guessing_k`; the encoder
    ranker among ``ranker.train_options`` of them) and decides nothing: ASReader can fit a few
    hundred training queries and still guess on dev. The span readers choose among spans, not
    candidates (:func:`span_check`)."""
    chance = t4.results["Random Guess"]
    counts = [len(it.options) for it in cloze_items(train, fill=False) if it.label is not None]
    guessing = learning.guessing_k(counts) if counts else None
    names, out = reader_names(cfg), {}
    for key, k in (("asreader", guessing), ("ranker", cfg.ranker.train_options or guessing)):
        if getattr(r, key) and k is not None:
            out[names[key]] = ranker_check(names[key], k, getattr(r, key), chance, cfg.random_mode)
    for key in ("docqa", "elmo", "extractor"):  # k only names the table's ln k column: they have no loss to judge
        if getattr(r, key) and guessing is not None:
            out[names[key]] = span_check(names[key], guessing, getattr(r, key), chance)
    return out


def full_profile_rows(cfg: Config) -> dict[str, dict]:
    """Each trained reader's jobs in the full profile, as :func:`rcstudy.plan.row_needs` selects
    them: a row averages its seeds, so every job of its step (DocQA-lite: with or without the
    ELMo-style features) is its counterpart there."""
    names = reader_names(cfg)
    return {names["asreader"]: {"step": "asreader_job", "every": True},
            names["ranker"]: {"step": "ranker_job", "every": True},
            names["docqa"]: {"step": "docqa_job", "arguments": {"elmo": False}},
            names["elmo"]: {"step": "docqa_job", "arguments": {"elmo": True}},
            names["extractor"]: {"step": "extractor_job", "every": True}}


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
