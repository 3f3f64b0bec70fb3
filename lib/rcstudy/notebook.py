"""A chapter notebook's first step: its configuration from the parameters cell, checked as the runner
checks a run (models and data too) when the notebook runs outside it (plain papermill, Jupyter,
Binder)."""

from __future__ import annotations

import os
from typing import Any, Mapping

from .config import CHECKED_ENV, ChapterConfig
from .errors import ConfigError
from .preflight import chapter_problems


def chapter_config(cls: type[ChapterConfig], namespace: Mapping[str, Any]) -> ChapterConfig:
    """``cls``'s configuration from a notebook's parameters (:meth:`ChapterConfig.from_notebook`).

    Call it in the cell right after the parameters, before other imports. Outside the runner,
    every model and dataset the configuration names is checked first, and a problem stops the
    notebook in one line, before any work is done."""
    cfg = cls.from_notebook(namespace)
    if os.environ.get(CHECKED_ENV) != "1":
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false")
        problems = chapter_problems(cls, cfg, online=not offline)
        if problems:
            hint = ("" if namespace.get("profile") == "smoke" else
                    ' (to run the chapter on the bundled test fixtures: profile = "smoke" in the parameters cell, '
                    "or papermill -p profile smoke)")
            raise ConfigError("; ".join(problems) + hint)
    return cfg
