"""Every RULE prompt and input format rendered for fixture questions, compared with its checked-in
text under tests/snapshots/rule/ (a prompt change shows up as a diff there).

After an intended change, rewrite the snapshots with ``RCSTUDY_UPDATE_SNAPSHOTS=1`` and review the diff.
"""

from pathlib import Path

import pytest
from conftest import prompt_functions

from rcstudy.data.rule import load_prompts, load_rule
from rcstudy.experiments.rule import PromptSetting, alignment_items
from rcstudy.prompts import rule as prompts

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "data" / "rule"


@pytest.fixture(scope="module")
def data():
    return load_rule(FIXTURES)


@pytest.fixture(scope="module")
def released():
    return load_prompts(FIXTURES)


def render(name: str, data, released) -> str:
    main, sub = data.main("train_35"), data.subs[0]
    if name == "question":  # a main question, a subquestion, rationales appended, no context
        return "\n---\n".join([prompts.question(main), prompts.question(sub),
                               prompts.question(main, ("Because A.", "Because B.")),
                               prompts.question(data.without_context().main("train_35"))]) + "\n"
    if name == "prompt":  # one prompt per kind of setting
        specs = ("0:vanilla:letter", "0:zero_shot_cot:generate", "1:vanilla:letter", "5:subq:letter")
        return "\n---\n".join(f"[{s}]\n" + prompts.prompt(released, PromptSetting.parse(s), 1, sub)
                              for s in specs) + "\n"
    if name == "alignment_question":
        return prompts.alignment_question(sub.meta["main_question"], sub.meta["main_option_text"]) + "\n"
    if name == "alignment_prompt":
        return prompts.alignment_prompt(released, alignment_items(data)[0]) + "\n"
    if name == "letter_prompt":
        return repr(prompts.letter_prompt("{prompt}")) + "\n"
    if name == "letter_continuation":
        return "\n".join(repr(prompts.letter_continuation(k)) for k in range(len(sub.options))) + "\n"
    if name == "option_continuation":
        return "\n".join(repr(prompts.option_continuation(o)) for o in sub.options) + "\n"
    raise KeyError(name)


NAMES = ["question", "prompt", "alignment_question", "alignment_prompt", "letter_prompt", "letter_continuation",
         "option_continuation"]


@pytest.mark.parametrize("name", NAMES)
def test_prompt_matches_its_snapshot(name, data, released, matches_snapshot):
    matches_snapshot("rule", name, render(name, data, released))


def test_every_prompt_function_has_a_snapshot():
    assert prompt_functions(prompts) == set(NAMES)
