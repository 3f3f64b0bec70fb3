"""On-disk cache of expensive results, keyed by parameters, data checksums and the code that computes them.

The code part of a key is a fingerprint of the source of every module of the library that the
module calling :func:`cached` imports, directly or through others (:func:`module_closure`): a
change to an engine invalidates exactly the entries computed through it, and a change to an
unrelated module invalidates none.

Entries are typed files that cannot run code when read (:mod:`rcstudy.serialize`): a result is
stored as NumPy arrays plus a JSON description of its structure (``<key>.npz``), trained weights
as safetensors (:func:`save_weights`, :func:`load_weights`), so a cache can be shared between
processes, users and machines. A value the format cannot hold is refused with a ``TypeError``
when it is written. Each entry carries a SHA-256 checksum of its content bound to its file name
(the fingerprint of its key), verified when it is read. An entry that is not a regular file (a
named pipe, a device: refused without blocking), does not decode (truncated, corrupt, written by
something else, a pickle left by an older version, one that would expand beyond the bounds of
:mod:`rcstudy.serialize`) or whose checksum does not match (altered after it was written, another
key's entry copied in) is never used: a :class:`CacheWarning` names it and the result is computed
again and overwrites it. Each warning is also appended, as one line, to the file that
:data:`WARNINGS_LOG_ENV` names (the runner shows them on its terminal: a kernel's stderr goes into
the notebook, whose rendered page leaves it out), or, without one, written to the terminal of a
run whose progress goes there (``RCSTUDY_PROGRESS=terminal``).

Every write is atomic (temporary file in the same folder, then ``os.replace``): a reader sees
the old file or the new one, never half of one, so an interrupted run never leaves a
half-written entry, and processes that compute the same entry at once each write a complete
one (the last replaces the others; they hold the same result). Files are created with the
permissions the umask allows (0644 under the usual 022; 0664 under 002, for a cache shared by a
group), like any file the user creates. ``rcstudy run --refresh`` (``RCSTUDY_REFRESH=1``)
ignores existing entries and overwrites them.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import hashlib
import inspect
import json
import os
import secrets
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from . import runtime, serialize
from .settings import cache_dir, data_dir, refresh_requested

T = TypeVar("T")

_checksums: dict[tuple[str, int, int], str] = {}


def file_checksum(path: Path) -> str:
    """SHA-256 of a file's bytes, memoised on (path, size, mtime) within the process."""
    path = Path(path)
    st = path.stat()
    memo_key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if memo_key not in _checksums:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _checksums[memo_key] = h.hexdigest()
    return _checksums[memo_key]


def fingerprint(obj: Any) -> str:
    """A stable short hash of any JSON-serialisable object (dict keys sorted)."""
    blob = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _create_temporary(folder: Path, name: str) -> tuple[int, Path]:
    """A new file beside ``name`` in ``folder``, opened for writing, with the permissions the umask
    allows (the kernel applies it to mode 0666, as for any file the user creates; ``mkstemp``'s 0600
    would keep the other users of a shared cache out)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = folder / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name for {name} in {folder}")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see either the old or the new file, never half;
    the file's permissions are those the umask allows."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temporary(path.parent, path.name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _data_label(path: Path) -> str:
    """A data file's path relative to the data directory (independent of where that lives)."""
    try:
        return path.resolve().relative_to(data_dir().resolve()).as_posix()
    except ValueError:
        return path.name


#: The folder that holds the ``rcstudy`` package (``lib/``).
LIBRARY_PARENT = Path(__file__).resolve().parents[1]


def module_file(module: str, root: Path = LIBRARY_PARENT) -> Path | None:
    """The source file of a dotted module name under ``root`` (a package's ``__init__.py``), or None."""
    base = root.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


_imports: dict[tuple[str, str, int], frozenset[str]] = {}


def _imported_modules(module: str, path: Path, root: Path) -> frozenset[str]:
    """The modules (memoised on the file's time) of the same top-level package that ``module`` imports anywhere in its source
    (lazy imports inside functions included), with the packages whose ``__init__`` they run."""
    memo_key = (module, str(path), path.stat().st_mtime_ns)
    if memo_key not in _imports:
        _imports[memo_key] = frozenset(_parse_imports(module, path, root))
    return _imports[memo_key]


def import_targets(module: str, path: Path) -> Iterator[tuple[str, bool]]:
    """Every dotted name the source of ``module`` (at ``path``) imports, ``from pkg import x`` giving
    both ``pkg`` and ``pkg.x``, each with whether the import is inside a function."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_bytes(), filename=str(path))
    in_function = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            names = [base] + [f"{base}.{a.name}" for a in node.names]  # `from pkg import submodule`
        else:
            continue
        for name in names:
            yield name, id(node) in in_function


def _parse_imports(module: str, path: Path, root: Path) -> set[str]:
    top = module.split(".")[0]
    found = {name for name, _ in import_targets(module, path)}
    modules = set()
    for name in found:
        if name.split(".")[0] != top:
            continue
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ too
            prefix = ".".join(parts[:i])
            if module_file(prefix, root):
                modules.add(prefix)
    return modules


def module_closure(module: str, root: Path = LIBRARY_PARENT) -> list[str]:
    """``module`` and every module of its package it imports, directly or transitively, sorted."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        path = module_file(name, root)
        if name in seen or path is None:
            continue
        seen.add(name)
        todo.extend(_imported_modules(name, path, root) - seen)
    return sorted(seen)


def code_fingerprint(modules: Sequence[str], root: Path = LIBRARY_PARENT) -> str:
    """A fingerprint of the source of ``modules`` and of everything they import from their package."""
    closure = sorted({m for module in modules for m in module_closure(module, root)})
    return fingerprint({m: file_checksum(module_file(m, root)) for m in closure})


def library_modules(root: Path = LIBRARY_PARENT, package: str = __package__) -> list[str]:
    """Every module of the package, by dotted name."""
    names = []
    for f in sorted((root / package).rglob("*.py")):
        parts = f.relative_to(root).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _calling_module(depth: int) -> list[str]:
    """The module ``depth`` frames above the caller; outside the library (a notebook, a test's
    lambda) the whole library, the only safe assumption about what that code calls."""
    frame = inspect.currentframe()
    for _ in range(depth + 1):
        frame = frame.f_back
    name = frame.f_globals.get("__name__", "")
    return [name] if name.split(".")[0] == __package__ else library_modules()


def cache_key(name: str, params: dict, data_files: Iterable[Path] = (), code: Sequence[str] = ()) -> dict:
    """Everything a cached result depends on, as a JSON-able dict: ``code`` names the modules
    that compute it (see :func:`code_fingerprint`); the runtime's device and precision
    (:func:`rcstudy.runtime.numerics`) are part of it too."""
    return {
        "name": name,
        "params": params,
        "data": {_data_label(Path(p)): file_checksum(p) for p in data_files},
        "code": code_fingerprint(code) if code else "",
        "numerics": runtime.numerics(),
    }


def entry_path(name: str, key: dict) -> Path:
    return cache_dir() / "results" / name / f"{fingerprint(key)}.npz"


#: Results this process computed through :func:`cached` because no usable entry held them, by entry name.
misses: Counter[str] = Counter()


class CacheWarning(UserWarning):
    """An unreadable cache entry, which is recomputed (or retrained) and overwritten."""


#: A file to which every cache warning is appended as one line (the runner sets it and shows the
#: lines on its terminal; a cluster's workers inherit it): a warning in a notebook's kernel goes
#: to the notebook's stderr only, which the rendered page leaves out.
WARNINGS_LOG_ENV = "RCSTUDY_WARNINGS_LOG"
MAX_LINE = 4000


def _append_line(path: Path, line: str) -> None:
    """Append one line with a single write (whole lines, even from several processes at once); a
    named pipe without a reader in its place fails at once rather than blocking."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        os.write(fd, (line + "\n").encode("utf-8", "replace"))
    finally:
        os.close(fd)


def tell_user(message: str) -> None:
    """Show ``message`` to the person running the book, not only in the notebook: as a line of the
    log :data:`WARNINGS_LOG_ENV` names, else (no log, or it cannot be written) on the terminal of a
    run whose progress goes there (``RCSTUDY_PROGRESS=terminal``), which a kernel's ``sys.__stderr__``
    reaches. A process whose warnings reach its stderr already (a worker, a script) gets no copy."""
    from .settings import PROGRESS_ENV

    line = " ".join(message.split())[:MAX_LINE]
    log = os.environ.get(WARNINGS_LOG_ENV)
    if log:
        try:
            _append_line(Path(log), line)
            return
        except OSError:
            pass
    terminal = sys.__stderr__
    if os.environ.get(PROGRESS_ENV) == "terminal" and terminal is not None and terminal is not sys.stderr:
        try:
            print(f"CacheWarning: {line}", file=terminal, flush=True)
        except (OSError, ValueError):
            pass


def warn_unreadable(path: Path, reason: str, stacklevel: int = 2) -> None:
    """Say that the entry at ``path`` is not used, and why; the caller recomputes and overwrites it."""
    message = f"cache entry {path} is unreadable ({reason}): recomputing"
    tell_user(message)
    warnings.warn(message, CacheWarning, stacklevel=stacklevel + 1)


class WarningsLog:
    """The cache warnings of a run, for its terminal: creating one starts an empty log at ``path``
    and names it in :data:`WARNINGS_LOG_ENV`, which the run's kernels and workers inherit;
    :meth:`show` prints the lines added since it last did."""

    def __init__(self, path: Path):
        self.path, self.offset = Path(path), 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.unlink(missing_ok=True)
        os.environ[WARNINGS_LOG_ENV] = str(self.path)

    def new_lines(self) -> list[str]:
        """The whole lines appended since the last call."""
        try:
            with serialize.open_regular(self.path) as f:
                f.seek(self.offset)
                text = f.read(1 << 20)
        except (OSError, serialize.DecodeError):
            return []
        text = text[:text.rfind(b"\n") + 1]
        self.offset += len(text)
        return text.decode("utf-8", "replace").splitlines()

    def show(self, file=None) -> None:
        """Print the new lines (on stderr by default), each marked as a warning."""
        for line in self.new_lines():
            print(f"  \N{WARNING SIGN} {line}", file=file or sys.stderr, flush=True)


#: What :func:`read_entry` returns for an absent or unreadable entry.
MISSING = object()


def _read(path: Path, loads: Callable[[Path], Any], legacy_suffix: str) -> Any:
    """The value of the entry at ``path``; ``MISSING`` if there is none or it is unreadable (warned,
    as is a pickled file an older version left in its place)."""
    legacy = path.with_suffix(legacy_suffix)
    if not path.exists():
        if legacy.exists():
            warn_unreadable(legacy, "pickled files of older versions are never loaded", 4)
        return MISSING
    try:
        return loads(path)  # only a regular file, bounded, its checksum bound to its name verified
    except serialize.DecodeError as e:
        warn_unreadable(path, str(e), 4)
    except OSError as e:  # vanished or unreadable between the check and the read
        warn_unreadable(path, f"{type(e).__name__}: {e}", 4)
    return MISSING


def read_entry(path: Path) -> Any:
    """A result entry's value, or :data:`MISSING` (absent, or unreadable: warned)."""
    return _read(Path(path), serialize.loads, ".pkl")


def write_entry(path: Path, value: Any, entry: str = "") -> None:
    """Store ``value`` at ``path`` atomically (``TypeError`` naming ``entry`` if the format cannot hold it)."""
    path = Path(path)
    atomic_write_bytes(path, serialize.dumps(value, entry or path.parent.name, binding=path.name))
    path.with_suffix(".pkl").unlink(missing_ok=True)  # the older version's entry, now replaced


def load_weights(path: Path) -> Any | None:
    """The state saved by :func:`save_weights` (tensors on the CPU), or None if there is none or
    it is unreadable (warned: the caller trains again and overwrites it)."""
    value = _read(Path(path), serialize.loads_tensors, ".pt")
    return None if value is MISSING else value


def save_weights(path: Path, state: Any, entry: str = "") -> None:
    """Store a state (dicts of tensors, optimiser states, losses, flags) atomically as safetensors."""
    path = Path(path)
    atomic_write_bytes(path, serialize.dumps_tensors(state, entry or path.parent.name, binding=path.name))
    path.with_suffix(".pt").unlink(missing_ok=True)  # the older version's pickled checkpoint


class NotStored(LookupError):
    """Raised by :func:`cached` within :func:`stored_only` for a result that no usable entry holds."""


_stored_only = contextvars.ContextVar("rcstudy_stored_only", default=False)


@contextlib.contextmanager
def stored_only() -> Iterator[None]:
    """Within it, :func:`cached` returns results the cache holds and raises :class:`NotStored`
    instead of computing one (a requested refresh: for every result): whether a computation is done
    already is known by trying it, without doing the work (:func:`rcstudy.jobs.execute`)."""
    token = _stored_only.set(True)
    try:
        yield
    finally:
        _stored_only.reset(token)


def cached(name: str, params: dict, compute: Callable[[], T], *, data_files: Iterable[Path] = (),
           code: Sequence[str] | None = None) -> T:
    """Return the cached result of ``compute()`` for these parameters, data and code, computing it once.

    ``name`` groups entries (a folder per name); ``params`` must contain everything else the
    result depends on (model name, seed, sizes, ...). ``code`` names the modules whose source
    the result depends on; by default the module that calls ``cached`` (with all it imports).
    Results are stored in the typed format of :mod:`rcstudy.serialize` (a ``TypeError`` names
    the entry if the result holds anything else); an unreadable entry is recomputed with a
    :class:`CacheWarning`; within :func:`stored_only`, a result not stored raises :class:`NotStored`.
    """
    key = cache_key(name, params, data_files, code or _calling_module(1))
    path = entry_path(name, key)
    if not refresh_requested():
        result = read_entry(path)
        if result is not MISSING:
            return result
    if _stored_only.get():
        raise NotStored(f"{name}: no stored result {path.name}")
    misses[name] += 1
    result = compute()
    write_entry(path, result, name)
    atomic_write_bytes(path.with_suffix(".json"), json.dumps(key, indent=1, default=str).encode())
    return result
