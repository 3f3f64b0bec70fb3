"""Seeded subsamples, in two documented kinds; every chapter draws through these.

- :func:`draw` — ``n`` of the items without replacement, **kept in their original order**
  (positions sorted). Two draws of different sizes with one seed are unrelated.
- :func:`nested` — the first ``n`` of one seeded permutation, **in permutation order**, so a
  smaller sample is a subset of a larger one with the same seed (for learning curves and for
  growing a sample without redrawing it).

Both return every item, in order, when ``n`` is None or at least the number of items; both use
NumPy's ``default_rng(seed)``, so a draw is the same on every machine.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

import numpy as np

T = TypeVar("T")


def draw_positions(size: int, n: int | None, seed: int) -> np.ndarray:
    """Sorted positions of a seeded draw of ``n`` out of ``size`` (all of them when ``n`` is None or ≥ size)."""
    if n is None or n >= size:
        return np.arange(size)
    return np.sort(np.random.default_rng(seed).choice(size, size=n, replace=False))


def draw(items: Sequence[T], n: int | None, seed: int) -> list[T]:
    """``n`` items drawn without replacement, kept in their original order."""
    return [items[i] for i in draw_positions(len(items), n, seed)]


def nested_positions(size: int, n: int | None, seed: int) -> np.ndarray:
    """The first ``n`` positions of a seeded permutation of ``range(size)`` (all, in order, when
    ``n`` is None or ≥ size)."""
    if n is None or n >= size:
        return np.arange(size)
    return np.random.default_rng(seed).permutation(size)[:n]


def nested(items: Sequence[T], n: int | None, seed: int) -> list[T]:
    """The first ``n`` items of a seeded permutation: samples of one seed nest in each other."""
    return [items[i] for i in nested_positions(len(items), n, seed)]
