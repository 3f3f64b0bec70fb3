"""Preflight: models and data are checked before the first cell, one line per problem."""

from __future__ import annotations

import shutil

from rcstudy import preflight
from rcstudy.data.registry import DATASETS
from rcstudy.settings import PROJECT_ROOT

FIXTURES = PROJECT_ROOT / "tests" / "fixtures" / "data"


def test_missing_and_malformed_data_are_one_line_each(tmp_path, monkeypatch):
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    (problem,) = preflight.data_problems(("reclor",))
    assert problem.startswith("reclor: missing data file") and str(tmp_path / "reclor") in problem
    shutil.copytree(FIXTURES / "reclor", tmp_path / "reclor")
    assert preflight.data_problems(("reclor",)) == []
    (tmp_path / "reclor" / "val.json").write_text('[{"context": "c"')
    (problem,) = preflight.data_problems(("reclor",))
    assert "val.json:1" in problem and "invalid JSON" in problem and "\n" not in problem


def test_every_dataset_of_the_fixtures_passes(monkeypatch):
    monkeypatch.setenv("RCSTUDY_DATA", str(FIXTURES))
    assert set(DATASETS) == {"reclor", "logiqa", "logiqa2", "metalogic", "rule", "record"}
    assert preflight.data_problems(tuple(DATASETS)) == []


def test_a_hub_model_missing_offline_is_named_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    (problem,) = preflight.model_problems(["no-such-org/no-such-model"], online=False)
    assert "'no-such-org/no-such-model'" in problem and "--online" in problem and "\n" not in problem
    assert preflight.model_problems(["no-such-org/no-such-model"], online=True) == []
