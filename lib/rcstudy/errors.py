"""Errors that tell the reader what went wrong and what to do next."""

from __future__ import annotations

from pathlib import Path


class RcstudyError(Exception):
    """Base class of every error the library raises on purpose."""


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
