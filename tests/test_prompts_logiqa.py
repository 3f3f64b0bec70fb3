"""Every LogiQA prompt and input format rendered for a fixture question, compared with its
checked-in text under tests/snapshots/logiqa/ (a prompt change shows up as a diff there).

After an intended change, rewrite the snapshots with ``RCSTUDY_UPDATE_SNAPSHOTS=1`` and review the diff.
"""

import json
from pathlib import Path

import pytest
from conftest import prompt_functions

from rcstudy.data import logiqa as lq
from rcstudy.models.mc import option_pairs
from rcstudy.prompts import logiqa as prompts


@pytest.fixture(scope="module")
def item(fixture_data):
    return lq.load_logiqa("test", "en")[0]


def render(name: str, item) -> str:
    if name == "lm_context":
        return prompts.lm_context(item) + "\n"
    if name == "lm_continuation":
        return "\n".join(repr(prompts.lm_continuation(o)) for o in item.options) + "\n"
    if name == "lm_inputs":
        contexts, continuations = prompts.lm_inputs([item])
        return json.dumps({"contexts": contexts, "continuations": continuations}, indent=1, ensure_ascii=False) + "\n"
    if name == "ablation_items":  # each ablation's items as the encoder engine pairs them
        return json.dumps({a: option_pairs(prompts.ablation_items([item], a)[0], fields)
                           for a, fields in prompts.ABLATION_FIELDS.items()}, indent=1, ensure_ascii=False) + "\n"
    raise KeyError(name)


NAMES = ["lm_context", "lm_continuation", "lm_inputs", "ablation_items"]


@pytest.mark.parametrize("name", NAMES)
def test_prompt_matches_its_snapshot(name, item, matches_snapshot):
    matches_snapshot("logiqa", name, render(name, item))


def test_every_prompt_function_has_a_snapshot():
    assert prompt_functions(prompts) == set(NAMES)


def test_lm_context_is_the_harness_logiqa_prompt(item):
    """lm-evaluation-harness's own ``logiqa`` prompt, from a document in its dataset's layout."""
    utils = pytest.importorskip("lm_eval.tasks.logiqa.utils_logiqa")
    doc = {"context": item.context, "question": item.question, "options": list(item.options),
           "label": "abcd"[item.label]}
    assert prompts.lm_context(item) == utils.doc_to_text(doc)


def test_only_no_question_changes_the_items(item):
    assert prompts.ablation_items([item], "no question")[0].question == ""
    assert all(prompts.ablation_items([item], a)[0] == item for a in ("full input", "no paragraph", "options only"))
