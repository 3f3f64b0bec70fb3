"""The datasets' public Hugging Face Hub copies, read through ``datasets`` (every dataset as a
``datasets.DatasetDict``: :mod:`rcstudy.data.dataset_dict`).

A data source is one of:

* ``"folder"`` (the default): the official files in ``$RCSTUDY_DATA/<dataset>``
  (:mod:`rcstudy.data.registry`);
* ``"hub"``, or the copy's id (``aps/super_glue``, optionally pinned: ``aps/super_glue@<commit>``):
  the public copy recorded in the registry (:class:`~rcstudy.data.registry.HubCopy`), from the
  local Hub cache, downloaded when the Hub is online. Offline and not cached, it fails at once
  with :class:`~rcstudy.errors.DatasetUnavailable`, as a Hub model name does;
* a local directory holding the copy's files as the repository lays them out at the recorded
  revision (e.g. ``record/train/0000.parquet`` for ReCoRD), or a ``DatasetDict.save_to_disk``
  folder with the copy's columns.

Rows of a copy go through the same checks as the official files (each dataset module's row
reader), so a malformed row raises :class:`~rcstudy.errors.DataFormatError` located as
``<copy>[<split>]:<row>`` (row numbers 1-based) with the item, and become the same records
(:class:`~rcstudy.data.MCItem`, :class:`~rcstudy.data.ClozeQuery`) as the folder's, except for
what a copy does not hold (ReCoRD's answer spans and news sources, LogiQA's printed option
labels: see each dataset's ``read_hub_split``).
"""

from __future__ import annotations

import functools
import os
import re
from datetime import datetime, timezone
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..errors import ConfigError, DataFormatError, DatasetUnavailable, closest, did_you_mean
from ..settings import data_dir, env_flag, hub_offline
from .registry import DATASETS, HubCopy

if TYPE_CHECKING:
    import datasets

FOLDER, HUB = "folder", "hub"
#: A revision that names a commit (40 hexadecimal digits), not a branch or a tag.
COMMIT = re.compile(r"[0-9a-f]{40}")
#: The sources this process has read rows of (:func:`downloaded_on` reports only on these).
_read: set["Source"] = set()


@dataclass(frozen=True)
class Source:
    """Where a dataset's Hub-layout rows come from: the Hub (``local`` false) or a local directory."""

    dataset: str
    location: str  # the repository id, or the local directory
    revision: str | None
    data_dir: str | None
    local: bool

    @property
    def copy(self) -> HubCopy:
        return DATASETS[self.dataset].hub

    def where(self, split: str) -> str:
        """How a data error names one split of this source."""
        return f"{self.location}[{self.copy.splits.get(split, split)}]"

    def describe(self) -> str:
        if self.local:
            return f"a local copy in the layout of the Hub dataset {self.copy.repo} ({self.location})"
        if self.revision and COMMIT.fullmatch(self.revision):
            return f"the Hub dataset {self.location} at commit {self.revision}"
        branch = self.revision or "main"
        return (f"the Hub dataset {self.location} at branch {branch}, which can move (no commit of it is "
                f"recorded; pin one as {self.location}@<commit>){downloaded_on(self)}")


def copy_of(dataset: str) -> HubCopy:
    """The registry's Hub copy of ``dataset``; a clear error when it has none."""
    info = DATASETS[dataset]
    if info.hub is None:
        raise DatasetUnavailable(f"{dataset} has no public Hub copy in plain data files; read it from the folder "
                                 f"(data source 'folder': {info.source} in $RCSTUDY_DATA/{info.folder})")
    return info.hub


def resolve(dataset: str, source: str) -> Source | None:
    """The Hub-layout source named by ``source``, or ``None`` for the official folder."""
    if source == FOLDER:
        return None
    copy = copy_of(dataset)
    repo, _, pinned = source.partition("@")
    if source == HUB or repo == copy.repo:
        return Source(dataset, copy.repo, pinned or copy.revision, copy.data_dir, local=False)
    if Path(source).expanduser().is_dir():
        return Source(dataset, str(Path(source).expanduser()), None, copy.data_dir, local=True)
    raise ValueError(f"{dataset}: unknown data source {source!r}{did_you_mean(closest(source, [FOLDER, HUB, copy.repo]))}; choose {FOLDER!r}, {HUB!r} ({copy.repo}, "
                     f"optionally {copy.repo}@<revision>) or an existing directory in that copy's layout")


def check_source(dataset: str, source: str) -> None:
    """A configuration's check of a source's name (what :func:`resolve` refuses, as a ``ConfigError``)."""
    try:
        resolve(dataset, source)
    except (ValueError, DatasetUnavailable) as e:
        raise ConfigError(str(e)) from None


def _offline() -> bool:
    return hub_offline() or env_flag("HF_DATASETS_OFFLINE")


@functools.lru_cache(maxsize=8)
def load_copy(src: Source) -> "datasets.DatasetDict":
    """Every split of ``src`` as ``datasets`` reads it (memory-mapped Arrow, cached on disk)."""
    import datasets
    from datasets.exceptions import DatasetGenerationError, DatasetNotFoundError

    try:
        if not src.local:
            return datasets.load_dataset(src.location, revision=src.revision, data_dir=src.data_dir)
        if (Path(src.location) / datasets.config.DATASETDICT_JSON_FILENAME).is_file():
            return datasets.load_from_disk(src.location)
        return datasets.load_dataset(src.location, data_dir=src.data_dir)
    except DatasetGenerationError as e:
        # a value Arrow cannot put in its column's type, before any row reaches the checks
        raise DataFormatError(src.location, f"datasets cannot read these files: {e.__cause__ or e}") from None
    except (ConnectionError, DatasetNotFoundError) as e:
        if src.local:
            raise
        state = ("the Hub is offline (HF_HUB_OFFLINE=1)" if _offline()
                 else f"the Hub cannot be reached ({type(e).__name__})")
        raise DatasetUnavailable(
            f"{src.dataset}: the Hub dataset {src.location} is not in the local datasets cache "
            f"({datasets.config.HF_DATASETS_CACHE}) and {state}. On a machine with network, run once with the "
            f"Hub online (`rcstudy run --online ...`, or unset HF_HUB_OFFLINE) to download it, or use the data "
            f"source 'folder' with the official files in {data_dir() / DATASETS[src.dataset].folder}."
        ) from None


def downloaded_on(src: Source) -> str:
    """When the local copy of a branch was downloaded (the oldest of its Arrow files), as the end of
    a sentence: what a page says of a copy read from a branch. Empty where nothing was read yet."""
    if src not in _read:
        return ""
    times = [Path(f["filename"]).stat().st_mtime for split in load_copy(src).values() for f in split.cache_files
             if Path(f["filename"]).is_file()]
    if not times:
        return ""
    return f"; this copy was downloaded on {datetime.fromtimestamp(min(times), timezone.utc):%Y-%m-%d}"


def rows(src: Source, split: str) -> "datasets.Dataset":
    """The copy's rows of the book's ``split`` (``train``, ``val``/``eval``, ``test``)."""
    copy = src.copy
    if split not in copy.splits:
        raise DatasetUnavailable(f"{src.dataset}: the Hub copy {copy.repo} has no {split} split "
                                 f"(it has {', '.join(copy.splits)}); {copy.notes}")
    found = load_copy(src)
    _read.add(src)
    name = copy.splits[split]
    if name not in found:
        raise DatasetUnavailable(f"{src.dataset}: {src.location} has no split {name!r} (found "
                                 f"{', '.join(found) or 'none'}); expected the layout of {copy.repo}")
    return found[name]


def files(src: Source, splits: Sequence[str]) -> list[Path]:
    """The Arrow files behind these splits: what cached results depend on, as the folder's files are."""
    return [Path(f["filename"]) for s in splits if s in src.copy.splits for f in rows(src, s).cache_files]


def rows_in(arrow_file: Path) -> int:
    """Rows held by one of the Arrow files of :func:`files`."""
    import datasets

    return datasets.Dataset.from_file(str(arrow_file)).num_rows


def describe(dataset: str, source: str) -> str:
    """Where ``dataset`` is read from, in words a chapter can print."""
    src = resolve(dataset, source)
    if src is None:
        return f"the files in $RCSTUDY_DATA/{DATASETS[dataset].folder} (data source {FOLDER!r})"
    return src.describe() if src.local else f"{src.describe()} (data source {source!r})"
