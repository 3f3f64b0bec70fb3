"""RULE's prompts and input formats: the released prompt layout, the paper's few-shot and
chain-of-thought prompts, the rationale-alignment question and the answer cues the LM is scored on.

The question layout itself is :func:`rcstudy.data.rule.question_block`: the loader rebuilds the
released exemplars with it (and checks them against the stored strings), so it lives with them.
"""

from __future__ import annotations

from typing import Sequence

from ..data.records import MCItem
from ..data.rule import RulePrompts, question_block

#: The family name of zero-shot chain of thought (the instruction, the question and a trigger).
ZERO_SHOT_COT = "zero_shot_cot"
COT_TRIGGER = " Let's think step by step."
ANSWER_PREFIX = " The answer is Option"
#: Generation stops where a model starts writing the next question.
GENERATION_STOP = ("\n Context:", "Context:")


def question(item: MCItem, rationales: Sequence[str] = ()) -> str:
    """A question in the released layout, up to and including ``Answer:``::

        Context: {context} \\n Question: {question} \\n Option0: {option 0} \\n ... \\n Option3: {option 3} \\n Answer:

    No ``Context:`` line when the context is empty (the context-ablated setting); one
    ``Rationale: {rationale} \\n`` line after the options per rationale (the paper's Table 5).
    """
    return question_block(item.context, item.question, item.options, rationales)


def prompt(prompts: RulePrompts, setting, batch: int, item: MCItem, rationales: Sequence[str] = ()) -> str:
    """The full prompt for ``item`` under ``setting`` (anything with ``shots`` and ``family``)::

        zero-shot:       {instruction}{question}
        zero-shot CoT:   {instruction}{question} Let's think step by step.
        k-shot:          {released prompt of (k, family), batch} {question}

    where ``{question}`` is :func:`question` (with ``rationales``).
    """
    block = question(item, rationales)
    if setting.family == ZERO_SHOT_COT:
        return prompts.instruction + block + COT_TRIGGER
    if setting.shots == 0:
        return prompts.instruction + block
    return prompts.get(setting.shots, setting.family, batch).text + " " + block


def alignment_question(main_question: str, main_option: str) -> str:
    """The rationale-alignment question (§5; the paper's own, Appendix J, is not in the text)::

        {main question} \\n Answer option: {main option} \\n Which rationale explains why this answer option is correct or incorrect?
    """
    return (f"{main_question} \n Answer option: {main_option} \n Which rationale explains why this answer "
            "option is correct or incorrect?")


def alignment_prompt(prompts: RulePrompts, item: MCItem) -> str:
    """The zero-shot alignment prompt for an alignment item (its question is :func:`alignment_question`)::

        {instruction}{question}
    """
    return prompts.instruction + question(item)


def letter_prompt(text: str) -> str:
    """What the letter scoring reads the next token after (the digit of the option)::

        {prompt} The answer is Option
    """
    return text + ANSWER_PREFIX


def letter_continuation(k: int) -> str:
    """The whole answer cue with option ``k``'s digit, scored as a continuation of the prompt where a
    tokenizer's digits share a first token::

        ␣The answer is Option{k}
    """
    return ANSWER_PREFIX + str(k)


def option_continuation(option: str) -> str:
    """The continuation option scoring takes the mean log-likelihood per token of, after ``Answer:``::

        ␣{option}
    """
    return " " + option
