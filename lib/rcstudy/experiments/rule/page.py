"""The chapter: :func:`run` computes every table, fact, figure's data and claim's evidence."""

from __future__ import annotations

from dataclasses import replace

from IPython.display import Markdown

from ... import learning, papers
from ...metrics.rule import METRICS
from ...report import ClaimLog, cell, md_text, paper_vs_ours
from ...runtime import Runtime
from .ablation import ablation_section
from .baselines import length_baseline, position_baseline
from .claims import judge_claims, subq_intervals
from .config import Config
from .easy_hard import easy_hard_section
from .fine_tuned import PAPER_TRAINED_ROWS, train_models, training_facts
from .follow_ups import (alignment_section, baseline_facts, by_subquestion_count, figure_points, none_section,
                         positions_section)
from .length_types import length_section, type_section
from .prompting import PAPER_PROMPTED_ROWS, prompt_models, prompting_facts, prompting_info_table
from .rationales import rationale_section
from .release import lengths_section, prompt_table, reclor_join_section, release_section
from .results import Results
from .units import alignment_sample, chance_row, results_table, samples, seed_average, system_scores


def run(cfg: Config, rt: Runtime) -> Results:
    """The whole chapter, in the page's order."""
    res = Results({}, {}, ClaimLog("rule"), length_bins=cfg.analyses.length_bins)
    res.chance_sub = chance_sub = papers.value("rule", "Table 2", "Chance", "SubQ")
    data, prompts = release_section(res)
    reclor_train = reclor_join_section(res, data)
    lengths_section(res, data)
    res.tables["rule_prompts"] = prompt_table(prompts, data)

    enc_sample, lm_sample = samples(cfg, data)
    baselines = [position_baseline(data, k) for k in range(4)] + [length_baseline(data, True),
                                                                  length_baseline(data, False)]
    rows = {"Chance": chance_row(data), **{b.name: system_scores(b) for b in baselines}}
    trained = train_models(cfg, reclor_train, data, enc_sample, alignment_sample(cfg, lm_sample), rt)
    rows.update({name: seed_average(runs) for name, runs in trained.runs.items()})
    paper_t2 = papers.table("rule", "Table 2")[list(METRICS)]
    res.tables["rule_table2_trained"] = paper_vs_ours(paper_t2.loc[list(PAPER_TRAINED_ROWS)], results_table(rows))
    res.facts.update(training_facts(cfg, trained, enc_sample))
    if trained.encoder_runs:
        res.losses = {trained.encoder_name: [r.info["losses"] for r in trained.encoder_runs]}
    subq_cis = subq_intervals(trained, cfg.sample_seed)
    res.facts.update(baseline_facts(rows, trained, subq_cis, baselines, chance_sub))

    prompted = prompt_models(cfg, prompts, lm_sample, rt)
    res.lm_unavailable = prompted.unavailable
    lm_rows = {n: system_scores(s, cfg.lm.aggregation) for n, s in prompted.systems.items()}
    res.tables["rule_table2_prompted"] = paper_vs_ours(paper_t2.loc[list(PAPER_PROMPTED_ROWS)],
                                                       results_table(lm_rows))
    if prompted.systems:
        res.tables["rule_prompting_info"] = prompting_info_table(prompted.systems)
    res.facts.update(prompting_facts(cfg, prompted, lm_rows, lm_sample))

    res.systems_rows = all_rows = {**{k: v for k, v in rows.items() if k != "Chance"}, **lm_rows}
    res.bars, res.points = figure_points(all_rows)
    res.human = {c: papers.value("rule", "Table 2", "Human", c) for c in ("MainQ", "SubQ", "Eliminative", "Consistency")}
    given = results_table(all_rows, ["SubQ", "SubQ | main right", "MainQ-wise SubQ | main right"])
    res.tables["rule_given_main_right"] = given.map(cell)
    positions_section(res, trained, prompted, data)
    none_section(res, baselines, trained, prompted)
    alignment_section(res, trained, prompted)
    t5_asked, t5_runs = rationale_section(res, cfg, prompts, lm_sample, prompted)
    ablation_rows, ablation_pairs, ablation_systems = ablation_section(res, cfg, prompts, data, enc_sample, lm_sample, reclor_train,
                                                     trained, rows, prompted, rt)
    length_section(res, cfg, trained, prompted, lm_rows)
    type_test = type_section(res, cfg, data, trained)
    count_system = trained.encoder_runs[0] if trained.encoder_runs else next(iter(prompted.systems.values()), None)
    if count_system is not None:
        res.tables["rule_by_count"] = by_subquestion_count(count_system).round(1)
        res.captions["rule_by_count"] = f"By number of subquestions: {count_system.name}"
    easy_hard_section(res, data, trained, prompted)
    res.tables["rule_table4"] = papers.table("rule", "Table 4").astype("Int64")  # reprinted, not re-run
    gates = judge_claims(res.claims, baselines=baselines, trained=trained, prompted=prompted, lm_rows=lm_rows,
                         all_rows=all_rows, subq_cis=subq_cis, t5_asked=t5_asked, t5_runs=t5_runs,
                         ablation_rows=ablation_rows, ablation_pairs=ablation_pairs,
                         ablation_systems=ablation_systems, type_test=type_test, seed=cfg.sample_seed)
    res.tables["rule_learned"] = learning.table([replace(c, name=n) for n, c in gates.items()])
    res.facts["rule_lm_warnings"] = Markdown(md_text(learning.warnings_text(
        [replace(c, name=n) for n, c in gates.items() if n not in trained.runs])))
    return res
