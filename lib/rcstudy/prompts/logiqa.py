"""LogiQA's prompts and input formats: what the zero-shot language model and the ablated encoders read.

The full-input encoder reads the multiple-choice engine's standard pairs
(:func:`rcstudy.models.mc.option_pairs`, fields ``"CQA"``): ``[CLS] paragraph [SEP] question option [SEP]``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..data.records import MCItem

#: Figure 3's inputs: the engine fields each ablated encoder is trained and scored with.
ABLATION_FIELDS = {
    "full input": "CQA",  # [CLS] paragraph [SEP] question option [SEP]
    "no paragraph": "QA",  # [CLS] question option [SEP]
    "no question": "CQA",  # [CLS] paragraph [SEP] option [SEP] (the question blanked)
    "options only": "A",  # [CLS] option [SEP]
}


def ablation_items(items: Sequence[MCItem], ablation: str) -> list[MCItem]:
    """The items as the ablated encoder sees them: only "no question" changes them (the question
    becomes empty); the other ablations drop fields through :data:`ABLATION_FIELDS`."""
    if ablation == "no question":
        return [replace(it, question="") for it in items]
    return list(items)


def lm_context(item: MCItem) -> str:
    """The zero-shot LM's context, shared by the four options: lm-evaluation-harness's ``logiqa``
    task prompt (``utils_logiqa.doc_to_text``), so the chapter's scores are the harness's::

        Passage: {paragraph}
        Question: {question}
        Choices:
        A. {option 1}
        ...
        D. {option 4}
        Answer:
    """
    options = "".join(f"{letter}. {option}\n" for letter, option in zip("ABCD", item.options))
    return f"Passage: {item.context}\nQuestion: {item.question}\nChoices:\n{options}Answer:"


def lm_continuation(option: str) -> str:
    """One option as the continuation whose log-likelihood is scored: ``" {option}"``."""
    return " " + option


def lm_inputs(items: Sequence[MCItem]) -> tuple[list[str], list[str]]:
    """(contexts, continuations), one pair per option of every item, items in order."""
    contexts = [lm_context(it) for it in items for _ in it.options]
    continuations = [lm_continuation(o) for it in items for o in it.options]
    return contexts, continuations
