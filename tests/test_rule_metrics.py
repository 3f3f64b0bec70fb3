"""RULE's metrics on hand-made predictions with values computed by hand."""

from __future__ import annotations

import math

import pytest

from rcstudy.metrics import accuracy
from rcstudy.metrics.rule import aggregate, chance_scores, none_scores, rule_scores

# Main questions A (right), B (right), C (wrong); subquestions (main, selective, right):
SUBS = [("A", True, True), ("A", False, True), ("A", False, False),
        ("B", True, True), ("B", False, True),
        ("C", True, True), ("C", False, False)]


def scores():
    return rule_scores(["A", "B", "C"], [True, True, False],
                       [m for m, _, _ in SUBS], [s for _, s, _ in SUBS], [ok for _, _, ok in SUBS])


def test_every_metric_by_hand():
    s = scores()
    assert s["MainQ"] == pytest.approx(200 / 3)
    assert s["SubQ"] == pytest.approx(500 / 7)  # micro: 5 of 7
    assert s["Selective"] == pytest.approx(100.0)
    assert s["Eliminative"] == pytest.approx(50.0)  # 2 of 4
    assert s["Consistency"] == pytest.approx(100 / 3)  # only B has the main and every subquestion right
    assert s["MainQ-wise SubQ"] == pytest.approx(100 * (2 / 3 + 1 + 1 / 2) / 3)  # macro
    assert s["SubQ | main right"] == pytest.approx(80.0)  # A and B: 4 of 5
    assert s["MainQ-wise SubQ | main right"] == pytest.approx(100 * (2 / 3 + 1) / 2)
    assert (s["main questions"], s["subquestions"]) == (3, 7)


def test_consistency_never_exceeds_mainq_or_subq_macro():
    s = scores()
    assert s["Consistency"] <= s["MainQ"] and s["Consistency"] <= s["MainQ-wise SubQ"]


def test_main_without_subquestions_and_empty_groups():
    s = rule_scores(["A", "B"], [True, False], ["A"], [False], [True])
    assert s["Consistency"] == pytest.approx(50.0)  # B: wrong main; an empty product would count it by itself
    assert math.isnan(s["Selective"]) and s["MainQ-wise SubQ"] == pytest.approx(100.0)
    s = rule_scores(["A", "B"], [True, True], ["A"], [True], [True])
    assert s["Consistency"] == pytest.approx(100.0)


def test_inputs_are_checked():
    with pytest.raises(ValueError, match="not among main_ids"):
        rule_scores(["A"], [True], ["Z"], [True], [True])
    with pytest.raises(ValueError, match="unique"):
        rule_scores(["A", "A"], [True, True], [], [], [])
    with pytest.raises(ValueError, match="differ in length"):
        rule_scores(["A"], [True], ["A"], [True, False], [True])


def test_chance_is_exact():
    c = chance_scores(["A", "B", "C"], [4, 4, 4], [m for m, _, _ in SUBS], [4] * 7, [s for _, s, _ in SUBS])
    assert c["MainQ"] == c["SubQ"] == c["Selective"] == c["Eliminative"] == c["MainQ-wise SubQ"] == pytest.approx(25)
    # A: 1/4 · (1/4)^3; B and C: 1/4 · (1/4)^2
    assert c["Consistency"] == pytest.approx(100 * (1 / 256 + 2 / 64) / 3)
    c = chance_scores(["A"], [2], ["A"], [5], [False])
    assert c["MainQ"] == pytest.approx(50) and c["Eliminative"] == pytest.approx(20)
    assert c["Consistency"] == pytest.approx(10)


def test_none_analysis():
    has = [True, True, True, False, True]
    none_right = [True, False, True, False, False]
    ok = [True, True, False, True, False]
    s = none_scores(has, none_right, ok)
    assert s["None offered"] == pytest.approx(50.0)  # 2 of the 4 offering None
    assert s["None is the answer"] == pytest.approx(50.0)
    assert s["None offered, not the answer"] == pytest.approx(50.0)
    assert (s["n offered"], s["n answer"]) == (4, 2)


def test_aggregate_over_splits():
    agg = aggregate([{"SubQ": 40.0, "MainQ": 50.0}, {"SubQ": 60.0, "MainQ": float("nan")}], ["SubQ", "MainQ"])
    assert agg["SubQ"].mean == pytest.approx(50) and agg["SubQ"].sd == pytest.approx(math.sqrt(200))
    assert agg["MainQ"].n == 1 and str(agg["SubQ"]) == "50.0 ± 14.1"


def test_accuracy():
    assert accuracy([0, 1, 2, 3], [0, 1, 0, 0]) == 0.5
    with pytest.raises(ValueError):
        accuracy([0], [0, 1])


def test_aggregate_keeps_a_metric_that_no_split_has():
    agg = aggregate([{"SubQ": float("nan"), "MainQ": 50.0}, {"SubQ": float("nan"), "MainQ": 70.0}], ["SubQ", "MainQ"])
    assert math.isnan(agg["SubQ"]) and agg["MainQ"].mean == pytest.approx(60)
