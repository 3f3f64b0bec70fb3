"""A chapter's heavy computations as independent jobs.

Each experiment module declares ``jobs(cfg) -> list[Job]``: the fine-tunings, scoring passes and
generations its ``run(cfg, rt)`` performs, enumerated from the same configuration code paths.
A :class:`Job` runs by calling a function of that module (``step``) with plain-data arguments,
which computes through the same cached function, with the same key, as the chapter does; so once
the jobs have run (:mod:`rcstudy.cluster`), the chapter's notebook finds every heavy result in
the cache. :mod:`rcstudy.plan` turns them into FLOPs and GPU hours.

This module is kept small and free of heavy imports: every experiment module imports it, so its
source is part of the code fingerprint of their cache entries (:func:`rcstudy.cache.module_closure`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence, TypeVar

T = TypeVar("T")

Kind = Literal["train", "score", "generate"]


@dataclass(frozen=True)
class Job:
    """One heavy computation of a chapter, runnable on its own.

    ``step`` names a function of ``rcstudy.experiments.<chapter>`` called as
    ``step(cfg, rt, **arguments)``; None for work the chapter's notebook still does itself (said
    in ``note``). ``after`` names jobs of the same chapter whose cache entries this one reads
    (a transfer run continues its source model). Token counts are estimates (:func:`option_tokens`).
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


_loaded: dict[tuple, Any] = {}


def loaded_once(load: Callable[..., T], *args) -> T:
    """``load(*args)`` read once per process, arguments and data directory: a worker runs many
    jobs of a chapter, and each would otherwise read the same data again."""
    from .settings import data_dir

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
