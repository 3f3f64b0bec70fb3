"""A paper's claims as data: the statement, how it is checked, and the rule that decides it.

Each paper module (``rcstudy.papers.<paper>``) declares ``CLAIMS``, a list of :class:`ClaimSpec`.
A spec's :class:`Rule` reads named *evidence*: numbers, :class:`~rcstudy.stats.Interval` or
:class:`~rcstudy.stats.MeanSD` values, or mappings of them (one per system, ablation, ...). The
chapter's pipeline supplies only the evidence (:meth:`rcstudy.report.ClaimLog.judge`); the rule
gives the verdict: True (holds), False (does not hold) or None (no verdict: an interval that
straddles the line, or evidence the data here cannot give).

Every spec also carries ``paper``: the same evidence computed from the paper's own published
numbers. Applied to it, the rule must say "holds" (a test checks each one): a rule that the
paper's own numbers do not satisfy does not encode what the paper says.

Evidence references are names, optionally with a field: ``"reader"``, ``"best.high"`` (an
interval's upper bound), ``"gap.estimate"``; a number stands for itself.

**Power.** A rule that compares an interval of ours with a line (chance, zero, a threshold) also
says how likely it was to reach a verdict: :meth:`Rule.power` asks whether a two-sided test at
level :data:`ALPHA`, with the noise of our interval, would detect the effect the paper reports
(the paper's own evidence, at the same name, minus the line) with power
:data:`TARGET_POWER`, and how many items would be needed if not (:class:`Power`). A claim
without a verdict is then *underpowered* (our data could not have decided it) or *inconclusive*
(it could have, and did not).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Callable, Mapping, Sequence, Union

from .stats import Interval, MeanSD

Verdict = Union[bool, None]
Ref = Union[str, float, int]

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


class MissingEvidence(KeyError):
    """A rule asked for evidence the pipeline did not supply."""


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """All of several verdicts: False if any is False, else None if any is None, else True."""
    verdicts = list(verdicts)
    return False if False in verdicts else None if None in verdicts or not verdicts else True


def point(value: Any) -> float:
    """The point estimate of a number, an interval or a mean ± sd."""
    if isinstance(value, Interval):
        return value.estimate
    if isinstance(value, MeanSD):
        return value.mean
    return float(value)


def resolve(ref: Ref, evidence: Mapping[str, Any]) -> Any:
    """The evidence a reference names: ``"x"``, ``"x.low"`` / ``"x.high"`` / ``"x.estimate"`` /
    ``"x.mean"``, or a number. A mapping of values resolves field-wise to a mapping."""
    if not isinstance(ref, str):
        return float(ref)
    name, _, attr = ref.partition(".")
    if name not in evidence:
        raise MissingEvidence(name)
    value = evidence[name]
    if not attr:
        return value
    if isinstance(value, Mapping):
        return {k: getattr(v, attr) for k, v in value.items()}
    return getattr(value, attr)


#: The level of the test, and the power it should have, in the power calculation.
ALPHA, TARGET_POWER = 0.05, 0.8
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Power:
    """Would a two-sided test at level :data:`ALPHA` detect the paper's effect with our noise?

    ``ours`` is our interval of the quantity, ``paper`` the paper's value of it and ``line`` what
    the rule compares it with; the effect is ``paper − line`` and the noise our interval's
    standard error (its half-width over the normal quantile of its level). ``n_needed`` scales
    our number of items by the square of the standard error that power :data:`TARGET_POWER`
    needs (None where our interval does not say how many items it rests on)."""

    ours: Interval
    paper: float
    line: float

    @property
    def effect(self) -> float:
        return self.paper - self.line

    @property
    def se(self) -> float:
        return (self.ours.high - self.ours.low) / (2 * _NORMAL.inv_cdf((1 + self.ours.level) / 2))

    @property
    def power(self) -> float:
        if not math.isfinite(self.se):
            return 0.0
        if self.se <= 0:
            return 1.0 if self.effect else ALPHA
        z = abs(self.effect) / self.se
        crit = _NORMAL.inv_cdf(1 - ALPHA / 2)
        return _NORMAL.cdf(z - crit) + _NORMAL.cdf(-z - crit)

    @property
    def adequate(self) -> bool:
        return self.power >= TARGET_POWER

    @property
    def n_needed(self) -> int | None:
        if self.ours.n is None or not self.effect or not math.isfinite(self.se):
            return None
        z = _NORMAL.inv_cdf(1 - ALPHA / 2) + _NORMAL.inv_cdf(TARGET_POWER)
        return max(1, math.ceil(self.ours.n * (z * self.se / abs(self.effect)) ** 2))


def weakest(powers: Sequence[Power | None]) -> Power | None:
    """The least powerful of several tests that must all succeed (None if none is computed)."""
    known = [p for p in powers if p is not None]
    return min(known, key=lambda p: p.power) if known else None


def _pairs(ours: Any, paper: Any) -> list[tuple[Interval, float]]:
    """(our interval, the paper's value) pairs: entry by entry where the paper has our keys,
    otherwise each of ours against every value of the paper's (the weakest test is kept)."""
    if ours is None or paper is None:
        return []
    if isinstance(ours, Mapping):
        if isinstance(paper, Mapping) and set(paper) >= set(ours):
            return [pair for k, v in ours.items() for pair in _pairs(v, paper[k])]
        return [pair for v in ours.values() for pair in _pairs(v, paper)]
    if not isinstance(ours, Interval):
        return []
    if isinstance(paper, Mapping):
        return [(ours, point(v)) for v in paper.values() if v is not None]
    return [(ours, point(paper))]


def _power(ours: Any, paper: Any, line: Any) -> Power | None:
    """The weakest test of our interval(s) against the paper's value(s) relative to ``line``."""
    if line is None or isinstance(line, Mapping):
        return None
    # the paper's value on the line: a claim of no effect, with no effect to detect
    return weakest([Power(o, p, point(line)) for o, p in _pairs(ours, paper) if p != point(line)])


def _interval_name(ref: Ref) -> Ref:
    """``"x.low"`` → ``"x"``: the interval a bound belongs to."""
    return ref.partition(".")[0] if isinstance(ref, str) else ref


def _lookup(ref: Ref, evidence: Mapping[str, Any]) -> Any:
    try:
        return resolve(ref, evidence)
    except (MissingEvidence, AttributeError):
        return None


class Rule:
    """A declared check of evidence; ``describe()`` says it in words."""

    def __call__(self, evidence: Mapping[str, Any]) -> Verdict:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def power(self, evidence: Mapping[str, Any], paper: Mapping[str, Any]) -> Power | None:
        """How likely the check was to detect the paper's effect with our noise (see :class:`Power`);
        None where the rule does not compare an interval of ours with a line."""
        return None


def _each(value: Any, decide: Callable[[Any], Verdict]) -> Verdict:
    """Apply ``decide`` to a value, or to every value of a mapping (all must hold)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return combine([_each(v, decide) for v in value.values()])
    return decide(value)


@dataclass(frozen=True)
class Compare(Rule):
    """``left op right``. An interval of ours against a number holds when the whole interval
    satisfies it, does not hold when none of it does, and gives no verdict when the line lies
    inside it (as :class:`Above`); other values compare as points (the paper's numbers, a mean ±
    sd; ``"x.low"`` / ``"x.high"`` pick one bound). A mapping on either side must satisfy it
    entry by entry."""

    left: Ref
    op: str
    right: Ref

    def __post_init__(self):
        if self.op not in _OPS:
            raise ValueError(f"op must be one of {', '.join(_OPS)}")

    def __call__(self, evidence):
        left, right = resolve(self.left, evidence), resolve(self.right, evidence)
        if right is None:
            return None
        if isinstance(right, Mapping):
            return combine([Compare(self.left, self.op, k)({**evidence, k: v}) for k, v in right.items()])
        compare, line = _OPS[self.op], point(right)

        def decide(v):
            if isinstance(v, Interval) and not isinstance(right, Interval):
                bounds = [compare(v.low, line), compare(v.high, line)]
                return True if all(bounds) else False if not any(bounds) else None
            return bool(compare(point(v), line))
        return _each(left, decide)

    def describe(self):
        return f"{self.left} {self.op} {self.right}"

    def power(self, evidence, paper):
        name = _interval_name(self.left)
        return _power(_lookup(name, evidence), _lookup(name, paper), _lookup(self.right, evidence))


@dataclass(frozen=True)
class Within(Rule):
    """``low <= value <= high`` for the value (every value of a mapping)."""

    value: Ref
    low: float
    high: float

    def __call__(self, evidence):
        return _each(resolve(self.value, evidence), lambda v: bool(self.low <= point(v) <= self.high))

    def describe(self):
        return f"{self.low} <= {self.value} <= {self.high}"


@dataclass(frozen=True)
class Above(Rule):
    """An interval above ``threshold`` holds, one below it does not, one that contains it gives no
    verdict; a plain number is compared directly (the paper's own point estimates)."""

    value: Ref
    threshold: float = 0.0

    def __call__(self, evidence):
        def decide(v):
            if isinstance(v, Interval):
                return True if v.low > self.threshold else False if v.high < self.threshold else None
            return bool(point(v) > self.threshold)
        return _each(resolve(self.value, evidence), decide)

    def describe(self):
        return f"the 95% interval of {self.value} lies above {self.threshold:g} (no verdict if it contains it)"

    def power(self, evidence, paper):
        return _power(_lookup(self.value, evidence), _lookup(self.value, paper), self.threshold)


@dataclass(frozen=True)
class Below(Rule):
    """The mirror of :class:`Above`."""

    value: Ref
    threshold: float = 0.0

    def __call__(self, evidence):
        def decide(v):
            if isinstance(v, Interval):
                return True if v.high < self.threshold else False if v.low > self.threshold else None
            return bool(point(v) < self.threshold)
        return _each(resolve(self.value, evidence), decide)

    def describe(self):
        return f"the 95% interval of {self.value} lies below {self.threshold:g} (no verdict if it contains it)"

    def power(self, evidence, paper):
        return _power(_lookup(self.value, evidence), _lookup(self.value, paper), self.threshold)


def _bounds(value: Any) -> tuple[float, float]:
    """An interval's bounds; a point value is a zero-width interval."""
    if isinstance(value, Interval):
        return value.low, value.high
    return point(value), point(value)


@dataclass(frozen=True)
class Higher(Rule):
    """The interval ``left`` lies above the interval ``right``: holds when its lower end is above
    the other's upper end, does not when its upper end is below the other's lower end, and gives
    no verdict when the two overlap. A mapping on the right must be cleared entry by entry (one
    entry above ``left`` is enough for "does not hold"); a point value is a zero-width interval."""

    left: Ref
    right: Ref

    def __call__(self, evidence):
        left, right = resolve(self.left, evidence), resolve(self.right, evidence)
        if left is None:
            return None
        low, high = _bounds(left)

        def decide(other):
            other_low, other_high = _bounds(other)
            return True if low > other_high else False if high < other_low else None
        return _each(right, decide)

    def describe(self):
        return f"the 95% interval of {self.left} lies above that of {self.right} (no verdict if they overlap)"

    def power(self, evidence, paper):
        """The difference left − right against zero; our two intervals' noises add (independent)."""
        left, right = _lookup(self.left, evidence), _lookup(self.right, evidence)
        paper_left, paper_right = _lookup(self.left, paper), _lookup(self.right, paper)
        if not isinstance(left, Interval) or paper_left is None or paper_right is None:
            return None
        others = right.items() if isinstance(right, Mapping) else [(None, right)]
        tests = []
        for key, other in others:
            if not isinstance(other, Interval):
                continue
            paper_other = paper_right.get(key) if isinstance(paper_right, Mapping) else paper_right
            if paper_other is None:
                continue
            half = math.hypot(left.high - left.low, other.high - other.low) / 2
            n = min(x for x in (left.n, other.n) if x is not None) if (left.n or other.n) else None
            diff = left.estimate - other.estimate
            tests.append(Power(Interval(diff, diff - half, diff + half, left.level, n),
                               point(paper_left) - point(paper_other), 0.0))
        return weakest(tests)


@dataclass(frozen=True)
class AllOf(Rule):
    """Every rule holds (:func:`combine`)."""

    rules: tuple[Rule, ...]

    def __call__(self, evidence):
        return combine([r(evidence) for r in self.rules])

    def describe(self):
        return " and ".join(r.describe() for r in self.rules)

    def power(self, evidence, paper):
        return weakest([r.power(evidence, paper) for r in self.rules])


@dataclass(frozen=True)
class AnyOf(Rule):
    """At least one rule holds: True if any is True, else None if any is None, else False."""

    rules: tuple[Rule, ...]

    def __call__(self, evidence):
        verdicts = [r(evidence) for r in self.rules]
        return True if True in verdicts else None if None in verdicts else False

    def describe(self):
        return " or ".join(r.describe() for r in self.rules)

    def power(self, evidence, paper):
        known = [p for p in (r.power(evidence, paper) for r in self.rules) if p is not None]
        return max(known, key=lambda p: p.power) if known else None


@dataclass(frozen=True)
class Not(Rule):
    """The opposite verdict (no verdict stays no verdict)."""

    rule: Rule

    def __call__(self, evidence):
        v = self.rule(evidence)
        return None if v is None else not v

    def describe(self):
        return f"not ({self.rule.describe()})"

    def power(self, evidence, paper):
        return self.rule.power(evidence, paper)


@dataclass(frozen=True)
class IfGiven(Rule):
    """``rule`` where the evidence gives ``ref`` (not None); holds where it does not. For a check
    against a reference point of ours that the paper does not publish (an empty prediction's
    score): the paper's own evidence then carries no such value, and the check does not apply."""

    ref: str
    rule: Rule

    def __call__(self, evidence):
        if evidence.get(self.ref.partition(".")[0]) is None:
            return True
        return self.rule(evidence)

    def describe(self):
        return f"{self.rule.describe()} (where {self.ref} is given)"

    def power(self, evidence, paper):
        if evidence.get(self.ref.partition(".")[0]) is None:
            return None
        return self.rule.power(evidence, paper)


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a paper: what it says, how we check it, the rule, and the paper's own evidence.

    ``claim`` and ``test`` may name evidence of ``paper`` in braces (``"people score {human:.0f}%"``).
    ``sized=False`` says that ``paper``'s values only stand for a direction the paper states without
    a number (or measure another quantity): they calibrate the rule, but there is no effect size
    to compute power against.
    """

    id: str
    claim: str
    test: str
    rule: Rule
    paper: Mapping[str, Any] = field(default_factory=dict)
    sized: bool = True

    def statement(self) -> str:
        return self.claim.format(**self.paper)

    def how(self) -> str:
        return self.test.format(**self.paper)

    def judge(self, evidence: Mapping[str, Any] | None) -> Verdict:
        """The rule's verdict on ``evidence``; None when there is none (not testable here)."""
        if evidence is None:
            return None
        return self.rule(evidence)

    def power(self, evidence: Mapping[str, Any] | None) -> Power | None:
        """How likely our evidence was to detect the paper's effect (:meth:`Rule.power`)."""
        if evidence is None or not self.sized:
            return None
        return self.rule.power(evidence, self.paper)


def by_id(specs: Sequence[ClaimSpec]) -> dict[str, ClaimSpec]:
    """Specs by id; a repeated id is an error."""
    out: dict[str, ClaimSpec] = {}
    for s in specs:
        if s.id in out:
            raise ValueError(f"claim {s.id!r} declared twice")
        out[s.id] = s
    return out
