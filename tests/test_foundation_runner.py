"""The chapter runner: parameters, publication only on success, clear failures."""

import os
import subprocess
import sys

import nbformat
import pytest
import yaml

from conftest import FRONT_MATTER
from rcstudy import run
from rcstudy.jobs import SEPARATE_ENV
from rcstudy.settings import PROJECT_ROOT


CHAPTER = FRONT_MATTER + """# Demo

```{code-cell} ipython3
:tags: [parameters]
profile = "quick"
fail = False
```

```{code-cell} ipython3
if fail:
    raise ValueError("asked to fail")
print("ran with", profile)
```
"""


@pytest.fixture
def demo_chapter(tmp_path, chapter_folder):
    chapter_folder("demo", CHAPTER, "fail: false\n")
    return tmp_path / "book-root"


def test_overrides_are_parsed_as_yaml():
    assert run.parse_overrides(["seeds=[1, 2]", "model=roberta-large", "lr=1e-5", "full=true"]) == {
        "seeds": [1, 2], "model": "roberta-large", "lr": 1e-5, "full": True}
    with pytest.raises(ValueError, match="not name=value"):
        run.parse_overrides(["seeds"])


def test_every_chapter_has_parameters_for_every_profile():
    for chapter in run.toc_chapters():
        if (run.CHAPTERS_DIR / f"{chapter}.md").exists():
            for profile in run.PROFILES:
                params = run.load_params(chapter, profile)
                assert params["profile"] == profile
                yaml.safe_dump(params)


def test_successful_chapter_is_published_with_parameters_collapsed(demo_chapter):
    result = run.execute_chapter("demo", "smoke", {"profile": "smoke"}, root=demo_chapter, progress=False)
    assert result.ok, result.message
    nb = nbformat.read(demo_chapter / "book" / "demo.ipynb", as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "hide-cell" in injected[0].metadata.tags
    assert "ran with smoke" in "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


def test_failed_chapter_is_not_published_and_names_the_cell(demo_chapter):
    assert run.execute_chapter("demo", "smoke", root=demo_chapter, progress=False).ok
    before = (demo_chapter / "book" / "demo.ipynb").read_bytes()
    result = run.execute_chapter("demo", "smoke", {"fail": True}, root=demo_chapter, progress=False)
    assert not result.ok
    assert "chapter 'demo' failed in cell" in result.message and "ValueError: asked to fail" in result.message
    assert (demo_chapter / "book" / "demo.ipynb").read_bytes() == before  # the old success stays
    assert (demo_chapter / "_build" / "failed" / "demo.ipynb").exists()


def test_missing_profile_parameters_fail_clearly(demo_chapter):
    result = run.execute_chapter("demo", "full", root=demo_chapter, progress=False)
    assert not result.ok and "no parameters for profile 'full'" in result.message


def test_cli_exits_non_zero_on_unknown_chapter():
    proc = subprocess.run([sys.executable, "-m", "rcstudy", "run", "no-such-chapter"], cwd=PROJECT_ROOT,
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "unknown chapter" in proc.stderr


def test_environment_pins_match():
    """environment.yml installs the pip pins files themselves, so conda and pip stay alike."""
    env = yaml.safe_load((PROJECT_ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-r requirements.txt" in pip_section
    for name in ("requirements.txt", "requirements-models.txt", "requirements-dev.txt"):
        for line in (PROJECT_ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if line:
                assert "==" in line, f"{name}: {line} is not pinned"


def test_timings_keep_the_latest_and_the_latest_cold_run(tmp_path, monkeypatch):
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "cache"))
    assert run.cache_is_empty()
    run.record_timing(run.ChapterResult("demo", True, 600.04), "quick", tmp_path, cold=True)
    run.record_timing(run.ChapterResult("demo", True, 3.0), "quick", tmp_path, cold=False)
    run.record_timing(run.ChapterResult("demo", False, 1.0), "quick", tmp_path, cold=True)  # failures are not times
    assert run.read_timings(tmp_path) == {"quick": {"demo": {"latest": 3.0, "cold": 600.0}}}
    (tmp_path / "cache" / "results" / "some-result").mkdir(parents=True)
    assert not run.cache_is_empty()


READER = """---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
rcstudy:
  reads: [demo]
---
# Reader

```{code-cell} ipython3
:tags: [parameters]
profile = "quick"
```
"""


def test_build_reruns_only_the_chapters_whose_inputs_changed(demo_chapter, monkeypatch, tmp_path):
    for var in ("RCSTUDY_DATA", "RCSTUDY_BOOK_ROOT", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(var, "")  # run_chapters sets them for the kernels; restored after the test
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "cache"))
    chapters = run.CHAPTERS_DIR
    (chapters / "reader.md").write_text(READER)
    (chapters / "params" / "reader.smoke.yaml").write_text("{}\n")

    def executed() -> set[str]:
        results = run.run_chapters(["demo", "reader"], "smoke", root=demo_chapter, skip_unchanged=True)
        assert all(r.ok for r in results), [r.message for r in results]
        return {r.chapter for r in results if not r.skipped}

    assert executed() == {"demo", "reader"}
    assert executed() == set()  # nothing changed
    (chapters / "reader.md").write_text(READER + "\nA text-only change.\n")
    assert executed() == {"reader"}
    (chapters / "params" / "demo.smoke.yaml").write_text("fail: false\nunused: 1\n")
    assert executed() == {"demo", "reader"}  # the reader reads the demo chapter
    assert run.run_chapters(["demo"], "smoke", root=demo_chapter)[0].skipped is False  # `run` always executes
    monkeypatch.setenv("RCSTUDY_REFRESH", "1")
    assert executed() == {"demo", "reader"}


def test_rendering_a_book_without_its_first_page_says_so_in_one_line(tmp_path):
    root = tmp_path / "root"
    (root / "book").mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "rcstudy", "build", "--no-run", "--root", str(root)],
                          cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"✗ the book's first page book/intro.ipynb is not published in {root.resolve()}: run `python -m rcstudy run intro` first"]


def test_an_injected_parameter_name_is_refused_before_anything_runs(tmp_path):
    """A name is validated as a (dotted) identifier known to the chapter: text after it never reaches
    a kernel, nothing is written to the book or the cache."""
    marker = tmp_path / "PWNED"
    root = tmp_path / "root"
    proc = subprocess.run([sys.executable, "-m", "rcstudy", "run", "teaching", "--profile", "smoke", "--root", str(root),
                           "-p", f'import os; os.system("touch {marker}"); x=1'],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, env={**os.environ, "RCSTUDY_CACHE": str(tmp_path / "c")})
    assert proc.returncode == 2 and "is not a name" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not marker.exists() and not root.exists() and not (tmp_path / "c").exists()


@pytest.mark.parametrize("param, message", [
    ("session_minute=50", "teaching: unknown parameter 'session_minute'; did you mean 'session_minutes'?"),
    ("live_share=[1,", "parameter 'live_share': '[1,' is not valid YAML"),
    ("session_minutes=many", "parameter 'session_minutes' expects int, got 'many'"),
    ("teaching.live_share=lots", "parameter 'live_share' expects float, got 'lots'"),
])
def test_parameter_mistakes_are_one_line_before_any_cell(tmp_path, param, message):
    proc = subprocess.run([sys.executable, "-m", "rcstudy", "run", "teaching", "--profile", "smoke",
                           "--root", str(tmp_path / "root"), "-p", param], cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 3
    assert not (tmp_path / "root").exists()


def test_overrides_are_aimed_at_chapters():
    aimed = run.overrides_by_chapter(["teaching", "benchmarks"], {"teaching.session_minutes": 50, "run_preset": "tiny"})
    assert aimed == {"teaching": {"session_minutes": 50}, "benchmarks": {"run_preset": "tiny"}}
    params, problems = run.preflight(["teaching", "benchmarks"], "quick", {"seeds": [1]})
    assert problems and all("unknown parameter 'seeds'" in p for p in problems)


def test_injected_parameters_are_the_differences_from_the_defaults():
    params = run.load_params("teaching", "smoke", {"live_share": 0.5})
    assert params == {"profile": "smoke", "data": "tests/fixtures/data", "timings_profile": "smoke", "live_share": 0.5}


EXPORTER = FRONT_MATTER + """# Exporter

```{code-cell} ipython3
:tags: [parameters]
profile = "quick"
tag = "first"
fail_after_export = False
pause_after_export = 0
```

```{code-cell} ipython3
import time
from rcstudy import exports
exports.write_json("demo_export.json", {"tag": tag})
time.sleep(pause_after_export)
if fail_after_export:
    raise RuntimeError("a cell after the export failed")
```
"""


def book_checksums(root):
    from rcstudy.cache import file_checksum

    return {str(p.relative_to(root)): file_checksum(p) for p in sorted((root / "book").rglob("*")) if p.is_file()}


@pytest.fixture
def exporter(demo_chapter, monkeypatch, tmp_path):
    for var in ("RCSTUDY_BOOK_ROOT", "RCSTUDY_EXPORTS", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(var, "")
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "cache"))
    (run.CHAPTERS_DIR / "exporter.md").write_text(EXPORTER)
    (run.CHAPTERS_DIR / "params" / "exporter.smoke.yaml").write_text("{}\n")
    results = run.run_chapters(["exporter", "demo"], "smoke", root=demo_chapter)
    assert all(r.ok for r in results), [r.message for r in results]
    return demo_chapter


def test_a_failed_run_publishes_nothing(exporter):
    before = book_checksums(exporter)
    assert "book/exports/demo_export.json" in before
    results = run.run_chapters(["exporter", "demo"], "smoke", {"tag": "second", "fail": True}, root=exporter)
    assert [r.ok for r in results] == [True, False]
    assert book_checksums(exporter) == before  # the exporter succeeded, but its run did not
    results = run.run_chapters(["exporter"], "smoke", {"tag": "second", "fail_after_export": True}, root=exporter)
    assert not results[0].ok and book_checksums(exporter) == before
    assert (exporter / "_build" / "failed" / "exporter.ipynb").exists()


def test_a_successful_run_updates_notebook_and_exports_together(exporter):
    import json

    before = book_checksums(exporter)
    assert all(r.ok for r in run.run_chapters(["exporter"], "smoke", {"tag": "second"}, root=exporter))
    after = book_checksums(exporter)
    assert after["book/exports/demo_export.json"] != before["book/exports/demo_export.json"]
    assert after["book/exporter.ipynb"] != before["book/exporter.ipynb"]
    assert after["book/demo.ipynb"] == before["book/demo.ipynb"]  # not in this run: kept as published
    assert json.loads((exporter / "book" / "exports" / "demo_export.json").read_text()) == {"tag": "second"}


def test_a_run_killed_after_its_export_is_staged_leaves_the_book_as_it_was(exporter, tmp_path):
    import signal
    import time

    before = book_checksums(exporter)
    staged = exporter / "_build" / "run" / "book" / "exports" / "demo_export.json"
    env = {**os.environ, "RCSTUDY_CHAPTERS": str(run.CHAPTERS_DIR)}
    proc = subprocess.Popen([sys.executable, "-c",
                             "import sys; from rcstudy import run; "
                             "run.run_chapters(['exporter'], 'smoke', {'tag': 'killed', 'pause_after_export': 60}, "
                             f"root=__import__('pathlib').Path({str(exporter)!r}))"],
                            cwd=PROJECT_ROOT, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (staged.exists() and "killed" in staged.read_text()):
        time.sleep(0.2)
    assert staged.exists() and "killed" in staged.read_text(), "the export was never staged"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert book_checksums(exporter) == before
    assert all(r.ok for r in run.run_chapters(["exporter"], "smoke", root=exporter))  # the next run starts clean


def test_the_users_hugging_face_cache_is_left_as_it_is(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "my-hf"))
    run.configure_environment("quick", online=False, refresh=False)
    assert os.environ["HF_HOME"] == str(tmp_path / "my-hf")
    monkeypatch.delenv("HF_HOME")
    run.configure_environment("quick", online=True, refresh=False)
    assert "HF_HOME" not in os.environ  # Hugging Face's default cache


def test_the_kernels_map_large_allocations_unless_the_user_chose_otherwise(monkeypatch):
    """glibc's threshold for giving an allocation its own mapping is fixed for the kernels (a
    fine-tuning's varying activation sizes fragment the heap otherwise); the user's own is kept."""
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    run.configure_environment("quick", online=False, refresh=False)
    assert os.environ["MALLOC_MMAP_THRESHOLD_"] == str(4 * 2**20)
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", str(32 * 2**20))
    run.configure_environment("quick", online=False, refresh=False)
    assert os.environ["MALLOC_MMAP_THRESHOLD_"] == str(32 * 2**20)


def test_the_kernels_run_each_job_in_a_process_of_its_own_unless_the_user_chose_otherwise(monkeypatch):
    """A chapter kernel sends its jobs to processes of their own (their memory is given back when
    each ends); a user who wants them in the kernel, under a debugger, says 0."""
    monkeypatch.delenv(SEPARATE_ENV, raising=False)
    run.configure_environment("quick", online=False, refresh=False)
    assert os.environ[SEPARATE_ENV] == "1"
    monkeypatch.setenv(SEPARATE_ENV, "0")
    run.configure_environment("quick", online=False, refresh=False)
    assert os.environ[SEPARATE_ENV] == "0"


def test_published_notebooks_name_their_source(demo_chapter):
    assert run.execute_chapter("demo", "smoke", root=demo_chapter, progress=False).ok
    meta = nbformat.read(demo_chapter / "book" / "demo.ipynb", as_version=4).metadata.papermill
    assert meta.input_path == "chapters/demo.md" and meta.output_path == "book/demo.ipynb"


def test_the_lock_file_agrees_with_the_pins():
    """requirements-lock.txt pins the whole environment, at the versions requirements*.txt pin."""
    def pins(name):
        out = {}
        for line in (PROJECT_ROOT / name).read_text().splitlines():
            line = line.split("#")[0].strip()
            if "==" in line:
                pkg, version = line.split("==")
                out[pkg.lower().replace("_", "-")] = version.split()[0].split("+")[0]  # before its hashes
        return out

    lock = pins("requirements-lock.txt")
    for name in ("requirements.txt", "requirements-models.txt", "requirements-dev.txt"):
        for pkg, version in pins(name).items():
            if pkg == "torch":  # installed first, from TORCH_INDEX (see the Makefile), not from the lock
                continue
            assert lock.get(pkg) == version, f"{name}: {pkg}=={version}, lock: {lock.get(pkg)}"


def test_rcstudy_params_lists_every_parameter_of_a_profile_with_its_type():
    """`rcstudy params reclor --profile P`: every name its YAML sets, with a type and the profile's value."""
    from rcstudy.config import RUN_KEYS

    proc = subprocess.run([sys.executable, "-m", "rcstudy", "params", "reclor", "--profile", "full"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:]}

    def names(mapping, prefix=""):
        for key, value in mapping.items():
            yield prefix + key
            if isinstance(value, dict) and prefix + key in rows and "section" in rows[prefix + key]:
                yield from names(value, f"{prefix}{key}.")

    full = yaml.safe_load((run.CHAPTERS_DIR / "params" / "reclor.full.yaml").read_text())
    for name in names({k: v for k, v in full.items() if k not in RUN_KEYS}):
        assert name in rows, f"{name} is set by reclor.full.yaml but not listed"
    assert "list of str" in rows["main_models"] and "roberta-large" in rows["main_models"]
    assert "float or none" in rows["encoder.finetune.lr"]


def test_a_chapter_whose_upstream_is_neither_run_nor_published_is_refused(tmp_path):
    """RULE reads ReClor's EASY/HARD export: alone in an empty book it is refused before any cell,
    with ReClor in the same run (or published) it is not."""
    (problem,) = run.upstream_problems(["rule"], tmp_path)
    assert problem.startswith("rule: reads what the reclor chapter publishes") and "run reclor first" in problem
    assert run.upstream_problems(["reclor", "rule"], tmp_path) == []
    results = run.run_chapters(["rule"], "smoke", root=tmp_path)
    assert [r.ok for r in results] == [False] and "reclor" in results[0].message
    assert not (tmp_path / "book" / "rule.ipynb").exists() and not (tmp_path / "_build" / "run").exists()


@pytest.mark.parametrize("profile, override, message", [
    ("smoke", {"model": "no-such-org/no-such-model"}, "'no-such-org/no-such-model'"),
    ("quick", {}, "record: missing data file"),  # the quick profile reads $RCSTUDY_DATA: an empty folder here
    ("smoke", {"data": "{tmp}/empty"}, "record: missing data file"),  # -p data=... replaces the profile's
])
def test_an_unresolvable_model_or_missing_data_stops_the_run_before_the_first_cell(tmp_path, monkeypatch,
                                                                                   profile, override, message):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    override = {k: v.format(tmp=tmp_path) for k, v in override.items()}
    results = run.run_chapters(["record"], profile, override, root=tmp_path)
    assert [r.ok for r in results] == [False] and message in results[0].message
    # no kernel started: nothing staged, no failed notebook, nothing published
    assert not (tmp_path / "_build").exists() and not (tmp_path / "book" / "record.ipynb").exists()


# --------------------------------------------------------------------------- signals and the lock

SLEEPER = FRONT_MATTER + """# Teaching

```{code-cell} ipython3
:tags: [parameters]
profile = "quick"
```

```{code-cell} ipython3
import os, pathlib, time
pathlib.Path(os.environ["RCSTUDY_TEST_KERNEL_PID"]).write_text(str(os.getpid()))
time.sleep(300)
```
"""


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


@pytest.fixture
def sleeping_run(tmp_path):
    """``start()``: a real ``python -m rcstudy run teaching --profile smoke`` whose chapter (a stand-in
    source under ``RCSTUDY_CHAPTERS``) sleeps in its kernel; returns the process and the kernel's PID
    once the kernel executes. Every process left is killed at the end."""
    chapters = tmp_path / "chapters"
    (chapters / "params").mkdir(parents=True)
    (chapters / "teaching.md").write_text(SLEEPER)
    (chapters / "params" / "teaching.smoke.yaml").write_text("profile: smoke\n")
    root, mark = tmp_path / "root", tmp_path / "kernel.pid"
    env = {**os.environ, "RCSTUDY_CHAPTERS": str(chapters), "RCSTUDY_CACHE": str(tmp_path / "cache"),
           "RCSTUDY_TEST_KERNEL_PID": str(mark)}
    procs = []

    def start(wait: bool = True):
        import time

        proc = subprocess.Popen([sys.executable, "-m", "rcstudy", "run", "teaching", "--profile", "smoke", "--root",
                                 str(root)], cwd=PROJECT_ROOT, env=env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        if not wait:
            return proc, None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (mark.exists() and mark.read_text()) and proc.poll() is None:
            time.sleep(0.1)
        assert mark.exists(), f"the kernel never ran: {proc.communicate(timeout=30)}"
        return proc, int(mark.read_text())

    start.root = root
    yield start
    import signal

    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if mark.exists() and mark.read_text() and alive(int(mark.read_text())):
        os.kill(int(mark.read_text()), signal.SIGKILL)


def assert_stopped(proc, kernel: int, root, status: int, word: str) -> None:
    import time

    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == status, stderr
    assert stderr.strip().splitlines()[-1] == f"✗ {word}: the kernel was stopped and nothing was published"
    deadline = time.monotonic() + 10
    while alive(kernel) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(kernel), "the kernel outlived its runner"
    assert not (root / "book" / "teaching.ipynb").exists() and not (root / "_build" / "run").exists()


def test_ctrl_c_stops_the_kernel_publishes_nothing_and_exits_130(sleeping_run):
    import signal

    proc, kernel = sleeping_run()
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the runner's process group
    assert_stopped(proc, kernel, sleeping_run.root, 130, "interrupted (SIGINT)")


def test_a_second_run_on_a_locked_root_is_refused_and_sigterm_stops_the_first(sleeping_run):
    import signal

    proc, kernel = sleeping_run()
    second, _ = sleeping_run(wait=False)
    _, stderr = second.communicate(timeout=120)
    lock = sleeping_run.root.resolve() / "_build" / run.LOCK_NAME
    assert second.returncode == 1 and stderr.strip().splitlines() == [
        f"✗ another run is using the book root {sleeping_run.root.resolve()}: {lock} is locked by PID {proc.pid} "
        "(wait until it ends, or stop it)"]
    assert (sleeping_run.root / "_build" / "run").is_dir()  # the first run's staging is untouched
    proc.send_signal(signal.SIGTERM)
    assert_stopped(proc, kernel, sleeping_run.root, 143, "terminated (SIGTERM)")


def test_a_lock_left_by_a_dead_run_blocks_nothing_and_the_lock_is_reentrant(tmp_path):
    (tmp_path / "_build").mkdir()
    (tmp_path / "_build" / run.LOCK_NAME).write_text("999999999\n")  # no process holds it
    with run.book_lock(tmp_path) as path:
        assert path.read_text() == f"{os.getpid()}\n"
        with run.book_lock(tmp_path):
            pass
        probe = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from rcstudy import run\n"
                                f"with run.book_lock(Path({str(tmp_path)!r})): pass"],
                               capture_output=True, text=True)
        assert probe.returncode != 0 and f"locked by PID {os.getpid()}" in probe.stderr
    with run.book_lock(tmp_path):  # released
        pass
