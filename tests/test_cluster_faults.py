"""Fan-out on Dask when things go wrong: a job whose worker process dies under it, or that fails once,
is run again and its result arrives; the device a job uses comes from what its worker declares,
never from the worker's name (tested with fake workers: no GPU needed)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from rcstudy import cluster
from rcstudy.jobs import Job


# --- a worker that dies mid-job -----------------------------------------------------------------

def attempt(job: Job, config: dict, environment: dict, *after) -> dict:
    """A job's stand-in for :func:`rcstudy.cluster.run_job`, run on a worker: it records each attempt
    (its process), and on its first attempt kills its own worker process (``die``) or fails (``fail``)."""
    folder = Path(job.arguments["folder"])
    with open(folder / f"{job.name}.attempts", "a") as f:
        f.write(f"{os.getpid()}\n")
    first = not (folder / f"{job.name}.marker").exists()
    (folder / f"{job.name}.marker").touch()
    if first and job.arguments.get("fault") == "die":
        os.kill(os.getpid(), signal.SIGKILL)  # the worker dies mid-job, as on a lost machine or the OOM killer
    if first and job.arguments.get("fault") == "fail":
        raise OSError("the shared file system went away for a moment")
    from distributed import get_worker

    device = cluster.worker_device(get_worker(), cuda_devices=0)  # what it declares (torch's import is slow)
    return {"job": job.name, "pid": os.getpid(), "after": list(after), "device": device}


def test_a_job_whose_worker_dies_is_run_again_and_its_result_arrives(tmp_path):
    from distributed import Client, LocalCluster

    def job(name, fault=None, after=()):
        return Job(chapter="test", kind="train", name=name, model="m", step="attempt",
                   arguments={"folder": str(tmp_path), "fault": fault}, after=after)

    jobs = [job("dies", "die"), job("fails", "fail"), job("after dies", after=("dies",)),
            Job(chapter="test", kind="train", name="the notebook's", model="m")]  # no step: not submitted
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="1.5GiB",
                      dashboard_address=None) as local, Client(local) as client:
        results = cluster.fan_out(jobs, {}, client, runner=attempt)
    assert [r["job"] for r in results] == ["dies", "fails", "after dies"]
    attempts = {n: (tmp_path / f"{n}.attempts").read_text().split() for n in ("dies", "fails", "after dies")}
    assert len(attempts["dies"]) == 2 and attempts["dies"][0] != attempts["dies"][1]  # rerun in a live process
    assert results[0]["pid"] == int(attempts["dies"][1])
    assert len(attempts["fails"]) == 2 and len(attempts["after dies"]) == 1
    assert results[2]["after"] == [results[0]]  # it ran after the job that was rerun, with its result
    assert {r["device"] for r in results} == {"cpu"}  # workers without GPUs compute on their CPUs


def test_without_retries_a_failing_job_fails_the_fan_out(tmp_path):
    from distributed import Client, LocalCluster

    failing = Job(chapter="test", kind="train", name="fails", model="m", step="attempt",
                  arguments={"folder": str(tmp_path), "fault": "fail"})
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as local, \
            Client(local) as client:
        with pytest.raises(OSError, match="went away"):
            cluster.fan_out([failing], {}, client, runner=attempt, retries=0)


# --- the device a job uses ------------------------------------------------------------------------

def worker(name, resources=None, address="tcp://10.0.0.7:40123"):
    """A stand-in for a Dask worker: its name, address and declared resources."""
    return SimpleNamespace(name=name, address=address, state=SimpleNamespace(total_resources=resources or {}))


@pytest.mark.parametrize("name", ["gpu-node-3", "1", 0, "tcp://10.0.0.7:40123"])
def test_a_worker_with_several_gpus_and_none_assigned_is_stopped_whatever_its_name(name):
    with pytest.raises(cluster.DeviceAssignmentError, match=r"sees 4 CUDA devices and none is assigned .*"
                                                            r"RCSTUDY_DEVICE=cuda:<n>"):
        cluster.worker_device(worker(name, {"GPU": 1}), environ={}, cuda_devices=4)


@pytest.mark.parametrize("name", ["gpu-node-3", "3", 0])
def test_an_assigned_device_is_used_whatever_the_name(name):
    assert cluster.worker_device(worker(name, {"GPU": 1}), environ={"RCSTUDY_DEVICE": "cuda:2"}, cuda_devices=4) \
        == "cuda:2"


def test_a_single_visible_gpu_is_the_workers():
    """A worker started with one GPU visible (``CUDA_VISIBLE_DEVICES=<n>``, as dask-cuda does) uses it."""
    assert cluster.worker_device(worker("gpu-node-3", {"GPU": 1}), environ={}, cuda_devices=1) == "cuda:0"
    assert cluster.worker_device(worker("gpu-node-3"), environ={}, cuda_devices=1) == "cuda:0"


@pytest.mark.parametrize("resources, environ, cuda, problem", [
    ({"GPU": 1}, {}, 0, "declares a GPU resource but torch sees no CUDA device"),
    ({"GPU": 1}, {"RCSTUDY_DEVICE": "cuda:4"}, 4, "RCSTUDY_DEVICE=cuda:4 but it sees 4 CUDA device"),
    ({"GPU": 1}, {"RCSTUDY_DEVICE": "cuda"}, 2, "names no GPU among the 2"),
    ({"GPU": 1}, {"RCSTUDY_DEVICE": "cpu"}, 2, "is not a device for its jobs; give it cuda:<n>$"),
    ({}, {"RCSTUDY_DEVICE": "gpu-1"}, 2, "is not a device for its jobs; give it cuda:<n> or cpu"),
    ({}, {}, 2, "sees 2 CUDA devices and none is assigned"),
])
def test_what_cannot_be_told_is_an_error_naming_the_worker(resources, environ, cuda, problem):
    with pytest.raises(cluster.DeviceAssignmentError, match=r"Dask worker 'w' \(tcp://10.0.0.7:40123\).* " + problem):
        cluster.worker_device(worker("w", resources), environ=environ, cuda_devices=cuda)


def test_workers_without_gpus_compute_on_their_cpus():
    assert cluster.worker_device(worker("w"), environ={}, cuda_devices=0) == "cpu"
    assert cluster.worker_device(worker("w"), environ={"RCSTUDY_DEVICE": "cpu"}, cuda_devices=2) == "cpu"
    assert cluster.worker_device(worker("w", {"GPU": 1}), environ={"RCSTUDY_DEVICE": "CUDA:1"}, cuda_devices=2) \
        == "cuda:1"


def test_outside_a_worker_the_runtime_chooses():
    assert cluster.worker_device(None, environ={}) == "auto"
    assert cluster.worker_device(None, environ={"RCSTUDY_DEVICE": "cuda:1"}) == "cuda:1"


def test_workers_share_the_runs_log_of_cache_warnings():
    from rcstudy.cache import WARNINGS_LOG_ENV

    assert WARNINGS_LOG_ENV in cluster.WORKER_ENV


def test_older_workers_declare_resources_on_themselves():
    old = SimpleNamespace(name="w", address="", total_resources={"GPU": 1})
    assert cluster.declared_resources(old) == {"GPU": 1}
    assert cluster.worker_device(old, environ={}, cuda_devices=1) == "cuda:0"


def test_a_local_cluster_gives_each_worker_its_own_gpu():
    options = cluster.local_worker_options(4, gpus=2, cores=16)
    assert [o["env"]["RCSTUDY_DEVICE"] for o in options] == ["cuda:0", "cuda:1", "cuda:0", "cuda:1"]
    assert all(o["resources"] == {"GPU": 1} and o["nthreads"] == 1 and o["env"]["RCSTUDY_THREADS"] == "4"
               for o in options)
    cpu = cluster.local_worker_options(2, gpus=0, cores=2)
    assert [o["env"] for o in cpu] == [{"RCSTUDY_THREADS": "1"}] * 2 and all(o["resources"] is None for o in cpu)


def device_and_resources(dask_worker) -> tuple[str, dict]:
    return cluster.worker_device(dask_worker, cuda_devices=2), cluster.declared_resources(dask_worker)


def test_a_local_gpu_cluster_starts_its_workers_with_their_devices():
    """The spec of a two-GPU machine, started here without GPUs: each worker process has its own
    device in its environment and declares one GPU (what :func:`rcstudy.cluster.worker_device` reads)."""
    from distributed import Client

    with cluster.local_cluster(2, gpus=2) as local, Client(local) as client:
        client.wait_for_workers(2)
        seen = client.run(device_and_resources)
    assert sorted(seen.values()) == [("cuda:0", {"GPU": 1}), ("cuda:1", {"GPU": 1})]
