"""A chapter notebook's first step: its configuration from the parameters cell, checked as the runner
checks a run (models and data too) when the notebook runs outside it (plain papermill, Jupyter,
Binder)."""

from __future__ import annotations

import os
from typing import Any, Mapping, MutableMapping

from .config import CHECKED_ENV, ChapterConfig
from .errors import ConfigError
from .preflight import chapter_problems
from .settings import hub_offline

#: The profile a chapter run outside the runner falls back to when its own profile's data or models
#: are missing (Binder sets ``smoke``: "Run all" then finishes on the bundled fixtures); unset: none.
FALLBACK_ENV = "RCSTUDY_FALLBACK_PROFILE"


def chapter_config(cls: type[ChapterConfig], namespace: Mapping[str, Any]) -> ChapterConfig:
    """``cls``'s configuration from a notebook's parameters (:meth:`ChapterConfig.from_notebook`).

    Call it in the cell right after the parameters, before other imports. Outside the runner,
    every model and dataset the configuration names is checked first, and a problem stops the
    notebook in one line, before any work is done."""
    cfg = cls.from_notebook(namespace)
    if os.environ.get(CHECKED_ENV) != "1":
        offline = hub_offline()
        problems = chapter_problems(cls, cfg, online=not offline)
        fallback = os.environ.get(FALLBACK_ENV, "")
        if problems and fallback and namespace.get("profile") not in (fallback, None):
            # Binder (binder/start sets it): no data here, so "Run all" runs the bundled fixtures
            print(f"No data for the {namespace.get('profile')} profile here ({problems[0].split(';')[0]}): this run "
                  f"uses the {fallback} profile, on the bundled test fixtures with tiny models, whose numbers mean nothing.")
            if isinstance(namespace, MutableMapping):
                namespace["profile"] = fallback  # later cells read the profile too
            cfg = cls.from_notebook({**namespace, "profile": fallback})
            problems = chapter_problems(cls, cfg, online=not offline)
        if problems:
            hint = ("" if namespace.get("profile") == "smoke" else
                    ' (to run the chapter on the bundled test fixtures: profile = "smoke" in the parameters cell, '
                    "or papermill -p profile smoke)")
            raise ConfigError("; ".join(problems) + hint)
    return cfg
