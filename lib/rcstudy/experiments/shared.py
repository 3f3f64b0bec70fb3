"""Encoders fine-tuned once and read by several chapters.

The book trains few models, properly, and shares them, the way ReClor's EASY/HARD export is
shared. MiniLM fine-tuned end to end on ReClor (:data:`RECLOR_ENCODER`) is ReClor's fine-tuned
Table 7 row, RULE's fine-tuned row and the source model of LogiQA's transfer rows. It is trained
on the ReClor training questions that are not RULE main questions
(:func:`reclor_training_questions`): RULE's main questions are ReClor training questions, and
the RULE chapter evaluates the model on them.

A fine-tuned model is cached by its settings, its training questions, the runtime's precision and
the engine's code (:func:`rcstudy.models.mc.finetune_cached`): whichever chapter runs first
trains it, the others read it. The chapters' default parameters are these settings (a test
checks that each chapter builds exactly this model); a chapter run with other settings trains
its own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, Sequence

from ..data import rule
from ..data.records import MCItem
from ..models.mc import MCConfig
from ..models.seq2seq import Seq2SeqConfig
from ..schema import param


@dataclass(frozen=True)
class FineTuning:
    """How a multiple-choice encoder is fine-tuned whole (:func:`rcstudy.models.mc.finetune`):
    AdamW, the learning rate rising to its peak over the warm-up, then falling linearly to zero.

    The defaults are the book's, the shared ReClor model's: one epoch, 16 questions per step,
    peak learning rate 1e-4 after a 10% warm-up (a small model learns from a higher rate than
    the paper's 1e-5 to 2e-5 for base and large models). A chapter's section extends this one,
    declaring there each value it changes and why; :meth:`engine` passes the engine every
    setting, so no default of the engine's own decides a run.
    """

    lr: float = param(1e-4, "peak learning rate (AdamW)")
    # a float: a profile loads 1 as 1.0, and the two differ in a cache key
    epochs: float = param(1.0, "training epochs")
    weight_decay: float = param(0.01, "weight decay (AdamW)", ge=0)
    warmup: float = param(0.1, "warm-up share of the optimiser steps", ge=0, le=1)
    max_length: int = param(256, "tokens per option sequence (a long context is cut first)")
    batch_size: int = param(16, "questions per optimiser step, before accumulation")
    grad_accum: int = param(1, "steps whose gradients are accumulated (the batch: batch_size × grad_accum)")
    eval_batch_size: int = param(32, "questions per evaluation step")

    def engine(self, model: str, fields: str, seed: int) -> MCConfig:
        """The engine's configuration of one run: ``model`` fine-tuned on the input ``fields``
        with ``seed``, and every setting of this section (a subclass's own settings are not the
        engine's)."""
        settings = {f.name: getattr(self, f.name) for f in dataclasses.fields(FineTuning)}
        return MCConfig(model=model, fields=fields, seed=seed, **settings)


#: The optimisers of :class:`TextToTextTraining` as a page names them.
OPTIMIZER_NAMES = {"adamw": "AdamW", "adafactor": "Adafactor"}


@dataclass(frozen=True)
class TextToTextTraining:
    """How a text-to-text model (or a decoder-only model used as one) is fine-tuned on (source,
    target) pairs (:func:`rcstudy.models.seq2seq.train`): a short warm-up, then a constant rate.

    The defaults are the engine's usual settings, declared here once with their meaning; a
    chapter's section extends this one, declaring each value it changes and why, and
    :meth:`engine` passes the engine every setting, so no default of the engine's own decides a run.
    """

    epochs: float = param(1.0, "passes over the training examples; used when max_steps is none")
    max_steps: int | None = param(None, "optimiser steps per model (none: use epochs)")
    batch_size: int = param(8, "examples per forward pass")
    grad_accum: int = param(1, "forward passes per optimiser step")
    lr: float = param(3e-4, "learning rate")
    optimizer: Literal["adamw", "adafactor"] = param("adamw", "optimiser (UnifiedQA and MetaLogic: adafactor)")
    warmup: float = param(0.05, "warm-up share of the optimiser steps, then a constant rate", ge=0, le=1)
    weight_decay: float = param(0.0, "weight decay", ge=0)
    max_src_len: int = param(256, "training truncation of inputs (tokens)")
    max_tgt_len: int = param(160, "training truncation of targets (tokens)")

    def engine(self, model: str, seed: int, **run) -> Seq2SeqConfig:
        """The engine's configuration of one run: ``model`` trained with ``seed`` and every setting
        of this section; ``run``: the engine's settings of decoding and checkpointing, which a
        chapter keeps in its own sections."""
        settings = {f.name: getattr(self, f.name) for f in dataclasses.fields(TextToTextTraining)}
        return Seq2SeqConfig(model=model, seed=seed, **settings, **run)


#: MiniLM fine-tuned on ReClor (context, question, option) with the book's settings.
RECLOR_ENCODER = FineTuning().engine("minilm-l6", "CQA", seed=0)


def rule_main_ids() -> set[str]:
    """The ReClor ids of RULE's main questions (read from the RULE release)."""
    return {m.id for m in rule.load_rule().mains}


def reclor_training_questions(reclor_train: Sequence[MCItem], held_out: set[str] | None = None) -> list[MCItem]:
    """ReClor's labelled training questions without RULE's main questions (``held_out``; default
    :func:`rule_main_ids`), in their order: the training set of every shared ReClor model."""
    held_out = rule_main_ids() if held_out is None else held_out
    return [it for it in reclor_train if it.id not in held_out and it.label is not None]
