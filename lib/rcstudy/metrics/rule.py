"""RULE's metrics (Kawabata & Sugawara, 2023, §4), exactly as the paper defines them.

With M the main questions and S the subquestions evaluated, S_m those of main m, and c_x = 1
when the prediction on x is right (all scores in percent):

* **MainQ** accuracy: mean over m of c_m.
* **SubQ** accuracy: mean over s of c_s (a micro average).
* **Selective** / **Eliminative** SubQ accuracy: the same over subquestions made from the right
  (selective) or a wrong (eliminative) main option.
* **Consistency**: mean over m of c_m · Π_{s ∈ S_m} c_s — the main question *and all* of its
  subquestions right.
* **MainQ-wise SubQ** accuracy: mean over m of (mean over S_m of c_s) (a macro average).
* Appendix H: SubQ accuracy on the subquestions whose main question was answered right
  (micro, and macro over those main questions).

A main question with no subquestion in the evaluated set counts in Consistency by its own
answer (an empty product is 1) and is left out of the macro averages.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Mapping, Sequence

import numpy as np

from ..stats import MeanSD, mean_sd

METRICS = ("MainQ", "SubQ", "Selective", "Eliminative", "Consistency", "MainQ-wise SubQ")
GIVEN_MAIN_RIGHT = ("SubQ | main right", "MainQ-wise SubQ | main right")


def _pct(values) -> float:
    values = np.asarray(values, dtype=float)
    return float(100 * values.mean()) if values.size else float("nan")


def rule_scores(main_ids: Sequence[str], main_correct: Sequence[bool], sub_main_ids: Sequence[str],
                sub_selective: Sequence[bool], sub_correct: Sequence[bool]) -> dict[str, float]:
    """All RULE metrics (percent) from per-question correctness.

    ``main_ids``/``main_correct`` describe the evaluated main questions; ``sub_main_ids``,
    ``sub_selective`` and ``sub_correct`` one entry per evaluated subquestion. Every
    subquestion's main question must be among ``main_ids``.
    """
    main_ok = dict(zip(main_ids, map(bool, main_correct)))
    if len(main_ok) != len(main_ids) or len(main_correct) != len(main_ids):
        raise ValueError("main_ids must be unique and as long as main_correct")
    if not len(sub_main_ids) == len(sub_selective) == len(sub_correct):
        raise ValueError("sub_main_ids, sub_selective and sub_correct differ in length")
    per_main: dict[str, list[bool]] = defaultdict(list)
    for m, ok in zip(sub_main_ids, sub_correct):
        if m not in main_ok:
            raise ValueError(f"subquestion of main question {m!r}, which is not among main_ids")
        per_main[m].append(bool(ok))
    sub_ok = np.asarray(sub_correct, dtype=bool)
    selective = np.asarray(sub_selective, dtype=bool)
    right_mains = [m for m in per_main if main_ok[m]]
    return {
        "MainQ": _pct(list(main_ok.values())),
        "SubQ": _pct(sub_ok),
        "Selective": _pct(sub_ok[selective]),
        "Eliminative": _pct(sub_ok[~selective]),
        "Consistency": _pct([ok and all(per_main.get(m, [])) for m, ok in main_ok.items()]),
        "MainQ-wise SubQ": _pct([np.mean(v) for v in per_main.values()]),
        "SubQ | main right": _pct([ok for m in right_mains for ok in per_main[m]]),
        "MainQ-wise SubQ | main right": _pct([np.mean(per_main[m]) for m in right_mains]),
        "main questions": len(main_ok),
        "subquestions": len(sub_ok),
    }


def chance_scores(main_ids: Sequence[str], main_n_options: Sequence[int], sub_main_ids: Sequence[str],
                  sub_n_options: Sequence[int], sub_selective: Sequence[bool]) -> dict[str, float]:
    """Expected value of every metric for a uniform random guesser (computed exactly, not sampled)."""
    p_main = dict(zip(main_ids, (1 / np.asarray(main_n_options, dtype=float)).tolist()))
    p_sub = 1 / np.asarray(sub_n_options, dtype=float)
    selective = np.asarray(sub_selective, dtype=bool)
    per_main: dict[str, list[float]] = defaultdict(list)
    for m, p in zip(sub_main_ids, p_sub):
        per_main[m].append(p)
    return {
        "MainQ": _pct(list(p_main.values())),
        "SubQ": _pct(p_sub),
        "Selective": _pct(p_sub[selective]),
        "Eliminative": _pct(p_sub[~selective]),
        # independent guesses: P(main right and every subquestion right) is a product
        "Consistency": _pct([p * np.prod(per_main.get(m, [])) for m, p in p_main.items()]),
        "MainQ-wise SubQ": _pct([np.mean(v) for v in per_main.values()]),
        "SubQ | main right": _pct(p_sub),
        "MainQ-wise SubQ | main right": _pct([np.mean(v) for v in per_main.values()]),
        "main questions": len(p_main),
        "subquestions": len(p_sub),
    }


def none_scores(sub_has_none: Sequence[bool], sub_none_correct: Sequence[bool],
                sub_correct: Sequence[bool]) -> dict[str, float]:
    """§4.2's "None of the above choices" analysis: accuracy where the option is offered / is right."""
    has = np.asarray(sub_has_none, dtype=bool)
    right = np.asarray(sub_none_correct, dtype=bool)
    ok = np.asarray(sub_correct, dtype=bool)
    return {
        "None offered": _pct(ok[has]),
        "None is the answer": _pct(ok[right]),
        "None offered, not the answer": _pct(ok[has & ~right]),
        "n offered": int(has.sum()),
        "n answer": int(right.sum()),
    }


def aggregate(per_split: Sequence[Mapping[str, float]], keys: Sequence[str] = METRICS) -> dict[str, MeanSD | float]:
    """Mean ± sd over splits of each metric (NaN entries, e.g. an empty group, are skipped; a
    metric that is NaN in every split, e.g. SubQ of a sample without subquestions, stays NaN)."""
    out: dict[str, MeanSD | float] = {}
    for k in keys:
        values = [s[k] for s in per_split if k in s and not np.isnan(s[k])]
        out[k] = mean_sd(values) if values else float("nan")
    return out
