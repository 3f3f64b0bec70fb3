"""Reading the official file formats with errors that name the file and line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from ..errors import DataFormatError


def read_json(path: Path) -> Any:
    """Parse a whole JSON document; a syntax error names the file and line."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise DataFormatError(path, f"invalid JSON: {e.msg} (column {e.colno})", line=e.lineno) from None
    except UnicodeDecodeError as e:
        raise DataFormatError(path, f"not UTF-8 text: {e.reason} at byte {e.start}") from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON Lines file."""
    with open(path, encoding="utf-8") as f:
        try:
            for lineno, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise DataFormatError(path, f"invalid JSON: {e.msg} (column {e.colno})", line=lineno) from None
                if not isinstance(obj, dict):
                    raise DataFormatError(path, f"expected a JSON object, got {type(obj).__name__}", line=lineno)
                yield lineno, obj
        except UnicodeDecodeError as e:
            raise DataFormatError(path, f"not UTF-8 text: {e.reason} at byte {e.start}") from None


def require_fields(obj: dict, fields: dict[str, type | tuple[type, ...]], path: Path, *,
                   line: int | None = None, item: str | None = None) -> None:
    """Check that ``obj`` has each field with the expected type, else raise a located error."""
    for name, typ in fields.items():
        if name not in obj:
            raise DataFormatError(path, f"missing field {name!r}", line=line, item=item)
        if not isinstance(obj[name], typ):
            expected = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
            raise DataFormatError(
                path, f"field {name!r} should be {expected}, got {type(obj[name]).__name__}", line=line, item=item
            )
