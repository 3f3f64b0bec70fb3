"""Two published books side by side: every glued value and every claim's verdict that differs.

``rcstudy compare OLD NEW`` reads the executed notebooks of two book roots (``<root>/book/*.ipynb``,
or a folder of notebooks) and prints, chapter by chapter, what changed: a re-run with other
parameters, another seed or a new version of the code shows exactly which numbers moved and which
verdicts changed, with the scorecard's counts before and after. Exit status 0 when nothing differs.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .claims import VERDICT_ORDER
from .report import Claim, claims_from_notebook, glued_values

SHOWN = 160  # characters of a value shown in the report


def notebooks(root: Path) -> dict[str, Path]:
    """A book root's published notebooks by chapter (``<root>/book/*.ipynb``, or ``root/*.ipynb``)."""
    folder = root / "book" if (root / "book").is_dir() else root
    if not folder.is_dir():
        raise FileNotFoundError(f"{root} is neither a book root nor a folder of notebooks")
    return {p.stem: p for p in sorted(folder.glob("*.ipynb"))}


@dataclass
class ChapterChanges:
    """What differs in one chapter between the old book and the new."""

    chapter: str
    values: dict[str, tuple[object, object]] = field(default_factory=dict)  # name: (old, new); None: absent
    verdicts: list[tuple[str, str, str]] = field(default_factory=list)  # (claim id, old, new)
    counts: tuple[Counter, Counter] = field(default_factory=lambda: (Counter(), Counter()))

    @property
    def same(self) -> bool:
        return not self.values and not self.verdicts


def _verdicts(claims: list[Claim]) -> dict[str, str]:
    return {c.id: c.kind for c in claims}


def _claim_texts(claims: list[Claim]) -> dict[str, object]:
    """What a reader sees of each claim besides its verdict (evidence, the rule's comparison, the
    null's verdict, power), by ``<claim id>.<field>``."""
    return {f"{c.id}.{k}": v for c in claims for k, v in asdict(c).items() if k not in ("id", "holds", "reason")}


def compare_chapter(chapter: str, old: Path | None, new: Path | None, ignore: re.Pattern | None = None
                    ) -> ChapterChanges:
    """The glued values and the claims (their verdicts, and each field a reader sees) of one
    chapter's two notebooks."""
    read = lambda p: glued_values(p) if p else {}  # noqa: E731
    a, b = read(old), read(new)
    claims = {k for k in {*a, *b} if k.endswith("_claims")}
    changes = ChapterChanges(chapter)
    for name in sorted({*a, *b} - claims):
        if (ignore is None or not ignore.search(name)) and a.get(name) != b.get(name):
            changes.values[name] = (a.get(name), b.get(name))
    ca, cb = (claims_from_notebook(p) if p else [] for p in (old, new))
    ta, tb = _claim_texts(ca), _claim_texts(cb)
    for name in sorted({*ta, *tb}):
        if ta.get(name) != tb.get(name) and not (ignore and ignore.search(name)):
            changes.values[f"claim {name}"] = (ta.get(name), tb.get(name))
    va, vb = _verdicts(ca), _verdicts(cb)
    changes.verdicts = [(cid, va.get(cid, "absent"), vb.get(cid, "absent"))
                        for cid in [*va, *(c for c in vb if c not in va)] if va.get(cid) != vb.get(cid)]
    changes.counts = (Counter(va.values()), Counter(vb.values()))
    return changes


def compare_books(old: Path, new: Path, chapters: list[str] | None = None, ignore: str | None = None
                  ) -> list[ChapterChanges]:
    """Every chapter published in either book (or ``chapters``), compared."""
    a, b = notebooks(old), notebooks(new)
    pattern = re.compile(ignore) if ignore else None
    names = chapters or sorted({*a, *b})
    unknown = [c for c in names if c not in a and c not in b]
    if unknown:
        raise FileNotFoundError(f"neither book has published {', '.join(unknown)}")
    return [compare_chapter(c, a.get(c), b.get(c), pattern) for c in names]


def _short(value: object, start: int = 0) -> str:
    text = "absent" if value is None else str(value).replace("\n", " ")
    text = ("…" + text[start:]) if start else text
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "…"


def _first_difference(old: object, new: object) -> int:
    """Where two long values start to differ, less some context (0 for short or absent values)."""
    if old is None or new is None:
        return 0
    a, b = str(old), str(new)
    same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return max(0, same - SHOWN // 4) if same > SHOWN // 2 else 0


def _counts(counter: Counter) -> str:
    return ", ".join(f"{counter[k]} {k}" for k in VERDICT_ORDER if counter[k]) or "no claims"


def report(changes: list[ChapterChanges]) -> str:
    """The differences in words, chapter by chapter."""
    lines = []
    for ch in changes:
        if ch.same:
            lines.append(f"{ch.chapter}: same glued values and verdicts")
            continue
        lines.append(f"{ch.chapter}: {len(ch.values)} glued values and {len(ch.verdicts)} verdicts differ")
        for name, (old, new) in ch.values.items():
            start = _first_difference(old, new)
            lines.append(f"  {name}: {_short(old, start)}  →  {_short(new, start)}")
        lines += [f"  claim {cid}: {old} → {new}" for cid, old, new in ch.verdicts]
        if ch.verdicts:
            lines.append(f"  counts: {_counts(ch.counts[0])}  →  {_counts(ch.counts[1])}")
    return "\n".join(lines)
