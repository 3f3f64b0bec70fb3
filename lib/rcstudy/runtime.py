"""Device, precision, threads and seeds: one place decides how computation runs.

Precision: bf16 autocast on CUDA and on CPUs with native bf16 arithmetic (the ``avx512_bf16``
or ``amx_bf16`` instructions; about twice the fp32 matmul rate there), fp32 elsewhere, where
emulated bf16 is slower than fp32. ``RCSTUDY_PRECISION=fp32`` (or ``bf16``) forces one. Weights
stay fp32 under autocast, and losses and log-probabilities are computed in fp32. On CUDA also
TF32 matmuls. Threads: a count matched to the machine (``RCSTUDY_THREADS`` overrides).
Chapters call :func:`setup` once in their first cell; the numerics it chose are part of every
cache key (:func:`numerics`), so results computed in one precision never stand in for another.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import os
import platform
import random
import sys
from dataclasses import dataclass
from typing import Iterable, TypeVar

import numpy as np
import torch


#: Environment variable that forces a precision: "fp32", "bf16", or "auto" (the default).
PRECISION_ENV = "RCSTUDY_PRECISION"
PRECISIONS = ("auto", "fp32", "bf16")
#: CPU instruction-set flags (``/proc/cpuinfo``) that mean native bf16 arithmetic.
CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


@dataclass(frozen=True)
class Runtime:
    device: torch.device
    threads: int
    dtype: torch.dtype = torch.float32

    @property
    def cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def bf16(self) -> bool:
        return self.dtype == torch.bfloat16

    @property
    def numerics(self) -> str:
        """Device type and precision, e.g. ``cpu-bf16``: what a cached result was computed with."""
        return f"{self.device.type}-{'bf16' if self.bf16 else 'fp32'}"

    def autocast(self):
        """bf16 autocast where this runtime computes in bf16; otherwise a no-op."""
        if self.bf16:
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()


def cpu_has_native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether the CPU computes bf16 natively (``avx512_bf16`` or ``amx_bf16`` among its flags)."""
    if cpuinfo is None:
        try:
            cpuinfo = open("/proc/cpuinfo", encoding="utf-8", errors="replace").read()
        except OSError:  # not Linux: no way to tell, so fp32
            return False
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
    return any(flag in flags for flag in CPU_BF16_FLAGS)


def choose_dtype(device: torch.device, precision: str | None = None) -> torch.dtype:
    """bf16 on CUDA and on CPUs with native bf16, fp32 elsewhere; ``precision`` (else
    :data:`PRECISION_ENV`) "fp32" or "bf16" forces one."""
    precision = (precision or os.environ.get(PRECISION_ENV) or "auto").lower()
    if precision not in PRECISIONS:
        raise ValueError(f"{PRECISION_ENV}={precision!r} is not a precision; choose one of {', '.join(PRECISIONS)}")
    if precision == "auto":
        native = device.type == "cuda" or (device.type == "cpu" and cpu_has_native_bf16())
        precision = "bf16" if native else "fp32"
    return torch.bfloat16 if precision == "bf16" else torch.float32


_current: Runtime | None = None


def setup(device: str = "auto", threads: int | None = None, precision: str | None = None) -> Runtime:
    """Pick the device and precision and configure torch for them; returns the :class:`Runtime`."""
    global _current
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("device='cuda' was asked for but torch sees no CUDA GPU")
        # fp32 stays fp32 (no TF32): the speed comes from bf16 autocast, and what runs in fp32 on
        # purpose (an LM's output head, the fp32 precision) must not be rounded to a 10-bit mantissa.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
    threads = threads or int(os.environ.get("RCSTUDY_THREADS", 0)) or (os.cpu_count() or 1)
    torch.set_num_threads(threads)
    _current = Runtime(dev, threads, choose_dtype(dev, precision))
    return _current


def numerics() -> str:
    """The numerics of the runtime :func:`setup` last configured (``""`` before any): part of
    every cache key, so a result computed in fp32 is not reused by a bf16 run, or the reverse."""
    return _current.numerics if _current is not None else ""


T = TypeVar("T")


def track(iterable: Iterable[T] | None, *, desc: str, unit: str = "it", total: int | None = None):
    """``iterable`` with a tqdm progress bar (items, rate, time left), where :data:`PROGRESS_ENV` says;
    with ``iterable=None``, a bar of ``total`` steps to ``update()`` by hand."""
    from tqdm import tqdm

    from .settings import PROGRESS_ENV

    mode = os.environ.get(PROGRESS_ENV, "")
    terminal = mode == "terminal"
    return tqdm(iterable, desc=desc, unit=unit, total=total, disable=mode == "off", leave=False,
                file=sys.__stderr__ if terminal else sys.stderr, mininterval=5.0 if terminal else 0.5,
                dynamic_ncols=True)


@contextlib.contextmanager
def one_thread():
    """Run small tensor operations (a linear head, a small LSTM) on one thread.

    Their steps are too small to share between threads: on a 2-core machine shared with other
    work, two threads made them 10-20 times slower in our measurements.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None (another C library: musl, macOS, Windows)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def give_back_free_heap() -> bool:
    """Return the heap's free pages to the system (glibc's ``malloc_trim``); False where the C
    library has no such call. A fine-tuning on a CPU calls it after each optimiser step: its
    batches' tensors below glibc's mapping threshold leave free pages between live allocations,
    which the heap otherwise keeps (120 steps of minilm-l6 on LogiQA, 2 cores: peak 3.93 GB
    without, 3.37 GB with, in the same time; the same losses, as memory is all it touches)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (all devices)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def describe(rt: Runtime | None = None) -> dict:
    """Facts about the machine for reports and benchmarks."""
    info = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.is_available(),
    }
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    if rt is not None:
        info["device"] = str(rt.device)
        info["precision"] = "bf16" if rt.bf16 else "fp32"
    if platform.system() == "Linux":
        info["cpu_native_bf16"] = cpu_has_native_bf16()
    return info
