"""The chapter's heavy computations, each through its cached engine, and the questions each one
reads: the readers, the fine-tuned encoder, its ablations, the transfer rows and the zero-shot LM.
Only the jobs' steps (:mod:`.steps`) call them, so the page is built from the work its jobs declare."""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np

from ... import sampling
from ...baselines.option_lm import option_logliks
from ...baselines.readers import train_reader_cached
from ...data import reclor
from ...data.records import MCItem
from ...models import mc
from ...models.sequential import finetune_stages_predict
from ...prompts.logiqa import ABLATION_FIELDS, ablation_items
from ...runtime import Runtime
from .. import shared
from .config import LM, Encoder, Readers, Sizes, Transfer
from .data import LogiQAData


def reader_train_items(data: LogiQAData, readers: Readers, sample_seed: int) -> list[MCItem]:
    return sampling.draw(data.train.items, readers.n_train, sample_seed)


def reader_run(data: LogiQAData, readers: Readers, name: str, seed: int, sample_seed: int, device: str):
    """One from-scratch reader and seed, trained on (a sample of) the training set, early-stopped
    on English Eval, evaluated on English Eval and Test (cached)."""
    dev, test = data.splits["en-eval"], data.splits["en-test"]
    return train_reader_cached(readers.config(name, seed), reader_train_items(data, readers, sample_seed), dev,
                               {"en-eval": dev, "en-test": test}, device)


def encoder_train_items(data: LogiQAData, encoder: Encoder, sizes: Sizes) -> list[MCItem]:
    return sampling.draw(data.train.items, encoder.n_train, sizes.seed)


def eval_positions(data: LogiQAData, sizes: Sizes) -> dict[str, np.ndarray]:
    """Positions scored by the encoder: an Eval sample, the whole Test, and the Test sample."""
    return {"en-eval": sampling.draw_positions(len(data.splits["en-eval"]), sizes.n_dev, sizes.seed),
            "en-test": np.arange(len(data.splits["en-test"])),
            "test-sub": sampling.draw_positions(len(data.splits["en-test"]), sizes.n_test_sub, sizes.seed + 1)}


def encoder_eval_sets(data: LogiQAData, sizes: Sizes) -> dict[str, list[MCItem]]:
    pos = eval_positions(data, sizes)
    return {k: [data.splits[k][i] for i in pos[k]] for k in ("en-eval", "en-test")}


def encoder_run(data: LogiQAData, encoder: Encoder, sizes: Sizes, seed: int, rt: Runtime) -> dict[str, np.ndarray]:
    """One seed of the fine-tuned encoder: logits on the Eval sample and Test, and its losses (cached)."""
    return mc.finetune_and_predict(encoder.mc(seed), encoder_train_items(data, encoder, sizes),
                                   encoder_eval_sets(data, sizes), rt)


def ablation_sets(data: LogiQAData, encoder: Encoder, sizes: Sizes, name: str) -> tuple[list[MCItem], list[MCItem]]:
    """The training items and the Test sample of one ablation, with its partial input."""
    test = data.splits["en-test"]
    sub = [test[i] for i in eval_positions(data, sizes)["test-sub"]]
    return ablation_items(encoder_train_items(data, encoder, sizes), name), ablation_items(sub, name)


def ablation_run(data: LogiQAData, encoder: Encoder, sizes: Sizes, name: str, seed: int, rt: Runtime) -> dict[str, np.ndarray]:
    """One ablation and seed: retrained with partial input, logits on the Test sample (cached)."""
    train, sub = ablation_sets(data, encoder, sizes, name)
    return mc.finetune_and_predict(encoder.mc(seed, ABLATION_FIELDS[name]), train, {"en-test": sub}, rt)


def reclor_source(transfer: Transfer, sample_seed: int) -> list[MCItem]:
    """The ReClor training questions the transfer rows learn from: the shared ReClor model's
    (:func:`rcstudy.experiments.shared.reclor_training_questions`) of a draw of ``n_source``
    (``DataFileMissing`` without ReClor or RULE)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a subsampled ReClor copy warns about its size
        source_all = reclor.load_split("train")
    return shared.reclor_training_questions(sampling.draw(source_all, transfer.n_source, sample_seed))


def transfer_row_stages(source: Sequence[MCItem], target: Sequence[MCItem], then_logiqa: bool) -> list[list[Sequence[MCItem]]]:
    """Table 4's trained rows, each as the item sets it is fine-tuned on in turn: the source alone,
    then (``then_logiqa``) the source and LogiQA."""
    return [[source], [source, target]] if then_logiqa else [[source]]


def transfer_eval_sets(data: LogiQAData, sizes: Sizes) -> dict[str, list[MCItem]]:
    """Table 4's evaluation sets: the Eval sample and the Test sample."""
    pos = eval_positions(data, sizes)
    return {"en-eval": [data.splits["en-eval"][i] for i in pos["en-eval"]],
            "en-test": [data.splits["en-test"][i] for i in pos["test-sub"]]}


def transfer_run(data: LogiQAData, encoder: Encoder, transfer: Transfer, sizes: Sizes,
                 stages: Sequence[Sequence[MCItem]], seed: int, rt: Runtime) -> dict[str, np.ndarray]:
    """One Table 4 row and seed: the encoder fine-tuned on each stage in turn (the source with
    ``transfer``'s settings, LogiQA with the encoder's), scored on the Eval and Test samples (cached)."""
    cfgs = [transfer.source_mc(encoder, seed), encoder.mc(seed)][:len(stages)]
    return finetune_stages_predict(stages, transfer_eval_sets(data, sizes), cfgs, rt)


def lm_items(data: LogiQAData, lm: LM, sizes: Sizes) -> tuple[np.ndarray, list[MCItem]]:
    """The Test positions the zero-shot LM scores, and those items."""
    pos = sampling.draw_positions(len(data.splits["en-test"]), lm.n_test, sizes.seed + 1)
    return pos, [data.splits["en-test"][i] for i in pos]


def lm_run(data: LogiQAData, lm: LM, sizes: Sizes, rt: Runtime) -> dict[str, np.ndarray]:
    """The zero-shot LM's option log-likelihoods on its Test questions, summed (``sum``) and per
    character of the option (``per_char``) (cached)."""
    return option_logliks(lm.model, lm_items(data, lm, sizes)[1], rt, batch_size=lm.batch_size)
