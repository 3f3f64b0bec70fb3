"""``rcstudy run --cluster``: a chapter's jobs fan out on a local two-worker Dask cluster, then its
notebook runs, computes nothing new and shows the numbers of a sequential run."""

from __future__ import annotations

import pytest

from rcstudy import cluster, run
from rcstudy.report import glued_values

pytestmark = pytest.mark.slow

CHAPTER = "logiqa"  # the cheapest chapter whose smoke profile has real jobs, one of them after another
OVERRIDES = {"readers.names": ["sar"], "ablations": ["options only"]}


def cache_entries(cache) -> dict[str, int]:
    """Every results entry file, with its modification time."""
    return {str(p.relative_to(cache)): p.stat().st_mtime_ns for p in sorted((cache / "results").rglob("*"))
            if p.is_file()}


@pytest.fixture
def runner_environment(monkeypatch, fixture_data):
    for var in ("RCSTUDY_BOOK_ROOT", "RCSTUDY_EXPORTS", "RCSTUDY_PREFLIGHT_DONE", "HF_HUB_OFFLINE",
                "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(var, "")  # run_chapters sets them for the kernels; restored after the test
    monkeypatch.setenv("RCSTUDY_THREADS", "1")  # two workers on two cores
    return monkeypatch


def test_fanned_out_jobs_leave_the_notebook_nothing_to_compute(runner_environment, tmp_path):
    from distributed import LocalCluster

    runner_environment.setenv("RCSTUDY_CACHE", str(tmp_path / "sequential-cache"))
    sequential = run.run_chapters([CHAPTER], "smoke", OVERRIDES, root=tmp_path / "sequential")
    assert all(r.ok for r in sequential), [r.message for r in sequential]

    cache = tmp_path / "shared-cache"
    runner_environment.setenv("RCSTUDY_CACHE", str(cache))
    after_fan_out = {}
    fan_out_chapters = cluster.fan_out_chapters

    def fan_out_and_look(*args):
        fan_out_chapters(*args)
        after_fan_out.update(cache_entries(cache))

    runner_environment.setattr(cluster, "fan_out_chapters", fan_out_and_look)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        fanned = run.run_chapters([CHAPTER], "smoke", OVERRIDES, root=tmp_path / "fanned",
                                  cluster=local.scheduler_address)
    assert all(r.ok for r in fanned), [r.message for r in fanned]

    # every kind of job ran on the cluster: readers, fine-tunings (transfer too) and LM scoring
    assert {name.split("/")[1] for name in after_fan_out} == {"logiqa_readers", "mc_models", "mc_predictions",
                                                              "mc_losses", "mc_sequential", "logiqa_lm"}
    assert cache_entries(cache) == after_fan_out  # the notebook wrote no entry: it computed nothing new
    numbers = {root: glued_values(tmp_path / root / "book" / f"{CHAPTER}.ipynb") for root in ("sequential", "fanned")}
    assert numbers["sequential"] and numbers["fanned"] == numbers["sequential"]
