"""Claims as data: the rules' semantics, and every declared claim holds on the paper's own numbers."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rcstudy import papers
from rcstudy.claims import (AllOf, Above, AnyOf, Below, ClaimSpec, Compare, Higher, IfGiven, MissingEvidence, Not,
                            Power, Within, combine)
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


def test_compare_judges_an_interval_as_a_whole():
    # ReClor's "context adds a lot" (gain >= 5) with a gain of 4.0 [-0.2, 8.2]: the line is inside, no verdict
    assert Compare("gain", ">=", 5)({"gain": iv(4.0, -0.2, 8.2)}) is None
    assert Compare("gain", ">=", 5)({"gain": iv(7.0, 5.0, 9.0)}) is True
    assert Compare("gain", ">=", 5)({"gain": iv(2.0, 0.5, 4.9)}) is False
    assert Compare("gain", "<", 5)({"gain": iv(-2.8, -6.6, 0.8)}) is True
    margins = {"margins": {"fastText": iv(10.3, 6.4, 14.5), "minilm": iv(9.7, 5.9, 13.9)}}
    assert Compare("margins", ">=", 10)(margins) is None
    assert Compare("gain", ">=", 5)({"gain": 4.0}) is False  # a paper's number is a point
    assert Compare("gain", ">=", "other")({"gain": iv(4, 3, 5), "other": iv(3, 2, 4)}) is True  # points


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


def test_power_of_a_test_against_the_papers_effect():
    # se = half-width / 1.96 = 2: the paper's 10 points above chance are 5 se away
    strong = Power(Interval(30.0, 26.08, 33.92, 0.95, 400), paper=35.0, line=25.0)
    assert strong.se == pytest.approx(2.0, abs=1e-4) and strong.power == pytest.approx(0.9988, abs=1e-4)
    assert strong.adequate and strong.n_needed == 126  # 400 · (2.80 · 2 / 10)²
    # se = 10: the same effect is one se away, power 0.17; 400 · 2.80² items would give 0.8
    weak = Power(Interval(30.0, 10.4, 49.6, 0.95, 400), paper=35.0, line=25.0)
    assert weak.power == pytest.approx(0.170, abs=1e-3) and not weak.adequate
    assert weak.n_needed == 3140
    assert Power(Interval(30.0, 26.0, 34.0, 0.95), 35.0, 25.0).n_needed is None  # n unknown
    assert Power(Interval(30.0, 30.0, 30.0, 0.95, 10), 35.0, 25.0).power == 1.0  # no noise


def test_rules_compute_power_on_the_interval_they_compare():
    evidence, paper = {"acc": Interval(30.0, 10.4, 49.6, 0.95, 400)}, {"acc": 35.0}
    assert Above("acc", 25).power(evidence, paper).power == pytest.approx(0.170, abs=1e-3)
    assert Compare("acc.low", ">", 25).power(evidence, paper).effect == 10.0
    # a mapping: the weakest entry decides; the paper's keys are matched where they are the same
    drops = {"drops": {"a": Interval(8, 6.04, 9.96, 0.95, 300), "b": Interval(2, -18, 22, 0.95, 300)}}
    assert Above("drops").power(drops, {"drops": {"a": 6.0, "b": 3.0}}).paper == 3.0
    # two intervals: the difference of the paper's values, with both noises
    higher = Higher("x", "y").power({"x": Interval(40, 38, 42, 0.95, 100), "y": Interval(30, 28, 32, 0.95, 100)},
                                    {"x": 45.0, "y": 30.0})
    assert higher.effect == 15.0 and higher.ours.estimate == 10.0 and higher.ours.n == 100
    assert Within("acc", 0, 50).power(evidence, paper) is None  # no line to test against
    assert AllOf((Above("acc", 25), Above("acc", 0))).power(evidence, paper).line == 25


def test_a_claim_without_a_verdict_is_underpowered_or_inconclusive(monkeypatch):
    spec = ClaimSpec("beats-chance", "Beats chance.", "interval above 25", Above("acc", 25), paper={"acc": 35.0})
    monkeypatch.setattr(papers, "claims", lambda paper: [spec])
    log = ClaimLog("logiqa")
    weak = log.judge("beats-chance", {"acc": Interval(30.0, 10.4, 49.6, 0.95, 400)}, "30 [10, 50]")
    assert weak.verdict == "underpowered" and weak.n_needed == 3140 and weak.power == pytest.approx(0.17, abs=0.01)
    log = ClaimLog("logiqa")
    # enough power for the paper's 10 points, and still no verdict: the effect here is smaller
    flat = log.judge("beats-chance", {"acc": Interval(25.5, 23.5, 27.5, 0.95, 2000)}, "25.5 [23.5, 27.5]")
    assert flat.verdict == "inconclusive" and flat.n_needed is None and flat.power > 0.99
    log = ClaimLog("logiqa")
    assert log.judge("beats-chance", None, "no data").verdict == "not testable here"


def test_a_claim_of_no_effect_has_no_power_to_compute():
    assert Above("gap", 0).power({"gap": Interval(1.0, -3.0, 5.0, 0.95, 50)}, {"gap": 0.0}) is None


def test_a_claim_whose_paper_states_only_a_direction_has_no_power():
    paper = {"gain": 1.0}  # "+1 stands for the stated direction"
    evidence = {"gain": Interval(2.0, 0.5, 3.5, 0.95, 100)}
    sized = ClaimSpec("x", "it helps", "gain > 0", Compare("gain", ">", 0), paper)
    assert sized.power(evidence) is not None
    assert replace(sized, sized=False).power(evidence) is None and replace(sized, sized=False).judge(evidence)
