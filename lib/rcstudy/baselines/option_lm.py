"""LogiQA's zero-shot row: a causal LM (:mod:`rcstudy.models.lm`) scores each option by its
log-likelihood as the continuation of the paragraph and question (:mod:`rcstudy.prompts.logiqa`)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..cache import cached
from ..data.records import MCItem
from ..models.lm import load_lm
from ..models.mc import items_fingerprint
from ..prompts.logiqa import lm_inputs
from ..runtime import Runtime


def option_scores(lm, items: Sequence[MCItem], *, batch_size: int) -> dict[str, np.ndarray]:
    """(items × options) scores as lm-evaluation-harness scores multiple choice: ``"sum"``, the
    summed log-likelihood of each option (its ``acc``), and ``"per_char"``, that sum divided by the
    option's length in characters, without the space that joins it to the prompt (its ``acc_norm``)."""
    contexts, continuations = lm_inputs(items)
    scores = np.asarray(lm.loglik(contexts, continuations, batch_size=batch_size)).reshape(len(items), -1)
    return {"sum": scores, "per_char": per_character(scores, items)}


def per_character(scores: np.ndarray, items: Sequence[MCItem]) -> np.ndarray:
    """(items × options) summed log-likelihoods divided by each option's length in characters,
    without the space that joins it to the prompt: the harness's ``acc_norm`` scores."""
    return scores / np.array([[max(len(o), 1) for o in it.options] for it in items], dtype=float)


def option_logliks(model_name: str, items: Sequence[MCItem], rt: Runtime, *, batch_size: int) -> dict[str, np.ndarray]:
    """:func:`option_scores` of ``model_name``, cached."""
    return cached("logiqa_lm", {"model": model_name, "items": items_fingerprint(items)},
                  lambda: option_scores(load_lm(model_name, rt), items, batch_size=batch_size))
