"""Evaluation units and the paper's metrics.

Every system is evaluated into :class:`Evaluation` units (one per released split for prompted
LMs, whose prompt batch changes with the split; one unit for everything else) holding the
predicted option of each question. :func:`system_scores` turns units into the paper's metrics
(:mod:`rcstudy.metrics.rule`), either averaged over splits (mean ± sd) or pooled.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from ... import papers, sampling
from ...data.rule import RuleData
from ...metrics.rule import GIVEN_MAIN_RIGHT, METRICS, aggregate, chance_scores, rule_scores
from ...stats import Interval, MeanSD, hierarchical_paired
from ...jobs import Outputs
from .config import Config, EncoderSetup

AGGREGATIONS = ("per_split_mean", "pooled")
#: The suffix of a set of questions, and of a row, answered without the context.
NO_CONTEXT = ", no context"
#: How a gate's row names a prompted setting gated on its subquestions, on all its main questions,
#: and (Table 5's settings) on the main questions of Table 5's sample with no rationale appended (a
#: claim resting on a setting names its row so).
ON_SUBQUESTIONS, ON_ALL_MAIN_QUESTIONS, ON_MAIN_QUESTIONS = (" (subquestions)", " (all its main questions)",
                                                            " (main questions)")


@dataclass(frozen=True)
class Evaluation:
    """The predicted option of each evaluated question (``-1``: no answer could be read)."""

    split: int | None
    main_pred: Mapping[str, int]
    sub_pred: Mapping[str, int]


@dataclass
class System:
    """One evaluated system: its units, the questions they cover, and how to describe it."""

    name: str
    setting: str  # "baseline", "ReClor-trained", "zero-shot", "one-shot", "five-shot"
    evals: list[Evaluation]
    data: RuleData
    info: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Trained:
    """The models fine-tuned on ReClor: one system per seed, by model name."""

    encoder_name: str
    setups: dict[str, list[EncoderSetup]]  # every configured model, run or not
    runs: dict[str, list[System]]  # the models that ran (the encoder first)
    unavailable: list[str]

    @property
    def encoder_runs(self) -> list[System]:
        return self.runs.get(self.encoder_name, [])

    @property
    def seq2seq_runs(self) -> dict[str, list[System]]:
        return {n: r for n, r in self.runs.items() if n != self.encoder_name}


@dataclass(frozen=True)
class Prompted:
    """The prompted LMs: one system per setting, the alignment answers per model, the models that
    could not be loaded, and the models that ran (the follow-ups prompt these)."""

    systems: dict[str, System]
    alignments: dict[str, pd.DataFrame]
    unavailable: list[str]
    models: tuple[str, ...]
    origins: dict[str, tuple[str, str]]  # each system's model and setting (shots:family:scoring)


@dataclass(frozen=True)
class Unavailable:
    """What a job returns when its model cannot be loaded here
    (:class:`~rcstudy.errors.ModelUnavailable`): the page lists the model instead of its rows."""

    reason: str


def lm_outputs(outputs: Outputs, analysis: str) -> list[tuple[str, str | None, object]]:
    """Model, setting and output of each prompted-LM job of ``analysis`` (``lm_job``), in order."""
    return [(job.arguments["model"], job.arguments["spec"], out) for job, out in outputs.each("lm_job")
            if job.arguments["analysis"] == analysis]


def unit_scores(data: RuleData, ev: Evaluation) -> dict[str, float]:
    mains = [data.main(m) for m in ev.main_pred]
    subs = [data.sub(s) for s in ev.sub_pred]
    return rule_scores([m.id for m in mains], [ev.main_pred[m.id] == m.label for m in mains],
                       [s.meta["main_id"] for s in subs], [s.meta["selective"] for s in subs],
                       [ev.sub_pred[s.id] == s.label for s in subs])


def pooled(data: RuleData, evals: Sequence[Evaluation]) -> Evaluation:
    """One unit from per-split units: every subquestion once; each main question answered as in
    the split that holds most of its subquestions (ties: the lower split)."""
    sub_pred = {s: p for ev in evals for s, p in ev.sub_pred.items()}
    best: dict[str, tuple[int, int, int]] = {}
    for ev in evals:
        held = Counter(data.sub(s).meta["main_id"] for s in ev.sub_pred)
        for m, p in ev.main_pred.items():
            key = (-held[m], ev.split if ev.split is not None else 0, p)
            best[m] = min(best.get(m, key), key)
    return Evaluation(None, {m: v[2] for m, v in best.items()}, sub_pred)


def system_scores(system: System, aggregation: str = "per_split_mean") -> dict[str, float | MeanSD]:
    """The paper's metrics for a system: one unit as is; several by ``aggregation``."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    if len(system.evals) == 1:
        return unit_scores(system.data, system.evals[0])
    if aggregation == "pooled":
        return unit_scores(system.data, pooled(system.data, system.evals))
    per = [unit_scores(system.data, ev) for ev in system.evals]
    out: dict = aggregate(per, METRICS + GIVEN_MAIN_RIGHT)
    out["main questions"] = sum(p["main questions"] for p in per)
    out["subquestions"] = sum(p["subquestions"] for p in per)
    return out


def seed_average(systems: Sequence[System]) -> dict[str, float | MeanSD]:
    """Mean ± sd over seeds of single-unit systems (one system per seed)."""
    per = [unit_scores(s.data, s.evals[0]) for s in systems]
    out: dict = aggregate(per, METRICS + GIVEN_MAIN_RIGHT) if len(per) > 1 else dict(per[0])
    out["main questions"], out["subquestions"] = per[0]["main questions"], per[0]["subquestions"]
    return out


def chance_subq() -> float:
    """The paper's chance SubQ accuracy (%), the line every SubQ figure and claim is read against."""
    return papers.value("rule", "Table 2", "Chance", "SubQ")


def chance_row(data: RuleData) -> dict[str, float]:
    return chance_scores([m.id for m in data.mains], [len(m.options) for m in data.mains],
                         [s.meta["main_id"] for s in data.subs], [len(s.options) for s in data.subs],
                         [s.meta["selective"] for s in data.subs])


def per_main(data: RuleData, ev: Evaluation) -> pd.DataFrame:
    """One row per main question of ``ev``: main right, subquestion accuracy, all right."""
    rows = {}
    by_main: dict[str, list[bool]] = {}
    for s, p in ev.sub_pred.items():
        sub = data.sub(s)
        by_main.setdefault(sub.meta["main_id"], []).append(p == sub.label)
    for m, p in ev.main_pred.items():
        subs = by_main.get(m, [])
        ok = p == data.main(m).label
        rows[m] = {"main_right": ok, "sub_acc": np.mean(subs) if subs else np.nan, "n_subs": len(subs),
                   "consistent": ok and all(subs)}
    return pd.DataFrame.from_dict(rows, orient="index")


def sub_correct(data: RuleData, ev: Evaluation) -> pd.DataFrame:
    """One row per evaluated subquestion: its split, type flags, and whether the prediction is right."""
    rows = []
    for s, p in ev.sub_pred.items():
        sub = data.sub(s)
        rows.append({"id": s, "main_id": sub.meta["main_id"], "split": ev.split if ev.split is not None
                     else sub.meta["split"], "selective": sub.meta["selective"], "has_none": sub.meta["has_none"],
                     "none_correct": sub.meta["none_correct"], "pred": p, "label": sub.label,
                     "right": p == sub.label})
    return pd.DataFrame(rows)


def runs_by_question(systems: Sequence[System], kind: Literal["main", "sub", "consistent"]) -> pd.DataFrame:
    """One row per system (seed), one column per main question or subquestion id (sorted): 1.0 if
    it answered it right (``"consistent"``: the main question and all its subquestions), 0.0 if
    not, NaN where it did not answer it; each system's units pooled (a question sits in one)."""
    rows = []
    for s in systems:
        frames = [per_main(s.data, ev)["main_right" if kind == "main" else "consistent"] if kind != "sub"
                  else sub_correct(s.data, ev).set_index("id")["right"] for ev in s.evals]
        rows.append(pd.concat(frames).astype(float).groupby(level=0).mean() if frames else pd.Series(dtype=float))
    frame = pd.DataFrame(rows).reset_index(drop=True)
    return frame.reindex(columns=sorted(frame.columns))


def mains_of(data: RuleData, ids: Sequence[str]) -> list[str]:
    """The main question of each subquestion id: the cluster a subquestion is resampled with."""
    return [data.sub(i).meta["main_id"] for i in ids]


def paired_runs(a: pd.DataFrame, b: pd.DataFrame, seed: int, clusters: Mapping[str, str] | None = None) -> Interval:
    """a − b (points) over the questions both answered (:func:`runs_by_question` frames, each with
    its own seeds), the same questions drawn for both; ``clusters``: each subquestion's main question."""
    common = [c for c in a.columns if c in set(b.columns)]
    return hierarchical_paired(a[common].to_numpy(float), b[common].to_numpy(float), seed=seed,
                               clusters=None if clusters is None else [clusters[c] for c in common])


def chance_of(data: RuleData, ids: Sequence[str], kind: str) -> np.ndarray:
    """The probability of guessing each question right: 1 / its number of options."""
    get = data.sub if kind == "sub" else data.main
    return np.array([1 / len(get(i).options) for i in ids])


def results_table(rows: Mapping[str, Mapping[str, float | MeanSD]], columns: Sequence[str] = METRICS) -> pd.DataFrame:
    """Systems × metrics (values: floats or MeanSD), plus how many questions each was scored on."""
    table = pd.DataFrame.from_dict({name: {c: r.get(c) for c in columns} for name, r in rows.items()},
                                   orient="index")
    table.index.name = "system"
    return table


def numeric(value) -> float:
    """A table cell as a number (the mean of a MeanSD)."""
    if isinstance(value, MeanSD):
        return value.mean
    if isinstance(value, Interval):
        return value.estimate
    return float("nan") if value is None else float(value)


def sample_mains(data: RuleData, n: int | None, seed: int) -> RuleData:
    """``n`` main questions drawn with ``seed`` and all their subquestions (all when ``n`` is None).

    Draws are nested: the sample of size n is the first n of one seeded permutation, so a smaller
    sample is a subset of a larger one.
    """
    if n is None or n >= len(data.mains):
        return data
    return data.subset([data.mains[i].id for i in sampling.nested_positions(len(data.mains), n, seed)])


def samples(cfg: Config, data: RuleData) -> tuple[RuleData, RuleData]:
    """The main questions (with their subquestions) the fine-tuned models answer, and those the LMs answer."""
    return (sample_mains(data, cfg.encoder.sample_mains, cfg.sample_seed),
            sample_mains(data, cfg.lm.sample_mains, cfg.sample_seed))


def alignment_sample(cfg: Config, lm_sample: RuleData) -> RuleData | None:
    """The questions whose rationale-alignment items the encoder answers (None: the follow-up is off)."""
    return lm_sample if cfg.analyses.alignment else None


def seed_label(name: str, system: System) -> str:
    return f"{name} (seed {system.info['seed']})"
