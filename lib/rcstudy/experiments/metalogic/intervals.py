"""Intervals over the test passages.

Every score of the chapter is a mean over passages (Cert. F1* is a macro-F1 over the pooled
nodes), so its interval resamples passages; a trained system's seeds are resampled above them,
and two systems on the same passages are compared with one draw of passages for both (paired).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ...data.metalogic import Metagraph, Prediction
from ...metrics import metalogic as mm
from ...stats import Interval, hierarchical_ci, hierarchical_paired
from .scores import COLUMN_NAMES, SCALE_PANELS

#: Bootstrap draws of the chapter's passage intervals.
N_BOOT = 2000


class PassageScores:
    """One system's per-passage scores on ``graphs``: (runs, passages) per column (0–1), and the
    per-passage confusion counts of gold × predicted certainty for the macro-F1."""

    LABELS = (-1, 0, 1, 2, 3, 4)  # unresolved, then the five degrees

    def __init__(self, graphs: Sequence[Metagraph], runs: Sequence[Mapping[str, Prediction]]):
        self.ids = [g.id for g in graphs]
        samples = [[mm.score_sample(g, preds.get(g.id, Prediction())) for g in graphs] for preds in runs]
        self.columns = {c: np.array([[x.scores[c] for x in run] for run in samples])
                        for c in samples[0][0].scores} if graphs else {}
        k = {label: i for i, label in enumerate(self.LABELS)}
        self.confusion = np.zeros((len(runs), len(graphs), len(self.LABELS), len(self.LABELS)))
        for r, run in enumerate(samples):
            for p, x in enumerate(run):
                for gold, pred in x.degrees:
                    self.confusion[r, p, k.get(gold, 0), k.get(pred, 0)] += 1

    def column(self, name: str) -> np.ndarray:
        """(runs, passages) of a score (its display name or key), in points."""
        key = {v: k for k, v in COLUMN_NAMES.items()}.get(name, name)
        return 100 * self.columns[key]

    def macro(self, seed_w: np.ndarray, passage_w: np.ndarray) -> np.ndarray:
        """Cert. F1* (points) of every resample: sklearn's macro-F1 over the labels seen, from the
        weighted confusion counts."""
        c = np.einsum("bs,bp,spij->bij", seed_w, passage_w, self.confusion)
        tp = np.diagonal(c, axis1=1, axis2=2)
        gold, pred = c.sum(axis=2), c.sum(axis=1)
        seen = (gold + pred) > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(seen, 2 * tp / np.where(seen, gold + pred, 1), 0.0)
        return 100 * f1.sum(axis=1) / np.maximum(seen.sum(axis=1), 1)

    def interval(self, name: str) -> Interval:
        """A score's mean with its interval (runs, then passages, resampled)."""
        return hierarchical_ci(self.column(name), scale=1.0)

    def paired(self, other: "PassageScores", name: str) -> Interval:
        """This system's score − ``other``'s on the passages this one was scored on (one draw of
        passages for both)."""
        where = {gid: i for i, gid in enumerate(other.ids)}
        return hierarchical_paired(self.column(name), other.column(name)[:, [where[i] for i in self.ids]], scale=1.0)


def _weights(n_runs: int, n_passages: int, rng: np.random.Generator, n_boot: int = N_BOOT):
    seed_w = (rng.multinomial(n_runs, np.full(n_runs, 1 / n_runs), n_boot).astype(float) if n_runs > 1
              else np.ones((n_boot, 1)))
    return seed_w, rng.multinomial(n_passages, np.full(n_passages, 1 / n_passages), n_boot).astype(float)


def _interval(estimate: float, boots: np.ndarray, n: int, level: float = 0.95) -> Interval:
    low, high = np.quantile(boots[np.isfinite(boots)], [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(estimate), float(low), float(high), level, n)


def macro_interval(scores: PassageScores, seed: int = 0) -> Interval:
    """Cert. F1* with a bootstrap interval over runs, then passages."""
    runs, n = scores.confusion.shape[:2]
    full = scores.macro(np.ones((1, runs)), np.ones((1, n)))[0]
    return _interval(full, scores.macro(*_weights(runs, n, np.random.default_rng(seed))), n)


def share_ends(ratios: Sequence[float]) -> tuple[float, float, float]:
    """The smallest share of the training passages, the one nearest 20 % (the first of equals, in
    order) and the largest: Figure 5's early and late halves."""
    return min(ratios), min(ratios, key=lambda r: abs(r - 0.2)), max(ratios)


def gain_interval(lo: PassageScores, mid: PassageScores, hi: PassageScores, seed: int = 0) -> Interval:
    """(gain from the smallest share to ~20 %) − (gain from ~20 % to all) in the mean of the six
    scores of Figure 5 (the scores at each share of :func:`share_ends`, one run per subset draw, on
    the same test passages), with a bootstrap interval: the subset draws resampled, then the test
    passages, one draw of passages for every share."""
    runs, n = lo.confusion.shape[:2]
    seed_w, passage_w = _weights(runs, n, np.random.default_rng(seed))
    ones = (np.ones((1, runs)), np.ones((1, n)))

    def six(sc: PassageScores, sw: np.ndarray, pw: np.ndarray) -> np.ndarray:
        parts = [np.einsum("bs,bp,sp->b", sw, pw, sc.column(c)) / np.einsum("bs,bp->b", sw, pw)
                 for c in SCALE_PANELS if c != "Cert. F1*"]
        return (np.sum(parts, axis=0) + sc.macro(sw, pw)) / len(SCALE_PANELS)

    def gain(sw, pw):
        return 2 * six(mid, sw, pw) - six(lo, sw, pw) - six(hi, sw, pw)

    return _interval(gain(*ones)[0], gain(seed_w, passage_w), n)


def error_lead_interval(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], category: str,
                        group: Sequence[str], seed: int = 0) -> Interval:
    """The share (%) of ``category`` among the errors of ``group`` minus the largest other category's
    share, with a bootstrap interval over the sampled passages (their errors drawn together)."""
    counts = np.array([[mm.error_counts([g], preds).get(c, 0) for c in group] for g in graphs], dtype=float)
    i = list(group).index(category)

    def lead(w: np.ndarray) -> np.ndarray:
        tot = w @ counts
        others = np.delete(tot, i, axis=1).max(axis=1)
        return 100 * (tot[:, i] - others) / np.maximum(tot.sum(axis=1), 1)

    rng = np.random.default_rng(seed)
    _, w = _weights(1, len(graphs), rng)
    return _interval(lead(np.ones((1, len(graphs))))[0], lead(w), len(graphs))
