"""Device, precision, threads and seeds: one place decides how computation runs.

On CUDA: bf16 autocast and TF32 matmuls. On CPU: float32, a thread count matched to the
machine (``RCSTUDY_THREADS`` overrides). Chapters call :func:`setup` once in their first cell.
"""

from __future__ import annotations

import contextlib
import os
import platform
import random
import sys
from dataclasses import dataclass
from typing import Iterable, TypeVar

import numpy as np
import torch


@dataclass(frozen=True)
class Runtime:
    device: torch.device
    threads: int

    @property
    def cuda(self) -> bool:
        return self.device.type == "cuda"

    def autocast(self):
        """bf16 autocast on CUDA; a no-op on CPU (bf16 matmuls are slower than fp32 on most CPUs)."""
        if self.cuda:
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()


def setup(device: str = "auto", threads: int | None = None) -> Runtime:
    """Pick the device and configure torch for it; returns the :class:`Runtime`."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(device)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("device='cuda' was asked for but torch sees no CUDA GPU")
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        torch.set_float32_matmul_precision("high")
    threads = threads or int(os.environ.get("RCSTUDY_THREADS", 0)) or (os.cpu_count() or 1)
    torch.set_num_threads(threads)
    return Runtime(dev, threads)


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
    return info
