"""What goes wrong (Table 5): the error categories of one system's dev predictions, by rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from ... import papers
from ...baselines import metagraph as gen
from ...claims import ClaimEvidence
from ...data import metalogic as ml
from ...data.metalogic import Metagraph, Prediction
from ...jobs import Outputs
from ...metrics import metalogic as mm
from ...report import paper_vs_ours
from .config import METHOD_NAMES, PAPER, Config
from .data import counts_frame
from .intervals import error_lead_interval
from .runs import FeatureFits, error_sample
from .scores import OURS_NAMES
from ..section import Section

FORMULA, CERTAINTY = ["F1", "F2", "F3", "F4"], ["C1", "C2", "C3", "C4"]


def error_frame(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction]) -> pd.DataFrame:
    counts = mm.error_counts(graphs, preds)
    names = {**mm.GRAPH_ERRORS, **mm.FORMULA_ERRORS, **mm.CERTAINTY_ERRORS}
    return pd.DataFrame([{"type": k, "component": k[0], "description": names[k], "ours": v}
                         for k, v in counts.items()]).set_index("type")


def error_examples(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction]) -> pd.DataFrame:
    """The first example of each error type: passage id, node, gold and predicted."""
    seen = {}
    for g in graphs:
        p, gold = preds.get(g.id, Prediction()), g.gold()
        kind = mm.graph_error(p.steps, gold.steps)
        if kind and kind not in seen:
            seen[kind] = (g.id, "", ml.once_target(gold, g.sids).split("$formulae$")[0][7:].strip(),
                          "".join(f"{s.text}; " for s in p.steps).strip())
        for sid, node in g.nodes.items():
            kind = mm.formula_error(p.triples.get(sid, ()), gold.triples[sid])
            if kind and kind not in seen:
                seen[kind] = (g.id, sid, ml.linearize_triples(gold.triples[sid]).strip(),
                              ml.linearize_triples(p.triples.get(sid, ())).strip())
            pd_ = p.degrees.get(sid, ml.UNRESOLVED)
            kind = mm.certainty_error(pd_, node.degree)
            if kind and kind not in seen:
                seen[kind] = (g.id, sid, ml.DEGREE_WORDS[node.degree],
                              ml.DEGREE_WORDS[pd_] if pd_ in range(5) else "(unresolved)")
    rows = [{"type": k, "passage": v[0], "node": v[1], "gold": v[2], "predicted": v[3]}
            for k, v in sorted(seen.items())]
    return pd.DataFrame(rows, columns=["type", "passage", "node", "gold", "predicted"]).set_index("type")


@dataclass(frozen=True, kw_only=True)
class ErrorCategories(Section):
    """Table 5: the paper's counts beside ours (the figure), and examples of each error."""

    counts: pd.DataFrame  # per category: the paper's count and ours


def categorised(cfg: Config, outputs: Outputs, fits: FeatureFits) -> tuple[dict[str, Prediction], str]:
    """The error analysis's system's dev predictions (from its job's output) and its name."""
    e = cfg.error_analysis
    if e.system == "features":
        return fits.errors, OURS_NAMES["features"]
    out = outputs.of("generator_job", method=e.system, seed=cfg.seq2seq.seeds[0])
    return gen.parse_outputs(e.system, out["dev"]), f"{METHOD_NAMES[e.system]} ({cfg.seq2seq.model})"


def error_claims(sample: Sequence[Metagraph], preds: Mapping[str, Prediction], label: str,
                 facts: Mapping[str, float]) -> tuple[ClaimEvidence, ...]:
    """Formula errors are mostly wrong variables (F1); certainty errors mostly 'contingent' (C2)."""
    f1 = error_lead_interval(sample, preds, "F1", FORMULA)
    c2 = error_lead_interval(sample, preds, "C2", CERTAINTY)
    return (ClaimEvidence("errors-variables", {"f1_lead": f1},
                          f"{label}: F1 share {facts['metalogic_ea_f1_share']:.0f} % of formula errors; lead over the "
                          f"next category {f1} ({len(sample)} dev passages resampled)"),
            ClaimEvidence("errors-contingent", {"c2_lead": c2},
                          f"{label}: C2 share {facts['metalogic_ea_c2_share']:.0f} % of certainty errors; lead over "
                          f"the next category {c2} ({len(sample)} dev passages resampled)"))


def error_section(cfg: Config, splits, outputs: Outputs, fits: FeatureFits) -> ErrorCategories:
    """Table 5 by rule on a dev sample, beside the paper's counts by hand, examples, facts and claims."""
    sample = error_sample(cfg, splits)
    preds, label = categorised(cfg, outputs, fits)
    errors = error_frame(sample, preds)
    paper = papers.table(PAPER, "Table 5").T
    paper.columns = ["count"]
    ours = errors[["ours"]].rename(columns={"ours": "count"}).astype(float)
    table = paper_vs_ours(counts_frame(paper), counts_frame(ours))
    table[("description", "")] = errors["description"].reindex(table.index)

    def share(frame, col, cat, group):
        return 100 * frame.loc[cat, col] / frame.loc[group, col].sum()

    facts = dict(
        metalogic_ea_label=label, metalogic_ea_n=len(sample),
        metalogic_ea_f1_share=100 * errors.loc["F1", "ours"] / max(1, errors.loc[FORMULA, "ours"].sum()),
        metalogic_ea_c2_share=100 * errors.loc["C2", "ours"] / max(1, errors.loc[CERTAINTY, "ours"].sum()),
        metalogic_paper_f1_share=share(paper, "count", "F1", FORMULA),
        metalogic_paper_c2_share=share(paper, "count", "C2", CERTAINTY))
    return ErrorCategories(
        tables={"metalogic_table5": table, "metalogic_error_examples": error_examples(sample, preds)},
        captions={"metalogic_table5": f"Table 5: error categories; paper: Once (11b), by hand; ours: {label}, by "
                                      f"rule, {len(sample)} dev passages"},
        facts=facts, claims=error_claims(sample, preds, label, facts),
        counts=pd.DataFrame({"paper (Once 11b)": paper["count"], f"ours ({label})": ours["count"]}))
