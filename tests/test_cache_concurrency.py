"""Workers of a cluster that run the same job at the same instant, sharing one cache, leave one
intact result entry and one intact weights file (the fine-tuned model a job saves), and no
temporary files. (tests/test_foundation_cache.py checks readers against rewriting writers.)"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
import torch

WRITERS = 4
ROWS = 400_000  # 3.2 MB per array: writes long enough to overlap


def expected_result() -> dict:
    return {"scores": np.arange(ROWS, dtype=np.float64), "label": "same for every writer"}


def write_at_once(barrier, cache: str) -> bool:
    """Wait for every writer, then compute and store the same result and weights."""
    os.environ["RCSTUDY_CACHE"] = cache
    from rcstudy.cache import cache_dir, cached, save_weights

    barrier.wait()
    cached("race", {"k": 1}, expected_result, code=["rcstudy.cache"])
    save_weights(cache_dir() / "weights" / "model.safetensors", {"w": torch.arange(ROWS, dtype=torch.float32)})
    return True


@pytest.fixture
def concurrent_writes(tmp_path):
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, ProcessPoolExecutor(WRITERS, mp_context=context) as pool:
        barrier = manager.Barrier(WRITERS)
        assert all(pool.map(write_at_once, [barrier] * WRITERS, [str(tmp_path)] * WRITERS))
    return tmp_path


def test_concurrent_writers_leave_one_intact_entry(concurrent_writes, monkeypatch):
    monkeypatch.setenv("RCSTUDY_CACHE", str(concurrent_writes))
    from rcstudy import cache

    entries = sorted(p.name for p in (concurrent_writes / "results" / "race").iterdir())
    assert len(entries) == 2 and {p.rsplit(".", 1)[1] for p in entries} == {"npz", "json"}  # the entry and its key
    value = cache.read_entry(concurrent_writes / "results" / "race" / entries[1])
    np.testing.assert_array_equal(value["scores"], expected_result()["scores"])
    weights = cache.load_weights(concurrent_writes / "weights" / "model.safetensors")
    assert torch.equal(weights["w"], torch.arange(ROWS, dtype=torch.float32))
    assert not [p for p in concurrent_writes.rglob("*") if p.name.endswith(".tmp")]  # no temporary file left
