"""Claims as data: the rules' semantics, and every declared claim holds on the paper's own numbers."""

from __future__ import annotations

import pytest

from rcstudy import papers
from rcstudy.claims import (AllOf, Above, AnyOf, Below, ClaimSpec, Compare, Higher, IfGiven, MissingEvidence, Not,
                            Within, combine)
from rcstudy.report import ClaimLog
from rcstudy.stats import Interval, MeanSD


def iv(estimate, low, high):
    return Interval(estimate, low, high, 0.95)


def test_interval_rules_give_no_verdict_when_the_line_is_inside():
    assert Above("d")({"d": iv(3, 1, 5)}) is True
    assert Above("d")({"d": iv(-3, -5, -1)}) is False
    assert Above("d")({"d": iv(1, -1, 3)}) is None
    assert Below("acc", 25)({"acc": iv(20, 18, 24)}) is True
    assert Above("d")({"d": 0.4}) is True  # a paper's point estimate


def test_compare_reads_fields_and_mappings():
    ev = {"best": iv(30, 26, 34), "human": 86.0, "readers": {"a": MeanSD(28, 1, 3), "b": MeanSD(31, 1, 3)}}
    assert Compare("best.high", "<", "human")(ev) is True
    assert Within("readers", 25, 35)(ev) is True
    assert Within("readers", 29, 35)(ev) is False
    assert Compare("readers", "<", 30)(ev) is False
    with pytest.raises(MissingEvidence):
        Compare("nothing", "<", 1)(ev)


def test_combinations():
    assert combine([True, None]) is None and combine([True, False, None]) is False and combine([True]) is True
    assert AllOf((Above("x"), Below("x", 10)))({"x": 5}) is True
    assert AnyOf((Above("x", 7), Below("x", 6)))({"x": 5}) is True
    assert Not(Above("x"))({"x": iv(0, -1, 1)}) is None


def test_if_given_applies_only_where_the_reference_is_given():
    rule = IfGiven("empty", Compare("formula", ">", "empty"))
    assert rule({"formula": 60.0, "empty": 55.0}) is True
    assert rule({"formula": 50.0, "empty": 55.0}) is False
    assert rule({"formula": 50.0}) is True and rule({"formula": 50.0, "empty": None}) is True


def test_claim_log_judges_declared_claims(monkeypatch):
    spec = ClaimSpec("far-below", "Models score far below people ({human:.0f}%).",
                     "the best upper bound is below the human score", Compare("best.high", "<", "human"),
                     paper={"best": 35.0, "human": 86.0})
    monkeypatch.setattr(papers, "claims", lambda paper: [spec])
    log = ClaimLog("logiqa")
    c = log.judge("far-below", {"best": iv(30, 26, 34), "human": 86.0}, "34 < 86")
    assert c.holds is True and c.claim == "Models score far below people (86%)."
    with pytest.raises(KeyError, match="no declared claim"):
        log.judge("other", {}, "")


SPECS = [(paper, spec) for paper in papers.PAPERS for spec in papers.claims(paper)]


@pytest.mark.parametrize("paper, spec", SPECS, ids=[f"{p}:{s.id}" for p, s in SPECS])
def test_every_claim_holds_on_the_papers_own_numbers(paper, spec):
    """A rule the paper's own published numbers do not satisfy does not encode what the paper says."""
    assert spec.paper, f"{paper}:{spec.id} declares no paper evidence"
    assert spec.judge(spec.paper) is True
    spec.statement(), spec.how()  # every placeholder is filled


def test_higher_compares_two_intervals_and_gives_no_verdict_when_they_overlap():
    ev = {"a": iv(50, 45, 55), "others": {"b": iv(30, 25, 35), "c": iv(40, 35, 44)}}
    assert Higher("a", "others")(ev) is True
    assert Higher("a", "others")({**ev, "others": {"b": iv(30, 25, 35), "c": iv(50, 40, 60)}}) is None
    assert Higher("a", "others")({**ev, "others": {"b": iv(70, 60, 80), "c": iv(50, 40, 60)}}) is False
    assert Higher("a", "b")({"a": 55.0, "b": 17.1}) is True  # the paper's point estimates
    assert Higher("a", "b")({"a": None, "b": 1.0}) is None
