"""Metrics shared by the chapters; dataset-specific ones live in one submodule per dataset."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def accuracy(pred: Sequence[int], gold: Sequence[int]) -> float:
    """Fraction of positions where ``pred`` equals ``gold`` (0.0–1.0)."""
    pred, gold = np.asarray(pred), np.asarray(gold)
    if pred.shape != gold.shape:
        raise ValueError(f"pred has shape {pred.shape}, gold {gold.shape}")
    if pred.size == 0:
        raise ValueError("accuracy of no items")
    return float((pred == gold).mean())
