"""The evaluations again without the context (Appendix M)."""

from __future__ import annotations

from typing import Mapping

from ... import papers
from ...data.rule import RuleData, RulePrompts
from ...models.rule_lm import LazyLM
from ...report import cell, paper_vs_ours
from ...runtime import Runtime
from .baselines import overlap_facts
from .config import Config
from .fine_tuned import Trained, encoder_system
from .prompting import Prompted, prompted_setting, settings_labels, with_and_without_context
from .results import Results
from .units import System, results_table, seed_average, system_scores


def ablation_runs(cfg: Config, lazy: LazyLM, prompts: RulePrompts, spec: str, sample: RuleData) -> dict[str, System]:
    """Appendix M's runs of one prompt setting, by suffix: with the context and without it."""
    return {suffix: prompted_setting(cfg, lazy, p, spec, variant_sample)
            for suffix, (p, variant_sample) in with_and_without_context(cfg, prompts, sample).items()}


def ablation_section(res: Results, cfg: Config, prompts: RulePrompts, data: RuleData, enc_sample: RuleData,
                     lm_sample: RuleData, reclor_train, trained: Trained, rows: Mapping[str, Mapping],
                     prompted: Prompted, rt: Runtime) -> tuple[dict, list[tuple[str, str]], dict[str, list[System]]]:
    """Appendix M's analog: the fine-tuned models (same weights) and the ablation settings without
    the context. Returns the rows, the (with, without) pairs and the systems of each row (seeds)."""
    ablation_rows, pairs, systems = {}, [], {}
    if cfg.analyses.context_ablation:
        for name in trained.runs:  # the models fine-tuned with the context, tested without it
            no_context = [encoder_system(f"{name}, no context", setup, reclor_train, data, enc_sample.without_context(),
                                         rt) for setup in trained.setups[name]]
            ablation_rows[name] = rows[name]
            ablation_rows[f"{name}, no context"] = seed_average(no_context)
            systems[name], systems[f"{name}, no context"] = trained.runs[name], no_context
            pairs.append((name, f"{name}, no context"))
        for lazy in prompted.lms.values():
            for spec in cfg.analyses.ablation_settings:
                for suffix, system in ablation_runs(cfg, lazy, prompts, spec, lm_sample).items():
                    ablation_rows[system.name + suffix] = system_scores(system, cfg.lm.aggregation)
                    systems[system.name + suffix] = [system]
                pairs.append((system.name, system.name + ", no context"))
    if ablation_rows:
        res.tables["rule_context_ablation"] = paper_vs_ours(papers.table("rule", "Appendix M"),
                                                            results_table(ablation_rows))
        res.facts["rule_ablation_text"] = "; ".join(
            f"{w}: MainQ {cell(ablation_rows[w]['MainQ'])} → {cell(ablation_rows[wo]['MainQ'])}, "
            f"SubQ {cell(ablation_rows[w]['SubQ'])} → {cell(ablation_rows[wo]['SubQ'])}"
            for w, wo in pairs) + " (with → without the context)."
    else:
        res.facts["rule_ablation_text"] = ("Not run in this profile." if not cfg.analyses.context_ablation
                                           else "No system could be run.")
    t4 = papers.table("rule", "Table 4")
    res.facts["rule_t4_contextual"] = f"{t4.loc['Contextual', 'Total (random)']:.0f} of {t4.loc['Total', 'Total (random)']:.0f}"
    res.facts["rule_ablation_settings"] = settings_labels(cfg.analyses.ablation_settings)
    res.facts.update(overlap_facts(enc_sample))
    return ablation_rows, pairs, systems
