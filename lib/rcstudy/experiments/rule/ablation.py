"""The evaluations again without the context (Appendix M)."""

from __future__ import annotations

from typing import Mapping, Sequence

from ... import papers
from ...claims import ClaimEvidence
from ...data.rule import RuleData, RulePrompts
from ...jobs import Outputs
from ...models.rule_lm import LazyLM
from ...report import cell, paper_vs_ours
from ..section import Section
from .baselines import overlap_facts
from .config import Config
from .fine_tuned import FineTuned, trained_systems
from .prompting import prompted_setting, settings_labels, with_and_without_context
from .units import (NO_CONTEXT, Prompted, System, lm_outputs, paired_runs, results_table, runs_by_question,
                    seed_average, system_scores)


def ablation_runs(cfg: Config, lazy: LazyLM, prompts: RulePrompts, spec: str, sample: RuleData) -> dict[str, System]:
    """Appendix M's runs of one prompt setting, by suffix: with the context and without it."""
    return {suffix: prompted_setting(cfg, lazy, p, spec, variant_sample)
            for suffix, (p, variant_sample) in with_and_without_context(cfg, prompts, sample).items()}


def ablated_rows(cfg: Config, outputs: Outputs, fine_tuned: FineTuned, prompted: Prompted, enc_sample: RuleData
                 ) -> tuple[dict[str, dict], list[tuple[str, str]], dict[str, list[System]]]:
    """The fine-tuned models (the same weights, their jobs' sets without the context) and the LMs'
    ablation settings (their jobs ``lm_job`` of the analysis ``context ablation``), with and without
    the context: the rows, the (with, without) pairs and the systems of each row."""
    rows, pairs, systems = {}, [], {}
    if not cfg.analyses.context_ablation:
        return rows, pairs, systems
    no_context = trained_systems(cfg, outputs, enc_sample.without_context(), suffix=NO_CONTEXT).runs
    for name, runs in fine_tuned.trained.runs.items():  # the models fine-tuned with the context, tested without it
        rows[name], rows[name + NO_CONTEXT] = fine_tuned.rows[name], seed_average(no_context[name + NO_CONTEXT])
        systems[name], systems[name + NO_CONTEXT] = runs, no_context[name + NO_CONTEXT]
        pairs.append((name, name + NO_CONTEXT))
    for model, _, by_suffix in lm_outputs(outputs, "context ablation"):
        if model not in prompted.models:
            continue
        for suffix, system in by_suffix.items():
            rows[system.name + suffix] = system_scores(system, cfg.lm.aggregation)
            systems[system.name + suffix] = [system]
        pairs.append((system.name, system.name + NO_CONTEXT))
    return rows, pairs, systems


def ablation_section(cfg: Config, outputs: Outputs, fine_tuned: FineTuned, prompted: Prompted,
                     enc_sample: RuleData) -> Section:
    """Appendix M's analog, the word-overlap cue with and without the context, and the claim on the
    subquestions without it (its bootstrap seeded by ``cfg.sample_seed``)."""
    rows, pairs, systems = ablated_rows(cfg, outputs, fine_tuned, prompted, enc_sample)
    tables = {"rule_context_ablation": paper_vs_ours(papers.table("rule", "Appendix M"), results_table(rows))} \
        if rows else {}
    t4 = papers.table("rule", "Table 4")
    if rows:
        text = "; ".join(f"{w}: MainQ {cell(rows[w]['MainQ'])} → {cell(rows[wo]['MainQ'])}, "
                         f"SubQ {cell(rows[w]['SubQ'])} → {cell(rows[wo]['SubQ'])}" for w, wo in pairs)
        text += " (with → without the context)."
    else:
        text = "Not run in this profile." if not cfg.analyses.context_ablation else "No system could be run."
    random = t4["Total (random)"]
    facts = {"rule_ablation_text": text, "rule_t4_contextual": f"{random['Contextual']:.0f} of {random['Total']:.0f}",
             "rule_ablation_settings": settings_labels(cfg.analyses.ablation_settings), **overlap_facts(enc_sample)}
    return Section(tables=tables, facts=facts, claims=(context_claim(rows, pairs, systems, cfg.sample_seed),))


def context_claim(rows: Mapping[str, Mapping], pairs: Sequence[tuple[str, str]], systems: Mapping[str, list[System]],
                  seed: int) -> ClaimEvidence:
    """Each (with, without the context) pair of Appendix M: SubQ accuracy's drop, paired
    (subquestions drawn with their main question)."""
    ablated = {w: (runs_by_question(systems[w], "sub"), runs_by_question(systems[wo], "sub")) for w, wo in pairs}
    mains = {i: systems[w][0].data.sub(i).meta["main_id"] for w, (a, _) in ablated.items() for i in a.columns}
    drops = {w: paired_runs(a, b, seed, mains) for w, (a, b) in ablated.items()}
    return ClaimEvidence("subquestions-need-context", {"drop": drops} if pairs else None,
                         "; ".join(f"{w}: {cell(rows[w]['SubQ'])} → {cell(rows[wo]['SubQ'])}, paired drop {drops[w]}"
                                   for w, wo in pairs) or "not run")
