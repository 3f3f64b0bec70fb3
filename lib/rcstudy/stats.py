"""Uncertainty for small evaluations: mean ± sd over seeds, bootstrap intervals."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class MeanSD:
    mean: float
    sd: float
    n: int

    def __str__(self) -> str:
        return f"{self.mean:.1f} ± {self.sd:.1f}" if self.n > 1 else f"{self.mean:.1f}"


def mean_sd(values: Sequence[float]) -> MeanSD:
    """Mean and sample standard deviation (ddof=1; 0 for a single value)."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("mean_sd of no values")
    sd = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
    return MeanSD(float(arr.mean()), sd, int(arr.size))


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    level: float
    n: int | None = None  # the items it rests on, where known (the power calculation scales with it)

    def __str__(self) -> str:
        return f"{self.estimate:.1f} [{self.low:.1f}, {self.high:.1f}]"

    @classmethod
    def point(cls, value: float, level: float = 0.95) -> "Interval":
        """A published point estimate as a zero-width interval, for rules that read an interval's bounds."""
        return cls(value, value, value, level)


def bootstrap_ci(values: Sequence[float], *, level: float = 0.95, n_boot: int = 2000, seed: int = 0,
                 scale: float = 1.0) -> Interval:
    """Percentile bootstrap interval of the mean of per-item ``values`` (e.g. 0/1 correctness).

    ``scale`` multiplies everything (100 turns accuracy into percent).
    """
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("bootstrap_ci of no values")
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(n_boot, arr.size))].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Interval(scale * float(arr.mean()), scale * float(low), scale * float(high), level, int(arr.size))


def paired_difference(x: Sequence[float], y: Sequence[float], *, seed: int = 0, scale: float = 100.0,
                      level: float = 0.95) -> Interval:
    """Bootstrap interval of mean(x − y) over the items where both are defined (NaN elsewhere):
    per-item scores of two systems on the same items, in points by default (``scale``)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired values must align item by item: {x.shape} vs {y.shape}")
    keep = np.isfinite(x) & np.isfinite(y)
    return bootstrap_ci((x - y)[keep], scale=scale, seed=seed, level=level)


def direction(ci: Interval, null: float = 0.0) -> bool | None:
    """True if the interval lies above ``null``, False if below, None if it contains it (no decision)."""
    return True if ci.low > null else False if ci.high < null else None


def difference_interval(a: Sequence[float], b: Sequence[float], *, n_boot: int = 2000, seed: int = 0,
                        level: float = 0.95) -> Interval:
    """Bootstrap interval of mean(a) − mean(b) for two *independent* groups (each resampled on its
    own; for two systems on the same items use :func:`paired_difference`), in points (×100)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0 or b.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), level)
    rng = np.random.default_rng(seed)
    diffs = (a[rng.integers(0, a.size, (n_boot, a.size))].mean(1) - b[rng.integers(0, b.size, (n_boot, b.size))].mean(1))
    lo, hi = np.quantile(diffs, [(1 - level) / 2, (1 + level) / 2])
    return Interval(100 * float(a.mean() - b.mean()), 100 * float(lo), 100 * float(hi), level, int(a.size + b.size))


@dataclass(frozen=True)
class Equivalence:
    """A two one-sided tests (TOST) equivalence check of two systems on the same items."""

    difference: Interval  # the paired difference, with its (1 − 2α) interval
    margin: float  # in points: equivalent when the whole interval lies within ± margin
    equivalent: bool

    def __str__(self) -> str:
        return f"{self.difference} (±{self.margin:g} points, {100 * self.difference.level:.0f}% interval)"


def paired_equivalence(x: Sequence[float], y: Sequence[float], *, margin: float, alpha: float = 0.05,
                       seed: int = 0) -> Equivalence:
    """TOST for per-item scores of two systems on the same items: both one-sided tests at level
    ``alpha`` reject a difference of ``margin`` points or more exactly when the paired bootstrap
    (1 − 2·alpha) interval of mean(x − y) lies inside (−margin, margin)."""
    diff = paired_difference(x, y, seed=seed, level=1 - 2 * alpha)
    return Equivalence(diff, margin, -margin < diff.low and diff.high < margin)


# --------------------------------------------------------------------------- intervals that respect the design
#
# An evaluation's items are rarely independent draws: RULE's subquestions come in groups that share
# a main question (and its passage), a trained row is run with several seeds, and two systems are
# often scored on the same items. The bootstrap below resamples what was drawn, level by level:
# seeds (the training runs), then clusters (main questions, passages: every item of a drawn cluster
# comes along), and it draws the *same* clusters for every seed and for both systems of a paired
# comparison, since they answered the same items. Pooling seeds as if they were more items, or the
# subquestions of one main question as if they were independent, makes the interval too narrow.


def _cluster_index(clusters: Sequence | None, n_items: int) -> tuple[np.ndarray, int]:
    """Cluster number (0..C−1) of every item and C; each item its own cluster when None."""
    if clusters is None:
        return np.arange(n_items), n_items
    labels = np.asarray(list(clusters), dtype=object)
    if labels.shape != (n_items,):
        raise ValueError(f"one cluster label per item: {labels.shape[0]} labels for {n_items} items")
    _, index = np.unique(labels.astype(str), return_inverse=True)
    return index, int(index.max()) + 1 if n_items else 0


def _as_runs(values: Sequence) -> np.ndarray:
    """Values as (seeds, items): a 1-D array is one seed."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"values are (items,) or (seeds, items), not shape {arr.shape}")
    return arr


def _cells(runs: np.ndarray, index: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Per (seed, cluster): the sum and the number of its defined (non-NaN) values."""
    ok = np.isfinite(runs)
    sums = np.zeros((runs.shape[0], n_clusters))
    counts = np.zeros((runs.shape[0], n_clusters))
    for s in range(runs.shape[0]):
        np.add.at(sums[s], index, np.where(ok[s], runs[s], 0.0))
        np.add.at(counts[s], index, ok[s].astype(float))
    return sums, counts


def _draws(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(n_boot, n) multiplicities of a resample with replacement of n units."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(float) if n else np.zeros((n_boot, 0))


def _means(sums: np.ndarray, counts: np.ndarray, seed_w: np.ndarray, cluster_w: np.ndarray) -> np.ndarray:
    """The pooled mean of every resample: Σ w_s v_c sum_sc / Σ w_s v_c count_sc (NaN where empty)."""
    num = np.einsum("bs,sc,bc->b", seed_w, sums, cluster_w)
    den = np.einsum("bs,sc,bc->b", seed_w, counts, cluster_w)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _percentile(estimate: float, boots: np.ndarray, level: float, scale: float, n: int) -> Interval:
    boots = boots[np.isfinite(boots)]
    if not boots.size or not math.isfinite(estimate):
        return Interval(float("nan"), float("nan"), float("nan"), level, n)
    low, high = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return Interval(scale * estimate, scale * float(low), scale * float(high), level, n)


def _seed_weights(n_seeds: int, n_boot: int, rng: np.random.Generator, resample_seeds: bool) -> np.ndarray:
    return _draws(n_seeds, n_boot, rng) if resample_seeds and n_seeds > 1 else np.ones((n_boot, n_seeds))


def hierarchical_ci(values: Sequence, *, clusters: Sequence | None = None, resample_seeds: bool = True,
                    level: float = 0.95, n_boot: int = 2000, seed: int = 0, scale: float = 100.0) -> Interval:
    """Bootstrap interval of the mean of ``values`` — (items,) or (seeds, items), NaN where an item
    was not scored — resampling seeds (a level above items), then clusters of items (``clusters``:
    one label per item, e.g. the main question of every subquestion; None: every item its own), the
    same clusters for every drawn seed (the seeds answered the same items). In points (``scale``).
    ``n`` of the interval is the number of clusters: the independent units it rests on."""
    runs = _as_runs(values)
    index, n_clusters = _cluster_index(clusters, runs.shape[1])
    sums, counts = _cells(runs, index, n_clusters)
    rng = np.random.default_rng(seed)
    seed_w = _seed_weights(runs.shape[0], n_boot, rng, resample_seeds)
    boots = _means(sums, counts, seed_w, _draws(n_clusters, n_boot, rng))
    return _percentile(float(np.nanmean(runs)), boots, level, scale, n_clusters)


def hierarchical_paired(x: Sequence, y: Sequence, *, clusters: Sequence | None = None, level: float = 0.95,
                        n_boot: int = 2000, seed: int = 0, scale: float = 100.0) -> Interval:
    """Bootstrap interval of mean(x) − mean(y) for two systems scored on the same items — ``x`` and
    ``y`` each (items,) or (seeds, items), with their own seeds — resampling each system's seeds
    on their own and the clusters of items once for both (the pairing). Items scored by only one
    of them (NaN in the other) are left out."""
    rx, ry = _as_runs(x), _as_runs(y)
    if rx.shape[1] != ry.shape[1]:
        raise ValueError(f"paired values must align item by item: {rx.shape[1]} vs {ry.shape[1]} items")
    both = np.isfinite(rx).any(axis=0) & np.isfinite(ry).any(axis=0)
    rx, ry = rx[:, both], ry[:, both]
    labels = None if clusters is None else np.asarray(list(clusters), dtype=object)[both]
    index, n_clusters = _cluster_index(labels, rx.shape[1])
    rng = np.random.default_rng(seed)
    wx = _seed_weights(rx.shape[0], n_boot, rng, True)
    wy = _seed_weights(ry.shape[0], n_boot, rng, True)
    cw = _draws(n_clusters, n_boot, rng)
    boots = _means(*_cells(rx, index, n_clusters), wx, cw) - _means(*_cells(ry, index, n_clusters), wy, cw)
    return _percentile(float(np.nanmean(rx) - np.nanmean(ry)), boots, level, scale, n_clusters)


def hierarchical_difference(a: Sequence, b: Sequence, *, clusters_a: Sequence | None = None,
                            clusters_b: Sequence | None = None, level: float = 0.95, n_boot: int = 2000,
                            seed: int = 0, scale: float = 100.0) -> Interval:
    """Bootstrap interval of mean(a) − mean(b) for two *independent* groups of items (each (items,)
    or (seeds, items) with its own clusters), each resampled on its own, seeds then clusters.
    ``n`` is the smaller group's number of clusters."""
    ra, rb = _as_runs(a), _as_runs(b)
    ia, ca = _cluster_index(clusters_a, ra.shape[1])
    ib, cb = _cluster_index(clusters_b, rb.shape[1])
    rng = np.random.default_rng(seed)
    boots = (_means(*_cells(ra, ia, ca), _seed_weights(ra.shape[0], n_boot, rng, True), _draws(ca, n_boot, rng))
             - _means(*_cells(rb, ib, cb), _seed_weights(rb.shape[0], n_boot, rng, True), _draws(cb, n_boot, rng)))
    return _percentile(float(np.nanmean(ra) - np.nanmean(rb)), boots, level, scale, min(ca, cb))


def spread_ci(values: Sequence, groups: Sequence, *, clusters: Sequence | None = None, level: float = 0.95,
              n_boot: int = 2000, seed: int = 0, scale: float = 100.0) -> Interval:
    """Bootstrap interval of the largest |mean of a group − the overall mean| (e.g. a question
    type's accuracy against the overall), resampling seeds then clusters; ``groups`` gives one
    group per item and must be constant within a cluster (a type belongs to a main question).
    The estimate is biased upward (a maximum), so the interval is conservative for a claim of no
    spread."""
    runs = _as_runs(values)
    g = np.asarray(list(groups), dtype=object).astype(str)
    if g.shape != (runs.shape[1],):
        raise ValueError(f"one group per item: {g.shape[0]} for {runs.shape[1]} items")
    index, n_clusters = _cluster_index(clusters, runs.shape[1])
    cluster_group = np.empty(n_clusters, dtype=object)
    for i, c in enumerate(index):
        if cluster_group[c] is not None and cluster_group[c] != g[i]:
            raise ValueError("a cluster's items must all be in one group")
        cluster_group[c] = g[i]
    sums, counts = _cells(runs, index, n_clusters)
    rng = np.random.default_rng(seed)
    seed_w = _seed_weights(runs.shape[0], n_boot, rng, True)
    cw = _draws(n_clusters, n_boot, rng)
    names = sorted(set(g))

    def spread(sw: np.ndarray, w: np.ndarray) -> np.ndarray:
        overall = _means(sums, counts, sw, w)
        devs = [np.abs(_means(sums, counts, sw, w * (cluster_group == t)) - overall) for t in names]
        return np.nanmax(np.vstack(devs), axis=0)

    estimate = float(spread(np.ones((1, runs.shape[0])), np.ones((1, n_clusters)))[0])
    return _percentile(estimate, spread(seed_w, cw), level, scale, n_clusters)


def subset_difference(values: Sequence, in_a: Sequence[bool], in_b: Sequence[bool], *,
                      clusters: Sequence | None = None, level: float = 0.95, n_boot: int = 2000, seed: int = 0,
                      scale: float = 100.0) -> Interval:
    """Bootstrap interval of mean over the items in ``in_a`` − mean over those in ``in_b``, two kinds
    of items of one system (selective and eliminative subquestions), resampling its seeds and the
    clusters once for both kinds: a main question drawn brings its subquestions of either kind,
    so what the two kinds share through their main question is kept."""
    runs = _as_runs(values)
    a, b = np.asarray(in_a, dtype=bool), np.asarray(in_b, dtype=bool)
    if a.shape != (runs.shape[1],) or b.shape != (runs.shape[1],):
        raise ValueError("one flag per item for each subset")
    index, n_clusters = _cluster_index(clusters, runs.shape[1])
    ra, rb = np.where(a[None, :], runs, np.nan), np.where(b[None, :], runs, np.nan)
    rng = np.random.default_rng(seed)
    sw, cw = _seed_weights(runs.shape[0], n_boot, rng, True), _draws(n_clusters, n_boot, rng)
    boots = _means(*_cells(ra, index, n_clusters), sw, cw) - _means(*_cells(rb, index, n_clusters), sw, cw)
    n = len(set(index[a]) | set(index[b]))
    return _percentile(float(np.nanmean(ra) - np.nanmean(rb)), boots, level, scale, n)
