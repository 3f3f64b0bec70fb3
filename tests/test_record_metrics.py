"""The official ReCoRD EM/F1: normalisation, token F1, max over gold answers, averaging."""

import numpy as np
import pytest

from rcstudy.data.records import ClozeQuery, Entity
from rcstudy.metrics.record import (
    candidate_scores, evaluate, exact_match_score, f1_score, max_over_ground_truths, normalize_answer,
)


@pytest.mark.parametrize("raw, normalised", [
    ("The Beatles", "beatles"),
    ("  U.S.  Senate ", "us senate"),
    ("A Tale of an Island", "tale of island"),  # articles are whole words only
    ("Theresa May", "theresa may"),  # "the" inside a word stays
    ("Obama’s", "obama’s"),  # curly apostrophe is not ASCII punctuation
    ("Obama's", "obamas"),
    ("Rock-'n'-Roll!", "rocknroll"),
    ("", ""),
])
def test_normalisation_matches_the_official_script(raw, normalised):
    assert normalize_answer(raw) == normalised


def test_exact_match_and_f1_known_values():
    assert exact_match_score("the Beatles!", "Beatles") == 1.0
    assert exact_match_score("Obama’s", "Obama's") == 0.0
    assert f1_score("the U.S. Senate", "Senate") == pytest.approx(2 / 3)  # P 1/2, R 1
    assert f1_score("New York City", "New York") == pytest.approx(0.8)  # P 2/3, R 1
    assert f1_score("Diego Forlan", "Forlan") == pytest.approx(2 / 3)
    assert f1_score("Paris", "London") == 0.0
    assert f1_score("a", "the") == 0.0  # both normalise to nothing: no shared token, F1 0 ...
    assert exact_match_score("a", "the") == 1.0  # ... but the empty strings are equal


def test_repeated_tokens_count_once_each():
    # Counter intersection: "new new york" vs "new york" shares 2 tokens; P 2/3, R 1
    assert f1_score("new new york", "new york") == pytest.approx(0.8)


def test_max_over_ground_truths():
    golds = ["Diego Forlan", "Forlan"]
    assert max_over_ground_truths(f1_score, "Forlan", golds) == 1.0
    assert max_over_ground_truths(f1_score, "Diego", golds) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="no gold answers"):
        max_over_ground_truths(f1_score, "x", [])


def _query(qid, answers, entities=("Forlan", "Madrid")):
    passage = " ".join(entities)
    spans, pos = [], 0
    for e in entities:
        spans.append(Entity(pos, pos + len(e), e))
        pos += len(e) + 1
    return ClozeQuery(qid, passage, "@placeholder scored.", tuple(spans), tuple(answers))


def test_evaluate_averages_over_all_queries_and_zeroes_missing_predictions():
    qs = [_query("a", ["Diego Forlan", "Forlan"]), _query("b", ["New York"]), _query("c", ["Madrid"])]
    s = evaluate(qs, {"a": "Forlan", "b": "New York City"})
    np.testing.assert_allclose(s.em, [1, 0, 0])
    np.testing.assert_allclose(s.f1, [1, 0.8, 0])
    assert s.unanswered == ("c",)
    assert s.exact_match == pytest.approx(100 / 3)
    assert s.f1_mean == pytest.approx(100 * 1.8 / 3)
    assert s.correct_ids == ["a"]


def test_candidate_scores_per_distinct_candidate():
    q = _query("a", ["Diego Forlan", "Forlan"], entities=("Forlan", "Madrid", "Forlan"))
    em, f1 = candidate_scores(q)
    np.testing.assert_allclose(em, [1, 0])
    np.testing.assert_allclose(f1, [1, 0])
