"""Where things live: the data directory, the caches, the published book folder.

Every location can be overridden by an environment variable so that a user, a test or the
runner can point the library elsewhere without touching code.
"""

from __future__ import annotations

import os
from pathlib import Path

#: How long loops report progress (:func:`rcstudy.runtime.track`): "terminal" (set by the runner)
#: writes to the terminal of `rcstudy run`, never into the notebook; "off" is silent; otherwise the
#: kernel's stderr, which Jupyter shows under the cell and the book leaves out of its pages.
PROGRESS_ENV = "RCSTUDY_PROGRESS"

#: The repository root (two levels above ``lib/rcstudy``). Used only for defaults.
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _path_from_env(var: str, default: Path) -> Path:
    value = os.environ.get(var)
    return Path(value).expanduser().resolve() if value else default


def data_dir() -> Path:
    """The datasets' root folder: ``$RCSTUDY_DATA``, else ``data/`` in the project."""
    return _path_from_env("RCSTUDY_DATA", PROJECT_ROOT / "data")


def chapters_dir() -> Path:
    """The chapters' MyST sources and their ``params/``: ``$RCSTUDY_CHAPTERS``, else ``chapters/``."""
    return _path_from_env("RCSTUDY_CHAPTERS", PROJECT_ROOT / "chapters")


def cache_dir() -> Path:
    """Root of the project's on-disk caches (results, converted models)."""
    return _path_from_env("RCSTUDY_CACHE", PROJECT_ROOT / ".cache")


def models_dir() -> Path:
    """Converted model copies (e.g. SmolLM2 from GGUF); kept apart so tests can share them."""
    return _path_from_env("RCSTUDY_MODELS", cache_dir() / "models")


#: A folder of architecture replicas (:mod:`rcstudy.models.replicas`): when set, every Hub id loads
#: its tiny random replica from there instead of the Hub (tests run the full profile's code this way).
REPLICAS_ENV = "RCSTUDY_REPLICAS"


def replicas_dir() -> Path | None:
    """``$RCSTUDY_REPLICAS`` (see :data:`REPLICAS_ENV`), or None: Hub ids are Hub ids."""
    value = os.environ.get(REPLICAS_ENV)
    return Path(value).expanduser().resolve() if value else None


def refresh_requested() -> bool:
    """True when cached results must be recomputed (``rcstudy run --refresh``)."""
    return os.environ.get("RCSTUDY_REFRESH", "") not in ("", "0", "false", "no")


def book_root() -> Path:
    """The folder holding ``_config.yml``/``_toc.yml``; published notebooks go to ``<root>/book``."""
    return _path_from_env("RCSTUDY_BOOK_ROOT", PROJECT_ROOT)


def exports_dir() -> Path:
    """Files a chapter exports for users and for later chapters (e.g. ReClor's EASY/HARD split)."""
    return _path_from_env("RCSTUDY_EXPORTS", book_root() / "book" / "exports")
