"""Shared fixtures. The smoke book (every chapter in the smoke profile, then a -W build) is
built once per test session and shared by the book and browser tests: under pytest-xdist
(``make test`` runs two workers) every test that reads it runs on one worker, so it is built once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rcstudy.jobs import SEPARATE_ENV

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Converted model copies are shared by every test (and with the project) even when results are not.
os.environ.setdefault("RCSTUDY_MODELS", str(ROOT / ".cache" / "models"))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

#: The front matter of a chapter source that tests write (jupytext MyST, the Python kernel).
FRONT_MATTER = """---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---
"""


#: What loading a profile's parameters (``RCSTUDY_DATA``) or configuring the kernels' environment
#: (:func:`rcstudy.run.configure_environment`) sets for the whole process.
PROCESS_SETTINGS = ("RCSTUDY_DATA", SEPARATE_ENV)


@pytest.fixture(autouse=True)
def process_settings_restored():
    """Loading a profile's parameters sets ``RCSTUDY_DATA`` for the whole process, as the runner and
    a notebook need, and the runner sets the kernels' environment in its own; a test that does so
    must not leave them set for the tests after it on its worker (those that read the real data
    would then skip, and a toy chapter's jobs would be sent to processes of their own)."""
    before = {name: os.environ.get(name) for name in PROCESS_SETTINGS}
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture
def chapter_folder(tmp_path, monkeypatch):
    """A chapters folder of the test's own that the runner reads: ``add(name, source, params)``
    writes ``<name>.md`` and its smoke profile; returns the folder."""
    from rcstudy import run

    chapters = tmp_path / "chapters"
    (chapters / "params").mkdir(parents=True)
    monkeypatch.setattr(run, "CHAPTERS_DIR", chapters)
    monkeypatch.setattr(run, "PARAMS_DIR", chapters / "params")

    def add(name: str, source: str, params: str = "{}\n"):
        (chapters / f"{name}.md").write_text(source)
        (chapters / "params" / f"{name}.smoke.yaml").write_text(params)
        return chapters
    add.folder = chapters
    return add


@pytest.fixture(scope="module")
def fixture_data():
    """``RCSTUDY_DATA`` pointing at the fixtures in the official formats, for a whole test module."""
    mp = pytest.MonkeyPatch()
    mp.setenv("RCSTUDY_DATA", str(FIXTURES / "data"))
    yield FIXTURES / "data"
    mp.undo()


@pytest.fixture
def matches_snapshot():
    """``check(paper, name, text)``: ``text`` equals ``tests/snapshots/<paper>/<name>.txt``, so a
    change to a prompt shows up as a diff (``RCSTUDY_UPDATE_SNAPSHOTS=1`` rewrites the file)."""

    def check(paper: str, name: str, text: str) -> None:
        path = ROOT / "tests" / "snapshots" / paper / f"{name}.txt"
        if os.environ.get("RCSTUDY_UPDATE_SNAPSHOTS"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert path.is_file(), f"no snapshot {path}: run with RCSTUDY_UPDATE_SNAPSHOTS=1 and review it"
        assert text == path.read_text(encoding="utf-8"), f"{paper} prompt {name} changed: compare with {path}"

    return check


def prompt_functions(module) -> set[str]:
    """The public functions a prompts module defines (each needs a snapshot)."""
    return {n for n, f in vars(module).items() if callable(f) and getattr(f, "__module__", "") == module.__name__}


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    """A private results cache (models stay in the shared one: converting them is slow)."""
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory):
    """Run every chapter in the smoke profile into a temporary book root and render it with -W.

    Returns the book root; ``<root>/_build/html`` holds the pages. The run's output is kept in
    ``<root>/smoke.log`` for diagnosis.
    """
    root = tmp_path_factory.mktemp("smoke-book")
    log = root / "smoke.log"
    env = {**os.environ, "RCSTUDY_CACHE": str(root / "cache")}
    with open(log, "w") as f:
        proc = subprocess.run([sys.executable, "-m", "rcstudy", "build", "--profile", "smoke", "--root", str(root)],
                              cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        pytest.fail(f"smoke build failed (exit {proc.returncode}); last lines:\n" +
                    "\n".join(log.read_text().splitlines()[-40:]))
    return root


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items):
    """The tests that read the smoke book form one xdist group (``--dist loadgroup``)."""
    for item in items:
        if "smoke_book" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("smoke_book"))


#: Grouped tests that pytest-xdist could not group: each fails at setup, with the reason.
UNGROUPED: set[str] = set()


def pytest_collection_finish(session):
    """Under ``--dist loadgroup`` a worker's grouped tests carry their group in the node id; pytest 9.2
    ignores the mark (pytest-xdist#1386), and the tests that share a book would build it on every
    worker, and RULE's replica run would not find ReClor's exports."""
    if getattr(session.config.option, "loadgroup", False):
        UNGROUPED.update(item.nodeid for item in session.items
                         if item.get_closest_marker("xdist_group") and "@" not in item.nodeid.rpartition("]")[2])


def pytest_runtest_setup(item):
    if item.nodeid in UNGROUPED:
        pytest.fail(f"--dist loadgroup has no effect with pytest {pytest.__version__} (pytest-xdist#1386): "
                    "install the pytest of requirements-dev.txt (make env)", pytrace=False)


def pytest_terminal_summary(terminalreporter):
    """The number of cases each loader ran in tests/test_fuzz_loaders.py (when it ran)."""
    fuzz = sys.modules.get("test_fuzz_loaders")
    if fuzz is not None and fuzz.CASES:
        terminalreporter.write_line("fuzzed loaders (cases): " +
                                    ", ".join(f"{name} {n}" for name, n in sorted(fuzz.CASES.items())))
