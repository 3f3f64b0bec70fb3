"""What chapters publish beside their pages, for users and for later chapters: each file's writer
and reader side by side, so the two cannot drift apart.

Files go to :func:`rcstudy.settings.exports_dir` (``book/exports`` of the book root), written
atomically. A later chapter reads what an earlier one wrote (RULE reads ReClor's EASY/HARD split).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from .cache import atomic_write_bytes
from .settings import exports_dir

#: ReClor's EASY/HARD split of every evaluated set: one row per item (columns of ``EasyHard.frame``).
EASY_HARD = "reclor_easy_hard.csv"


def path(name: str) -> Path:
    """Where export ``name`` lives."""
    return exports_dir() / name


def safe_name(text: str) -> str:
    """A system's name as a file-name part (``"fastText (A)"`` → ``fastText_A_``)."""
    return re.sub(r"[^\w.-]+", "_", text)


def write_easy_hard(splits: Mapping[str, Any]) -> Path:
    """Write every split's EASY/HARD table (``{split: bias.EasyHard}``) to one CSV."""
    frame = pd.concat([eh.frame(name) for name, eh in splits.items()], ignore_index=True)
    target = path(EASY_HARD)
    atomic_write_bytes(target, frame.to_csv(index=False).encode("utf-8"))
    return target


def read_easy_hard(source: Path | None = None) -> pd.Series | None:
    """``id_string → "EASY"/"HARD"`` from the ReClor chapter's export, or None if it is absent."""
    source = Path(source) if source is not None else path(EASY_HARD)
    if not source.is_file():
        return None
    frame = pd.read_csv(source)
    column = next((c for c in ("subset", "split") if c in frame and frame[c].isin(["EASY", "HARD"]).all()), None)
    if "id_string" not in frame or column is None:
        raise ValueError(f"{source}: expected columns id_string and subset (EASY/HARD); found {list(frame.columns)}")
    return frame.drop_duplicates("id_string", keep="last").set_index("id_string")[column]


def write_json(name: str, payload: Any) -> Path:
    """A JSON export (UTF-8, indented)."""
    target = path(name)
    atomic_write_bytes(target, json.dumps(payload, indent=1, ensure_ascii=False).encode("utf-8"))
    return target


def write_npy(name: str, array: np.ndarray) -> Path:
    """A NumPy array export (e.g. a leaderboard's answer indices)."""
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array), allow_pickle=False)
    target = path(name)
    atomic_write_bytes(target, buffer.getvalue())
    return target
