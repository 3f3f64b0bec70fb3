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
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
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


class Rule:
    """A declared check of evidence; ``describe()`` says it in words."""

    def __call__(self, evidence: Mapping[str, Any]) -> Verdict:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def _each(value: Any, decide: Callable[[Any], Verdict]) -> Verdict:
    """Apply ``decide`` to a value, or to every value of a mapping (all must hold)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return combine([_each(v, decide) for v in value.values()])
    return decide(value)


@dataclass(frozen=True)
class Compare(Rule):
    """``left op right`` on point values (use ``"x.low"`` / ``"x.high"`` to compare interval
    bounds). A mapping on either side must satisfy it entry by entry."""

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
        return _each(left, lambda v: bool(_OPS[self.op](point(v), point(right))))

    def describe(self):
        return f"{self.left} {self.op} {self.right}"


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


@dataclass(frozen=True)
class AllOf(Rule):
    """Every rule holds (:func:`combine`)."""

    rules: tuple[Rule, ...]

    def __call__(self, evidence):
        return combine([r(evidence) for r in self.rules])

    def describe(self):
        return " and ".join(r.describe() for r in self.rules)


@dataclass(frozen=True)
class AnyOf(Rule):
    """At least one rule holds: True if any is True, else None if any is None, else False."""

    rules: tuple[Rule, ...]

    def __call__(self, evidence):
        verdicts = [r(evidence) for r in self.rules]
        return True if True in verdicts else None if None in verdicts else False

    def describe(self):
        return " or ".join(r.describe() for r in self.rules)


@dataclass(frozen=True)
class Not(Rule):
    """The opposite verdict (no verdict stays no verdict)."""

    rule: Rule

    def __call__(self, evidence):
        v = self.rule(evidence)
        return None if v is None else not v

    def describe(self):
        return f"not ({self.rule.describe()})"


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


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a paper: what it says, how we check it, the rule, and the paper's own evidence.

    ``claim`` and ``test`` may name evidence of ``paper`` in braces (``"people score {human:.0f}%"``).
    """

    id: str
    claim: str
    test: str
    rule: Rule
    paper: Mapping[str, Any] = field(default_factory=dict)

    def statement(self) -> str:
        return self.claim.format(**self.paper)

    def how(self) -> str:
        return self.test.format(**self.paper)

    def judge(self, evidence: Mapping[str, Any] | None) -> Verdict:
        """The rule's verdict on ``evidence``; None when there is none (not testable here)."""
        if evidence is None:
            return None
        return self.rule(evidence)


def by_id(specs: Sequence[ClaimSpec]) -> dict[str, ClaimSpec]:
    """Specs by id; a repeated id is an error."""
    out: dict[str, ClaimSpec] = {}
    for s in specs:
        if s.id in out:
            raise ValueError(f"claim {s.id!r} declared twice")
        out[s.id] = s
    return out
