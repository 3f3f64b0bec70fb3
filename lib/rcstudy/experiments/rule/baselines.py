"""Baselines that read no question: a fixed position, the longest or shortest option, and the word-overlap cue."""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from ...data.records import MCItem
from ...data.rule import RuleData
from .units import Evaluation, System, system_scores


def _unit(data: RuleData, choose: Callable[[MCItem], int]) -> Evaluation:
    return Evaluation(None, {m.id: choose(m) for m in data.mains}, {s.id: choose(s) for s in data.subs})


def position_baseline(data: RuleData, position: int) -> System:
    """Always the option at ``position`` (the last option where an item has fewer)."""
    return System(f"always Option{position}", "baseline",
                  [_unit(data, lambda it: min(position, len(it.options) - 1))], data)


def length_baseline(data: RuleData, longest: bool = True) -> System:
    """The longest (or shortest) option in whitespace tokens; ties go to the first."""
    pick = np.argmax if longest else np.argmin
    return System(f"{'longest' if longest else 'shortest'} option", "baseline",
                  [_unit(data, lambda it: int(pick([len(o.split()) for o in it.options])))], data)


def baseline_systems(data: RuleData) -> list[System]:
    """Table 2's baselines: always Option0 to Option3, then the longest and the shortest option."""
    return [position_baseline(data, k) for k in range(4)] + [length_baseline(data, True), length_baseline(data, False)]


#: Words too common to count as shared between an option and the text it is matched against.
OVERLAP_STOPWORDS = frozenset("a an the of to and or in on at for by with as is are was were be been it its this "
                              "that these those not no which what why who from than then so if but".split())


def content_words(text: str) -> set[str]:
    """The distinct lower-cased words of ``text`` (letters, digits, apostrophes) less :data:`OVERLAP_STOPWORDS`."""
    return set(re.findall(r"[a-z0-9']+", text.lower())) - OVERLAP_STOPWORDS


def overlap_choice(item: MCItem, with_context: bool = False) -> int:
    """The option whose content words are most often found in the question (and the context, with
    ``with_context``), as a share of the option's own content words; ties go to the first.

    A surface cue with no reading: a subquestion's question restates the main option it is about,
    and its answer is the rationale written for that option (the other options are the other
    options' rationales), so the answer tends to share the question's words."""
    reference = content_words(f"{item.context} {item.question}" if with_context else item.question)
    shares = [len(w & reference) / len(w) if (w := content_words(o)) else 0.0 for o in item.options]
    return int(np.argmax(shares))


def overlap_baseline(data: RuleData, with_context: bool = False) -> System:
    """:func:`overlap_choice` on every question of ``data``."""
    return System(f"most words shared with the {'context and ' if with_context else ''}question", "baseline",
                  [_unit(data, lambda it: overlap_choice(it, with_context))], data)


def overlap_facts(sample: RuleData) -> dict[str, float | int]:
    """The word-overlap cue (:func:`overlap_baseline`) on the fine-tuned models' sample, matched
    against the question alone and against the context and question: what a model that matches
    words, and reads no argument, scores with and without the context."""
    out: dict[str, float | int] = {"rule_overlap_subs": len(sample.subs)}
    for key, with_context in (("question", False), ("context", True)):
        scores = system_scores(overlap_baseline(sample, with_context))
        for metric in ("MainQ", "SubQ", "Selective", "Eliminative"):
            out[f"rule_overlap_{key}_{metric.lower()}"] = float(scores[metric])
    return out
