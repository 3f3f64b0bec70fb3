"""Results cache: computed once, keyed by parameters and data, atomic, refreshable."""

import shutil

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
    assert not list(isolated_cache.rglob("*.npz"))
    assert cache.cached("t", {"x": 1}, lambda: 7) == 7


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    target = tmp_path / "a" / "b.bin"
    cache.atomic_write_bytes(target, b"123")
    cache.atomic_write_bytes(target, b"456")
    assert target.read_bytes() == b"456"
    assert [p.name for p in target.parent.iterdir()] == ["b.bin"]


def test_corrupt_entry_is_recomputed(isolated_cache):
    cache.cached("t", {}, lambda: 1)
    (entry,) = (isolated_cache / "results" / "t").glob("*.npz")
    entry.write_bytes(b"not an entry")
    with pytest.warns(cache.CacheWarning, match="is unreadable .*: recomputing"):
        assert cache.cached("t", {}, lambda: 2) == 2


def _package(root, sources):
    for name, text in sources.items():
        path = root / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_code_fingerprint_follows_imports(tmp_path):
    """Editing a module the code imports (directly, relatively, lazily or through another) changes the
    fingerprint; editing a module it never imports does not."""
    _package(tmp_path, {
        "pkg.__init__": "",
        "pkg.engines.__init__": "",
        "pkg.engines.train": "import math\nSTEPS = 1\n",
        "pkg.engines.score": "def f():\n    from . import train\n    return train\n",
        "pkg.experiment": "from .engines import score\n",
        "pkg.unrelated": "X = 1\n",
    })
    closure = cache.module_closure("pkg.experiment", tmp_path)
    assert closure == ["pkg", "pkg.engines", "pkg.engines.score", "pkg.engines.train", "pkg.experiment"]
    before = cache.code_fingerprint(["pkg.experiment"], tmp_path)
    (tmp_path / "pkg" / "unrelated.py").write_text("X = 2\n")
    assert cache.code_fingerprint(["pkg.experiment"], tmp_path) == before
    (tmp_path / "pkg" / "engines" / "train.py").write_text("import math\nSTEPS = 2\n")
    assert cache.code_fingerprint(["pkg.experiment"], tmp_path) != before


def test_editing_an_engine_invalidates_exactly_its_entries(tmp_path):
    """On a copy of the library: an edit to the multiple-choice engine changes the key of results
    computed through it (its own, LogiQA's readers) and leaves MetaLogic's rule baselines alone."""
    shutil.copytree(cache.LIBRARY_PARENT / "rcstudy", tmp_path / "rcstudy")
    mc = ["rcstudy.models.mc"]
    readers = ["rcstudy.baselines.readers"]
    rules = ["rcstudy.baselines.metalogic_rules"]
    before = {m[0]: cache.code_fingerprint(m, tmp_path) for m in (mc, readers, rules)}
    engine = tmp_path / "rcstudy" / "models" / "mc.py"
    engine.write_text(engine.read_text() + "\n# a changed engine\n")
    after = {m[0]: cache.code_fingerprint(m, tmp_path) for m in (mc, readers, rules)}
    assert after["rcstudy.models.mc"] != before["rcstudy.models.mc"]
    assert after["rcstudy.baselines.readers"] != before["rcstudy.baselines.readers"]
    assert after["rcstudy.baselines.metalogic_rules"] == before["rcstudy.baselines.metalogic_rules"]


def test_cached_keys_by_the_calling_module(isolated_cache, monkeypatch):
    """A result computed outside the library is keyed by the whole library's code; a changed
    fingerprint recomputes."""
    assert cache.cached("t", {}, lambda: 1) == 1
    monkeypatch.setattr(cache, "code_fingerprint", lambda modules, root=None: "other code")
    assert cache.cached("t", {}, lambda: 2) == 2
