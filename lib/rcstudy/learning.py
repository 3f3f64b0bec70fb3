"""Did a model learn? Its score on held-out items against chance, with an interval.

A falling training loss is not learning: a model can memorise a small training set (ReCoRD's
ASReader goes from 2.7 to 0.4 on 182 queries and scores below random on dev). A row counts as
*learned* only when what it does on items it was not trained on beats chance as a whole interval:
its held-out accuracy's bootstrap interval (seeds, then items; :func:`rcstudy.stats.hierarchical_ci`)
minus chance lies wholly above zero, or its held-out loss's interval lies wholly below ln k, the
loss of guessing among k options. A prompted language model is gated the same way, on the task its
claims rest on (:func:`prompted`). A row that did not learn gets a warning beside its table
(:func:`warnings_text`), and every claim resting on it is "model at chance"
(:meth:`rcstudy.report.ClaimLog.judge`, ``rests_on``), with what the full profile would spend on
that row (``full_profile``).

The training loss is still shown (first and last tenth of the steps, :data:`FINAL_SHARE`): beside
a held-out score at chance, a falling one says the row memorised. With a number of options that
varies from question to question, the loss of guessing is the mean of ln k, which is ln of their
geometric mean (:func:`guessing_k`).

Where a held-out item has several right options (a ReCoRD query whose gold entity appears as more
than one candidate string), its loss is the cross-entropy at their summed probability, −ln Σ p_gold:
naming any of them is right, so a model is not charged for how it splits its belief among them.
Guessing uniformly among that item's k options then costs ln(k / g) for g gold ones
(:func:`guessing_losses`; a chapter whose chance is another draw gives its own, ``guessing``), and
the held-out loss is judged against it item by item, paired as accuracy is against chance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd

from .stats import Interval, hierarchical_ci

#: How close to ln k (as a share of it) a final training loss must come to count as not falling.
CHANCE_MARGIN = 0.02
#: The share of the last optimiser steps whose mean loss is the final loss.
FINAL_SHARE = 0.1
#: The fewest independent held-out items (or clusters of them) on which a score can show learning.
#: With fewer, even every item beating chance is not significant by the exact sign test at the
#: intervals' one-sided 2.5 % (½ⁿ ≥ 0.025 for n ≤ 5), and a percentile bootstrap of so few values
#: cannot reach back to chance: four items all on one side give an interval that excludes it.
MIN_ITEMS = math.ceil(-math.log2(0.025))


def _tenth(steps: int) -> int:
    """How many steps make the first or the last :data:`FINAL_SHARE` of a curve (at least one)."""
    return max(1, int(round(FINAL_SHARE * steps)))


def final_loss(losses: Sequence[float]) -> float:
    """The mean training loss over the last tenth of the steps (at least one step)."""
    losses = np.asarray(losses, dtype=float)
    if losses.size == 0:
        raise ValueError("no training losses to judge")
    return float(losses[-_tenth(losses.size):].mean())


def guessing_k(option_counts: Sequence[int]) -> float:
    """The k whose ln is the mean loss of guessing over questions with these numbers of options:
    their geometric mean (the number itself when every question has the same)."""
    counts = np.asarray(option_counts, dtype=float)
    if counts.size == 0 or (counts < 1).any():
        raise ValueError("guessing needs at least one question, each with at least one option")
    return float(np.exp(np.log(counts).mean()))


@dataclass(frozen=True)
class LossCheck:
    """One trained row (or prompted model): its training loss, and its held-out loss and accuracy
    against chance. ``learned`` reads only the held-out side."""

    name: str
    k: float  # options per question (a geometric mean where it varies: :func:`guessing_k`)
    first: float | None = None  # training loss, first tenth of the steps (None: not trained here)
    final: float | None = None  # training loss, last tenth (mean over seeds)
    accuracy: Interval | None = None  # held-out accuracy (%), 95% bootstrap interval
    margin: Interval | None = None  # held-out accuracy minus chance (points), 95% bootstrap interval
    heldout_loss: Interval | None = None  # held-out cross-entropy (nats), 95% bootstrap interval
    chance: float | None = None  # chance accuracy (%): 100/k, or the mean of each item's 1/k
    heldout: str = "held-out items"  # which items, in words ("ReClor val", "LogiQA Test")
    full_profile: str = ""  # what the full profile would spend on this row (the plan's GPU hours)
    loss_margin: Interval | None = None  # held-out loss minus each item's loss of guessing (nats), 95% interval
    guessing_loss: float | None = None  # the held-out items' mean loss of guessing (None: ln k)
    no_loss: str = "n/a"  # the held-out loss column of a row without one: why

    @property
    def k_text(self) -> str:
        return f"{self.k:g}" if float(self.k).is_integer() else f"{self.k:.2f}"

    @property
    def chance_loss(self) -> float:
        return math.log(self.k)

    @property
    def heldout_chance_loss(self) -> float:
        """The loss of guessing on the held-out items: ln k, unless their options or gold ones vary."""
        return self.chance_loss if self.guessing_loss is None else self.guessing_loss

    @property
    def guessing_is_ln_k(self) -> bool:
        """Whether guessing costs ln k on the held-out items too (to the three decimals shown)."""
        return math.isclose(self.heldout_chance_loss, self.chance_loss, abs_tol=5e-4)

    @property
    def guessing_text(self) -> str:
        """The held-out loss of guessing in words: "ln 4 = 1.386", or its value where items differ."""
        if self.guessing_is_ln_k:
            return f"ln {self.k_text} = {self.chance_loss:.3f}"
        return f"the loss of a random guess, {self.heldout_chance_loss:.3f}"

    @property
    def chance_accuracy(self) -> float:
        return 100 / self.k if self.chance is None else self.chance

    @property
    def training_fell(self) -> bool | None:
        """Whether the final training loss is below ln k by more than :data:`CHANCE_MARGIN` (None: no
        training loss)."""
        return None if self.final is None else self.final < (1 - CHANCE_MARGIN) * self.chance_loss

    @property
    def learned(self) -> bool:
        """Held-out accuracy above chance (its whole interval minus chance above 0), or held-out loss
        below the loss of guessing (the whole interval of their difference, item by item, below 0).
        Without a held-out score a row is not shown to have learned."""
        by_accuracy = _enough(self.margin) and math.isfinite(self.margin.low) and self.margin.low > 0
        by_loss = _enough(self.loss_margin) and math.isfinite(self.loss_margin.high) and self.loss_margin.high < 0
        return by_accuracy or by_loss

    @property
    def too_few_items(self) -> int | None:
        """The number of independent held-out items, where it is below :data:`MIN_ITEMS` (else None)."""
        ns = [iv.n for iv in (self.margin, self.loss_margin) if iv is not None and iv.n is not None]
        return min(ns) if ns and min(ns) < MIN_ITEMS else None

    def columns(self) -> dict[str, object]:
        """The columns of a table of trained rows (:func:`table`)."""
        iv = self.heldout_loss
        columns = {"training loss": "—" if self.first is None else f"{self.first:.3f} → {self.final:.3f}",
                   "held-out loss": self.no_loss if iv is None else f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]",
                   f"ln {self.k_text}": f"{self.chance_loss:.3f}"}
        if not self.guessing_is_ln_k:
            columns["held-out guessing loss"] = f"{self.heldout_chance_loss:.3f}"
        return columns | {"held-out accuracy": "n/a" if self.accuracy is None else str(self.accuracy),
                          "chance": f"{self.chance_accuracy:.1f}", "learned": "yes" if self.learned else "NO"}

    def describe(self) -> str:
        parts = []
        if self.accuracy is not None:
            parts.append(f"accuracy on {self.heldout} {self.accuracy} against chance {self.chance_accuracy:.1f}"
                         + (f" (margin {self.margin})" if self.margin is not None else ""))
        if self.heldout_loss is not None:
            parts.append(f"held-out loss {self.heldout_loss.estimate:.3f} [{self.heldout_loss.low:.3f}, "
                         f"{self.heldout_loss.high:.3f}] against {self.guessing_text}")
        if self.first is not None:
            parts.append(f"training loss {self.first:.3f} → {self.final:.3f}")
        text = f"{self.name}: " + ("; ".join(parts) if parts else "no held-out score")
        return text + (f"; the full profile would need {self.full_profile}" if self.full_profile else "")

    def short_of_chance(self) -> str:
        """Why a row did not learn, in words: each held-out score it has, not beating chance."""
        if self.accuracy is None and self.heldout_loss is None:
            return f"it has no score on {self.heldout}, so it is not shown to have learned"
        if self.too_few_items is not None:
            return (f"it was scored on {self.too_few_items} independent items of {self.heldout}, fewer than the "
                    f"{MIN_ITEMS} on which beating chance on every one would be significant")
        iv = self.heldout_loss
        loss = None if iv is None else f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"
        if self.accuracy is None:
            return f"its loss on {self.heldout}, {loss}, is not below {self.guessing_text} as a whole interval"
        what = (f"its accuracy on {self.heldout}, {self.accuracy}, is not above chance ({self.chance_accuracy:.1f}%) "
                "as a whole interval")
        return what + ("" if loss is None else f", nor its loss there, {loss}, below {self.guessing_text}")

    def warning(self) -> str:
        what = self.short_of_chance()
        trained = ""
        if self.training_fell:
            trained = (f" Its training loss fell ({self.first:.3f} → {self.final:.3f}, below ln {self.k_text} = "
                       f"{self.chance_loss:.3f}): it fitted its training items without learning what carries over.")
        elif self.final is not None:
            trained = (f" Its training loss stayed at the loss of guessing ({self.first:.3f} → {self.final:.3f}; "
                       f"ln {self.k_text} = {self.chance_loss:.3f}).")
        full = f" The full profile would need {self.full_profile} for this row." if self.full_profile else ""
        return (f"⚠ {self.name} did not learn: {what}.{trained} Every claim resting on it is "
                f"\"model at chance\".{full}")


def _enough(interval: Interval | None) -> bool:
    """Whether an interval exists and rests on at least :data:`MIN_ITEMS` independent items (or does not say)."""
    return interval is not None and (interval.n is None or interval.n >= MIN_ITEMS)


def loss_ends(curves: Sequence[Sequence[float]]) -> tuple[float, float]:
    """The mean loss of the first and of the last tenth of the steps, each averaged over the curves (seeds)."""
    curves = [np.asarray(c, dtype=float) for c in curves]
    firsts = [float(c[:_tenth(c.size)].mean()) for c in curves]
    return float(np.mean(firsts)), float(np.mean([final_loss(c) for c in curves]))


def _runs(values) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    return arr[None, :] if arr.ndim == 1 else arr


def gold_mask(labels: Sequence, n_options: int) -> np.ndarray:
    """(items, options): which options are right. A label is one option's index (none below 0 or
    None) or a collection of them (several right options; empty: none)."""
    mask = np.zeros((len(labels), n_options), dtype=bool)
    for i, gold in enumerate(labels):
        options = [gold] if gold is None or np.ndim(gold) == 0 else list(gold)
        mask[i, [g for g in options if g is not None and g >= 0]] = True
    return mask


def _logsumexp(logits: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """ln Σ exp over the last axis of the entries ``keep`` marks (−inf where it marks none)."""
    masked = np.where(keep, logits, -np.inf)
    top = masked.max(axis=-1, keepdims=True)
    shift = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):  # ln 0 = −inf where nothing is marked
        return np.log(np.exp(masked - shift).sum(axis=-1)) + shift[..., 0]


def _scores_and_gold(scores, labels: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``scores`` as (seeds, items, options), which of them an item has (finite), and which are right."""
    s = np.asarray(scores, dtype=float)
    s = s[None] if s.ndim == 2 else s
    has = np.isfinite(s)
    return s, has, gold_mask(labels, s.shape[-1])[None] & has


def heldout_losses(scores, labels: Sequence) -> np.ndarray:
    """Per (seed, item) cross-entropy of the softmax of ``scores`` — (seeds, items, options) or
    (items, options), NaN or −inf for options an item does not have — at its right options:
    −ln of their summed probability (:func:`gold_mask`; one option: its probability). NaN where
    the item has no right option or was not scored (no finite score)."""
    s, has, gold = _scores_and_gold(scores, labels)
    with np.errstate(invalid="ignore"):  # −inf − −inf where an item has no score: NaN below
        loss = _logsumexp(s, has) - _logsumexp(s, gold)
    return np.where(gold.any(axis=-1), loss, np.nan)


def guessing_losses(scores, labels: Sequence) -> np.ndarray:
    """Per (seed, item) loss of guessing uniformly among the options an item has (finite scores):
    ln(k / g) for k options of which g are right; NaN where :func:`heldout_losses` is."""
    _, has, gold = _scores_and_gold(scores, labels)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(gold.any(axis=-1), np.log(has.sum(axis=-1) / gold.sum(axis=-1)), np.nan)


def check(name: str, curves: Sequence[Sequence[float]] | None, k: float, *, correct=None, chance=None,
          scores=None, labels: Sequence | None = None, guessing=None, clusters: Sequence | None = None,
          heldout: str = "held-out items", seed: int = 0) -> LossCheck:
    """The :class:`LossCheck` of a row trained with one or more seeds (``curves``: one training-loss
    curve each; None for a model not trained here). ``correct``: its held-out correctness (0/1, or a
    score in [0, 1]), (items,) or (seeds, items); ``chance``: the probability of being right by
    guessing, one number or one per item (default 1/k); ``scores`` and ``labels``: its held-out
    option scores (logits) and each item's right option(s) (:func:`heldout_losses`), for the
    held-out loss, judged against the loss of guessing item by item: ``guessing``, one number or
    one per item, where chance is not a uniform pick among an item's options (ReCoRD's random guess
    draws a mention), else :func:`guessing_losses`; ``clusters``: items that are not independent
    (subquestions of one main question) share a label. Intervals resample seeds, then clusters."""
    first, final = loss_ends(curves) if curves else (None, None)
    accuracy = margin = None
    p = None
    if correct is not None:
        runs = _runs(correct)
        p = np.broadcast_to(np.asarray(1 / k if chance is None else chance, dtype=float), runs.shape[1:])
        accuracy = hierarchical_ci(runs, clusters=clusters, seed=seed)
        margin = _scored_units(hierarchical_ci(runs - p[None, :], clusters=clusters, seed=seed), runs, clusters)
    held_out = {}
    if scores is not None and labels is not None:
        losses = heldout_losses(scores, labels)
        guess = guessing_losses(scores, labels) if guessing is None else \
            np.where(np.isnan(losses), np.nan, np.broadcast_to(np.asarray(guessing, dtype=float), losses.shape[1:]))
        held_out = _loss_against_guessing(losses, guess, clusters, seed)
    return LossCheck(name, k, first, final, accuracy, margin, chance=None if p is None else float(100 * p.mean()),
                     heldout=heldout, **held_out)


def _scored_units(interval: Interval, values: np.ndarray, clusters: Sequence | None) -> Interval:
    """``interval`` with ``n`` the independent units (clusters, or items) that have a score in ``values``
    ((seeds, items)), where :func:`rcstudy.stats.hierarchical_ci` counts every cluster."""
    scored = np.isfinite(values).any(axis=0)
    units = np.arange(scored.size) if clusters is None else np.asarray(clusters, dtype=object)
    return replace(interval, n=len(set(units[scored].tolist())))


def _loss_against_guessing(losses: np.ndarray, guessing: np.ndarray, clusters: Sequence | None, seed: int) -> dict:
    """The :class:`LossCheck` fields of a held-out loss: its interval, its margin over the loss of
    guessing (item by item) and that loss's mean, over the (seed, item) cells that have a loss."""
    return {"heldout_loss": hierarchical_ci(losses, clusters=clusters, seed=seed, scale=1.0),
            "loss_margin": _scored_units(hierarchical_ci(losses - guessing, clusters=clusters, seed=seed, scale=1.0),
                                         losses, clusters),
            "guessing_loss": float(np.nanmean(guessing))}


def prompted(name: str, correct, k: float, *, task: str, chance=None, clusters: Sequence | None = None,
             seed: int = 0) -> LossCheck:
    """A prompted (not trained) model gated on ``task``, the items its claim rests on: its accuracy
    there against chance, as for a trained row."""
    return check(name, None, k, correct=correct, chance=chance, clusters=clusters, heldout=task, seed=seed)


def with_full_profile(checks: dict, needs: dict[str, str]) -> dict:
    """``checks`` with each row's ``full_profile`` text from ``needs`` (by row name)."""
    return {key: replace(c, full_profile=needs.get(c.name, c.full_profile)) for key, c in checks.items()}


def table(checks: Sequence[LossCheck]) -> pd.DataFrame:
    """One row per trained row: training loss (first → final tenth of the steps), held-out loss
    against ln k, held-out accuracy against chance, and whether it learned."""
    return pd.DataFrame.from_dict({c.name: c.columns() for c in checks}, orient="index")


def warnings_text(checks: Sequence[LossCheck]) -> str:
    """The warnings of the rows that did not learn, one paragraph each (empty when all learned)."""
    return "\n\n".join(c.warning() for c in checks if not c.learned)
