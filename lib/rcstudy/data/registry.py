"""The expected layout of the data directory and where each dataset comes from.

``RCSTUDY_DATA`` (default ``data/``) holds one folder per dataset, exactly as laid out below.
The introduction of the book and the README render this table; nothing else hard-codes paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import DataFileMissing
from ..settings import data_dir


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    folder: str
    files: tuple[str, ...]  # required for the chapter; globs allowed
    source: str  # public release the files come from
    licence: str
    notes: str = ""


DATASETS: dict[str, DatasetInfo] = {
    d.name: d
    for d in [
        DatasetInfo(
            "reclor", "reclor", ("train.json", "val.json", "test.json", "question_types.json"),
            "https://whyu.me/reclor/ (official release; request form)",
            "non-commercial research only",
            "JSON arrays of {context, question, answers[4], label, id_string}; test has no labels. "
            "question_types.json maps id_string to the 17 question types of Table 3.",
        ),
        DatasetInfo(
            "logiqa", "logiqa", ("Eval.txt", "Test.txt", "zh_eval.txt", "zh_test.txt"),
            "https://github.com/lgw863/LogiQA-dataset", "none stated",
            "Blank-line separated blocks: answer letter, context, question, four labelled options. "
            "Train.txt / zh_train.txt are used when present.",
        ),
        DatasetInfo(
            "logiqa2", "logiqa2", ("dev.txt", "test.txt"),
            "https://github.com/csitfun/LogiQA2.0 (logiqa/DATA/LOGIQA)", "non-commercial research only",
            "JSON Lines with text, question, options, answer, type (reasoning-type flags).",
        ),
        DatasetInfo(
            "metalogic", "metalogic", ("metalogic_train.json", "metalogic_dev.json", "metalogic_test.json"),
            "https://github.com/tencent-ailab/MetaLogic", "MIT",
            "JSON Lines despite the .json suffix; one metagraph-annotated ReClor item per line.",
        ),
        DatasetInfo(
            "rule", "rule", ("mainq.jsonl", "subq_all.jsonl", "prompts.json"),
            "https://github.com/nii-cl/rule", "none stated",
            "Main questions are ReClor train items; subq_split_{1..5}.jsonl are the released splits.",
        ),
        DatasetInfo(
            "record", "record", (),
            "https://sheng-z.github.io/ReCoRD-explorer/ (official); SuperGLUE; FewGLUE; microsoft/CLUES",
            "ReCoRD: research use (news articles); FewGLUE and CLUES: MIT",
            "Any of: official train.json/dev.json, SuperGLUE train.jsonl/val.jsonl, fewglue/, clues/, explorer/.",
        ),
    ]
}


def dataset_dir(dataset: str) -> Path:
    """The folder of ``dataset`` inside the data directory (it may not exist)."""
    return data_dir() / DATASETS[dataset].folder


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
