"""What a run checks before its first cell, beyond the parameters: models and data.

Each problem is one line naming the chapter and what to do. Models: every model a chapter's
configuration names resolves — an offline or tiny model, a from-scratch baseline, or a Hub id in
the local Hugging Face cache (with ``--online``, a Hub id is taken on trust: only the Hub can say).
Data: every dataset the chapter declares (``Config.datasets``) has its files and parses through
its loader, so a malformed file stops the run with the loader's located error.
"""

from __future__ import annotations

import warnings
from typing import Callable

from .errors import DataFileMissing, ModelUnavailable, RcstudyError


def _reclor():
    from .data import reclor

    reclor.load_all()


def _logiqa():
    from .data import logiqa

    for lang in ("en", "zh"):
        for split in ("eval", "test"):
            logiqa.load_logiqa(split, lang)


def _logiqa2():
    from .data import logiqa

    for split in ("dev", "test"):
        logiqa.load_logiqa2(split)


def _metalogic():
    from .data import metalogic

    for split in ("train", "dev", "test"):
        metalogic.load_split(split)


def _rule():
    from .data import rule

    rule.load_rule()
    rule.load_prompts()


def _record():
    from .data import record

    record.load_record()


#: How to read each dataset in full (every split the chapters use).
DATASET_CHECKS: dict[str, Callable[[], None]] = {
    "reclor": _reclor, "logiqa": _logiqa, "logiqa2": _logiqa2, "metalogic": _metalogic, "rule": _rule,
    "record": _record,
}


def data_problems(datasets: tuple[str, ...], checked: dict[str, list[str]] | None = None) -> list[str]:
    """One line per dataset that is missing or does not parse (``checked`` remembers the datasets
    already read in this preflight: chapters share them)."""
    checked = {} if checked is None else checked
    for name in datasets:
        if name in checked:
            continue
        problems = checked[name] = []
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # subsampled copies (the fixtures) warn about their size
                DATASET_CHECKS[name]()
        except DataFileMissing as e:
            problems.append(f"{name}: missing data file {e.path} ({e.hint})")
        except RcstudyError as e:
            problems.append(f"{name}: {e}")
    return [p for name in datasets for p in checked[name]]


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
    from .book import hub_models
    from .config import as_dict

    return (model_problems(hub_models(as_dict(cfg)), online=online)
            + data_problems(getattr(cls, "datasets", ()), checked))
