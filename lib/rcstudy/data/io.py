"""Reading the official file formats with errors that name the file and line, and the checks
every loader shares: strict field types (``true``/``false`` are never integers), option indices,
unique ids, non-empty splits and optional fields given by all records of a file or by none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Hashable, Iterator, Sequence

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
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise DataFormatError(path, f"invalid JSON: {e.msg} (column {e.colno})", line=e.lineno) from None


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
