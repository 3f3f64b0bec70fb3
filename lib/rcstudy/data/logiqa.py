"""LogiQA 1.0 (English and Chinese txt files) and LogiQA 2.0 (JSON Lines), plus the text
matching that relates the two releases.

LogiQA 1.0 (lgw863/LogiQA-dataset) stores one question per 8 lines::

    <blank line>
    <answer letter: a|b|c|d>
    <paragraph>
    <question>
    A.<option>   B.<option>   C.<option>   D.<option>   (one line each)

The answer letter names the option's *label*, not its line: in 19 test blocks the options are
printed out of order (``A., C., B., D.``), and those blocks are put back in label order. The
labels come in many forms (``A.``, ``A．``, ``A，``, ``A、``, ``A:``, ``A?``, ``A .``, ``d.``,
``A `` followed by text, or no label at all), and some translated options begin with a letter
that belongs to the text ("Country A.H will ..."); a label is therefore removed only where it is
the letter expected at that line (or the four labels of a block are a permutation of ABCD).

A block repeated word for word (paragraph, question and options) is refused: the release has none.
So is a question of one split found again in another split of the same language (the same
paragraph, question and options after normalising whitespace, case and Unicode forms: leakage
between splits), naming both files and blocks: Eval and Test share none. An empty paragraph,
question or option (whitespace and invisible format characters such as U+200B do not count) is
refused, and so are two options with the same text, except in the four Eval blocks where the
release's English translation gives two different options the same words (:data:`REPEATED_OPTIONS`).

LogiQA 2.0 (csitfun/LogiQA2.0) is a re-translated, larger release whose dev and test files are
JSON Lines with ``id, answer, text, question, options, type``; many of its items are the same
exam questions as LogiQA 1.0 items, translated again. :func:`match_items` finds them.
A repeated ``id`` is refused, except the release's own: it gives the same ``id`` to two *different*
questions (2 ids in dev.txt, 4 in test.txt: :data:`LOGIQA2_DUPLICATE_IDS`). Between files, the
release repeats 142 questions (the same text, question and options; the OOD test file
reuses many dev and test questions) and 15 ids of dev.txt name other questions in test.txt: those
are declared in :data:`LOGIQA2_KNOWN_REPEATS`, and any other question or id found in two of
dev.txt, test.txt and ood_test.jsonl is refused as leakage between splits, naming both files and
lines (ood_test.jsonl numbers its ids on its own, so only its questions are compared). Options
are checked as LogiQA 1.0's (:data:`LOGIQA2_REPEATED_OPTIONS`: the release's items with a
repeated option). ``type`` lists the reasoning types flagged ``true``; it may be absent (the OOD
test file has none), but then from every line.

Files whose repeats could not be catalogued (the training files ``Train.txt``, ``zh_train.txt``
and LogiQA 2.0's ``train.txt``, absent from the data this book was built with, and the Hub
copies' training splits) are read with the same checks, except that the kinds of repeats the
release is known to have (a question in two splits, a repeated option, a repeated LogiQA 2.0 id)
are reported with an :class:`~rcstudy.data.io.UncataloguedRepeatWarning` instead of refused;
an option repeated in all four slots is refused everywhere.
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..errors import DataFormatError, DatasetUnavailable
from . import hub
from .io import (SplitOverlap, UniqueKeys, ascii_int, check_texts, check_type, is_blank, item_key, iter_jsonl,
                 located, optional_fields, parsed_once, read_text, require_all_or_none, require_fields, require_index,
                 require_items, text_key, warn_uncatalogued)
from .records import MCItem
from .registry import DatasetInfo, HubCopy, check_folder, dataset_dir, dataset_file

LETTERS = "ABCD"
SPLITS = ("train", "eval", "test")
LANGS = ("en", "zh")
#: Official file names, by (language, split).
FILES = {
    ("en", "train"): "Train.txt", ("en", "eval"): "Eval.txt", ("en", "test"): "Test.txt",
    ("zh", "train"): "zh_train.txt", ("zh", "eval"): "zh_eval.txt", ("zh", "test"): "zh_test.txt",
}
LABEL_MODES = ("label", "position")
#: Splits whose files were available to catalogue the release's own repeats; the others are
#: checked leniently (see the module notes).
CATALOGUED = ("eval", "test")
#: The release's items with a repeated option, by (split, block): the number of distinct options.
#: Its English translation gives two different Chinese options the same words (zh_eval.txt has
#: four distinct options in each of these blocks); every other item must have four distinct options.
REPEATED_OPTIONS = {("eval", 163): 3, ("eval", 204): 3, ("eval", 236): 3, ("eval", 564): 3}

# A label: the letter, optional spaces, one separator (ASCII or full-width), optional spaces.
_LABEL_SEP = re.compile(r"^\s*([A-Da-d])\s*[.．:：?？、,，。]\s*")
# A label followed by spaces only ("A All American athletes ...", "C 有白术").
_LABEL_SPACE = re.compile(r"^\s*([A-D])\s+(?=\S)")


@dataclass(frozen=True)
class ParsedOptions:
    texts: tuple[str, ...]
    raw_labels: tuple[str | None, ...]  # the label found at each printed line (None: none)
    order: tuple[int, ...]  # printed line of the option now at each position
    unlabelled: tuple[int, ...]  # printed lines whose label could not be removed

    @property
    def reordered(self) -> bool:
        return self.order != tuple(range(len(self.order)))


def parse_options(lines: Sequence[str]) -> ParsedOptions:
    """Remove the option labels of one block and restore label order (see the module docstring)."""
    sep = [_LABEL_SEP.match(line) for line in lines]
    letters = [m.group(1).upper() if m else None for m in sep]
    if sorted(x for x in letters if x) == list(LETTERS) and letters != list(LETTERS):
        order = tuple(letters.index(c) for c in LETTERS)  # a permutation: put options in label order
        texts = tuple(lines[i][sep[i].end():].strip() for i in order)
        return ParsedOptions(texts, tuple(letters), order, ())
    space = [_LABEL_SPACE.match(line) for line in lines]
    all_spaced = all(m and m.group(1) == LETTERS[k] for k, m in enumerate(space))
    texts, raw, unlabelled = [], [], []
    for k, line in enumerate(lines):
        m, s = sep[k], space[k]
        if m and letters[k] == LETTERS[k]:
            texts.append(line[m.end():].strip())
            raw.append(m.group(1))
        elif s and s.group(1) == LETTERS[k] and (all_spaced or not line[s.end()].islower()):
            # "A The brain ..." is a label; "A small amount ..." at line A of an unlabelled block
            # reads as text unless all four lines carry the spaced form.
            texts.append(line[s.end():].strip())
            raw.append(s.group(1))
        else:
            texts.append(line.strip())
            raw.append(None)
            unlabelled.append(k)
    return ParsedOptions(tuple(texts), tuple(raw), tuple(range(len(lines))), tuple(unlabelled))


def parse_logiqa_txt(path: Path, *, split: str, lang: str, label_mode: str = "label") -> list[MCItem]:
    """Parse one official LogiQA 1.0 file into :class:`MCItem` records.

    ``label_mode="label"`` (right) maps the answer letter to the option *labelled* with it;
    ``"position"`` (the naive reading, kept for comparison) maps it to the option printed at that
    line and leaves the options in printed order. ``meta`` keeps ``lang``, ``split``, ``block``
    (0-based), ``line`` (1-based line of the answer letter), ``raw_labels``, ``reordered`` and
    ``unlabelled`` (printed lines whose label could not be removed).
    """
    if label_mode not in LABEL_MODES:
        raise ValueError(f"label_mode must be one of {LABEL_MODES}, got {label_mode!r}")
    path = Path(path)
    lines = read_text(path).replace("\r\n", "\n").split("\n")
    while lines and not lines[-1].strip():  # a final newline or trailing blank lines
        lines.pop()
    if not lines:
        raise DataFormatError(path, "the file has no questions")
    items = []
    blocks = UniqueKeys(path, "block")
    lenient: list[str] = []
    for b, start in enumerate(range(0, len(lines), 8)):
        block = lines[start:start + 8]
        lineno = start + 1  # 1-based number of the block's first line
        with located(path, line=lineno + 1):
            items.append(_parse_block(path, block, b, lineno, split=split, lang=lang, label_mode=label_mode,
                                      blocks=blocks, lenient=lenient))
    warn_uncatalogued({path: lenient}, "items with a repeated option")
    return items


def check_options(path: Path, options: Sequence[str], *, known: int | None, catalogued: bool,
                  lenient: list[str], names: Sequence[str] | None = None, **where) -> None:
    """Options must differ from each other. ``known``: the release's item repeats options and is
    declared to have this many distinct ones (fewer are refused). In a file whose repeats are not
    catalogued, a repeat short of all four options is collected in ``lenient`` (for a warning)."""
    distinct = len({text_key(o) for o in options})
    if known is not None:
        if distinct < known:
            check_texts(path, {}, options, distinct_options=known, names=names, **where)
        return
    if catalogued or distinct == 1:
        check_texts(path, {}, options, names=names, **where)
        return
    try:
        check_texts(path, {}, options, names=names, **where)
    except DataFormatError as e:
        lenient.append(str(e))


def _parse_block(path: Path, block: list[str], b: int, lineno: int, *, split: str, lang: str, label_mode: str,
                 blocks: UniqueKeys, lenient: list[str]) -> MCItem:
    """One 8-line block (``lineno``: its first line) as an item."""
    if len(block) < 8:
        raise DataFormatError(path, f"incomplete block: {len(block)} of 8 lines (blank, answer, paragraph, "
                                    f"question, 4 options) before the end of the file", line=lineno)
    if block[0].strip():
        raise DataFormatError(path, f"expected the blank line that starts a block, got {block[0][:40]!r} "
                                    f"(is a line missing or extra in the block above?)", line=lineno)
    answer = block[1].strip().lower()
    if len(answer) != 1 or answer not in "abcd":
        raise DataFormatError(path, f"expected an answer letter a-d, got {block[1][:40]!r}", line=lineno + 1)
    for offset, what in ((2, "paragraph"), (3, "question")):
        if is_blank(block[offset]):
            raise DataFormatError(path, f"the {what} line is empty{_invisible(block[offset])}", line=lineno + offset)
    for k in range(4):
        if is_blank(block[4 + k]):
            raise DataFormatError(path, f"option {LETTERS[k]} line is empty{_invisible(block[4 + k])}",
                                  line=lineno + 4 + k)
    blocks.add(tuple(line.strip() for line in block[2:8]), f"line {lineno + 1}", line=lineno + 1,
               shown="(the same paragraph, question and options)")
    parsed = parse_options(block[4:8])
    if label_mode == "label":
        options, label = parsed.texts, "abcd".index(answer)
    else:
        # printed order; undo the reordering that label mode would do
        by_line = dict(zip(parsed.order, parsed.texts))
        options, label = tuple(by_line[k] for k in range(4)), "abcd".index(answer)
    if any(is_blank(o) for o in options):
        k = next(i for i, o in enumerate(options) if is_blank(o))
        raise DataFormatError(path, f"option {LETTERS[k]} has a label but no text", line=lineno + 4 + k)
    check_options(path, options, known=REPEATED_OPTIONS.get((split, b)) if lang == "en" else None,
                  catalogued=split in CATALOGUED, lenient=lenient, names=[f"option {c}" for c in LETTERS],
                  line=lineno + 1, item=f"block {b}")
    return MCItem(
        id=f"{lang}-{split}-{b}", context=block[2].strip(), question=block[3].strip(), options=options,
        label=label,
        meta={"lang": lang, "split": split, "block": b, "line": lineno + 1, "answer_letter": answer,
              "raw_labels": parsed.raw_labels, "reordered": parsed.reordered and label_mode == "label",
              "permuted": parsed.reordered, "unlabelled": parsed.unlabelled},
    )


def _invisible(text: str) -> str:
    return f" (only invisible characters: {text!r:.40})" if text.strip() else ""


def read_hub_split(src: hub.Source, split: str) -> list[MCItem]:
    """One split of LogiQA 1.0's Hub copy (``context, query, options, correct_option``), with the
    official blocks' checks: four non-empty options, an answer index 0-3, no repeated question.

    The copy's options are read as the option texts in printed order, their labels already removed
    by the copy's conversion: the 19 Test blocks printed out of order (see the module notes) cannot
    be put back in label order, both label modes read them as the copy holds them, and ``meta``
    has no printed labels.
    """
    path = Path(src.where(split))
    blocks = UniqueKeys(path, "block")
    items: list[MCItem] = []
    lenient: list[str] = []
    for row, obj in enumerate(hub.rows(src, split), start=1):
        with located(path, line=row):
            items.append(_hub_row(path, obj, row, split, blocks, lenient))
    warn_uncatalogued({path: lenient}, "items with a repeated option")
    return list(require_items(items, path, "questions"))


def _hub_row(path: Path, obj: dict, row: int, split: str, blocks: UniqueKeys, lenient: list[str]) -> MCItem:
    require_fields(obj, {"context": str, "query": str, "options": list, "correct_option": (int, str)},
                   path, line=row)
    answer = obj["correct_option"]
    if isinstance(answer, str) and ascii_int(answer) is not None:
        answer = ascii_int(answer)
    require_index(answer, 4, path, what="correct_option", line=row)
    options = obj["options"]
    if len(options) != 4 or not all(isinstance(o, str) and not is_blank(o) for o in options):
        raise DataFormatError(path, f"expected 4 non-empty option strings, got {options!r:.80}", line=row)
    for what, text in (("paragraph", obj["context"]), ("question", obj["query"])):
        if is_blank(text):
            raise DataFormatError(path, f"the {what} is empty{_invisible(text)}", line=row)
    texts = tuple(x.strip() for x in (obj["context"], obj["query"], *options))
    blocks.add(texts, f"line {row}", line=row, shown="(the same paragraph, question and options)")
    check_options(path, texts[2:], known=REPEATED_OPTIONS.get((split, row - 1)), catalogued=split in CATALOGUED,
                  lenient=lenient, line=row, item=f"block {row - 1}")
    return MCItem(
        id=f"en-{split}-{row - 1}", context=texts[0], question=texts[1], options=texts[2:], label=answer,
        meta={"lang": "en", "split": split, "block": row - 1, "line": row, "answer_letter": "abcd"[answer],
              "raw_labels": (None,) * 4, "reordered": False, "permuted": False, "unlabelled": ()},
    )


def has_split(split: str, lang: str = "en", source: str = hub.FOLDER) -> bool:
    """Whether the source has this LogiQA 1.0 split (the folder's Train.txt is often absent; the Hub
    copy is English only)."""
    if hub.resolve("logiqa", source) is not None:
        return lang == "en" and split in hub.copy_of("logiqa").splits
    return (dataset_dir("logiqa") / FILES[(lang, split)]).is_file()


def load_logiqa(split: str, lang: str = "en", label_mode: str = "label", source: str = hub.FOLDER) -> list[MCItem]:
    """One LogiQA 1.0 split (``train``/``eval``/``test``) in English or Chinese, from the folder or
    another ``source`` (:mod:`rcstudy.data.hub`)."""
    if split not in SPLITS or lang not in LANGS:
        raise ValueError(f"split must be one of {SPLITS} and lang one of {LANGS}; got {split!r}, {lang!r}")
    if label_mode not in LABEL_MODES:
        raise ValueError(f"label_mode must be one of {LABEL_MODES}, got {label_mode!r}")
    src = hub.resolve("logiqa", source)
    if src is None:
        check_folder("logiqa")
        path = dataset_file("logiqa", FILES[(lang, split)])
        items = parsed_once(parse_logiqa_txt, path, split=split, lang=lang, label_mode=label_mode)
        check_other_splits(items, path, split, lang)
        return items
    if lang != "en":
        raise DatasetUnavailable(f"logiqa: the Hub copy {src.copy.repo} is English only; read the Chinese "
                                 f"files {FILES[(lang, split)]} from the folder (data source 'folder')")
    return read_hub_split(src, split)


def check_other_splits(items: Sequence[MCItem], path: Path, split: str, lang: str) -> None:
    """Refuse an item of ``split`` whose paragraph, question and options (normalised) are those of an
    item of another split file of the same language in the folder, naming both files and blocks
    (a repeat involving a training file, whose repeats are not catalogued, only warns)."""
    overlap = SplitOverlap()
    for other in SPLITS:
        other_path = dataset_dir("logiqa") / FILES[(lang, other)]
        if other == split or not other_path.is_file():
            continue
        for it in parsed_once(parse_logiqa_txt, other_path, split=other, lang=lang, label_mode="label"):
            overlap.add(other, other_path, item_key(it.context, it.question, it.options), f"block {it.meta['block']}",
                        line=it.meta["line"], id_space=None, catalogued=other in CATALOGUED)
    for it in items:
        overlap.check(split, path, item_key(it.context, it.question, it.options), f"block {it.meta['block']}",
                      line=it.meta["line"], item=f"block {it.meta['block']}", id_space=None,
                      catalogued=split in CATALOGUED)
    overlap.warn()


def logiqa_path(split: str, lang: str = "en") -> Path:
    return dataset_file("logiqa", FILES[(lang, split)])


# --- LogiQA 2.0 ----------------------------------------------------------------------------

LOGIQA2_FILES = {"train": "train.txt", "dev": "dev.txt", "test": "test.txt", "ood_test": "ood_test.jsonl"}
#: The reasoning-type keys of LogiQA 2.0 (spelled as in the release) → the names used here.
REASONING_TYPES = ("categorical", "sufficient", "necessary", "disjunctive", "conjunctive")
_TYPE_KEYS = {
    "Categorical Reasoning": "categorical",
    "Sufficient Conditional Reasoning": "sufficient",
    "Necessry Condtional Reasoning": "necessary",  # sic, as released
    "Necessary Conditional Reasoning": "necessary",
    "Disjunctive Reasoning": "disjunctive",
    "Conjunctive Reasoning": "conjunctive",
}


#: LogiQA 2.0 splits whose files were available to catalogue the release's own repeats.
LOGIQA2_CATALOGUED = ("dev", "test", "ood_test")
#: Ids the release gives to two different questions of the same file (each twice), by split.
LOGIQA2_DUPLICATE_IDS = {"dev": frozenset({10882, 10973}), "test": frozenset({10906, 10948, 10591, 10571})}
#: The release's items with a repeated option, by (split, id): the number of distinct options (as
#: LogiQA 1.0's :data:`REPEATED_OPTIONS`, the translation's).
LOGIQA2_REPEATED_OPTIONS = {
    ("dev", 8564): 3, ("dev", 1923): 3, ("dev", 9335): 3, ("dev", 10326): 3,
    ("test", 8200): 3, ("test", 8083): 3, ("test", 1001): 3, ("test", 2380): 3, ("test", 2712): 2,
    ("test", 3902): 3, ("test", 6580): 3,
    ("ood_test", 17): 3, ("ood_test", 134): 3, ("ood_test", 326): 3, ("ood_test", 498): 3, ("ood_test", 527): 3,
}
#: The release's own repeats between its files: each group (``d`` dev.txt, ``t`` test.txt, ``o``
#: ood_test.jsonl, then the id) is one question (the same text, question and options, normalised)
#: found in more than one file (142 groups; the OOD test file reuses many dev and test questions).
_LOGIQA2_REPEATS = """
    d205 t305; d213 t313; d8071 o5; d8079 o13; d8135 o69; d8150 o84; d8164 t9416; d8232 o166;
    d8235 o169; d8237 o171; d8242 t9494 o176; d8243 o177; d8253 o187; d8258 o192; d8284 o218;
    d8296 t9548; d8306 o240; d8325 d9577 o259; d8327 o261; d8376 d9628 o310; d8382 t9634 o316;
    d8397 o331; d8401 o335; d8410 o344; d8465 o399; d8517 t9769; d8521 t9773 o455; d8525 o459;
    d8537 o471; d8573 t9825 o507; d8590 o524; d8622 d9874 o556; d8629 o563; d8656 t9908;
    d8771 t10023; d8807 t10059; d8871 t10123; d9134 t10386; d9316 t10568; d9333 o15;
    d9335 t8083 o17; d9343 o25; d9346 t8094 o28; d9380 o62; d9393 t8141 o75; d9399 o81;
    d9414 t8162 o96; d9421 o103; d9432 o114; d9433 t8181; d9441 o123; d9447 o129; d9482 o164;
    d9486 o168; d9493 t8241; d9556 o238; d9580 o262; d9604 t8352; d9623 o305; d9672 o354;
    d9681 o363; d9755 o437; d9758 o440; d9771 o453; d9791 t8539; d9812 o494; d9820 o502;
    d9823 t8571 o505; d9839 t8587; d9840 o522; d9855 o537; d9858 t8606 o540; d9871 o553;
    d9873 o555; d9886 o568; d9890 o572; d9892 o574; d10020 t8768; d10175 t8923; d10187 t8935;
    d10195 t8943; t8080 o14; t8095 o29; t8122 o56; t8137 o71; t8163 o97; t8167 o101;
    t8170 o104; t8200 o134; t8223 o157; t8247 o181; t8257 o191; t8269 o203; t8279 t9531 o213;
    t8335 o269; t8348 o282; t8354 o288; t8408 t9660 o342; t8411 o345; t8432 o366; t8443 o377;
    t8452 o386; t8464 o398; t8466 o400; t8478 o412; t8488 o422; t8491 t9743 o425; t8510 o444;
    t8512 o410 o446; t8556 o490; t8559 o493; t8574 o508; t8589 t9841 o523; t8620 o554;
    t9326 o8; t9327 o9; t9338 o20; t9345 o27; t9446 o128; t9448 o130; t9451 o133; t9491 o173;
    t9504 o186; t9518 o200; t9543 o225; t9565 o247; t9566 o248; t9567 o249; t9596 o278;
    t9602 o284; t9613 o295; t9622 o304; t9629 o311; t9669 o351; t9685 o367; t9708 o390;
    t9713 o395; t9735 o417; t9760 o442; t9790 o472; t9819 o501; t9882 o564;
"""
#: 15 ids of dev.txt that test.txt gives to other questions.
_LOGIQA2_SHARED_IDS = (10587, 10624, 10680, 10756, 10789, 10808, 10842, 10846, 10892, 10904, 10908, 10922, 10926,
                       10981, 10987)


def _repeat_groups(text: str) -> list[frozenset[tuple[str, int]]]:
    names = {"d": "dev", "t": "test", "o": "ood_test"}
    return [frozenset((names[m[0]], int(m[1:])) for m in group.split())
            for group in text.replace("\n", " ").split(";") if group.strip()]


#: Every repeat between LogiQA 2.0 files the release is known to have: a question or an id.
LOGIQA2_KNOWN_REPEATS = (_repeat_groups(_LOGIQA2_REPEATS)
                         + [frozenset({("dev", i), ("test", i)}) for i in _LOGIQA2_SHARED_IDS])


def parse_logiqa2_records(records: Iterable[tuple[int, dict]], path: Path | str, *, split: str,
                          row: str = "line") -> list[MCItem]:
    """LogiQA 2.0 records (``(line or row, object)``); ``meta["types"]`` holds the reasoning types
    flagged true. ``type`` is a JSON object in the release and the text of a Python dict in the Hub
    copy (its loading script stored it as a string); both are read, as data, never run."""
    path = Path(path)
    items: list[MCItem] = []
    seen = UniqueKeys(path, "record")
    ids = UniqueKeys(path, "id")
    has_types: list[tuple[bool, dict]] = []
    lenient: dict[str, list[str]] = {"ids": [], "options": []}
    for lineno, obj in records:
        item_id = str(obj.get("id", lineno)) if isinstance(obj, dict) else str(lineno)
        where = {"line": lineno, "item": item_id}
        with located(path, **where):
            items.append(_logiqa2_record(obj, path, split, row, lineno, where, seen, ids, has_types, lenient))
    require_items(items, path, "questions")
    require_all_or_none(path, "type", has_types)
    warn_uncatalogued({path: lenient["ids"]}, "repeated ids")
    warn_uncatalogued({path: lenient["options"]}, "items with a repeated option")
    return items


def _logiqa2_record(obj: dict, path: Path, split: str, row: str, lineno: int, where: dict, seen: UniqueKeys,
                    ids: UniqueKeys, has_types: list, lenient: dict[str, list[str]]) -> MCItem:
    if not isinstance(obj, dict):
        raise DataFormatError(path, f"expected a JSON object, got {type(obj).__name__}", **where)
    require_fields(obj, {"id": int, "answer": int, "text": str, "question": str, "options": list}, path, **where)
    if obj.get("type") is not None:
        obj = {**obj, "type": type_flags(obj["type"], path, where)}
    optional_fields(obj, {"type": dict}, path, **where)
    has_types.append(("type" in obj, where))
    seen.add(json.dumps(obj, sort_keys=True), f"{row} {lineno}", shown=f"(the same {row} repeated)", **where)
    if obj["id"] not in LOGIQA2_DUPLICATE_IDS.get(split, ()):
        try:
            ids.add(obj["id"], f"{row} {lineno}", **where)
        except DataFormatError as e:
            if split in LOGIQA2_CATALOGUED:
                raise
            lenient["ids"].append(str(e))
    options = obj["options"]
    if len(options) != 4 or not all(isinstance(o, str) and not is_blank(o) for o in options):
        raise DataFormatError(path, f"expected 4 non-empty option strings, got {options!r:.80}", **where)
    for what in ("text", "question"):
        if is_blank(obj[what]):
            raise DataFormatError(path, f"the {what} is empty{_invisible(obj[what])}", **where)
    require_index(obj["answer"], 4, path, what="answer", **where)
    raw_types = obj.get("type", {})
    unknown = set(raw_types) - set(_TYPE_KEYS)
    if unknown:
        raise DataFormatError(path, f"unknown reasoning type(s) {sorted(unknown)!r:.120}", **where)
    for name, flag in raw_types.items():
        check_type(flag, bool, f"type.{name}", path, **where)
    types = tuple(sorted({_TYPE_KEYS[k] for k, v in raw_types.items() if v}, key=REASONING_TYPES.index))
    # The OOD test file prints labels ("A.The people ..."); dev and test do not.
    texts = []
    for k, o in enumerate(options):
        m = _LABEL_SEP.match(o)
        texts.append(o[m.end():].strip() if m and m.group(1).upper() == LETTERS[k] else o.strip())
    if any(is_blank(t) for t in texts):
        k = next(i for i, t in enumerate(texts) if is_blank(t))
        raise DataFormatError(path, f"option {k} has a label but no text", **where)
    check_options(path, texts, known=LOGIQA2_REPEATED_OPTIONS.get((split, obj["id"])),
                  catalogued=split in LOGIQA2_CATALOGUED, lenient=lenient["options"], **where)
    return MCItem(
        id=f"logiqa2-{split}-{obj['id']}", context=obj["text"].strip(), question=obj["question"].strip(),
        options=tuple(texts), label=obj["answer"],
        meta={"lang": "en", "split": split, "line": lineno, "source_id": obj["id"], "types": types,
              "has_types": "type" in obj},
    )


def type_flags(value, path: Path, where: dict) -> dict:
    """The reasoning-type flags: a mapping as given, or parsed from its text as a Python or JSON
    literal (``ast.literal_eval`` evaluates literals only)."""
    if not isinstance(value, str):
        return value
    try:
        flags = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        try:
            flags = json.loads(value)
        except (ValueError, RecursionError):
            flags = None
    if not isinstance(flags, dict):
        raise DataFormatError(path, f"field 'type' should be a dict of reasoning-type flags, got {value!r:.80}", **where)
    return flags


def parse_logiqa2_jsonl(path: Path, *, split: str) -> list[MCItem]:
    """The release's LogiQA 2.0 JSON Lines."""
    return parse_logiqa2_records(iter_jsonl(Path(path)), path, split=split)


def load_logiqa2(split: str, source: str = hub.FOLDER) -> list[MCItem]:
    """One LogiQA 2.0 split: ``dev``, ``test``, ``ood_test`` (or ``train`` where present), from the
    folder or the Hub copy (``baber/logiqa2``: train, dev and test)."""
    if split not in LOGIQA2_FILES:
        raise ValueError(f"LogiQA 2.0 split must be one of {tuple(LOGIQA2_FILES)}, got {split!r}")
    src = hub.resolve("logiqa2", source)
    if src is None:
        check_folder("logiqa2")
        path = dataset_file("logiqa2", LOGIQA2_FILES[split])
        items = parsed_once(parse_logiqa2_jsonl, path, split=split)
        check_other_logiqa2_splits(items, path, split)
        return items
    return parse_logiqa2_records(enumerate(hub.rows(src, split), start=1), src.where(split), split=split, row="row")


def check_other_logiqa2_splits(items: Sequence[MCItem], path: Path, split: str) -> None:
    """Refuse an item of ``split`` whose text, question and options (normalised), or whose id, are
    those of an item of another LogiQA 2.0 file in the folder, naming both files and lines, except
    the release's own repeats (:data:`LOGIQA2_KNOWN_REPEATS`); ``ood_test.jsonl`` numbers its ids
    on its own, so only its questions are compared. A repeat with ``train.txt`` (not catalogued) warns."""
    overlap = SplitOverlap(LOGIQA2_KNOWN_REPEATS)

    def id_space(s: str) -> str | None:
        return None if s == "ood_test" else "release"

    for other, name in LOGIQA2_FILES.items():
        other_path = dataset_dir("logiqa2") / name
        if other == split or not other_path.is_file():
            continue
        for it in parsed_once(parse_logiqa2_jsonl, other_path, split=other):
            overlap.add(other, other_path, item_key(it.context, it.question, it.options), it.meta["source_id"],
                        line=it.meta["line"], id_space=id_space(other), catalogued=other in LOGIQA2_CATALOGUED)
    for it in items:
        overlap.check(split, path, item_key(it.context, it.question, it.options), it.meta["source_id"],
                      line=it.meta["line"], item=str(it.meta["source_id"]), id_space=id_space(split),
                      catalogued=split in LOGIQA2_CATALOGUED)
    overlap.warn()


def logiqa2_files(splits: Sequence[str], source: str = hub.FOLDER) -> list[Path]:
    """The files these LogiQA 2.0 splits are read from (the Hub copy's Arrow files)."""
    src = hub.resolve("logiqa2", source)
    return [logiqa2_path(s) for s in splits] if src is None else hub.files(src, splits)


def logiqa2_path(split: str) -> Path:
    return dataset_file("logiqa2", LOGIQA2_FILES[split])


# --- matching the two releases -------------------------------------------------------------

def normalise(text: str) -> str:
    """Unicode-compatible (NFKC), lower-cased word characters separated by single spaces."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower()))


def item_text(item: MCItem, fields: str = "context") -> str:
    """The text compared when matching: the paragraph, or the whole item (``"all"``)."""
    if fields == "context":
        return item.context
    if fields == "all":
        return " ".join([item.context, item.question, *item.options])
    raise ValueError(f"fields must be 'context' or 'all', got {fields!r}")


def similarity_matrix(queries: Sequence[str], pool: Sequence[str], *, stop_words: bool = True) -> np.ndarray:
    """Cosine similarity of TF-IDF vectors (normalised words, English stop words removed unless
    ``stop_words=False``, sub-linear term frequency, IDF over both collections): shape
    (len(queries), len(pool)). Exactly equal normalised texts score 1.0 regardless of the weighting.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    q = [normalise(t) for t in queries]
    p = [normalise(t) for t in pool]
    vec = TfidfVectorizer(stop_words="english" if stop_words else None, sublinear_tf=True,
                          token_pattern=r"\S+").fit(q + p)
    sims = (vec.transform(q) @ vec.transform(p).T).toarray()
    exact = {t: i for i, t in enumerate(p)}
    for i, t in enumerate(q):
        if t in exact:
            sims[i, exact[t]] = 1.0
    return sims


@dataclass
class Dedup:
    """The result of removing near-duplicates of a reference set from a candidate pool."""

    kept: list[MCItem]
    removed: list[MCItem]
    exact: int  # removed because the normalised paragraph is identical
    near: int  # removed because the paragraph similarity reaches the threshold
    threshold: float
    best_similarity: np.ndarray  # per candidate, its highest similarity to any reference item
    best_match: list[str] = field(default_factory=list)  # per candidate, the id of that reference item

    def counts(self) -> dict[str, int]:
        return {"candidates": len(self.kept) + len(self.removed), "exact duplicates": self.exact,
                "near duplicates": self.near, "removed": len(self.removed), "kept": len(self.kept)}


def deduplicate(candidates: Sequence[MCItem], reference: Sequence[MCItem], *, threshold: float = 0.3,
                fields: str = "context") -> Dedup:
    """Drop every candidate whose text duplicates a reference item exactly or nearly.

    Exact: identical :func:`normalise`-d paragraphs. Near: TF-IDF cosine
    (:func:`similarity_matrix`) of the paragraphs at least ``threshold``. Matching on the
    paragraph alone also removes other questions on a reference item's paragraph.
    """
    sims = similarity_matrix([item_text(c, fields) for c in candidates], [item_text(r, fields) for r in reference])
    best = sims.max(axis=1) if len(reference) else np.zeros(len(candidates))
    arg = sims.argmax(axis=1) if len(reference) else np.zeros(len(candidates), dtype=int)
    ref_norm = {normalise(item_text(r, fields)) for r in reference}
    kept, removed, exact, near = [], [], 0, 0
    for c, s in zip(candidates, best):
        if normalise(item_text(c, fields)) in ref_norm:
            exact += 1
            removed.append(c)
        elif s >= threshold:
            near += 1
            removed.append(c)
        else:
            kept.append(c)
    return Dedup(kept, removed, exact, near, threshold, best,
                 [reference[j].id for j in arg] if len(reference) else [])


def match_items(queries: Sequence[MCItem], pool: Sequence[MCItem], *, threshold: float = 0.5) -> dict[str, MCItem]:
    """Pair each query item with the same question in another release (query id → pool item).

    Whole items (paragraph, question and options) are compared; a pair counts when each is the
    other's most similar item and the similarity reaches ``threshold``.
    """
    if not queries or not pool:
        return {}
    sims = similarity_matrix([item_text(q, "all") for q in queries], [item_text(p, "all") for p in pool])
    best_pool = sims.argmax(axis=1)
    best_query = sims.argmax(axis=0)
    return {q.id: pool[j] for i, (q, j) in enumerate(zip(queries, best_pool))
            if best_query[j] == i and sims[i, j] >= threshold}


# --- training data -------------------------------------------------------------------------

@dataclass
class TrainingSet:
    items: list[MCItem]
    source: str  # what the items are, in words
    dedup: Dedup | None = None  # how LogiQA 2.0 was deduplicated (None with the official Train.txt)
    files: list[Path] = field(default_factory=list)


def training_set(lang: str = "en", *, threshold: float = 0.3, source: str = hub.FOLDER,
                 logiqa2_source: str = hub.FOLDER) -> TrainingSet:
    """The official ``Train.txt`` where present (the Hub copy has it); otherwise LogiQA 2.0 dev+test
    without every item whose paragraph duplicates (exactly or nearly) a LogiQA 1.0 Eval or Test paragraph.

    LogiQA 2.0 is English only, so Chinese training needs ``zh_train.txt``.
    """
    src = hub.resolve("logiqa", source)
    if src is not None and lang == "en":
        return TrainingSet(load_logiqa("train", lang, source=source), f"LogiQA 1.0 Train ({src.describe()})",
                           files=hub.files(src, ["train"]))
    if has_split("train", lang):
        return TrainingSet(load_logiqa("train", lang), f"LogiQA 1.0 {FILES[(lang, 'train')]}",
                           files=[logiqa_path("train", lang)])
    if lang != "en":
        raise FileNotFoundError(f"Chinese training needs {FILES[(lang, 'train')]} in {dataset_dir('logiqa')}")
    reference = load_logiqa("eval") + load_logiqa("test")
    pool = load_logiqa2("dev", logiqa2_source) + load_logiqa2("test", logiqa2_source)
    dedup = deduplicate(pool, reference, threshold=threshold)
    files = [logiqa_path("eval"), logiqa_path("test"), *logiqa2_files(["dev", "test"], logiqa2_source)]
    return TrainingSet(dedup.kept, "LogiQA 2.0 dev+test, deduplicated against LogiQA 1.0 Eval+Test", dedup, files)


# --- the datasets, as the registry lists them ---------------------------------------------------

def logiqa_splits(source: str = hub.FOLDER) -> dict[str, tuple[str, list]]:
    """Every English split of LogiQA 1.0 the source has."""
    return {s: ("mc", load_logiqa(s, source=source)) for s in SPLITS if has_split(s, source=source)}


def check_logiqa(source: str = hub.FOLDER) -> None:
    """What the chapter reads: Eval and Test, in both languages from the folder (the Hub copy is English only)."""
    for lang in LANGS if source == hub.FOLDER else ("en",):
        for split in ("eval", "test"):
            load_logiqa(split, lang, source=source)


def logiqa2_splits(source: str = hub.FOLDER) -> dict[str, tuple[str, list]]:
    """Every split of LogiQA 2.0 the source has."""
    src = hub.resolve("logiqa2", source)
    present = ([s for s in LOGIQA2_FILES if (dataset_dir("logiqa2") / LOGIQA2_FILES[s]).is_file()]
               if src is None else list(src.copy.splits))
    return {s: ("mc", load_logiqa2(s, source)) for s in present}


def check_logiqa2(source: str = hub.FOLDER) -> None:
    """What the chapter reads: dev and test."""
    for split in ("dev", "test"):
        load_logiqa2(split, source)


RELEASES = (
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
        splits=logiqa_splits, check=check_logiqa,
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
        splits=logiqa2_splits, check=check_logiqa2,
    ),
)
