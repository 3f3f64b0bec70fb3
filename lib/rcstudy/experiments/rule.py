"""The RULE chapter's pipeline: statistics, baselines, the ReClor-trained encoder, LM prompting,
rationale alignment, the "None" analysis and the EASY/HARD extension.

Every system is evaluated into :class:`Evaluation` units (one per released split for prompted
LMs, whose prompt batch changes with the split; one unit for everything else) holding the
predicted option of each question. :func:`system_scores` turns units into the paper's metrics
(:mod:`rcstudy.metrics.rule`), either averaged over splits (mean ± sd) or pooled. :func:`run`
computes everything the page shows (tables, quoted facts, figure data, claim evidence) from a
:class:`Config`.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from .. import exports, learning, papers, sampling
from ..config import ChapterConfig, param, section
from ..data.records import MCItem
from ..data.rule import NONE_OPTION, RuleData, RulePrompts, exemplar_keys
from ..errors import DataFileMissing, ModelUnavailable
from ..jobs import Job, Tokens, causal_option_tokens, generation_tokens, loaded_once, mc_tokens, seq2seq_tokens
from ..metrics.rule import GIVEN_MAIN_RIGHT, METRICS, aggregate, chance_scores, none_scores, rule_scores
from ..models.registry import ModelName
from ..models.rule_lm import LazyLM, lm_predict
from ..papers.rule import TYPE_MIN_SUBQUESTIONS
from ..prompts import rule as prompt_formats
from ..prompts.rule import ZERO_SHOT_COT
from ..report import ChapterResults, ClaimLog, cell, md_text, paper_vs_ours
from ..runtime import Runtime
from ..settings import exports_dir
from ..stats import (Interval, MeanSD, bootstrap_ci, difference_interval, hierarchical_ci, hierarchical_paired, spread_ci,
                     subset_difference)
from . import shared

AGGREGATIONS = ("per_split_mean", "pooled")
SCORINGS = ("letter", "option", "generate")
SCORING_NAMES = {"letter": "letter prob.", "option": "option LL", "generate": "generated"}
ANSWER_TOKENS = 8  # generated tokens read for an answer, unless a setting says otherwise
NEGATION = re.compile(r"\b(not|no|never|neither|nor|cannot)\b|n't\b", re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# Configuration (defaults: the quick profile)


def _check_settings(specs: Sequence[str], where: str) -> None:
    for spec in specs:
        try:
            PromptSetting.parse(spec)
        except ValueError as e:
            raise ValueError(f"{where}: {spec!r} is not shots:family:scoring ({e})") from None


_SHARED = shared.RECLOR_ENCODER


@dataclass(frozen=True)
class EncoderSection:
    """The multiple-choice encoder fine-tuned on ReClor (the paper's DeBERTa-v3), every weight.
    The defaults are the shared ReClor model's settings (:mod:`rcstudy.experiments.shared`): the
    RULE chapter reads the model the ReClor chapter trained."""

    model: ModelName = param(_SHARED.model, "multiple-choice encoder fine-tuned on ReClor (full: a Hub name)")
    epochs: float = param(_SHARED.epochs, "training epochs")
    lr: float = param(_SHARED.lr, "AdamW learning rate")
    batch_size: int = param(_SHARED.batch_size, "questions per step")
    max_length: int = param(_SHARED.max_length, "tokens of context + question + option; the context is cut first")
    train_questions: int | None = param(
        None, "ReClor training questions drawn, RULE main questions then dropped; the text-to-text models too (None: all)")
    sample_mains: int | None = param(
        300, "main questions (with all their subquestions) every fine-tuned model is scored on (None: all)")

    def mc_config(self, seed: int):
        """The engine's configuration for one seed."""
        from ..models.mc import MCConfig

        return MCConfig(model=self.model, fields="CQA", max_length=self.max_length, epochs=self.epochs, lr=self.lr,
                        batch_size=self.batch_size, seed=seed)


@dataclass(frozen=True)
class Seq2SeqSection:
    """Text-to-text models fine-tuned on ReClor in UnifiedQA's format (the paper's UnifiedQA-v2)."""

    models: tuple[ModelName, ...] = param((), "text-to-text models fine-tuned on ReClor in UnifiedQA's format (full: UnifiedQA-v2)")
    epochs: int = param(1, "training epochs")
    lr: float = param(1e-4, "Adafactor learning rate (constant)")
    batch_size: int = param(8, "questions per step")
    max_length: int = param(512, "input tokens; the context is cut first")

    def seq2seq_config(self, model: str, seed: int):
        """The engine's configuration for one model and seed (targets: one option, 128 tokens at most)."""
        from ..models.seq2seq import Seq2SeqConfig

        return Seq2SeqConfig(model=model, max_src_len=self.max_length, max_tgt_len=128, epochs=self.epochs,
                             lr=self.lr, optimizer="adafactor", batch_size=self.batch_size, seed=seed)


@dataclass(frozen=True)
class LMSection:
    """Causal language models prompted with the released prompts."""

    models: tuple[ModelName, ...] = param(("smollm2-135m",), "causal LMs prompted with the released prompts")
    # quick: the zero-shot setting only; each one-shot setting costs about 3 min of the hour on 2 cores
    settings: tuple[str, ...] = param(("0:vanilla:letter",), "prompt settings, shots:family:scoring")
    sample_mains: int | None = param(100, "main questions (with all their subquestions) the LMs answer (None: all)")
    max_length: int = param(2048, "tokens; longer prompts are cut from the left")
    cot_max_new_tokens: int = param(256, "generated tokens for chain-of-thought settings")
    aggregation: Literal["per_split_mean", "pooled"] = param(
        "per_split_mean", "LM scores: mean ± sd over the 5 splits, or pooled")
    exclude_exemplar_items: bool = param(True, "leave out questions that are exemplars of their own prompt")

    def __post_init__(self):
        _check_settings(self.settings, "lm.settings")


@dataclass(frozen=True)
class AnalysesSection:
    """The paper's follow-ups and our extensions: which run, and their settings."""

    alignment: bool = param(True, "the rationale-alignment follow-up (§5)")
    rationale_augmentation: bool = param(True, "Table 5: rationales appended to the main questions (LM sample)")
    rationale_settings: tuple[str, ...] = param(("0:vanilla:letter",), "prompt settings for Table 5 (shots:family:scoring)")
    context_ablation: bool = param(True, "Appendix M: the evaluations again without the context")
    ablation_settings: tuple[str, ...] = param(("0:vanilla:letter",), "LM settings re-run without it")
    length: bool = param(True, "Appendix I: accuracy against question and option length")
    length_bins: int = param(4, "quantile bins per kind of question")
    types: bool = param(True, "Appendix L: accuracy by ReClor question type (keyword rule)")

    def __post_init__(self):
        _check_settings(self.rationale_settings, "analyses.rationale_settings")
        _check_settings(self.ablation_settings, "analyses.ablation_settings")


@dataclass(frozen=True)
class Config(ChapterConfig):
    """The RULE chapter's parameters; the defaults are the quick profile (the book's default)."""

    chapter = "rule"
    datasets = ("rule", "reclor")  # ReClor train: the fine-tuned models' training set
    encoder: EncoderSection = section(EncoderSection, "the multiple-choice encoder fine-tuned on ReClor")
    seq2seq: Seq2SeqSection = section(Seq2SeqSection, "text-to-text models fine-tuned on ReClor")
    lm: LMSection = section(LMSection, "the prompted language models")
    analyses: AnalysesSection = section(AnalysesSection, "the follow-up analyses and their settings")
    seeds: tuple[int, ...] = param((_SHARED.seed,), "training seeds of every fine-tuned model", ge=0)
    sample_seed: int = param(0, "seed of every draw (training questions, main-question samples, bootstrap)", ge=0)

    def __post_init__(self):
        if not self.seeds:
            raise ValueError("seeds: at least one seed")


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
    return data.subset([data.mains[i].id for i in sampling.nested_positions(len(data.mains), n, seed)])


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


#: Words too common to count as shared between an option and the text it is matched against.
OVERLAP_STOPWORDS = frozenset("a an the of to and or in on at for by with as is are was were be been it its this "
                              "that these those not no which what why who from than then so if but".split())


def content_words(text: str) -> set[str]:
    """The distinct lower-cased words of ``text`` (letters, digits, apostrophes) less :data:`OVERLAP_STOPWORDS`."""
    return set(re.findall(r"[a-z0-9']+", text.lower())) - OVERLAP_STOPWORDS


def overlap_choice(item: MCItem, with_context: bool = False) -> int:
    """The option whose content words are most often found in the question (and the context, with
    ``with_context``), as a share of the option's own content words; ties go to the first.

    A surface cue with no reading: a subquestion's question restates the main option it is about,
    and its answer is the rationale written for that option (the other options are the other
    options' rationales), so the answer tends to share the question's words."""
    reference = content_words(f"{item.context} {item.question}" if with_context else item.question)
    shares = [len(w & reference) / len(w) if (w := content_words(o)) else 0.0 for o in item.options]
    return int(np.argmax(shares))


def overlap_baseline(data: RuleData, with_context: bool = False) -> System:
    """:func:`overlap_choice` on every question of ``data``."""
    return System(f"most words shared with the {'context and ' if with_context else ''}question", "baseline",
                  [_unit(data, lambda it: overlap_choice(it, with_context))], data)


# --------------------------------------------------------------------------------------------
# The encoder trained on ReClor (main questions of RULE held out)


def alignment_items(data: RuleData) -> list[MCItem]:
    """The rationale-alignment task (§5): given the context, the main question and one of its
    options, pick which of the four rationales is the one about that option."""
    return [MCItem(f"{s.id}/alignment", s.context,
                   prompt_formats.alignment_question(s.meta["main_question"], s.meta["main_option_text"]),
                   s.options, s.label, s.meta) for s in data.subs]


@dataclass(frozen=True)
class EncoderSetup:
    """A model fine-tuned on ReClor: a multiple-choice encoder (``MCConfig``, all weights, as the
    paper's DeBERTa-v3) or a text-to-text model (``Seq2SeqConfig``, UnifiedQA's format).

    ``train_questions`` draws that many ReClor training questions (:func:`rcstudy.sampling.draw`,
    the ReClor chapter's draw; None: all), and the RULE main questions among them are then dropped.
    """

    cfg: object  # rcstudy.models.mc.MCConfig or rcstudy.models.seq2seq.Seq2SeqConfig
    train_questions: int | None = None
    subsample_seed: int = 0

    @property
    def seed(self) -> int:
        return self.cfg.seed


def training_questions(setup: EncoderSetup, reclor_train: Sequence[MCItem], rule_all: RuleData) -> list[MCItem]:
    """The ReClor questions a model learns from: the setup's draw, without RULE's main questions."""
    pool = sampling.draw(list(reclor_train), setup.train_questions, setup.subsample_seed)
    return shared.reclor_training_questions(pool, {m.id for m in rule_all.mains})


def encoder_eval_sets(sample: RuleData, alignment: RuleData | None = None) -> dict[str, list[MCItem]]:
    """What a fine-tuned model answers: the main questions and subquestions of ``sample`` and the
    alignment items of ``alignment``."""
    sets = {"main": list(sample.mains), "sub": list(sample.subs)}
    if alignment is not None:
        sets["alignment"] = alignment_items(alignment)
    return sets


def encoder_logits(setup: EncoderSetup, reclor_train: Sequence[MCItem], rule_all: RuleData,
                   eval_sets: Mapping[str, Sequence[MCItem]], rt: Runtime) -> dict:
    """Option logits of the ReClor-trained model on each evaluation set (cached), its training
    losses and its training size."""
    from ..models import mc, seq2seq

    train = training_questions(setup, reclor_train, rule_all)
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
    logits = encoder_logits(setup, reclor_train, rule_all, encoder_eval_sets(sample, alignment), rt)
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


def rationale_variants(sample: RuleData) -> tuple[RuleData, dict[str, dict[str, tuple[str, ...]]]]:
    """The main questions of ``sample`` that take every variant of Table 5, and per variant the
    rationales appended to each of them."""
    mains = rationale_mains(sample)
    return mains, {variant: {m.id: main_rationales(sample, m.id, sel, elim) for m in mains.mains}
                   for variant, (sel, elim) in RATIONALE_VARIANTS.items()}


def rationale_systems(lazy: LazyLM, prompts: RulePrompts, setting: PromptSetting, sample: RuleData, *,
                      exclude_exemplar_items: bool = True) -> dict[str, System]:
    """Table 5's analog: the main questions of ``sample`` that take every variant, answered with
    each variant's rationales appended (one unit, prompt batch 0)."""
    mains, variants = rationale_variants(sample)
    return {variant: prompting_system(lazy, prompts, setting, mains, exclude_exemplar_items=exclude_exemplar_items,
                                      rationales=rationales)
            for variant, rationales in variants.items()}


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


# --------------------------------------------------------------------------------------------
# The chapter: run(cfg, rt) computes every table, fact, figure's data and claim's evidence

#: Table 2's rows of the fine-tuned part and of the prompted part (paper's rows, then ours).
PAPER_TRAINED_ROWS = ("Chance", "DeBERTa-v3 large, fine-tuned", "UnifiedQA-v2 base, fine-tuned",
                      "UnifiedQA-v2 large, fine-tuned", "UnifiedQA-v2 3B, fine-tuned", "Human")
PAPER_PROMPTED_ROWS = ("LLaMA 2 70B, five-shot ReClor exemplars", "Flan-UL2 20B, zero-shot",
                       "InstructGPT, five-shot RULE exemplars", "InstructGPT (setting not stated)",
                       "best model (not named)", "Human")
NONE_COLUMNS = ("None offered", "None is the answer", "with a None-answer exemplar", "without", "n offered", "n answer")


@dataclass
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


@dataclass
class Prompted:
    """The prompted LMs: one system per setting, the alignment answers per model."""

    systems: dict[str, System]
    alignments: dict[str, pd.DataFrame]
    unavailable: list[str]
    lms: dict[str, LazyLM]


@dataclass
class Results(ChapterResults):
    """What the RULE page shows: tables and facts, and the data behind its figures."""

    data: RuleData = None
    captions: dict[str, str] = field(default_factory=dict)  # captions that name a system
    lm_unavailable: list[str] = field(default_factory=list)
    systems_rows: dict[str, dict] = field(default_factory=dict)  # every system we ran: its metrics
    by_split: pd.DataFrame | None = None  # subquestions per split and type
    per_main_counts: pd.Series | None = None  # main questions by number of subquestions
    bars: pd.DataFrame | None = None  # Selective and Eliminative accuracy per system
    points: pd.DataFrame | None = None  # MainQ, SubQ and Consistency per system
    human: dict[str, float] = field(default_factory=dict)  # the paper's human scores (Table 2)
    length_curves: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict)
    hard_table: pd.DataFrame | None = None
    chance_sub: float = 25.0
    length_bins: int = 4
    losses: dict[str, list] = field(default_factory=dict)  # the fine-tuned encoder → one loss curve per seed


def samples(cfg: Config, data: RuleData) -> tuple[RuleData, RuleData]:
    """The main questions (with their subquestions) the fine-tuned models answer, and those the LMs answer."""
    return (sample_mains(data, cfg.encoder.sample_mains, cfg.sample_seed),
            sample_mains(data, cfg.lm.sample_mains, cfg.sample_seed))


def alignment_sample(cfg: Config, lm_sample: RuleData) -> RuleData | None:
    """The questions whose rationale-alignment items the encoder answers (None: the follow-up is off)."""
    return lm_sample if cfg.analyses.alignment else None


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


def counts_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts shown as whole numbers, percentages with one decimal."""
    return frame.map(lambda v: v if pd.isna(v) else f"{v:,.0f}" if float(v).is_integer() else f"{v:.1f}")


def release_section(res: Results) -> tuple[RuleData, RulePrompts]:
    """The release, checked and counted (§3), its splits, and the facts the data section quotes."""
    from ..data import rule as rule_data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a subsampled copy (the tests' fixtures) differs from the release
        data = rule_data.load_rule()
        release = rule_data.check_release(data)
    prompts = rule_data.load_prompts()
    counts = rule_data.release_counts(data)
    ours = pd.DataFrame({"count": {**{k: float(v) for k, v in counts.items()},
                                   "subquestions whose answer is None (%)":
                                       100 * counts["subquestions whose answer is None"] / counts["subquestions"]}})
    res.tables["rule_counts"] = paper_vs_ours(counts_frame(papers.table("rule", "§3")), counts_frame(ours))
    res.tables["rule_splits"] = split_table(data)
    f = data.frame()
    res.by_split = (f.groupby(["split", "selective"]).size().unstack(fill_value=0)
                    .rename(columns={True: "selective", False: "eliminative"}))
    res.per_main_counts = f.groupby("main_id").size().value_counts().sort_index()
    res.data = data
    none_positions = sorted({s.meta["none_position"] for s in data.subs if s.meta["has_none"]})
    res.facts.update({
        "rule_paper_main": f'{papers.value("rule", "§3", "main questions", "count"):,.0f}',
        "rule_paper_sub": f'{papers.value("rule", "§3", "subquestions", "count"):,.0f}',
        "rule_chance_sub": res.chance_sub,
        "rule_n_main": counts["main questions"],
        "rule_n_sub": counts["subquestions"],
        "rule_n_sel": counts["selective subquestions"],
        "rule_n_elim": counts["eliminative subquestions"],
        "rule_n_none_offered": counts["subquestions with a None option"],
        "rule_n_none_answer": counts["subquestions whose answer is None"],
        "rule_n_straddle": counts["main questions with subquestions in more than one split"],
        "rule_release_matches": "matches" if release["matches"].all() else "does not match",
        "rule_none_positions": ", ".join(f"Option{p}" for p in none_positions) or "nowhere",
    })
    return data, prompts


def reclor_join_section(res: Results, data: RuleData) -> list[MCItem] | None:
    """ReClor train, joined to the main questions; None when it is not available here."""
    from ..data import reclor, rule as rule_data

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a subsampled ReClor copy warns about its size
            reclor_train = reclor.load_split("train")
    except DataFileMissing as e:
        res.facts["rule_join_text"] = (f"ReClor train is not available here ({e.path}), so the encoder rows below "
                                       "are skipped.")
        return None
    join = rule_data.compare_with_reclor(data, reclor_train)
    found, identical = int(join["found"].sum()), int(join.all(axis=1).sum())
    res.facts.update({"rule_join_found": found, "rule_join_identical": identical,
                      "rule_join_text": f"{found} of the {len(join)} main questions are in ReClor train, and "
                                        f"{identical} of them agree in context, question, options and label."})
    return reclor_train


def lengths_section(res: Results, data: RuleData) -> None:
    """Table 1's analog (words and WordPiece tokens), subquestion stems and negations."""
    from ..models.loading import load_tokenizer

    lengths = length_table(data, {"words": whitespace_tokens, "WordPiece tokens": load_tokenizer("minilm-l6").tokenize})
    res.tables["rule_lengths"] = lengths.round(1)
    words = lengths["words"]
    res.facts["rule_len_q"] = (f"{words[('subquestion', 'question')]:.1f} words against "
                               f"{words[('main question', 'question')]:.1f}")
    res.facts["rule_len_o"] = f"{words[('subquestion', 'option (rationale)')]:.1f} against {words[('main question', 'option')]:.1f}"
    res.tables["rule_stems"] = stem_table(data)
    negation = negation_table(data)
    res.tables["rule_negation"] = negation.round(1)
    res.facts["rule_neg_elim"] = negation.loc["eliminative", "share (%)"]
    res.facts["rule_neg_sel"] = negation.loc["selective", "share (%)"]


def trained_setups(cfg: Config) -> tuple[str, dict[str, list[EncoderSetup]]]:
    """Every model to fine-tune on ReClor, one setup per seed: the encoder's name and all setups."""
    draw = {"train_questions": cfg.encoder.train_questions, "subsample_seed": cfg.sample_seed}
    encoder_name = f"{cfg.encoder.model}, fine-tuned on ReClor"
    setups = {encoder_name: [EncoderSetup(cfg.encoder.mc_config(seed), **draw) for seed in cfg.seeds]}
    for m in cfg.seq2seq.models:
        setups[f"{m}, fine-tuned on ReClor (text to text)"] = [
            EncoderSetup(cfg.seq2seq.seq2seq_config(m, seed), **draw) for seed in cfg.seeds]
    return encoder_name, setups


def train_models(cfg: Config, reclor_train: Sequence[MCItem] | None, data: RuleData, sample: RuleData,
                 alignment: RuleData | None, rt: Runtime) -> Trained:
    """Fine-tune every configured model on ReClor (per seed) and score it on ``sample``; the
    encoder also answers the alignment items of ``alignment``. Nothing runs without ReClor train."""
    encoder_name, setups = trained_setups(cfg)
    trained = Trained(encoder_name, setups, {}, [])
    if reclor_train is None:
        return trained
    trained.runs[encoder_name] = [encoder_system(encoder_name, s, reclor_train, data, sample, rt, alignment=alignment)
                                  for s in setups[encoder_name]]
    for name, model_setups in setups.items():
        if name == encoder_name:
            continue
        try:
            trained.runs[name] = [encoder_system(name, s, reclor_train, data, sample, rt) for s in model_setups]
        except ModelUnavailable as e:
            trained.unavailable.append(str(e))
    return trained


def loss_text(runs: Sequence[System]) -> str:
    first, last = learning.loss_ends([r.info["losses"] for r in runs])
    return f"{first:.3f} → {last:.3f} over {len(runs[0].info['losses'])} steps"


def loss_checks(trained: Trained, seed: int = 0) -> dict[str, learning.LossCheck]:
    """Did each fine-tuned model learn? It is judged on RULE's main questions, ReClor questions
    held out of its training (:func:`training_questions`): its accuracy there, seeds then main
    questions resampled, against chance. The multiple-choice encoder's training loss (a 4-way
    cross-entropy) is shown beside it against ln 4; the text-to-text models' is per token, with no
    ln k to compare with."""
    out = {}
    for name, runs in trained.runs.items():
        if not runs:
            continue
        main = runs_by_question(runs, "main")
        curves = [r.info["losses"] for r in runs] if name == trained.encoder_name else None
        out[name] = learning.check(name, curves, 4, correct=main.to_numpy(float),
                                   chance=chance_of(runs[0].data, main.columns, "main"),
                                   heldout="RULE's main questions (held out of training)", seed=seed)
    return out


def lm_checks(prompted: Prompted, kind: Literal["main", "sub"], seed: int = 0,
              systems: Mapping[str, System] | None = None) -> dict[str, learning.LossCheck]:
    """Is each prompted setting above chance on the task a claim rests on: its main questions
    (``kind="main"``) or its subquestions (clustered by main question)? (:func:`rcstudy.learning.prompted`)"""
    out = {}
    for name, system in (systems if systems is not None else prompted.systems).items():
        runs = runs_by_question([system], kind)
        if not runs.shape[1]:
            continue
        task = "its main questions" if kind == "main" else "its subquestions"
        out[name] = learning.prompted(name, runs.to_numpy(float), 4, task=task, seed=seed,
                                      chance=chance_of(system.data, runs.columns, kind),
                                      clusters=None if kind == "main" else mains_of(system.data, runs.columns))
    return out


def training_facts(cfg: Config, trained: Trained, sample: RuleData) -> dict:
    """What the note on the fine-tuned models says about their training."""
    enc, s2s, runs = cfg.encoder, cfg.seq2seq, trained.encoder_runs
    facts = {
        "rule_enc_model": enc.model,
        "rule_enc_train_n": runs[0].info["train questions"] if runs else 0,
        "rule_enc_schedule": f"{enc.epochs} epoch(s), AdamW, lr {enc.lr}, {enc.batch_size} questions per step",
        "rule_enc_seeds": (f"the mean ± sd over {len(cfg.seeds)} seeds" if len(cfg.seeds) > 1
                           else f"from one seed ({cfg.seeds[0]})"),
        "rule_enc_pool": ("all of ReClor train" if enc.train_questions is None
                          else f"out of a random draw of {enc.train_questions}"),
        "rule_enc_maxlen": enc.max_length,
        "rule_enc_mains": len(sample.mains),
        "rule_enc_subs": len(sample.subs),
    }
    checks = loss_checks(trained)
    facts["rule_enc_loss"] = f"its training loss went {loss_text(runs)}" if runs else "it was not trained"
    facts["rule_loss_warnings"] = Markdown(md_text(learning.warnings_text(list(checks.values()))))
    if s2s.models:
        done = "; ".join(f"{name.split(',')[0]}: loss {loss_text(r)}" for name, r in trained.seq2seq_runs.items())
        facts["rule_s2s_text"] = (
            f"The text-to-text models {', '.join(s2s.models)} are fine-tuned in UnifiedQA's input format (question, "
            f"lettered options, context; lower-cased; at most {s2s.max_length} tokens) to write the gold option, on "
            f"the same questions ({s2s.epochs} epoch(s), Adafactor, lr {s2s.lr}, batch {s2s.batch_size}); each option "
            f"is then scored by its log-likelihood and the likeliest one is the answer, so no answer is left "
            f"unparsed. " + (done + ". " if done else "")
            + (f"Not run: {'; '.join(trained.unavailable)}." if trained.unavailable else ""))
    else:
        facts["rule_s2s_text"] = ("No text-to-text model (UnifiedQA-v2 in the paper) is fine-tuned in this profile; "
                                  "the full profile fine-tunes UnifiedQA-v2 in its own input format.")
    return facts


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


def chance_of(data: RuleData, ids: Sequence[str], kind: str) -> np.ndarray:
    """The probability of guessing each question right: 1 / its number of options."""
    get = data.sub if kind == "sub" else data.main
    return np.array([1 / len(get(i).options) for i in ids])


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


def prompted_setting(cfg: Config, lazy: LazyLM, prompts: RulePrompts, spec: str, sample: RuleData) -> System:
    """One prompt setting of the chapter (``shots:family:scoring``) answered by ``lazy`` on ``sample``."""
    return prompting_system(lazy, prompts, PromptSetting.parse(spec), sample,
                            exclude_exemplar_items=cfg.lm.exclude_exemplar_items,
                            max_new_tokens=cfg.lm.cot_max_new_tokens)


def prompt_models(cfg: Config, prompts: RulePrompts, sample: RuleData, rt: Runtime) -> Prompted:
    """Every LM in every prompt setting on ``sample`` (and the alignment task); a model that cannot
    be loaded is listed, not run."""
    out = Prompted({}, {}, [], {})
    for name in cfg.lm.models:
        lazy = LazyLM(name, rt, max_length=cfg.lm.max_length)
        try:
            for spec in cfg.lm.settings:
                system = prompted_setting(cfg, lazy, prompts, spec, sample)
                out.systems[system.name] = system
            if cfg.analyses.alignment:
                out.alignments[name] = lm_alignment(lazy, prompts, sample)
            out.lms[name] = lazy
        except ModelUnavailable as e:
            out.unavailable.append(f"{name}: {e}")
    return out


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


def figure_points(rows: Mapping[str, Mapping]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per system: Selective and Eliminative accuracy (the bar chart), and MainQ, SubQ and
    Consistency (the scatter plot), as numbers (the mean of a mean ± sd)."""
    def pick(columns):
        return pd.DataFrame({n: {c: numeric(r[c]) for c in columns} for n, r in rows.items()}).T

    return pick(("Selective", "Eliminative")), pick(("MainQ", "SubQ", "Consistency"))


def seed_label(name: str, system: System) -> str:
    return f"{name} (seed {system.info['seed']})"


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


def alignment_rates(frame: pd.DataFrame) -> tuple[float, float]:
    """Alignment accuracy (fractions) when the given option is correct, and when it is incorrect."""
    return frame.loc[frame["selective"], "right"].mean(), frame.loc[~frame["selective"], "right"].mean()


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


def with_and_without_context(cfg: Config, prompts: RulePrompts, sample: RuleData
                             ) -> dict[str, tuple[RulePrompts, RuleData]]:
    """The prompts and questions as released and, under the context ablation, without the context
    (by the suffix of the row's name)."""
    variants = {"": (prompts, sample)}
    if cfg.analyses.context_ablation:
        variants[", no context"] = (prompts.without_context(), sample.without_context())
    return variants


def rationale_runs(cfg: Config, lazy: LazyLM, prompts: RulePrompts, spec: str, sample: RuleData
                   ) -> dict[str, dict[str, System]]:
    """Table 5's runs of one prompt setting: with the context and (context ablation) without it."""
    s = PromptSetting.parse(spec)
    return {f"{lazy.name}, {s.label}{suffix}": rationale_systems(lazy, p, s, variant_sample,
                                                                 exclude_exemplar_items=cfg.lm.exclude_exemplar_items)
            for suffix, (p, variant_sample) in with_and_without_context(cfg, prompts, sample).items()}


def rationale_section(res: Results, cfg: Config, prompts: RulePrompts, sample: RuleData,
                      prompted: Prompted) -> tuple[pd.DataFrame, dict[str, dict[str, System]]]:
    """Table 5's analog (with and, under the context ablation, without the context); returns the
    rows of the settings that asked any main question, and every run's system per variant."""
    runs = {}
    if cfg.analyses.rationale_augmentation:
        for name, lazy in prompted.lms.items():
            for spec in cfg.analyses.rationale_settings:
                runs |= rationale_runs(cfg, lazy, prompts, spec, sample)
    ours = rationale_table(runs)
    asked = ours[ours["main questions"] > 0] if len(ours) else ours
    if len(ours):
        res.tables["rule_table5"] = paper_vs_ours(papers.table("rule", "Table 5"), ours)
        res.facts["rule_t5_text"] = "; ".join(
            f"{n}: {r['no rationale']:.1f} % with no rationale, {r['+ selective']:.1f} % with the selective one, "
            f"{r['+ eliminative']:.1f} % with the eliminative ones and {r['+ selective and eliminative']:.1f} % "
            f"with all ({r['main questions']:.0f} main questions)" for n, r in asked.iterrows()) + "."
    else:
        res.facts["rule_t5_text"] = ("Not run in this profile." if not cfg.analyses.rationale_augmentation
                                     else "No language model could be run here.")
    n_mains = len(rationale_mains(sample).mains)
    res.facts["rule_t5_mains"] = n_mains
    res.facts["rule_t5_step"] = f"{100 / max(n_mains, 1):.1f}"
    res.facts["rule_t5_settings"] = settings_labels(cfg.analyses.rationale_settings)
    return asked, runs


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


def overlap_facts(sample: RuleData) -> dict[str, float | int]:
    """The word-overlap cue (:func:`overlap_baseline`) on the fine-tuned models' sample, matched
    against the question alone and against the context and question: what a model that matches
    words, and reads no argument, scores with and without the context."""
    out: dict[str, float | int] = {"rule_overlap_subs": len(sample.subs)}
    for key, with_context in (("question", False), ("context", True)):
        scores = system_scores(overlap_baseline(sample, with_context))
        for metric in ("MainQ", "SubQ", "Selective", "Eliminative"):
            out[f"rule_overlap_{key}_{metric.lower()}"] = float(scores[metric])
    return out


def length_section(res: Results, cfg: Config, trained: Trained, prompted: Prompted,
                   lm_rows: Mapping[str, Mapping]) -> None:
    """Appendix I's analog: accuracy by question and by option length, for the encoder (over
    seeds) and the best prompted setting."""
    groups = {}
    if cfg.analyses.length:
        if trained.encoder_runs:
            groups[f"{trained.encoder_name} (mean over seeds)"] = trained.encoder_runs
        if lm_rows:
            best = best_by_subq(lm_rows)
            groups[best] = [prompted.systems[best]]
    for group, systems in groups.items():
        frame = question_frame(systems)
        for column in ("question words", "option words"):
            res.length_curves[(group, column)] = accuracy_by_length(frame, column, cfg.analyses.length_bins)
    res.facts["rule_length_bins"] = cfg.analyses.length_bins
    if groups:
        res.facts["rule_length_text"] = "; ".join(
            f"{group}, {kind}s: {c['accuracy'].iloc[0]:.1f} % in the shortest and {c['accuracy'].iloc[-1]:.1f} % in "
            "the longest bin of option length"
            for (group, column), curve in res.length_curves.items() if column == "option words"
            for kind, c in curve.groupby("kind")) + "."
    else:
        res.facts["rule_length_text"] = ("Not run in this profile." if not cfg.analyses.length
                                         else "No system could be run.")


def type_section(res: Results, cfg: Config, data: RuleData, trained: Trained) -> tuple[float, int, int] | None:
    """Appendix L's analog by keyword question type; returns the encoder's chi-square test
    (p-value, groups, subquestions), or None when it was not run."""
    if not cfg.analyses.types:
        res.facts["rule_type_others"] = "n/a"
        res.facts["rule_type_n"] = len(data.mains)
        return None
    types = {m.id: question_type(m.question) for m in data.mains}
    ours = pd.DataFrame({"RULE main questions": pd.Series(types).value_counts()})
    test = None
    if trained.encoder_runs:
        by_type = by_type_table(trained.encoder_runs, types)
        ours = ours.join(by_type[["subquestions", "MainQ", "SubQ", "Selective", "Eliminative"]])
        first = trained.encoder_runs[0]
        test = (*type_independence(first, types), len(first.evals[0].sub_pred))
    paper = papers.table("rule", "Appendix L")
    ours = ours.reindex([t for t in paper.index if t in ours.index])
    ours = ours.astype({c: "Int64" for c in ("RULE main questions", "subquestions") if c in ours})
    res.tables["rule_by_type"] = paper_vs_ours(paper, ours)
    res.captions["rule_by_type"] = (f"By question type of the main question (keyword rule, a stand-in): "
                                    f"{trained.encoder_name}, mean over seeds")
    res.facts["rule_type_others"] = int(ours.loc["Others", "RULE main questions"]) if "Others" in ours.index else 0
    res.facts["rule_type_n"] = len(types)
    return test


def easy_hard_section(res: Results, data: RuleData, trained: Trained, prompted: Prompted) -> None:
    """Our extension: the RULE main questions by ReClor's EASY/HARD split (the ReClor chapter's export)."""
    labels = exports.read_easy_hard()
    if labels is None:
        res.facts["rule_hard_text"] = (f"The ReClor chapter's export {exports.EASY_HARD} is not in {exports_dir()}: "
                                       "run the ReClor chapter first. This analysis is not testable here.")
    else:
        covered = labels.reindex([m.id for m in data.mains]).dropna()
        systems = {**{seed_label(trained.encoder_name, r): r for r in trained.encoder_runs}, **prompted.systems}
        if len(covered) and systems:
            res.hard_table = easy_hard_table(systems, labels)
            res.tables["rule_easy_hard"] = res.hard_table.round(1)
            res.facts["rule_hard_text"] = (f"{len(covered)} of the {len(data.mains)} RULE main questions have a label: "
                                           f"{int((covered == 'HARD').sum())} HARD and "
                                           f"{int((covered == 'EASY').sum())} EASY.")
        else:
            res.facts["rule_hard_text"] = ("None of the RULE main questions has an EASY/HARD label in the export "
                                           f"({len(labels)} labelled ReClor questions), so this analysis is not "
                                           "testable here.")
    hard = res.hard_table
    if hard is None or not len(hard):
        res.facts["rule_hard_diffs"] = "n/a"
        res.facts["rule_hard_verdict"] = "no system could be compared"
        return
    diffs = hard["SubQ: HARD − EASY"]
    res.facts["rule_hard_diffs"] = "; ".join(f"{n}: {d}" for n, d in diffs.items())
    n_clear = sum(d.high < 0 or d.low > 0 for d in diffs)
    enc = hard.loc[[n for n in hard.index if n.startswith(trained.encoder_name)]]
    res.facts["rule_hard_verdict"] = (
        f"{n_clear} of {len(diffs)} systems show a difference whose 95% interval excludes zero"
        + (f". The split itself is visible in the encoder's main answers: {enc['MainQ EASY'].mean():.1f} % right on "
           f"EASY and {enc['MainQ HARD'].mean():.1f} % on HARD main questions (mean over seeds)" if len(enc) else ""))


def type_groups(data: RuleData, sub_ids: Sequence[str]) -> list[str]:
    """Each subquestion's question type (:func:`question_type` of its main question), with the types
    of fewer than :data:`TYPE_MIN_SUBQUESTIONS` subquestions pooled into one group."""
    types = [question_type(data.main(data.sub(i).meta["main_id"]).question) for i in sub_ids]
    counts = Counter(types)
    return [t if counts[t] >= TYPE_MIN_SUBQUESTIONS else "types with few subquestions (pooled)" for t in types]


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


# --------------------------------------------------------------------------------------------
# Jobs: the heavy computations of :func:`run`, one by one (:mod:`rcstudy.jobs`)


def scored_sets(cfg: Config, encoder: bool, enc_sample: RuleData, lm_sample: RuleData) -> dict[str, list[MCItem]]:
    """Everything the chapter asks of one fine-tuned model, in one call: its rows (the encoder also
    the alignment items) and, under the context ablation, the same questions without the context."""
    sets = encoder_eval_sets(enc_sample, alignment_sample(cfg, lm_sample) if encoder else None)
    if cfg.analyses.context_ablation:
        sets |= {f"{k}, no context": v for k, v in encoder_eval_sets(enc_sample.without_context()).items()}
    return sets


#: The prompted LM's passes, each ``f(cfg, lazy, prompts, spec, sample)``: a setting of Table 2,
#: Table 5's rationale runs, Appendix M's context ablation and the alignment follow-up.
LM_PASSES: dict[str, Callable] = {
    "setting": prompted_setting,
    "rationales": rationale_runs,
    "context ablation": ablation_runs,
    "alignment": lambda cfg, lazy, prompts, spec, sample: lm_alignment(lazy, prompts, sample),
}


def job_inputs() -> tuple[RuleData, RulePrompts, list[MCItem] | None]:
    """The release, its prompts and ReClor train (None where it is missing), read once per process
    (:func:`rcstudy.jobs.loaded_once`)."""
    return loaded_once(_read_job_inputs)


def _read_job_inputs() -> tuple[RuleData, RulePrompts, list[MCItem] | None]:
    from ..data import reclor, rule as rule_data

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # as in release_section and reclor_join_section
        data = rule_data.load_rule()
        try:
            reclor_train = reclor.load_split("train")
        except DataFileMissing:
            reclor_train = None
    return data, rule_data.load_prompts(), reclor_train


def trained_job(cfg: Config, rt: Runtime, name: str, seed: int) -> None:
    data, _, reclor_train = job_inputs()
    encoder_name, setups = trained_setups(cfg)
    setup = next(s for s in setups[name] if s.seed == seed)
    encoder_logits(setup, reclor_train, data, scored_sets(cfg, name == encoder_name, *samples(cfg, data)), rt)


def lm_job(cfg: Config, rt: Runtime, model: str, analysis: str, spec: str | None = None) -> None:
    data, prompts, _ = job_inputs()
    LM_PASSES[analysis](cfg, LazyLM(model, rt, max_length=cfg.lm.max_length), prompts, spec, samples(cfg, data)[1])


#: The batch sizes :func:`rcstudy.models.rule_lm.lm_predict` leaves at the engine's defaults:
#: scored continuations (or answer-letter prompts) per forward pass, and prompts generated at once.
LM_SCORE_BATCH, LM_GENERATE_BATCH = 8, 4


def encoder_decoder_lm(model: str) -> bool:
    """Whether :func:`rcstudy.models.lm.load_lm` gives ``model`` its encoder-decoder engine, told
    from the name (the T5 family: Flan-T5, UnifiedQA; BART) so that a plan needs no download."""
    from ..models.registry import split_revision

    name = split_revision(model)[0].lower()
    return "t5" in name or "bart" in name


def seq2seq_scoring_tokens(sources: Sequence[str], targets: Sequence[Sequence[str]], batch_size: int,
                           max_source: int | None = None) -> Tokens:
    """The tokens of :meth:`rcstudy.models.lm.Seq2SeqLM.loglik` scoring each source's targets: the
    (source, target) rows in passes of ``batch_size``, longest source first, each distinct source of
    a pass through the encoder once (a source whose targets fall in two passes runs in both)."""
    rows = [(s, t) for s, ts in zip(sources, targets) for t in ts]
    order = sorted(range(len(rows)), key=lambda i: -len(rows[i][0]))
    total = Tokens()
    for k in range(0, len(order), batch_size):
        by_source: dict[str, list[str]] = {}
        for i in order[k:k + batch_size]:
            by_source.setdefault(rows[i][0], []).append(rows[i][1])
        total += seq2seq_tokens(list(by_source), list(by_source.values()), max_source)
    return total


def lm_tokens(model: str, texts: Sequence[str], options: Sequence[Sequence[str]], scoring: str, max_length: int,
              max_new_tokens: int) -> Tokens:
    """The tokens ``model`` runs to answer ``texts`` as :func:`rcstudy.models.rule_lm.lm_predict`
    asks it (each distinct prompt once): for a letter's probability, the prompt and its answer cue
    once (a causal LM's forward pass; an encoder-decoder model's encoder, then one decoder
    position); for each option's likelihood, the prompt once per batch of its options and each
    option after it (:func:`rcstudy.jobs.causal_option_tokens`; an encoder-decoder model: the
    prompt through the encoder once per pass, each option through the decoder); for a generated
    answer, the prompt and ``max_new_tokens`` decoding steps per batch of prompts. A tokenizer
    whose digits share a first token scores each letter's whole cue as a continuation instead, a
    few tokens per option more than counted here."""
    unique = list(dict.fromkeys(zip(texts, map(tuple, options))))
    asked, opts = [t for t, _ in unique], [o for _, o in unique]
    seq2seq = encoder_decoder_lm(model)
    if scoring == "generate":
        # the causal engine cuts a prompt to leave room for the answer; the encoder-decoder one at max_length
        return generation_tokens(asked, max_new_tokens, LM_GENERATE_BATCH,
                                 max_length if seq2seq else max_length - max_new_tokens)
    if scoring == "letter":
        cued = [prompt_formats.letter_prompt(t) for t in asked]
        if seq2seq:
            return seq2seq_tokens(cued, [[""]] * len(cued), max_length)  # one decoder position
        return causal_option_tokens(cued, [[""]] * len(cued), max_length)  # the prompt's forward pass alone
    continuations = [[prompt_formats.option_continuation(o) for o in opt] for opt in opts]
    if seq2seq:
        return seq2seq_scoring_tokens(asked, continuations, LM_SCORE_BATCH, max_length)
    return causal_option_tokens(asked, continuations, max_length, LM_SCORE_BATCH)


def lm_pass_tokens(cfg: Config, model: str, analysis: str, prompts: RulePrompts, spec: str | None, sample: RuleData
                   ) -> tuple[int, Tokens]:
    """Questions asked and tokens of one pass of :data:`LM_PASSES` (:func:`lm_tokens`); an
    ablation's run with the context that is also a setting of Table 2 reads that setting's cache
    entry and costs nothing."""
    if analysis == "alignment":
        items, texts = alignment_prompts(prompts, sample)
        return len(items), lm_tokens(model, texts, [it.options for it in items], "letter", cfg.lm.max_length, 0)
    setting, new_tokens = PromptSetting.parse(spec), cfg.lm.cot_max_new_tokens
    variants = with_and_without_context(cfg, prompts, sample)
    if analysis == "setting":
        asks = [(prompts, sample, None)]
    elif analysis == "rationales":
        new_tokens = ANSWER_TOKENS  # rationale_systems reads short answers
        asks = []
        for p, s in variants.values():
            mains, by_variant = rationale_variants(s)
            asks += [(p, mains, rationales) for rationales in by_variant.values()]
    else:
        asks = [(p, s, None) for suffix, (p, s) in variants.items() if suffix or spec not in cfg.lm.settings]
    questions, tokens = 0, Tokens()
    for p, s, rationales in asks:
        asked = setting_prompts(p, setting, s, exclude_exemplar_items=cfg.lm.exclude_exemplar_items, rationales=rationales)
        questions += len(asked.items)
        tokens += lm_tokens(model, asked.texts, [it.options for it in asked.items], setting.scoring, cfg.lm.max_length,
                            new_tokens)
    return questions, tokens


def unifiedqa_source(item: MCItem) -> str:
    """A text-to-text model's UnifiedQA input for ``item``, as
    :func:`rcstudy.models.seq2seq.unifiedqa_source` writes it before cutting the context to fit."""
    head = f"{item.question} \\n " + " ".join(f"({chr(ord('a') + i)}) {o}" for i, o in enumerate(item.options))
    return f"{head} \\n {item.context}".lower() if item.context.strip() else head.lower()


def unifiedqa_tokens(items: Sequence[MCItem], cfg, *, train: bool) -> Tokens:
    """The tokens of a text-to-text model in UnifiedQA's format (``cfg``: its
    :class:`~rcstudy.models.seq2seq.Seq2SeqConfig`): trained to write each item's gold option,
    source and target forward and backward, every epoch; or scoring every option of each item
    (:func:`seq2seq_scoring_tokens`, in passes of its ``eval_batch_size``)."""
    sources = [unifiedqa_source(it) for it in items]
    if not train:
        return seq2seq_scoring_tokens(sources, [[o.lower() for o in it.options] for it in items], cfg.eval_batch_size,
                                      cfg.max_src_len)
    once = seq2seq_tokens(sources, [[it.options[it.label].lower()] for it in items], cfg.max_src_len, cfg.max_tgt_len,
                          train=True)
    return Tokens(train=round(once.train * cfg.epochs), train_target=round(once.train_target * cfg.epochs))


def shares_reclor_model(setup: EncoderSetup) -> bool:
    """Whether a setup is the shared ReClor model (:mod:`rcstudy.experiments.shared`), which the
    ReClor chapter's jobs train: on all of ReClor train without RULE's main questions."""
    return setup.cfg == shared.RECLOR_ENCODER and setup.train_questions is None


def jobs(cfg: Config) -> list[Job]:
    """Every fine-tuning and LM pass of :func:`run`, as jobs that fill the cache entries it reads:
    each fine-tuned model per seed, trained once and scored on every set the chapter asks of it
    (the shared ReClor model is trained by the ReClor chapter's jobs: here it is only scored), and
    each prompted LM per setting of Table 2, rationale setting of Table 5, context-ablation
    setting and the alignment follow-up. Nothing is fine-tuned without ReClor train."""
    from ..models.mc import MCConfig
    from ..models.registry import split_revision

    data, prompts, reclor_train = job_inputs()
    enc_sample, lm_sample = samples(cfg, data)
    encoder_name, setups = trained_setups(cfg)
    fine_tuned = setups.items() if reclor_train is not None else ()  # nothing is fine-tuned without ReClor train
    out = []
    for name, model_setups in fine_tuned:
        sets = scored_sets(cfg, name == encoder_name, enc_sample, lm_sample)
        scored = [it for items in sets.values() for it in items]
        for setup in model_setups:
            train, c = training_questions(setup, reclor_train, data), setup.cfg
            shared_model = shares_reclor_model(setup)
            if isinstance(c, MCConfig):
                tokens = Tokens(train=0 if shared_model else round(mc_tokens(train, "CQA", c.max_length) * c.epochs),
                                forward=mc_tokens(scored, "CQA", c.max_length))
            else:
                labelled = [it for it in train if it.label is not None]
                tokens = unifiedqa_tokens(labelled, c, train=True) + unifiedqa_tokens(scored, c, train=False)
            kind = "" if name == encoder_name else " text to text"
            out.append(Job(Config.chapter, "score" if shared_model else "train",
                           f"{split_revision(c.model)[0]}{kind} seed {setup.seed}",
                           c.model, "CQA", setup.seed, items=len(train), epochs=0.0 if shared_model else c.epochs,
                           tokens=tokens, step="trained_job", arguments={"name": name, "seed": setup.seed},
                           note="the shared ReClor model, trained by the ReClor chapter's jobs" if shared_model else ""))
    a = cfg.analyses
    passes = [("setting", spec) for spec in cfg.lm.settings]
    passes += [("rationales", spec) for spec in a.rationale_settings] if a.rationale_augmentation else []
    passes += [("context ablation", spec) for spec in a.ablation_settings] if a.context_ablation else []
    passes += [("alignment", None)] if a.alignment else []
    for model in cfg.lm.models:
        short = split_revision(model)[0]
        for analysis, spec in passes:
            questions, tokens = lm_pass_tokens(cfg, model, analysis, prompts, spec, lm_sample)
            generated = spec is not None and PromptSetting.parse(spec).scoring == "generate"
            name = f"{short} {spec}" if analysis == "setting" else f"{short} {analysis} {spec or ''}".rstrip()
            # an ablation's run with the context is that setting's run, when it is one: read, not recomputed
            after = (f"{short} {spec}",) if analysis == "context ablation" and spec in cfg.lm.settings else ()
            out.append(Job(Config.chapter, "generate" if generated else "score", name, model, spec or "alignment",
                           items=questions, tokens=tokens, step="lm_job",
                           arguments={"model": model, "analysis": analysis, "spec": spec}, after=after))
    return out
