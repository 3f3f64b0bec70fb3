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
    """Every paper chapter and the scorecard, re-run from an empty cache, glue exactly the same values.
    The chapters run in two processes at once (RULE after ReClor, whose export it reads), each
    with a cache of its own, then the scorecard over all of them."""
    papers_in_book = [c for c in run.toc_chapters() if c in papers.PAPERS]
    first = ["reclor", "rule"]
    second = [c for c in papers_in_book if c not in first]
    root, other = tmp_path / "root", tmp_path / "other"
    for proc in [start(first, root, tmp_path / "cache1"), start(second, other, tmp_path / "cache2")]:
        finish(proc)
    for chapter in second:
        (root / "book" / f"{chapter}.ipynb").write_bytes((other / "book" / f"{chapter}.ipynb").read_bytes())
    finish(start(["scorecard"], root, tmp_path / "cache1"))
    for chapter in [*papers_in_book, "scorecard"]:
        assert numbers(root, chapter) == numbers(smoke_book, chapter), chapter


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


def book_checksums(root: Path) -> dict[str, str]:
    from rcstudy.cache import file_checksum

    return {str(p.relative_to(root)): file_checksum(p) for p in sorted((root / "book").rglob("*")) if p.is_file()}


@pytest.fixture
def reclor_with_a_last_cell(smoke_book, tmp_path):
    """A copy of the published smoke book, and a function that starts a ReClor run whose page has
    one more cell at the end (after the EASY/HARD export): ``code`` (an error, a long pause)."""
    import shutil

    root = tmp_path / "root"
    shutil.copytree(smoke_book / "book", root / "book")
    chapters = tmp_path / "chapters"
    shutil.copytree(run.CHAPTERS_DIR, chapters)

    def start_with(code: str) -> subprocess.Popen:
        page = chapters / "reclor.md"
        page.write_text(run.CHAPTERS_DIR.joinpath("reclor.md").read_text() + f"\n```{{code-cell}} ipython3\n{code}\n```\n")
        env = {**os.environ, "RCSTUDY_CACHE": str(smoke_book / "cache"), "RCSTUDY_CHAPTERS": str(chapters)}
        return subprocess.Popen([sys.executable, "-m", "rcstudy", "run", "reclor", "--profile", "smoke", "--root",
                                 str(root)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)

    return root, start_with


def test_a_reclor_run_failed_after_its_export_leaves_the_book_unchanged(reclor_with_a_last_cell):
    root, start_with = reclor_with_a_last_cell
    before = book_checksums(root)
    assert "book/exports/reclor_easy_hard.csv" in before
    proc = start_with('raise RuntimeError("an error injected after the export")')
    out, _ = proc.communicate(timeout=900)
    assert proc.returncode != 0 and "an error injected after the export" in out
    assert book_checksums(root) == before
    assert (root / "_build" / "failed" / "reclor.ipynb").exists()


def test_a_reclor_run_killed_after_its_export_is_staged_leaves_the_book_unchanged(reclor_with_a_last_cell):
    root, start_with = reclor_with_a_last_cell
    before = book_checksums(root)
    staged = root / "_build" / "run" / "book" / "exports" / "reclor_easy_hard.csv"
    proc = start_with("import time\ntime.sleep(600)")
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not staged.exists() and proc.poll() is None:
        time.sleep(0.2)
    assert staged.exists(), "the export was never staged"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert book_checksums(root) == before
