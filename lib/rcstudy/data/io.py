"""Reading the official file formats with errors that name the file and line, and the checks
every loader shares: strict field types (``true``/``false`` are never integers), option indices,
unique ids, non-empty splits and optional fields given by all records of a file or by none;
texts that are not empty (:func:`is_blank`: whitespace and invisible format characters do not
count), options that differ from each other (:func:`check_texts`), labels in ASCII digits or
letters only (:func:`ascii_int`), no question repeated across the splits of a dataset
(:class:`SplitOverlap`), and :func:`located`, which turns any other exception a record's parsing
raises into a located :class:`~rcstudy.errors.DataFormatError`."""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata
from pathlib import Path
from typing import Any, Hashable, Iterable, Iterator, Mapping, Sequence

from ..errors import DataFormatError


def _decode(raw: bytes, path: Path, line: int | None = None) -> str:
    """``raw`` as UTF-8; an invalid byte raises an error naming the file and its line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        where = line if line is not None else raw.count(b"\n", 0, e.start) + 1
        raise DataFormatError(path, f"not UTF-8 text: {e.reason} at byte {e.start}", line=where) from None


def read_text(path: Path) -> str:
    """The whole file as UTF-8 text (line ends as stored)."""
    path = Path(path)
    return _decode(path.read_bytes(), path)


def read_json(path: Path) -> Any:
    """Parse a whole JSON document; a syntax error names the file and line."""
    path = Path(path)
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataFormatError(path, f"invalid JSON: {e.msg} (column {e.colno})", line=e.lineno) from None
    except RecursionError:
        raise DataFormatError(path, "invalid JSON: values nested too deeply to read", line=_deepest_line(text)) from None


def _deepest_line(text: str) -> int:
    """The line (1-based) where the nesting of brackets is deepest (where a too-deep value is)."""
    depth = best = 0
    line = best_line = 1
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > best:
                best, best_line = depth, line
        elif ch in "]}":
            depth -= 1
        elif ch == "\n":
            line += 1
    return best_line


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON Lines file.

    Lines end at ``\\n`` only, so a stray carriage return inside a line is read as JSON (and refused
    there) instead of splitting the line.
    """
    path = Path(path)
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            line = _decode(raw, path, lineno)
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataFormatError(path, f"invalid JSON: {e.msg} (column {e.colno})", line=lineno) from None
            except RecursionError:
                raise DataFormatError(path, "invalid JSON: values nested too deeply to read", line=lineno) from None
            if not isinstance(obj, dict):
                raise DataFormatError(path, f"expected a JSON object, got {type(obj).__name__}", line=lineno)
            yield lineno, obj


def type_name(typ: type | tuple[type, ...]) -> str:
    return typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)


def has_type(value: Any, typ: type | tuple[type, ...]) -> bool:
    """``isinstance`` except that a bool is not an int unless ``bool`` is asked for explicitly."""
    types = typ if isinstance(typ, tuple) else (typ,)
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def require_fields(obj: dict, fields: dict[str, type | tuple[type, ...]], path: Path, *,
                   line: int | None = None, item: str | None = None) -> None:
    """Check that ``obj`` has each field with the expected type, else raise a located error."""
    for name, typ in fields.items():
        if name not in obj:
            raise DataFormatError(path, f"missing field {name!r}", line=line, item=item)
        check_type(obj[name], typ, name, path, line=line, item=item)


def optional_fields(obj: dict, fields: dict[str, type | tuple[type, ...]], path: Path, *,
                    line: int | None = None, item: str | None = None) -> None:
    """Like :func:`require_fields` for fields that may be absent (``null`` is not absent)."""
    require_fields(obj, {k: t for k, t in fields.items() if k in obj}, path, line=line, item=item)


def check_type(value: Any, typ: type | tuple[type, ...], name: str, path: Path, *,
               line: int | None = None, item: str | None = None) -> None:
    if not has_type(value, typ):
        raise DataFormatError(path, f"field {name!r} should be {type_name(typ)}, got {type(value).__name__}",
                              line=line, item=item)


def require_index(value: Any, n: int, path: Path, *, what: str = "label", line: int | None = None,
                  item: str | None = None) -> int:
    """An option index ``0..n-1`` given as a JSON integer (``true``, ``1.0``, ``"1"`` and ``null`` are not)."""
    if not has_type(value, int) or not 0 <= value < n:
        raise DataFormatError(path, f"{what} {value!r} is not an option index 0-{n - 1}", line=line, item=item)
    return value


class UniqueKeys:
    """Where each id (or other key) of one file was first seen; a repeat raises a located error."""

    def __init__(self, path: Path, what: str = "id"):
        self.path, self.what, self.first = Path(path), what, {}

    def add(self, key: Hashable, first_at: str, *, line: int | None = None, item: str | None = None,
            shown: str | None = None) -> None:
        """Record ``key`` seen at ``first_at`` (e.g. ``"line 3"``); ``shown`` replaces the key in the message."""
        if key in self.first:
            raise DataFormatError(self.path, f"duplicate {self.what} {shown or repr(key)} (first at {self.first[key]})",
                                  line=line, item=item)
        self.first[key] = first_at


def require_items(items: Sequence, path: Path, what: str = "items") -> Sequence:
    """A split file must hold at least one item."""
    if not items:
        raise DataFormatError(path, f"the file has no {what}")
    return items


def require_all_or_none(path: Path, name: str, present: Sequence[tuple[bool, dict]]) -> None:
    """An optional field is given by every record of a file or by none of them.

    ``present`` holds, per record, whether it has the field and its location (``line``/``item``
    keyword arguments). A record lacking a field that the others have is damaged, not a variant.
    """
    has = sum(p for p, _ in present)
    if 0 < has < len(present):
        odd = has < len(present) - has  # name a record of the minority
        where = next(w for p, w in present if p == odd)
        state = "given here" if odd else "missing here"
        raise DataFormatError(path, f"field {name!r} is {state} but {'missing from' if odd else 'given by'} "
                                    f"{len(present) - has if odd else has} of the file's {len(present)} items",
                              **where)


# --------------------------------------------------------------------------- texts and labels

_ASCII_INT = re.compile(r"[0-9]+", re.ASCII)


def ascii_int(text: str) -> int | None:
    """``text`` (stripped) as a non-negative integer written in ASCII digits only, else ``None``:
    ``str.isdigit`` also accepts other scripts' digits (``"٣"``) and superscripts (``"²"``)."""
    text = text.strip()
    return int(text) if _ASCII_INT.fullmatch(text) else None


def is_blank(text: str) -> bool:
    """Nothing visible: only whitespace and invisible format characters (Unicode category Cf, e.g.
    the zero-width space U+200B, which ``str.strip`` keeps)."""
    if text.isascii():
        return not text.strip()
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)  # stops at the first visible one


#: The format characters (Unicode category Cf: soft hyphen, zero-width spaces and joiners, bidi
#: marks, the BOM, tags...), as ranges of Unicode 14 (Python 3.11's ``unicodedata``).
_FORMAT_CHARS = re.compile("[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
                           "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
                           "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
                           "\U000e0020-\U000e007f]")


def text_key(text: str) -> str:
    """A text as compared for sameness: NFKC-normalised, without format characters, whitespace
    runs collapsed, case folded."""
    if not text.isascii():  # ASCII text has no format characters and is its own NFKC form
        text = _FORMAT_CHARS.sub("", unicodedata.normalize("NFKC", text))
    return " ".join(text.split()).casefold()


def item_key(context: str, question: str, options: Sequence[str]) -> tuple:
    """What makes two questions the same question: context, question and options, in order
    (:func:`text_key`)."""
    return (text_key(context), text_key(question), tuple(text_key(o) for o in options))


def check_texts(path: Path, texts: Mapping[str, str], options: Sequence[str] = (), *,
                line: int | None = None, item: str | None = None, distinct_options: int | None = None,
                names: Sequence[str] | None = None) -> None:
    """Every text is non-empty (:func:`is_blank`) and the options differ from each other (compared
    by :func:`text_key`).

    ``texts`` maps a name ("context") to its text. ``distinct_options`` declares a release's known
    exception: the number of distinct options the item is known to have (else all of them).
    ``names`` names the options in messages (default ``option 0``, ``option 1``, ...).
    """
    names = list(names) if names is not None else [f"option {k}" for k in range(len(options))]
    for what, text in [*texts.items(), *zip(names, options)]:
        if is_blank(text):
            shown = "" if not text else f" ({text!r:.40}: only whitespace or invisible format characters)"
            raise DataFormatError(path, f"the {what} is empty{shown}", line=line, item=item)
    keys = [text_key(o) for o in options]
    expected = len(options) if distinct_options is None else distinct_options
    if len(set(keys)) != expected:
        first = {}
        for k, key in enumerate(keys):
            if key in first:
                known = "" if distinct_options is None else f" (the release's copy has {distinct_options} distinct options)"
                raise DataFormatError(path, f"{names[k]} repeats {names[first[key]]}: {options[k]!r:.60}{known}",
                                      line=line, item=item)
            first[key] = k
        raise DataFormatError(path, f"the options are all different, but the release's copy of this item repeats "
                                    f"one (expected {distinct_options} distinct options)", line=line, item=item)


@contextlib.contextmanager
def located(path: Path, *, line: int | None = None, item: str | None = None):
    """Any exception (other than a :class:`DataFormatError`) that parsing one record raises on bad
    input becomes a :class:`DataFormatError` naming the file, the line or item and the exception."""
    try:
        yield
    except DataFormatError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError, OverflowError) as e:
        detail = " ".join(str(e).split())[:120]
        raise DataFormatError(path, f"unreadable record: {type(e).__name__}"
                                    f"{': ' + detail if detail else ''}", line=line, item=item) from e


# --------------------------------------------------------------------------- splits

class UncataloguedRepeatWarning(UserWarning):
    """A repeat (of a question across splits, of an id, of an option) in a file of a release whose
    own repeats are known to exist but could not be catalogued (e.g. a training file that was not
    available): it is reported, not refused."""


class SplitOverlap:
    """Questions (and ids) seen in the other splits of a dataset, to refuse leakage between splits.

    :meth:`add` registers an item of a split with its :func:`item_key` and id; :meth:`check`
    (for each item of the split being read, before its own items are added) raises a
    :class:`DataFormatError` naming both files and items when the same key, or the same id in the
    same ``id_space``, was added for another split, unless the set of ``(split, id)`` members lies
    within one of ``known`` (the release's own repeats, declared by the loader). A split added or
    checked with ``catalogued=False`` (a file whose repeats are not catalogued) collects the
    repeat for :meth:`warn` instead.
    """

    def __init__(self, known: Iterable[Iterable[tuple[str, Any]]] = ()):
        self.by_key: dict[Hashable, list[tuple]] = {}
        self.by_id: dict[Hashable, list[tuple]] = {}
        self.known = [frozenset(g) for g in known]
        self.uncatalogued: dict[Path, list[str]] = {}

    def add(self, split: str, path: Path, key: Hashable, ident: Any, *, line: int | None = None,
            id_space: str | None = "", catalogued: bool = True) -> None:
        entry = (split, path, ident, line, catalogued)
        self.by_key.setdefault(key, []).append(entry)
        if id_space is not None:
            self.by_id.setdefault((id_space, ident), []).append(entry)

    def check(self, split: str, path: Path, key: Hashable, ident: Any, *, line: int | None = None,
              item: str | None = None, id_space: str | None = "", catalogued: bool = True) -> None:
        found = [(self.by_id.get((id_space, ident), []) if id_space is not None else [], "id"),
                 (self.by_key.get(key, []), "question (context, question and options)")]
        for others, what in found:
            others = [o for o in others if o[0] != split]
            if not others or any({(split, ident)} | {(o[0], o[2]) for o in others} <= g for g in self.known):
                continue
            o_split, o_path, o_ident, o_line, o_catalogued = others[0]
            there = f"{Path(o_path).name}{f':{o_line}' if o_line is not None else ''} (item {o_ident})"
            problem = f"the same {what} as {there}: leakage between splits"
            if catalogued and o_catalogued:
                raise DataFormatError(path, problem, line=line, item=item)
            self.uncatalogued.setdefault(Path(path), []).append(str(DataFormatError(path, problem, line=line,
                                                                                    item=item)))
            return

    def warn(self) -> None:
        """One :class:`UncataloguedRepeatWarning` per file with repeats that were not refused."""
        warn_uncatalogued(self.uncatalogued, "questions found in another split")
        self.uncatalogued = {}


def warn_uncatalogued(found: Mapping[Path, list[str]], what: str) -> None:
    import warnings

    for path, messages in found.items():
        if messages:
            warnings.warn(f"{path}: {len(messages)} {what}, not refused because the release's own repeats in this "
                          f"file are not catalogued; the first: {messages[0]}", UncataloguedRepeatWarning,
                          stacklevel=3)


_PARSED: dict[tuple, list] = {}


def parsed_once(parse, path: Path, **kwargs) -> list:
    """``parse(path, **kwargs)``, remembered by the file's content: a loader reads the other splits'
    files to refuse leakage between splits, and each file is then parsed once, not once per split."""
    import hashlib

    path = Path(path)
    digest = hashlib.sha1(path.read_bytes()).hexdigest()
    key = (parse.__module__, parse.__qualname__, str(path.resolve()), digest, tuple(sorted(kwargs.items())))
    if key not in _PARSED:
        while len(_PARSED) >= 32:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[key] = parse(path, **kwargs)
    return list(_PARSED[key])
