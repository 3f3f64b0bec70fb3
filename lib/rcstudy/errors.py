"""Errors that tell the reader what went wrong and what to do next."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Iterable


def closest(name: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The valid choice most like a mistyped ``name`` (``None`` when nothing is close)."""
    match = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=cutoff)
    return match[0] if match else None


def did_you_mean(match: str | None) -> str:
    """The end of a one-line error that names the closest valid choice (nothing without one)."""
    return f"; did you mean {match!r}?" if match else ""


class RcstudyError(Exception):
    """Base class of every error the library raises on purpose."""


class ConfigError(ValueError):
    """A parameter problem, said in one line."""


class DataFileMissing(RcstudyError, FileNotFoundError):
    """A dataset file is not where the data directory says it should be."""

    def __init__(self, path: Path, dataset: str, hint: str):
        self.path, self.dataset, self.hint = Path(path), dataset, hint
        super().__init__(f"{dataset}: missing data file {self.path}\n  {hint}")


class DataFormatError(RcstudyError, ValueError):
    """A data file exists but does not follow its dataset's official format.

    The message always names the file and, where known, the line (1-based) or item.
    """

    def __init__(self, path: Path | str, problem: str, *, line: int | None = None, item: str | None = None):
        self.path, self.problem, self.line, self.item = Path(path), problem, line, item
        where = str(self.path)
        if line is not None:
            where += f":{line}"
        if item is not None:
            where += f" (item {item})"
        super().__init__(f"{where}: {problem}")


class ModelUnavailable(RcstudyError):
    """A model name cannot be resolved to weights on this machine."""


class DatasetUnavailable(RcstudyError):
    """A data source (a Hub copy of a dataset) cannot be read on this machine."""
