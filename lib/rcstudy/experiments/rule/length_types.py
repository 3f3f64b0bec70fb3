"""Accuracy by question and option length (Appendix I) and by ReClor question type (Appendix L)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ... import papers
from ...claims import ClaimEvidence
from ...data.records import MCItem
from ...data.rule import NONE_OPTION, RuleData
from ...metrics.rule import METRICS
from ...papers.rule import TYPE_MIN_SUBQUESTIONS
from ...report import paper_vs_ours
from ...stats import spread_ci
from ..section import Section
from .config import Config
from .prompting import best_by_subq
from .units import Evaluation, Prompted, System, Trained, mains_of, pooled, runs_by_question, sub_correct, unit_scores

#: ReClor question types from the question text, first match wins (the ReClor spec's keyword
#: rules; a stand-in: ReClor annotates types on its test set only, and RULE uses train questions).
TYPE_RULES = (
    ("Match Flaws", r"\bflawed (pattern|reasoning)\b.*\bsimilar\b|\bsimilar\b.*\bflawed\b"),
    ("Match the Structure", r"\bpattern of reasoning\b.*\bsimilar\b|\bsimilar in (its|their) reasoning\b|\bparallel"),
    ("Identify a Flaw", r"\bflaw|\bvulnerable to (the )?criticism\b|\bquestionable\b"),
    ("Role", r"\broles?\b"),
    ("Technique", r"\btechnique\b|\bproceeds by\b|\bmethod of (reasoning|argument)\b|\bresponds?\b.*\bby\b"),
    ("Dispute", r"\bdisagree|\bdispute|\bpoint at issue\b"),
    ("Principle", r"\bprinciple"),
    ("Explain or Resolve", r"\bexplain|\bresolve|\bdiscrepancy\b|\bparadox"),
    ("Sufficient Assumptions",
     r"\bif assumed\b|\bfollows logically if\b|\bproperly drawn if\b|\benables?\b.*\binferred\b"),
    ("Necessary Assumptions", r"\bassumption|\bassumes?\b|\bdepends on\b|\brelies on\b|\brequired\b"),
    ("Weaken", r"\bweaken|\bundermine|\bcasts?\b.*\bdoubt\b|\bcalls? into question\b|\bchalleng"),
    ("Strengthen", r"\bstrengthen|\bsupports? the (argument|conclusion|claim)\b|\bjustify"),
    ("Evaluation", r"\bevaluat"),
    ("Conclusion/Main Point", r"\bmain (point|conclusion)\b|\boverall conclusion\b|\bexpresses the conclusion\b"),
    ("Most Strongly Supported", r"\bmost strongly support|\bbest supported\b"),
    ("Implication", r"\bmust (also )?be true\b|\blogically follows\b|\bproperly inferred\b|\bcan be inferred\b"),
)


_TYPE_PATTERNS = tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in TYPE_RULES)


def question_type(question: str) -> str:
    """The ReClor question type a keyword rule assigns to a question text ("Others" if none fits)."""
    return next((name for name, rx in _TYPE_PATTERNS if rx.search(question)), "Others")


def option_words(item: MCItem) -> float:
    """Mean whitespace words per option, "None of the above choices" left out."""
    lengths = [len(o.split()) for o in item.options if o.strip() != NONE_OPTION]
    return float(np.mean(lengths)) if lengths else float("nan")


def question_frame(systems: Sequence[System]) -> pd.DataFrame:
    """One row per question the systems answered: main question or subquestion, its length in
    words (question text; mean option), and the share of right answers over every unit of every
    system given (seeds, splits)."""
    answers: dict[tuple[str, str], list[bool]] = {}
    items: dict[tuple[str, str], MCItem] = {}
    for system in systems:
        for ev in system.evals:
            for kind, preds, get in (("main question", ev.main_pred, system.data.main),
                                     ("subquestion", ev.sub_pred, system.data.sub)):
                for q, p in preds.items():
                    items[(kind, q)] = get(q)
                    answers.setdefault((kind, q), []).append(p == items[(kind, q)].label)
    return pd.DataFrame([{"kind": kind, "id": q, "question words": len(items[(kind, q)].question.split()),
                          "option words": option_words(items[(kind, q)]), "right": float(np.mean(ok))}
                         for (kind, q), ok in answers.items()])


def accuracy_by_length(frame: pd.DataFrame, column: str, bins: int = 4) -> pd.DataFrame:
    """Accuracy (%) in ``bins`` quantile bins of ``column``, main questions and subquestions
    binned separately (their lengths differ); each bin is placed at its median length."""
    rows = []
    for kind, g in frame.dropna(subset=[column]).groupby("kind"):
        cut = pd.qcut(g[column], min(bins, g[column].nunique()), duplicates="drop")
        for _, b in g.groupby(cut, observed=True):
            rows.append({"kind": kind, "length": float(b[column].median()), "questions": len(b),
                         "accuracy": 100 * b["right"].mean()})
    return pd.DataFrame(rows, columns=["kind", "length", "questions", "accuracy"])


def restrict(data: RuleData, ev: Evaluation, main_ids: set[str]) -> Evaluation:
    """``ev`` on the main questions ``main_ids`` and their subquestions only."""
    return Evaluation(ev.split, {m: p for m, p in ev.main_pred.items() if m in main_ids},
                      {s: p for s, p in ev.sub_pred.items() if data.sub(s).meta["main_id"] in main_ids})


def by_type_table(systems: Sequence[System], types: Mapping[str, str]) -> pd.DataFrame:
    """The metrics per question type of the main question (``types``: main id → type), the mean
    over ``systems`` (e.g. one per seed); split units are pooled first."""
    rows = {}
    for t in sorted(set(types.values())):
        ids = {m for m, v in types.items() if v == t}
        per = []
        for system in systems:
            ev = system.evals[0] if len(system.evals) == 1 else pooled(system.data, system.evals)
            per.append(unit_scores(system.data, restrict(system.data, ev, ids)))
        if not per[0]["main questions"]:
            continue
        rows[t] = {"main questions": per[0]["main questions"], "subquestions": per[0]["subquestions"],
                   **{k: float(np.mean([p[k] for p in per])) for k in METRICS}}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "question type (keyword rule)"
    return table


def type_independence(system: System, types: Mapping[str, str],
                      min_subquestions: int = TYPE_MIN_SUBQUESTIONS) -> tuple[float, int]:
    """Chi-square test that subquestion correctness does not depend on the main question's type
    (types with fewer than ``min_subquestions`` pooled into one group): (p-value, groups)."""
    from scipy.stats import chi2_contingency

    ev = system.evals[0] if len(system.evals) == 1 else pooled(system.data, system.evals)
    f = sub_correct(system.data, ev)
    f["type"] = f["main_id"].map(types)
    counts = f["type"].value_counts()
    f["type"] = f["type"].where(f["type"].map(counts) >= min_subquestions, "(small types)")
    table = pd.crosstab(f["type"], f["right"])
    if table.shape[0] < 2 or table.shape[1] < 2:
        return float("nan"), table.shape[0]
    return float(chi2_contingency(table.to_numpy())[1]), table.shape[0]


def type_groups(data: RuleData, sub_ids: Sequence[str]) -> list[str]:
    """Each subquestion's question type (:func:`question_type` of its main question), with the types
    of fewer than :data:`TYPE_MIN_SUBQUESTIONS` subquestions pooled into one group."""
    types = [question_type(data.main(data.sub(i).meta["main_id"]).question) for i in sub_ids]
    counts = Counter(types)
    return [t if counts[t] >= TYPE_MIN_SUBQUESTIONS else "types with few subquestions (pooled)" for t in types]


@dataclass(frozen=True, kw_only=True)
class Length(Section):
    """Appendix I's analog: accuracy by length, per (system group, length column)."""

    curves: dict[tuple[str, str], pd.DataFrame]


def length_section(cfg: Config, trained: Trained, prompted: Prompted, lm_rows: Mapping[str, Mapping]) -> Length:
    """Appendix I's analog: accuracy by question and by option length, for the encoder (over
    seeds) and the best prompted setting."""
    groups = {}
    if cfg.analyses.length:
        if trained.encoder_runs:
            groups[f"{trained.encoder_name} (mean over seeds)"] = trained.encoder_runs
        if lm_rows:
            best = best_by_subq(lm_rows)
            groups[best] = [prompted.systems[best]]
    curves = {(group, column): accuracy_by_length(question_frame(systems), column, cfg.analyses.length_bins)
              for group, systems in groups.items() for column in ("question words", "option words")}
    if groups:
        text = "; ".join(
            f"{group}, {kind}s: {c['accuracy'].iloc[0]:.1f} % in the shortest and {c['accuracy'].iloc[-1]:.1f} % in "
            "the longest bin of option length"
            for (group, column), curve in curves.items() if column == "option words"
            for kind, c in curve.groupby("kind")) + "."
    else:
        text = "Not run in this profile." if not cfg.analyses.length else "No system could be run."
    return Length(facts={"rule_length_bins": cfg.analyses.length_bins, "rule_length_text": text}, curves=curves)


def type_section(cfg: Config, data: RuleData, trained: Trained) -> Section:
    """Appendix L's analog by keyword question type, and the claim that the encoder's SubQ accuracy
    shows no trend by type (its bootstrap seeded by ``cfg.sample_seed``)."""
    not_run = ClaimEvidence("no-trend-by-type", None, "not run")
    if not cfg.analyses.types:
        return Section(facts={"rule_type_others": "n/a", "rule_type_n": len(data.mains)}, claims=(not_run,))
    types = {m.id: question_type(m.question) for m in data.mains}
    ours = pd.DataFrame({"RULE main questions": pd.Series(types).value_counts()})
    claim = not_run
    if trained.encoder_runs:
        by_type = by_type_table(trained.encoder_runs, types)
        ours = ours.join(by_type[["subquestions", "MainQ", "SubQ", "Selective", "Eliminative"]])
        claim = type_claim(trained, types, cfg.sample_seed)
    paper = papers.table("rule", "Appendix L")
    ours = ours.reindex([t for t in paper.index if t in ours.index])
    ours = ours.astype({c: "Int64" for c in ("RULE main questions", "subquestions") if c in ours})
    return Section(tables={"rule_by_type": paper_vs_ours(paper, ours)},
                   captions={"rule_by_type": f"By question type of the main question (keyword rule, a stand-in): "
                                             f"{trained.encoder_name}, mean over seeds"},
                   facts={"rule_type_others": int(ours.loc["Others", "RULE main questions"])
                          if "Others" in ours.index else 0, "rule_type_n": len(types)},
                   claims=(claim,))


def type_claim(trained: Trained, types: Mapping[str, str], seed: int) -> ClaimEvidence:
    """The largest departure of a type's SubQ accuracy from the overall for the encoder, with an
    interval (the chi-square p of its first seed is absence of evidence, not evidence of no
    trend); it rests on the encoder having learned."""
    enc = trained.encoder_runs
    sub = runs_by_question(enc, "sub")
    groups = type_groups(enc[0].data, sub.columns)
    if len(set(groups)) < 2:  # one group: its spread is 0 by construction
        return ClaimEvidence("no-trend-by-type", None, f"fewer than two groups of question types with at least "
                                                       f"{TYPE_MIN_SUBQUESTIONS} subquestions among {sub.shape[1]}")
    spread = spread_ci(sub.to_numpy(float), groups, clusters=mains_of(enc[0].data, sub.columns), seed=seed)
    return ClaimEvidence("no-trend-by-type", {"spread": spread},
                         f"{trained.encoder_name}: largest |type − overall| SubQ accuracy {spread} over "
                         f"{len(set(groups))} groups of types (seeds, then main questions, resampled); chi-square "
                         f"p = {type_independence(enc[0], types)[0]:.2f}", rests_on=(trained.encoder_name,))
