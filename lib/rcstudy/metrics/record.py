"""The official ReCoRD v1.0 metrics: exact match and token F1, max over the gold answers.

Same logic as the official ``evaluate-v1.0.py`` (adapted from SQuAD's): normalise by lower-casing,
deleting ASCII punctuation, deleting the articles *a/an/the* and collapsing whitespace; EM
compares normalised strings, F1 the bags of normalised whitespace tokens (0 when nothing is
shared); each query takes the best score over its gold answers; a query without a prediction
scores 0; the averages are over all queries. Curly quotes and non-English articles survive the
normalisation, exactly as in the official script.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from ..data.records import ClozeQuery

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(s: str) -> str:
    """Lower text and remove punctuation, articles and extra whitespace (official order)."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match_score(prediction: str, ground_truth: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(ground_truth))


def f1_score(prediction: str, ground_truth: str) -> float:
    pred = normalize_answer(prediction).split()
    gold = normalize_answer(ground_truth).split()
    same = sum((Counter(pred) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def max_over_ground_truths(metric: Callable[[str, str], float], prediction: str,
                           ground_truths: Sequence[str]) -> float:
    if not ground_truths:
        raise ValueError("no gold answers to score against (hidden test answers?)")
    return max(metric(prediction, g) for g in ground_truths)


@dataclass(frozen=True)
class Scores:
    """Per-query EM and F1 (0/1 and 0–1) in query order, and which queries had no prediction."""

    ids: tuple[str, ...]
    em: np.ndarray
    f1: np.ndarray
    unanswered: tuple[str, ...]

    @property
    def exact_match(self) -> float:
        """Percent, as the official script reports it ×100."""
        return 100 * float(self.em.mean())

    @property
    def f1_mean(self) -> float:
        return 100 * float(self.f1.mean())

    @property
    def correct_ids(self) -> list[str]:
        return [i for i, e in zip(self.ids, self.em) if e == 1]


def evaluate(queries: Sequence[ClozeQuery], predictions: Mapping[str, str]) -> Scores:
    """Score ``{query id: answer string}`` against every query (missing predictions score 0)."""
    em, f1, missing = [], [], []
    for q in queries:
        if q.id not in predictions:
            missing.append(q.id)
            em.append(0.0)
            f1.append(0.0)
            continue
        em.append(max_over_ground_truths(exact_match_score, predictions[q.id], q.answers))
        f1.append(max_over_ground_truths(f1_score, predictions[q.id], q.answers))
    return Scores(tuple(q.id for q in queries), np.array(em), np.array(f1), tuple(missing))


def candidate_scores(q: ClozeQuery) -> tuple[np.ndarray, np.ndarray]:
    """EM and F1 that predicting each of ``q.candidates`` would get (for expectations and oracles)."""
    cands = q.candidates
    return (np.array([max_over_ground_truths(exact_match_score, c, q.answers) for c in cands]),
            np.array([max_over_ground_truths(f1_score, c, q.answers) for c in cands]))


def gold_candidate_indices(q: ClozeQuery) -> list[int]:
    """Indices of the candidates that exactly match a gold answer after normalisation."""
    gold = {normalize_answer(a) for a in q.answers}
    return [k for k, c in enumerate(q.candidates) if normalize_answer(c) in gold]


def gold_char_spans(q: ClozeQuery) -> tuple[tuple[int, int], ...]:
    """The answer spans the files give, else every mention whose text matches a gold answer."""
    spans = [tuple(s) for s in q.meta.get("answer_spans", ())]
    gold = {normalize_answer(a) for a in q.answers}
    spans += [(e.start, e.end) for e in q.entities if normalize_answer(e.text) in gold]
    return tuple(dict.fromkeys(spans))
