"""The chapter runner: execute MyST chapter sources with papermill, publish only successes.

``python -m rcstudy run [CHAPTER...] --profile quick`` reads ``chapters/<name>.md`` (jupytext
MyST), injects ``chapters/params/<name>.<profile>.yaml`` plus ``-p key=value`` overrides after
the cell tagged ``parameters`` and executes it. A run's chapters execute in a staged copy of the
book (``_build/run``), where they write their notebooks and exports and read those of earlier
chapters; only when every chapter succeeded does the staged book replace ``<book root>/book``,
all files together. A failure publishes nothing, leaves the failed notebook in
``_build/failed/`` and names the chapter and cell.

One run at a time uses a book root: a run holds ``_build/rcstudy.lock`` (:func:`book_lock`), and a
second run on the same root is refused in one line naming the lock and the PID that holds it. Ctrl-C
(SIGINT) or SIGTERM stops the kernel, removes the staged book and publishes nothing; the runner
then exits 130 or 143 (:func:`run_chapters`).

Every published notebook records a fingerprint of its inputs (:func:`chapter_inputs`).
``rcstudy build`` executes only the chapters whose inputs changed since they were published,
so a text edit re-runs one chapter (and the pages that read it), not the book.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from pathlib import Path

import yaml

from . import config
from .chapters import config_class, toc_chapters
from .cache import WarningsLog, atomic_write_bytes, file_checksum, fingerprint
from .config import ConfigError
from .jobs import SEPARATE_ENV
from .settings import (PROGRESS_ENV, PROJECT_ROOT, book_root, cache_dir, chapters_dir, data_dir, kernel_options,
                       refresh_requested)

CHAPTERS_DIR = chapters_dir()
PARAMS_DIR = CHAPTERS_DIR / "params"
PROFILES = config.PROFILES
BOOK_FILES = ("_config.yml", "_toc.yml", "references.bib", "_assets")


def load_params(chapter: str, profile: str, overrides: dict | None = None) -> dict:
    """What papermill injects into a chapter: ``profile``, the profile file's run keys and, for a
    chapter with a ``Config``, the validated configuration's differences from its defaults and
    from the profile's values (nested like the config); for a page without one, its flat profile file with overrides on top.
    A :class:`ConfigError` names any unknown parameter or wrongly typed value. ``-p data=PATH``
    replaces the profile's data directory, as the parameters cell's ``data`` does."""
    values = config.read_profile(chapter, profile, PARAMS_DIR)
    overrides = dict(overrides or {})
    if "data" in overrides:
        data = overrides.pop("data")
        if not isinstance(data, str) or not data.strip():
            raise ConfigError(f"parameter 'data' expects a directory, got {config.shown(data)}")
        values["data"] = data
    cls = config_class(chapter)
    if cls is None:
        return {k: config.literal(v, k) for k, v in {"profile": profile, **values, **overrides}.items()}
    cfg = cls.load(profile, overrides, params_dir=PARAMS_DIR)
    # The kernel reloads the profile and applies these on top: an override back to a default
    # value the profile changes (full's epochs: null, -p ...epochs=1) must be injected too.
    changed = config.merge(config.difference(cfg, cls()),
                           config.difference(cfg, cls.load(profile, params_dir=PARAMS_DIR)))
    for name, value in changed.items():
        if value is None:  # a notebook reads a top-level None as "the profile's value"
            raise ConfigError(f"parameter {name!r} = null cannot reach the notebook, which reads None as the "
                              f"profile's value ({config.shown(getattr(cls.load(profile, params_dir=PARAMS_DIR), name))}); "
                              "give a value")
    injected = {"profile": profile, **{k: v for k, v in values.items() if k in config.RUN_KEYS}, **changed}
    return {k: config.literal(v, k) for k, v in injected.items()}


def parse_overrides(pairs: list[str]) -> dict:
    """``["seeds=[1,2]", "encoder.lr=1e-5"]`` → ``{name: value}``, values parsed as plain YAML data
    (:func:`rcstudy.config.parse_yaml`: never run as code, no tags or aliases); a name must be a
    (dotted) identifier and given once, else :class:`ConfigError` says so in one line."""
    out = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"parameter {config.shown(pair)} is not name=value")
        key = config.check_name(key.strip())
        if key in out:
            raise ConfigError(f"parameter {key!r} is given twice (-p {key}=...): give it once")
        value = config.parse_yaml(raw, f"parameter {key!r}")
        if isinstance(value, str):  # YAML 1.1 reads "1e-5" as a string; users mean a number
            try:
                value = float(value)
            except ValueError:
                pass
        out[key] = value
    return out


def overrides_by_chapter(chapters: list[str], overrides: dict) -> dict[str, dict]:
    """Each chapter's overrides: ``rule.seeds`` is aimed at RULE alone; an unaimed name goes to
    every chapter of the run that has such a parameter (to all of them if none has: the error
    then names it)."""
    aimed: dict[str, dict] = {c: {} for c in chapters}
    for key, value in overrides.items():
        head, _, rest = key.partition(".")
        if head in aimed and rest:
            aimed[head][rest] = value
            continue
        takers = [c for c in chapters if (cls := config_class(c)) is None
                  or head in {f.name for f in dataclass_fields(cls)}]
        for c in takers or chapters:
            aimed[c][key] = value
    return aimed


def preflight(chapters: list[str], profile: str, overrides: dict, *, online: bool = False,
              deep: bool = True, root: Path | None = None) -> tuple[dict[str, dict], list[str]]:
    """Validate everything a run needs before anything runs: ``({chapter: injected}, problems)``,
    one line per problem. The parameters first; then (``deep``) the data directory the profile
    names, every model the configurations name, every dataset the chapters declare
    (:mod:`rcstudy.preflight`) and the upstream chapters whose exports they read (in this run,
    or published under ``root``)."""
    from . import preflight as checks

    params, problems = {}, []
    aimed = overrides_by_chapter(chapters, overrides)
    for chapter in chapters:
        try:
            params[chapter] = load_params(chapter, profile, aimed[chapter])
        except ConfigError as e:
            problems.append(str(e) if str(e).startswith(f"{chapter}:") else f"{chapter}: {e}")
    if problems or not deep:
        return params, problems
    data = {p["data"] for p in params.values() if p.get("data")}
    if len(data) > 1:
        return params, [f"the {profile} profile names more than one data directory: {', '.join(sorted(data))}"]
    if data:
        os.environ["RCSTUDY_DATA"] = str(config.resolve_data_dir(data.pop()))
    checked: dict[str, list[str]] = {}
    for chapter in chapters:
        cls = config_class(chapter)
        if cls is not None:
            settings = {k: v for k, v in aimed[chapter].items() if k not in config.RUN_KEYS}
            cfg = cls.load(profile, settings, params_dir=PARAMS_DIR)
            problems += [f"{chapter}: {p}" for p in checks.chapter_problems(cls, cfg, online=online, checked=checked)]
    return params, problems + upstream_problems(chapters, root or book_root())


def upstream_problems(chapters: list[str], root: Path) -> list[str]:
    """One line per chapter of the run that reads another chapter's exports which are neither made
    in this run nor published under ``root`` (pages that read ``all`` tolerate missing chapters)."""
    problems = []
    for chapter in chapters:
        reads = chapter_dependencies(chapter).get("reads", [])
        for upstream in [] if reads == "all" else reads:
            if upstream not in chapters and not published_inputs(upstream, root):
                problems.append(f"{chapter}: reads what the {upstream} chapter publishes, which is neither in this run "
                                f"nor published in {root / 'book'}: run {upstream} first, or both together")
    return problems


@dataclass
class ChapterResult:
    chapter: str
    ok: bool
    seconds: float
    message: str = ""
    inputs: str = ""  # the fingerprint of what the chapter was computed from
    skipped: bool = False  # published and up to date: not executed again
    peak_rss_gb: float | None = None  # the peak resident memory of its kernel's process tree


LIBRARY_DIR = Path(__file__).resolve().parent


def chapter_dependencies(chapter: str) -> dict:
    """What a chapter reads besides its source, parameters, the library and the data, as its front
    matter declares it: ``rcstudy: {reads: [chapters] or all, files: [paths in the project]}``.
    ``all`` means every chapter before it in the book."""
    import jupytext

    return jupytext.read(CHAPTERS_DIR / f"{chapter}.md").metadata.get("rcstudy", {})


def _files_fingerprint(paths, *, base: Path, contents: bool = True) -> str:
    """The files under ``paths`` (folders are walked), each by its content or, for the data, by its
    size and time; names relative to ``base``."""
    files = {}
    for path in map(Path, paths):
        for f in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if f.is_file():
                st = f.stat()
                name = str(f.relative_to(base) if f.is_relative_to(base) else f)
                files[name] = file_checksum(f) if contents else f"{st.st_size}:{st.st_mtime_ns}"
    return fingerprint(files)


def chapter_inputs(chapter: str, profile: str, params: dict, deps: dict, upstream: dict[str, str]) -> str:
    """A fingerprint of everything a chapter's published notebook is computed from: its source and
    parameters, the library's code, the data directory's files (names, sizes and times), the
    project files its front matter lists (``deps``, see :func:`chapter_dependencies`), and the
    fingerprints of the chapters it reads (``upstream``)."""
    return fingerprint({
        "source": _files_fingerprint([CHAPTERS_DIR / f"{chapter}.md"], base=CHAPTERS_DIR),
        "profile": profile, "params": params,
        "library": _files_fingerprint(sorted(LIBRARY_DIR.rglob("*.py")), base=LIBRARY_DIR),
        "data": _files_fingerprint([data_dir()], base=data_dir(), contents=False),
        "files": _files_fingerprint([PROJECT_ROOT / f for f in deps.get("files", [])], base=PROJECT_ROOT),
        "reads": upstream,
    })


def published_inputs(chapter: str, root: Path) -> str:
    """The input fingerprint recorded in a chapter's published notebook ("" if none)."""
    path = root / "book" / f"{chapter}.ipynb"
    if not path.exists():
        return ""
    return json.loads(path.read_text()).get("metadata", {}).get("rcstudy", {}).get("inputs", "")


#: glibc's malloc gives an allocation of this size or more its own mapping, returned to the system
#: when it is freed. Left to itself, glibc raises that threshold up to 32 MiB after the first large
#: free, and a fine-tuning's activations, whose sizes change with every length-bucketed batch, then
#: fragment the heap: 80 steps of the quick profile's minilm-l6 fine-tuning peaked at 8.5 GB of
#: resident memory with glibc's default and at 4.4 GB with 4 MiB. Since a fine-tuning also trims
#: the heap after each step (``runtime.give_back_free_heap``), the difference is smaller (60 steps:
#: 3.64 GB in 150 s, against 3.19 GB in 162 s). A threshold the user set is kept.
MALLOC_MMAP_THRESHOLD = ("MALLOC_MMAP_THRESHOLD_", str(4 * 2**20))


def configure_environment(profile: str, *, online: bool, refresh: bool) -> None:
    """Environment the chapter kernels inherit: offline Hub unless ``online``, cache policy,
    glibc's threshold for mapping large allocations (:data:`MALLOC_MMAP_THRESHOLD`), and each job
    with a step run in a process of its own (:data:`rcstudy.jobs.SEPARATE_ENV`; a user's 0 is kept).

    ``HF_HOME`` is left as the user has it (unset: Hugging Face's default cache), so models already
    downloaded are found, offline too. The data directory is the profile's (:func:`preflight`).
    """
    os.environ.setdefault(*MALLOC_MMAP_THRESHOLD)
    os.environ.setdefault(SEPARATE_ENV, "1")
    if online:
        os.environ.pop("HF_HUB_OFFLINE", None)
    else:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ.setdefault(PROGRESS_ENV, "terminal")  # long loops report on this terminal, not in the pages
    if refresh:
        os.environ["RCSTUDY_REFRESH"] = "1"


def execute_chapter(chapter: str, profile: str, overrides: dict | None = None, *,
                    root: Path | None = None, progress: bool = True, upstream: dict[str, str] | None = None,
                    skip_unchanged: bool = False, failed_dir: Path | None = None) -> ChapterResult:
    """Execute one chapter into ``root/book``; write the notebook there only if every cell succeeded
    (a failed one goes to ``failed_dir``, by default ``root/_build/failed``).

    ``upstream`` holds the input fingerprints of the chapters this one reads; with
    ``skip_unchanged`` a chapter published from the same inputs is not executed again.
    """
    import jupytext
    import papermill
    from papermill.exceptions import PapermillExecutionError

    root = root or book_root()
    source = CHAPTERS_DIR / f"{chapter}.md"
    if not source.is_file():
        return ChapterResult(chapter, False, 0.0, f"no chapter source {source}")
    try:
        params = load_params(chapter, profile, overrides)
    except ConfigError as e:
        return ChapterResult(chapter, False, 0.0, str(e))
    nb = jupytext.read(source)
    inputs = chapter_inputs(chapter, profile, params, nb.metadata.get("rcstudy", {}), upstream or {})
    if skip_unchanged and not refresh_requested() and published_inputs(chapter, root) == inputs:
        return ChapterResult(chapter, True, 0.0, "(published from the same inputs: not re-run)", inputs, skipped=True)
    staging = root / "_build" / "staging" / f"{chapter}.ipynb"
    failed = (failed_dir or root / "_build" / "failed") / f"{chapter}.ipynb"
    published = root / "book" / f"{chapter}.ipynb"
    for p in (staging, failed, published):
        p.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        with TreeMemory() as memory, tempfile.TemporaryDirectory(prefix="rcstudy-kernel-") as sockets:
            in_worker_thread(lambda: papermill.execute_notebook(
                nb, str(staging), parameters=params, kernel_name="python3", cwd=str(PROJECT_ROOT),
                progress_bar={"file": progress_stream} if progress else False, report_mode=False,
                **kernel_options(Path(sockets)),
            ))
    except PapermillExecutionError as e:
        shutil.move(staging, failed)
        seconds = time.perf_counter() - start
        return ChapterResult(chapter, False, seconds,
                             f"chapter {chapter!r} failed in cell {e.cell_index} (In [{e.exec_count}]): "
                             f"{e.ename}: {e.evalue}\n  the failed notebook is {failed}", inputs)
    finish_notebook(staging, inputs, chapter)
    os.replace(staging, published)
    return ChapterResult(chapter, True, time.perf_counter() - start, inputs=inputs, peak_rss_gb=memory.peak_gb)


def _memory_kb(pid: int) -> tuple[int, int]:
    """A process's resident memory now and its peak so far (``VmRSS``, ``VmHWM``), in kB (0: gone)."""
    now = peak = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                now = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return now, peak


class TreeMemory:
    """While active, the peak resident memory of every process below this one (a chapter's kernel
    and the workers it starts), sampled from ``/proc`` every ``interval`` seconds: the largest sum
    of their resident memory, or the largest peak one of them reached (its ``VmHWM``, which a
    short spike between samples leaves there), whichever is larger. ``peak_gb`` is None where
    ``/proc`` cannot be read (not Linux) or nothing ran below this process."""

    def __init__(self, interval: float = 0.5, pid: int | None = None):
        self.interval, self.pid = interval, pid or os.getpid()
        self._peak_kb, self._seen = 0, False
        self._stop = threading.Event()

    def sample(self) -> None:
        total = 0
        for child in _descendants(self.pid):
            now, peak = _memory_kb(child)
            total += now
            self._peak_kb = max(self._peak_kb, peak)
            self._seen = self._seen or bool(now or peak)
        self._peak_kb = max(self._peak_kb, total)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> "TreeMemory":
        if Path("/proc/self/status").is_file():
            self._thread = threading.Thread(target=self._run, name="rcstudy-memory", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if getattr(self, "_thread", None) is not None:
            self._thread.join()

    @property
    def peak_gb(self) -> float | None:
        return round(self._peak_kb / 2**20, 2) if self._seen else None


def finish_notebook(path: Path, inputs: str, chapter: str | None = None) -> None:
    """Collapse the defaults cell and papermill's injected-parameters cell on the rendered page,
    record the fingerprint of the notebook's inputs, and name the chapter's source and published
    notebook (project-relative) in papermill's metadata, where papermill put a copy of the source."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    if chapter is not None and "papermill" in nb.metadata:
        nb.metadata.papermill.update(input_path=f"chapters/{chapter}.md", output_path=f"book/{chapter}.ipynb")
    for c in nb.cells:
        tags = c.metadata.setdefault("tags", [])
        if ("parameters" in tags or "injected-parameters" in tags) and "hide-cell" not in tags:
            tags.append("hide-cell")
    nb.metadata.setdefault("rcstudy", {})["inputs"] = inputs
    nbformat.write(nb, path)


def timings_path(root: Path | None = None) -> Path:
    return (root or book_root()) / "book" / "timings.json"


def read_timings(root: Path | None = None) -> dict:
    """``{profile: {chapter: {"latest": seconds, "cold": seconds, "peak_rss_gb": GB,
    "cold_peak_rss_gb": GB}}}`` as the runner recorded them (the peak resident memory of the
    chapter's latest run and of its latest cold one, :class:`TreeMemory`)."""
    path = timings_path(root)
    timings = json.loads(path.read_text()) if path.exists() else {}
    for chapters in timings.values():  # books built before cold runs were told apart hold bare seconds
        for chapter, entry in chapters.items():
            if not isinstance(entry, dict):
                chapters[chapter] = {"latest": entry}
    return timings


def cache_is_empty() -> bool:
    results = cache_dir() / "results"
    return not results.is_dir() or not any(results.iterdir())


def record_timing(result: ChapterResult, profile: str, root: Path, *, cold: bool) -> None:
    """Keep a chapter's latest wall time per profile, and its latest cold one (shown in the book).

    A run is cold when the run of chapters it belongs to started from an empty cache or with
    ``--refresh``: the chapter computed everything it shows, except what earlier chapters of the
    same run computed for it (RULE reads the EASY/HARD split the ReClor chapter exports, as in a book build).
    """
    if not result.ok:
        return
    timings = read_timings(root)
    entry = timings.setdefault(profile, {}).setdefault(result.chapter, {})
    entry["latest"] = round(result.seconds, 1)
    if cold:
        entry["cold"] = entry["latest"]
    if result.peak_rss_gb is not None:  # its kernel's process tree, GB; a cached re-run needs far less
        entry["peak_rss_gb"] = result.peak_rss_gb
        if cold:
            entry["cold_peak_rss_gb"] = result.peak_rss_gb
    atomic_write_bytes(timings_path(root), json.dumps(timings, indent=1, sort_keys=True).encode())


#: The lock a run holds on its book root, under ``<root>/_build``.
LOCK_NAME = "rcstudy.lock"
_held_locks: dict[Path, int] = {}  # the book roots this process holds, with how many times


class BookLocked(RuntimeError):
    """Another process runs on this book root."""


@contextmanager
def book_lock(root: Path):
    """Hold ``root/_build/rcstudy.lock`` (an exclusive ``flock``, which the system releases when the
    holder dies, however it dies: a lock file left by a dead run blocks nothing). The file records the
    holder's PID. :class:`BookLocked` (one line: the lock and that PID) when another process holds
    it. Re-entrant within a process."""
    key = root.resolve()
    if key in _held_locks:
        _held_locks[key] += 1
        try:
            yield key / "_build" / LOCK_NAME
        finally:
            _held_locks[key] -= 1
        return
    path = key / "_build" / LOCK_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise BookLocked(f"another run is using the book root {key}: {path} is locked by PID {holder} "
                         "(wait until it ends, or stop it)") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _held_locks[key] = 1
    try:
        yield path
    finally:
        del _held_locks[key]
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


class _ProgressStream:
    """Standard error for the chapters' progress bars, silenced once a run is stopped: the thread that
    executes a chapter may close its bar after the runner has printed its last line."""

    muted = False

    def write(self, text: str) -> int:
        return len(text) if self.muted else sys.stderr.write(text)

    def flush(self) -> None:
        if not self.muted:
            sys.stderr.flush()

    def __getattr__(self, name):  # encoding, isatty, fileno: the terminal's
        return getattr(sys.stderr, name)


progress_stream = _ProgressStream()


class Stopped(BaseException):
    """The runner received SIGINT (Ctrl-C) or SIGTERM: stop the kernel, publish nothing."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum  # 130 for SIGINT, 143 for SIGTERM, as a shell reports them


def _raise_stopped(signum, frame):
    raise Stopped(signum)


@contextmanager
def stop_on_signals():
    """Within the block, SIGINT and SIGTERM raise :class:`Stopped` in the main thread (elsewhere: nothing
    changes). Kernels run in a worker thread (:func:`in_worker_thread`), so nbclient does not take
    these signals over, and the main thread stays free to handle them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _raise_stopped) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


_workers: list[threading.Thread] = []  # the threads executing chapters (one at a time)


@contextmanager
def deferred_signals():
    """Within the block SIGINT and SIGTERM only are noted (in the list it yields), in the main thread."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = {s: signal.signal(s, lambda signum, frame: received.append(signum))
                for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def in_worker_thread(fn):
    """``fn()`` in a daemon thread while the main thread waits, interruptibly: a signal's handler
    (:func:`stop_on_signals`) runs at once in the main thread. In any other thread, just ``fn()``."""
    if threading.current_thread() is not threading.main_thread():
        return fn()
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = fn()
        except BaseException as e:  # re-raised in the caller's thread
            outcome["error"] = e

    worker = threading.Thread(target=target, name="rcstudy-chapter", daemon=True)
    _workers[:] = [w for w in _workers if w.is_alive()] + [worker]
    worker.start()
    while worker.is_alive():
        worker.join(0.2)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (kernels, their workers, a local cluster), from ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            state, ppid = stat.rpartition(")")[2].split()[:2]
            if state not in ("Z", "X"):
                children.setdefault(int(ppid), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def stop_children(first: int, grace: float = 3.0) -> None:
    """Stop every process this one started: ``first`` (SIGINT interrupts a kernel, SIGTERM asks it to
    end), then SIGTERM after a moment, then SIGKILL for what is still alive after ``grace`` seconds;
    the children are reaped."""
    def signal_all(sig: int) -> list[int]:
        pids = _descendants(os.getpid())
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        return pids

    if not signal_all(first):
        return
    deadline = time.monotonic() + grace
    if first != signal.SIGTERM:
        time.sleep(0.5)
        signal_all(signal.SIGTERM)
    while _descendants(os.getpid()) and time.monotonic() < deadline:
        time.sleep(0.1)
    signal_all(signal.SIGKILL)
    while True:  # reap our own children, so none is left as a zombie
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break


def open_staging(root: Path) -> Path:
    """A run's own book root, ``root/_build/run``: a copy of the published ``book/`` (notebooks,
    exports, timings) beside links to the book's configuration. The run's kernels read and write
    there (``RCSTUDY_BOOK_ROOT``), so a later chapter of the run reads what an earlier one staged, and
    a chapter run alone reads what is published."""
    recover_book(root)
    stage = root / "_build" / "run"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    for name in BOOK_FILES:
        if (root / name).exists():
            (stage / name).symlink_to((root / name).resolve())
    if (root / "book").is_dir():
        shutil.copytree(root / "book", stage / "book")
    else:
        (stage / "book").mkdir()
    return stage


def publish_staging(stage: Path, root: Path) -> None:
    """Make the staged book the published one: two renames (``book`` aside, the staged one in), so
    every file under ``book/`` changes together; an interruption between them is undone by
    :func:`recover_book`."""
    aside = root / "_build" / "book.previous"
    shutil.rmtree(aside, ignore_errors=True)
    if (root / "book").exists():
        os.replace(root / "book", aside)
    os.replace(stage / "book", root / "book")
    shutil.rmtree(aside, ignore_errors=True)
    shutil.rmtree(stage, ignore_errors=True)


def recover_book(root: Path) -> None:
    """Put the previous ``book/`` back if a publication stopped between its two renames."""
    aside = root / "_build" / "book.previous"
    if aside.is_dir() and not (root / "book").exists():
        os.replace(aside, root / "book")


def run_chapters(chapters: list[str], profile: str, overrides: dict | None = None, *,
                 online: bool = False, refresh: bool = False, root: Path | None = None,
                 skip_unchanged: bool = False, cluster: str | None = None) -> list[ChapterResult]:
    """Execute ``chapters`` in order (see :func:`execute_chapter`) and publish all or nothing.

    With ``cluster`` (a Dask scheduler's address, or ``"local"`` for a local cluster), the
    chapters' heavy jobs first run in parallel on its workers (:func:`rcstudy.cluster.fan_out_chapters`),
    filling the results cache the notebooks then read.

    Every chapter's parameters are validated first: if any is wrong, nothing runs. The chapters run
    in a staged copy of the book (:func:`open_staging`); only when every one of them succeeded does
    the staged book — notebooks, exports, timings — replace ``root/book`` (:func:`publish_staging`).
    A failed or killed run leaves every published file as it was."""
    root = root or book_root()
    configure_environment(profile, online=online, refresh=refresh)
    with stop_on_signals():
        try:
            _, problems = preflight(chapters, profile, overrides or {}, online=online, root=root)
            if problems:
                return [ChapterResult(p.partition(":")[0], False, 0.0, p) for p in problems]
            try:
                with book_lock(root):
                    try:
                        return _run_staged(chapters, profile, overrides, root=root, skip_unchanged=skip_unchanged,
                                           cluster=cluster)
                    except Stopped as stop:
                        stop_run(stop, root / "_build" / "run")
            except BookLocked as e:
                return [ChapterResult("", False, 0.0, str(e))]
        except Stopped as stop:  # before the book root was locked: nothing was staged
            stop_run(stop, None)


def stop_run(stop: Stopped, stage: Path | None):
    """End a run that received SIGINT or SIGTERM: stop the kernel (every child process), remove the
    staged book, say so in one line, exit 130 or 143. Further signals wait until this is done."""
    for s in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C does not cut the cleaning short
        signal.signal(s, signal.SIG_IGN)
    stop_children(stop.signum)
    for worker in _workers:  # papermill notices that its kernel is gone and writes the notebook once more
        worker.join(10)
    stop_children(signal.SIGKILL, grace=0)  # a kernel started meanwhile
    if stage is not None and stage.exists():
        # Renamed first: a client still writing the staged notebook then finds no folder to write in.
        trash = stage.with_name(f"{stage.name}.stopped.{os.getpid()}")
        os.replace(stage, trash)
        for _ in range(3):
            shutil.rmtree(trash, ignore_errors=True)
            if not trash.exists():
                break
            time.sleep(0.2)
    progress_stream.muted = True
    what = "interrupted" if stop.signum == signal.SIGINT else "terminated"
    # on a line of its own: a progress bar may have left the cursor after it
    print(f"\n✗ {what} ({stop}): the kernel was stopped and nothing was published", file=sys.stderr, flush=True)
    raise SystemExit(stop.exit_status) from None


def _run_staged(chapters: list[str], profile: str, overrides: dict | None, *, root: Path, skip_unchanged: bool,
                cluster: str | None) -> list[ChapterResult]:
    os.environ[config.CHECKED_ENV] = "1"  # the kernels need not check again (Config.from_notebook)
    # kernels and workers append their cache warnings here (outside the staging, which may be removed)
    warnings_log = WarningsLog(root / "_build" / "cache-warnings.log")
    aimed = overrides_by_chapter(chapters, overrides or {})
    if cluster:
        from .cluster import fan_out_chapters

        fan_out_chapters(chapters, profile, aimed, cluster)
        warnings_log.show()
    stage = open_staging(root)
    os.environ["RCSTUDY_BOOK_ROOT"] = str(stage)
    os.environ.pop("RCSTUDY_EXPORTS", None)  # exports go to the staged book, published with it
    cold = refresh_requested() or cache_is_empty()
    book_order = toc_chapters()
    inputs: dict[str, str] = {}
    results = []
    for chapter in chapters:
        reads = chapter_dependencies(chapter).get("reads", [])
        if reads == "all":
            reads = book_order[:book_order.index(chapter)]
        upstream = {c: inputs.get(c) or published_inputs(c, stage) for c in reads}
        print(f"▶ {chapter} ({profile}{', cold' if cold else ''})", file=sys.stderr, flush=True)
        result = execute_chapter(chapter, profile, aimed[chapter], root=stage, upstream=upstream,
                                 skip_unchanged=skip_unchanged, failed_dir=root / "_build" / "failed")
        status = "ok" if result.ok else "FAILED"
        print(f"  {status} in {result.seconds:.0f} s {result.message}", file=sys.stderr, flush=True)
        warnings_log.show()
        results.append(result)
        inputs[chapter] = result.inputs
        if not result.skipped:
            record_timing(result, profile, stage, cold=cold)  # at once: later pages (teaching) show it
    if all(r.ok for r in results):
        with deferred_signals() as received:
            publish_staging(stage, root)  # both renames, whatever signal comes meanwhile
        if received:
            print(f"✗ {signal.Signals(received[0]).name} came as the run was published: it is published",
                  file=sys.stderr, flush=True)
            raise SystemExit(128 + received[0])
    else:
        shutil.rmtree(stage, ignore_errors=True)
        print("✗ nothing was published: every chapter of the run must succeed", file=sys.stderr, flush=True)
    return results


def prepare_book_root(root: Path) -> None:
    """Copy the book's configuration into ``root`` when building outside the project (tests)."""
    if root.resolve() == PROJECT_ROOT.resolve():
        return
    root.mkdir(parents=True, exist_ok=True)
    for name in BOOK_FILES:
        src = PROJECT_ROOT / name
        dst = root / name
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        elif src.exists():
            shutil.copy2(src, dst)


def published_toc(root: Path) -> Path:
    """A copy of ``_toc.yml`` listing only the chapters published in ``root/book``.

    Lets the book render whatever chapters exist (e.g. after ``rcstudy run reclor``) under ``-W``.
    """
    toc = yaml.safe_load((PROJECT_ROOT / "_toc.yml").read_text())
    if not (root / toc["root"]).with_suffix(".ipynb").exists():
        raise FileNotFoundError(f"the book's first page {toc['root']}.ipynb is not published in {root}: "
                                f"run `python -m rcstudy run {Path(toc['root']).name}` first")
    toc["chapters"] = [c for c in toc.get("chapters", []) if (root / c["file"]).with_suffix(".ipynb").exists()]
    path = root / "_build" / "_toc.published.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(toc, sort_keys=False))
    return path


def build_html(root: Path | None = None, *, strict: bool = True) -> int:
    """Render the published notebooks with jupyter-book (no execution); returns its exit code."""
    import subprocess

    root = root or book_root()
    try:
        toc = published_toc(root)
    except FileNotFoundError as e:
        print(f"✗ {e}", file=sys.stderr, flush=True)
        return 1
    # The console script sits beside the interpreter in the environment (venv or conda).
    exe = Path(sys.executable).parent / "jupyter-book"
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(root), "--toc", str(toc), "--keep-going"]
    if strict:
        cmd.insert(-1, "-W")
    print("▶ " + " ".join(cmd), file=sys.stderr, flush=True)
    try:
        with book_lock(root):  # no run publishes while the book is rendered
            return subprocess.call(cmd)
    except BookLocked as e:
        print(f"✗ {e}", file=sys.stderr, flush=True)
        return 1
