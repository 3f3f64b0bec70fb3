"""Every ReCoRD prompt and input format rendered for a fixture query, compared with its checked-in
text under tests/snapshots/record/ (a prompt change shows up as a diff there).

After an intended change, rewrite the snapshots with ``RCSTUDY_UPDATE_SNAPSHOTS=1`` and review the diff.
"""

import json
from dataclasses import asdict
from pathlib import Path

import pytest
from conftest import prompt_functions

from rcstudy.data.record import load_record
from rcstudy.prompts import record as prompts

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def query():
    data = load_record(HERE / "fixtures" / "data" / "record")
    return next(q for q in data.eval if len(q.candidates) > 3)


def render(name: str, q) -> str:
    if name == "lm_prefix_and_continuations":
        prefix, continuations = prompts.lm_prefix_and_continuations(q)
        return "PREFIX:\n" + prefix + "\n\nCONTINUATIONS:\n" + "\n".join(continuations) + "\n"
    if name == "filled_query":
        return prompts.filled_query(q, q.candidates[0]) + "\n"
    if name == "placeholder_query":
        return prompts.placeholder_query(q) + "\n" + prompts.placeholder_query(q, "X") + "\n"
    if name == "cloze_items":
        items = [*prompts.cloze_items([q], fill=True), *prompts.cloze_items([q], fill=False),
                 *prompts.cloze_items([q], fill=True, max_options=3, seed=0)]
        return json.dumps([asdict(it) for it in items], indent=1, ensure_ascii=False) + "\n"
    if name == "span_examples":
        return json.dumps([asdict(e) for e in prompts.span_examples([q], "X")], indent=1, ensure_ascii=False) + "\n"
    raise KeyError(name)


NAMES = ["lm_prefix_and_continuations", "filled_query", "placeholder_query", "cloze_items", "span_examples"]


@pytest.mark.parametrize("name", NAMES)
def test_prompt_matches_its_snapshot(name, query, matches_snapshot):
    matches_snapshot("record", name, render(name, query))


def test_every_prompt_function_has_a_snapshot():
    assert prompt_functions(prompts) == set(NAMES)
