"""End to end on the smoke profile: a run is deterministic, a killed run resumes to the same
numbers, and two runs sharing one results cache do not disturb each other."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rcstudy import papers, run
from rcstudy.report import glued_values

pytestmark = pytest.mark.slow
ROOT = run.PROJECT_ROOT
CHAPTER = "logiqa"  # quick on the fixtures, with several cached steps (readers, fine-tuning, LM)


def start(chapters: list[str], root: Path, cache: Path) -> subprocess.Popen:
    env = {**os.environ, "RCSTUDY_CACHE": str(cache)}
    return subprocess.Popen([sys.executable, "-m", "rcstudy", "run", *chapters, "--profile", "smoke", "--root", str(root)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def finish(proc: subprocess.Popen) -> None:
    out, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, out[-3000:]


def entries(cache: Path) -> dict[Path, int]:
    """The results cache's complete entries (no temporary files) and their modification times."""
    return {p: p.stat().st_mtime_ns for p in (cache / "results").rglob("*")
            if p.is_file() and not p.name.startswith(".")}


def numbers(root: Path, chapter: str) -> dict:
    return glued_values(root / "book" / f"{chapter}.ipynb")


def test_two_runs_with_the_same_seeds_give_identical_numbers(smoke_book, tmp_path):
    """Every paper chapter and the scorecard, re-run from an empty cache, glue exactly the same values."""
    chapters = [c for c in run.toc_chapters() if c in papers.PAPERS or c == "scorecard"]
    finish(start(chapters, tmp_path / "root", tmp_path / "cache"))
    for chapter in chapters:
        assert numbers(tmp_path / "root", chapter) == numbers(smoke_book, chapter), chapter


def test_a_run_killed_mid_chapter_resumes_to_the_same_numbers(smoke_book, tmp_path):
    cache = tmp_path / "cache"
    proc = start([CHAPTER], tmp_path / "root", cache)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and len(entries(cache)) < 3 and proc.poll() is None:
        time.sleep(0.1)
    assert proc.poll() is None, "the chapter finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = entries(cache)
    assert before and not (tmp_path / "root" / "book" / f"{CHAPTER}.ipynb").exists()
    finish(start([CHAPTER], tmp_path / "root", cache))
    after = entries(cache)
    assert all(after.get(p) == t for p, t in before.items()), "entries written before the kill were recomputed"
    assert numbers(tmp_path / "root", CHAPTER) == numbers(smoke_book, CHAPTER)


def test_two_concurrent_runs_on_one_cache_agree(smoke_book, tmp_path):
    cache = tmp_path / "cache"
    procs = [start([CHAPTER], tmp_path / f"root{i}", cache) for i in (1, 2)]
    for proc in procs:
        finish(proc)
    assert numbers(tmp_path / "root1", CHAPTER) == numbers(tmp_path / "root2", CHAPTER) == numbers(smoke_book, CHAPTER)
