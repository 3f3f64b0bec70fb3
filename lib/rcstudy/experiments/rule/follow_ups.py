"""Option positions, the "None" analysis (§4.2, Table 3) and the alignment follow-up (§5)."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ... import papers
from ...data.rule import RuleData
from ...metrics.rule import none_scores
from ...report import cell, paper_vs_ours
from ...stats import Interval
from .alignment import alignment_rates
from .fine_tuned import Trained
from .prompting import Prompted
from .results import Results
from .units import System, numeric, per_main, pooled, seed_label, sub_correct


def baseline_facts(rows: Mapping[str, Mapping], trained: Trained, subq_cis: Mapping[str, Interval],
                   baselines: Sequence[System], chance_sub: float) -> dict:
    """The paragraph after the fine-tuned models' note: the encoder, the last and longest options."""
    facts = {}
    if trained.encoder_runs:
        enc = rows[trained.encoder_name]
        facts["rule_enc_text"] = (
            f"The encoder answers {cell(enc['MainQ'])} % of the main questions but {cell(enc['SubQ'])} % of the "
            f"subquestions (95% bootstrap interval over subquestions {subq_cis[trained.encoder_name]}; chance "
            f"{chance_sub:.1f} %)." + "".join(f" {name.split(',')[0]}: MainQ {cell(rows[name]['MainQ'])} %, SubQ "
                                              f"{cell(rows[name]['SubQ'])} % (interval {subq_cis[name]})."
                                              for name in trained.seq2seq_runs))
    else:
        facts["rule_enc_text"] = "No encoder was trained: the ReClor training data is missing."
    facts["rule_last_none"] = none_table(baselines[3]).loc["all", "None is the answer"]
    facts["rule_last_subq"] = rows["always Option3"]["SubQ"]
    longest = rows["longest option"]
    facts["rule_longest_text"] = (
        f"The longest-option baseline answers {longest['Selective']:.1f} % of the selective subquestions and "
        f"{longest['Eliminative']:.1f} % of the eliminative ones."
        + (" The rationale written for the right option is often the longest of the four, so a gap between "
           "selective and eliminative accuracy can come from length alone, without any understanding. Keep this "
           "baseline in mind when reading the gaps below." if longest["Selective"] > longest["Eliminative"] + 10 else ""))
    return facts


def figure_points(rows: Mapping[str, Mapping]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per system: Selective and Eliminative accuracy (the bar chart), and MainQ, SubQ and
    Consistency (the scatter plot), as numbers (the mean of a mean ± sd)."""
    def pick(columns):
        return pd.DataFrame({n: {c: numeric(r[c]) for c in columns} for n, r in rows.items()}).T

    return pick(("Selective", "Eliminative")), pick(("MainQ", "SubQ", "Consistency"))


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


def positions_section(res: Results, trained: Trained, prompted: Prompted, data: RuleData) -> None:
    """Which option positions the encoder (first seed) and each prompted setting favour."""
    systems = {**({seed_label(trained.encoder_name, trained.encoder_runs[0]): trained.encoder_runs[0]}
                  if trained.encoder_runs else {}), **prompted.systems}
    if not systems:
        res.facts["rule_position_text"] = "No trained or prompted system was run."
        return
    positions = position_table(systems, data)
    res.tables["rule_positions"] = positions.round(1)
    favourite = positions.drop(index="gold answers").idxmax(axis=1)
    gold = positions.loc["gold answers"]
    res.facts["rule_position_text"] = (
        "; ".join(f"{n} picks {favourite[n]} for {positions.loc[n, favourite[n]]:.1f} % of its answers"
                  for n in favourite.index)
        + f" (the gold answer is at each position {gold.min():.1f}–{gold.max():.1f} % of the time).")


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


def none_table(system: System) -> pd.DataFrame:
    """Table 3's analog: per split (prompt batch), accuracy where None is offered / is the answer."""
    rows = {}
    flags = system.info.get("none exemplar by split", {})
    for ev in system.evals:
        f = sub_correct(system.data, ev)
        r = none_scores(f["has_none"], f["none_correct"], f["right"])
        r["None-answer exemplar in prompt"] = flags.get(ev.split)
        rows[ev.split if ev.split is not None else "all"] = r
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "split (batch + 1)"
    return table


def none_by_exemplar(system: System) -> dict[str, float]:
    """Accuracy on None-answer subquestions, split by whether the prompt has a None-answer exemplar."""
    flags = system.info.get("none exemplar by split", {})
    out = {}
    for flag, name in ((True, "with a None-answer exemplar"), (False, "without")):
        frames = [sub_correct(system.data, ev) for ev in system.evals if flags.get(ev.split) is flag]
        f = pd.concat(frames) if frames else pd.DataFrame(columns=["none_correct", "right"])
        sel = f[f["none_correct"].astype(bool)]
        out[name] = 100 * float(sel["right"].mean()) if len(sel) else float("nan")
        out[f"n {name}"] = len(sel)
    return out


def with_none_exemplar(prompted: Prompted) -> list[System]:
    """The prompted settings whose prompt batches include a None-answer exemplar somewhere."""
    return [s for s in prompted.systems.values() if any(s.info.get("none exemplar by split", {}).values())]


def none_section(res: Results, baselines: Sequence[System], trained: Trained, prompted: Prompted) -> None:
    """§4.2's None analysis for every baseline, the encoder (first seed) and every prompted setting."""
    rows = {}
    for s in [*baselines, *trained.encoder_runs[:1], *prompted.systems.values()]:
        f_all = pd.concat([sub_correct(s.data, e) for e in s.evals])
        r = none_scores(f_all["has_none"], f_all["none_correct"], f_all["right"])
        r.update(none_by_exemplar(s) if s.info.get("none exemplar by split") else {})
        rows[s.name + (f" (seed {s.info['seed']})" if s.setting == "ReClor-trained" else "")] = r
    ours = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=list(NONE_COLUMNS))
    res.tables["rule_none"] = paper_vs_ours(papers.table("rule", "§4.2"), ours)
    res.facts["rule_none_text"] = ("; ".join(f"{n}: {r['None offered']:.1f} % where None is offered, "
                                             f"{r['None is the answer']:.1f} % where it is the answer"
                                             for n, r in ours.iterrows() if n in prompted.systems) + "."
                                   if prompted.systems else "")
    with_none = with_none_exemplar(prompted)
    if with_none:
        res.tables["rule_table3"] = none_table(with_none[0]).round(1)
        res.captions["rule_table3"] = f"Table 3's analog, per prompt batch: {with_none[0].name}"


def alignment_section(res: Results, trained: Trained, prompted: Prompted) -> None:
    """§5's rationale alignment: the LMs zero-shot, the encoder (first seed) as multiple choice."""
    frames = {f"{name}, zero-shot (letter prob.)": f for name, f in prompted.alignments.items()}
    frames.update({seed_label(trained.encoder_name, r): r.info["alignment"] for r in trained.encoder_runs[:1]
                   if "alignment" in r.info})
    ours = pd.DataFrame({n: dict(zip(("correct options", "incorrect options"), 100 * np.array(alignment_rates(f))))
                         for n, f in frames.items()}).T
    paper = papers.table("rule", "§5")
    res.tables["rule_alignment"] = paper_vs_ours(paper, ours)
    p = paper.iloc[0]
    res.facts["rule_align_text"] = (
        "; ".join(f"{n}: {r['correct options']:.1f} % for correct options and {r['incorrect options']:.1f} % for "
                  "incorrect ones" for n, r in ours.iterrows())
        + f" (paper, five-shot InstructGPT: {p['correct options']:.1f} % and {p['incorrect options']:.1f} %)."
        if len(ours) else "Not run in this profile.")
