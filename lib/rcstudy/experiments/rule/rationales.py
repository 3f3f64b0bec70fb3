"""Rationales appended to the main questions (Table 5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ... import papers
from ...claims import ClaimEvidence
from ...data.rule import RuleData, RulePrompts
from ...models.rule_lm import LazyLM
from ...jobs import Outputs
from ...report import paper_vs_ours
from ..section import Section
from .config import Config, PromptSetting
from .prompting import prompting_system, settings_labels, with_and_without_context
from .units import (NO_CONTEXT, ON_MAIN_QUESTIONS, Prompted, System, lm_outputs, paired_runs, runs_by_question,
                    unit_scores)

#: Table 5's variants: which rationales are appended (selective, eliminative).
RATIONALE_VARIANTS = {
    "no rationale": (False, False),
    "+ selective": (True, False),
    "+ eliminative": (False, True),
    "+ selective and eliminative": (True, True),
}


def main_rationales(data: RuleData, main_id: str, selective: bool, eliminative: bool) -> tuple[str, ...]:
    """The rationales Table 5 appends to a main question: the gold answers of its selective and/or
    eliminative subquestions, in the order of the main options they are about. A subquestion
    whose answer is "None of the above choices" has no valid rationale and adds nothing."""
    by_option: dict[int, str] = {}
    for s in data.subs_of(main_id):
        wanted = selective if s.meta["selective"] else eliminative
        if wanted and not s.meta["none_correct"]:
            by_option.setdefault(s.meta["main_option"], s.options[s.label])
    return tuple(by_option[k] for k in sorted(by_option))


def rationale_mains(data: RuleData) -> RuleData:
    """The main questions (no subquestions) with a selective and at least one eliminative rationale,
    so that every variant of Table 5 is asked on the same questions."""
    return RuleData(tuple(m for m in data.mains if main_rationales(data, m.id, True, False)
                          and main_rationales(data, m.id, False, True)), ())


def rationale_variants(sample: RuleData) -> tuple[RuleData, dict[str, dict[str, tuple[str, ...]]]]:
    """The main questions of ``sample`` that take every variant of Table 5, and per variant the
    rationales appended to each of them."""
    mains = rationale_mains(sample)
    return mains, {variant: {m.id: main_rationales(sample, m.id, sel, elim) for m in mains.mains}
                   for variant, (sel, elim) in RATIONALE_VARIANTS.items()}


def rationale_systems(lazy: LazyLM, prompts: RulePrompts, setting: PromptSetting, sample: RuleData, *,
                      exclude_exemplar_items: bool = True) -> dict[str, System]:
    """Table 5's analog: the main questions of ``sample`` that take every variant, answered with
    each variant's rationales appended (one unit, prompt batch 0)."""
    mains, variants = rationale_variants(sample)
    return {variant: prompting_system(lazy, prompts, setting, mains, exclude_exemplar_items=exclude_exemplar_items,
                                      rationales=rationales)
            for variant, rationales in variants.items()}


def rationale_table(runs: Mapping[str, Mapping[str, System]]) -> pd.DataFrame:
    """MainQ accuracy (%) per run (rows) and variant (columns), and the main questions asked."""
    rows = {}
    for name, by_variant in runs.items():
        row = {v: unit_scores(s.data, s.evals[0])["MainQ"] if s.evals else float("nan") for v, s in by_variant.items()}
        row["main questions"] = max((len(s.evals[0].main_pred) for s in by_variant.values() if s.evals), default=0)
        rows[name] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "system"
    return table


def rationale_runs(cfg: Config, lazy: LazyLM, prompts: RulePrompts, spec: str, sample: RuleData
                   ) -> dict[str, dict[str, System]]:
    """Table 5's runs of one prompt setting: with the context and (context ablation) without it."""
    s = PromptSetting.parse(spec)
    return {f"{lazy.name}, {s.label}{suffix}": rationale_systems(lazy, p, s, variant_sample,
                                                                 exclude_exemplar_items=cfg.lm.exclude_exemplar_items)
            for suffix, (p, variant_sample) in with_and_without_context(cfg, prompts, sample).items()}


def with_context(asked: pd.DataFrame) -> pd.DataFrame:
    """The rows of Table 5 of the runs with the context (those the claim reads)."""
    return asked.loc[[n for n in asked.index if not n.endswith(NO_CONTEXT)]]


@dataclass(frozen=True, kw_only=True)
class Rationales(Section):
    """Table 5's analog: every run's system per variant, and the runs that asked any main question."""

    runs: dict[str, dict[str, System]]  # run (a setting, with or without the context) → variant → system
    asked: pd.DataFrame  # the rows of Table 5 of the runs that asked any main question
    origins: dict[str, tuple[str, str]]  # each run's model and setting (shots:family:scoring)

    @property
    def with_context(self) -> pd.DataFrame:
        return with_context(self.asked)


def rationale_section(cfg: Config, outputs: Outputs, prompted: Prompted, sample: RuleData) -> Rationales:
    """Table 5's analog (with and, under the context ablation, without the context), by the models
    that ran (their jobs ``lm_job`` of the analysis ``rationales``), and the claim on it (its
    bootstrap seeded by ``cfg.sample_seed``)."""
    runs, origins = {}, {}
    for model, spec, out in lm_outputs(outputs, "rationales"):
        if model in prompted.models:
            runs |= out
            origins |= {name: (model, spec) for name in out}
    ours = rationale_table(runs)
    asked = ours[ours["main questions"] > 0] if len(ours) else ours
    tables = {"rule_table5": paper_vs_ours(papers.table("rule", "Table 5"), ours)} if len(ours) else {}
    if len(ours):
        text = "; ".join(
            f"{n}: {r['no rationale']:.1f} % with no rationale, {r['+ selective']:.1f} % with the selective one, "
            f"{r['+ eliminative']:.1f} % with the eliminative ones and {r['+ selective and eliminative']:.1f} % "
            f"with all ({r['main questions']:.0f} main questions)" for n, r in asked.iterrows()) + "."
    else:
        text = ("Not run in this profile." if not cfg.analyses.rationale_augmentation
                else "No language model could be run here.")
    n_mains = len(rationale_mains(sample).mains)
    facts = {"rule_t5_text": text, "rule_t5_mains": n_mains, "rule_t5_step": f"{100 / max(n_mains, 1):.1f}",
             "rule_t5_settings": settings_labels(cfg.analyses.rationale_settings)}
    claim = rationales_claim(with_context(asked), runs, cfg.sample_seed)
    return Rationales(tables=tables, facts=facts, claims=(claim,), runs=runs, asked=asked, origins=origins)


def rationales_claim(t5: pd.DataFrame, runs: Mapping[str, Mapping[str, System]], seed: int) -> ClaimEvidence:
    """Table 5 with the context (``t5``): the selective rationale's gain and the eliminative ones'
    loss, paired. The claim reads each setting's main questions: it rests on the setting answering
    them (no rationale appended) above chance."""
    right = {n: {v: runs_by_question([s], "main") for v, s in runs[n].items()} for n in t5.index}
    worse = {n: max(("+ eliminative", "+ selective and eliminative"), key=lambda v: r[v]) for n, r in t5.iterrows()}
    return ClaimEvidence(
        "rationales-help-main",
        {"selective_gain": {n: paired_runs(right[n]["+ selective"], right[n]["no rationale"], seed) for n in t5.index},
         "eliminative_loss": {n: paired_runs(right[n]["no rationale"], right[n][worse[n]], seed) for n in t5.index}}
        if len(t5) else None,
        "; ".join(f"{n}: {r['no rationale']:.1f} / {r['+ selective']:.1f} / {r['+ eliminative']:.1f} / "
                  f"{r['+ selective and eliminative']:.1f} (none / sel / elim / both, n={r['main questions']:.0f})"
                  for n, r in t5.iterrows()) or "not run",
        rests_on=tuple(n + ON_MAIN_QUESTIONS for n in t5.index))
