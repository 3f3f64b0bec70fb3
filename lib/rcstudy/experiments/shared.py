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

from typing import Sequence

from ..data import rule
from ..data.records import MCItem
from ..models.mc import MCConfig

#: MiniLM fine-tuned on ReClor (context, question, option): one epoch of AdamW over the training
#: questions, 16 questions per step, peak learning rate 1e-4 after a 10% warm-up (a small
#: model learns from a higher rate than the paper's 1e-5 to 2e-5 for base and large models).
RECLOR_ENCODER = MCConfig(model="minilm-l6", fields="CQA", max_length=256, epochs=1.0, lr=1e-4, batch_size=16,
                          warmup=0.1, weight_decay=0.01, seed=0)


def rule_main_ids() -> set[str]:
    """The ReClor ids of RULE's main questions (read from the RULE release)."""
    return {m.id for m in rule.load_rule().mains}


def reclor_training_questions(reclor_train: Sequence[MCItem], held_out: set[str] | None = None) -> list[MCItem]:
    """ReClor's labelled training questions without RULE's main questions (``held_out``; default
    :func:`rule_main_ids`), in their order: the training set of every shared ReClor model."""
    held_out = rule_main_ids() if held_out is None else held_out
    return [it for it in reclor_train if it.id not in held_out and it.label is not None]
