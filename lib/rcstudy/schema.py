"""How a setting is declared: :func:`param` (a field with its description and the range of its
numbers) and :func:`section` (a nested group of settings).

Engines declare their settings with these, so that a chapter's configuration can embed them as
sections; :mod:`rcstudy.config` reads, validates and merges values. This module is kept apart
from that machinery because a cached result's key covers the source of every module its engine
imports: a change to how parameters are read must not throw trained models away.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field, is_dataclass
from typing import Any


@dataclass(frozen=True)
class Range:
    """The numbers a field accepts (every number it holds: a list's items, a mapping's values)."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None

    def problem(self, value: float) -> str | None:
        """Why ``value`` is outside the range (None if it is inside)."""
        if not math.isfinite(value):
            return "a finite number"
        if self.ge is not None and value < self.ge:
            return f"a number >= {self.ge:g}"
        if self.gt is not None and value <= self.gt:
            return f"a number > {self.gt:g}"
        if self.le is not None and value > self.le:
            return f"a number <= {self.le:g}"
        return None


#: The numbers of a field that declares no range: counts, sizes, lengths, epochs and rates are
#: positive. A field that takes zero (a seed, a weight decay) or a bounded share declares its range.
POSITIVE = Range(gt=0)


def param(default: Any = MISSING, help: str = "", *, factory: Any = MISSING,
          ge: float | None = None, gt: float | None = None, le: float | None = None):
    """A config field with a one-line description (shown by ``rcstudy params``) and, for numbers,
    the range its values must lie in (checked before anything runs)."""
    if isinstance(default, (list, dict, set)):
        raise TypeError("use factory= (or a tuple) for a mutable default")
    if is_dataclass(default) and not isinstance(default, type):
        factory, default = (lambda d=default: d), MISSING
    declared = Range(ge=ge, gt=gt, le=le)
    return field(default=default, default_factory=factory,
                 metadata={"help": help, "range": declared if declared != Range() else POSITIVE})


def section(cls: type, help: str = ""):
    """A nested section whose defaults are its class's."""
    return field(default_factory=cls, metadata={"help": help})
