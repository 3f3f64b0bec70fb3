"""The RULE chapter's pipeline: statistics, baselines, the ReClor-trained encoder, LM prompting,
rationale alignment, the "None" analysis and the EASY/HARD extension.

Every system is evaluated into :class:`Evaluation` units (one per released split for prompted
LMs, whose prompt batch changes with the split; one unit for everything else) holding the
predicted option of each question. :func:`system_scores` turns units into the paper's metrics
(:mod:`rcstudy.metrics.rule`), either averaged over splits (mean ± sd) or pooled.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..cache import cached, fingerprint
from ..data.records import MCItem
from ..data.rule import (
    NONE_OPTION, RuleData, RulePrompts, exemplar_keys, question_block,
)
from ..metrics.rule import GIVEN_MAIN_RIGHT, METRICS, aggregate, chance_scores, none_scores, rule_scores
from ..runtime import Runtime
from ..settings import exports_dir
from ..stats import Interval, MeanSD

AGGREGATIONS = ("per_split_mean", "pooled")
SCORINGS = ("letter", "option", "generate")
SCORING_NAMES = {"letter": "letter prob.", "option": "option LL", "generate": "generated"}
EASY_HARD_FILE = "reclor_easy_hard.csv"
ANSWER_PREFIX = " The answer is Option"
ZERO_SHOT_COT = "zero_shot_cot"
COT_TRIGGER = " Let's think step by step."
ALIGNMENT_QUESTION = ('{question} \n Answer option: {option} \n Which rationale explains why this answer '
                      'option is correct or incorrect?')
NEGATION = re.compile(r"\b(not|no|never|neither|nor|cannot)\b|n't\b", re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# Evaluation units and scores


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


# --------------------------------------------------------------------------------------------
# Data statistics


def whitespace_tokens(text: str) -> list[str]:
    return text.split()


def length_table(data: RuleData, tokenizers: Mapping[str, Callable[[str], list]]) -> pd.DataFrame:
    """Mean length (tokens) of questions and options, main vs subquestion (Table 1's rows)."""
    groups = {
        ("main question", "context"): [m.context for m in data.mains],
        ("main question", "question"): [m.question for m in data.mains],
        ("main question", "option"): [o for m in data.mains for o in m.options],
        ("subquestion", "question"): [s.question for s in data.subs],
        ("subquestion", "option (rationale)"): [o for s in data.subs for o in s.options if o.strip() != NONE_OPTION],
    }
    rows = {k: {name: float(np.mean([len(tok(t)) for t in texts])) for name, tok in tokenizers.items()}
            for k, texts in groups.items()}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index = pd.MultiIndex.from_tuples(table.index, names=["", "part"])
    return table


def split_table(data: RuleData) -> pd.DataFrame:
    """Per released split: subquestions, main questions, selective, None offered, None the answer."""
    f = data.frame()
    g = f.groupby("split")
    return pd.DataFrame({"subquestions": g.size(), "main questions": g["main_id"].nunique(),
                         "selective": g["selective"].sum(), "None offered": g["has_none"].sum(),
                         "None is the answer": g["none_correct"].sum()}).astype(int)


def stem_table(data: RuleData, words: int = 4, top: int = 5) -> pd.DataFrame:
    """The most frequent first ``words`` words of subquestion texts, by subquestion type."""
    rows = []
    for kind, selective in (("selective", True), ("eliminative", False)):
        stems = Counter(" ".join(s.question.split()[:words]) for s in data.subs if s.meta["selective"] == selective)
        rows += [{"type": kind, "question starts with": stem, "count": n} for stem, n in stems.most_common(top)]
    return pd.DataFrame(rows).set_index(["type", "question starts with"])


def negation_table(data: RuleData) -> pd.DataFrame:
    """How many subquestion texts contain a negation (not, n't, no, never, ...), by type."""
    rows = {}
    for kind, selective in (("selective", True), ("eliminative", False)):
        qs = [s.question for s in data.subs if s.meta["selective"] == selective]
        n_neg = sum(bool(NEGATION.search(q)) for q in qs)
        rows[kind] = {"subquestions": len(qs), "with a negation": n_neg, "share (%)": 100 * n_neg / max(len(qs), 1)}
    return pd.DataFrame.from_dict(rows, orient="index")


def leaked_mains(unit: RuleData, keys: set[tuple[str, tuple[str, ...]]]) -> set[str]:
    """Main questions of ``unit`` that appear, or one of whose subquestions appears, among exemplars
    (keys: :func:`~rcstudy.data.rule.exemplar_keys`)."""
    return ({m.id for m in unit.mains if (m.question, tuple(m.options)) in keys}
            | {s.meta["main_id"] for s in unit.subs if (s.question, tuple(s.options)) in keys})


def prompt_table(prompts: RulePrompts, data: RuleData) -> pd.DataFrame:
    """Every released few-shot batch: length, None-answer exemplar, and evaluation items it contains."""
    rows = []
    for (shots, family), batches in sorted(prompts.batches.items()):
        for b in batches:
            rows.append({"shots": shots, "family": family, "batch": b.batch, "characters": len(b.text),
                         "None-answer exemplar": b.has_none_correct_exemplar,
                         "main questions leaked": len(leaked_mains(data, exemplar_keys(b)))})
    return pd.DataFrame(rows).set_index(["shots", "family", "batch"])


def sample_mains(data: RuleData, n: int | None, seed: int) -> RuleData:
    """``n`` main questions drawn with ``seed`` and all their subquestions (all when ``n`` is None).

    Draws are nested: the sample of size n is the first n of one seeded permutation, so a smaller
    sample is a subset of a larger one.
    """
    if n is None or n >= len(data.mains):
        return data
    order = np.random.default_rng(seed).permutation(len(data.mains))
    return data.subset([data.mains[i].id for i in order[:n]])


# --------------------------------------------------------------------------------------------
# Baselines


def _unit(data: RuleData, choose: Callable[[MCItem], int]) -> Evaluation:
    return Evaluation(None, {m.id: choose(m) for m in data.mains}, {s.id: choose(s) for s in data.subs})


def position_baseline(data: RuleData, position: int) -> System:
    """Always the option at ``position`` (the last option where an item has fewer)."""
    return System(f"always Option{position}", "baseline",
                  [_unit(data, lambda it: min(position, len(it.options) - 1))], data)


def length_baseline(data: RuleData, longest: bool = True) -> System:
    """The longest (or shortest) option in whitespace tokens; ties go to the first."""
    pick = np.argmax if longest else np.argmin
    return System(f"{'longest' if longest else 'shortest'} option", "baseline",
                  [_unit(data, lambda it: int(pick([len(o.split()) for o in it.options])))], data)


# --------------------------------------------------------------------------------------------
# The encoder trained on ReClor (main questions of RULE held out)


def alignment_items(data: RuleData) -> list[MCItem]:
    """The rationale-alignment task (§5): given the context, the main question and one of its
    options, pick which of the four rationales is the one about that option."""
    return [MCItem(f"{s.id}/alignment", s.context,
                   ALIGNMENT_QUESTION.format(question=s.meta["main_question"], option=s.meta["main_option_text"]),
                   s.options, s.label, s.meta) for s in data.subs]


def reclor_training_items(reclor_train: Sequence[MCItem], data: RuleData) -> list[MCItem]:
    """ReClor train without the RULE main questions (the paper's fine-tuning set), order kept."""
    held = {m.id for m in data.mains}
    return [it for it in reclor_train if it.id not in held and it.label is not None]


@dataclass(frozen=True)
class EncoderSetup:
    """A model fine-tuned on ReClor: a multiple-choice encoder (``MCConfig``, all weights, as the
    paper's DeBERTa-v3) or a text-to-text model (``Seq2SeqConfig``, UnifiedQA's format).

    ``train_questions`` draws that many ReClor training questions with the ReClor chapter's
    sampler (None: all), and the RULE main questions among them are then dropped.
    """

    cfg: object  # rcstudy.models.mc.MCConfig or rcstudy.models.seq2seq.Seq2SeqConfig
    train_questions: int | None = None
    subsample_seed: int = 0

    @property
    def seed(self) -> int:
        return self.cfg.seed


def encoder_logits(setup: EncoderSetup, reclor_train: Sequence[MCItem], rule_all: RuleData,
                   eval_sets: Mapping[str, Sequence[MCItem]], rt: Runtime) -> dict:
    """Option logits of the ReClor-trained model on each evaluation set (cached), its training
    losses and its training size."""
    from ..models import mc, seq2seq
    from .reclor import subsample

    pool = subsample(list(reclor_train), setup.train_questions, setup.subsample_seed)
    train = reclor_training_items(pool, rule_all)
    if isinstance(setup.cfg, mc.MCConfig):
        out = mc.finetune_and_predict(setup.cfg, train, dict(eval_sets), rt)
    elif isinstance(setup.cfg, seq2seq.Seq2SeqConfig):
        out = seq2seq.finetune_mc_and_predict(setup.cfg, train, dict(eval_sets), rt)
    else:
        raise TypeError(f"an encoder setup needs an MCConfig or a Seq2SeqConfig, got {type(setup.cfg).__name__}")
    return {**out, "train questions": len(train)}


def encoder_system(name: str, setup: EncoderSetup, reclor_train: Sequence[MCItem], rule_all: RuleData,
                   sample: RuleData, rt: Runtime, alignment: RuleData | None = None) -> System:
    """Evaluate the ReClor-trained encoder on ``sample`` (and the alignment task on ``alignment``)."""
    sets = {"main": list(sample.mains), "sub": list(sample.subs)}
    if alignment is not None:
        sets["alignment"] = alignment_items(alignment)
    logits = encoder_logits(setup, reclor_train, rule_all, sets, rt)
    main_pred = logits["main"].argmax(1)
    sub_pred = logits["sub"].argmax(1)
    ev = Evaluation(None, {m.id: int(p) for m, p in zip(sample.mains, main_pred)},
                    {s.id: int(p) for s, p in zip(sample.subs, sub_pred)})
    info = {"seed": setup.seed, "train questions": logits["train questions"], "losses": logits["losses"]}
    if alignment is not None:
        info["alignment"] = alignment_frame(alignment_items(alignment), logits["alignment"].argmax(1))
    return System(name, "ReClor-trained", [ev], sample, info)


def alignment_frame(items: Sequence[MCItem], pred: Sequence[int]) -> pd.DataFrame:
    return pd.DataFrame({"id": [it.id for it in items], "selective": [it.meta["selective"] for it in items],
                         "right": [int(p) == it.label for it, p in zip(items, pred)]})


# --------------------------------------------------------------------------------------------
# Prompting a causal LM with the released prompts


@dataclass(frozen=True)
class PromptSetting:
    """``shots`` exemplars of ``family`` (vanilla: ReClor questions; subq: RULE subquestions; the
    cot_* families, or zero_shot_cot), scored by answer-letter probability (``letter``), by the
    option text's mean log-likelihood per token (``option``), or read from greedy output (``generate``)."""

    shots: int
    family: str = "vanilla"
    scoring: str = "letter"

    def __post_init__(self):
        if self.scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {SCORINGS}, got {self.scoring!r}")
        if self.family.startswith("cot") or self.family == ZERO_SHOT_COT:
            if self.scoring != "generate":
                raise ValueError("chain-of-thought prompts are read from generated text (scoring='generate')")

    @property
    def setting(self) -> str:
        return {0: "zero-shot", 1: "one-shot", 5: "five-shot"}.get(self.shots, f"{self.shots}-shot")

    @property
    def label(self) -> str:
        if self.family == ZERO_SHOT_COT:
            head = "zero-shot CoT"
        elif self.shots == 0:
            head = "zero-shot"
        else:
            source = {"vanilla": "ReClor exemplars", "subq": "RULE exemplars"}.get(self.family,
                                                                                   self.family.replace("_", " "))
            head = f"{self.setting}, {source}"
        return f"{head} ({SCORING_NAMES[self.scoring]})"

    @classmethod
    def parse(cls, spec: str) -> "PromptSetting":
        """``"0:vanilla:letter"`` → ``PromptSetting(0, "vanilla", "letter")`` (the parameter-cell form)."""
        shots, family, scoring = spec.split(":")
        return cls(int(shots), family, scoring)


def prompt_text(prompts: RulePrompts, setting: PromptSetting, batch: int, item: MCItem,
                rationales: Sequence[str] = ()) -> str:
    """The full prompt for ``item``: the released exemplars (or instruction), then the question
    (followed by one ``Rationale:`` line per rationale, the paper's Table 5 setting)."""
    block = question_block(item.context, item.question, item.options, rationales)
    if setting.family == ZERO_SHOT_COT:
        return prompts.instruction + block + COT_TRIGGER
    if setting.shots == 0:
        return prompts.instruction + block
    return prompts.get(setting.shots, setting.family, batch).text + " " + block


def parse_answer(text: str) -> int:
    """The option index a generated answer names (``answer is OptionK`` first), else -1."""
    m = re.search(r"answer is\s*Option\s*([0-9])", text, re.IGNORECASE) or re.search(r"Option\s*([0-9])", text)
    return int(m.group(1)) if m else -1


class LazyLM:
    """Loads the causal LM only when a prediction is not already cached."""

    def __init__(self, name: str, rt: Runtime, max_length: int = 2048):
        self.name, self.rt, self.max_length = name, rt, max_length

    @cached_property
    def lm(self):
        from ..models.lm import load_lm

        return load_lm(self.name, self.rt, max_length=self.max_length)


def _score(lm, texts: Sequence[str], options: Sequence[Sequence[str]], scoring: str, max_new_tokens: int) -> list[int]:
    if scoring == "generate":
        out = lm.generate(list(texts), max_new_tokens, stop=["\n Context:", "Context:"])
        return [parse_answer(t) if parse_answer(t) < len(o) else -1 for t, o in zip(out, options)]
    if scoring == "letter":
        n_opt = max(len(o) for o in options)
        digits = [str(k) for k in range(n_opt)]
        try:
            logp = lm.next_token_logprobs([t + ANSWER_PREFIX for t in texts], digits)
        except ValueError:  # a tokenizer whose digits share a first token: score whole continuations
            ctx = [t for t in texts for _ in digits]
            logp = lm.loglik(ctx, [ANSWER_PREFIX + d for _ in texts for d in digits]).reshape(len(texts), n_opt)
        return [int(np.argmax(row[:len(o)])) for row, o in zip(logp, options)]
    ctx = [t for t, o in zip(texts, options) for _ in o]
    scores, counts = lm.loglik(ctx, [" " + opt for o in options for opt in o], return_counts=True)
    per_token = scores / np.maximum(counts, 1)
    out, k = [], 0
    for o in options:
        out.append(int(np.argmax(per_token[k:k + len(o)])))
        k += len(o)
    return out


def lm_predict(lazy: LazyLM, texts: Sequence[str], options: Sequence[Sequence[str]], scoring: str,
               max_new_tokens: int = 8) -> list[int]:
    """Predicted option per prompt (cached per model, scoring and exact prompt texts; duplicates run once)."""
    if not texts:
        return []
    unique = list(dict.fromkeys(zip(texts, map(tuple, options))))
    params = {"model": lazy.name, "scoring": scoring, "max_new_tokens": max_new_tokens if scoring == "generate" else None,
              "max_length": lazy.max_length, "prompts": fingerprint(unique), "n": len(unique)}
    preds = cached("rule_lm_predictions", params,
                   lambda: _score(lazy.lm, [t for t, _ in unique], [o for _, o in unique], scoring, max_new_tokens))
    lookup = dict(zip(unique, preds))
    return [lookup[(t, tuple(o))] for t, o in zip(texts, options)]


def prompting_system(lazy: LazyLM, prompts: RulePrompts, setting: PromptSetting, sample: RuleData, *,
                     exclude_exemplar_items: bool = True, max_new_tokens: int = 8,
                     rationales: Mapping[str, Sequence[str]] | None = None) -> System:
    """Evaluate one prompt setting on ``sample``: split k uses prompt batch k-1 (per the release).

    With ``exclude_exemplar_items`` a main question is left out of split k (with its subquestions)
    when it or one of its subquestions is an exemplar of that split's prompt. All prompts of the
    setting go to the model in one cached call, so a prompt shared by two splits is asked once.
    A sample without subquestions is one unit answered with batch 0. ``rationales`` maps a
    question id to the rationales appended to its prompt.
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
    texts = [prompt_text(prompts, setting, batch, it, rationales.get(it.id, ())) for batch, it in items]
    preds = lm_predict(lazy, texts, [it.options for _, it in items], setting.scoring, max_new_tokens)
    evals, start = [], 0
    for k, _, unit in units:
        n_main, n = len(unit.mains), len(unit.mains) + len(unit.subs)
        chunk = preds[start:start + n]
        start += n
        evals.append(Evaluation(k, {m.id: p for m, p in zip(unit.mains, chunk[:n_main])},
                                {s.id: p for s, p in zip(unit.subs, chunk[n_main:])}))
    failures, total = sum(p < 0 for p in preds), len(preds)
    info = {"excluded mains": excluded, "unparsed answers": failures, "answers": total,
            "none exemplar by split": {k: prompts.get(setting.shots, setting.family, k - 1).has_none_correct_exemplar
                                       for k in splits if k is not None and setting.shots > 0
                                       and setting.family != ZERO_SHOT_COT}}
    return System(f"{lazy.name}, {setting.label}", setting.setting, evals, sample, info)


def lm_alignment(lazy: LazyLM, prompts: RulePrompts, sample: RuleData) -> pd.DataFrame:
    """Zero-shot rationale alignment with the LM (answer-letter probability)."""
    items = alignment_items(sample)
    pred = lm_predict(lazy, [prompts.instruction + question_block(it.context, it.question, it.options)
                             for it in items], [it.options for it in items], "letter")
    return alignment_frame(items, pred)


# --------------------------------------------------------------------------------------------
# Rationales appended to the main questions (Table 5)

#: Table 5's variants: which rationales are appended (selective, eliminative).
RATIONALE_VARIANTS = {
    "no rationale": (False, False),
    "+ selective": (True, False),
    "+ eliminative": (False, True),
    "+ selective and eliminative": (True, True),
}


def main_rationales(data: RuleData, main_id: str, selective: bool, eliminative: bool) -> tuple[str, ...]:
    """The rationales Table 5 appends to a main question: the gold answers of its selective and/or
    eliminative subquestions, in the order of the main options they are about. A subquestion
    whose answer is "None of the above choices" has no valid rationale and adds nothing."""
    by_option: dict[int, str] = {}
    for s in data.subs_of(main_id):
        wanted = selective if s.meta["selective"] else eliminative
        if wanted and not s.meta["none_correct"]:
            by_option.setdefault(s.meta["main_option"], s.options[s.label])
    return tuple(by_option[k] for k in sorted(by_option))


def rationale_mains(data: RuleData) -> RuleData:
    """The main questions (no subquestions) with a selective and at least one eliminative rationale,
    so that every variant of Table 5 is asked on the same questions."""
    return RuleData(tuple(m for m in data.mains if main_rationales(data, m.id, True, False)
                          and main_rationales(data, m.id, False, True)), ())


def rationale_systems(lazy: LazyLM, prompts: RulePrompts, setting: PromptSetting, sample: RuleData, *,
                      exclude_exemplar_items: bool = True) -> dict[str, System]:
    """Table 5's analog: the main questions of ``sample`` that take every variant, answered with
    each variant's rationales appended (one unit, prompt batch 0)."""
    mains = rationale_mains(sample)
    return {variant: prompting_system(lazy, prompts, setting, mains, exclude_exemplar_items=exclude_exemplar_items,
                                      rationales={m.id: main_rationales(sample, m.id, sel, elim) for m in mains.mains})
            for variant, (sel, elim) in RATIONALE_VARIANTS.items()}


def rationale_table(runs: Mapping[str, Mapping[str, System]]) -> pd.DataFrame:
    """MainQ accuracy (%) per run (rows) and variant (columns), and the main questions asked."""
    rows = {}
    for name, by_variant in runs.items():
        row = {v: unit_scores(s.data, s.evals[0])["MainQ"] if s.evals else float("nan") for v, s in by_variant.items()}
        row["main questions"] = max((len(s.evals[0].main_pred) for s in by_variant.values() if s.evals), default=0)
        rows[name] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "system"
    return table


# --------------------------------------------------------------------------------------------
# Tables


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


def by_subquestion_count(system: System) -> pd.DataFrame:
    """Consistency and MainQ-wise SubQ accuracy by how many subquestions a main question has."""
    ev = system.evals[0] if len(system.evals) == 1 else pooled(system.data, system.evals)
    f = per_main(system.data, ev)
    g = f.groupby("n_subs")
    table = pd.DataFrame({"main questions": g.size(), "MainQ": 100 * g["main_right"].mean(),
                          "MainQ-wise SubQ": 100 * g["sub_acc"].mean(), "Consistency": 100 * g["consistent"].mean()})
    table.index.name = "subquestions of the main question"
    return table


# --------------------------------------------------------------------------------------------
# Length (Appendix I) and ReClor question type (Appendix L)

#: ReClor question types from the question text, first match wins (the ReClor spec's keyword
#: rules; a stand-in: ReClor annotates types on its test set only, and RULE uses train questions).
TYPE_RULES = (
    ("Match Flaws", r"\bflawed (pattern|reasoning)\b.*\bsimilar\b|\bsimilar\b.*\bflawed\b"),
    ("Match the Structure", r"\bpattern of reasoning\b.*\bsimilar\b|\bsimilar in (its|their) reasoning\b|\bparallel"),
    ("Identify a Flaw", r"\bflaw|\bvulnerable to (the )?criticism\b|\bquestionable\b"),
    ("Role", r"\broles?\b"),
    ("Technique", r"\btechnique\b|\bproceeds by\b|\bmethod of (reasoning|argument)\b|\bresponds?\b.*\bby\b"),
    ("Dispute", r"\bdisagree|\bdispute|\bpoint at issue\b"),
    ("Principle", r"\bprinciple"),
    ("Explain or Resolve", r"\bexplain|\bresolve|\bdiscrepancy\b|\bparadox"),
    ("Sufficient Assumptions",
     r"\bif assumed\b|\bfollows logically if\b|\bproperly drawn if\b|\benables?\b.*\binferred\b"),
    ("Necessary Assumptions", r"\bassumption|\bassumes?\b|\bdepends on\b|\brelies on\b|\brequired\b"),
    ("Weaken", r"\bweaken|\bundermine|\bcasts?\b.*\bdoubt\b|\bcalls? into question\b|\bchalleng"),
    ("Strengthen", r"\bstrengthen|\bsupports? the (argument|conclusion|claim)\b|\bjustify"),
    ("Evaluation", r"\bevaluat"),
    ("Conclusion/Main Point", r"\bmain (point|conclusion)\b|\boverall conclusion\b|\bexpresses the conclusion\b"),
    ("Most Strongly Supported", r"\bmost strongly support|\bbest supported\b"),
    ("Implication", r"\bmust (also )?be true\b|\blogically follows\b|\bproperly inferred\b|\bcan be inferred\b"),
)
#: Question types with fewer subquestions are pooled in :func:`type_independence`'s test.
TYPE_MIN_SUBQUESTIONS = 30
_TYPE_PATTERNS = tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in TYPE_RULES)


def question_type(question: str) -> str:
    """The ReClor question type a keyword rule assigns to a question text ("Others" if none fits)."""
    return next((name for name, rx in _TYPE_PATTERNS if rx.search(question)), "Others")


def option_words(item: MCItem) -> float:
    """Mean whitespace words per option, "None of the above choices" left out."""
    lengths = [len(o.split()) for o in item.options if o.strip() != NONE_OPTION]
    return float(np.mean(lengths)) if lengths else float("nan")


def question_frame(systems: Sequence[System]) -> pd.DataFrame:
    """One row per question the systems answered: main question or subquestion, its length in
    words (question text; mean option), and the share of right answers over every unit of every
    system given (seeds, splits)."""
    answers: dict[tuple[str, str], list[bool]] = {}
    items: dict[tuple[str, str], MCItem] = {}
    for system in systems:
        for ev in system.evals:
            for kind, preds, get in (("main question", ev.main_pred, system.data.main),
                                     ("subquestion", ev.sub_pred, system.data.sub)):
                for q, p in preds.items():
                    items[(kind, q)] = get(q)
                    answers.setdefault((kind, q), []).append(p == items[(kind, q)].label)
    return pd.DataFrame([{"kind": kind, "id": q, "question words": len(items[(kind, q)].question.split()),
                          "option words": option_words(items[(kind, q)]), "right": float(np.mean(ok))}
                         for (kind, q), ok in answers.items()])


def accuracy_by_length(frame: pd.DataFrame, column: str, bins: int = 4) -> pd.DataFrame:
    """Accuracy (%) in ``bins`` quantile bins of ``column``, main questions and subquestions
    binned separately (their lengths differ); each bin is placed at its median length."""
    rows = []
    for kind, g in frame.dropna(subset=[column]).groupby("kind"):
        cut = pd.qcut(g[column], min(bins, g[column].nunique()), duplicates="drop")
        for _, b in g.groupby(cut, observed=True):
            rows.append({"kind": kind, "length": float(b[column].median()), "questions": len(b),
                         "accuracy": 100 * b["right"].mean()})
    return pd.DataFrame(rows, columns=["kind", "length", "questions", "accuracy"])


def restrict(data: RuleData, ev: Evaluation, main_ids: set[str]) -> Evaluation:
    """``ev`` on the main questions ``main_ids`` and their subquestions only."""
    return Evaluation(ev.split, {m: p for m, p in ev.main_pred.items() if m in main_ids},
                      {s: p for s, p in ev.sub_pred.items() if data.sub(s).meta["main_id"] in main_ids})


def by_type_table(systems: Sequence[System], types: Mapping[str, str]) -> pd.DataFrame:
    """The metrics per question type of the main question (``types``: main id → type), the mean
    over ``systems`` (e.g. one per seed); split units are pooled first."""
    rows = {}
    for t in sorted(set(types.values())):
        ids = {m for m, v in types.items() if v == t}
        per = []
        for system in systems:
            ev = system.evals[0] if len(system.evals) == 1 else pooled(system.data, system.evals)
            per.append(unit_scores(system.data, restrict(system.data, ev, ids)))
        if not per[0]["main questions"]:
            continue
        rows[t] = {"main questions": per[0]["main questions"], "subquestions": per[0]["subquestions"],
                   **{k: float(np.mean([p[k] for p in per])) for k in METRICS}}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "question type (keyword rule)"
    return table


def type_independence(system: System, types: Mapping[str, str],
                      min_subquestions: int = TYPE_MIN_SUBQUESTIONS) -> tuple[float, int]:
    """Chi-square test that subquestion correctness does not depend on the main question's type
    (types with fewer than ``min_subquestions`` pooled into one group): (p-value, groups)."""
    from scipy.stats import chi2_contingency

    ev = system.evals[0] if len(system.evals) == 1 else pooled(system.data, system.evals)
    f = sub_correct(system.data, ev)
    f["type"] = f["main_id"].map(types)
    counts = f["type"].value_counts()
    f["type"] = f["type"].where(f["type"].map(counts) >= min_subquestions, "(small types)")
    table = pd.crosstab(f["type"], f["right"])
    if table.shape[0] < 2 or table.shape[1] < 2:
        return float("nan"), table.shape[0]
    return float(chi2_contingency(table.to_numpy())[1]), table.shape[0]


# --------------------------------------------------------------------------------------------
# Extension: ReClor's EASY/HARD split on the RULE main questions


def load_easy_hard(path: Path | None = None) -> pd.Series | None:
    """``id_string → "EASY"/"HARD"`` from the ReClor chapter's export, or ``None`` if it is absent."""
    path = Path(path) if path is not None else exports_dir() / EASY_HARD_FILE
    if not path.is_file():
        return None
    frame = pd.read_csv(path)
    column = next((c for c in ("subset", "split") if c in frame and frame[c].isin(["EASY", "HARD"]).all()), None)
    if "id_string" not in frame or column is None:
        raise ValueError(f"{path}: expected columns id_string and subset (EASY/HARD); found {list(frame.columns)}")
    return frame.drop_duplicates("id_string", keep="last").set_index("id_string")[column]


def difference_interval(a: Sequence[float], b: Sequence[float], *, n_boot: int = 2000, seed: int = 0,
                        level: float = 0.95) -> Interval:
    """Percentile bootstrap interval of mean(a) − mean(b), resampling each group separately (×100)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0 or b.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), level)
    rng = np.random.default_rng(seed)
    diffs = (a[rng.integers(0, a.size, (n_boot, a.size))].mean(1) - b[rng.integers(0, b.size, (n_boot, b.size))].mean(1))
    lo, hi = np.quantile(diffs, [(1 - level) / 2, (1 + level) / 2])
    return Interval(100 * float(a.mean() - b.mean()), 100 * float(lo), 100 * float(hi), level)


def easy_hard_table(systems: Mapping[str, System], labels: pd.Series) -> pd.DataFrame:
    """Per system and ReClor subset of the main question: MainQ, MainQ-wise SubQ and Consistency,
    with the HARD − EASY difference of MainQ-wise SubQ and its bootstrap interval."""
    rows = []
    for name, system in systems.items():
        ev = system.evals[0] if len(system.evals) == 1 else pooled(system.data, system.evals)
        f = per_main(system.data, ev).join(labels.rename("subset"), how="inner").dropna(subset=["sub_acc"])
        easy, hard = f[f["subset"] == "EASY"], f[f["subset"] == "HARD"]
        row = {"system": name, "EASY mains": len(easy), "HARD mains": len(hard)}
        for part, g in (("EASY", easy), ("HARD", hard)):
            row[f"MainQ {part}"] = 100 * g["main_right"].mean() if len(g) else np.nan
            row[f"MainQ-wise SubQ {part}"] = 100 * g["sub_acc"].mean() if len(g) else np.nan
            row[f"Consistency {part}"] = 100 * g["consistent"].mean() if len(g) else np.nan
        row["SubQ: HARD − EASY"] = difference_interval(hard["sub_acc"], easy["sub_acc"])
        rows.append(row)
    return pd.DataFrame(rows).set_index("system")
