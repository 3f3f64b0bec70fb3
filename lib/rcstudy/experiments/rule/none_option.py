"""The "None of the above choices" analysis (§4.2, Table 3)."""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from ... import papers
from ...claims import ClaimEvidence
from ...metrics.rule import none_scores
from ...report import paper_vs_ours
from ...stats import Interval, subset_difference
from ..section import Section
from .units import ON_SUBQUESTIONS, Prompted, System, Trained, sub_correct

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


def none_section(baselines: Sequence[System], trained: Trained, prompted: Prompted, seed: int) -> Section:
    """§4.2's None analysis for every baseline, the encoder (first seed) and every prompted setting,
    and the claim on a None-answer exemplar (``seed`` seeds its bootstrap)."""
    rows = {}
    for s in [*baselines, *trained.encoder_runs[:1], *prompted.systems.values()]:
        f_all = pd.concat([sub_correct(s.data, e) for e in s.evals])
        r = none_scores(f_all["has_none"], f_all["none_correct"], f_all["right"])
        r.update(none_by_exemplar(s) if s.info.get("none exemplar by split") else {})
        rows[s.name + (f" (seed {s.info['seed']})" if s.setting == "ReClor-trained" else "")] = r
    ours = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=list(NONE_COLUMNS))
    tables = {"rule_none": paper_vs_ours(papers.table("rule", "§4.2"), ours)}
    facts = {"rule_none_text": ("; ".join(f"{n}: {r['None offered']:.1f} % where None is offered, "
                                          f"{r['None is the answer']:.1f} % where it is the answer"
                                          for n, r in ours.iterrows() if n in prompted.systems) + "."
                                if prompted.systems else "")}
    first = next(iter(with_none_exemplar(prompted)), None)
    captions = {}
    if first is not None:
        tables["rule_table3"] = none_table(first).round(1)
        captions["rule_table3"] = f"Table 3's analog, per prompt batch: {first.name}"
    return Section(tables=tables, facts=facts, captions=captions, claims=(none_exemplar_claim(first, seed),))


def none_exemplar_claim(system: System | None, seed: int) -> ClaimEvidence:
    """The first setting with a None-answer exemplar in some prompt batch (None: there is none):
    its accuracy on None-answer subquestions with − without the exemplar; it rests on the setting
    answering its subquestions above chance."""
    if system is None:
        return ClaimEvidence("none-exemplar-helps", None,
                             "not run in this profile: needs a five-shot setting with RULE exemplars (the only "
                             "prompts with a None-answer exemplar)")
    nb, gain = none_by_exemplar(system), none_exemplar_gain(system, seed)
    return ClaimEvidence(
        "none-exemplar-helps", None if gain is None else {"diff": gain},
        f"{system.name}: {nb['with a None-answer exemplar']:.1f}% (n={nb['n with a None-answer exemplar']}) "
        f"vs {nb['without']:.1f}% (n={nb['n without']})"
        + (f"; with − without {gain}" if gain is not None else "; one of the two groups is empty"),
        rests_on=(system.name + ON_SUBQUESTIONS,))
