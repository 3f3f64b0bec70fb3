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


def option_logliks(model_name: str, items: Sequence[MCItem], rt: Runtime, *, batch_size: int) -> dict[str, np.ndarray]:
    """(items × options) scores, cached, as lm-evaluation-harness scores multiple choice:
    ``"sum"``, the summed log-likelihood of each option (its ``acc``), and ``"per_char"``, that sum
    divided by the option's length in characters (its ``acc_norm``)."""
    def compute() -> dict[str, np.ndarray]:
        lm = load_lm(model_name, rt)
        contexts, continuations = lm_inputs(items)
        scores = lm.loglik(contexts, continuations, batch_size=batch_size)
        chars = np.array([max(len(c), 1) for c in continuations], dtype=float)
        return {"sum": scores.reshape(len(items), -1), "per_char": (scores / chars).reshape(len(items), -1)}

    return cached("logiqa_lm", {"model": model_name, "items": items_fingerprint(items)}, compute)
