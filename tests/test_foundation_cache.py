"""Results cache: computed once, keyed by parameters and data, atomic, refreshable; typed files that
never run code when read, safe to share between processes."""

import collections
import dataclasses
import enum
import fractions
import io
import json
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from rcstudy import cache, runtime, serialize
from rcstudy.baselines import readers, span_readers
from rcstudy.data import MCItem
from rcstudy.data import metalogic as ml
from rcstudy.models import mc


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


def test_stored_only_reads_what_is_stored_and_computes_nothing(isolated_cache, monkeypatch):
    """Whether a job is done already is learnt by running it within ``stored_only``: a stored
    result is returned, a missing one (or any one, under a refresh) raises before its computation."""
    cache.cached("t", {"seed": 1}, lambda: "stored")
    never = lambda: pytest.fail("computed within stored_only")  # noqa: E731
    with cache.stored_only():
        assert cache.cached("t", {"seed": 1}, never) == "stored"
        with pytest.raises(cache.NotStored, match="^t: no stored result"):
            cache.cached("t", {"seed": 2}, never)
        monkeypatch.setenv("RCSTUDY_REFRESH", "1")
        with pytest.raises(cache.NotStored):
            cache.cached("t", {"seed": 1}, never)
    assert cache.cached("t", {"seed": 2}, lambda: "computed") == "computed"  # outside it, as before


@pytest.mark.parametrize("value, on", [("1", True), ("TRUE", True), (" yes ", True), ("on", True), ("", False),
                                       ("0", False), ("false", False), ("no", False), ("off", False)])
def test_switches_in_the_environment_read_as_huggingface_hub_reads_its_own(monkeypatch, value, on):
    from rcstudy.settings import env_flag, hub_offline, refresh_requested

    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    monkeypatch.setenv("RCSTUDY_REFRESH", value)
    assert env_flag("HF_HUB_OFFLINE") is hub_offline() is refresh_requested() is on


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


# --- the typed format: every supported type, nothing else ----------------------------------

def _same(a, b):
    """Equal values of exactly the same types (arrays: dtype, shape and bytes; nan equals nan)."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    elif isinstance(a, float):
        assert (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name))
    else:
        assert a == b


ARRAYS = [np.arange(6).astype(dt).reshape(2, 3) for dt in
          (np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32, np.float64, np.complex64, np.bool_)] + [
    np.array(["ab", "ĉ", ""]), np.array([b"x", b"yz"]), np.array(["2024-01-02"], dtype="datetime64[D]"),
    np.array([(1, 2.5)], dtype=[("a", "<i4"), ("b", "<f8")]), np.arange(4, dtype=">f4"), np.array(3.5),
    np.zeros((0, 3), dtype=np.float32), np.arange(12.0).reshape(3, 4)[:, ::2], np.asfortranarray(np.eye(3)),
    np.array([np.nan, np.inf, -0.0])]

VALUES = {
    "scalars": [None, True, False, 0, -7, 2 ** 80, 1.5, -0.0, float("nan"), float("inf"), float("-inf"), "",
                "é ∧ ¬"],
    "containers": ([1, (2, [3])], (), [], {}, set(), frozenset({1, "a"}), {(1, "b"), None}),
    "keys": {1: "int", 2.5: "float", None: "none", (1, ("x", 2)): "tuple", True: "bool", frozenset({3}): "set"},
    "arrays": ARRAYS,
    "numpy scalars": [np.float32(1.25), np.float64(-2.0), np.int64(-3), np.uint8(255), np.bool_(True), np.str_("s"),
                      np.float16(np.nan)],
    "dataclasses": [ml.Prediction((ml.Step("s1", "->", "s2"),), {"s1": (ml.Triple((ml.NEG,), "v1", ml.IMP, (), "v2"),)},
                                  {"s1": 2}),
                    readers.ReaderRun({"dev": np.ones((2, 4), np.float32)}, [0.5], [1.0, 0.5], 1, 100),
                    {"nested": [span_readers.SpanPredictions({"q": "a"}, {"q": None}, [])]}],
}


@pytest.mark.parametrize("name", list(VALUES))
def test_every_supported_type_round_trips_exactly(name, isolated_cache):
    value = VALUES[name]
    data = serialize.dumps(value, "t")
    assert serialize.dumps(value, "t") == data  # the same value gives the same bytes
    _same(value, serialize.loads(data))
    assert cache.cached("t", {"name": name}, lambda: value) is value
    _same(value, cache.cached("t", {"name": name}, lambda: pytest.fail("recomputed")))


@dataclasses.dataclass
class NotOurs:  # a dataclass outside the rcstudy package
    x: int = 1


class Level(enum.IntEnum):
    HIGH = 1


def _cyclic():
    x = []
    x.append(x)
    return x


@pytest.mark.parametrize("value, shown", [
    (NotOurs(), "NotOurs"), (collections.OrderedDict(a=1), "collections.OrderedDict"),
    (fractions.Fraction(1, 2), "fractions.Fraction"), (np.array([1, "a"], dtype=object), "numpy.ndarray"),
    (Level.HIGH, "Level"), (torch.zeros(2), "torch.Tensor"), (lambda: 1, "function"), (_cyclic(), "list"),
    (np.ma.masked_array([1, 2]), "MaskedArray"), (Path("x"), "PosixPath")])
def test_other_types_are_refused_when_written(value, shown, isolated_cache):
    with pytest.raises(TypeError, match=f"cache entry 'refused' cannot store a .*{shown}.* at the value\\['k'\\]"):
        cache.cached("refused", {}, lambda: {"k": [value]})
    assert not list(isolated_cache.rglob("*.npz"))


# --- unreadable entries are recomputed with a warning, never loaded ------------------------------

class RunsACommand:
    """Pickles to ``os.system(command)``: loading it with pickle would run the command."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _doc(value) -> bytes:
    return json.dumps({"format": serialize.FORMAT, "value": value}).encode()


def _npy(array, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=allow_pickle)
    return buf.getvalue()


@pytest.fixture
def marker(tmp_path):
    return tmp_path / "executed"


def _hostile(marker) -> dict[str, bytes]:
    command = f"touch {marker}"
    dataclass = {"t": "dataclass", "fields": {"command": command}}
    return {
        "os.system": _zip({"structure.json": _doc({**dataclass, "cls": "os:system"})}),
        "subprocess": _zip({"structure.json": _doc({**dataclass, "cls": "subprocess:Popen"})}),
        "a module inside rcstudy": _zip({"structure.json": _doc({**dataclass, "cls": "rcstudy.cache:os"})}),
        "a non-dataclass inside rcstudy": _zip({"structure.json": _doc({**dataclass, "cls": "rcstudy.cache:Path"})}),
        "a dunder path": _zip({"structure.json": _doc({**dataclass, "cls": "rcstudy.cache:__builtins__"})}),
        "a test-module dataclass": _zip({"structure.json": _doc(
            {"t": "dataclass", "cls": f"{__name__}:NotOurs", "fields": {"x": 1}})}),
        "a pickled array": _zip({"structure.json": _doc({"t": "ndarray", "ref": "0", "dtype": "|O", "shape": [1]}),
                                 "0.npy": _npy(np.array([RunsACommand(command)], dtype=object), allow_pickle=True)}),
        "a pickle": pickle.dumps(RunsACommand(command)),
    }


@pytest.mark.parametrize("kind", list(_hostile(Path("m"))))
def test_entries_naming_code_are_refused_when_read_and_nothing_runs(kind, isolated_cache, marker):
    cache.cached("t", {}, lambda: "first")
    (entry,) = (isolated_cache / "results" / "t").glob("*.npz")
    entry.write_bytes(_hostile(marker)[kind])
    with pytest.warns(cache.CacheWarning, match=f"cache entry {re.escape(str(entry))} is unreadable .*: recomputing"):
        assert cache.cached("t", {}, lambda: "again") == "again"
    assert not marker.exists()
    assert cache.cached("t", {}, lambda: pytest.fail("recomputed")) == "again"  # overwritten with a valid entry


def test_a_pickle_left_by_an_older_version_is_never_loaded(isolated_cache, marker):
    cache.cached("t", {}, lambda: "first")
    (entry,) = (isolated_cache / "results" / "t").glob("*.npz")
    entry.unlink()
    legacy = entry.with_suffix(".pkl")
    legacy.write_bytes(pickle.dumps(RunsACommand(f"touch {marker}")))
    with pytest.warns(cache.CacheWarning, match=r"\.pkl is unreadable \(pickled files of older versions"):
        assert cache.cached("t", {}, lambda: "new") == "new"
    assert not marker.exists() and not legacy.exists() and entry.exists()


def _damaged(data: bytes) -> dict[str, bytes]:
    zf = zipfile.ZipFile(io.BytesIO(data))
    doc = json.loads(zf.read("structure.json"))
    array = zf.read("0.npy")
    middle = bytearray(data)
    middle[len(data) // 2] ^= 0xFF

    def with_value(node, **members):
        return _zip({"structure.json": _doc(node), "0.npy": array, **members})

    node = doc["value"]["v"]["a"]
    return {
        "truncated": data[:len(data) // 2], "one byte cut": data[:-1], "a flipped byte": bytes(middle),
        "empty": b"", "text": b"hello", "a numpy .npz": _zip({"a.npy": array}),
        "no format": _zip({"structure.json": json.dumps({"value": 1}).encode()}),
        "bad JSON": _zip({"structure.json": b"{"}),
        "another shape": with_value({**node, "shape": [4]}),
        "another dtype": with_value({**node, "dtype": "<i8"}),
        "a missing array": with_value({**node, "ref": "1"}),
        "an unknown node": with_value({"t": "callable", "v": "os.system"}),
        "a bare JSON list": with_value([1, 2]),
        "an unhashable key": with_value({"t": "dict", "items": [[{"t": "list", "v": []}, 1]]}),
        "missing fields": with_value({"t": "dataclass", "cls": "rcstudy.data.metalogic:Step", "fields": {"pre": "a"}}),
    }


@pytest.mark.parametrize("kind", list(_damaged(serialize.dumps({"a": np.arange(3.0)}))))
def test_truncated_corrupt_or_foreign_entries_are_recomputed(kind, isolated_cache):
    value = {"a": np.arange(3.0)}
    cache.cached("t", {}, lambda: value)
    (entry,) = (isolated_cache / "results" / "t").glob("*.npz")
    entry.write_bytes(_damaged(entry.read_bytes())[kind])
    with pytest.warns(cache.CacheWarning, match="is unreadable"):
        again = cache.cached("t", {}, lambda: {"a": np.arange(3.0)})
    _same(value, again)
    _same(value, serialize.loads(entry))


# --- concurrent writers ---------------------------------------------------------------------

WRITER = """
import sys, warnings
import numpy as np
from rcstudy import cache

warnings.simplefilter("error", cache.CacheWarning)  # any unreadable entry fails the writer
me, rounds = sys.argv[1], int(sys.argv[2])
value = lambda i: {"i": i, "x": np.full(400_000, i, dtype=np.float32), "ids": tuple(map(str, range(i)))}
for r in range(rounds):
    i = r % 4
    assert cache.cached("shared", {"i": i}, lambda: value(i))["i"] == i
    assert cache.cached("own", {"who": me, "r": r}, lambda: value(r))["i"] == r
    for path in (cache.cache_dir() / "results" / "shared").glob("*.npz"):
        got = cache.read_entry(path)
        assert got is not cache.MISSING and got["x"].shape == (400_000,) and got["x"][0] == got["i"], path
print("ok")
"""


def _check(value):
    assert (value["x"] == value["i"]).all() and value["ids"] == tuple(map(str, range(value["i"])))


def test_concurrent_writers_leave_complete_entries(isolated_cache):
    """Two processes compute the same entries (refreshing, so every round rewrites them) and their
    own ones at once, reading the shared ones meanwhile, as this process does the whole time: no
    read sees half a file (a writer that wrote in place fails this), and every entry decodes at the end."""
    env = {**os.environ, "RCSTUDY_CACHE": str(isolated_cache), "RCSTUDY_REFRESH": "1",
           "PYTHONPATH": os.pathsep.join([str(cache.LIBRARY_PARENT), os.environ.get("PYTHONPATH", "")])}
    rounds = 12
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, who, str(rounds)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for who in ("a", "b")]
    shared_dir, reads = isolated_cache / "results" / "shared", 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", cache.CacheWarning)
            while any(p.poll() is None for p in procs):
                for path in sorted(shared_dir.glob("*.npz")):
                    _check(cache.read_entry(path))
                    reads += 1
    finally:
        outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    shared, own = list(shared_dir.glob("*.npz")), list((isolated_cache / "results" / "own").glob("*.npz"))
    assert len(shared) == 4 and len(own) == 2 * rounds and reads
    for path in shared + own:
        _check(serialize.loads(path))
    assert not list(isolated_cache.rglob("*.tmp"))  # no temporary file left behind


# --- trained weights ------------------------------------------------------------------------

def test_state_round_trips_through_safetensors(tmp_path):
    shared = torch.randn(3, 2)
    state = {"weights": {"emb": shared, "head": shared, "half": torch.randn(2, dtype=torch.bfloat16),
                         "step": torch.tensor(3.0), "mask": torch.tensor([True, False])},
             "optimizer": {"state": {0: {"step": torch.tensor(2.0)}}, "param_groups": [{"betas": (0.9, 0.999),
                                                                                      "params": [0], "foreach": None}]},
             "rng": torch.get_rng_state(), "losses": [0.5, 0.25], "selection": [(2, 0.5)], "complete": False}
    path = tmp_path / "w.safetensors"
    cache.save_weights(path, state)
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:  # a plain safetensors file, read by the library itself
        assert json.loads(f.metadata()["rcstudy"])["format"] == serialize.FORMAT
    loaded = cache.load_weights(path)
    assert loaded["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert loaded["selection"] == [(2, 0.5)] and loaded["complete"] is False
    assert list(loaded["optimizer"]["state"]) == [0]
    for k, v in state["weights"].items():
        assert loaded["weights"][k].dtype == v.dtype and torch.equal(loaded["weights"][k], v)
    assert torch.equal(loaded["rng"], state["rng"])
    with pytest.raises(TypeError, match="cache entry 'w' cannot store a fractions.Fraction"):
        cache.save_weights(path, {"lr": fractions.Fraction(1, 3)}, "w")


@pytest.fixture(scope="module")
def rt():
    return runtime.setup("cpu", threads=1, precision="fp32")  # exact comparisons: fp32 on every machine


def test_finetuned_weights_are_cached_and_a_corrupt_file_retrains(rt, isolated_cache, monkeypatch):
    items = [MCItem(str(i), f"story {i}", "which?", ("yes", "no"), i % 2) for i in range(4)]
    cfg = mc.MCConfig(model="tiny-bert", fields="QA", epochs=1, batch_size=2, seed=1)
    trained = mc.finetune_cached(items, cfg, rt)
    (path,) = (isolated_cache / "results" / "mc_models").glob("*.safetensors")
    runs = []
    real = mc.finetune
    monkeypatch.setattr(mc, "finetune", lambda *a, **k: runs.append(1) or real(*a, **k))
    loaded = mc.finetune_cached(items, cfg, rt)
    assert not runs and loaded.losses == trained.losses
    np.testing.assert_array_equal(mc.predict(loaded, items, rt), mc.predict(trained, items, rt))
    for damage in (lambda b: b[:len(b) // 2], lambda b: pickle.dumps(RunsACommand("true"))):
        path.write_bytes(damage(path.read_bytes()))
        with pytest.warns(cache.CacheWarning, match="is unreadable .*: recomputing"):
            again = mc.finetune_cached(items, cfg, rt)
        assert len(runs) == 1 and again.losses == trained.losses
        runs.clear()
    cache.save_weights(path, {"weights": {"other": torch.zeros(1)}, "losses": []})  # weights of another model
    with pytest.warns(cache.CacheWarning, match="RuntimeError"):
        mc.finetune_cached(items, cfg, rt)
    assert runs == [1]
