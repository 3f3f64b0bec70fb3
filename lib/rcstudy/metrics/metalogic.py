"""MetaLogic scores, as the official ``evaluate_metric.py``/``show_results.py`` compute them.

All scores are EntailmentBank-style: per passage an F1 and an "AllCorrect" (1 when that F1 is
1), averaged over passages, except the certainty macro-F1, which pools every node of every
passage. Three variants:

* ``official`` — what produced the paper's numbers. Formula AllCorrect is the *fraction* of a
  passage's nodes whose formula F1 is 1, so Overall (= step AC × formula AC × degree AC) is
  fractional too; ∧/∨ triples match only in the written argument order (the official
  symmetric branch tests token names the parser never produces).
* ``strict`` — as the paper's text describes AllCorrect: formula AC and Overall are 0/1 per passage.
* ``symmetric`` — official, but ``a ∧ b`` matches ``b ∧ a`` (and ∨ likewise), as the text says.

Scores are in percent. Formulas and degrees are scored on the gold nodes only: a node the
prediction leaves out has an empty formula and an unresolved degree (−1). An unresolved
degree is a class of its own in the macro-F1 (with F1 0), as in the official code.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
from sklearn.metrics import f1_score

from ..data.metalogic import (AND, BOX, DIA, IMP, NEG, OR, REBUT, SUPPORT, UNRESOLVED, Metagraph, Prediction,
                              Step, Triple)

VARIANTS = ("official", "strict", "symmetric")
#: Table 3's columns, in the paper's order.
MAIN_COLUMNS = ("node_f1", "node_all", "step_f1", "step_all", "formula_f1", "formula_all",
                "cert_acc", "cert_all", "cert_macro_f1", "overall_all")
#: Table 14's step-type columns.
STEP_TYPE_COLUMNS = ("support_f1", "support_all", "rebut_f1", "rebut_all")
#: Per-operator groups in the official print order; "none" = nodes whose gold formula is empty (N/A).
OPERATOR_GROUPS = (IMP, AND, OR, BOX, DIA, NEG, "none")


def prf(matched: int, n_pred: int, n_gold: int) -> tuple[float, float, float]:
    """Precision, recall, F1 with the official conventions (nothing to find and nothing found = 1)."""
    if n_pred == 0 and n_gold == 0:
        return 1.0, 1.0, 1.0
    p = matched / n_pred if n_pred else 0.0
    r = matched / n_gold if n_gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _all(f1: float) -> float:
    return 1.0 if f1 == 1.0 else 0.0


def step_f1(pred: Sequence[Step], gold: Sequence[Step]) -> float:
    """List semantics: matched = gold steps present in the prediction; duplicates lower precision."""
    return prf(sum(s in pred for s in gold), len(pred), len(gold))[2]


def _nodes(steps: Iterable[Step]) -> set[str]:
    return {s.pre for s in steps} | {s.con for s in steps}


def triples_equal(a: Triple, b: Triple, symmetric: bool = False) -> bool:
    if a == b:
        return True
    return symmetric and a.rel in (AND, OR) and a.swapped() == b


def formula_f1(pred: Sequence[Triple], gold: Sequence[Triple], symmetric: bool = False) -> float:
    """Per node: matched = gold triples that some predicted triple equals (after S5 reduction)."""
    matched = sum(any(triples_equal(p, g, symmetric) for p in pred) for g in gold)
    return prf(matched, len(pred), len(gold))[2]


@dataclass(frozen=True)
class SampleScores:
    """One passage's scores (fractions in [0, 1]) plus what the pooled scores need."""

    id: str
    scores: dict[str, float]
    node_formula_f1: dict[str, float]  # gold sid -> formula F1
    degrees: list[tuple[int, int]]  # (gold, pred) per gold sid


def score_sample(graph: Metagraph, pred: Prediction, variant: str = "official") -> SampleScores:
    """All per-passage scores of one prediction against its gold metagraph."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, not {variant!r}")
    gold = graph.gold()
    s: dict[str, float] = {}
    _, _, s["node_f1"] = prf(len(_nodes(gold.steps) & _nodes(pred.steps)), len(_nodes(pred.steps)),
                             len(_nodes(gold.steps)))
    s["step_f1"] = step_f1(pred.steps, gold.steps)
    for name, kind in (("support", SUPPORT), ("rebut", REBUT)):
        s[f"{name}_f1"] = step_f1([x for x in pred.steps if x.type == kind], [x for x in gold.steps if x.type == kind])
    node_f1 = {sid: formula_f1(pred.triples.get(sid, ()), gold.triples[sid], symmetric=variant == "symmetric")
               for sid in graph.sids}
    s["formula_f1"] = float(np.mean(list(node_f1.values())))
    node_ac = [_all(f) for f in node_f1.values()]
    s["formula_all"] = float(min(node_ac)) if variant == "strict" else float(np.mean(node_ac))
    degrees = [(gold.degrees[sid], pred.degrees.get(sid, UNRESOLVED)) for sid in graph.sids]
    s["cert_acc"] = float(np.mean([g == p for g, p in degrees]))
    for name in ("node", "step", "support", "rebut"):
        s[f"{name}_all"] = _all(s[f"{name}_f1"])
    s["cert_all"] = _all(s["cert_acc"])
    s["overall_all"] = s["step_all"] * s["formula_all"] * s["cert_all"]
    return SampleScores(graph.id, s, node_f1, degrees)


def macro_f1(pairs: Sequence[tuple[int, int]]) -> float:
    """sklearn macro-F1 over the labels seen in gold or prediction (unresolved −1 included)."""
    gold, pred = zip(*pairs)
    return float(f1_score(list(gold), list(pred), average="macro", zero_division=0))


def evaluate(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], variant: str = "official"
             ) -> dict[str, float]:
    """Dataset scores in percent: Table 3's columns plus support/rebut F1 and AllCorrect.

    A passage without a prediction scores as the empty prediction.
    """
    samples = [score_sample(g, preds.get(g.id, Prediction()), variant) for g in graphs]
    return aggregate(samples)


def selection_score(scores: Mapping[str, float]) -> float:
    """The official code's model-selection metric on dev, from :func:`evaluate`'s scores:
    Overall + 0.01 · Step F1 · Formula F1 · Certainty accuracy (all as fractions)."""
    return (scores["overall_all"] + 0.01 * scores["step_f1"] * scores["formula_f1"] * scores["cert_acc"] / 1e4) / 100


def aggregate(samples: Sequence[SampleScores]) -> dict[str, float]:
    if not samples:
        raise ValueError("no passages to score")
    keys = samples[0].scores
    out = {k: 100 * float(np.mean([x.scores[k] for x in samples])) for k in keys}
    out["cert_macro_f1"] = 100 * macro_f1([p for x in samples for p in x.degrees])
    order = [*MAIN_COLUMNS, *STEP_TYPE_COLUMNS]
    return {k: out[k] for k in order}


def per_operator(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], variant: str = "official"
                 ) -> dict[str, tuple[float, int]]:
    """Mean formula F1 (percent) of the gold nodes holding each operator, and how many nodes that is.

    A node counts toward every distinct operator in its gold triples (the relation and the
    local unary operators; global operators are not used); nodes with an empty gold formula
    form the group ``none`` (the paper's N/A column).
    """
    groups: dict[str, list[float]] = defaultdict(list)
    for g in graphs:
        sample = score_sample(g, preds.get(g.id, Prediction()), variant)
        for sid, node in g.nodes.items():
            ops = {op for t in node.triples for op in t.reduced().operators}
            for op in ops or {"none"}:
                groups[op].append(sample.node_formula_f1[sid])
    return {op: (100 * float(np.mean(groups[op])) if groups[op] else float("nan"), len(groups[op]))
            for op in OPERATOR_GROUPS}


# ---------------------------------------------------------------------------------------------
# Error categories (the paper's Table 5; the paper classified by hand, these rules stand in)
# ---------------------------------------------------------------------------------------------

GRAPH_ERRORS = {"G1": "incorrect inference type", "G2": "incorrect rebuttal", "G3": "incorrect conclusion",
                "G4": "missing or redundant step", "G5": "other structural mismatch"}
FORMULA_ERRORS = {"F1": "incorrect variable", "F2": "incorrect unary operator", "F3": "incorrect binary operator",
                  "F4": "incorrect implication direction"}
CERTAINTY_ERRORS = {"C1": "opposite polarity", "C2": "other degree predicted as contingent",
                    "C3": "contingent predicted as other degree", "C4": "unresolved degree"}


def _final_conclusions(steps: Sequence[Step]) -> set[str]:
    supports_out = {s.pre for s in steps if s.type == SUPPORT}
    return {s.con for s in steps} - supports_out


def graph_error(pred: Sequence[Step], gold: Sequence[Step]) -> str | None:
    """The first matching graph error type, or None when the steps are right."""
    if sorted(map(_key, pred)) == sorted(map(_key, gold)):
        return None
    if {(s.pre, s.con) for s in pred} == {(s.pre, s.con) for s in gold}:
        return "G1"
    if {s for s in pred if s.type == REBUT} != {s for s in gold if s.type == REBUT}:
        return "G2"
    if _final_conclusions(pred) != _final_conclusions(gold):
        return "G3"
    if set(pred) < set(gold) or set(pred) > set(gold):
        return "G4"
    return "G5"


def _key(s: Step) -> tuple[str, str, str]:
    return (s.pre, s.type, s.con)


def formula_error(pred: Sequence[Triple], gold: Sequence[Triple]) -> str | None:
    """F1–F4 for a node whose formula is wrong (None when it is right)."""
    if formula_f1(pred, gold) == 1.0:
        return None

    def variables(ts):
        return {v for t in ts for v in t.variables}

    def unary(ts):
        return {(v, ops) for t in ts for v, ops in ((t.pre, t.pre_ops), (t.con, t.con_ops))}

    if variables(pred) != variables(gold):
        return "F1"
    if unary(pred) != unary(gold):
        return "F2"
    pairs = {frozenset(t.variables): t.rel for t in pred}
    if any(pairs.get(frozenset(t.variables)) != t.rel for t in gold):
        return "F3"
    return "F4"


def certainty_error(pred: int, gold: int) -> str | None:
    if pred == gold:
        return None
    if pred == UNRESOLVED:
        return "C4"
    if pred == 2:
        return "C2"
    if gold == 2:
        return "C3"
    return "C1"


def error_counts(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction]) -> dict[str, int]:
    """How many passages have each graph error, and how many nodes each formula/certainty error."""
    counts = dict.fromkeys([*GRAPH_ERRORS, *FORMULA_ERRORS, *CERTAINTY_ERRORS], 0)
    for g in graphs:
        pred, gold = preds.get(g.id, Prediction()), g.gold()
        kinds = [graph_error(pred.steps, gold.steps)]
        for sid in g.sids:
            kinds.append(formula_error(pred.triples.get(sid, ()), gold.triples[sid]))
            kinds.append(certainty_error(pred.degrees.get(sid, UNRESOLVED), gold.degrees[sid]))
        for k in kinds:
            if k:
                counts[k] += 1
    return counts

