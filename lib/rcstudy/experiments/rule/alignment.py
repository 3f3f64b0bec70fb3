"""The rationale-alignment task (§5): which rationale is about a given option."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ...data.records import MCItem
from ...data.rule import RuleData
from ...prompts import rule as prompt_formats
from ...stats import Interval, subset_difference


def alignment_items(data: RuleData) -> list[MCItem]:
    """The rationale-alignment task (§5): given the context, the main question and one of its
    options, pick which of the four rationales is the one about that option."""
    return [MCItem(f"{s.id}/alignment", s.context,
                   prompt_formats.alignment_question(s.meta["main_question"], s.meta["main_option_text"]),
                   s.options, s.label, s.meta) for s in data.subs]


def alignment_frame(items: Sequence[MCItem], pred: Sequence[int]) -> pd.DataFrame:
    return pd.DataFrame({"id": [it.id for it in items], "main_id": [it.meta["main_id"] for it in items],
                         "selective": [it.meta["selective"] for it in items],
                         "right": [int(p) == it.label for it, p in zip(items, pred)]})


def alignment_rates(frame: pd.DataFrame) -> tuple[float, float]:
    """Alignment accuracy (fractions) when the given option is correct, and when it is incorrect."""
    return frame.loc[frame["selective"], "right"].mean(), frame.loc[~frame["selective"], "right"].mean()


def alignment_gap(frame: pd.DataFrame, seed: int) -> Interval:
    """Alignment accuracy on correct minus incorrect options (points). The interval resamples main
    questions: the options of one main question share its context and rationales, so they are not
    independent items, and a main question drawn brings its correct and incorrect options alike."""
    selective = frame["selective"].to_numpy(bool)
    return subset_difference(frame["right"].to_numpy(float), selective, ~selective,
                             clusters=frame["main_id"].tolist(), seed=seed)
