"""ReClor (Yu et al., ICLR 2020): the official split files as :class:`MCItem` lists.

The official release unpacks to ``train.json``, ``val.json`` and ``test.json``, each one JSON
array of objects::

    {"context": str, "question": str, "answers": [4 str, in the order A-D],
     "label": int 0-3, "id_string": "train_17"}

``test.json`` has no ``label``: the test labels are hidden and the official leaderboard scores
a NumPy file of predicted option indices whose ``i``-th element answers ``test_i``
(:func:`leaderboard_array`). Test items carry a ``question_type`` index (0-16) into the 17
types of the paper's Table 3; ``question_types.json`` holds the names and, for train and val,
a map ``id_string → index``.

Copies made by other tools are read too: JSON Lines instead of one array, ``label`` as an int,
a numeric string or a letter A-D, ``question_type`` as an index or a name, and side files
``{id_string: label}`` / ``{id_string: type}`` for test labels or types held privately.

Every item of a labelled split (train, val; any file whose name does not start with ``test``)
must have a valid ``label``: a missing, ``null``, ``true``/``false`` or out-of-range label is an
error, never a default. ``label`` (in the unlabelled test split) and ``question_type`` are each
given by every item of a file or by none (``null`` counts as not given). A file with no items, a
repeated ``id_string``, a field of the wrong type, and a ``question_type`` that contradicts
``question_types.json`` (or a label that contradicts the labels side file) raise :class:`~rcstudy.errors.DataFormatError`
naming the file, the line (JSON Lines) or item, and the problem; a split whose size differs from
the official one only warns, so subsampled copies load. So do an empty context, question or
option (whitespace and invisible format characters such as U+200B do not count as text), two
options with the same text, and a label or question type written in other than ASCII digits or
letters (``"٣"``, ``"²"``).

Leakage between splits: :func:`load_all` (what the chapter and the preflight read) refuses an
``id_string`` found in two splits and a question (the same context, question and options,
compared after normalising whitespace, case and Unicode forms) found in two splits, naming both
files and items, except the release's own repeats, declared in :data:`KNOWN_REPEATS`.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from ..errors import DataFormatError
from . import hub
from .io import (SplitOverlap, UniqueKeys, ascii_int, check_texts, item_key, iter_jsonl, located, read_json,
                 require_all_or_none, require_fields, require_items)
from .records import MCItem
from .registry import DatasetInfo, HubCopy, check_folder, dataset_dir, dataset_file

DATASET = "reclor"
SPLITS = ("train", "val", "test")
EXPECTED_SIZES = {"train": 4638, "val": 500, "test": 1000}
N_OPTIONS = 4
LETTERS = "ABCD"
TYPES_FILE = "question_types.json"
#: The 17 question types of the paper's Table 3, in its order (index = ``question_type``).
QUESTION_TYPES = (
    "Necessary Assumptions", "Sufficient Assumptions", "Strengthen", "Weaken", "Evaluation",
    "Implication", "Conclusion/Main Point", "Most Strongly Supported", "Explain or Resolve",
    "Principle", "Dispute", "Technique", "Role", "Identify a Flaw", "Match Flaws",
    "Match the Structure", "Others",
)
FIELDS = {"context": str, "question": str, "answers": list, "id_string": str}
#: The release's own repeats between splits, refused anywhere else. Five test questions repeat
#: train questions word for word (context, question and the four options) in the data this book
#: is built from (the official test.json, and train.json rebuilt from the ZsLR re-split: see the
#: data's PROVENANCE.md): they are kept, as the release has them.
KNOWN_REPEATS = (
    {("train", "train_983"), ("test", "test_405")},
    {("train", "train_1263"), ("test", "test_491")},
    {("train", "train_2251"), ("test", "test_396")},
    {("train", "train_2857"), ("test", "test_686")},
    {("train", "train_3033"), ("test", "test_853")},
)
_TEST_ID = re.compile(r"^test_(\d+)$")


class SplitSizeWarning(UserWarning):
    """A split file holds a different number of items than the official release."""


def parse_label(value: Any, path: Path, *, line: int | None = None, item: str | None = None,
                required: bool = False) -> int | None:
    """``label`` as an option index 0-3: an int, a numeric string or a letter; ``None`` if absent
    (an error if ``required``)."""
    if value is None:
        if required:
            raise DataFormatError(path, "missing label (this split is labelled)", line=line, item=item)
        return None
    index = None
    if isinstance(value, int) and not isinstance(value, bool):
        index = value
    elif isinstance(value, str):
        text = value.strip()
        if ascii_int(text) is not None:  # ASCII digits only: not "٣" (Arabic-Indic 3) nor "²"
            index = ascii_int(text)
        elif len(text) == 1 and text.isascii() and text.upper() in LETTERS:
            index = LETTERS.index(text.upper())
    if index is None:
        raise DataFormatError(path, f"label {value!r} is neither an option index 0-3 nor a letter A-D",
                              line=line, item=item)
    if not 0 <= index < N_OPTIONS:
        raise DataFormatError(path, f"label {value!r} is outside the {N_OPTIONS} options (0-3)", line=line, item=item)
    return index


def parse_question_type(value: Any, path: Path, *, line: int | None = None, item: str | None = None) -> str:
    """A question type given as an index into :data:`QUESTION_TYPES` or as one of its names."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(QUESTION_TYPES):
        return QUESTION_TYPES[value]
    if isinstance(value, str) and ascii_int(value) is not None:
        return parse_question_type(ascii_int(value), path, line=line, item=item)
    if isinstance(value, str) and value in QUESTION_TYPES:
        return value
    raise DataFormatError(path, f"question type {value!r} is neither an index 0-{len(QUESTION_TYPES) - 1} "
                                f"nor one of the 17 type names", line=line, item=item)


def _records(path: Path) -> Iterator[tuple[int | None, str, Any]]:
    """``(line, item name, object)`` for each record of a JSON array or a JSON Lines file."""
    with open(path, "rb") as f:
        head = f.read(4096).lstrip()
    if head.startswith(b"["):
        data = read_json(path)
        if not isinstance(data, list):
            raise DataFormatError(path, f"the file is not a JSON array of items but a {type(data).__name__}")
        for k, obj in enumerate(data):
            name = obj.get("id_string") if isinstance(obj, dict) else None
            yield None, name if isinstance(name, str) else f"#{k}", obj
    else:
        for line, obj in iter_jsonl(path):
            name = obj.get("id_string")
            yield line, name if isinstance(name, str) else None, obj


def read_split_file(path: Path | str, labelled: bool | None = None) -> list[MCItem]:
    """Parse and validate one split file (JSON array or JSON Lines) into items.

    ``labelled`` (default: the file name does not start with ``test``) makes ``label`` required.
    ``meta`` holds ``question_type`` (a name, or ``None`` when the file gives none) and
    ``line`` (JSON Lines only).
    """
    path = Path(path)
    if labelled is None:
        labelled = not path.name.startswith("test")
    return parse_records(_records(path), path, labelled)


def parse_records(records: Iterable[tuple[int | None, str | None, Any]], path: Path | str,
                  labelled: bool) -> list[MCItem]:
    """Validate ``(line, item name, object)`` records of one split (a file's, or a Hub copy's rows with
    ``path`` naming the copy and ``line`` the row) into items."""
    path = Path(path)
    items: list[MCItem] = []
    ids = UniqueKeys(path, "id_string")
    present: dict[str, list[tuple[bool, dict]]] = {"label": [], "question_type": []}
    for k, (line, name, obj) in enumerate(records):
        where = {"line": line, "item": name}
        with located(path, **where):
            if not isinstance(obj, dict):
                raise DataFormatError(path, f"expected a JSON object, got {type(obj).__name__}", **where)
            require_fields(obj, FIELDS, path, **where)
            answers = obj["answers"]
            if len(answers) != N_OPTIONS:
                raise DataFormatError(path, f"'answers' has {len(answers)} options, expected {N_OPTIONS}", **where)
            if not all(isinstance(a, str) for a in answers):
                raise DataFormatError(path, "every entry of 'answers' should be a string", **where)
            ident = obj["id_string"]
            ids.add(ident, f"line {line}" if line is not None else f"position {k}", **where)
            check_texts(path, {"context": obj["context"], "question": obj["question"]}, answers,
                        names=[f"answer {k} ({LETTERS[k]})" for k in range(N_OPTIONS)], **where)
            for field in present:
                present[field].append((obj.get(field) is not None, where))
            qtype = obj.get("question_type")
            meta = {"question_type": None if qtype is None else parse_question_type(qtype, path, **where)}
            if line is not None:
                meta["line"] = line
            items.append(MCItem(ident, obj["context"], obj["question"], tuple(answers),
                                parse_label(obj.get("label"), path, required=labelled, **where), meta))
    require_items(items, path)
    for field, flags in present.items():
        require_all_or_none(path, field, flags)
    return items


def _side_map(path: Path, split: str | None = None) -> dict[str, Any]:
    """An ``{id_string: value}`` side file, or the ``split`` entry of ``question_types.json``."""
    data = read_json(path)
    if split is not None:
        if not isinstance(data, dict) or "names" not in data:
            raise DataFormatError(path, "expected an object with 'names' and one {id_string: index} map per split")
        if list(data["names"]) != list(QUESTION_TYPES):
            raise DataFormatError(path, "'names' differ from the 17 question types of the paper's Table 3")
        data = data.get(split, {})
    if not isinstance(data, dict):
        raise DataFormatError(path, f"expected a JSON object mapping id_string to a value, got {type(data).__name__}")
    return data


def read_hub_split(src: hub.Source, split: str) -> list[MCItem]:
    """One split of a Hub copy (rows in the official JSON fields), checked as the official files are."""
    rows = hub.rows(src, split)
    return parse_records(((k, row.get("id_string"), row) for k, row in enumerate(rows, start=1)),
                         src.where(split), labelled=split != "test")


def load_split(split: str, *, source: str = hub.FOLDER, labels_file: Path | str | None = None,
               types_file: Path | str | None = None, limit: int | None = None) -> list[MCItem]:
    """One split from ``$RCSTUDY_DATA/reclor`` (or another ``source``, see :mod:`rcstudy.data.hub`),
    with question types attached where known.

    Types come from the item itself, else ``types_file`` (``{id_string: type}``), else
    ``question_types.json`` when present. ``labels_file`` supplies labels the split file lacks
    (e.g. test labels a user holds). ``limit`` keeps the first items (for quick experiments).
    """
    if split not in SPLITS:
        raise ValueError(f"unknown ReClor split {split!r}; choose one of {', '.join(SPLITS)}")
    src = hub.resolve(DATASET, source)
    if src is None:
        check_folder(DATASET)
        path = dataset_file(DATASET, f"{split}.json")
        items = read_split_file(path, labelled=split != "test")
    else:
        path, items = Path(src.where(split)), read_hub_split(src, split)
    if len(items) != EXPECTED_SIZES[split]:
        warnings.warn(f"{path}: {len(items)} items, the official {split} split has {EXPECTED_SIZES[split]}",
                      SplitSizeWarning, stacklevel=2)
    types_path = Path(types_file) if types_file else dataset_dir(DATASET) / TYPES_FILE
    types = _side_map(types_path, None if types_file else split) if types_path.is_file() else {}
    labels_path = Path(labels_file) if labels_file else None
    labels = _side_map(labels_path) if labels_path else {}
    out = []
    for it in items:
        meta = dict(it.meta)
        if it.id in types:
            listed = parse_question_type(types[it.id], types_path, item=it.id)
            if meta["question_type"] not in (None, listed):
                raise DataFormatError(path, f"question_type {meta['question_type']!r} contradicts {listed!r} "
                                            f"in {types_path.name}", line=meta.get("line"), item=it.id)
            meta["question_type"] = listed
        label = it.label
        if it.id in labels:
            given = parse_label(labels[it.id], labels_path, item=it.id, required=True)
            if label is not None and given != label:
                raise DataFormatError(labels_path, f"label {given} contradicts {label} in {path.name}", item=it.id)
            label = given
        out.append(MCItem(it.id, it.context, it.question, it.options, label, {**meta, "split": split}))
    return out[:limit] if limit else out


def load_all(source: str = hub.FOLDER, **kwargs) -> dict[str, list[MCItem]]:
    """Train, val and test, or the splits the ``source`` has (``kwargs`` go to :func:`load_split`
    for the test split)."""
    src = hub.resolve(DATASET, source)
    splits = SPLITS if src is None else tuple(s for s in SPLITS if s in src.copy.splits)
    out = {s: load_split(s, source=source, **(kwargs if s == "test" else {})) for s in splits}
    check_disjoint(out, {s: dataset_dir(DATASET) / f"{s}.json" if src is None else Path(src.where(s)) for s in splits})
    return out


def check_disjoint(splits: dict[str, Sequence[MCItem]], paths: dict[str, Path]) -> None:
    """Refuse an ``id_string`` or a question (context, question and options) found in two splits
    (``paths`` names each split's file), naming both files and items; the release's own repeats
    (:data:`KNOWN_REPEATS`) are kept."""
    overlap = SplitOverlap(KNOWN_REPEATS)
    for split, items in splits.items():
        keys = [item_key(it.context, it.question, it.options) for it in items]
        for it, key in zip(items, keys):
            overlap.check(split, paths[split], key, it.id, line=it.meta.get("line"), item=it.id)
        for it, key in zip(items, keys):
            overlap.add(split, paths[split], key, it.id, line=it.meta.get("line"))


def leaderboard_array(items: Sequence[MCItem], predictions: Sequence[int] | np.ndarray) -> np.ndarray:
    """Predicted option indices in the order the leaderboard expects: element ``i`` answers ``test_i``.

    ``predictions`` are aligned with ``items`` (the test split, any order); they are re-ordered
    by the number in ``id_string``. The ids must be exactly ``test_0 … test_{n-1}``.
    """
    pred = np.asarray(predictions)
    if pred.shape != (len(items),):
        raise ValueError(f"{len(items)} test items but predictions of shape {pred.shape}")
    if pred.size and not (np.issubdtype(pred.dtype, np.integer) and pred.min() >= 0 and pred.max() < N_OPTIONS):
        raise ValueError("predictions must be option indices 0-3")
    index = []
    for it in items:
        m = _TEST_ID.match(it.id)
        if not m:
            raise ValueError(f"{it.id!r} is not a test id (test_<number>)")
        index.append(int(m.group(1)))
    if sorted(index) != list(range(len(items))):
        raise ValueError(f"test ids are not test_0 … test_{len(items) - 1} (each exactly once)")
    out = np.empty(len(items), dtype=np.int64)
    out[index] = pred
    return out


def write_leaderboard_file(items: Sequence[MCItem], predictions, path: Path | str) -> Path:
    """Save :func:`leaderboard_array` as a ``.npy`` file (the official submission format)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, leaderboard_array(items, predictions))
    return path


# --- the dataset, as the registry lists it ------------------------------------------------------

def splits(source: str = hub.FOLDER) -> dict[str, tuple[str, list]]:
    """Every split the source has, as multiple-choice items (checked against each other)."""
    return {s: ("mc", items) for s, items in load_all(source=source).items()}


RELEASES = (
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
        splits=splits,
    ),
)
