"""Every system's answers in one form, and how they are scored.

Every system ends up as a :class:`Predictions`: for each evaluated split (``"en-eval"``,
``"en-test"``, ``"zh-eval"``, ``"zh-test"``) an array (seeds × items) of predicted option
indices over the *whole* split, ``-1`` where an item was not evaluated (subsampled runs). The
analyses then average over seeds item by item, so every table is computed the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ...stats import Interval, MeanSD, hierarchical_ci, hierarchical_paired, mean_sd
from .data import LogiQAData

SPLIT_COLUMNS = {"en-eval": "LogiQA Dev", "en-test": "LogiQA Test", "zh-eval": "Chinese Dev", "zh-test": "Chinese Test"}


@dataclass
class Predictions:
    name: str
    category: str
    trained_on: str  # what the system learned from, in words ("—" for rules)
    preds: dict[str, np.ndarray]  # split key → (seeds, items) option indices, -1 = not evaluated
    # a trained row's "losses" (one curve per seed) and "logits" (split key → (seeds, items, options), NaN = not evaluated)
    extra: dict = field(default_factory=dict)

    def correct(self, split_key: str, gold: np.ndarray) -> np.ndarray:
        """(seeds, items) 1.0/0.0 correctness, NaN where not evaluated."""
        p = self.preds[split_key]
        return np.where(p >= 0, (p == gold[None, :]).astype(float), np.nan)

    def evaluated(self, split_key: str) -> np.ndarray:
        return (self.preds[split_key] >= 0).all(axis=0)


def full_length(values: np.ndarray, positions: np.ndarray, n: int, missing: float = -1) -> np.ndarray:
    """Values on a subsample — predicted options, or each item's option scores with ``missing=np.nan``
    — placed into a split-length array (``missing`` elsewhere)."""
    values = np.asarray(values)
    out = np.full((n, *values.shape[1:]), missing, dtype=np.result_type(values, missing))
    out[positions] = values
    return out


def restrict(pred: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """(seeds, items) predictions with every item outside ``positions`` marked not evaluated (-1)."""
    out = np.full_like(pred, -1)
    out[:, positions] = pred[:, positions]
    return out


@dataclass(frozen=True)
class Score:
    """Accuracy (%) of one system on one split: seeds, a bootstrap interval, and its n."""

    seeds: MeanSD
    ci: Interval
    n: int


def score(system: Predictions, data: LogiQAData, split_key: str) -> Score | None:
    if split_key not in system.preds:
        return None
    keep = system.evaluated(split_key)
    correct = system.correct(split_key, data.gold(split_key))[:, keep]
    # seeds are resampled above questions: a seed is another run, not more questions
    return Score(mean_sd(100 * correct.mean(axis=1)), hierarchical_ci(correct), int(keep.sum()))


def paired_gap(a: Predictions, b: Predictions, data: LogiQAData, name_a: str, name_b: str) -> tuple[Interval, str]:
    """Paired 95% interval of Test accuracy(a) − accuracy(b) on the questions both answered (each
    system's seeds resampled, the same questions for both), and its text."""
    gold = data.gold("en-test")
    ci = hierarchical_paired(a.correct("en-test", gold), b.correct("en-test", gold))
    return ci, f"{name_a} − {name_b}: {ci.estimate:+.1f} points [{ci.low:+.1f}, {ci.high:+.1f}]"


def results_table(systems: Sequence[Predictions], data: LogiQAData, *, name_map: dict[str, str] | None = None,
                  splits: Sequence[str] = tuple(SPLIT_COLUMNS)) -> pd.DataFrame:
    """Rows = systems (renamed by ``name_map`` to the paper's rows), columns = Table 3's, cells MeanSD."""
    rows = {}
    for s in systems:
        row = (name_map or {}).get(s.name, s.name)
        rows[row] = {SPLIT_COLUMNS[k]: sc.seeds for k in splits if (sc := score(s, data, k)) is not None}
    return pd.DataFrame.from_dict(rows, orient="index")


def detail_table(systems: Sequence[Predictions], data: LogiQAData, split_key: str = "en-test") -> pd.DataFrame:
    """Per system on one split: seeds, mean ± sd, the 95% bootstrap interval, n, training data."""
    rows = []
    for s in systems:
        sc = score(s, data, split_key)
        if sc is None:
            continue
        rows.append({"system": s.name, "category": s.category, "seeds": sc.seeds.n, "accuracy (mean ± sd)": str(sc.seeds),
                     "95% bootstrap CI": f"[{sc.ci.low:.1f}, {sc.ci.high:.1f}]", "items": sc.n,
                     "trained on": s.trained_on})
    return pd.DataFrame(rows).set_index("system")


def per_item_accuracy(system: Predictions, data: LogiQAData, split_key: str) -> np.ndarray:
    """Seed-averaged correctness per item (NaN where not evaluated)."""
    out = np.full(len(data.splits[split_key]), np.nan)
    if split_key in system.preds:
        keep = system.evaluated(split_key)
        out[keep] = system.correct(split_key, data.gold(split_key))[:, keep].mean(axis=0)
    return out
