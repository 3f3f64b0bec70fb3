"""A chapter runs under plain papermill as it stands: no runner, its smoke profile file, the data
from the environment; papermill's --help-notebook shows its typed parameters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rcstudy import run
from rcstudy.report import claims_from_notebook, glued_values

pytestmark = pytest.mark.slow
ROOT = run.PROJECT_ROOT
CHAPTER = "record"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def notebook(tmp_path_factory) -> Path:
    """The chapter's source as a notebook, as jupytext makes it (what a reader downloads)."""
    path = tmp_path_factory.mktemp("papermill") / f"{CHAPTER}.ipynb"
    subprocess.run([BIN / "jupytext", "--to", "ipynb", "-o", str(path), str(ROOT / "chapters" / f"{CHAPTER}.md")],
                   check=True, capture_output=True)
    return path


def test_help_notebook_shows_typed_parameters(notebook):
    out = subprocess.run([BIN / "papermill", "--help-notebook", str(notebook)], capture_output=True, text=True).stdout
    assert "profile: str (default \"quick\")" in out
    assert "data: Optional[str] (default None)" in out
    assert "Unknown type" not in out


def test_plain_papermill_runs_the_smoke_profile(notebook, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RCSTUDY_") or k == "RCSTUDY_MODELS"}
    env.update(RCSTUDY_CACHE=str(tmp_path / "cache"), RCSTUDY_BOOK_ROOT=str(tmp_path), HF_HUB_OFFLINE="1")
    out = tmp_path / "out.ipynb"
    proc = subprocess.run([BIN / "papermill", str(notebook), str(out), "-f",
                           str(ROOT / "chapters" / "params" / f"{CHAPTER}.smoke.yaml"), "-p", "seeds", "[1]",
                           "--cwd", str(ROOT)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    claims = claims_from_notebook(out)
    assert claims and all(c.chapter == CHAPTER for c in claims)
    assert glued_values(out)
    parameters = json.loads(out.read_text())["metadata"]["papermill"]["parameters"]
    assert parameters["profile"] == "smoke" and parameters["seeds"] == "[1]"  # papermill passed text: read as YAML
