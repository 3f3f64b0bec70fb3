"""A paper's claims as data: the statement, how it is checked, and the one rule that decides it.

Each paper module (``rcstudy.papers.<paper>``) declares ``CLAIMS`` (the paper's claims, counted on
the scorecard) and ``CHECKS`` (checks of ours: the data, the loader, a sanity check; judged and
shown, never counted), each a list of :class:`ClaimSpec`. A spec's :class:`Rule` reads named
*evidence*: :class:`~rcstudy.stats.Interval` values, or mappings of them (one per system,
ablation, ...); a plain number stands for a zero-width interval (a published number, an exact
count).

**One verdict rule.** Every rule compares intervals as wholes, never one bound as a number (a
reference is a name, and ``"x.low"`` is an error when the rule is built):

* a claimed *difference* (:class:`Above`, :class:`Below`, :class:`Higher`) holds when the whole
  interval is on the claimed side of its line, does not hold when none of it is, and otherwise
  has no verdict;
* a claimed *absence of difference* — no gain, near chance, the same level (:class:`Equivalent`)
  — is a TOST equivalence test at level :data:`ALPHA` on each side: it holds when the whole 90%
  interval lies inside the margin the spec declares (with the paper's words that justify it in
  ``margin_why``), does not hold when the interval lies wholly outside it, and otherwise has no
  verdict. A smaller sample makes it harder to pass, never easier.

A missing verdict is *underpowered* (power below :data:`TARGET_POWER` for the paper's effect,
with the items needed, or not known to reach it: "underpowered (power not computed)", where the
paper gives no number to size a difference with) or *inconclusive* (power at or above it); see
:class:`Power`. A claim of no effect that the paper states without a number is sized at the
claim itself: its power is that of TOST when the truth is no effect (the target).

**Controls.** Every spec carries ``paper`` (the positive control: the paper's own published
numbers only, the table and row named; a direction the paper states without a number is
:data:`STATED_UP` / :data:`STATED_DOWN` and is never sized) and ``null`` (the negative control:
the evidence a system with no skill would produce — chance accuracy with the sampling noise of
the chapter's n, the empty or trivial prediction, a zero difference with noise; for a claim of
no effect, a system that shows a clear effect). The rule must hold on ``paper`` and must not
hold on ``null`` (a test checks every spec of every paper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from statistics import NormalDist
from typing import Any, Callable, Iterator, Mapping, Sequence, Union

from .stats import Interval, MeanSD

#: A rule's raw outcome: True (holds), False (does not hold), None (no verdict).
Outcome = Union[bool, None]
Ref = Union[str, float, int]


class Verdict(str, Enum):
    """What a checked claim is reported as (the scorecard counts each)."""

    HOLDS = "holds"
    DOES_NOT_HOLD = "does not hold"
    UNDERPOWERED = "underpowered"
    INCONCLUSIVE = "inconclusive"
    AT_CHANCE = "model at chance"
    NOT_TESTABLE = "not testable here"

    def __str__(self) -> str:
        return self.value


#: The verdicts in the order the scorecard shows them.
VERDICT_ORDER = tuple(v.value for v in Verdict)
#: No verdict, and no power could be computed (the paper gives no number for the effect): not
#: shown to be a test that could have reached a verdict, so it counts as underpowered.
UNDERPOWERED_UNSIZED = "underpowered (power not computed)"
#: The truth an unsized claim of no effect is sized at: the claim itself.
NO_EFFECT = "no effect, as the claim states"

#: Stand-ins for a direction the paper states without a number: they calibrate the rule on the
#: paper's side of the line, and are never used to size a power calculation.
STATED_UP, STATED_DOWN = math.inf, -math.inf


class MissingEvidence(KeyError):
    """A rule asked for evidence the pipeline did not supply."""


def combine(outcomes: Sequence[Outcome]) -> Outcome:
    """All of several outcomes: False if any is False, else None if any is None, else True."""
    outcomes = list(outcomes)
    return False if False in outcomes else None if None in outcomes or not outcomes else True


def check_ref(ref: Ref) -> Ref:
    """A reference is a name or a number: ``"x.low"`` and the like are refused (a rule compares an
    interval as a whole, never one of its bounds as a number)."""
    if isinstance(ref, bool) or not isinstance(ref, (str, int, float)):
        raise TypeError(f"a reference is a name or a number, not {ref!r}")
    if isinstance(ref, str) and (not ref or "." in ref):
        raise ValueError(f"reference {ref!r}: a rule reads whole intervals by name; bounds and fields "
                         "('x.low', 'x.high', 'x.estimate') cannot be referenced")
    return ref


def resolve(ref: Ref, evidence: Mapping[str, Any]) -> Any:
    """The evidence a reference names (a number stands for itself)."""
    if not isinstance(ref, str):
        return float(ref)
    if ref not in evidence:
        raise MissingEvidence(ref)
    return evidence[ref]


def as_interval(value: Any) -> Interval:
    """An interval; a number (a published value, an exact count) is a zero-width one. A mean ± sd
    over seeds is not an interval of the quantity and is refused."""
    if isinstance(value, Interval):
        return value
    if isinstance(value, MeanSD):
        raise TypeError("a mean ± sd over seeds is not an interval: bootstrap the items instead")
    v = float(value)
    return Interval(v, v, v, 0.95)


def line_value(value: Any) -> float:
    """A line a rule compares with: a number (an interval here would be a comparison of two
    intervals, which is :class:`Higher`)."""
    if isinstance(value, (Interval, MeanSD, Mapping)):
        raise TypeError(f"a line is a number, not {type(value).__name__}: compare two intervals with Higher")
    return float(value)


_NORMAL = NormalDist()


def rescale(iv: Interval, level: float) -> Interval:
    """The interval at another level, each side scaled by the ratio of normal quantiles (the
    bootstrap's asymmetry is kept)."""
    if abs(iv.level - level) < 1e-9 or iv.high == iv.low:
        return Interval(iv.estimate, iv.low, iv.high, level, iv.n)
    f = _NORMAL.inv_cdf((1 + level) / 2) / _NORMAL.inv_cdf((1 + iv.level) / 2)
    return Interval(iv.estimate, iv.estimate - f * (iv.estimate - iv.low), iv.estimate + f * (iv.high - iv.estimate),
                    level, iv.n)


def _entries(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(label, value) for a value or each entry of a mapping (nested mappings flattened)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _entries(v, f"{prefix}{k}: ")
    else:
        yield prefix, value


def _each(value: Any, decide: Callable[[Interval], Outcome]) -> Outcome:
    """Apply ``decide`` to an interval, or to every interval of a mapping (all must hold)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        if not value:
            return None
        return combine([_each(v, decide) for v in value.values()])
    return decide(as_interval(value))


#: The level of the tests and the target power: a difference is tested two-sided at ALPHA (its 95%
#: interval), an equivalence by two one-sided tests at ALPHA each (TOST: its 90% interval).
ALPHA, TARGET_POWER = 0.05, 0.8
DIFFERENCE_LEVEL, EQUIVALENCE_LEVEL = 0.95, 0.90


@dataclass(frozen=True)
class Power:
    """Could our evidence have reached the verdict, if the truth were the paper's value?

    ``ours`` is our interval of the quantity, ``paper`` the paper's value of it (from the row
    ``source`` names) and ``line`` what the rule compares it with. For a difference rule (no
    ``margin``) it is the power of a two-sided test at level 0.05 to detect ``paper − line`` with
    our standard error (our interval's half-width over the normal quantile of its level); for an
    equivalence rule it is the power of TOST (one-sided tests at :data:`ALPHA`) to show the
    quantity inside ``line ± margin`` (``side``: "both", "upper" or "lower" bound only) when its
    true value is the paper's. ``n_needed`` scales our number of items by the square of the
    standard error that power :data:`TARGET_POWER` needs (None where our interval does not say
    how many items it rests on, or where no number of items suffices)."""

    ours: Interval
    paper: float
    line: float
    margin: float | None = None
    side: str = "both"
    source: str = ""

    @property
    def effect(self) -> float:
        return self.paper - self.line

    @property
    def se(self) -> float:
        return (self.ours.high - self.ours.low) / (2 * _NORMAL.inv_cdf((1 + self.ours.level) / 2))

    def at(self, se: float) -> float:
        """The power with standard error ``se``."""
        if not math.isfinite(se):
            return 0.0
        d = self.effect
        if self.margin is None:
            if se <= 0:
                return 1.0 if d else ALPHA
            z = abs(d) / se
            crit = _NORMAL.inv_cdf(1 - ALPHA / 2)  # two-sided at level ALPHA
            return _NORMAL.cdf(z - crit) + _NORMAL.cdf(-z - crit)
        m, z = self.margin, _NORMAL.inv_cdf(1 - ALPHA)
        if se <= 0:
            inside = {"both": abs(d) < m, "upper": d < m, "lower": d > -m}[self.side]
            return 1.0 if inside else 0.0
        upper = _NORMAL.cdf((m - d) / se - z)
        lower = _NORMAL.cdf((m + d) / se - z)
        return max(0.0, {"both": upper + lower - 1, "upper": upper, "lower": lower}[self.side])

    @property
    def power(self) -> float:
        return self.at(self.se)

    @property
    def adequate(self) -> bool:
        return self.power >= TARGET_POWER

    @property
    def n_needed(self) -> int | None:
        if self.ours.n is None or not math.isfinite(self.se) or self.se <= 0:
            return None
        if self.margin is None:
            if not self.effect:
                return None
            z = _NORMAL.inv_cdf(1 - ALPHA / 2) + _NORMAL.inv_cdf(TARGET_POWER)
            return max(1, math.ceil(self.ours.n * (z * self.se / abs(self.effect)) ** 2))
        if self.at(1e-9) < TARGET_POWER:
            return None  # the paper's value is outside (or on) the margin: no sample suffices
        lo, hi = 1e-9, self.se  # the largest standard error that gives TARGET_POWER, by bisection
        while self.at(hi) >= TARGET_POWER:
            lo, hi = hi, 2 * hi
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.at(mid) >= TARGET_POWER else (lo, mid)
        return max(1, math.ceil(self.ours.n * (self.se / lo) ** 2))

    def describe(self) -> str:
        what = (f"to show it within {self.line:g} ± {self.margin:g}" if self.margin is not None and self.side == "both"
                else f"to show it below {self.line + self.margin:g}" if self.margin is not None and self.side == "upper"
                else f"to show it above {self.line - self.margin:g}" if self.margin is not None
                else f"to detect the paper's {self.effect:+.1f} against {self.line:g}")
        if self.source == NO_EFFECT:
            return f"power {self.power:.2f} {what} if the truth were {self.paper:g}: {NO_EFFECT}"
        src = f" ({self.source})" if self.source else ""
        return f"power {self.power:.2f} {what} if the truth were the paper's {self.paper:g}{src}"


def weakest(powers: Sequence[Power | None]) -> Power | None:
    """The least powerful of several tests that must all succeed (None if none is computed)."""
    known = [p for p in powers if p is not None]
    return min(known, key=lambda p: p.power) if known else None


def _pairs(ours: Any, paper: Any, source: str = "") -> list[tuple[Interval, float, str]]:
    """(our interval, the paper's value, its row) triples: entry by entry where the paper has our
    keys, otherwise each of ours against every row of the paper's (the weakest test is kept, so no
    row the claim covers is dropped). A stated direction (infinite) is not a number to size with."""
    if ours is None or paper is None:
        return []
    if isinstance(ours, Mapping):
        if isinstance(paper, Mapping) and set(paper) >= set(ours):
            return [t for k, v in ours.items() for t in _pairs(v, paper[k], str(k))]
        return [t for v in ours.values() for t in _pairs(v, paper, source)]
    if not isinstance(ours, Interval):
        return []
    if isinstance(paper, Mapping):
        return [t for k, v in paper.items() for t in _pairs(ours, v, str(k))]
    p = paper.estimate if isinstance(paper, Interval) else float(paper)
    return [(ours, p, source)] if math.isfinite(p) else []


def _lookup(ref: Ref, evidence: Mapping[str, Any] | None) -> Any:
    if evidence is None:
        return None
    try:
        return resolve(ref, evidence)
    except MissingEvidence:
        return None


def _fmt(v: Any) -> str:
    return str(v) if isinstance(v, Interval) else f"{float(v):g}"


class Rule:
    """A declared check of evidence; ``describe()`` says it in words, ``explain(evidence)`` says
    what it compared and found."""

    def __call__(self, evidence: Mapping[str, Any]) -> Outcome:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def refs(self) -> list[Ref]:
        """Every reference the rule reads."""
        return []

    def quantities(self) -> list[str]:
        """The names of the quantities it compares as intervals (the lines are the other refs)."""
        return []

    def explain(self, evidence: Mapping[str, Any]) -> str:
        return self.describe()

    def power(self, evidence: Mapping[str, Any], paper: Mapping[str, Any] | None) -> Power | None:
        """How likely the check was to reach a verdict if the truth were the paper's (:class:`Power`);
        None where it cannot be computed. ``paper`` None: the paper gives no number to size with."""
        return None

    def walk(self) -> Iterator["Rule"]:
        yield self


def _word(outcome: Outcome) -> str:
    return {True: "holds", False: "does not hold", None: "no verdict"}[outcome]


@dataclass(frozen=True)
class _Side(Rule):
    """The 95% interval of ``value`` (each entry of a mapping) against the number ``line``."""

    value: str
    line: Ref = 0.0

    def __post_init__(self):
        check_ref(self.value), check_ref(self.line)
        if not isinstance(self.value, str):
            raise TypeError("the compared value must be named")

    above = True

    def _decide(self, line: float) -> Callable[[Interval], Outcome]:
        def decide(v: Interval) -> Outcome:
            v = rescale(v, DIFFERENCE_LEVEL) if v.level != DIFFERENCE_LEVEL else v
            if self.above:
                return True if v.low > line else False if v.high <= line else None
            return True if v.high < line else False if v.low >= line else None
        return decide

    def __call__(self, evidence):
        line = line_value(resolve(self.line, evidence))
        return _each(resolve(self.value, evidence), self._decide(line))

    def refs(self):
        return [self.value, self.line]

    def quantities(self):
        return [self.value]

    def describe(self):
        side = "above" if self.above else "below"
        line = self.line if isinstance(self.line, str) else f"{self.line:g}"
        return f"the whole 95% interval of {self.value} lies {side} {line} (no verdict if it contains it)"

    def explain(self, evidence):
        line = line_value(resolve(self.line, evidence))
        decide = self._decide(line)
        side = "above" if self.above else "below"
        parts = [f"{label}{_fmt(v)} {side} {line:g}? {_word(decide(as_interval(v)))}"
                 for label, v in _entries(resolve(self.value, evidence))]
        return f"{self.value}: " + "; ".join(parts)

    def power(self, evidence, paper):
        line = _lookup(self.line, evidence)
        if line is None:
            return None
        return weakest([Power(o, p, line_value(line), source=s)
                        for o, p, s in _pairs(_lookup(self.value, evidence), _lookup(self.value, paper))])


class Above(_Side):
    """The interval of ``value`` lies above ``line``: holds when the whole interval does, does not
    hold when none of it does, no verdict when it contains the line."""

    above = True


class Below(_Side):
    """The mirror of :class:`Above`."""

    above = False


@dataclass(frozen=True)
class Equivalent(Rule):
    """A claim of no effect: ``value`` is within ``margin`` of ``target`` (TOST at :data:`ALPHA`
    per side, i.e. its 90% interval). ``side="both"``: inside ``target ± margin``; ``"upper"``:
    below ``target + margin`` (no gain, non-superiority); ``"lower"``: above ``target − margin``
    (no loss, non-inferiority). Holds when the whole 90% interval lies inside, does not hold when
    it lies wholly outside, no verdict otherwise. ``margin_why`` quotes the paper's words that
    justify the margin (required)."""

    value: str
    target: Ref
    margin: float
    margin_why: str
    side: str = "both"

    def __post_init__(self):
        check_ref(self.value), check_ref(self.target)
        if self.side not in ("both", "upper", "lower"):
            raise ValueError("side is 'both', 'upper' or 'lower'")
        if not self.margin > 0:
            raise ValueError("an equivalence margin is positive")
        if not self.margin_why.strip():
            raise ValueError(f"{self.value}: an equivalence margin needs the paper's words that justify it")

    def _bounds(self, target: float) -> tuple[float, float]:
        lo = -math.inf if self.side == "upper" else target - self.margin
        hi = math.inf if self.side == "lower" else target + self.margin
        return lo, hi

    def _decide(self, target: float) -> Callable[[Interval], Outcome]:
        lo, hi = self._bounds(target)

        def decide(v: Interval) -> Outcome:
            v = rescale(v, EQUIVALENCE_LEVEL)
            if lo <= v.low and v.high <= hi:
                return True
            if v.high < lo or v.low > hi:
                return False
            return None
        return decide

    def __call__(self, evidence):
        target = line_value(resolve(self.target, evidence))
        return _each(resolve(self.value, evidence), self._decide(target))

    def refs(self):
        return [self.value, self.target]

    def quantities(self):
        return [self.value]

    def _region(self, target: float | None = None) -> str:
        t = self.target if target is None and isinstance(self.target, str) else f"{(target if target is not None else self.target):g}"
        return {"both": f"{t} ± {self.margin:g}", "upper": f"below {t} + {self.margin:g}",
                "lower": f"above {t} − {self.margin:g}"}[self.side]

    def describe(self):
        return (f"equivalence (TOST, 90% interval): the whole 90% interval of {self.value} lies {self._region()}"
                f" (margin: {self.margin_why}); wholly outside: does not hold; otherwise no verdict")

    def explain(self, evidence):
        target = line_value(resolve(self.target, evidence))
        decide = self._decide(target)
        parts = [f"{label}{rescale(as_interval(v), EQUIVALENCE_LEVEL)} (90%) within {self._region(target)}? "
                 f"{_word(decide(as_interval(v)))}" for label, v in _entries(resolve(self.value, evidence))]
        return f"{self.value}: " + "; ".join(parts)

    def power(self, evidence, paper):
        """TOST's power at the paper's value; with no paper number (``paper`` None: an unsized claim),
        at the claim itself, no effect (the target): the usual sizing of an equivalence test."""
        target = _lookup(self.target, evidence)
        if target is None:
            return None
        truth = _lookup(self.value, paper) if paper is not None else line_value(target)
        source = "" if paper is not None else NO_EFFECT
        return weakest([Power(rescale(o, EQUIVALENCE_LEVEL), p, line_value(target), self.margin, self.side, s)
                        for o, p, s in _pairs(_lookup(self.value, evidence), truth, source)])


@dataclass(frozen=True)
class Higher(Rule):
    """The 95% interval ``left`` lies above the 95% interval ``right``: holds when its lower end is
    above the other's upper end, does not when its upper end is below the other's lower end, no
    verdict when they overlap. A mapping on the right must be cleared entry by entry."""

    left: str
    right: str

    def __post_init__(self):
        check_ref(self.left), check_ref(self.right)

    @staticmethod
    def _decide(left: Interval) -> Callable[[Interval], Outcome]:
        def decide(other: Interval) -> Outcome:
            return True if left.low > other.high else False if left.high < other.low else None
        return decide

    def __call__(self, evidence):
        left, right = resolve(self.left, evidence), resolve(self.right, evidence)
        if left is None:
            return None
        return _each(right, self._decide(as_interval(left)))

    def refs(self):
        return [self.left, self.right]

    def quantities(self):
        return [self.left, self.right]

    def describe(self):
        return f"the 95% interval of {self.left} lies above that of {self.right} (no verdict if they overlap)"

    def explain(self, evidence):
        left = as_interval(resolve(self.left, evidence))
        decide = self._decide(left)
        return f"{self.left} {left} above " + "; ".join(
            f"{label}{_fmt(v)}? {_word(decide(as_interval(v)))}" for label, v in _entries(resolve(self.right, evidence)))

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
            effect = as_interval(paper_left).estimate - as_interval(paper_other).estimate
            if math.isfinite(effect):
                tests.append(Power(Interval(diff, diff - half, diff + half, left.level, n), effect, 0.0,
                                   source=f"{self.left} − {key}" if key is not None else ""))
        return weakest(tests)


@dataclass(frozen=True)
class AllOf(Rule):
    """Every rule holds (:func:`combine`)."""

    rules: tuple[Rule, ...]

    def __call__(self, evidence):
        return combine([r(evidence) for r in self.rules])

    def describe(self):
        return " and ".join(r.describe() for r in self.rules)

    def refs(self):
        return [ref for r in self.rules for ref in r.refs()]

    def quantities(self):
        return [q for r in self.rules for q in r.quantities()]

    def explain(self, evidence):
        return " | ".join(r.explain(evidence) for r in self.rules)

    def power(self, evidence, paper):
        """The weakest of the parts that gave no verdict (the parts that did need no power)."""
        return weakest([r.power(evidence, paper) for r in self.rules if r(evidence) is None])

    def walk(self):
        yield self
        for r in self.rules:
            yield from r.walk()


@dataclass(frozen=True)
class IfGiven(Rule):
    """``rule`` where the evidence gives ``ref`` (not None); holds where it does not. For a check
    against a reference point of ours that the paper does not publish (an empty prediction's
    score): the paper's own evidence then carries no such value, and the check does not apply."""

    ref: str
    rule: Rule

    def __post_init__(self):
        check_ref(self.ref)

    def __call__(self, evidence):
        if evidence.get(self.ref) is None:
            return True
        return self.rule(evidence)

    def describe(self):
        return f"{self.rule.describe()} (where {self.ref} is given)"

    def refs(self):
        return [self.ref, *self.rule.refs()]

    def quantities(self):
        return self.rule.quantities()

    def explain(self, evidence):
        if evidence.get(self.ref) is None:
            return f"({self.ref} not given: not applied)"
        return self.rule.explain(evidence)

    def power(self, evidence, paper):
        if evidence.get(self.ref) is None:
            return None
        return self.rule.power(evidence, paper)

    def walk(self):
        yield self
        yield from self.rule.walk()


def chance_null(n: int, k: float = 4, *, level: float = 0.95) -> Interval:
    """The accuracy (%) of a system that guesses among ``k`` options on ``n`` items: 100/k with the
    normal half-width of a proportion at that level."""
    p = 1 / k
    half = _NORMAL.inv_cdf((1 + level) / 2) * math.sqrt(p * (1 - p) / n) * 100
    return Interval(100 * p, 100 * p - half, 100 * p + half, level, n)


def zero_null(n: int, sd: float = 50.0, *, center: float = 0.0, level: float = 0.95) -> Interval:
    """A difference (points) of ``center`` (no effect: 0) measured on ``n`` items whose per-item
    differences have standard deviation ``sd`` points (50: two coin-flip systems' disagreements)."""
    half = _NORMAL.inv_cdf((1 + level) / 2) * sd / math.sqrt(n)
    return Interval(center, center - half, center + half, level, n)


def _at_precision(null: Any, ours: Any) -> Any:
    """The null's value measured as precisely as ``ours``: each of our intervals moved to the null's
    centre, its widths kept (entries pair up by key; a single null entry stands for every one of
    ours). A null that cannot be paired with ours, or a number of ours, keeps the null as declared."""
    if isinstance(null, Mapping) and not (isinstance(ours, Mapping) and set(null) >= set(ours)):
        if len(null) != 1:
            return null
        null = next(iter(null.values()))
    if isinstance(ours, Mapping):
        return {k: _at_precision(null[k] if isinstance(null, Mapping) else null, v) for k, v in ours.items()}
    if isinstance(ours, Interval) and not isinstance(null, (Mapping, MeanSD)):
        c = as_interval(null).estimate
        return Interval(c, c - (ours.estimate - ours.low), c + (ours.high - ours.estimate), ours.level, ours.n)
    return null


@dataclass(frozen=True)
class ClaimSpec:
    """One claim of a paper (or one check of ours): what it says, how we check it, the rule, and
    the two controls.

    ``claim`` and ``test`` may name evidence of ``paper`` in braces (``"people score {human:.0f}%"``).
    ``paper`` is the positive control: the paper's own published numbers only (``source`` names the
    tables and rows); ``null`` the negative control, with ``null_what`` saying what system it is.
    ``sized=False``: the paper gives no number for the effect (its ``paper`` values stand for a
    direction, or another quantity), so they never size a power: a difference gets none, and a
    claim of no effect is sized at no effect (:meth:`Equivalent.power`). ``exact=True`` (checks
    only): the evidence is computed on all the data (a count, a table), with no sampling noise, so
    plain numbers are accepted as evidence. ``needs`` says what the chapter must compute for a verdict
    where it supplies less (shown when our evidence has no interval).
    """

    id: str
    claim: str
    test: str
    rule: Rule
    paper: Mapping[str, Any]
    null: Mapping[str, Any]
    null_what: str
    source: str = ""
    sized: bool = True
    exact: bool = False
    needs: str = ""

    def __post_init__(self):
        if not self.paper:
            raise ValueError(f"{self.id}: no paper evidence")
        if not self.null or not self.null_what:
            raise ValueError(f"{self.id}: no null (the evidence of a system with no skill)")
        if not self.source:
            raise ValueError(f"{self.id}: name the paper's tables and rows the paper evidence comes from")

    @property
    def equivalence(self) -> bool:
        return any(isinstance(r, Equivalent) for r in self.rule.walk())

    def statement(self) -> str:
        return self.claim.format(**self.paper)

    def how(self) -> str:
        return self.test.format(**self.paper)

    def judge(self, evidence: Mapping[str, Any] | None) -> Outcome:
        """The rule's outcome on ``evidence``; None when there is none (not testable here)."""
        if evidence is None:
            return None
        return self.rule(evidence)

    def points(self, evidence: Mapping[str, Any]) -> list[str]:
        """The compared quantities of ``evidence`` that are not intervals (a bare point, a mean ±
        sd): without an interval there is no verdict, unless the spec is ``exact``."""
        if self.exact:
            return []
        bare = []
        for name in dict.fromkeys(self.rule.quantities()):
            value = evidence.get(name)
            if value is None:
                continue
            if any(not isinstance(v, Interval) for _, v in _entries(value)):
                bare.append(name)
        return bare

    def null_at(self, evidence: Mapping[str, Any]) -> Mapping[str, Any]:
        """The negative control as this run would have measured it: each compared quantity of the
        null at the null's value with the widths of our intervals (a system with no skill, scored
        with our sampling noise), so its verdict speaks of this run's n, not the n the spec assumed."""
        out = dict(self.null)
        for name in dict.fromkeys(self.rule.quantities()):
            if name in self.null and evidence.get(name) is not None:
                out[name] = _at_precision(self.null[name], evidence[name])
        return out

    def power(self, evidence: Mapping[str, Any] | None) -> Power | None:
        """How likely our evidence was to reach the verdict if the truth were the paper's."""
        if evidence is None:
            return None
        return self.rule.power(evidence, self.paper if self.sized else None)


def by_id(specs: Sequence[ClaimSpec]) -> dict[str, ClaimSpec]:
    """Specs by id; a repeated id is an error."""
    out: dict[str, ClaimSpec] = {}
    for s in specs:
        if s.id in out:
            raise ValueError(f"claim {s.id!r} declared twice")
        out[s.id] = s
    return out


@dataclass(frozen=True)
class ClaimEvidence:
    """What a chapter found for one declared claim, before it is judged: ``evidence`` (named values,
    as the claim's rule reads them; None: the data here cannot test it), the same in words, and
    the trained rows it rests on, by name (the chapter knows whether each of them learned)."""

    id: str
    evidence: Mapping[str, Any] | None
    text: str
    rests_on: tuple[str, ...] = ()
