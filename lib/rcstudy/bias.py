"""Biases in the answer options, and the EASY/HARD split they define (ReClor §3.3 and §4.2).

Two analyses of the options alone:

* lexical: ``p(right | t) = count(t, right) / count(t)`` over the tokens ``t`` of every option
  (Poliak et al., 2018), kept for tokens seen often enough (:func:`token_label_stats`);
* length: the length of right vs wrong options (:func:`option_lengths`).

And the split of Eq. 1: an item is **EASY** when, for at least one model trained on the
options only, every seed predicts it right (intersection over seeds, then union over models);
every other item is **HARD** (:class:`EasyHard`). Models are trained on one set and judged on
another; to label the items of the training set itself, :func:`cross_fit` trains on k-1 folds
and predicts the held-out fold, so every labelled item gets predictions from models that never
saw it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .data.records import MCItem

FREQ_RULES = ("at least", "more than")
COUNT_MODES = ("occurrence", "presence")


def token_label_stats(items: Sequence[MCItem], tokenize: Callable[[str], list[str]], *,
                      count_mode: str = "occurrence") -> pd.DataFrame:
    """``count``, ``right`` and ``p_right`` for every token of every option of labelled items.

    ``count_mode="occurrence"`` counts every occurrence; ``"presence"`` counts an option once
    per distinct token. Rows keep the order in which tokens first appear.
    """
    if count_mode not in COUNT_MODES:
        raise ValueError(f"count_mode must be one of {COUNT_MODES}, got {count_mode!r}")
    total, right = Counter(), Counter()
    for it in items:
        if it.label is None:
            continue
        for j, option in enumerate(it.options):
            tokens = tokenize(option)
            if count_mode == "presence":
                tokens = list(dict.fromkeys(tokens))
            total.update(tokens)
            if j == it.label:
                right.update(tokens)
    frame = pd.DataFrame({"count": pd.Series(total, dtype=int), "right": pd.Series(right, dtype=int)}).fillna(0)
    frame = frame.astype(int)
    frame["p_right"] = frame["right"] / frame["count"]
    frame.index.name = "token"
    return frame


def top_tokens(stats: pd.DataFrame, *, min_freq: int = 20, rule: str = "at least", k: int = 10) -> pd.DataFrame:
    """The ``k`` tokens with the highest ``p_right`` among those frequent enough (ties: first seen).

    ``rule`` is ``"at least"`` ("occur at least twenty times", the paper's text) or ``"more than"``
    ("more than 20 occurrences", its caption). Returns ``Score (%)``, ``Freq`` and ``rank``.
    """
    if rule not in FREQ_RULES:
        raise ValueError(f"rule must be one of {FREQ_RULES}, got {rule!r}")
    keep = stats["count"] >= min_freq if rule == "at least" else stats["count"] > min_freq
    top = stats[keep].sort_values("p_right", ascending=False, kind="stable").head(k)
    return pd.DataFrame({"Score (%)": 100 * top["p_right"], "Freq": top["count"],
                         "rank": np.arange(1, len(top) + 1)}, index=top.index)


def option_lengths(items: Sequence[MCItem], tokenize: Callable[[str], list[str]]) -> pd.DataFrame:
    """One row per option of each labelled item: ``id``, ``option``, ``length`` (tokens), ``right``."""
    rows = [{"id": it.id, "option": j, "length": len(tokenize(o)), "right": j == it.label}
            for it in items if it.label is not None for j, o in enumerate(it.options)]
    return pd.DataFrame(rows, columns=["id", "option", "length", "right"])


def correct(logits: np.ndarray, items: Sequence[MCItem]) -> np.ndarray:
    """Boolean vector: does the highest-scoring option equal the label (items must be labelled)."""
    labels = np.array([it.label for it in items])
    if any(it.label is None for it in items):
        raise ValueError("correctness needs labelled items")
    return np.asarray(logits).argmax(axis=1) == labels


@dataclass(frozen=True)
class EasyHard:
    """Eq. 1 of the paper on one item set, from per-run correctness vectors.

    ``runs[model]`` is a (seeds, items) boolean array: run ``s`` of ``model`` got item ``i`` right.
    """

    ids: tuple[str, ...]
    runs: Mapping[str, np.ndarray]

    def __post_init__(self):
        for model, r in self.runs.items():
            r = np.asarray(r)
            if r.ndim != 2 or r.shape[1] != len(self.ids) or r.shape[0] == 0:
                raise ValueError(f"runs[{model!r}] has shape {r.shape}; expected (seeds ≥ 1, {len(self.ids)})")

    @classmethod
    def from_runs(cls, ids: Sequence[str], runs: Mapping[str, Sequence[np.ndarray]]) -> "EasyHard":
        return cls(tuple(ids), {m: np.asarray(np.stack(list(r)), dtype=bool) for m, r in runs.items()})

    @property
    def models(self) -> list[str]:
        return list(self.runs)

    def consistent(self, model: str) -> np.ndarray:
        """C_model: right under every seed (intersection over seeds)."""
        return self.runs[model].all(axis=0)

    @property
    def easy(self) -> np.ndarray:
        """Union over models of the per-model intersections."""
        out = np.zeros(len(self.ids), dtype=bool)
        for m in self.runs:
            out |= self.consistent(m)
        return out

    @property
    def hard(self) -> np.ndarray:
        return ~self.easy

    @property
    def runs_right(self) -> np.ndarray:
        """How many (model, seed) runs got each item right."""
        return sum(r.sum(axis=0) for r in self.runs.values())

    def sizes(self) -> pd.Series:
        """Per-model intersection size (Table 6's "Number"), then the union (EASY)."""
        s = {m: int(self.consistent(m).sum()) for m in self.runs}
        s["Union"] = int(self.easy.sum())
        return pd.Series(s, name="Number")

    def overlap(self) -> pd.DataFrame:
        """|C_a ∩ C_b| for every pair of models (Table 27); the diagonal is |C_a|."""
        sets = {m: self.consistent(m) for m in self.runs}
        return pd.DataFrame([[int((sets[a] & sets[b]).sum()) for b in sets] for a in sets],
                            index=list(sets), columns=list(sets))

    def frame(self, split: str) -> pd.DataFrame:
        """The exported table: one row per item (see the chapter for the columns)."""
        out = pd.DataFrame({"id_string": list(self.ids), "split": split,
                            "subset": np.where(self.easy, "EASY", "HARD")})
        for m in self.runs:
            out[f"right_all_seeds:{m}"] = self.consistent(m).astype(int)
        out["runs_right"] = self.runs_right.astype(int)
        out["runs_total"] = sum(r.shape[0] for r in self.runs.values())
        return out


def kfold(n: int, k: int, seed: int) -> list[np.ndarray]:
    """``k`` disjoint index folds covering ``range(n)``: scikit-learn's shuffled ``KFold`` (seeded;
    sizes differ by at most one), each fold's held-out positions sorted."""
    from sklearn.model_selection import KFold

    if not 2 <= k <= n:
        raise ValueError(f"need 2 <= k <= n, got k={k}, n={n}")
    return [np.sort(held) for _, held in KFold(n_splits=k, shuffle=True, random_state=seed).split(np.arange(n))]


def fold_items(items: Sequence[MCItem], fold: np.ndarray) -> tuple[list[MCItem], list[MCItem]]:
    """(the items outside ``fold``, the items of ``fold``): one round of cross-fitting."""
    held = set(fold.tolist())
    return [it for i, it in enumerate(items) if i not in held], [items[i] for i in fold]


def cross_fit(items: Sequence[MCItem], folds: Sequence[np.ndarray],
              fit_predict: Callable[[list[MCItem], list[MCItem]], np.ndarray]) -> np.ndarray:
    """Out-of-fold scores: for each fold, ``fit_predict(other folds, this fold)``; rows in item order."""
    out = None
    for fold in folds:
        scores = np.asarray(fit_predict(*fold_items(items, fold)))
        if out is None:
            out = np.full((len(items), scores.shape[1]), np.nan, dtype=np.float64)
        out[fold] = scores
    if out is None or np.isnan(out).all(axis=1).any():
        raise ValueError("the folds do not cover every item")
    return out
