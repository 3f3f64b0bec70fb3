"""Did a trained model learn? Its training loss against the loss of guessing.

A k-way classifier that has learned nothing predicts the uniform distribution, whose
cross-entropy is ln k (1.386 for four options); with a number of options that varies from
question to question, the loss of guessing is the mean of ln k, which is ln of their geometric
mean (:func:`guessing_k`). A trained row whose final training loss is
within :data:`CHANCE_MARGIN` (2%) of ln k did not learn: the page shows a warning beside its
table (:func:`warnings_text`), and no claim resting on it gets a verdict
(:meth:`rcstudy.report.ClaimLog.judge`, ``rests_on``). The final loss is the mean over the last
:data:`FINAL_SHARE` of the optimiser steps, so one noisy batch does not decide it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

#: How close to ln k (as a share of it) a final loss must come for the row to count as not learned.
CHANCE_MARGIN = 0.02
#: The share of the last optimiser steps whose mean loss is the final loss.
FINAL_SHARE = 0.1


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
    """One trained row's training loss against ln k (``final``: the mean over seeds)."""

    name: str
    k: float  # options per question (a geometric mean where it varies: :func:`guessing_k`)
    first: float
    final: float

    @property
    def k_text(self) -> str:
        return f"{self.k:g}" if float(self.k).is_integer() else f"{self.k:.2f}"

    @property
    def chance_loss(self) -> float:
        return math.log(self.k)

    @property
    def learned(self) -> bool:
        return self.final < (1 - CHANCE_MARGIN) * self.chance_loss

    def columns(self) -> dict[str, object]:
        """The loss columns of a table of trained rows (:func:`table`)."""
        return {"loss: first": round(self.first, 3), "loss: final": round(self.final, 3),
                f"ln {self.k_text}": round(self.chance_loss, 3), "learned": "yes" if self.learned else "NO"}

    def describe(self) -> str:
        return (f"{self.name}: training loss {self.first:.3f} → {self.final:.3f} "
                f"(ln {self.k_text} = {self.chance_loss:.3f})")

    def warning(self) -> str:
        where = "above" if self.final > self.chance_loss else f"within {CHANCE_MARGIN:.0%} of"
        return (f"⚠ {self.name} did not learn: its final training loss, {self.final:.3f}, is {where} "
                f"ln {self.k_text} = {self.chance_loss:.3f}, the loss of guessing. Its accuracy is chance plus "
                "noise, and no claim rests on it.")


def loss_ends(curves: Sequence[Sequence[float]]) -> tuple[float, float]:
    """The mean loss of the first and of the last tenth of the steps, each averaged over the curves (seeds)."""
    curves = [np.asarray(c, dtype=float) for c in curves]
    firsts = [float(c[:_tenth(c.size)].mean()) for c in curves]
    return float(np.mean(firsts)), float(np.mean([final_loss(c) for c in curves]))


def check(name: str, curves: Sequence[Sequence[float]], k: float) -> LossCheck:
    """The :class:`LossCheck` of a row trained with one or more seeds (one loss curve each)."""
    return LossCheck(name, k, *loss_ends(curves))


def table(checks: Sequence[LossCheck]) -> pd.DataFrame:
    """One row per trained row: its training loss (first and final tenth of the steps) against ln k."""
    return pd.DataFrame.from_dict({c.name: c.columns() for c in checks}, orient="index")


def warnings_text(checks: Sequence[LossCheck]) -> str:
    """The warnings of the rows that did not learn, one paragraph each (empty when all learned)."""
    return "\n\n".join(c.warning() for c in checks if not c.learned)
