"""The evidence of every declared claim (:data:`rcstudy.papers.rule.CLAIMS`) and their verdicts."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ... import learning, papers
from ...papers.rule import TYPE_MIN_SUBQUESTIONS
from ...report import ClaimLog, cell
from ...stats import (Interval, bootstrap_ci, difference_interval, hierarchical_ci, hierarchical_paired, spread_ci,
                      subset_difference)
from .alignment import alignment_rates
from .fine_tuned import Trained, loss_checks
from .follow_ups import none_by_exemplar, with_none_exemplar
from .length_types import type_groups
from .prompting import Prompted, lm_checks
from .units import System, mains_of, per_main, runs_by_question, sub_correct


def subq_intervals(trained: Trained, seed: int) -> dict[str, Interval]:
    """Per fine-tuned model: SubQ accuracy with a bootstrap interval that resamples seeds, then main
    questions (a main question's subquestions are drawn together: they share its passage)."""
    out = {}
    for name, runs in trained.runs.items():
        sub = runs_by_question(runs, "sub")
        out[name] = hierarchical_ci(sub.to_numpy(float), clusters=mains_of(runs[0].data, sub.columns), seed=seed)
    return out


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


def none_exemplar_gain(system: System, seed: int) -> Interval | None:
    """Accuracy on None-answer subquestions in batches with − without a None-answer exemplar
    (points), resampling main questions (None if either group is empty)."""
    flags = system.info.get("none exemplar by split", {})
    frames = [sub_correct(system.data, ev).assign(flag=flags.get(ev.split)) for ev in system.evals]
    f = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    f = f[f["none_correct"].astype(bool)] if len(f) else f
    with_, without = (f["flag"] == True).to_numpy(), (f["flag"] == False).to_numpy()  # noqa: E712 (None: unknown)
    if not len(f) or not with_.any() or not without.any():
        return None
    return subset_difference(f["right"].to_numpy(float), with_, without, clusters=f["main_id"].tolist(), seed=seed)


def judge_claims(claims: ClaimLog, *, baselines: Sequence[System], trained: Trained, prompted: Prompted,
                 lm_rows: Mapping[str, Mapping], all_rows: Mapping[str, Mapping], subq_cis: Mapping[str, Interval],
                 t5_asked: pd.DataFrame, t5_runs: Mapping[str, Mapping[str, System]],
                 ablation_rows: Mapping[str, Mapping], ablation_pairs: Sequence[tuple[str, str]],
                 ablation_systems: Mapping[str, Sequence[System]], type_test: tuple[float, int, int] | None,
                 seed: int) -> dict[str, learning.LossCheck]:
    """The evidence of every declared claim (:data:`rcstudy.papers.rule.CLAIMS`), in the page's
    order; ``seed`` seeds the bootstrap intervals. Every interval resamples seeds, then main
    questions (a main question's subquestions together); paired where two systems or variants
    answered the same questions. Each claim rests on the models whose evidence it reads: a
    fine-tuned model must beat chance on the held-out main questions, a prompted setting on the
    task the claim reads (its main questions or its subquestions), or the claim is "model at
    chance". Returns every gate it used (for the page's table)."""
    def fmt(r, k):
        return cell(r[k])

    checks = loss_checks(trained, seed)
    lm_sub = lm_checks(prompted, "sub", seed)
    gates: dict[str, learning.LossCheck] = {**checks, **{f"{n} (subquestions)": c for n, c in lm_sub.items()}}

    if lm_rows:
        gaps = {n: selective_gap(prompted.systems[n], seed) for n in lm_rows}
        claims.judge("eliminative-below-selective", {"gaps": gaps},
                     "; ".join(f"{n}: sel {fmt(r, 'Selective')} vs elim {fmt(r, 'Eliminative')}, "
                               f"gap {gaps[n]}" for n, r in lm_rows.items()),
                     rests_on=[lm_sub[n] for n in lm_rows if n in lm_sub])
    else:
        claims.judge("eliminative-below-selective", None, "no language model could be run here")

    baseline_names = {b.name for b in baselines}
    evaluated = {n: r for n, r in all_rows.items() if n not in baseline_names}
    systems = {**trained.runs, **{n: [s] for n, s in prompted.systems.items()}}
    consistency = {n: hierarchical_ci(runs_by_question(systems[n], "consistent").to_numpy(float), seed=seed)
                   for n in evaluated}
    mainq = {n: hierarchical_ci(runs_by_question(systems[n], "main").to_numpy(float), seed=seed) for n in evaluated}
    claims.judge("consistency-below-human",
                 {"consistency": consistency, "mainq": mainq,
                  "human": papers.value("rule", "Table 2", "Human", "Consistency"),
                  "chance": papers.value("rule", "Table 2", "Chance", "SubQ")} if evaluated else None,
                 "; ".join(f"{n}: MainQ {mainq[n]}, consistency {consistency[n]}" for n in evaluated)
                 or "nothing evaluated",
                 rests_on=[c for n, c in checks.items() if n in evaluated])

    claims.judge("finetuned-subq-near-chance",
                 {"subq": dict(subq_cis), "chance": papers.value("rule", "Table 2", "Chance", "SubQ")}
                 if subq_cis else None,
                 "; ".join(f"{name}: SubQ {ci} (seeds, then main questions, resampled)"
                           for name, ci in subq_cis.items()) or "no model trained",
                 rests_on=[c for n, c in checks.items() if n in subq_cis])

    with_none = with_none_exemplar(prompted)
    if with_none:
        nb = none_by_exemplar(with_none[0])
        gain = none_exemplar_gain(with_none[0], seed)
        claims.judge("none-exemplar-helps", None if gain is None else {"diff": gain},
                     f"{with_none[0].name}: {nb['with a None-answer exemplar']:.1f}% "
                     f"(n={nb['n with a None-answer exemplar']}) vs {nb['without']:.1f}% (n={nb['n without']})"
                     + (f"; with − without {gain}" if gain is not None else "; one of the two groups is empty"),
                     rests_on=[lm_sub[with_none[0].name]] if with_none[0].name in lm_sub else ())
    else:
        claims.judge("none-exemplar-helps", None, "not run in this profile: needs a five-shot setting with RULE "
                                                  "exemplars (the only prompts with a None-answer exemplar)")

    if prompted.alignments:
        name, frame = next(iter(prompted.alignments.items()))
        a_sel, a_elim = alignment_rates(frame)
        gap = alignment_gap(frame, seed)
        claims.judge("alignment-gap", {"gap": gap},
                     f"{name}: {100 * a_sel:.1f}% (n={int(frame['selective'].sum())}) vs "
                     f"{100 * a_elim:.1f}% (n={int((~frame['selective']).sum())}): gap {gap}")
    else:
        claims.judge("alignment-gap", None, "not run: needs a language model")

    pairs = [(n, m) for n in prompted.systems for m in prompted.systems
             if "RULE exemplars" in n and m == n.replace("RULE exemplars", "ReClor exemplars")]
    subs = {n: runs_by_question([prompted.systems[n]], "sub") for pair in pairs for n in pair}
    mains = {i: prompted.systems[n].data.sub(i).meta["main_id"] for n in subs for i in subs[n].columns}
    gains = {n: paired_runs(subs[n], subs[m], seed, mains) for n, m in pairs}
    claims.judge("subq-exemplars-no-help-small", {"gain": gains} if pairs else None,
                 "; ".join(f"{n}: {fmt(lm_rows[n], 'SubQ')} vs {fmt(lm_rows[m], 'SubQ')}, paired gain {gains[n]}"
                           for n, m in pairs)
                 or "not run in this profile: needs the same setting with RULE and with ReClor exemplars",
                 rests_on=[lm_sub[x] for pair in pairs for x in pair if x in lm_sub])

    t5 = t5_asked.loc[[n for n in t5_asked.index if not n.endswith(", no context")]]
    right = {n: {v: runs_by_question([s], "main") for v, s in t5_runs[n].items()} for n in t5.index}
    worse = {n: max(("+ eliminative", "+ selective and eliminative"), key=lambda v: r[v]) for n, r in t5.iterrows()}
    # the claim reads each setting's main questions: it rests on the setting answering them (no
    # rationale appended) above chance
    lm_main = lm_checks(prompted, "main", seed, {n: t5_runs[n]["no rationale"] for n in t5.index})
    gates.update({f"{n} (main questions)": c for n, c in lm_main.items()})
    claims.judge("rationales-help-main",
                 {"selective_gain": {n: paired_runs(right[n]["+ selective"], right[n]["no rationale"], seed)
                                     for n in t5.index},
                  "eliminative_loss": {n: paired_runs(right[n]["no rationale"], right[n][worse[n]], seed)
                                       for n in t5.index}} if len(t5) else None,
                 "; ".join(f"{n}: {r['no rationale']:.1f} / {r['+ selective']:.1f} / {r['+ eliminative']:.1f} / "
                           f"{r['+ selective and eliminative']:.1f} (none / sel / elim / both, "
                           f"n={r['main questions']:.0f})" for n, r in t5.iterrows()) or "not run",
                 rests_on=list(lm_main.values()))

    def sub_frame(w: str) -> pd.DataFrame:
        return runs_by_question(ablation_systems[w], "sub")

    ablated = {w: (sub_frame(w), sub_frame(wo)) for w, wo in ablation_pairs}
    ab_mains = {i: ablation_systems[w][0].data.sub(i).meta["main_id"] for w, (a, _) in ablated.items() for i in a.columns}
    drops = {w: paired_runs(a, b, seed, ab_mains) for w, (a, b) in ablated.items()}
    claims.judge("subquestions-need-context", {"drop": drops} if ablation_pairs else None,
                 "; ".join(f"{w}: {cell(ablation_rows[w]['SubQ'])} → {cell(ablation_rows[wo]['SubQ'])}, "
                           f"paired drop {drops[w]}" for w, wo in ablation_pairs) or "not run")

    # no trend by type: the largest departure of a type's SubQ accuracy from the overall, with an
    # interval (the chi-square p of the table is absence of evidence, not evidence of no trend)
    enc = trained.encoder_runs
    if type_test is None or not enc:
        claims.judge("no-trend-by-type", None, "not run" if type_test is None else "no fine-tuned encoder")
    else:
        sub = runs_by_question(enc, "sub")
        groups = type_groups(enc[0].data, sub.columns)
    if type_test is not None and enc and len(set(groups)) < 2:  # one group: its spread is 0 by construction
        claims.judge("no-trend-by-type", None, f"fewer than two groups of question types with at least "
                                               f"{TYPE_MIN_SUBQUESTIONS} subquestions among {sub.shape[1]}")
    elif type_test is not None and enc:
        spread = spread_ci(sub.to_numpy(float), groups, clusters=mains_of(enc[0].data, sub.columns), seed=seed)
        claims.judge("no-trend-by-type", {"spread": spread},
                     f"{trained.encoder_name}: largest |type − overall| SubQ accuracy {spread} over "
                     f"{len(set(groups))} groups of types (seeds, then main questions, resampled); chi-square "
                     f"p = {type_test[0]:.2f}", rests_on=[checks[trained.encoder_name]])
    return gates
