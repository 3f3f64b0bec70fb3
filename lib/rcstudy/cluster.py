"""Fan-out of a chapter's jobs (:mod:`rcstudy.jobs`) on a Dask distributed cluster.

Dask was chosen over Ray because it is pure Python and light: a ``LocalCluster`` of processes
starts in seconds on a laptop or a 2-core machine, a remote scheduler is one address, and a
worker declared with ``resources={"GPU": 1}`` receives one job at a time; nothing here is a
scheduler of its own. Workers write to the results cache (``RCSTUDY_CACHE``), which must be a
path all of them see; every cache write is atomic (:mod:`rcstudy.cache`), so two workers that
compute the same entry leave one intact file.

A job that fails, or whose worker dies under it, is run again, on another worker where there is
one, up to :data:`RETRIES` times: its cache entries are written only when complete, so a rerun
starts from what is cached. The device a job uses is chosen from what its worker declares
(:func:`worker_device`): a ``GPU`` resource and an assigned device (:data:`DEVICE_ENV` in the
worker's environment, as :func:`local_cluster` sets for each of its workers, or a single GPU made
visible to it), never from the worker's name; a worker that sees several GPUs and has none
assigned stops the job with a message saying how to assign one.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from typing import Any, Callable, Mapping, Sequence

from .jobs import Job  # light: a worker imports this module before it knows what a job needs


#: Environment variables a worker takes from the process that submits the jobs (where set): the
#: runtime's precision, the cache policy, the model replicas, Hub access and the run's log of cache
#: warnings (:data:`rcstudy.cache.WARNINGS_LOG_ENV`, appended to where the worker sees the same file system).
WORKER_ENV = ("RCSTUDY_PRECISION", "RCSTUDY_REFRESH", "RCSTUDY_REPLICAS", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
              "HF_HOME", "RCSTUDY_WARNINGS_LOG")

#: How many times a job that failed, or whose worker died, is run again.
RETRIES = 2

#: The device of a worker, in its own environment: ``cuda:<n>`` for the GPU it was given, or ``cpu``.
#: :func:`local_cluster` sets it for each worker; set it when starting a remote worker on a machine
#: with several GPUs (``RCSTUDY_DEVICE=cuda:1 dask worker ... --resources GPU=1``), or make one GPU
#: visible to it (``CUDA_VISIBLE_DEVICES=1``).
DEVICE_ENV = "RCSTUDY_DEVICE"


class DeviceAssignmentError(RuntimeError):
    """A worker whose device cannot be told from what it declares."""


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
    from .plan import chapter_module

    os.environ.update(environment)
    os.environ.setdefault("RCSTUDY_PROGRESS", "off")
    module = chapter_module(job.chapter)
    cfg = config_module.build(module.Config, config)
    rt = runtime.setup(_worker_device())
    getattr(module, job.step)(cfg, rt, **job.arguments)
    return job.name


def declared_resources(worker: Any) -> dict[str, float]:
    """The resources a Dask worker declares (``--resources GPU=1``), ``{}`` if none."""
    state = getattr(worker, "state", None)
    resources = getattr(state, "total_resources", None)
    if resources is None:
        resources = getattr(worker, "total_resources", None)
    return dict(resources or {})


def worker_device(worker: Any = None, *, environ: Mapping[str, str] | None = None,
                  cuda_devices: int | None = None) -> str:
    """The device for jobs on ``worker`` (a Dask worker; None: not on one, "auto"), from what it
    declares and never from its name:

    * :data:`DEVICE_ENV` in its environment names its device (checked against the GPUs it sees);
    * else a worker that sees exactly one CUDA device uses it (``cuda:0``), and one that sees none
      uses the CPU, unless it declares a ``GPU`` resource (an error: it has none to give);
    * a worker that sees several GPUs and has none assigned is an error that says how to assign one
      (it would otherwise put every job on the first GPU, beside its neighbours' jobs).

    ``environ`` and ``cuda_devices`` default to this process's environment and torch's device count.
    """
    environ = os.environ if environ is None else environ
    if worker is None:
        return environ.get(DEVICE_ENV) or "auto"
    if cuda_devices is None:
        import torch

        cuda_devices = torch.cuda.device_count() if torch.cuda.is_available() else 0
    name = getattr(worker, "name", None)
    where = f"Dask worker {name!r}" + (f" ({worker.address})" if getattr(worker, "address", None) else "")
    gpu = float(declared_resources(worker).get("GPU", 0) or 0) > 0
    assigned = (environ.get(DEVICE_ENV) or "").strip().lower()
    if assigned:
        kind, _, index = assigned.partition(":")
        if assigned == "cpu" and not gpu:
            return "cpu"
        if kind != "cuda" or (index and not index.isdigit()):
            raise DeviceAssignmentError(f"{where}: {DEVICE_ENV}={assigned!r} is not a device for its jobs; "
                                        f"give it cuda:<n>{'' if gpu else ' or cpu'}")
        if not index and cuda_devices != 1:
            raise DeviceAssignmentError(f"{where}: {DEVICE_ENV}=cuda names no GPU among the {cuda_devices} it sees; "
                                        "give it cuda:<n>")
        if int(index or 0) >= cuda_devices:
            raise DeviceAssignmentError(f"{where}: {DEVICE_ENV}={assigned} but it sees {cuda_devices} CUDA device(s)")
        return f"cuda:{int(index or 0)}"
    if cuda_devices == 0:
        if gpu:
            raise DeviceAssignmentError(f"{where} declares a GPU resource but torch sees no CUDA device there")
        return "cpu"
    if cuda_devices == 1:
        return "cuda:0"
    raise DeviceAssignmentError(
        f"{where} sees {cuda_devices} CUDA devices and none is assigned to it: start one worker per GPU, each "
        f"with {DEVICE_ENV}=cuda:<n> (or CUDA_VISIBLE_DEVICES=<n>) and --resources GPU=1")


def _worker_device() -> str:
    """:func:`worker_device` of the Dask worker running this job ("auto" outside one)."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return worker_device(None)
    return worker_device(worker)


def run_jobs(jobs: Sequence[Job], cfg) -> None:
    """Run the runnable jobs one after another in this process (the sequential reference)."""
    from .config import as_dict

    environment = worker_environment()
    for job in jobs:
        if job.step is not None:
            run_job(job, as_dict(cfg), environment)


def local_worker_options(n: int, gpus: int, cores: int) -> list[dict]:
    """The options of each worker of :func:`local_cluster`: one thread, the cores shared out between
    the workers' torch threads, and where there are GPUs a ``GPU`` resource and the n-th worker's
    own GPU in its environment (:data:`DEVICE_ENV`)."""
    threads = {"RCSTUDY_THREADS": str(max(1, cores // n))}
    return [{"nthreads": 1, "resources": {"GPU": 1} if gpus else None,
             "env": {**threads, DEVICE_ENV: f"cuda:{i % gpus}"} if gpus else dict(threads)} for i in range(n)]


def local_cluster(n_workers: int | None = None, *, gpus: int | None = None):
    """A Dask cluster of local processes running one job at a time each: one worker per GPU when
    there are GPUs (each declaring ``GPU=1`` and given its own, :func:`local_worker_options`), else
    one per two CPU cores (at least one). ``gpus`` overrides the count torch sees."""
    from distributed import LocalCluster, Nanny, Scheduler, SpecCluster

    if gpus is None:
        import torch

        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    cores = os.cpu_count() or 1
    n = n_workers or gpus or max(1, cores // 2)
    options = local_worker_options(n, gpus, cores)
    if not gpus:  # every worker alike
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                            env=options[0]["env"])
    scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}
    workers = {i: {"cls": Nanny, "options": {**o, "host": "127.0.0.1"}} for i, o in enumerate(options)}
    return SpecCluster(workers=workers, scheduler=scheduler, name="rcstudy")


def fan_out(jobs: Sequence[Job], cfg, client, *, retries: int = RETRIES,
            runner: Callable[..., Any] = run_job) -> list[Any]:
    """Submit the runnable ``jobs`` to the Dask ``client``'s cluster and wait for all of them; a
    job with ``after`` starts once those jobs are done. Where the workers declare GPUs, each job
    takes one. A job that fails or whose worker dies is run again up to ``retries`` times (on
    another worker where there is one). Returns what ``runner`` (:func:`run_job`: the job's name)
    returned for each job; a failure that remains is raised here."""
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
        futures[job.name] = client.submit(runner, job, plain, environment, *before, key=f"{job.chapter}: {job.name}",
                                          resources=resources, retries=retries, pure=False)
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
    from .plan import chapter_module, planned_chapters

    with connect(address) as client:
        for chapter in [c for c in chapters if c in planned_chapters()]:  # pages without experiments have no jobs
            module = chapter_module(chapter)
            settings = {k: v for k, v in overrides_by_chapter.get(chapter, {}).items() if k not in RUN_KEYS}
            cfg = module.Config.load(profile, settings)  # the data directory: the runner's checks set it
            start = time.perf_counter()
            print(f"▶ {chapter}: its jobs on the Dask cluster at {client.scheduler.address}", file=sys.stderr, flush=True)
            done = fan_out(module.jobs(cfg), cfg, client)
            print(f"  {len(done)} job(s) done in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
