"""The datasets' public Hugging Face Hub copies, read through ``datasets``, and every dataset as a
``datasets.DatasetDict``.

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..config import ConfigError
from ..errors import DataFormatError, DatasetUnavailable, closest, did_you_mean
from ..settings import data_dir
from .registry import DATASETS, HubCopy

if TYPE_CHECKING:
    import datasets

FOLDER, HUB = "folder", "hub"


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
        pin = f" at revision {self.revision}" if self.revision else ""
        return f"the Hub dataset {self.location}{pin}"


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
    return any(os.environ.get(v, "") not in ("", "0", "false") for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


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


def rows(src: Source, split: str) -> "datasets.Dataset":
    """The copy's rows of the book's ``split`` (``train``, ``val``/``eval``, ``test``)."""
    copy = src.copy
    if split not in copy.splits:
        raise DatasetUnavailable(f"{src.dataset}: the Hub copy {copy.repo} has no {split} split "
                                 f"(it has {', '.join(copy.splits)}); {copy.notes}")
    found = load_copy(src)
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


# --------------------------------------------------------------------------- DatasetDict

#: The record kinds a DatasetDict holds: multiple-choice items, RULE's subquestions (items tied to
#: a main question's option), ReCoRD's cloze queries and MetaLogic's metagraphs.
KINDS = ("mc", "subquestion", "cloze", "metagraph")


def features(kind: str) -> "datasets.Features":
    """The declared columns of one kind of record (:data:`KINDS`). A hidden label (ReClor's test
    split) is ``-1``, as in the Hub's copies; spans are end-exclusive character offsets."""
    from datasets import ClassLabel, Features, List, Value

    mc = {"id": Value("string"), "context": Value("string"), "question": Value("string"),
          "options": List(Value("string")), "label": ClassLabel(names=list("ABCD"))}
    if kind == "mc":
        return Features(mc)
    if kind == "subquestion":
        return Features({**mc, "main_id": Value("string"), "main_option": Value("int8"), "selective": Value("bool")})
    if kind == "cloze":
        span = {"start": Value("int32"), "end": Value("int32"), "text": Value("string")}
        return Features({"id": Value("string"), "passage": Value("string"), "query": Value("string"),
                         "entities": List(span), "answers": List(Value("string")), "source": Value("string")})
    if kind == "metagraph":
        node = {"sid": Value("string"), "text": Value("string"), "text_with_vars": Value("string"),
                "global_operators": List(Value("string")), "formulae": Value("string"), "degree": Value("int8")}
        return Features({"id": Value("string"), "question": Value("string"), "nodes": List(node),
                         "proof": Value("string")})
    raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")


def _mc_row(item) -> dict:
    return {"id": item.id, "context": item.context, "question": item.question, "options": list(item.options),
            "label": -1 if item.label is None else item.label}


def _subquestion_row(item) -> dict:
    return {**_mc_row(item), "main_id": item.meta["main_id"], "main_option": item.meta["main_option"],
            "selective": item.meta["selective"]}


def _cloze_row(q) -> dict:
    return {"id": q.id, "passage": q.passage, "query": q.query, "answers": list(q.answers), "source": q.source,
            "entities": [{"start": e.start, "end": e.end, "text": e.text} for e in q.entities]}


def _metagraph_row(g) -> dict:
    from .metalogic import linearize_triples

    return {"id": g.id, "question": g.question, "proof": g.proof, "nodes": [
        {"sid": sid, "text": n.text, "text_with_vars": n.text_with_vars, "global_operators": list(n.global_ops),
         "formulae": linearize_triples(n.triples).strip(), "degree": n.degree} for sid, n in g.nodes.items()]}


ROWS = {"mc": _mc_row, "subquestion": _subquestion_row, "cloze": _cloze_row, "metagraph": _metagraph_row}


def _records(dataset: str, source: str) -> dict[str, tuple[str, list]]:
    """``{split: (kind, records)}`` of every split the source has."""
    from . import logiqa, metalogic, reclor, record, rule

    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")
    src = resolve(dataset, source)  # a dataset without a Hub copy is read from the folder only
    if dataset == "reclor":
        return {s: ("mc", items) for s, items in reclor.load_all(source=source).items()}
    if dataset == "logiqa":
        present = [s for s in logiqa.SPLITS if logiqa.has_split(s, source=source)]
        return {s: ("mc", logiqa.load_logiqa(s, source=source)) for s in present}
    if dataset == "record":
        data = record.load_record(source=source)
        return {s: ("cloze", qs) for s, qs in (("train", data.train), ("eval", data.eval), ("test", data.test)) if qs}
    if dataset == "logiqa2":
        present = ([s for s in logiqa.LOGIQA2_FILES if (data_dir() / "logiqa2" / logiqa.LOGIQA2_FILES[s]).is_file()]
                   if src is None else list(src.copy.splits))
        return {s: ("mc", logiqa.load_logiqa2(s, source)) for s in present}
    if dataset == "rule":
        data = rule.load_rule()
        return {"main": ("mc", list(data.mains)), "sub": ("subquestion", list(data.subs))}
    if dataset == "metalogic":
        return {s: ("metagraph", metalogic.load_split(s)) for s in metalogic.SPLITS}
    raise AssertionError(f"no reader for dataset {dataset!r}")


def as_dataset_dict(dataset: str, source: str = FOLDER) -> "datasets.DatasetDict":
    """The records of ``dataset`` from ``source`` as a ``DatasetDict`` with declared :func:`features`
    (for ``.map``, ``.to_pandas()``, ``push_to_hub``), one split per split the source has (RULE:
    ``main`` and ``sub``)."""
    import datasets

    return datasets.DatasetDict({
        split: datasets.Dataset.from_list([ROWS[kind](r) for r in records], features=features(kind))
        for split, (kind, records) in _records(dataset, source).items()
    })
