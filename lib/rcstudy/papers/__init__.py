"""Every published number the book compares with, by paper, table, row and column.

Each paper has one submodule listing its numbers as :class:`Published` entries, copied from
the paper (table and row named as in the paper). Chapters never type a paper's number: they
look it up here, so a typo is fixed in one place and the tests can check the table shapes.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

import pandas as pd

#: Every paper with a module here (declaring ``NUMBERS``): a new paper adds its module, no list.
PAPERS = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.ispkg))


@dataclass(frozen=True)
class Published:
    paper: str
    table: str  # as the paper names it: "Table 7", "Figure 3", "§3.3"
    row: str
    column: str
    value: float | None  # None: the paper's text does not give it ("n/a" in the book)
    note: str = ""


@dataclass(frozen=True)
class Citation:
    key: str
    title: str
    authors: str
    venue: str
    year: int
    url: str


def _module(paper: str):
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; known: {', '.join(PAPERS)}")
    return importlib.import_module(f"{__name__}.{paper}")


def numbers(paper: str) -> list[Published]:
    return list(_module(paper).NUMBERS)


def claims(paper: str) -> list:
    """The paper's claims, declared as :class:`rcstudy.claims.ClaimSpec` (``CLAIMS`` of its module):
    what the scorecard counts."""
    return list(getattr(_module(paper), "CLAIMS", []))


def checks(paper: str) -> list:
    """Our checks beside the paper's claims (``CHECKS`` of its module): of the data, the loader, the
    paper's own tables, or claims of ours; judged and shown, never counted as the paper's."""
    return list(getattr(_module(paper), "CHECKS", []))


def citation(paper: str) -> Citation:
    return _module(paper).CITATION


def value(paper: str, table: str, row: str, column: str) -> float | None:
    """One published number; ``KeyError`` naming what was asked if the paper has no such cell."""
    return lookup(numbers(paper), table, row, column)


def lookup(published: list[Published], table: str, row: str, column: str) -> float | None:
    """One number of a list of published numbers (a paper module's own, while it defines its claims)."""
    for n in published:
        if (n.table, n.row, n.column) == (table, row, column):
            return n.value
    paper = published[0].paper if published else "?"
    raise KeyError(f"{paper}: no published number at {table} / row {row!r} / column {column!r}")


def table(paper: str, table: str) -> pd.DataFrame:
    """A published table as rows × columns (in the paper's order), ``NaN`` where not given."""
    cells = [n for n in numbers(paper) if n.table == table]
    if not cells:
        raise KeyError(f"{paper}: no published numbers for {table!r}")
    rows = list(dict.fromkeys(n.row for n in cells))
    cols = list(dict.fromkeys(n.column for n in cells))
    df = pd.DataFrame(index=pd.Index(rows), columns=cols, dtype=float)
    for n in cells:
        df.loc[n.row, n.column] = n.value
    return df
