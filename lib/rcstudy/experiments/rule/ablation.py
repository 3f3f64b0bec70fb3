"""The evaluations again without the context (Appendix M)."""

from __future__ import annotations

from dataclasses import dataclass

from ... import papers
from ...data.rule import RuleData, RulePrompts
from ...jobs import Outputs
from ...models.rule_lm import LazyLM
from ...report import cell, paper_vs_ours
from ..section import Section
from .baselines import overlap_facts
from .config import Config
from .fine_tuned import FineTuned, trained_systems
from .prompting import prompted_setting, settings_labels, with_and_without_context
from .units import NO_CONTEXT, Prompted, System, lm_outputs, results_table, seed_average, system_scores


def ablation_runs(cfg: Config, lazy: LazyLM, prompts: RulePrompts, spec: str, sample: RuleData) -> dict[str, System]:
    """Appendix M's runs of one prompt setting, by suffix: with the context and without it."""
    return {suffix: prompted_setting(cfg, lazy, p, spec, variant_sample)
            for suffix, (p, variant_sample) in with_and_without_context(cfg, prompts, sample).items()}


@dataclass(frozen=True, kw_only=True)
class Ablation(Section):
    """Appendix M's analog: each row's metrics and systems (seeds), and the (with, without) pairs."""

    rows: dict[str, dict]
    pairs: list[tuple[str, str]]
    systems: dict[str, list[System]]


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
                     enc_sample: RuleData) -> Ablation:
    """Appendix M's analog, and the word-overlap cue with and without the context."""
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
    return Ablation(tables=tables, facts=facts, rows=rows, pairs=pairs, systems=systems)
