"""On-disk cache of expensive results, keyed by parameters, data checksums and library version.

Every write is atomic (temporary file in the same folder, then ``os.replace``), so an
interrupted run never leaves a half-written entry: the next run recomputes only what is missing.
``rcstudy run --refresh`` (``RCSTUDY_REFRESH=1``) ignores existing entries and overwrites them.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from . import __version__
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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see either the old or the new file, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _data_label(path: Path) -> str:
    """A data file's path relative to the data directory (independent of where that lives)."""
    try:
        return path.resolve().relative_to(data_dir().resolve()).as_posix()
    except ValueError:
        return path.name


def cache_key(name: str, params: dict, data_files: Iterable[Path] = ()) -> dict:
    """Everything a cached result depends on, as a JSON-able dict."""
    return {
        "name": name,
        "params": params,
        "data": {_data_label(Path(p)): file_checksum(p) for p in data_files},
        "rcstudy": __version__,
    }


def entry_path(name: str, key: dict) -> Path:
    return cache_dir() / "results" / name / f"{fingerprint(key)}.pkl"


def cached(name: str, params: dict, compute: Callable[[], T], *, data_files: Iterable[Path] = ()) -> T:
    """Return the cached result of ``compute()`` for these parameters and data, computing it once.

    ``name`` groups entries (a folder per name); ``params`` must contain everything else the
    result depends on (model name, seed, sizes, ...). Results are pickled.
    """
    key = cache_key(name, params, data_files)
    path = entry_path(name, key)
    if path.exists() and not refresh_requested():
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            pass  # an entry written by an incompatible version: recompute and overwrite
    result = compute()
    atomic_write_bytes(path, pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    atomic_write_bytes(path.with_suffix(".json"), json.dumps(key, indent=1, default=str).encode())
    return result
