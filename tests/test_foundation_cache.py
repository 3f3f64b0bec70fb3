"""Results cache: computed once, keyed by parameters and data, atomic, refreshable."""

import pytest

from rcstudy import cache


def test_computes_once_then_reads_from_disk(isolated_cache):
    calls = []
    compute = lambda: calls.append(1) or {"acc": 0.5}  # noqa: E731
    assert cache.cached("t", {"seed": 1}, compute) == {"acc": 0.5}
    assert cache.cached("t", {"seed": 1}, compute) == {"acc": 0.5}
    assert len(calls) == 1
    cache.cached("t", {"seed": 2}, compute)
    assert len(calls) == 2


def test_key_includes_data_checksum(isolated_cache, tmp_path):
    data = tmp_path / "d.json"
    data.write_text("[1]")
    calls = []
    compute = lambda: calls.append(1) or len(calls)  # noqa: E731
    assert cache.cached("t", {}, compute, data_files=[data]) == 1
    data.write_text("[1, 2]")
    assert cache.cached("t", {}, compute, data_files=[data]) == 2


def test_refresh_recomputes(isolated_cache, monkeypatch):
    cache.cached("t", {}, lambda: "old")
    monkeypatch.setenv("RCSTUDY_REFRESH", "1")
    assert cache.cached("t", {}, lambda: "new") == "new"
    monkeypatch.delenv("RCSTUDY_REFRESH")
    assert cache.cached("t", {}, lambda: "unused") == "new"


def test_failed_compute_leaves_no_entry(isolated_cache):
    def boom():
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        cache.cached("t", {"x": 1}, boom)
    assert not list(isolated_cache.rglob("*.pkl"))
    assert cache.cached("t", {"x": 1}, lambda: 7) == 7


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    target = tmp_path / "a" / "b.bin"
    cache.atomic_write_bytes(target, b"123")
    cache.atomic_write_bytes(target, b"456")
    assert target.read_bytes() == b"456"
    assert [p.name for p in target.parent.iterdir()] == ["b.bin"]


def test_corrupt_entry_is_recomputed(isolated_cache):
    cache.cached("t", {}, lambda: 1)
    (entry,) = (isolated_cache / "results" / "t").glob("*.pkl")
    entry.write_bytes(b"not a pickle")
    assert cache.cached("t", {}, lambda: 2) == 2
