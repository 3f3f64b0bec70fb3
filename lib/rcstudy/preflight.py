"""What a run checks before its first cell, beyond the parameters: models and data.

Each problem is one line naming the chapter and what to do. Models: every model and tokenizer a
chapter's configuration names (every field typed ``ModelName``, whatever its name:
:func:`rcstudy.models.registry.model_references`) resolves — an offline or tiny model, a from-scratch baseline, or a Hub id in
the local Hugging Face cache (with ``--online``, a Hub id is taken on trust: only the Hub can say).
Data: every dataset the chapter declares (``Config.datasets``) has its files and parses through
its loader (the check its loader module declares, :attr:`~rcstudy.data.registry.DatasetInfo.check`), so a malformed file stops the run with the loader's located error; a dataset the
configuration reads from a Hub copy (``Config.data_sources``) is read from there, which fails
at once offline when the copy is not in the local cache.
"""

from __future__ import annotations

import warnings
from typing import Mapping

from .chapters import hub_models
from .data.hub import FOLDER
from .data.registry import DATASETS
from .errors import DataFileMissing, DatasetUnavailable, ModelUnavailable, RcstudyError


def data_problems(datasets: tuple[str, ...], checked: dict[str, list[str]] | None = None,
                  sources: Mapping[str, str] | None = None) -> list[str]:
    """One line per dataset that is missing or does not parse, from the folder or from the source
    ``sources`` names for it (``checked`` remembers the datasets already read in this preflight:
    chapters share them)."""
    checked = {} if checked is None else checked
    sources = sources or {}
    keys = [name if name not in sources else f"{name} ({sources[name]})" for name in datasets]
    for name, key in zip(datasets, keys):
        if key in checked:
            continue
        problems = checked[key] = []
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # subsampled copies (the fixtures) warn about their size
                info = DATASETS[name]
                (info.check or info.splits)(sources.get(name, FOLDER))
        except DataFileMissing as e:
            problems.append(f"{name}: missing data file {e.path} ({e.hint})")
        except DatasetUnavailable as e:  # its message starts with the dataset's name
            problems.append(str(e))
        except RcstudyError as e:
            problems.append(f"{name}: {e}")
    return [p for key in keys for p in checked[key]]


def model_problems(names: list[str], *, online: bool) -> list[str]:
    """One line per Hub model that cannot be loaded here (offline and not in the local cache)."""
    from .models.registry import hub_snapshot

    if online:
        return []
    problems = []
    for name in names:
        try:
            hub_snapshot(name, offline=True)
        except (ModelUnavailable, ValueError) as e:
            problems.append(str(e).split(". On a machine")[0] + "; run with --online or pick an offline model")
    return problems


def chapter_problems(cls, cfg, *, online: bool, checked: dict[str, list[str]] | None = None) -> list[str]:
    """Everything a chapter needs besides valid parameters, one line per problem."""
    return (model_problems(hub_models(cfg), online=online)
            + data_problems(getattr(cls, "datasets", ()), checked, cfg.data_sources()))
