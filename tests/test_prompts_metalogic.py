"""Every MetaLogic prompt and input format rendered for a fixture passage, against checked-in text.

A change to a template shows up as a diff of ``tests/snapshots/metalogic/``. To accept one, run
with ``RCSTUDY_UPDATE_SNAPSHOTS=1`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rcstudy.data import metalogic as ml
from rcstudy.experiments import metalogic as ex
from rcstudy.prompts import metalogic as prompts

DATA = Path(__file__).parent / "fixtures" / "data" / "metalogic"


def _split(name):
    return ml.load_metagraphs(DATA / f"metalogic_{name}.json")


def _pairs(sources, targets):
    return "".join(f"{s}\n⟶ {t}\n" for s, t in zip(sources, targets))


def renders():
    train, g = _split("train"), _split("test")[0]  # train_4341, the paper's Table 10 passage
    shots = ex.fewshot_shots(train, 1)
    return {
        "once_inputs_paper": "\n".join(prompts.once_inputs([g])) + "\n",
        "once_inputs_released": "\n".join(prompts.once_inputs([g], "released")) + "\n",
        "once_targets": "\n".join(prompts.once_targets([g])) + "\n",
        "once_pairs": _pairs(*prompts.once_pairs([g])),
        "multitask_pairs": _pairs(*prompts.multitask_pairs([g])),
        "multitask_pairs_released": _pairs(*prompts.multitask_pairs([g], "released")),
        "official_strings": "".join(f"[{k}]\n{v}\n" for k, v in prompts.official_strings(g).items()),
        "fewshot_prompt": prompts.fewshot_prompt(shots, g) + "\n",
    }


@pytest.mark.parametrize("name", sorted(renders()))
def test_prompt_matches_its_snapshot(name, matches_snapshot):
    matches_snapshot("metalogic", name, renders()[name])
