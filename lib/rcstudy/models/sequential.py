"""Sequential fine-tuning (transfer): one multiple-choice encoder trained on several item sets in
turn with the engine's recipe (:mod:`rcstudy.models.mc`), restarted for each stage."""

from __future__ import annotations

from dataclasses import asdict
from typing import Sequence

import numpy as np

from ..cache import cached
from ..data.records import MCItem
from ..runtime import Runtime
from . import mc


def finetune_stages_predict(stages: Sequence[Sequence[MCItem]], eval_sets: dict[str, Sequence[MCItem]],
                            cfgs: Sequence[mc.MCConfig], rt: Runtime) -> dict[str, np.ndarray]:
    """Fine-tune on each stage's items in turn (source, then target), each with its own settings
    (``cfgs``, one per stage, the same model), then score the evaluation sets; cached, with the
    per-stage losses under ``"losses"``. The first stage's model comes from the shared model
    cache, so a source-only run and a source → target run train the source once."""
    if len(cfgs) != len(stages) or len({c.model for c in cfgs}) != 1:
        raise ValueError(f"one setting per stage, all of one model: {len(stages)} stages, "
                         f"settings for {[c.model for c in cfgs]}")

    def compute() -> dict[str, np.ndarray]:
        trained = mc.finetune_cached(stages[0], cfgs[0], rt)
        losses = [trained.losses]
        for items, cfg in zip(stages[1:], cfgs[1:]):
            trained = mc.finetune(items, cfg, rt, init=trained.model)
            losses.append(trained.losses)
        out = {name: mc.predict(trained, items, rt) for name, items in eval_sets.items()}
        return {**out, "losses": losses}

    params = {"cfgs": [asdict(c) for c in cfgs], "stages": [mc.items_fingerprint(s) for s in stages],
              "eval": {k: mc.items_fingerprint(v) for k, v in eval_sets.items()}}
    return cached("mc_sequential", params, compute)
