"""The expected layout of the data directory and where each dataset comes from.

``RCSTUDY_DATA`` (default ``data/``) holds one folder per dataset, exactly as laid out below.
The introduction of the book and the README render this table; nothing else hard-codes paths.
Where a dataset has a public copy on the Hugging Face Hub in plain data files (no loading
script), :class:`HubCopy` records it: :mod:`rcstudy.data.hub` reads it through ``datasets``.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

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


DATASETS: dict[str, DatasetInfo] = {
    d.name: d
    for d in [
        DatasetInfo(
            "reclor", "reclor", ("train.json", "val.json", "test.json", "question_types.json"),
            "https://whyu.me/reclor/ (official release; request form)",
            "non-commercial research only",
            "JSON arrays of {context, question, answers[4], label, id_string}; test has no labels. "
            "question_types.json maps id_string to the 17 question types of Table 3.",
            HubCopy("metaeval/reclor", {"train": "train", "val": "validation"},
                    "the official JSON files (train.json, val.json): context, question, answers[4], label, id_string",
                    "other (the ReClor terms: non-commercial research only)",
                    notes="no test split (its test.json was deleted from the repository); "
                          "question types come from the folder's question_types.json when present"),
        ),
        DatasetInfo(
            "logiqa", "logiqa", ("Eval.txt", "Test.txt", "zh_eval.txt", "zh_test.txt"),
            "https://github.com/lgw863/LogiQA-dataset", "none stated",
            "Blank-line separated blocks: answer letter, context, question, four labelled options. "
            "Train.txt / zh_train.txt are used when present.",
            HubCopy("lucasmccabe/logiqa", {"train": "train", "eval": "validation", "test": "test"},
                    "context, query, options[4] (label letters removed), correct_option (index 0-3)",
                    "none stated (as the release)", revision="refs/convert/parquet", data_dir="default",
                    notes="English only, with Train (7,376 questions); the repository is a loading script over "
                          "the release's txt files, so the Hub's Parquet export of it is read. Its options are "
                          "taken in printed order: the 19 Test blocks printed out of order are not reordered"),
            known_files=("Train.txt", "Eval.txt", "Test.txt", "zh_train.txt", "zh_eval.txt", "zh_test.txt"),
        ),
        DatasetInfo(
            "logiqa2", "logiqa2", ("dev.txt", "test.txt"),
            "https://github.com/csitfun/LogiQA2.0 (logiqa/DATA/LOGIQA)", "non-commercial research only",
            "JSON Lines with text, question, options, answer, type (reasoning-type flags).",
            HubCopy("baber/logiqa2", {"train": "train", "dev": "validation", "test": "test"},
                    "id, answer (index 0-3), text, question, options[4], type (the reasoning-type flags as the "
                    "text of a Python dict)",
                    "CC BY-NC-SA 4.0 (the release's; the copy's card says CC BY-SA 4.0)",
                    revision="refs/convert/parquet", data_dir="logiqa2",
                    notes="the repository is a loading script over the release's files (config logiqa2), so the "
                          "Hub's Parquet export of it is read; no OOD test split"),
            known_files=("train.txt", "dev.txt", "test.txt", "ood_test.jsonl"),
        ),
        DatasetInfo(
            "metalogic", "metalogic", ("metalogic_train.json", "metalogic_dev.json", "metalogic_test.json"),
            "https://github.com/tencent-ailab/MetaLogic", "MIT",
            "JSON Lines despite the .json suffix; one metagraph-annotated ReClor item per line. "
            "No public Hub copy was found.",
        ),
        DatasetInfo(
            "rule", "rule", ("mainq.jsonl", "subq_all.jsonl", "prompts.json"),
            "https://github.com/nii-cl/rule", "none stated",
            "Main questions are ReClor train items; subq_split_{1..5}.jsonl are the released splits. "
            "No public Hub copy was found.",
            known_files=("mainq.jsonl", "subq_all.jsonl", "prompts.json", *(f"subq_split_{k}.jsonl" for k in range(1, 6))),
        ),
        DatasetInfo(
            "record", "record", (),
            "https://sheng-z.github.io/ReCoRD-explorer/ (official); SuperGLUE; FewGLUE; microsoft/CLUES",
            "ReCoRD: research use (news articles); FewGLUE and CLUES: MIT",
            "Any of: official train.json/dev.json, SuperGLUE train.jsonl/val.jsonl, fewglue/, clues/, explorer/.",
            HubCopy("aps/super_glue", {"train": "train", "eval": "validation", "test": "test"},
                    "one row per query: passage (raw, with @highlight markers), query, entities (distinct texts), "
                    "entity_spans {text, start, end (exclusive)} sorted by start, answers (distinct texts, "
                    "sorted; none in test), idx {passage, query}",
                    "other (ReCoRD: research use of news articles)", revision="refs/convert/parquet",
                    data_dir="record",
                    notes="SuperGLUE's release (100,730 / 10,000 / 10,000 queries); the copy drops the news source "
                          "and the answers' spans, so every mention of a gold text counts as an answer span"),
            # the official release, SuperGLUE's, FewGLUE's ReCoRD folder (unlabeled.jsonl is not read),
            # CLUES' ReCoRD files (10, 20 and 30 training queries, 5 draws each) and the explorer's pages
            known_files=("train.json", "dev.json", "test.json", "train.jsonl", "val.jsonl", "test.jsonl",
                         "fewglue/train.jsonl", "fewglue/dev32.jsonl", "fewglue/unlabeled.jsonl",
                         "clues/record_test.jsonl", *(f"clues/record_train_{n}_{k}.jsonl" for n in (10, 20, 30)
                                                      for k in range(1, 6)),
                         "explorer/examples.json", "explorer/dataset_readme.txt"),
        ),
    ]
}


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
