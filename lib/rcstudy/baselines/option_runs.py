"""One cached run of a multiple-choice family on one seed, for the families trained here from
scratch or on frozen features: fastText, the Bi-LSTM and a linear head on a frozen encoder.

The cache calls live here, not in a chapter's experiments module, so a results cache entry
depends on these engines' code only: editing how a chapter builds its tables does not retrain.
Fine-tuned encoders cache themselves (:func:`rcstudy.models.mc.finetune_and_predict`).
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from ..cache import cached
from ..data.records import MCItem
from ..models import mc
from ..runtime import Runtime, one_thread
from . import bilstm, ngram


def run_key(family: str, fields: str, seed: int, train: Sequence[MCItem],
            eval_sets: Mapping[str, Sequence[MCItem]]) -> dict:
    """What identifies a run besides its settings: family, input, seed and the items."""
    return {"family": family, "fields": fields, "seed": seed, "train": mc.items_fingerprint(train),
            "eval": {k: mc.items_fingerprint(v) for k, v in eval_sets.items()}}


def fasttext_scores(key: dict, cfg: ngram.NgramConfig, train: Sequence[MCItem],
                    eval_sets: Mapping[str, Sequence[MCItem]], data_files: Sequence[Path]) -> dict[str, np.ndarray]:
    return cached("reclor_fasttext", {**key, "cfg": asdict(cfg)},
                  lambda: ngram.fit_predict_mc(train, dict(eval_sets), cfg), data_files=data_files)


def bilstm_scores(key: dict, cfg: bilstm.BiLSTMConfig, train: Sequence[MCItem],
                  eval_sets: Mapping[str, Sequence[MCItem]], rt: Runtime,
                  data_files: Sequence[Path]) -> dict[str, np.ndarray]:
    def train_bilstm():
        with contextlib.nullcontext() if rt.cuda else one_thread():
            return bilstm.fit_predict_mc(train, dict(eval_sets), cfg, rt.device)

    return cached("reclor_bilstm", {**key, "cfg": asdict(cfg)}, train_bilstm, data_files=data_files)


def frozen_head_scores(key: dict, head: dict, max_length: int, seed: int, train: Sequence[MCItem],
                       eval_sets: Mapping[str, Sequence[MCItem]],
                       features: Callable[[Sequence[MCItem]], np.ndarray],
                       data_files: Sequence[Path]) -> dict[str, np.ndarray]:
    """A linear head (settings ``head``) on frozen-encoder ``features`` of the labelled training items."""
    def frozen():
        labelled = [it for it in train if it.label is not None]
        feats = {k: features(v) for k, v in eval_sets.items()}
        train_feats = features(labelled)
        with one_thread():
            fitted = mc.fit_linear_head(train_feats, [it.label for it in labelled], seed, **head)
            return {k: mc.head_logits(fitted, f) for k, f in feats.items()}

    return cached("reclor_frozen_heads", {**key, "max_length": max_length, "head": head}, frozen,
                  data_files=data_files)
