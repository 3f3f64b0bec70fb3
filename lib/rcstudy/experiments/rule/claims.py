"""The evidence of every declared claim (:data:`rcstudy.papers.rule.CLAIMS`) and their verdicts.

Every interval resamples seeds, then main questions (a main question's subquestions together);
paired where two systems or variants answered the same questions; each claim's ``seed`` seeds
its bootstrap. Each claim rests on the models whose evidence it reads (:class:`.gates.Gates`): a
fine-tuned model must beat chance on the held-out main questions, a prompted setting on the task
the claim reads (its main questions or its subquestions), or the claim is "model at chance".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ... import papers
from ...papers.rule import TYPE_MIN_SUBQUESTIONS
from ...report import ClaimLog, cell
from ...stats import (Interval, bootstrap_ci, difference_interval, hierarchical_ci, hierarchical_paired, spread_ci,
                      subset_difference)
from .ablation import Ablation
from .alignment import alignment_rates
from .fine_tuned import FineTuned
from .gates import Gates
from .length_types import Types, type_groups
from .none_option import none_by_exemplar, none_exemplar_gain, with_none_exemplar
from .prompting import Prompting
from .rationales import Rationales
from .units import System, mains_of, per_main, runs_by_question


def selective_gap(system: System, seed: int) -> Interval:
    """Selective − eliminative SubQ accuracy (points) over every subquestion the system answered
    (its units pooled), with a bootstrap interval that resamples main questions once for both kinds
    (a main question has subquestions of both kinds)."""
    sub = runs_by_question([system], "sub")
    selective = np.array([bool(system.data.sub(i).meta["selective"]) for i in sub.columns])
    return subset_difference(sub.to_numpy(float), selective, ~selective, clusters=mains_of(system.data, sub.columns),
                             seed=seed)


def consistency_excess(systems: Sequence[System], seed: int) -> Interval:
    """Consistency − MainQ / 2 (points) over the main questions of ``systems`` (seeds or units
    pooled), with a bootstrap interval over main questions: each contributes
    all-right − main-right / 2, so the mean is the claim's quantity."""
    frame = pd.concat([per_main(s.data, ev) for s in systems for ev in s.evals], ignore_index=True)
    return bootstrap_ci(frame["consistent"].to_numpy(float) - frame["main_right"].to_numpy(float) / 2,
                        scale=100, seed=seed)


def paired_runs(a: pd.DataFrame, b: pd.DataFrame, seed: int, clusters: Mapping[str, str] | None = None) -> Interval:
    """a − b (points) over the questions both answered (:func:`runs_by_question` frames, each with
    its own seeds), the same questions drawn for both; ``clusters``: each subquestion's main question."""
    common = [c for c in a.columns if c in set(b.columns)]
    return hierarchical_paired(a[common].to_numpy(float), b[common].to_numpy(float), seed=seed,
                               clusters=None if clusters is None else [clusters[c] for c in common])


def alignment_gap(frame: pd.DataFrame, seed: int) -> Interval:
    """Alignment accuracy on correct minus incorrect options (points), two-group bootstrap interval."""
    right, selective = frame["right"].to_numpy(float), frame["selective"].to_numpy(bool)
    return difference_interval(right[selective], right[~selective], seed=seed)


@dataclass(frozen=True)
class Evidence:
    """The sections whose results the claims read."""

    fine_tuned: FineTuned
    prompting: Prompting
    rationales: Rationales
    ablation: Ablation
    types: Types


def eliminative_below_selective(log: ClaimLog, ev: Evidence, gates: Gates, seed: int) -> None:
    rows, systems = ev.prompting.rows, ev.prompting.prompted.systems
    if not rows:
        log.judge("eliminative-below-selective", None, "no language model could be run here")
        return
    gaps = {n: selective_gap(systems[n], seed) for n in rows}
    log.judge("eliminative-below-selective", {"gaps": gaps},
              "; ".join(f"{n}: sel {cell(r['Selective'])} vs elim {cell(r['Eliminative'])}, gap {gaps[n]}"
                        for n, r in rows.items()),
              rests_on=[gates.lm_sub[n] for n in rows if n in gates.lm_sub])


def consistency_below_human(log: ClaimLog, ev: Evidence, gates: Gates, seed: int) -> None:
    """Every fine-tuned model and prompted setting: its consistency and MainQ accuracy with intervals."""
    systems = {**ev.fine_tuned.trained.runs, **{n: [s] for n, s in ev.prompting.prompted.systems.items()}}
    consistency = {n: hierarchical_ci(runs_by_question(runs, "consistent").to_numpy(float), seed=seed)
                   for n, runs in systems.items()}
    mainq = {n: hierarchical_ci(runs_by_question(runs, "main").to_numpy(float), seed=seed)
             for n, runs in systems.items()}
    log.judge("consistency-below-human",
              {"consistency": consistency, "mainq": mainq,
               "human": papers.value("rule", "Table 2", "Human", "Consistency"),
               "chance": papers.value("rule", "Table 2", "Chance", "SubQ")} if systems else None,
              "; ".join(f"{n}: MainQ {mainq[n]}, consistency {consistency[n]}" for n in systems)
              or "nothing evaluated",
              rests_on=[c for n, c in gates.trained.items() if n in systems])


def finetuned_subq_near_chance(log: ClaimLog, ev: Evidence, gates: Gates, seed: int) -> None:
    subq_cis = ev.fine_tuned.subq_cis
    log.judge("finetuned-subq-near-chance",
              {"subq": dict(subq_cis), "chance": papers.value("rule", "Table 2", "Chance", "SubQ")}
              if subq_cis else None,
              "; ".join(f"{name}: SubQ {ci} (seeds, then main questions, resampled)" for name, ci in subq_cis.items())
              or "no model trained",
              rests_on=[c for n, c in gates.trained.items() if n in subq_cis])


def none_exemplar_helps(log: ClaimLog, ev: Evidence, gates: Gates, seed: int) -> None:
    """The first setting with a None-answer exemplar in some prompt batch: with − without it."""
    with_none = with_none_exemplar(ev.prompting.prompted)
    if not with_none:
        log.judge("none-exemplar-helps", None, "not run in this profile: needs a five-shot setting with RULE "
                                               "exemplars (the only prompts with a None-answer exemplar)")
        return
    system = with_none[0]
    nb, gain = none_by_exemplar(system), none_exemplar_gain(system, seed)
    log.judge("none-exemplar-helps", None if gain is None else {"diff": gain},
              f"{system.name}: {nb['with a None-answer exemplar']:.1f}% (n={nb['n with a None-answer exemplar']}) "
              f"vs {nb['without']:.1f}% (n={nb['n without']})"
              + (f"; with − without {gain}" if gain is not None else "; one of the two groups is empty"),
              rests_on=[gates.lm_sub[system.name]] if system.name in gates.lm_sub else ())


def alignment_gap_claim(log: ClaimLog, ev: Evidence, gates: Gates, seed: int) -> None:
    """The first LM's zero-shot alignment: correct − incorrect options."""
    alignments = ev.prompting.prompted.alignments
    if not alignments:
        log.judge("alignment-gap", None, "not run: needs a language model")
        return
    name, frame = next(iter(alignments.items()))
    a_sel, a_elim = alignment_rates(frame)
    gap = alignment_gap(frame, seed)
    log.judge("alignment-gap", {"gap": gap},
              f"{name}: {100 * a_sel:.1f}% (n={int(frame['selective'].sum())}) vs "
              f"{100 * a_elim:.1f}% (n={int((~frame['selective']).sum())}): gap {gap}")


def subq_exemplars_no_help(log: ClaimLog, ev: Evidence, gates: Gates, seed: int) -> None:
    """Each setting with RULE exemplars against the same setting with ReClor exemplars, paired."""
    systems, rows = ev.prompting.prompted.systems, ev.prompting.rows
    pairs = [(n, m) for n in systems for m in systems
             if "RULE exemplars" in n and m == n.replace("RULE exemplars", "ReClor exemplars")]
    subs = {n: runs_by_question([systems[n]], "sub") for pair in pairs for n in pair}
    mains = {i: systems[n].data.sub(i).meta["main_id"] for n in subs for i in subs[n].columns}
    gains = {n: paired_runs(subs[n], subs[m], seed, mains) for n, m in pairs}
    log.judge("subq-exemplars-no-help-small", {"gain": gains} if pairs else None,
              "; ".join(f"{n}: {cell(rows[n]['SubQ'])} vs {cell(rows[m]['SubQ'])}, paired gain {gains[n]}"
                        for n, m in pairs)
              or "not run in this profile: needs the same setting with RULE and with ReClor exemplars",
              rests_on=[gates.lm_sub[x] for pair in pairs for x in pair if x in gates.lm_sub])


def rationales_help_main(log: ClaimLog, ev: Evidence, gates: Gates, seed: int) -> None:
    """Table 5 with the context: the selective rationale's gain and the eliminative ones' loss, paired.
    The claim reads each setting's main questions: it rests on the setting answering them (no
    rationale appended) above chance."""
    t5, runs = ev.rationales.with_context, ev.rationales.runs
    right = {n: {v: runs_by_question([s], "main") for v, s in runs[n].items()} for n in t5.index}
    worse = {n: max(("+ eliminative", "+ selective and eliminative"), key=lambda v: r[v]) for n, r in t5.iterrows()}
    log.judge("rationales-help-main",
              {"selective_gain": {n: paired_runs(right[n]["+ selective"], right[n]["no rationale"], seed)
                                  for n in t5.index},
               "eliminative_loss": {n: paired_runs(right[n]["no rationale"], right[n][worse[n]], seed)
                                    for n in t5.index}} if len(t5) else None,
              "; ".join(f"{n}: {r['no rationale']:.1f} / {r['+ selective']:.1f} / {r['+ eliminative']:.1f} / "
                        f"{r['+ selective and eliminative']:.1f} (none / sel / elim / both, "
                        f"n={r['main questions']:.0f})" for n, r in t5.iterrows()) or "not run",
              rests_on=list(gates.lm_main.values()))


def subquestions_need_context(log: ClaimLog, ev: Evidence, gates: Gates, seed: int) -> None:
    """Each (with, without the context) pair of Appendix M: SubQ accuracy's drop, paired."""
    rows, pairs, systems = ev.ablation.rows, ev.ablation.pairs, ev.ablation.systems
    ablated = {w: (runs_by_question(systems[w], "sub"), runs_by_question(systems[wo], "sub")) for w, wo in pairs}
    mains = {i: systems[w][0].data.sub(i).meta["main_id"] for w, (a, _) in ablated.items() for i in a.columns}
    drops = {w: paired_runs(a, b, seed, mains) for w, (a, b) in ablated.items()}
    log.judge("subquestions-need-context", {"drop": drops} if pairs else None,
              "; ".join(f"{w}: {cell(rows[w]['SubQ'])} → {cell(rows[wo]['SubQ'])}, paired drop {drops[w]}"
                        for w, wo in pairs) or "not run")


def no_trend_by_type(log: ClaimLog, ev: Evidence, gates: Gates, seed: int) -> None:
    """The largest departure of a type's SubQ accuracy from the overall, with an interval (the
    chi-square p of the table is absence of evidence, not evidence of no trend)."""
    trained, test = ev.fine_tuned.trained, ev.types.test
    enc = trained.encoder_runs
    if test is None or not enc:
        log.judge("no-trend-by-type", None, "not run" if test is None else "no fine-tuned encoder")
        return
    sub = runs_by_question(enc, "sub")
    groups = type_groups(enc[0].data, sub.columns)
    if len(set(groups)) < 2:  # one group: its spread is 0 by construction
        log.judge("no-trend-by-type", None, f"fewer than two groups of question types with at least "
                                            f"{TYPE_MIN_SUBQUESTIONS} subquestions among {sub.shape[1]}")
        return
    spread = spread_ci(sub.to_numpy(float), groups, clusters=mains_of(enc[0].data, sub.columns), seed=seed)
    log.judge("no-trend-by-type", {"spread": spread},
              f"{trained.encoder_name}: largest |type − overall| SubQ accuracy {spread} over "
              f"{len(set(groups))} groups of types (seeds, then main questions, resampled); chi-square "
              f"p = {test[0]:.2f}", rests_on=[gates.trained[trained.encoder_name]])


#: Every claim's judge, in the page's order.
JUDGES: tuple[Callable[[ClaimLog, Evidence, Gates, int], None], ...] = (
    eliminative_below_selective, consistency_below_human, finetuned_subq_near_chance, none_exemplar_helps,
    alignment_gap_claim, subq_exemplars_no_help, rationales_help_main, subquestions_need_context, no_trend_by_type)


def judge_claims(ev: Evidence, gates: Gates, seed: int) -> ClaimLog:
    """The verdict of every declared claim on the sections' results, in the page's order; ``seed``
    seeds the bootstrap intervals."""
    log = ClaimLog("rule")
    for judge in JUDGES:
        judge(log, ev, gates, seed)
    return log
