"""Fan-out of a chapter's jobs (:mod:`rcstudy.jobs`) on a Dask distributed cluster.

Dask was chosen over Ray because it is pure Python and light: a ``LocalCluster`` of processes
starts in seconds on a laptop or a 2-core machine, a remote scheduler is one address, and a
worker declared with ``resources={"GPU": 1}`` receives one job at a time; nothing here is a
scheduler of its own. Workers write to the results cache (``RCSTUDY_CACHE``), which must be a
path all of them see; every cache write is atomic (:mod:`rcstudy.cache`), so two workers that
compute the same entry leave one intact file.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any, Sequence

from .jobs import Job
from .plan import chapter_module, planned_chapters


#: Environment variables a worker takes from the process that submits the jobs (where set): the
#: runtime's precision, the cache policy, the model replicas and Hub access.
WORKER_ENV = ("RCSTUDY_PRECISION", "RCSTUDY_REFRESH", "RCSTUDY_REPLICAS", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
              "HF_HOME")


def worker_environment() -> dict[str, str]:
    """What a worker must share with the submitting process: the data, results cache and models
    folders as this process resolves them (paths every worker must see), and :data:`WORKER_ENV`."""
    from .settings import cache_dir, data_dir, models_dir

    return {"RCSTUDY_DATA": str(data_dir()), "RCSTUDY_CACHE": str(cache_dir()), "RCSTUDY_MODELS": str(models_dir()),
            **{k: os.environ[k] for k in WORKER_ENV if k in os.environ}}


def run_job(job: Job, config: dict, environment: dict[str, str], *_after: Any) -> str:
    """Run ``job`` with the chapter configuration ``config`` (plain data, :func:`rcstudy.config.as_dict`)
    in this process, under ``environment``; returns the job's name. Extra positional arguments are
    the results of the jobs it comes after (Dask runs it once they are done)."""
    from . import config as config_module
    from . import runtime

    os.environ.update(environment)
    os.environ.setdefault("RCSTUDY_PROGRESS", "off")
    module = chapter_module(job.chapter)
    cfg = config_module.build(module.Config, config)
    rt = runtime.setup(_worker_device())
    getattr(module, job.step)(cfg, rt, **job.arguments)
    return job.name


def _worker_device() -> str:
    """This worker's GPU when there are GPUs (the n-th worker of a local cluster takes the n-th), else "auto"."""
    import torch

    if not torch.cuda.is_available():
        return "auto"
    try:
        from distributed import get_worker

        index = int(get_worker().name)
    except (ImportError, ValueError, TypeError):
        return "auto"
    return f"cuda:{index % torch.cuda.device_count()}"


def run_jobs(jobs: Sequence[Job], cfg) -> None:
    """Run the runnable jobs one after another in this process (the sequential reference)."""
    from .config import as_dict

    environment = worker_environment()
    for job in jobs:
        if job.step is not None:
            run_job(job, as_dict(cfg), environment)


def local_cluster(n_workers: int | None = None):
    """A Dask ``LocalCluster`` of processes running one job at a time each: one worker per GPU when
    there are GPUs (each declaring ``GPU=1``), else one per two CPU cores (at least one), the cores
    shared out between the workers' torch threads."""
    import torch
    from distributed import LocalCluster

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    cores = os.cpu_count() or 1
    n = n_workers or gpus or max(1, cores // 2)
    return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                        resources={"GPU": 1} if gpus else None, env={"RCSTUDY_THREADS": str(max(1, cores // n))})


def fan_out(jobs: Sequence[Job], cfg, client) -> list[str]:
    """Submit the runnable ``jobs`` to the Dask ``client``'s cluster and wait for all of them; a
    job with ``after`` starts once those jobs are done. Where the workers declare GPUs, each job
    takes one. Returns the names of the jobs run; the first failure is raised here."""
    from .config import as_dict

    plain = as_dict(cfg)
    environment = worker_environment()
    workers = client.scheduler_info().get("workers", {}).values()
    resources = {"GPU": 1} if any(w.get("resources", {}).get("GPU") for w in workers) else None
    futures: dict[str, Any] = {}
    for job in jobs:  # a chapter lists a job after those it comes after
        if job.step is None:
            continue
        before = [futures[name] for name in job.after if name in futures]
        futures[job.name] = client.submit(run_job, job, plain, environment, *before, key=f"{job.chapter}: {job.name}",
                                          resources=resources, pure=False)
    return client.gather(list(futures.values()))


@contextlib.contextmanager
def connect(address: str):
    """A Dask client of the cluster at ``address``, or of a local cluster started (and stopped) here for ``"local"``."""
    from distributed import Client

    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(local_cluster()) if address == "local" else address
        yield stack.enter_context(Client(cluster))


def fan_out_chapters(chapters: Sequence[str], profile: str, overrides_by_chapter: dict[str, dict], address: str) -> None:
    """Run every chapter's jobs on the cluster at ``address`` (``"local"``: a local one), reporting progress."""
    from .config import RUN_KEYS

    with connect(address) as client:
        for chapter in [c for c in chapters if c in planned_chapters()]:  # pages without experiments have no jobs
            module = chapter_module(chapter)
            settings = {k: v for k, v in overrides_by_chapter.get(chapter, {}).items() if k not in RUN_KEYS}
            cfg = module.Config.load(profile, settings)  # the data directory: the runner's checks set it
            start = time.perf_counter()
            print(f"▶ {chapter}: its jobs on the Dask cluster at {client.scheduler.address}", file=sys.stderr, flush=True)
            done = fan_out(module.jobs(cfg), cfg, client)
            print(f"  {len(done)} job(s) done in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
