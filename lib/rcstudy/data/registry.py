"""The expected layout of the data directory and where each dataset comes from.

``RCSTUDY_DATA`` (default ``data/``) holds one folder per dataset. Each loader module declares
the datasets it reads (``RELEASES``: folder, files, source, licence, Hub copy, and how to read
and check every split), and :data:`DATASETS` gathers them. The introduction of the book and the
README render this table; nothing else hard-codes paths.
Where a dataset has a public copy on the Hugging Face Hub in plain data files (no loading
script), :class:`HubCopy` records it: :mod:`rcstudy.data.hub` reads it through ``datasets``.
"""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

from ..errors import DataFileMissing, DataFormatError
from ..settings import data_dir

#: Files any dataset folder may hold besides the release's data: its documentation and licences.
#: Hidden files (``.DS_Store``) and sub-folders not named in a dataset's ``known_files`` are not looked at.
DOC_FILES = ("README*", "readme*", "Readme*", "LICENSE*", "LICENCE*", "License*", "license*", "COPYING*",
             "NOTICE*", "CITATION*", "*.md")


@dataclass(frozen=True)
class HubCopy:
    """A public copy of a dataset on the Hugging Face Hub, as plain data files.

    ``revision`` pins the branch that holds plain files (the Hub's automatic Parquet export
    ``refs/convert/parquet`` where the repository itself has a loading script, which
    ``datasets`` no longer runs); ``data_dir`` is the dataset's folder in that branch;
    ``splits`` maps the book's split names to the copy's.
    """

    repo: str
    splits: dict[str, str]
    columns: str  # the copy's column layout, in words
    licence: str
    revision: str | None = None
    data_dir: str | None = None
    notes: str = ""


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    folder: str
    files: tuple[str, ...]  # required for the chapter; globs allowed
    source: str  # public release the files come from
    licence: str
    notes: str = ""
    hub: HubCopy | None = None  # None: no public Hub copy in plain files is known
    #: Every file of the release that may sit in the folder (globs relative to it, ``clues/…`` for a
    #: sub-folder), besides :data:`DOC_FILES`: any other file there is refused by :func:`check_folder`,
    #: so that a stray ``subq_split_6.jsonl`` never becomes a sixth split. Empty: ``files``.
    known_files: tuple[str, ...] = ()
    #: Every split the source (``"folder"``, a Hub copy, a directory) has, as ``{split: (kind,
    #: records)}`` (kinds: :data:`rcstudy.data.dataset_dict.KINDS`).
    splits: Callable[[str], dict[str, tuple[str, list]]] | None = None
    #: Reads what the chapters read from the source, raising the loader's located errors (before a
    #: run's first cell); None: :attr:`splits`.
    check: Callable[[str], object] | None = None


class Registry(Mapping[str, DatasetInfo]):
    """Every dataset that a loader module of :mod:`rcstudy.data` declares in its ``RELEASES``, by
    name, found on first use: a new dataset adds its loader module and edits no list here."""

    def __init__(self, package: str):
        self._package, self._found = package, None

    def _all(self) -> dict[str, DatasetInfo]:
        if self._found is None:
            package = importlib.import_module(self._package)
            found: dict[str, DatasetInfo] = {}
            for module in sorted(m.name for m in pkgutil.iter_modules(package.__path__)):
                for info in getattr(importlib.import_module(f"{self._package}.{module}"), "RELEASES", ()):
                    if info.name in found:
                        raise ValueError(f"dataset {info.name!r} is declared twice (in {module})")
                    found[info.name] = info
            self._found = found
        return self._found

    def __getitem__(self, name: str) -> DatasetInfo:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


DATASETS = Registry(__package__)


def dataset_dir(dataset: str) -> Path:
    """The folder of ``dataset`` inside the data directory (it may not exist)."""
    return data_dir() / DATASETS[dataset].folder


def check_folder(dataset: str, folder: Path | str | None = None) -> None:
    """Refuse any file in the dataset's folder (default :func:`dataset_dir`) that is not one of the
    release's files (:attr:`DatasetInfo.known_files`) or its documentation, naming the file.

    The folder itself and the sub-folders the known files name are looked at; hidden files and
    other sub-folders are not. A folder that does not exist is left to the loaders (their
    :class:`DataFileMissing` says where to get the files).
    """
    root = Path(folder) if folder is not None else dataset_dir(dataset)
    if not root.is_dir():
        return
    info = DATASETS[dataset]
    data = info.known_files or info.files
    subdirs = {""} | {p.split("/", 1)[0] for p in data if "/" in p}
    for sub in sorted(subdirs):
        where = root / sub if sub else root
        if not where.is_dir():
            continue
        for path in sorted(where.iterdir()):
            if path.name.startswith(".") or path.is_dir():
                continue
            rel = f"{sub}/{path.name}" if sub else path.name
            if any(fnmatch.fnmatchcase(rel, p) for p in data) or any(fnmatch.fnmatchcase(path.name, p)
                                                                       for p in DOC_FILES):
                continue
            shown = ", ".join(data[:8]) + (f" and {len(data) - 8} more" if len(data) > 8 else "")
            raise DataFormatError(path, f"the file is not one of the {dataset} release's files, so it would not be "
                                        f"read as the release is (expected {shown}, and documentation): move it "
                                        f"out of {where}")


def dataset_file(dataset: str, name: str) -> Path:
    """Path of one file of ``dataset``; raises :class:`DataFileMissing` with instructions if absent."""
    info = DATASETS[dataset]
    path = dataset_dir(dataset) / name
    if not path.is_file():
        raise DataFileMissing(
            path, dataset,
            f"Download the {dataset} release from {info.source} and put {name} in {path.parent}, "
            f"or point RCSTUDY_DATA at a folder that has {info.folder}/{name} "
            f"(now RCSTUDY_DATA={data_dir()}).",
        )
    return path
