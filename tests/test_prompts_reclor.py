"""Every ReClor input format rendered for a fixture question, compared with its checked-in text
under tests/snapshots/reclor/ (a format change shows up as a diff there).

After an intended change, rewrite the snapshots with ``RCSTUDY_UPDATE_SNAPSHOTS=1`` and review the diff.
"""

import json
import warnings
from pathlib import Path

import pytest
from conftest import prompt_functions

from rcstudy.data import reclor
from rcstudy.models.mc import FIELDS, option_pairs
from rcstudy.prompts import reclor as prompts


@pytest.fixture(scope="module")
def item(fixture_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", reclor.SplitSizeWarning)
        return reclor.load_split("val")[0]


def render(name: str, item) -> str:
    if name == "fasttext_line":  # every option's line under each input setting
        return json.dumps({f: [prompts.fasttext_line(item, j, f) for j in range(len(item.options))] for f in FIELDS},
                          indent=1, ensure_ascii=False) + "\n"
    if name == "encoder_pairs":  # what the encoders and the Bi-LSTM read (the engine's standard pairs)
        return json.dumps({f: option_pairs(item, f) for f in FIELDS}, indent=1, ensure_ascii=False) + "\n"
    raise KeyError(name)


@pytest.mark.parametrize("name", ["fasttext_line", "encoder_pairs"])
def test_input_format_matches_its_snapshot(name, item, matches_snapshot):
    matches_snapshot("reclor", name, render(name, item))


def test_every_prompt_function_has_a_snapshot():
    assert prompt_functions(prompts) == {"fasttext_line"}
