"""The few record types every loader returns, so that models and metrics are dataset-agnostic."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class MCItem:
    """One multiple-choice reading-comprehension question.

    ``label`` is the index of the right option, or ``None`` where the labels are hidden
    (e.g. the official ReClor test set). ``meta`` carries dataset-specific fields
    (question type, reasoning-type flags, source file, ...).
    """

    id: str
    context: str
    question: str
    options: tuple[str, ...]
    label: int | None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.label is not None and not 0 <= self.label < len(self.options):
            raise ValueError(f"item {self.id}: label {self.label} outside {len(self.options)} options")

    @property
    def answer(self) -> str | None:
        return None if self.label is None else self.options[self.label]


@dataclass(frozen=True)
class Entity:
    """A candidate entity span in a cloze passage (``end`` exclusive, Python style)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class ClozeQuery:
    """One ReCoRD-style cloze query: fill ``@placeholder`` in ``query`` with a passage entity."""

    id: str
    passage: str
    query: str
    entities: tuple[Entity, ...]
    answers: tuple[str, ...]
    source: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def candidates(self) -> list[str]:
        """Distinct candidate strings in order of first appearance."""
        return list(dict.fromkeys(e.text for e in self.entities))


@dataclass(frozen=True)
class SpanExample:
    """A passage, a question, the gold answer spans and the candidate mention spans (characters, end
    exclusive): the input of the span-extraction readers."""

    id: str
    context: str
    question: str
    gold: tuple[tuple[int, int], ...]
    mentions: tuple[tuple[int, int], ...] = ()
