"""Uncertainty for small evaluations: mean ± sd over seeds, bootstrap intervals."""

from __future__ import annotations

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
