"""Causal LMs prompted with the released prompts (Table 2's few- and zero-shot part)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from ... import learning, papers
from ...claims import ClaimEvidence
from ...data.records import MCItem
from ...data.rule import RuleData, RulePrompts, exemplar_keys
from ...jobs import Outputs
from ...metrics.rule import METRICS
from ...models.rule_lm import LazyLM, lm_predict
from ...prompts import rule as prompt_formats
from ...prompts.rule import ZERO_SHOT_COT
from ...report import cell, paper_vs_ours
from ...stats import Interval, subset_difference
from ..section import Section
from .alignment import alignment_frame, alignment_items
from .config import Config, PromptSetting
from .release import leaked_mains
from .units import (NO_CONTEXT, ON_ALL_MAIN_QUESTIONS, ON_SUBQUESTIONS, Evaluation, Prompted, System, Unavailable,
                    chance_of, lm_outputs, mains_of, numeric, paired_runs, results_table, runs_by_question,
                    system_scores)

ANSWER_TOKENS = 8  # generated tokens read for an answer, unless a setting says otherwise
#: Table 2's rows of the prompted part (paper's rows, then ours).
PAPER_PROMPTED_ROWS = ("LLaMA 2 70B, five-shot ReClor exemplars", "Flan-UL2 20B, zero-shot",
                       "InstructGPT, five-shot RULE exemplars", "InstructGPT (setting not stated)",
                       "best model (not named)", "Human")


@dataclass(frozen=True)
class SettingPrompts:
    """What one prompt setting asks of a sample: the units (split, prompt batch, questions), the
    main questions left out as exemplars of their own prompt, and every question with its prompt."""

    units: list[tuple[int | None, int, RuleData]]
    excluded: int
    items: list[MCItem]
    texts: list[str]


def setting_prompts(prompts: RulePrompts, setting: PromptSetting, sample: RuleData, *,
                    exclude_exemplar_items: bool = True,
                    rationales: Mapping[str, Sequence[str]] | None = None) -> SettingPrompts:
    """The prompts of one setting on ``sample``: split k uses prompt batch k-1 (per the release).

    With ``exclude_exemplar_items`` a main question is left out of split k (with its subquestions)
    when it or one of its subquestions is an exemplar of that split's prompt. A sample without
    subquestions is one unit answered with batch 0. ``rationales`` maps a question id to the
    rationales appended to its prompt.
    """
    rationales = rationales or {}
    units, excluded = [], 0
    splits = sample.splits or [None]
    for k in splits:
        unit = sample.split(k) if k is not None else sample
        batch = (k - 1) if k is not None else 0
        if setting.shots > 0 and setting.family != ZERO_SHOT_COT and exclude_exemplar_items:
            leaks = leaked_mains(unit, exemplar_keys(prompts.get(setting.shots, setting.family, batch)))
            if leaks:
                excluded += len(leaks)
                unit = RuleData(tuple(m for m in unit.mains if m.id not in leaks),
                                tuple(s for s in unit.subs if s.meta["main_id"] not in leaks))
        if unit.mains:
            units.append((k, batch, unit))
    items = [(batch, it) for _, batch, unit in units for it in (*unit.mains, *unit.subs)]
    texts = [prompt_formats.prompt(prompts, setting, batch, it, rationales.get(it.id, ())) for batch, it in items]
    return SettingPrompts(units, excluded, [it for _, it in items], texts)


def prompting_system(lazy: LazyLM, prompts: RulePrompts, setting: PromptSetting, sample: RuleData, *,
                     exclude_exemplar_items: bool = True, max_new_tokens: int = ANSWER_TOKENS,
                     rationales: Mapping[str, Sequence[str]] | None = None) -> System:
    """Evaluate one prompt setting on ``sample`` (:func:`setting_prompts`). All prompts of the
    setting go to the model in one cached call, so a prompt shared by two splits is asked once."""
    asked = setting_prompts(prompts, setting, sample, exclude_exemplar_items=exclude_exemplar_items,
                            rationales=rationales)
    preds = lm_predict(lazy, asked.texts, [it.options for it in asked.items], setting.scoring, max_new_tokens)
    evals, start = [], 0
    for k, _, unit in asked.units:
        n_main, n = len(unit.mains), len(unit.mains) + len(unit.subs)
        chunk = preds[start:start + n]
        start += n
        evals.append(Evaluation(k, {m.id: p for m, p in zip(unit.mains, chunk[:n_main])},
                                {s.id: p for s, p in zip(unit.subs, chunk[n_main:])}))
    failures, total = sum(p < 0 for p in preds), len(preds)
    info = {"excluded mains": asked.excluded, "unparsed answers": failures, "answers": total,
            "none exemplar by split": {k: prompts.get(setting.shots, setting.family, k - 1).has_none_correct_exemplar
                                       for k in sample.splits if setting.shots > 0
                                       and setting.family != ZERO_SHOT_COT}}
    return System(f"{lazy.name}, {setting.label}", setting.setting, evals, sample, info)


def alignment_prompts(prompts: RulePrompts, sample: RuleData) -> tuple[list[MCItem], list[str]]:
    """The rationale-alignment items of ``sample`` and the LM's prompt for each."""
    items = alignment_items(sample)
    return items, [prompt_formats.alignment_prompt(prompts, it) for it in items]


def lm_alignment(lazy: LazyLM, prompts: RulePrompts, sample: RuleData) -> pd.DataFrame:
    """Zero-shot rationale alignment with the LM (answer-letter probability)."""
    items, texts = alignment_prompts(prompts, sample)
    return alignment_frame(items, lm_predict(lazy, texts, [it.options for it in items], "letter"))


def prompted_setting(cfg: Config, lazy: LazyLM, prompts: RulePrompts, spec: str, sample: RuleData) -> System:
    """One prompt setting of the chapter (``shots:family:scoring``) answered by ``lazy`` on ``sample``."""
    return prompting_system(lazy, prompts, PromptSetting.parse(spec), sample,
                            exclude_exemplar_items=cfg.lm.exclude_exemplar_items,
                            max_new_tokens=cfg.lm.cot_max_new_tokens)


def prompted_from(cfg: Config, outputs: Outputs) -> Prompted:
    """Every LM's systems (one per prompt setting) and alignment answers, from its jobs (``lm_job``);
    a model that cannot be loaded is listed, and its follow-ups are not read."""
    systems, origins, alignments, failed = {}, {}, {}, {}
    for analysis in ("setting", "alignment"):
        for model, spec, out in lm_outputs(outputs, analysis):
            if isinstance(out, Unavailable):
                failed.setdefault(model, out.reason)
            elif analysis == "setting":
                systems[out.name], origins[out.name] = out, (model, spec)
            else:
                alignments[model] = out
    return Prompted(systems, {m: a for m, a in alignments.items() if m not in failed},
                    [failed[m] for m in cfg.lm.models if m in failed],
                    tuple(m for m in cfg.lm.models if m not in failed), origins)


def lm_checks(systems: Mapping[str, System], kind: Literal["main", "sub"], seed: int) -> dict[str, learning.LossCheck]:
    """Is each prompted setting above chance on the task a claim rests on: its main questions
    (``kind="main"``) or its subquestions (clustered by main question)? (:func:`rcstudy.learning.prompted`)"""
    out = {}
    for name, system in systems.items():
        runs = runs_by_question([system], kind)
        if not runs.shape[1]:
            continue
        task = "its main questions" if kind == "main" else "its subquestions"
        out[name] = learning.prompted(name, runs.to_numpy(float), 4, task=task, seed=seed,
                                      chance=chance_of(system.data, runs.columns, kind),
                                      clusters=None if kind == "main" else mains_of(system.data, runs.columns))
    return out


def prompted_gates(prompted: Prompted, seed: int) -> dict[str, learning.LossCheck]:
    """Each prompted setting's gates, by the row the page's table gives them: on its subquestions
    (``ON_SUBQUESTIONS``) and on all its main questions (``ON_ALL_MAIN_QUESTIONS``). Computed once
    (:class:`Prompting` keeps them): the learned table shows them, and the claims on
    prompted settings rest on them or, as the consistency claim, read them for their premise."""
    return {**{n + ON_SUBQUESTIONS: c for n, c in lm_checks(prompted.systems, "sub", seed).items()},
            **{n + ON_ALL_MAIN_QUESTIONS: c for n, c in lm_checks(prompted.systems, "main", seed).items()}}


@dataclass(frozen=True, kw_only=True)
class Prompting(Section):
    """Table 2's few- and zero-shot part: every prompted setting and its metrics."""

    prompted: Prompted
    rows: dict[str, dict]
    gates: dict[str, learning.LossCheck]  # each setting above chance on its subquestions, on its main questions (by row)


def prompting_section(cfg: Config, outputs: Outputs, sample: RuleData) -> Prompting:
    """Every LM in every prompt setting on ``sample``, beside the paper's rows, and the claims on
    them (their bootstrap seeded by ``cfg.sample_seed``)."""
    prompted = prompted_from(cfg, outputs)
    rows = {n: system_scores(s, cfg.lm.aggregation) for n, s in prompted.systems.items()}
    paper = papers.table("rule", "Table 2")[list(METRICS)].loc[list(PAPER_PROMPTED_ROWS)]
    tables = {"rule_table2_prompted": paper_vs_ours(paper, results_table(rows))}
    if prompted.systems:
        tables["rule_prompting_info"] = prompting_info_table(prompted.systems)
    claims = (eliminative_claim(prompted, rows, cfg.sample_seed), exemplars_claim(prompted, rows, cfg.sample_seed))
    return Prompting(tables=tables, facts=prompting_facts(cfg, prompted, rows, sample), claims=claims,
                     prompted=prompted, rows=rows, gates=prompted_gates(prompted, cfg.sample_seed))


def selective_gap(system: System, seed: int) -> Interval:
    """Selective − eliminative SubQ accuracy (points) over every subquestion the system answered
    (its units pooled), with a bootstrap interval that resamples main questions once for both kinds
    (a main question has subquestions of both kinds)."""
    sub = runs_by_question([system], "sub")
    selective = np.array([bool(system.data.sub(i).meta["selective"]) for i in sub.columns])
    return subset_difference(sub.to_numpy(float), selective, ~selective, clusters=mains_of(system.data, sub.columns),
                             seed=seed)


def eliminative_claim(prompted: Prompted, rows: Mapping[str, Mapping], seed: int) -> ClaimEvidence:
    """Each prompted setting's selective − eliminative gap; it rests on the setting answering its
    subquestions above chance."""
    if not rows:
        return ClaimEvidence("eliminative-below-selective", None, "no language model could be run here")
    gaps = {n: selective_gap(prompted.systems[n], seed) for n in rows}
    return ClaimEvidence("eliminative-below-selective", {"gaps": gaps},
                         "; ".join(f"{n}: sel {cell(r['Selective'])} vs elim {cell(r['Eliminative'])}, gap {gaps[n]}"
                                   for n, r in rows.items()),
                         rests_on=tuple(n + ON_SUBQUESTIONS for n in rows))


def exemplars_claim(prompted: Prompted, rows: Mapping[str, Mapping], seed: int) -> ClaimEvidence:
    """Each setting with RULE exemplars against the same setting with ReClor exemplars: SubQ
    accuracy's gain, paired (subquestions drawn with their main question)."""
    systems = prompted.systems
    pairs = [(n, m) for n in systems for m in systems
             if "RULE exemplars" in n and m == n.replace("RULE exemplars", "ReClor exemplars")]
    subs = {n: runs_by_question([systems[n]], "sub") for pair in pairs for n in pair}
    mains = {i: systems[n].data.sub(i).meta["main_id"] for n in subs for i in subs[n].columns}
    gains = {n: paired_runs(subs[n], subs[m], seed, mains) for n, m in pairs}
    return ClaimEvidence(
        "subq-exemplars-no-help-small", {"gain": gains} if pairs else None,
        "; ".join(f"{n}: {cell(rows[n]['SubQ'])} vs {cell(rows[m]['SubQ'])}, paired gain {gains[n]}" for n, m in pairs)
        or "not run in this profile: needs the same setting with RULE and with ReClor exemplars",
        rests_on=tuple(x + ON_SUBQUESTIONS for pair in pairs for x in pair))


def prompting_info_table(systems: Mapping[str, System]) -> pd.DataFrame:
    return pd.DataFrame({n: {"main questions left out (exemplars)": s.info["excluded mains"],
                             "unparsed answers": f"{s.info['unparsed answers']} of {s.info['answers']}"}
                         for n, s in systems.items()}).T


def settings_labels(specs: Sequence[str]) -> str:
    return "; ".join(PromptSetting.parse(s).label for s in specs)


def best_by_subq(rows: Mapping[str, Mapping]) -> str:
    """The row with the highest SubQ accuracy; rows without one (a sample with no subquestions)
    rank last, and MainQ breaks ties."""
    def rank(name: str) -> tuple[bool, float, float]:
        sub, main = numeric(rows[name]["SubQ"]), numeric(rows[name]["MainQ"])
        return (not math.isnan(sub), -math.inf if math.isnan(sub) else sub, -math.inf if math.isnan(main) else main)
    return max(rows, key=rank)


def prompting_facts(cfg: Config, prompted: Prompted, lm_rows: Mapping[str, Mapping], sample: RuleData) -> dict:
    facts = {
        "rule_lm_models": ", ".join(f"`{m}`" for m in cfg.lm.models),
        "rule_lm_mains": len(sample.mains),
        "rule_lm_subs": len(sample.subs),
        "rule_lm_aggregation": ("mean ± sd over the five splits" if cfg.lm.aggregation == "per_split_mean"
                                else "pooled over the splits"),
        "rule_lm_settings": settings_labels(cfg.lm.settings),
    }
    if lm_rows:
        best = best_by_subq(lm_rows)
        r = lm_rows[best]
        facts["rule_lm_text"] = (f"The best prompted setting on subquestions is {best}: MainQ {cell(r['MainQ'])}, "
                                 f"SubQ {cell(r['SubQ'])} (selective {cell(r['Selective'])}, eliminative "
                                 f"{cell(r['Eliminative'])}), consistency {cell(r['Consistency'])}.")
    else:
        facts["rule_lm_text"] = "No language model could be run here: " + "; ".join(prompted.unavailable)
    return facts


def with_and_without_context(cfg: Config, prompts: RulePrompts, sample: RuleData
                             ) -> dict[str, tuple[RulePrompts, RuleData]]:
    """The prompts and questions as released and, under the context ablation, without the context
    (by the suffix of the row's name)."""
    variants = {"": (prompts, sample)}
    if cfg.analyses.context_ablation:
        variants[NO_CONTEXT] = (prompts.without_context(), sample.without_context())
    return variants
