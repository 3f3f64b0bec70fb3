"""A chapter's heavy computations as independent jobs.

Each experiment module declares ``jobs(cfg) -> list[Job]``: the fine-tunings, scoring passes and
generations its ``run(cfg, rt)`` performs, enumerated from the same configuration code paths.
A :class:`Job` runs by calling a function of that module (``step``) with plain-data arguments,
which computes through the same cached function, with the same key, as the chapter does; so once
the jobs have run (:mod:`rcstudy.cluster`), the chapter's notebook finds every heavy result in
the cache. :mod:`rcstudy.plan` turns them into FLOPs and GPU hours.

This module is kept small and free of heavy imports: every experiment module imports it, so its
source is part of the code fingerprint of their cache entries (:func:`rcstudy.cache.module_closure`).

Where :data:`SEPARATE_ENV` says so (the runner sets it for the chapter kernels), :func:`execute`
runs each job that has a step in a process of its own, which ends with the job, and the chapter
then reads the job's results from the cache: a fine-tuning's memory (its activations, the heap
they leave behind) is given back when it ends instead of adding up in the kernel over the
chapter's jobs, and a job that dies takes only its own process with it.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Callable, Literal, Sequence, TypeVar

from .settings import data_dir, env_flag

T = TypeVar("T")

Kind = Literal["train", "score", "generate"]


@dataclass(frozen=True)
class Tokens:
    """A job's tokens told apart by what they run through, for :mod:`rcstudy.plan`.

    ``train`` tokens run forward and backward, ``forward`` tokens forward only. For an
    encoder-decoder model these are the encoder's (source) tokens, and ``train_target`` and
    ``forward_target`` the decoder's; ``cross`` counts source tokens once per target sequence
    decoded against them in forward passes (the decoder's cross-attention projects every source
    token for each: scoring k options of one passage costs k × its tokens there; None: once, as
    in training and generation). ``generated`` tokens come one decoding step at a time, in
    ``decode_steps`` steps (batches × new tokens), each of which reads every weight once.
    """

    train: int = 0
    forward: int = 0
    train_target: int = 0
    forward_target: int = 0
    cross: int | None = None
    generated: int = 0
    decode_steps: int = 0

    @property
    def total(self) -> int:
        return self.train + self.forward + self.train_target + self.forward_target + self.generated

    def __add__(self, other: "Tokens") -> "Tokens":
        cross = None if self.cross is None and other.cross is None else \
            (self.cross if self.cross is not None else self.forward) + (other.cross if other.cross is not None else other.forward)
        return Tokens(self.train + other.train, self.forward + other.forward, self.train_target + other.train_target,
                      self.forward_target + other.forward_target, cross, self.generated + other.generated,
                      self.decode_steps + other.decode_steps)


@dataclass(frozen=True)
class Job:
    """One heavy computation of a chapter, runnable on its own.

    ``step`` names a function of ``rcstudy.experiments.<chapter>`` called as
    ``step(cfg, rt, **arguments)``; None for work the chapter's notebook still does itself (said
    in ``note``), whose function ``notebook_step`` may name: :func:`execute` runs it in the
    chapter's own process, the cluster never does. ``after`` names jobs of the same chapter whose
    cache entries this one reads (a transfer run continues its source model). Token counts are
    estimates (:func:`option_tokens`).
    """

    chapter: str
    kind: Kind
    name: str
    model: str
    input: str = ""
    seed: int | None = None
    fold: int | None = None
    items: int = 0
    epochs: float = 0.0
    train_tokens: int = 0  # tokens passed forward and backward, all epochs together
    score_tokens: int = 0  # tokens passed forward only (scoring, generation)
    step: str | None = None
    arguments: dict = field(default_factory=dict)
    after: tuple[str, ...] = ()
    note: str = ""
    tokens: Tokens | None = None  # the work told apart (None: train_tokens and score_tokens alone)
    notebook_step: str | None = None  # a job without a step: the function that does its work in the notebook

    @property
    def runs_as(self) -> str | None:
        """The function that does this job's work: its step, or its notebook step."""
        return self.step or self.notebook_step


class Outputs:
    """What each job's step returned, in the jobs' order: a chapter's ``run()`` builds its page from
    these, asking by step and arguments (:meth:`of`) as its jobs were declared, so no second listing
    of the work exists."""

    def __init__(self, done: Sequence[tuple[Job, Any]]):
        self.done = list(done)

    def of(self, step: str, **arguments) -> Any:
        """The output of the one job with this ``step`` and these ``arguments``."""
        found = [value for job, value in self.done if job.runs_as == step and job.arguments == arguments]
        if len(found) != 1:
            raise KeyError(f"{len(found)} jobs with step {step!r} and arguments {arguments!r} "
                           f"(the chapter's jobs() must list each exactly once)")
        return found[0]

    def each(self, step: str) -> list[tuple[Job, Any]]:
        """Every job with ``step`` and its output, in order."""
        return [(job, value) for job, value in self.done if job.runs_as == step]


#: "1": :func:`execute` runs each job that has a step in a process of its own (the runner's
#: setting for the chapter kernels), unless the cache holds its results already; "0" or unset: in
#: the calling process, where a debugger sees it.
SEPARATE_ENV = "RCSTUDY_SEPARATE_JOBS"


class JobProcessDied(RuntimeError):
    """A job's own process ended without finishing it (killed, or out of memory)."""


def execute(module: Any, cfg: Any, rt: Any) -> Outputs:
    """Run every job of ``module.jobs(cfg)`` that has a step (or a notebook step), in the listed
    order (a job comes after those it reads), as ``module.<step>(cfg, rt, **arguments)``: a
    chapter's jobs and its steps are declared in one module. After a Dask fan-out
    (:mod:`rcstudy.cluster`), or once a job has run in its own process (:data:`SEPARATE_ENV`),
    each step finds its result in the cache."""
    separate = env_flag(SEPARATE_ENV)
    done = []
    for job in module.jobs(cfg):
        if not job.runs_as:
            continue
        if separate and job.step:
            done.append((job, stored_or_apart(module, job, cfg, rt)))
        else:
            done.append((job, getattr(module, job.runs_as)(cfg, rt, **job.arguments)))
    return Outputs(done)


def stored_or_apart(module: Any, job: Job, cfg: Any, rt: Any) -> Any:
    """``job``'s output: read from the cache at once if it is done already; else computed by
    :func:`run_apart` and then read back."""
    from .cache import NotStored, stored_only  # torch: imported where jobs run, not by every module importing this one

    step = getattr(module, job.step)
    try:
        with stored_only():
            return step(cfg, rt, **job.arguments)
    except NotStored:
        pass
    run_apart(module.__name__, job, cfg, rt)
    with cache_read_back():
        return step(cfg, rt, **job.arguments)


def run_apart(module: str, job: Job, cfg: Any, rt: Any) -> None:
    """Run ``job``'s step of the chapter module named ``module`` in a new process (started afresh,
    not forked, so it shares no heap with this one) on ``rt``'s device, threads and precision;
    its results reach this process through the cache. Its failure is raised here."""
    runtime = (str(rt.device), rt.threads, "bf16" if rt.bf16 else "fp32")
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as process:
        try:
            process.submit(_run_step, module, job.step, cfg, job.arguments, runtime).result()
        except BrokenProcessPool:
            raise JobProcessDied(f"{job.chapter}: the process running job {job.name!r} ended before it finished "
                                 "(killed, or out of memory); what it had cached is kept, so running the chapter "
                                 f"again resumes it ({SEPARATE_ENV}=0 runs jobs in the chapter's own process)") from None


def _run_step(module: str, step: str, cfg: Any, arguments: dict, runtime: tuple[str, int, str]) -> None:
    from .runtime import setup  # torch: imported by the job's process, not by every module importing this one

    device, threads, precision = runtime
    getattr(import_module(module), step)(cfg, setup(device, threads, precision), **arguments)


@contextlib.contextmanager
def cache_read_back():
    """The chapter reads back what a job's own process computed: a refresh of the cache
    (``rcstudy run --refresh``) was that process's to do, not to be done a second time here."""
    refresh = os.environ.pop("RCSTUDY_REFRESH", None)
    try:
        yield
    finally:
        if refresh is not None:
            os.environ["RCSTUDY_REFRESH"] = refresh


_loaded: dict[tuple, Any] = {}


def loaded_once(load: Callable[..., T], *args) -> T:
    """``load(*args)`` read once per process, arguments and data directory: a worker runs many
    jobs of a chapter, and each would otherwise read the same data again."""
    key = (load, args, str(data_dir()))
    if key not in _loaded:
        _loaded[key] = load(*args)
    return _loaded[key]


def option_tokens(texts: Sequence[str], max_length: int | None = None) -> int:
    """Estimated tokens of each text, summed: about 4 characters per sub-word token (English
    WordPiece and BPE), plus 3 special tokens, truncated at ``max_length``; no real tokenizer is
    needed, so plans are made without downloading one."""
    total = 0
    for text in texts:
        n = math.ceil(len(text) / 4) + 3
        total += min(n, max_length) if max_length else n
    return total


def mc_tokens(items, fields: str, max_length: int | None) -> int:
    """Estimated tokens of every (segment A, segment B) option pair of multiple-choice items."""
    from .models.mc import option_pairs

    return option_tokens([f"{a or ''} {b}" for it in items for a, b in option_pairs(it, fields)], max_length)


def text_tokens(text: str) -> int:
    """Estimated sub-word tokens of a text without special tokens (about 4 characters each)."""
    return math.ceil(len(text) / 4)


def causal_option_tokens(prompts: Sequence[str], options: Sequence[Sequence[str]], max_length: int | None = None,
                         batch_size: int = 8) -> Tokens:
    """The forward tokens of a causal LM scoring every option of every prompt as
    :meth:`rcstudy.models.lm.CausalLM.loglik` batches them: each distinct prompt runs once (a
    start token added, cut at ``max_length``) for every ``batch_size`` of its options, whose
    key/value cache then serves each option; an option's tokens run after it, all but its last
    (whose probability the position before it gives). Not k × (prompt + option)."""
    forward = 0
    for prompt, opts in dict.fromkeys(zip(prompts, map(tuple, options))):
        context = text_tokens(prompt) + 1
        context = min(context, max_length) if max_length else context
        forward += context * math.ceil(len(opts) / batch_size) + sum(max(text_tokens(o) - 1, 0) for o in opts)
    return Tokens(forward=forward)


def seq2seq_tokens(sources: Sequence[str], targets: Sequence[Sequence[str]], max_source: int | None = None,
                   max_target: int | None = None, *, train: bool = False) -> Tokens:
    """The tokens of an encoder-decoder model given each source with its targets: the source
    through the encoder once (with its closing special token, cut at ``max_source``), each target
    through the decoder (its tokens and the end token, cut at ``max_target``) against the
    source's encoding. ``train``: trained on each (source, target) pair, forward and backward."""
    def cut(n: int, limit: int | None) -> int:
        return min(n, limit) if limit else n

    source = target = cross = 0
    for text, outs in zip(sources, targets):
        n = cut(text_tokens(text) + 1, max_source)
        source += n * (len(outs) if train else 1)
        cross += n * len(outs)
        target += sum(cut(text_tokens(o) + 1, max_target) for o in outs)
    if train:
        return Tokens(train=source, train_target=target)
    return Tokens(forward=source, forward_target=target, cross=cross)


def generation_tokens(prompts: Sequence[str], max_new_tokens: int, batch_size: int,
                      max_length: int | None = None) -> Tokens:
    """The tokens of greedy generation of up to ``max_new_tokens`` after each prompt, in batches of
    ``batch_size`` prompts: the prompts forward once (for an encoder-decoder model, through its
    encoder), then ``max_new_tokens`` decoding steps per batch, each reading every weight of the
    model (or of its decoder) once for the whole batch."""
    forward = sum(min(text_tokens(p) + 1, max_length) if max_length else text_tokens(p) + 1 for p in prompts)
    return Tokens(forward=forward, generated=max_new_tokens * len(prompts),
                  decode_steps=max_new_tokens * math.ceil(len(prompts) / batch_size))
