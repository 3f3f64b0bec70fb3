"""The results cache against hostile or odd files and shared use: a named pipe or a device in place
of an entry is refused without blocking, a zip built to expand is refused unread, an altered or
swapped entry fails its checksum, files are created as the umask allows (a cache shared between
users), and every cache warning also reaches the run's terminal through a log."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import stat
import sys
import threading
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from rcstudy import cache, exports, serialize


@contextlib.contextmanager
def deadline(seconds: int):
    """Fail, rather than hang, if the block takes longer than ``seconds``."""
    def timeout(signum, frame):
        raise TimeoutError(f"blocked for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def cached(name, params, compute):
    """:func:`rcstudy.cache.cached`, keyed by the cache's own code only: the library's other modules
    may change while the tests run, and with them the key of a result computed outside it."""
    return cache.cached(name, params, compute, code=["rcstudy.cache"])


def one_entry(isolated_cache, name="t", value=None) -> Path:
    cached(name, {}, lambda: {"a": np.arange(3.0)} if value is None else value)
    (entry,) = (isolated_cache / "results" / name).glob("*.npz")
    return entry


# --- files that are not regular ---------------------------------------------------------------

def test_a_named_pipe_in_place_of_an_entry_is_recomputed_without_blocking(isolated_cache):
    entry = one_entry(isolated_cache)
    entry.unlink()
    os.mkfifo(entry)
    with deadline(20), pytest.warns(cache.CacheWarning, match=r"is unreadable \(not a regular file \(a named pipe\)\)"):
        assert cached("t", {}, lambda: "again") == "again"
    assert stat.S_ISREG(entry.stat().st_mode)  # replaced by a regular entry
    assert cached("t", {}, lambda: pytest.fail("recomputed")) == "again"


def test_a_named_pipe_in_place_of_weights_is_retrained_without_blocking(tmp_path):
    path = tmp_path / "w.safetensors"
    os.mkfifo(path)
    with deadline(20), pytest.warns(cache.CacheWarning, match=r"not a regular file \(a named pipe\)"):
        assert cache.load_weights(path) is None
    cache.save_weights(path, {"w": torch.ones(2)})
    assert torch.equal(cache.load_weights(path)["w"], torch.ones(2))


def test_a_link_to_a_device_is_refused_unread(isolated_cache):
    entry = one_entry(isolated_cache)
    entry.unlink()
    entry.symlink_to("/dev/zero")  # reading it would never end
    with deadline(20), pytest.warns(cache.CacheWarning, match=r"not a regular file \(a character device\)"):
        assert cached("t", {}, lambda: 5) == 5
    assert not entry.is_symlink() and cache.read_entry(entry) == 5


# --- bounded decompression --------------------------------------------------------------------

def sealed_zip(members: dict[str, bytes], binding: str, compression=zipfile.ZIP_STORED) -> bytes:
    """A zip with a valid checksum: only the bounds (or the decoding) can refuse it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        digests = [(n, serialize.hashlib.sha256(d).digest()) for n, d in members.items()]
        zf.comment = b"rcstudy-sha256:" + serialize.zip_checksum(digests, binding).encode()
    return buf.getvalue()


def npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return buf.getvalue()


BOMB_BYTES = 64 << 20  # deflates to about 64 KB: 1000 times


def bomb(binding: str) -> bytes:
    doc = {"format": serialize.FORMAT, "value": {"t": "ndarray", "ref": "0", "dtype": "|u1", "shape": [BOMB_BYTES]}}
    return sealed_zip({"structure.json": json.dumps(doc).encode(), "0.npy": npy(np.zeros(BOMB_BYTES, np.uint8))},
                      binding, zipfile.ZIP_DEFLATED)


def patch_declared_size(data: bytes, name: bytes, size: int) -> bytes:
    """``data`` with the central directory's uncompressed size of member ``name`` set to ``size``."""
    out = bytearray(data)
    at = 0
    while (at := out.find(b"PK\x01\x02", at)) >= 0:
        name_length = int.from_bytes(out[at + 28:at + 30], "little")
        if bytes(out[at + 46:at + 46 + name_length]) == name:
            out[at + 24:at + 28] = size.to_bytes(4, "little")
            return bytes(out)
        at += 4
    raise AssertionError(f"no member {name!r}")


def test_a_zip_that_expands_a_thousandfold_is_refused_unread(isolated_cache):
    entry = one_entry(isolated_cache)
    data = bomb(entry.name)
    assert len(data) < BOMB_BYTES / 500
    entry.write_bytes(data)
    start = time.perf_counter()
    with pytest.warns(cache.CacheWarning, match=r"member '0.npy' declares 671\d{5} bytes from \d+ compressed "
                                                r"\(more than 16x\): refused unread"):
        assert cached("t", {}, lambda: "small") == "small"
    assert time.perf_counter() - start < 2


def test_a_zip_that_hides_its_size_is_read_no_further_than_it_declares(isolated_cache, monkeypatch):
    entry = one_entry(isolated_cache)
    entry.write_bytes(patch_declared_size(bomb(entry.name), b"0.npy", 100_000))  # within 16x of its 64 KB
    sizes = []
    real = serialize._read_member
    monkeypatch.setattr(serialize, "_read_member", lambda zf, info: sizes.append(len(data := real(zf, info))) or data)
    with pytest.warns(cache.CacheWarning, match="is unreadable .*(CRC|declares)"):
        assert cached("t", {}, lambda: "small") == "small"
    assert max(sizes, default=0) <= 100_000


def test_a_deflated_entry_within_bounds_still_reads(isolated_cache):
    """The bounds refuse expansion, not compression: a sealed deflated entry of modest ratio decodes."""
    entry = one_entry(isolated_cache)
    doc = {"format": serialize.FORMAT, "value": {"t": "ndarray", "ref": "0", "dtype": "<f8", "shape": [1000]}}
    values = np.random.default_rng(0).random(1000)
    entry.write_bytes(sealed_zip({"structure.json": json.dumps(doc).encode(), "0.npy": npy(values)}, entry.name,
                                 zipfile.ZIP_DEFLATED))
    np.testing.assert_array_equal(cache.read_entry(entry), values)


def test_a_safetensors_header_larger_than_its_file_is_refused(tmp_path):
    path = tmp_path / "w.safetensors"
    path.write_bytes((10 ** 12).to_bytes(8, "little") + b"{}")
    with pytest.warns(cache.CacheWarning, match="a header of 1000000000000 bytes in a file of 10"):
        assert cache.load_weights(path) is None


# --- checksums ----------------------------------------------------------------------------------

def rewritten(data: bytes, edit) -> bytes:
    """The zip ``data`` with its document edited by ``edit`` and everything else (comment included) kept:
    a well-formed zip (valid CRCs) whose checksum no longer matches."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for info in src.infolist():
            member = src.read(info)
            zf.writestr(info, edit(member) if info.filename == "structure.json" else member)
        zf.comment = src.comment
    return buf.getvalue()


def test_an_altered_but_well_formed_entry_is_recomputed(isolated_cache):
    entry = one_entry(isolated_cache, value={"accuracy": 0.5})
    altered = rewritten(entry.read_bytes(), lambda doc: doc.replace(b"0.5", b"0.9"))
    assert zipfile.ZipFile(io.BytesIO(altered)).testzip() is None  # every CRC valid
    entry.write_bytes(altered)
    with pytest.warns(cache.CacheWarning, match="content checksum mismatch"):
        assert cached("t", {}, lambda: {"accuracy": 0.5}) == {"accuracy": 0.5}


def test_another_keys_entry_copied_in_fails_its_checksum(isolated_cache):
    cached("t", {"seed": 1}, lambda: "one")
    cached("t", {"seed": 2}, lambda: "two")
    first, second = sorted((isolated_cache / "results" / "t").glob("*.npz"), key=lambda p: cache.read_entry(p))
    first.write_bytes(second.read_bytes())
    with pytest.warns(cache.CacheWarning, match="content checksum mismatch"):
        assert cached("t", {"seed": 1}, lambda: "one") == "one"
    # an entry made by the format's own writer, but not for this file, is refused too
    first.write_bytes(serialize.dumps("forged", "t"))
    with pytest.warns(cache.CacheWarning, match="content checksum mismatch"):
        assert cached("t", {"seed": 1}, lambda: "one") == "one"


def test_an_entry_without_a_checksum_is_recomputed(isolated_cache):
    entry = one_entry(isolated_cache)
    src = zipfile.ZipFile(io.BytesIO(entry.read_bytes()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for info in src.infolist():
            zf.writestr(info, src.read(info))
    entry.write_bytes(buf.getvalue())
    with pytest.warns(cache.CacheWarning, match="no content checksum"):
        cached("t", {}, lambda: 1)


def test_altered_weights_are_retrained(tmp_path):
    path = tmp_path / "w.safetensors"
    cache.save_weights(path, {"w": torch.arange(4.0), "losses": [0.5]})
    data = bytearray(path.read_bytes())
    at = data.rindex(torch.arange(4.0).numpy().tobytes())
    data[at + 4:at + 8] = np.float32(7.0).tobytes()  # the tensor's second value: still valid safetensors
    path.write_bytes(bytes(data))
    from safetensors.torch import load_file

    assert load_file(str(path))["0"].tolist() == [0.0, 7.0, 2.0, 3.0]
    with pytest.warns(cache.CacheWarning, match="content checksum mismatch"):
        assert cache.load_weights(path) is None
    other = tmp_path / "other.safetensors"
    cache.save_weights(other, {"w": torch.arange(4.0), "losses": [0.5]})
    path.write_bytes(other.read_bytes())  # another entry's weights under this name
    with pytest.warns(cache.CacheWarning, match="content checksum mismatch"):
        assert cache.load_weights(path) is None


@pytest.mark.parametrize("cls", ["os:system", "rcstudy.cache:Path", "rcstudy.cache:__builtins__"])
def test_entries_naming_code_are_refused_by_the_decoder_even_with_a_valid_checksum(cls, isolated_cache, tmp_path):
    entry = one_entry(isolated_cache)
    marker = tmp_path / "executed"
    doc = {"format": serialize.FORMAT, "value": {"t": "dataclass", "cls": cls, "fields": {"command": f"touch {marker}"}}}
    entry.write_bytes(sealed_zip({"structure.json": json.dumps(doc).encode()}, entry.name))
    with pytest.warns(cache.CacheWarning, match="is unreadable") as record:
        assert cached("t", {}, lambda: 1) == 1
    assert "checksum" not in str(record[0].message) and not marker.exists()


# --- permissions ----------------------------------------------------------------------------------

@contextlib.contextmanager
def umask(mask: int):
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_files_are_created_as_the_umask_allows(mask, mode, isolated_cache, tmp_path, monkeypatch):
    from rcstudy import run

    monkeypatch.setenv("RCSTUDY_EXPORTS", str(tmp_path / "exports"))
    with umask(mask):
        cached("t", {}, lambda: 1)
        cache.save_weights(isolated_cache / "w" / "w.safetensors", {"w": torch.ones(1)})
        exports.write_json("e.json", {"a": 1})
        exports.write_npy("e.npy", np.arange(3))
        run.record_timing(run.ChapterResult("reclor", True, 1.0), "quick", tmp_path / "book-root", cold=False)
        cache.atomic_write_bytes(tmp_path / "direct" / "f.bin", b"x")
    files = [p for p in [*isolated_cache.rglob("*"), *tmp_path.rglob("*")] if p.is_file()]
    assert len(files) >= 7
    assert {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {str(p): oct(mode) for p in files}
    assert not [p for p in files if p.name.endswith(".tmp")]


# --- warnings reach the terminal --------------------------------------------------------------

def test_each_warning_is_one_line_of_the_log(isolated_cache, tmp_path, monkeypatch):
    log = cache.WarningsLog(tmp_path / "run" / "cache-warnings.log")  # sets the variable, for kernels and workers
    assert os.environ[cache.WARNINGS_LOG_ENV] == str(log.path)
    monkeypatch.setenv(cache.WARNINGS_LOG_ENV, str(log.path))  # restored after the test
    entry = one_entry(isolated_cache)
    for damage in (b"junk", b"more\njunk"):
        entry.write_bytes(damage)
        with pytest.warns(cache.CacheWarning):
            cached("t", {}, lambda: 1)
    with pytest.warns(cache.CacheWarning):
        cache.warn_unreadable(entry, "a reason\nover two lines")
    lines = log.new_lines()
    assert len(lines) == 3 and all(line.startswith(f"cache entry {entry} is unreadable (") for line in lines)
    assert lines[2].endswith("(a reason over two lines): recomputing")
    assert log.new_lines() == []
    shown = io.StringIO()
    with pytest.warns(cache.CacheWarning):
        cache.warn_unreadable(entry, "later")
    log.show(shown)
    assert shown.getvalue() == f"  \N{WARNING SIGN} cache entry {entry} is unreadable (later): recomputing\n"


def test_a_warning_is_logged_even_where_warnings_are_errors(isolated_cache, tmp_path, monkeypatch):
    monkeypatch.setenv(cache.WARNINGS_LOG_ENV, str(tmp_path / "w.log"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", cache.CacheWarning)
        with pytest.raises(cache.CacheWarning):
            cache.warn_unreadable(tmp_path / "x.npz", "why")
    assert (tmp_path / "w.log").read_text() == f"cache entry {tmp_path / 'x.npz'} is unreadable (why): recomputing\n"


def test_concurrent_warnings_leave_whole_lines(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.WARNINGS_LOG_ENV, str(tmp_path / "w.log"))

    def warn_many(who):
        for i in range(200):
            cache.tell_user(f"{who} {i} " + "x" * 300)

    threads = [threading.Thread(target=warn_many, args=(w,)) for w in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "w.log").read_text().splitlines()
    assert len(lines) == 400 and all(line.endswith("x" * 300) and len(line.split()) == 3 for line in lines)


def test_without_a_log_a_kernel_writes_to_the_runners_terminal(tmp_path, monkeypatch):
    """In a kernel ``sys.stderr`` goes into the notebook and ``sys.__stderr__`` to the terminal of
    ``rcstudy run``, where the runner sends progress (``RCSTUDY_PROGRESS=terminal``)."""
    monkeypatch.delenv(cache.WARNINGS_LOG_ENV, raising=False)
    terminal, notebook = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "__stderr__", terminal)
    monkeypatch.setattr(sys, "stderr", notebook)
    monkeypatch.setenv("RCSTUDY_PROGRESS", "terminal")
    cache.tell_user("cache entry x is unreadable (why): recomputing")
    assert terminal.getvalue() == "CacheWarning: cache entry x is unreadable (why): recomputing\n"
    monkeypatch.setenv(cache.WARNINGS_LOG_ENV, str(tmp_path / "w.log"))  # with a log, the runner shows it
    cache.tell_user("second")
    monkeypatch.setenv(cache.WARNINGS_LOG_ENV, "")
    monkeypatch.setenv("RCSTUDY_PROGRESS", "")  # not a run's kernel: the warning itself is all
    cache.tell_user("third")
    assert terminal.getvalue().count("\n") == 1 and notebook.getvalue() == ""
    assert (tmp_path / "w.log").read_text() == "second\n"


KERNEL_CELLS = ["""
import os
from pathlib import Path
from rcstudy import cache

entry = Path(os.environ["ENTRY"])
entry.parent.mkdir(parents=True, exist_ok=True)
entry.write_bytes(b"junk")
assert cache.read_entry(entry) is cache.MISSING  # with the run's log
""", """
os.environ.pop(cache.WARNINGS_LOG_ENV)
other = entry.with_name("y.npz")
other.write_bytes(b"junk")
assert cache.read_entry(other) is cache.MISSING  # without one
"""]

RUNNER = """
import sys, nbformat, papermill
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in sys.argv[2:]])
papermill.execute_notebook(nb, sys.argv[1], kernel_name="python3", progress_bar=False)
"""


@pytest.mark.slow
def test_a_kernels_cache_warnings_reach_the_runner(tmp_path):
    """Through papermill, as ``rcstudy run`` executes a chapter: a warning in the kernel goes to the
    run's log, or, without one, to the runner's own stderr (its terminal), besides the notebook."""
    import subprocess

    entry = tmp_path / "cache" / "results" / "t" / "x.npz"
    log = tmp_path / "cache-warnings.log"
    env = {**os.environ, "ENTRY": str(entry), cache.WARNINGS_LOG_ENV: str(log), "RCSTUDY_PROGRESS": "terminal",
           "PYTHONPATH": os.pathsep.join([str(cache.LIBRARY_PARENT), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "out.ipynb"
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(out), *KERNEL_CELLS], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, second = (f"cache entry {entry.with_name(name)} is unreadable (" for name in ("x.npz", "y.npz"))
    assert log.read_text().count("\n") == 1 and log.read_text().startswith(first)
    assert first not in proc.stderr  # the runner shows the log's lines itself
    terminal = [line for line in proc.stderr.splitlines() if second in line]
    assert len(terminal) == 1 and terminal[0].startswith("CacheWarning: ")
    notebook = json.loads(out.read_text())
    stderr = "".join(t for c in notebook["cells"] for o in c["outputs"] if o.get("name") == "stderr" for t in o["text"])
    assert first in stderr and second in stderr  # the notebook keeps both, as before
