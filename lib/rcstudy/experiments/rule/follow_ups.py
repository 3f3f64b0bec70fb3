"""Every system side by side (the figures of Table 2), option positions, the alignment follow-up (§5)
and consistency by number of subquestions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ... import papers
from ...claims import ClaimEvidence
from ...data.rule import RuleData
from ...learning import LossCheck
from ...report import cell, paper_vs_ours
from ...stats import Interval, bootstrap_ci, hierarchical_ci
from ..section import Section
from .alignment import alignment_gap, alignment_rates
from .fine_tuned import FineTuned
from .prompting import Prompting
from .units import (ON_ALL_MAIN_QUESTIONS, Prompted, System, Trained, numeric, per_main, pooled,
                    results_table, runs_by_question, seed_label)


@dataclass(frozen=True, kw_only=True)
class Overview(Section):
    """Every system we ran (baselines, fine-tuned, prompted): its metrics, and the figures' data."""

    rows: dict[str, dict]
    bars: pd.DataFrame  # Selective and Eliminative accuracy per system
    points: pd.DataFrame  # MainQ, SubQ and Consistency per system
    human: dict[str, float]  # the paper's human scores (Table 2)


def figure_points(rows: Mapping[str, Mapping]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per system: Selective and Eliminative accuracy (the bar chart), and MainQ, SubQ and
    Consistency (the scatter plot), as numbers (the mean of a mean ± sd)."""
    def pick(columns):
        return pd.DataFrame({n: {c: numeric(r[c]) for c in columns} for n, r in rows.items()}).T

    return pick(("Selective", "Eliminative")), pick(("MainQ", "SubQ", "Consistency"))


def overview_section(fine_tuned: FineTuned, prompting: Prompting, seed: int) -> Overview:
    """Every system but chance: the figures' points, SubQ accuracy given the main question right,
    and the claim on every system's consistency (``seed`` seeds its bootstrap)."""
    rows = {**{k: v for k, v in fine_tuned.rows.items() if k != "Chance"}, **prompting.rows}
    bars, points = figure_points(rows)
    given = results_table(rows, ["SubQ", "SubQ | main right", "MainQ-wise SubQ | main right"])
    return Overview(tables={"rule_given_main_right": given.map(cell)},
                    claims=(consistency_claim(fine_tuned.trained, prompting.prompted, prompting.gates, seed),),
                    rows=rows, bars=bars, points=points,
                    human={c: papers.value("rule", "Table 2", "Human", c)
                           for c in ("MainQ", "SubQ", "Eliminative", "Consistency")})


def consistency_claim(trained: Trained, prompted: Prompted, gates: Mapping[str, LossCheck], seed: int) -> ClaimEvidence:
    """Every fine-tuned model, and every prompted setting that meets the claim's premise (its main
    questions answered above chance: its gate ``ON_ALL_MAIN_QUESTIONS`` among ``gates``, the
    prompted settings' gates of :func:`~.prompting.prompted_gates`): its consistency and MainQ
    accuracy with intervals. A setting at chance is set aside and named (its consistency is low
    trivially); the claim rests on the fine-tuned models having learned, or, where no system
    meets the premise, on the prompted settings' main-question gates (all at chance)."""
    premise = {n: gates[n + ON_ALL_MAIN_QUESTIONS] for n in prompted.systems if n + ON_ALL_MAIN_QUESTIONS in gates}
    aside = [n for n, c in premise.items() if not c.learned]
    systems = {**trained.runs, **{n: [s] for n, s in prompted.systems.items() if n not in aside}}
    rests_on = tuple(trained.runs)
    if not systems and aside:
        systems = {n: [prompted.systems[n]] for n in aside}
        rests_on = tuple(n + ON_ALL_MAIN_QUESTIONS for n in aside)
    consistency = {n: hierarchical_ci(runs_by_question(runs, "consistent").to_numpy(float), seed=seed)
                   for n, runs in systems.items()}
    mainq = {n: hierarchical_ci(runs_by_question(runs, "main").to_numpy(float), seed=seed)
             for n, runs in systems.items()}
    text = "; ".join(f"{n}: MainQ {mainq[n]}, consistency {consistency[n]}" for n in systems) or "nothing evaluated"
    if aside and not set(aside) <= set(systems):
        text += ("; set aside, at chance on their main questions (the claim's premise): "
                 + "; ".join(f"{n} ({premise[n].accuracy})" for n in aside))
    return ClaimEvidence(
        "consistency-below-human",
        {"consistency": consistency, "mainq": mainq, "human": papers.value("rule", "Table 2", "Human", "Consistency"),
         "chance": papers.value("rule", "Table 2", "Chance", "SubQ")} if systems else None,
        text, rests_on=rests_on)


def consistency_excess(systems: Sequence[System], seed: int) -> Interval:
    """Consistency − MainQ / 2 (points) over the main questions of ``systems`` (seeds or units
    pooled), with a bootstrap interval over main questions: each contributes
    all-right − main-right / 2, so the mean is the claim's quantity."""
    frame = pd.concat([per_main(s.data, ev) for s in systems for ev in s.evals], ignore_index=True)
    return bootstrap_ci(frame["consistent"].to_numpy(float) - frame["main_right"].to_numpy(float) / 2,
                        scale=100, seed=seed)


def position_table(systems: Mapping[str, System], data: RuleData) -> pd.DataFrame:
    """How often each system picks each option position (% of its answers), and how often each
    position holds the gold answer in ``data``."""
    def shares(values) -> pd.Series:
        counts = pd.Series(list(values)).value_counts(normalize=True) * 100
        return counts.rename(lambda c: f"Option{c}" if c >= 0 else "unparsed")

    rows = {name: shares(p for ev in system.evals for p in (*ev.main_pred.values(), *ev.sub_pred.values()))
            for name, system in systems.items()}
    rows["gold answers"] = shares(it.label for it in (*data.mains, *data.subs))
    table = pd.DataFrame(rows).T.fillna(0.0)
    return table.reindex(columns=sorted(table.columns))


def positions_section(trained: Trained, prompted: Prompted, data: RuleData) -> Section:
    """Which option positions the encoder (first seed) and each prompted setting favour."""
    systems = {**({seed_label(trained.encoder_name, trained.encoder_runs[0]): trained.encoder_runs[0]}
                  if trained.encoder_runs else {}), **prompted.systems}
    if not systems:
        return Section(facts={"rule_position_text": "No trained or prompted system was run."})
    positions = position_table(systems, data)
    favourite = positions.drop(index="gold answers").idxmax(axis=1)
    gold = positions.loc["gold answers"]
    return Section(tables={"rule_positions": positions.round(1)}, facts={"rule_position_text": (
        "; ".join(f"{n} picks {favourite[n]} for {positions.loc[n, favourite[n]]:.1f} % of its answers"
                  for n in favourite.index)
        + f" (the gold answer is at each position {gold.min():.1f}–{gold.max():.1f} % of the time).")})


def alignment_section(trained: Trained, prompted: Prompted, seed: int) -> Section:
    """§5's rationale alignment: the LMs zero-shot, the encoder (first seed) as multiple choice; and
    the claim on the first LM's gap (``seed`` seeds its bootstrap)."""
    frames = {f"{name}, zero-shot (letter prob.)": f for name, f in prompted.alignments.items()}
    frames.update({seed_label(trained.encoder_name, r): r.info["alignment"] for r in trained.encoder_runs[:1]
                   if "alignment" in r.info})
    ours = pd.DataFrame({n: dict(zip(("correct options", "incorrect options"), 100 * np.array(alignment_rates(f))))
                         for n, f in frames.items()}).T
    paper = papers.table("rule", "§5")
    p = paper.iloc[0]
    return Section(tables={"rule_alignment": paper_vs_ours(paper, ours)}, facts={"rule_align_text": (
        "; ".join(f"{n}: {r['correct options']:.1f} % for correct options and {r['incorrect options']:.1f} % for "
                  "incorrect ones" for n, r in ours.iterrows())
        + f" (paper, five-shot InstructGPT: {p['correct options']:.1f} % and {p['incorrect options']:.1f} %)."
        if len(ours) else "Not run in this profile.")}, claims=(alignment_claim(prompted, seed),))


def alignment_claim(prompted: Prompted, seed: int) -> ClaimEvidence:
    """The first LM's zero-shot alignment: correct − incorrect options."""
    if not prompted.alignments:
        return ClaimEvidence("alignment-gap", None, "not run: needs a language model")
    name, frame = next(iter(prompted.alignments.items()))
    a_sel, a_elim = alignment_rates(frame)
    gap = alignment_gap(frame, seed)
    return ClaimEvidence("alignment-gap", {"gap": gap},
                         f"{name}: {100 * a_sel:.1f}% (n={int(frame['selective'].sum())}) vs "
                         f"{100 * a_elim:.1f}% (n={int((~frame['selective']).sum())}): gap {gap}")


def by_subquestion_count(system: System) -> pd.DataFrame:
    """Consistency and MainQ-wise SubQ accuracy by how many subquestions a main question has."""
    ev = system.evals[0] if len(system.evals) == 1 else pooled(system.data, system.evals)
    f = per_main(system.data, ev)
    g = f.groupby("n_subs")
    table = pd.DataFrame({"main questions": g.size(), "MainQ": 100 * g["main_right"].mean(),
                          "MainQ-wise SubQ": 100 * g["sub_acc"].mean(), "Consistency": 100 * g["consistent"].mean()})
    table.index.name = "subquestions of the main question"
    return table


NONE_COLUMNS = ("None offered", "None is the answer", "with a None-answer exemplar", "without", "n offered", "n answer")


def count_section(trained: Trained, prompted: Prompted) -> Section:
    """Consistency by number of subquestions, for the encoder (first seed) or else the first prompted setting."""
    system = trained.encoder_runs[0] if trained.encoder_runs else next(iter(prompted.systems.values()), None)
    if system is None:
        return Section()
    return Section(tables={"rule_by_count": by_subquestion_count(system).round(1)},
                   captions={"rule_by_count": f"By number of subquestions: {system.name}"})
