"""Claims as data: one verdict rule for every claim, and every declared spec holds on the paper's own
numbers (the positive control) and does not hold on a system with no skill (the negative control)."""

from __future__ import annotations

import math

import pytest

from rcstudy import papers
from rcstudy.claims import (UNDERPOWERED_UNSIZED, STATED_UP, AllOf, Above, Below, ClaimSpec, Equivalent, Higher,
                            IfGiven, MissingEvidence, Power, Verdict, chance_null, combine, rescale, zero_null)
from rcstudy.report import CHECK, ClaimLog
from rcstudy.stats import Interval, MeanSD


def iv(estimate, low, high, n=None, level=0.95):
    return Interval(estimate, low, high, level, n)


def spec(id="c", rule=None, paper=None, null=None, **kw):
    return ClaimSpec(id, "It holds.", "the rule", rule or Above("acc", 25), paper=paper or {"acc": 35.0},
                     null=null or {"acc": chance_null(400)}, null_what="a guesser", source="Table 1", **kw)


# --------------------------------------------------------------------------- the rules


def test_difference_rules_judge_the_whole_interval():
    assert Above("d")({"d": iv(3, 1, 5)}) is True
    assert Above("d")({"d": iv(-3, -5, -1)}) is False
    assert Above("d")({"d": iv(1, -1, 3)}) is None
    assert Below("acc", 25)({"acc": iv(20, 18, 24)}) is True
    assert Below("acc", "chance")({"acc": iv(26, 24, 28), "chance": 25.0}) is None
    assert Above("d")({"d": 0.4}) is True  # a paper's number is a zero-width interval
    # ReClor's "context adds a lot" with a gain of 4.0 [-0.2, 8.2]: no verdict, whatever the line
    assert Above("gain", 0)({"gain": iv(4.0, -0.2, 8.2)}) is None
    margins = {"margins": {"fastText": iv(10.3, 6.4, 14.5), "minilm": iv(9.7, -0.9, 13.9)}}
    assert Above("margins", 0)(margins) is None
    with pytest.raises(MissingEvidence):
        Above("nothing", 1)({})


def test_no_rule_can_name_a_bound():
    for make in (lambda: Above("best.high", 25), lambda: Below("x", "human.low"), lambda: Higher("a.low", "b"),
                 lambda: Equivalent("x.estimate", 0, 1, "why"), lambda: IfGiven("x.high", Above("x"))):
        with pytest.raises(ValueError, match="bounds"):
            make()
    with pytest.raises(TypeError, match="a line is a number"):  # a line that is an interval is a Higher
        Above("a", "b")({"a": iv(3, 2, 4), "b": iv(1, 0, 2)})


def _rules(rule):
    yield from rule.walk()


SPECS = [(paper, kind, s) for paper in papers.PAPERS
         for kind, specs in (("claim", papers.claims(paper)), ("check", papers.checks(paper))) for s in specs]
IDS = [f"{p}:{k}:{s.id}" for p, k, s in SPECS]


@pytest.mark.parametrize("paper, kind, spec", SPECS, ids=IDS)
def test_no_declared_rule_compares_a_bare_bound(paper, kind, spec):
    for r in _rules(spec.rule):
        for ref in r.refs():
            assert not (isinstance(ref, str) and "." in ref), f"{spec.id} reads {ref!r}"


def test_equivalence_is_tost_on_the_90_percent_interval():
    rule = Equivalent("gap", 0.0, 5.0, "the paper's words")
    # 95% interval [-4, 4.4]: its 90% interval is inside ±5
    assert rule({"gap": iv(0.2, -4.0, 4.4)}) is True
    assert rescale(iv(0.0, -1.96, 1.96), 0.90).high == pytest.approx(1.645, abs=1e-3)
    assert rule({"gap": iv(0.0, -8.0, 8.0)}) is None  # too wide: a small sample cannot pass
    assert rule({"gap": iv(12.0, 8.0, 16.0)}) is False  # wholly outside the margin
    assert rule({"gap": 3.0}) is True and rule({"gap": 6.0}) is False  # points: the paper's numbers
    upper = Equivalent("gain", 0.0, 5.0, "why", side="upper")
    assert upper({"gain": iv(-9.0, -12.0, -6.0)}) is True and upper({"gain": iv(7, 5.5, 9)}) is False
    lower = Equivalent("diff", 0.0, 2.0, "why", side="lower")
    assert lower({"diff": iv(9.0, 1.0, 17.0)}) is True and lower({"diff": iv(-9, -15, -3)}) is False
    with pytest.raises(ValueError, match="paper's words"):
        Equivalent("gap", 0.0, 5.0, " ")


def test_a_smaller_sample_never_makes_a_claim_of_no_effect_easier():
    rule = Equivalent("gap", 0.0, 3.0, "why")
    big, small = zero_null(4000, sd=50.0), zero_null(100, sd=50.0)
    assert rule({"gap": big}) is True and rule({"gap": small}) is None


def test_combinations_and_if_given():
    assert combine([True, None]) is None and combine([True, False, None]) is False and combine([True]) is True
    assert AllOf((Above("x"), Below("x", 10)))({"x": 5}) is True
    rule = IfGiven("empty", Above("over", 0))
    assert rule({"over": iv(5, 2, 8), "empty": 1.0}) is True and rule({"over": iv(5, 2, 8)}) is True
    assert rule({"over": iv(0, -2, 2), "empty": 1.0}) is None


def test_higher_compares_two_intervals():
    ev = {"a": iv(50, 45, 55), "others": {"b": iv(30, 25, 35), "c": iv(40, 35, 44)}}
    assert Higher("a", "others")(ev) is True
    assert Higher("a", "others")({**ev, "others": {"b": iv(30, 25, 35), "c": iv(50, 40, 60)}}) is None
    assert Higher("a", "others")({**ev, "others": {"b": iv(70, 60, 80), "c": iv(50, 40, 60)}}) is False


# --------------------------------------------------------------------------- every declared spec


@pytest.mark.parametrize("paper, kind, spec", SPECS, ids=IDS)
def test_every_spec_holds_on_the_papers_own_numbers(paper, kind, spec):
    """The positive control: a rule the paper's own published numbers do not satisfy does not encode
    what the paper says."""
    assert spec.source, f"{spec.id}: name the paper's tables and rows"
    assert spec.judge(spec.paper) is True
    spec.statement(), spec.how(), spec.rule.describe(), spec.rule.explain(spec.paper)


@pytest.mark.parametrize("paper, kind, spec", SPECS, ids=IDS)
def test_no_spec_holds_on_a_system_with_no_skill(paper, kind, spec):
    """The negative control: the evidence of a system with no skill (for a claim of no effect, of a
    system with a clear effect) must not pass the rule."""
    assert spec.null_what
    assert spec.judge(spec.null) is not True, f"{spec.id} holds for {spec.null_what}"
    spec.rule.explain(spec.null)


def _straddle(value, width=1e6):
    if isinstance(value, dict):
        return {k: _straddle(v, width) for k, v in value.items()}
    return Interval(0.0, -width, width, 0.95, 100)


@pytest.mark.parametrize("paper, kind, spec", SPECS, ids=IDS)
def test_an_interval_across_the_line_gets_no_verdict(paper, kind, spec):
    """Every compared quantity as an interval that straddles its line (or margin): no verdict."""
    evidence = {**spec.null, **{k: v for k, v in spec.paper.items() if k not in spec.null}}
    for name in spec.rule.quantities():
        evidence[name] = _straddle(evidence.get(name, 0.0))
    assert spec.judge(evidence) is None


@pytest.mark.parametrize("paper, kind, spec", SPECS, ids=IDS)
def test_equivalence_claims_declare_their_margin_and_points_are_not_evidence(paper, kind, spec):
    for r in _rules(spec.rule):
        if isinstance(r, Equivalent):
            assert r.margin > 0 and len(r.margin_why) > 20
    if kind == "claim":
        assert not spec.exact, "only checks of ours may take exact numbers as evidence"
        bare = {name: 1.0 for name in spec.rule.quantities()}
        assert spec.points(bare), f"{spec.id}: a bare point must not get a verdict"


@pytest.mark.parametrize("paper", papers.PAPERS)
def test_claims_and_checks_are_apart(paper):
    claims, checks = {s.id for s in papers.claims(paper)}, {s.id for s in papers.checks(paper)}
    assert claims and not claims & checks


def test_the_moved_claims_are_checks():
    assert {s.id for s in papers.checks("reclor")} >= {"table7-arithmetic", "table5-reproduced"}
    assert "answers-are-entities" in {s.id for s in papers.checks("record")}
    rule = {s.id for s in papers.claims("rule")}
    assert "subquestions-need-context" in {s.id for s in papers.checks("rule")}
    assert "consistency-far-below-mainq" not in rule and "consistency-below-human" in rule


# --------------------------------------------------------------------------- power


def test_power_of_a_test_against_the_papers_effect():
    # se = half-width / 1.96 = 2: the paper's 10 points above chance are 5 se away
    strong = Power(Interval(30.0, 26.08, 33.92, 0.95, 400), paper=35.0, line=25.0)
    assert strong.se == pytest.approx(2.0, abs=1e-4) and strong.power == pytest.approx(0.9988, abs=1e-4)
    assert strong.adequate and strong.n_needed == 126  # 400 · (2.80 · 2 / 10)²
    weak = Power(Interval(30.0, 10.4, 49.6, 0.95, 400), paper=35.0, line=25.0)
    assert weak.power == pytest.approx(0.170, abs=1e-3) and not weak.adequate and weak.n_needed == 3140
    assert Power(Interval(30.0, 26.0, 34.0, 0.95), 35.0, 25.0).n_needed is None  # n unknown


def test_power_of_tost():
    # se 1, truth 0, margin 3: both one-sided tests reject with probability Φ(3 − 1.645) each
    p = Power(Interval(0.0, -1.645, 1.645, 0.90, 100), paper=0.0, line=0.0, margin=3.0)
    assert p.se == pytest.approx(1.0, abs=1e-3) and p.power == pytest.approx(2 * 0.9123 - 1, abs=2e-3)
    assert p.n_needed is not None and p.n_needed < 100
    # the paper's value outside the margin: no sample suffices
    assert Power(Interval(0.0, -1.645, 1.645, 0.90, 100), paper=4.0, line=0.0, margin=3.0).n_needed is None
    upper = Power(Interval(0.0, -1.645, 1.645, 0.90, 100), paper=0.0, line=0.0, margin=3.0, side="upper")
    assert upper.power == pytest.approx(0.9123, abs=2e-3)


def test_power_keeps_every_paper_row_and_names_it():
    rule = Above("gain", 0)
    ours = {"gain": {"minilm": Interval(4.0, -0.2, 8.2, 0.95, 500)}}
    paper = {"gain": {"BERT_LARGE": 5.0, "XLNet_LARGE": 14.2}}
    p = rule.power(ours, paper)
    assert p.paper == 5.0 and p.source == "BERT_LARGE"  # the row on the old line is kept, and is the weakest
    assert Above("gain", 0).power(ours, {"gain": STATED_UP}) is None  # a direction is not an effect size
    eq = Equivalent("gain", 0.0, 5.0, "why", side="upper").power(ours, {"gain": {"a": 1.0, "b": 2.8}})
    assert eq.paper == 2.8 and eq.margin == 5.0 and eq.ours.level == pytest.approx(0.90)


# --------------------------------------------------------------------------- the claim log


def _log(monkeypatch, claims, checks=()):
    monkeypatch.setattr(papers, "claims", lambda paper: list(claims))
    monkeypatch.setattr(papers, "checks", lambda paper: list(checks))
    return ClaimLog("logiqa")


def test_the_log_reports_each_kind_of_verdict(monkeypatch):
    s = spec("beats-chance")
    log = _log(monkeypatch, [s, spec("b"), spec("c"), spec("d"), spec("e", sized=False), spec("f")])
    assert log.judge("beats-chance", {"acc": iv(40, 35, 45, 400)}, "40").verdict == Verdict.HOLDS
    assert log.judge("b", {"acc": iv(20, 18, 22, 400)}, "20").verdict == "does not hold"
    weak = log.judge("c", {"acc": iv(30.0, 10.4, 49.6, 400)}, "30 [10, 50]")
    assert weak.verdict == "underpowered" and weak.n_needed == 3140 and "35" in weak.power_from
    flat = log.judge("d", {"acc": iv(25.5, 23.5, 27.5, 2000)}, "25.5")
    assert flat.verdict == "inconclusive" and flat.n_needed is None and flat.power > 0.99
    unsized = log.judge("e", {"acc": iv(25.5, 23.5, 27.5, 2000)}, "25.5")
    # a difference the paper states without a number: no power, so not shown to be able to reach a verdict
    assert unsized.verdict == UNDERPOWERED_UNSIZED and unsized.kind == "underpowered" and unsized.power is None
    point = log.judge("f", {"acc": 40.0}, "40")
    assert point.verdict == "not testable here" and "no interval" in point.evidence
    assert [c.kind for c in log.claims] == ["holds", "does not hold", "underpowered", "inconclusive", "underpowered",
                                            "not testable here"]
    assert all("does not hold" in c.null or "no verdict" in c.null for c in log.claims)
    held = log.claims[0]
    assert held.power is None and "35" not in held.power_from  # power only where a verdict is missing


def test_checks_are_logged_apart_and_escaped(monkeypatch):
    check = spec("data", rule=Above("n", 99), paper={"n": 100.0}, null={"n": 50.0}, exact=True)
    log = _log(monkeypatch, [spec("x")], [check])
    log.judge("data", {"n": 100.0}, "<b>100%</b>")
    log.judge("x", {"acc": iv(40, 35, 45, 400)}, "40")
    assert [c.id for c in log.claims] == ["x"] and [c.id for c in log.checks] == ["data"]
    assert log.checks[0].scope == CHECK and log.checks[0].verdict == "holds"
    page = log._repr_html_()
    assert "<b>100%</b>" not in page and "&lt;b&gt;100%&lt;/b&gt;" in page and "Our checks" in page
    assert "a guesser" in page and "Rule:" in page and "Compared:" in page
    assert len(log._repr_json_()["claims"]) == 2


def test_a_mean_sd_is_not_an_interval(monkeypatch):
    log = _log(monkeypatch, [spec("x")])
    assert log.judge("x", {"acc": MeanSD(40, 2, 3)}, "40 ± 2").verdict == "not testable here"


def test_a_log_with_a_bound_rule_cannot_be_built():
    with pytest.raises(ValueError):
        spec(rule=Above("acc.low", 25))
    assert math.isinf(STATED_UP)


def test_an_unsized_claim_of_no_effect_is_sized_at_no_effect(monkeypatch):
    """The paper says "no trend" without a number: TOST's power is taken at the claim itself (a true
    value on the target), from our standard error; a paper stand-in never sizes it."""
    flat = Equivalent("spread", 0.0, 11.2, "the smallest gap the paper calls large", side="upper")
    s = spec("no-trend", rule=flat, paper={"spread": 0.0}, null={"spread": iv(25, 20, 30)}, sized=False)
    log = _log(monkeypatch, [s, spec("wide", rule=flat, paper={"spread": 0.0}, null={"spread": iv(25, 20, 30)},
                                     sized=False)])
    tight = log.judge("no-trend", {"spread": iv(8.0, 3.0, 13.0, 950)}, "8 [3, 13]")  # 90%: about [3.8, 12.2]
    assert tight.holds is None and tight.verdict == "inconclusive" and tight.power >= 0.8
    assert "no effect, as the claim states" in tight.power_from and "paper's" not in tight.power_from
    wide = log.judge("wide", {"spread": iv(9.0, -3.0, 21.0, 100)}, "9 [-3, 21]")
    assert wide.verdict == "underpowered" and wide.power < 0.8 and wide.n_needed > 100
    # with no paper number at all, an equivalence rule is still sized at its target
    p = flat.power({"spread": iv(8.0, 3.0, 13.0, 950)}, None)
    assert p.paper == 0.0 and p.effect == 0.0 and p.margin == 11.2


def test_the_null_is_measured_as_precisely_as_our_evidence(monkeypatch):
    """The negative control on the page has this run's noise: a guesser's accuracy with the widths of
    each of our intervals. A run too small to tell a guesser from chance says so; one big enough
    shows the guesser failing."""
    s = spec("beats-chance", rule=Above("acc", 25), null={"acc": {"a guesser": chance_null(400)}})
    ours = {"acc": {"A": iv(40, 36, 44, 400), "B": iv(30, 10, 50, 4)}}
    null = s.null_at(ours)["acc"]
    assert set(null) == {"A", "B"} and null["A"].estimate == null["B"].estimate == 25.0
    assert (null["A"].low, null["A"].high, null["B"].low, null["B"].high) == (21, 29, 5, 45)
    assert s.judge(s.null_at(ours)) is None  # the guesser straddles chance on both
    keyed = spec("k", rule=Above("gap", 0), paper={"gap": {"x": 5.0, "y": 6.0}},
                 null={"gap": {"x": 0.0, "y": 0.0}})
    assert keyed.null_at({"gap": {"x": iv(5, 1, 9)}})["gap"] == {"x": iv(0, -4, 4)}
    assert spec("p").null_at({"acc": 40.0}) == spec("p").null  # a number of ours: the null as declared
    log = _log(monkeypatch, [s])
    c = log.judge("beats-chance", ours, "A and B")
    assert "here with the widths of our intervals" in c.null and c.null.endswith("no verdict")
