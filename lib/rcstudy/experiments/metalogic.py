"""The MetaLogic chapter's pipeline: its configuration, and :func:`run`, which computes every
table, figure's data, quoted number and claim of the page (``chapters/metalogic.md``).

The expensive steps (feature model, fine-tuned generators, few-shot LM) are cached in
:mod:`rcstudy.baselines.metagraph` under their parameters and the data files' checksums, so a
rebuild after a text or table edit re-runs nothing heavy.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import papers, sampling
from ..baselines import metalogic_rules as rules
from ..config import ChapterConfig, param, section
from ..data import metalogic as ml
from ..data.metalogic import Metagraph, Prediction
from ..jobs import Job, Tokens, generation_tokens, loaded_once, seq2seq_tokens, text_tokens
from ..metrics import metalogic as mm
from ..baselines import metagraph as gen
from ..models.registry import ModelName, split_revision
from ..prompts import metalogic as prompts
from ..report import ChapterResults, ClaimLog, paper_vs_ours
from ..runtime import Runtime
from ..stats import Interval, hierarchical_ci, hierarchical_paired, mean_sd

PAPER = "metalogic"
Method = Literal["once", "multitask"]

# ---------------------------------------------------------------------------------------------
# Configuration (defaults: the quick profile, the book's default)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seq2Seq:
    """Fine-tuning the generator (All-at-Once, Multitask) on the official target strings."""

    model: ModelName = param("smollm2-135m", "generator: decoder-only smollm2-135m (tiny-llama: smoke), minilm-l6 "
                                       "or a Hub id (t5-large)")
    methods: tuple[Method, ...] = param(("once",), "settings to train: once (All-at-Once), multitask")
    seeds: tuple[int, ...] = param((0,), "training seeds of each setting", ge=0)
    n_train: int | None = param(None, "training passages (none: all)")
    epochs: float = param(1.0, "passes over the training examples; used when max_steps is none")
    max_steps: int | None = param(20, "optimiser steps per model (none: use epochs)")
    batch_size: int = param(8, "examples per forward pass")
    grad_accum: int = param(1, "forward passes per optimiser step")
    lr: float = param(3e-4, "learning rate")
    optimizer: Literal["adamw", "adafactor"] = param("adamw", "optimiser (the paper: adafactor)")
    max_src_len: int = param(256, "training truncation of inputs (tokens)")
    max_tgt_len: int = param(160, "training truncation of targets (tokens)")
    train_layers: int | None = param(10, "decoder-only models: fine-tune only the top N blocks (none: every weight)")
    evaluations: int | None = param(2, "dev evaluations, evenly spaced over training; the best is kept "
                                       "(none: the last step)")
    n_dev: int | None = param(12, "dev passages those evaluations decode (none: all)")
    checkpoint_every: int | None = param(None, "optimiser steps between checkpoints (none: only at the end)")
    stop_after_minutes: float | None = param(None, "stop (and keep a checkpoint) after this long; run again "
                                                   "to resume")


@dataclass(frozen=True)
class Decoding:
    """What the trained generators decode, and how."""

    input_format: Literal["paper", "released"] = param(
        "paper", "test-time inputs: paper (with sentence ids and variables) or released (official inference code)")
    n_test: int | None = param(40, "test passages decoded (none: all)")
    infer_max_src_len: int = param(256, "inference truncation of inputs (tokens)")
    gen_max_len: int = param(128, "generated tokens at most (greedy decoding)")
    eval_batch_size: int = param(20, "passages decoded at once")


@dataclass(frozen=True)
class FewShot:
    """A causal LM prompted with solved examples, then the test passage (All-at-Once format)."""

    model: ModelName | None = param("smollm2-135m", "causal LM prompted with solved examples (none: skip)")
    shots: int = param(1, "solved examples in the prompt", ge=0)
    n: int | None = param(8, "test passages it answers (none: all)")
    max_new_tokens: int = param(128, "generated tokens at most")


@dataclass(frozen=True)
class Scale:
    """The data-scale curve (Figure 5): systems re-trained on nested random subsets of train."""

    ratios: tuple[float, ...] = param((0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0), "shares of the training passages", gt=0, le=1)
    seeds: tuple[int, ...] = param((0, 1, 2), "random subsets per share", ge=0)
    methods: tuple[str, ...] = param(("features",), "systems re-trained at each share: features and any of "
                                                    "seq2seq.methods")


@dataclass(frozen=True)
class ErrorAnalysis:
    """The rule-based error categories (Table 5)."""

    system: str = param("features", "whose dev predictions are categorised: features, once or multitask")
    n: int | None = param(50, "dev passages drawn at random (none: all)")


@dataclass(frozen=True)
class Config(ChapterConfig):
    chapter = "metalogic"
    datasets = ("metalogic",)
    seq2seq: Seq2Seq = section(Seq2Seq, "fine-tuning the generator (see rcstudy params metalogic)")
    decoding: Decoding = section(Decoding, "what the trained generators decode, and how")
    fewshot: FewShot = section(FewShot, "the few-shot prompted LM")
    scale: Scale = section(Scale, "the data-scale curve (Figure 5)")
    error_analysis: ErrorAnalysis = section(ErrorAnalysis, "the error categories (Table 5)")
    draw_ids: tuple[str, ...] = param(("train_4341",), "test passages drawn gold vs predicted (plus the best, "
                                                      "median and worst)")

    def __post_init__(self):
        known = ("features", "once", "multitask")
        for name in (*self.scale.methods, self.error_analysis.system):
            if name not in known:
                raise ValueError(f"unknown system {name!r}; choose one of {', '.join(known)}")


def engine_config(cfg: Config, seed: int):
    """The :class:`~rcstudy.models.seq2seq.Seq2SeqConfig` of one training seed: the ``seq2seq``
    and ``decoding`` sections, field for field."""
    from ..models.seq2seq import Seq2SeqConfig

    t, d = cfg.seq2seq, cfg.decoding
    return Seq2SeqConfig(model=t.model, max_src_len=t.max_src_len, max_tgt_len=t.max_tgt_len,
                         infer_max_src_len=d.infer_max_src_len, gen_max_len=d.gen_max_len, epochs=t.epochs,
                         max_steps=t.max_steps, batch_size=t.batch_size, grad_accum=t.grad_accum, lr=t.lr,
                         optimizer=t.optimizer, eval_batch_size=d.eval_batch_size,
                         checkpoint_every=t.checkpoint_every, evaluations=t.evaluations,
                         train_layers=t.train_layers, seed=seed)


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def load_splits() -> dict[str, list[Metagraph]]:
    return {split: ml.load_split(split) for split in ml.SPLITS}


def ratio_subsets(graphs: Sequence[Metagraph], ratios: Sequence[float], seed: int) -> dict[float, list[Metagraph]]:
    """Nested random passage subsets (at least 2 passages each) for the data-scale experiment."""
    return {r: sampling.nested(graphs, max(2, int(round(r * len(graphs)))), seed) for r in ratios}


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------

TABLE4_NOTES = {
    "multi_step": "some node concludes one step and is the premise of another (any edge type)",
    "multi_premise": "some node has ≥ 2 incoming support steps (the released proofs have no '&')",
    "reb_step_premise": "graphs in all three of reb, multi-step and multi-premise (definitions above)",
    "avg_var": "distinct variables per formula-bearing node (the paper's unit is not recoverable)",
    "avg_global": "global unary operators per passage, after S5 reduction",
    "avg_local": "local unary operators per passage, after S5 reduction",
}


def split_sizes(splits: Mapping[str, Sequence[Metagraph]]) -> pd.DataFrame:
    rows = {}
    for name, gs in splits.items():
        steps = [s for g in gs for s in g.steps]
        rows[name] = {"passages": len(gs), "nodes": sum(len(g.nodes) for g in gs), "steps": len(steps),
                      "support": sum(s.type == ml.SUPPORT for s in steps),
                      "rebut": sum(s.type == ml.REBUT for s in steps),
                      "graphs with rebut": sum(ml.has_rebut(g) for g in gs),
                      "nodes with formula": sum(bool(n.triples) for g in gs for n in g.nodes.values())}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.loc["total"] = df.sum()
    return df


def label_counts(splits: Mapping[str, Sequence[Metagraph]]) -> pd.DataFrame:
    """Per split: relations, local and global unary operators, and degree labels."""
    rows = {}
    for name, gs in splits.items():
        c = Counter()
        for g in gs:
            for n in g.nodes.values():
                c[f"degree {n.degree}"] += 1
                c.update(f"global {ml.SYMBOL[o]}" for o in n.global_ops)
                for t in n.triples:
                    c[f"relation {ml.SYMBOL[t.rel]}"] += 1
                    c.update(f"local {ml.SYMBOL[o]}" for o in t.pre_ops + t.con_ops)
        rows[name] = c
    df = pd.DataFrame.from_dict(rows, orient="index").fillna(0).astype(int)
    return df[sorted(df.columns, key=lambda k: (k.split()[0] != "relation", k.split()[0] != "local",
                                                k.split()[0] != "global", k))]


def quirks(splits: Mapping[str, Sequence[Metagraph]]) -> dict[str, int]:
    """The format's quirks, counted (the loader keeps all of them as they are)."""
    gs = [g for s in splits.values() for g in s]
    nodes = [n for g in gs for n in g.nodes.values()]
    return {
        "passages with non-contiguous sentence ids":
            sum([int(k[4:]) for k in g.sids] != list(range(1, len(g.sids) + 1)) for g in gs),
        "sentences containing [AND] (merged nodes)": sum("[AND]" in n.text for n in nodes),
        "nodes with an empty variable string": sum(not n.text_with_vars for n in nodes),
        "nodes with a duplicated triple": sum(len(set(n.triples)) < len(n.triples) for n in nodes),
        "nodes whose degree is not f(global operators)": sum(ml.degree_of(n.global_ops) != n.degree for n in nodes),
        "nodes whose operators are not in S5 normal form": sum(
            ml.s5_reduce(n.global_ops) != n.global_ops or any(t.reduced() != t for t in n.triples) for n in nodes),
        "sentences outside every step": sum(len(g.nodes) - len(g.graph_nodes) for g in gs),
    }


def steps_per_graph(graphs: Sequence[Metagraph]) -> Counter:
    return Counter(len(g.steps) for g in graphs)


def length_table(tokenizer, splits: Mapping[str, Sequence[Metagraph]], limits=(128, 256, 512)) -> pd.DataFrame:
    """Share of each input/target format longer than each token limit (under ``tokenizer``)."""
    gs = [g for s in splits.values() for g in s]
    texts = {
        "Once input (ids + variables)": prompts.once_inputs(gs),
        "Once input (released inference)": prompts.once_inputs(gs, "released"),
        "Once target": prompts.once_targets(gs),
        "TREE input": [prompts.multitask_examples([g])[0].source for g in gs],
    }
    rows = {}
    for name, xs in texts.items():
        lengths = np.array([len(x) for x in tokenizer(xs)["input_ids"]])
        rows[name] = {"median tokens": int(np.median(lengths)), "max tokens": int(lengths.max()),
                      **{f"> {n}": 100 * float((lengths > n).mean()) for n in limits}}
    return pd.DataFrame.from_dict(rows, orient="index")


# ---------------------------------------------------------------------------------------------
# Systems
# ---------------------------------------------------------------------------------------------

def rule_window(train: Sequence[Metagraph], windows=(3, 5, 8, 12, None)) -> int | None:
    """The indicator window with the best certainty accuracy on the training passages."""
    def acc(w):
        return np.mean([ml.degree_of(rules.unary_operators(n.text, w)) == n.degree
                        for g in train for n in g.nodes.values()])
    return max(windows, key=acc)


def baseline_predictions(graphs: Sequence[Metagraph], rule_cfg: rules.RuleConfig) -> dict[str, dict[str, Prediction]]:
    return {"empty": {g.id: rules.empty_prediction(g) for g in graphs},
            "trivial": {g.id: rules.trivial_prediction(g) for g in graphs},
            "rules": {g.id: rules.rule_prediction(g, rule_cfg) for g in graphs}}


def feature_scale(train: Sequence[Metagraph], test: Sequence[Metagraph], ratios: Sequence[float],
                  seeds: Sequence[int]) -> pd.DataFrame:
    """Test scores of the feature model trained on nested random subsets (one row per ratio × seed)."""
    rows = []
    for seed in seeds:
        for ratio, subset in ratio_subsets(train, ratios, seed).items():
            preds = gen.feature_predictions(subset, test, seed)
            rows.append({"ratio": ratio, "seed": seed, "n_train": len(subset), **mm.evaluate(test, preds)})
    return pd.DataFrame(rows)


def roundtrip_scores(tokenizer, graphs: Sequence[Metagraph]) -> dict[str, float]:
    """Scores of gold → linearise → encode → decode → normalise → parse (must all be 100)."""
    targets = prompts.once_targets(graphs)
    decoded = tokenizer.batch_decode(tokenizer(targets)["input_ids"], skip_special_tokens=True)
    return mm.evaluate(graphs, {g.id: ml.parse_once(ml.normalise(t)) for g, t in zip(graphs, decoded)})


def fewshot_shots(train: Sequence[Metagraph], k: int) -> list[Metagraph]:
    """The ``k`` shortest training passages that have both a rebut step and a formula (fixed, not sampled)."""
    ok = [g for g in train if ml.has_rebut(g) and any(n.triples for n in g.nodes.values())] or list(train)
    return sorted(ok, key=lambda g: (len(prompts.once_inputs([g])[0]), g.id))[:k]


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

COLUMN_NAMES = {"node_f1": "Node F1", "node_all": "Node All", "step_f1": "Step F1", "step_all": "Step All",
                "formula_f1": "Formula F1", "formula_all": "Formula All", "cert_acc": "Cert. Acc",
                "cert_all": "Cert. All", "cert_macro_f1": "Cert. F1*", "overall_all": "Overall All",
                "support_f1": "Support F1", "support_all": "Support All", "rebut_f1": "Rebut F1",
                "rebut_all": "Rebut All"}
OPERATOR_NAMES = {ml.IMP: "→", ml.AND: "∧", ml.OR: "∨", ml.BOX: "□", ml.DIA: "◇", ml.NEG: "¬", "none": "N/A"}


def score_frame(systems: Mapping[str, Sequence[Mapping[str, Prediction]]], graphs: Sequence[Metagraph],
                columns=mm.MAIN_COLUMNS, variant: str = "official") -> pd.DataFrame:
    """One row per system: mean ± sd over its runs (seeds) of each score, as MeanSD cells."""
    rows = {}
    for name, runs in systems.items():
        scores = [mm.evaluate(graphs, preds, variant) for preds in runs]
        rows[name] = {COLUMN_NAMES[c]: mean_sd([s[c] for s in scores]) for c in columns}
    return pd.DataFrame.from_dict(rows, orient="index")


def means(frame: pd.DataFrame) -> pd.DataFrame:
    """A MeanSD frame as plain floats (the means)."""
    return frame.map(lambda v: getattr(v, "mean", v)).astype(float)


def operator_frame(systems: Mapping[str, Sequence[Mapping[str, Prediction]]], graphs: Sequence[Metagraph]
                   ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Mean per-operator formula F1 of each system (mean over runs) and the group sizes."""
    rows, sizes = {}, {}
    for name, runs in systems.items():
        per = [mm.per_operator(graphs, preds) for preds in runs]
        rows[name] = {OPERATOR_NAMES[op]: mean_sd([p[op][0] for p in per]) for op in mm.OPERATOR_GROUPS}
        sizes = {OPERATOR_NAMES[op]: per[0][op][1] for op in mm.OPERATOR_GROUPS}
    return pd.DataFrame.from_dict(rows, orient="index"), sizes


def confusion(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction]) -> pd.DataFrame:
    """Gold degree (rows) × predicted degree (columns, "unresolved" included)."""
    labels = list(ml.DEGREE_WORDS)
    cols = labels + ["unresolved"]
    m = pd.DataFrame(0, index=pd.Index(labels, name="gold"), columns=pd.Index(cols, name="predicted"))
    for g in graphs:
        p = preds.get(g.id, Prediction())
        for sid, node in g.nodes.items():
            d = p.degrees.get(sid, ml.UNRESOLVED)
            m.loc[labels[node.degree], cols[d] if d in range(5) else "unresolved"] += 1
    return m


def error_frame(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction]) -> pd.DataFrame:
    counts = mm.error_counts(graphs, preds)
    names = {**mm.GRAPH_ERRORS, **mm.FORMULA_ERRORS, **mm.CERTAINTY_ERRORS}
    return pd.DataFrame([{"type": k, "component": k[0], "description": names[k], "ours": v}
                         for k, v in counts.items()]).set_index("type")


def error_examples(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction]) -> pd.DataFrame:
    """The first example of each error type: passage id, node, gold and predicted."""
    seen = {}
    for g in graphs:
        p, gold = preds.get(g.id, Prediction()), g.gold()
        kind = mm.graph_error(p.steps, gold.steps)
        if kind and kind not in seen:
            seen[kind] = (g.id, "", ml.once_target(gold, g.sids).split("$formulae$")[0][7:].strip(),
                          "".join(f"{s.text}; " for s in p.steps).strip())
        for sid, node in g.nodes.items():
            kind = mm.formula_error(p.triples.get(sid, ()), gold.triples[sid])
            if kind and kind not in seen:
                seen[kind] = (g.id, sid, ml.linearize_triples(gold.triples[sid]).strip(),
                              ml.linearize_triples(p.triples.get(sid, ())).strip())
            pd_ = p.degrees.get(sid, ml.UNRESOLVED)
            kind = mm.certainty_error(pd_, node.degree)
            if kind and kind not in seen:
                seen[kind] = (g.id, sid, ml.DEGREE_WORDS[node.degree],
                              ml.DEGREE_WORDS[pd_] if pd_ in range(5) else "(unresolved)")
    rows = [{"type": k, "passage": v[0], "node": v[1], "gold": v[2], "predicted": v[3]}
            for k, v in sorted(seen.items())]
    return pd.DataFrame(rows, columns=["type", "passage", "node", "gold", "predicted"]).set_index("type")


def counts_frame(frame: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """Numbers as text: whole numbers without decimals, others with ``digits`` (missing stays missing)."""
    def text(v):
        if isinstance(v, str) or pd.isna(v):
            return v
        return str(int(v)) if float(v).is_integer() else f"{v:.{digits}f}"
    return frame.map(text).astype(object)


# ---------------------------------------------------------------------------------------------
# The chapter: one function per section, then run()
# ---------------------------------------------------------------------------------------------

METHOD_NAMES = {"once": "All-at-Once", "multitask": "Multitask"}
OURS_NAMES = {"features": "Features (logistic regression)", "rules": "Rules (Tables 13, 20–22)",
              "trivial": "Trivial structure", "empty": "Empty"}
T3 = [COLUMN_NAMES[c] for c in mm.MAIN_COLUMNS]
T14_STEPS = [COLUMN_NAMES[c] for c in mm.STEP_TYPE_COLUMNS]
OPS = list(OPERATOR_NAMES.values())
T4_KEYS = {"Passage": "passage", "Graph": "graph", "Node": "node", "Form": "form", "Reb": "reb",
           "Multi-step": "multi_step", "Multi-premise": "multi_premise", "n(reb ∩ step ∩ premise)": "reb_step_premise",
           "Avg. Node": "avg_node", "Avg. Form": "avg_form", "Avg. Var": "avg_var", "Avg. Binary": "avg_binary",
           "Avg. Global": "avg_global", "Avg. Local": "avg_local"}
SCALE_PANELS = ["Node F1", "Step F1", "Formula F1", "Cert. Acc", "Cert. F1*", "Overall All"]
PAPER_BACKBONES = ("t5-large", "t5-11b")  # the paper's rows compare directly only with these


@dataclass
class Results(ChapterResults):
    """Tables (by download name), facts (glue name → value), claims, and what the figures draw."""

    captions: dict[str, str]  # the captions that name a system or a sample size
    splits: dict[str, list[Metagraph]]
    baselines: dict[str, dict[str, Prediction]]  # empty, trivial, rules, features: test predictions
    label_counts: pd.DataFrame
    steps_per_graph: pd.Series
    gold_shown: list[Metagraph]
    losses: dict[str, list[float]]  # "All-at-Once, seed 0" → training loss per step
    confusions: dict[str, pd.DataFrame]  # system → gold × predicted certainty
    step_plot: pd.DataFrame  # Figure 3: the paper's rows and ours
    operator_plot: pd.DataFrame  # Figure 4
    scale: pd.DataFrame  # one row per system × ratio × seed
    error_counts: pd.DataFrame  # Table 5: the paper's counts beside ours
    main_label: str
    main_graphs: list[Metagraph]
    main_preds: dict[str, Prediction]


@dataclass
class Generated:
    """The fine-tuned generators: their samples, raw outputs per seed and parsed predictions."""

    train: list[Metagraph]
    test: list[Metagraph]
    dev: list[Metagraph]
    runs: dict[str, list[dict]] = field(default_factory=dict)
    preds: dict[str, list[dict[str, Prediction]]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)


def data_section(splits, tables, facts) -> None:
    train, dev, test = splits["train"], splits["dev"], splits["test"]
    tables["metalogic_splits"] = counts_frame(split_sizes(splits))
    facts.update(metalogic_n_passages=len(train + dev + test), metalogic_n_train=len(train),
                 metalogic_n_dev=len(dev), metalogic_n_test=len(test))
    for part in ("train", "dev", "test"):
        facts[f"metalogic_paper_split_{part}"] = papers.value(PAPER, "§5", "split", f"{part} (%)")
    quirk = quirks(splits)
    tables["metalogic_quirks"] = pd.DataFrame({"count": quirk})
    facts["metalogic_degree_rule_breaks"] = quirk["nodes whose degree is not f(global operators)"]
    facts["metalogic_outside"] = quirk["sentences outside every step"]


def table4_section(everything, tables, facts) -> None:
    t4 = ml.table4(everything)
    paper_t4 = papers.table(PAPER, "Table 4").T
    paper_t4.columns = ["value"]
    ours_t4 = pd.DataFrame({"value": {k: float(t4[v]) for k, v in T4_KEYS.items()}})
    table = paper_vs_ours(counts_frame(paper_t4), counts_frame(ours_t4), digits=2)
    table[("definition used here", "")] = [TABLE4_NOTES.get(T4_KEYS[k], "as in the paper") for k in table.index]
    tables["metalogic_table4"] = table
    matching = [k for k in T4_KEYS if abs(paper_t4.loc[k, "value"] - ours_t4.loc[k, "value"]) < 0.006]  # 2 decimals
    facts.update(metalogic_t4_matching=", ".join(matching) or "none", metalogic_multi_premise=t4["multi_premise"],
                 metalogic_paper_multi_premise=papers.value(PAPER, "Table 4", "MetaLogic", "Multi-premise"),
                 metalogic_avg_global=t4["avg_global"],
                 metalogic_paper_avg_global=papers.value(PAPER, "Table 4", "MetaLogic", "Avg. Global"))


def labels_section(splits, tables, facts) -> pd.DataFrame:
    labels = label_counts(splits)
    tables["metalogic_label_counts"] = labels
    degree_cols = [f"degree {d}" for d in range(5)]
    facts["metalogic_contingent_share"] = 100 * labels["degree 2"].sum() / labels[degree_cols].sum().sum()
    tables["metalogic_table2"] = paper_vs_ours(papers.table(PAPER, "Table 2"), pd.DataFrame(), digits=2)
    return labels


def gold_examples(everything, test) -> list[Metagraph]:
    """The paper's Figure 1 and Table 10 passages, where present (else the first test passage)."""
    by_id = {g.id: g for g in everything}
    return [by_id[i] for i in ("train_1300", "train_4341") if i in by_id] or [test[0]]


def metrics_section(cfg: Config, splits, tables, facts, captions):
    """The text forms under the generator's tokenizer, and the metric variants on the trivial
    predictors; returns the tokenizer, the rule window and the predictors' test predictions."""
    from ..models import load_tokenizer

    train, test = splits["train"], splits["test"]
    model = cfg.seq2seq.model
    tokenizer = load_tokenizer(model)
    roundtrip = roundtrip_scores(tokenizer, train)
    if min(roundtrip.values()) != 100.0:  # gold → text → tokens → text → parse must be lossless
        raise AssertionError(f"the target text does not survive the {model} tokenizer: {roundtrip}")
    facts.update(metalogic_roundtrip_min=min(roundtrip.values()), metalogic_tokenizer=model)
    tables["metalogic_lengths"] = length_table(tokenizer, splits).round(1)
    captions["metalogic_lengths"] = (f"Length of each text form in {model} tokens, and the share (%) longer than "
                                     "each limit")
    window = rule_window(train)
    base = baseline_predictions(test, rules.RuleConfig(window=window))
    tables["metalogic_metric_variants"] = pd.DataFrame({
        (name, variant): {COLUMN_NAMES[k]: v for k, v in mm.evaluate(test, base[name], variant).items()
                          if k in ("formula_all", "overall_all", "formula_f1")}
        for name in ("empty", "trivial") for variant in mm.VARIANTS}).T.round(2)
    return tokenizer, window, base


def baselines_section(splits, window, base, tables, facts, captions) -> pd.DataFrame:
    """Adds the feature model to ``base``; returns the predictors' mean scores on test."""
    train, test = splits["train"], splits["test"]
    base["features"] = gen.feature_predictions(train, test)
    scores = score_frame({k: [v] for k, v in base.items()}, test, [*mm.MAIN_COLUMNS, *mm.STEP_TYPE_COLUMNS])
    tables["metalogic_baselines"] = scores
    captions["metalogic_baselines"] = f"Predictors without a pretrained model, test split ({len(test)} passages)"
    b = means(scores)
    facts.update(
        metalogic_rule_window="the whole sentence" if window is None else f"the first {window} words",
        metalogic_trivial_node_f1=b.loc["trivial", "Node F1"], metalogic_trivial_step_f1=b.loc["trivial", "Step F1"],
        metalogic_trivial_cert_acc=b.loc["trivial", "Cert. Acc"], metalogic_rules_cert_acc=b.loc["rules", "Cert. Acc"],
        metalogic_empty_formula_f1=b.loc["empty", "Formula F1"],
        metalogic_features_formula_f1=b.loc["features", "Formula F1"],
        metalogic_features_macro=b.loc["features", "Cert. F1*"],
        metalogic_rules_vs_trivial="lower" if b.loc["rules", "Cert. Acc"] < b.loc["trivial", "Cert. Acc"] else "higher")
    for key, col in (("node_f1", "Node F1"), ("step_f1", "Step F1"), ("cert_acc", "Cert. Acc")):
        facts[f"metalogic_paper_once_{key}"] = papers.value(PAPER, "Table 3", "Once (large)", col)
    return b


def generator_samples(cfg: Config, splits) -> Generated:
    """The passages the generators train on, decode for the tables and select checkpoints on (no runs yet)."""
    t = cfg.seq2seq
    return Generated(train=sampling.nested(splits["train"], t.n_train, 0),
                     test=sampling.nested(splits["test"], cfg.decoding.n_test, 0),
                     dev=sampling.nested(splits["dev"], t.n_dev, 0) if t.evaluations else [])


def generate_section(cfg: Config, splits, tokenizer, rt: Runtime, facts) -> Generated:
    """Fine-tune each method and seed, decode the test sample; the facts of the training note."""
    from ..models import seq2seq

    t, d = cfg.seq2seq, cfg.decoding
    out = generator_samples(cfg, splits)
    for m in t.methods:
        out.runs[m] = [seq2seq_run(cfg, m, s, out.train, {"test": out.test}, out.dev, rt) for s in t.seeds]
        out.preds[m] = [gen.parse_outputs(m, r["test"]) for r in out.runs[m]]
        out.names[m] = f"{METHOD_NAMES[m]} ({t.model})"
    engine = engine_config(cfg, 0)
    steps_done = t.max_steps if t.max_steps is not None else engine.total_steps(len(out.train))
    decoder_only = seq2seq.decoder_only(t.model)
    kept = {f"{METHOD_NAMES[m]}, seed {s}": max(r["selection"], key=lambda x: x[1])[0]
            for m, rs in out.runs.items() for s, r in zip(t.seeds, rs) if r["selection"]}
    facts.update(
        metalogic_model=t.model,
        metalogic_architecture="a decoder-only language model, with the loss on the target tokens only"
        if decoder_only else "an encoder-decoder model",
        metalogic_batch_size=t.batch_size * t.grad_accum,
        metalogic_epochs_seen=steps_done * t.batch_size * t.grad_accum / len(out.train),
        metalogic_gen_max_len=d.gen_max_len,
        metalogic_trained_weights="every weight" if t.train_layers is None or not decoder_only
        else f"the top {t.train_layers} transformer block{'s' * (t.train_layers != 1)} only (the rest frozen)",
        metalogic_selection=(
            f"At {t.evaluations} evenly spaced steps the model decodes {len(out.dev)} dev passages, and the weights "
            f"with the best official selection score on them are kept (here: "
            f"{'; '.join(f'step {v} for {k}' for k, v in kept.items())})." if kept else
            "The last step's weights are used: there is no dev-based checkpoint selection."),
        metalogic_steps=steps_done, metalogic_examples_seen=steps_done * t.batch_size * t.grad_accum,
        metalogic_n_train_s2s=len(out.train), metalogic_n_test_eval=len(out.test), metalogic_n_seeds=len(t.seeds),
        metalogic_lr=t.lr, metalogic_optimizer=t.optimizer, metalogic_input_format=d.input_format,
        metalogic_max_src_len=t.max_src_len,
        metalogic_methods=", ".join(METHOD_NAMES[m] for m in t.methods) or "none",
        metalogic_paper_epochs=papers.value(PAPER, "§6.1", "all", "epochs"),
        metalogic_paper_lr=papers.value(PAPER, "§6.1", "all", "learning rate"),
        metalogic_paper_bs=papers.value(PAPER, "§6.1", "T5-large", "batch size"),
        metalogic_paper_seeds=papers.value(PAPER, "§6.1", "all", "seeds (T5-large)"),
        metalogic_trunc_src=100 * seq2seq.truncation_rate(tokenizer, prompts.once_inputs(out.train), t.max_src_len),
        metalogic_trunc_tgt=100 * seq2seq.truncation_rate(tokenizer, prompts.once_targets(out.train), t.max_tgt_len))
    return out


def seq2seq_run(cfg: Config, method: str, seed: int, train, evals, dev, rt: Runtime) -> dict:
    """One fine-tuned generator of the configuration (see :func:`rcstudy.baselines.metagraph.seq2seq_outputs`)."""
    return gen.seq2seq_outputs(method, engine_config(cfg, seed), train, evals, rt,
                               input_format=cfg.decoding.input_format,
                               stop_after_minutes=cfg.seq2seq.stop_after_minutes, dev=dev)


def fewshot_inputs(cfg: Config, splits) -> tuple[list[Metagraph], list[Metagraph]]:
    """The few-shot LM's solved examples and the test passages it answers."""
    return fewshot_shots(splits["train"], cfg.fewshot.shots), sampling.nested(splits["test"], cfg.fewshot.n, 0)


def fewshot_section(cfg: Config, splits, rt: Runtime, facts) -> dict[str, tuple[list[Metagraph], dict]]:
    """The few-shot row: ``{name: (its test passages, its predictions)}`` (empty when skipped)."""
    f = cfg.fewshot
    rows = {}
    if f.model:
        shots, graphs = fewshot_inputs(cfg, splits)
        texts = gen.fewshot_outputs(f.model, shots, graphs, rt, f.max_new_tokens)
        preds = gen.parse_outputs("fewshot", texts)
        rows[f"Few-shot ({f.model}, {f.shots} shot{'s' if f.shots != 1 else ''})"] = (graphs, preds)
        facts.update(fewshot_facts(texts, preds))
    else:
        facts.update(fewshot_facts({}, {}))
    facts["metalogic_fewshot_model"] = f.model or "no model"
    return rows


def fewshot_facts(texts: Mapping[str, str], preds: Mapping[str, Prediction], level: float = 0.95) -> dict:
    """How often the few-shot answers have the metagraph's form: the share that writes a ``$tree$``
    slot at all (``metalogic_fewshot_parsed``), with its exact binomial interval over the passages
    (a share of a handful of passages moves by whole eighths from one draw to the next), and the
    share from which the parser reads at least one step (``a -> b`` or ``a => b``) — a ``$tree$``
    slot followed by a list of sentence ids is not a proof."""
    from scipy.stats import binomtest

    n = len(texts)
    tree = sum("$tree$" in ml.normalise(t) for t in texts.values())
    steps = sum(bool(preds[gid].steps) for gid in texts)
    out = {"metalogic_fewshot_n": n, "metalogic_fewshot_tree_count": tree, "metalogic_fewshot_steps_count": steps,
           "metalogic_fewshot_example": _example_answer(texts)}
    if n:
        ci = binomtest(tree, n).proportion_ci(level, method="exact")
        out |= {"metalogic_fewshot_parsed": 100 * tree / n, "metalogic_fewshot_steps": 100 * steps / n,
                "metalogic_fewshot_parsed_ci": f"[{100 * ci.low:.0f}, {100 * ci.high:.0f}] %"}
    else:
        out |= {"metalogic_fewshot_parsed": float("nan"), "metalogic_fewshot_steps": float("nan"),
                "metalogic_fewshot_parsed_ci": "no interval (not run)"}
    return out


def _example_answer(texts: Mapping[str, str], chars: int = 60) -> str:
    """The start of the first answer, on one line (the page quotes it as plain text)."""
    if not texts:
        return "(none)"
    text = " ".join(next(iter(texts.values())).split())
    return text if len(text) <= chars else text[:chars].rstrip() + " …"


def table3_section(splits, g: Generated, fewshot, base, tables) -> pd.DataFrame:
    """Table 3, paper beside ours; returns our systems' mean scores."""
    test = splits["test"]
    rows, n_rows = [], {}
    for m, name in g.names.items():
        rows.append(score_frame({name: g.preds[m]}, g.test))
        n_rows[name] = len(g.test)
    for name, (graphs, preds) in fewshot.items():
        rows.append(score_frame({name: [preds]}, graphs))
        n_rows[name] = len(graphs)
    rows.append(score_frame({OURS_NAMES[k]: [base[k]] for k in OURS_NAMES}, test))
    n_rows.update({v: len(test) for v in OURS_NAMES.values()})
    ours = pd.concat(rows)
    table = paper_vs_ours(papers.table(PAPER, "Table 3")[T3], ours)
    table[("test passages", "")] = [n_rows.get(r, "whole split") for r in table.index]
    tables["metalogic_table3"] = table
    return means(ours)


def main_system(cfg: Config, splits, g: Generated, base) -> tuple[str | None, str, list[Metagraph], dict]:
    """The system the page discusses: the first trained method's first seed, else the feature model."""
    methods = cfg.seq2seq.methods
    if methods:
        return methods[0], g.names[methods[0]], g.test, g.preds[methods[0]][0]
    return None, OURS_NAMES["features"], splits["test"], base["features"]


def main_section(cfg: Config, splits, g: Generated, base, ours_means, facts):
    method, label, graphs, preds = main_system(cfg, splits, g, base)
    confusions = {label: confusion(graphs, preds), OURS_NAMES["features"]: confusion(splits["test"], base["features"])}
    if method:  # Multitask outputs are mappings of parts: compare them as text
        outputs = g.runs[method][0]["test"].values()
        distinct = len({o if isinstance(o, str) else json.dumps(o, sort_keys=True) for o in outputs})
    else:
        distinct = len(graphs)
    facts.update(
        metalogic_main_label=label, metalogic_main_distinct=distinct, metalogic_main_n=len(graphs),
        metalogic_training_remark=(
            "Compare these scores with the paper's rows of the same backbone size."
            if split_revision(cfg.seq2seq.model)[0] in PAPER_BACKBONES else
            "This profile fine-tunes a small model on a fraction of one pass over the training passages, which "
            "mostly teaches the output format. Read its scores against the trivial and empty rows, which show what "
            "the format and a structural prior alone earn, not against T5."))
    for col, key in (("Node F1", "node_f1"), ("Step All", "step_all"), ("Step F1", "step_f1"),
                     ("Formula F1", "formula_f1"), ("Cert. All", "cert_all"), ("Cert. F1*", "cert_macro_f1"),
                     ("Overall All", "overall_all")):
        facts[f"metalogic_main_{key}"] = float(ours_means.loc[label, col])
    return label, graphs, preds, confusions


def table14_section(splits, g: Generated, fewshot, base, b, main_label, tables, facts):
    """Table 14 (step types, per-operator formula F1); returns our means and the two plot frames."""
    test = splits["test"]
    systems = {**{g.names[m]: (g.test, g.preds[m]) for m in g.names},
               **{k: (graphs, [p]) for k, (graphs, p) in fewshot.items()},
               OURS_NAMES["features"]: (test, [base["features"]]), OURS_NAMES["trivial"]: (test, [base["trivial"]])}
    step_rows, op_rows = [], []
    for name, (graphs, runs) in systems.items():
        step_rows.append(score_frame({name: runs}, graphs, mm.STEP_TYPE_COLUMNS))
        frame, sizes = operator_frame({name: runs}, graphs)
        op_rows.append(frame)
        if graphs is test:
            test_sizes = sizes
    ours = pd.concat([pd.concat(step_rows), pd.concat(op_rows)], axis=1)
    paper = papers.table(PAPER, "Table 14")
    tables["metalogic_table14"] = paper_vs_ours(paper, ours)
    tables["metalogic_operator_sizes"] = pd.DataFrame({"nodes in the test split": test_sizes}).T
    t14 = means(ours)
    step_plot = pd.concat([paper[T14_STEPS].rename(index=lambda r: f"paper: {r}"), t14[T14_STEPS]])
    op_plot = pd.concat([paper[OPS].loc[["Once (large)", "MetGen (11b)"]].rename(index=lambda r: f"paper: {r}"),
                         t14[OPS]])
    facts.update(metalogic_main_support_f1=float(t14.loc[main_label, "Support F1"]),
                 metalogic_main_rebut_f1=float(t14.loc[main_label, "Rebut F1"]),
                 metalogic_empty_rebut_f1=b.loc["empty", "Rebut F1"])
    return t14, step_plot, op_plot


def scaled_generators(cfg: Config) -> list[str]:
    """The fine-tuned methods re-trained at each data share (those the chapter trains at all)."""
    return [m for m in cfg.scale.methods if m in cfg.seq2seq.methods]


def scale_section(cfg: Config, splits, g: Generated, rt: Runtime, tables, facts):
    """The data-scale runs (Tables 15–16, Figure 5); returns them and the feature model's gains
    (smallest share → ~20 %, ~20 % → all)."""
    sc = cfg.scale
    train, test = splits["train"], splits["test"]
    frames = []
    if "features" in sc.methods:
        frames.append(feature_scale(train, test, sc.ratios, sc.seeds).assign(system=OURS_NAMES["features"]))
    for m in scaled_generators(cfg):
        recs = []
        for s in sc.seeds:
            for ratio, subset in ratio_subsets(g.train, sc.ratios, s).items():
                out = seq2seq_run(cfg, m, s, subset, {"test": g.test}, g.dev, rt)
                recs.append({"ratio": ratio, "seed": s, "n_train": len(subset),
                             **mm.evaluate(g.test, gen.parse_outputs(m, out["test"]))})
        frames.append(pd.DataFrame(recs).assign(system=g.names[m]))
    scale = pd.concat(frames).rename(columns=COLUMN_NAMES)
    tables["metalogic_table15_ours"] = scale.groupby(["system", "ratio"])[T3].agg(lambda v: mean_sd(list(v)))
    tables["metalogic_table15_paper"] = papers.table(PAPER, "Table 15")
    tables["metalogic_table16_paper"] = papers.table(PAPER, "Table 16")
    feat = scale[scale.system == OURS_NAMES["features"]] if "features" in sc.methods else scale
    curve = feat.groupby("ratio")[SCALE_PANELS].mean().mean(axis=1)
    lo, mid, hi = curve.index.min(), min(curve.index, key=lambda r: abs(r - 0.2)), curve.index.max()
    early, late = float(curve[mid] - curve[lo]), float(curve[hi] - curve[mid])
    facts.update(metalogic_scale_gain_early=early, metalogic_scale_gain_late=late, metalogic_scale_mid=100 * mid,
                 metalogic_scale_systems=", ".join(sorted(scale.system.unique())),
                 metalogic_scale_draws=len(sc.seeds), metalogic_scale_smallest=int(scale.n_train.min()))
    return scale, early, late


def error_sample(cfg: Config, splits) -> list[Metagraph]:
    """The dev passages whose errors are categorised."""
    return sampling.nested(splits["dev"], cfg.error_analysis.n, 0)


def error_section(cfg: Config, splits, g: Generated, rt: Runtime, tables, facts, captions):
    """Table 5 by rule on a dev sample; returns the counts (paper beside ours) and the system's name."""
    e = cfg.error_analysis
    sample = error_sample(cfg, splits)
    if e.system == "features":
        preds, label = gen.feature_predictions(splits["train"], sample), OURS_NAMES["features"]
    else:
        out = seq2seq_run(cfg, e.system, cfg.seq2seq.seeds[0], g.train, {"dev": sample}, g.dev, rt)
        preds, label = gen.parse_outputs(e.system, out["dev"]), f"{METHOD_NAMES[e.system]} ({cfg.seq2seq.model})"
    errors = error_frame(sample, preds)
    paper = papers.table(PAPER, "Table 5").T
    paper.columns = ["count"]
    ours = errors[["ours"]].rename(columns={"ours": "count"}).astype(float)
    table = paper_vs_ours(counts_frame(paper), counts_frame(ours))
    table[("description", "")] = errors["description"].reindex(table.index)
    tables["metalogic_table5"] = table
    captions["metalogic_table5"] = (f"Table 5: error categories; paper: Once (11b), by hand; ours: {label}, by rule, "
                                    f"{len(sample)} dev passages")
    tables["metalogic_error_examples"] = error_examples(sample, preds)
    counts = pd.DataFrame({"paper (Once 11b)": paper["count"], f"ours ({label})": ours["count"]})

    def share(frame, col, cat, group):
        return 100 * frame.loc[cat, col] / frame.loc[group, col].sum()

    formula, certainty = ["F1", "F2", "F3", "F4"], ["C1", "C2", "C3", "C4"]
    facts.update(
        metalogic_ea_label=label, metalogic_ea_n=len(sample),
        metalogic_ea_f1_share=100 * errors.loc["F1", "ours"] / max(1, errors.loc[formula, "ours"].sum()),
        metalogic_ea_c2_share=100 * errors.loc["C2", "ours"] / max(1, errors.loc[certainty, "ours"].sum()),
        metalogic_paper_f1_share=share(paper, "count", "F1", formula),
        metalogic_paper_c2_share=share(paper, "count", "C2", certainty))
    return errors, counts, label, sample, preds


# --- intervals over the test passages ---------------------------------------------------------
#
# Every score of the chapter is a mean over passages (Cert. F1* is a macro-F1 over the pooled
# nodes), so its interval resamples passages; a trained system's seeds are resampled above them,
# and two systems on the same passages are compared with one draw of passages for both (paired).

#: Bootstrap draws of the chapter's passage intervals.
N_BOOT = 2000


class PassageScores:
    """One system's per-passage scores on ``graphs``: (runs, passages) per column (0–1), and the
    per-passage confusion counts of gold × predicted certainty for the macro-F1."""

    LABELS = (-1, 0, 1, 2, 3, 4)  # unresolved, then the five degrees

    def __init__(self, graphs: Sequence[Metagraph], runs: Sequence[Mapping[str, Prediction]]):
        self.ids = [g.id for g in graphs]
        samples = [[mm.score_sample(g, preds.get(g.id, Prediction())) for g in graphs] for preds in runs]
        self.columns = {c: np.array([[x.scores[c] for x in run] for run in samples])
                        for c in samples[0][0].scores} if graphs else {}
        k = {label: i for i, label in enumerate(self.LABELS)}
        self.confusion = np.zeros((len(runs), len(graphs), len(self.LABELS), len(self.LABELS)))
        for r, run in enumerate(samples):
            for p, x in enumerate(run):
                for gold, pred in x.degrees:
                    self.confusion[r, p, k.get(gold, 0), k.get(pred, 0)] += 1

    def column(self, name: str) -> np.ndarray:
        """(runs, passages) of a score (its display name or key), in points."""
        key = {v: k for k, v in COLUMN_NAMES.items()}.get(name, name)
        return 100 * self.columns[key]

    def macro(self, seed_w: np.ndarray, passage_w: np.ndarray) -> np.ndarray:
        """Cert. F1* (points) of every resample: sklearn's macro-F1 over the labels seen, from the
        weighted confusion counts."""
        c = np.einsum("bs,bp,spij->bij", seed_w, passage_w, self.confusion)
        tp = np.diagonal(c, axis1=1, axis2=2)
        gold, pred = c.sum(axis=2), c.sum(axis=1)
        seen = (gold + pred) > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(seen, 2 * tp / np.where(seen, gold + pred, 1), 0.0)
        return 100 * f1.sum(axis=1) / np.maximum(seen.sum(axis=1), 1)


def _weights(n_runs: int, n_passages: int, rng: np.random.Generator, n_boot: int = N_BOOT):
    seed_w = (rng.multinomial(n_runs, np.full(n_runs, 1 / n_runs), n_boot).astype(float) if n_runs > 1
              else np.ones((n_boot, 1)))
    return seed_w, rng.multinomial(n_passages, np.full(n_passages, 1 / n_passages), n_boot).astype(float)


def _interval(estimate: float, boots: np.ndarray, n: int, level: float = 0.95) -> Interval:
    low, high = np.quantile(boots[np.isfinite(boots)], [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(estimate), float(low), float(high), level, n)


def macro_interval(scores: PassageScores, seed: int = 0) -> Interval:
    """Cert. F1* with a bootstrap interval over runs, then passages."""
    runs, n = scores.confusion.shape[:2]
    full = scores.macro(np.ones((1, runs)), np.ones((1, n)))[0]
    return _interval(full, scores.macro(*_weights(runs, n, np.random.default_rng(seed))), n)


def scale_gain_interval(train: Sequence[Metagraph], test: Sequence[Metagraph], ratios: Sequence[float],
                        seeds: Sequence[int], seed: int = 0) -> Interval:
    """The feature model's (gain from the smallest share to ~20 %) − (gain from ~20 % to all) in the
    mean of the six scores of Figure 5, with a bootstrap interval: the subset draws (seeds)
    resampled, then the test passages, one draw of passages for every share (the same passages)."""
    lo, mid, hi = min(ratios), min(ratios, key=lambda r: abs(r - 0.2)), max(ratios)
    per = {r: PassageScores(test, [gen.feature_predictions(ratio_subsets(train, [r], s)[r], test, s) for s in seeds])
           for r in (lo, mid, hi)}
    rng = np.random.default_rng(seed)
    seed_w, passage_w = _weights(len(seeds), len(test), rng)
    ones = (np.ones((1, len(seeds))), np.ones((1, len(test))))

    def six(sc: PassageScores, sw: np.ndarray, pw: np.ndarray) -> np.ndarray:
        parts = [np.einsum("bs,bp,sp->b", sw, pw, sc.column(c)) / np.einsum("bs,bp->b", sw, pw)
                 for c in SCALE_PANELS if c != "Cert. F1*"]
        return (np.sum(parts, axis=0) + sc.macro(sw, pw)) / len(SCALE_PANELS)

    def gain(sw, pw):
        return 2 * six(per[mid], sw, pw) - six(per[lo], sw, pw) - six(per[hi], sw, pw)

    return _interval(gain(*ones)[0], gain(seed_w, passage_w), len(test))


def error_lead_interval(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], category: str,
                        group: Sequence[str], seed: int = 0) -> Interval:
    """The share (%) of ``category`` among the errors of ``group`` minus the largest other category's
    share, with a bootstrap interval over the sampled passages (their errors drawn together)."""
    counts = np.array([[mm.error_counts([g], preds).get(c, 0) for c in group] for g in graphs], dtype=float)
    i = list(group).index(category)

    def lead(w: np.ndarray) -> np.ndarray:
        tot = w @ counts
        others = np.delete(tot, i, axis=1).max(axis=1)
        return 100 * (tot[:, i] - others) / np.maximum(tot.sum(axis=1), 1)

    rng = np.random.default_rng(seed)
    _, w = _weights(1, len(graphs), rng)
    return _interval(lead(np.ones((1, len(graphs))))[0], lead(w), len(graphs))


def judge_claims(cfg: Config, splits, g: Generated, base, main_label: str, main_graphs, main_runs, ea_graphs,
                 ea_preds, ea_label: str, facts) -> ClaimLog:
    """The evidence for each declared claim (:data:`rcstudy.papers.metalogic.CLAIMS`): every score
    with a bootstrap interval over the test passages (each trained system's seeds resampled above
    them; :class:`PassageScores`), and the differences from the trivial structure and from the
    empty prediction paired on the same passages."""
    claims = ClaimLog(PAPER)
    test = splits["test"]
    systems = {g.names[m]: (g.test, g.preds[m]) for m in cfg.seq2seq.methods}
    systems[OURS_NAMES["features"]] = (test, [base["features"]])
    scores = {n: PassageScores(graphs, runs) for n, (graphs, runs) in systems.items()}
    refs = {k: PassageScores(test, [base[k]]) for k in ("trivial", "empty")}
    test_pos = {gid: i for i, gid in enumerate(refs["trivial"].ids)}

    def ci(n: str, col: str) -> Interval:
        return hierarchical_ci(scores[n].column(col), scale=1.0)

    def over(n: str, col: str, ref: str) -> Interval:
        """System − reference on the passages the system was scored on (paired)."""
        pos = [test_pos[i] for i in scores[n].ids]
        return hierarchical_paired(scores[n].column(col), refs[ref].column(col)[:, pos], scale=1.0)

    macro = {n: macro_interval(scores[n]) for n in systems}
    cert_over = {n: over(n, "Cert. Acc", "trivial") for n in systems}
    claims.judge("certainty-hard", {"cert_macro": macro, "cert_over_trivial": cert_over},
                 "; ".join(f"{n}: Cert. F1* {macro[n]}, Cert. Acc − trivial {cert_over[n]}" for n in systems))
    main = main_label if main_label in scores else OURS_NAMES["features"]
    node, step_all = ci(main, "Node F1"), ci(main, "Step All")
    node_over = over(main, "Node F1", "trivial")
    claims.judge("nodes-high-steps-low", {"node": node, "step_all": step_all, "node_over_trivial": node_over},
                 f"{main}: Node F1 {node} ({node_over} over the trivial structure), Step All {step_all}")
    formula = {n: ci(n, "Formula F1") for n in systems}
    formula_over = {n: over(n, "Formula F1", "empty") for n in systems}
    claims.judge("formula-around-60", {"formula": formula, "formula_over_empty": formula_over},
                 "; ".join(f"{n}: Formula F1 {formula[n]}, − empty {formula_over[n]}" for n in systems))
    reb_sup = hierarchical_paired(scores[main].column("Rebut All"), scores[main].column("Support All"), scale=1.0)
    reb_empty = over(main, "Rebut All", "empty")
    claims.judge("rebut-easier", {"rebut_minus_support": reb_sup, "rebut_over_empty": reb_empty},
                 f"{main}: Rebut All − Support All {reb_sup}; Rebut All − the empty prediction's {reb_empty}")
    sc = cfg.scale
    if "features" in sc.methods and len(sc.ratios) >= 3:
        gain = scale_gain_interval(splits["train"], test, sc.ratios, sc.seeds)
        claims.judge("scale-fast-then-flat", {"early_minus_late": gain},
                     f"{OURS_NAMES['features']}: +{facts['metalogic_scale_gain_early']:.1f} then "
                     f"+{facts['metalogic_scale_gain_late']:.1f} points; early − late {gain} (subset draws, then "
                     "test passages, resampled)")
    else:
        claims.judge("scale-fast-then-flat", None, "the feature model is not run at three data shares here")
    claims.judge("metgen-best", None, "not run in this profile")
    f1 = error_lead_interval(ea_graphs, ea_preds, "F1", ["F1", "F2", "F3", "F4"])
    claims.judge("errors-variables", {"f1_lead": f1},
                 f"{ea_label}: F1 share {facts['metalogic_ea_f1_share']:.0f} % of formula errors; lead over the "
                 f"next category {f1} ({len(ea_graphs)} dev passages resampled)")
    c2 = error_lead_interval(ea_graphs, ea_preds, "C2", ["C1", "C2", "C3", "C4"])
    claims.judge("errors-contingent", {"c2_lead": c2},
                 f"{ea_label}: C2 share {facts['metalogic_ea_c2_share']:.0f} % of certainty errors; lead over the "
                 f"next category {c2} ({len(ea_graphs)} dev passages resampled)")
    return claims


def run(cfg: Config, rt: Runtime) -> Results:
    """Every table, figure's data, quoted number and claim of the chapter, in page order."""
    tables, facts, captions = {}, {}, {}
    splits = load_splits()
    everything = splits["train"] + splits["dev"] + splits["test"]
    data_section(splits, tables, facts)
    table4_section(everything, tables, facts)
    labels = labels_section(splits, tables, facts)
    shown = gold_examples(everything, splits["test"])
    tables["metalogic_linearisations"] = pd.DataFrame({"text": prompts.official_strings(shown[-1])})
    captions["metalogic_linearisations"] = f"The exact strings of the official code for {shown[-1].id}"
    tokenizer, window, base = metrics_section(cfg, splits, tables, facts, captions)
    b = baselines_section(splits, window, base, tables, facts, captions)
    g = generate_section(cfg, splits, tokenizer, rt, facts)
    fewshot = fewshot_section(cfg, splits, rt, facts)
    ours_means = table3_section(splits, g, fewshot, base, tables)
    main_label, main_graphs, main_preds, confusions = main_section(cfg, splits, g, base, ours_means, facts)
    t14, step_plot, op_plot = table14_section(splits, g, fewshot, base, b, main_label, tables, facts)
    scale, early, late = scale_section(cfg, splits, g, rt, tables, facts)
    errors, error_counts, ea_label, ea_graphs, ea_preds = error_section(cfg, splits, g, rt, tables, facts, captions)
    claims = judge_claims(cfg, splits, g, base, main_label, main_graphs, main_preds, ea_graphs, ea_preds, ea_label,
                          facts)
    losses = {f"{METHOD_NAMES[m]}, seed {s}": r["losses"] for m, rs in g.runs.items()
              for s, r in zip(cfg.seq2seq.seeds, rs)}
    return Results(tables=tables, facts=facts, claims=claims, captions=captions, splits=splits, baselines=base,
                   label_counts=labels,
                   steps_per_graph=pd.Series(steps_per_graph(everything)).sort_index(), gold_shown=shown,
                   losses=losses, confusions=confusions, step_plot=step_plot, operator_plot=op_plot, scale=scale,
                   error_counts=error_counts, main_label=main_label, main_graphs=main_graphs, main_preds=main_preds)


# ---------------------------------------------------------------------------------------------
# Jobs: the heavy computations of :func:`run`, one by one (:mod:`rcstudy.jobs`)
# ---------------------------------------------------------------------------------------------

def job_splits() -> dict[str, list[Metagraph]]:
    """:func:`load_splits`, read once per process (:func:`rcstudy.jobs.loaded_once`)."""
    return loaded_once(load_splits)


def generator_sets(cfg: Config, splits, g: Generated, method: str, seed: int) -> dict[str, list[Metagraph]]:
    """Every set the chapter decodes with one fine-tuned generator: the test sample and, for the
    error analysis's system and first seed, its dev sample."""
    sets = {"test": g.test}
    if cfg.error_analysis.system == method and seed == cfg.seq2seq.seeds[0]:
        sets["dev"] = error_sample(cfg, splits)
    return sets


def generator_job(cfg: Config, rt: Runtime, method: str, seed: int) -> None:
    splits = job_splits()
    g = generator_samples(cfg, splits)
    seq2seq_run(cfg, method, seed, g.train, generator_sets(cfg, splits, g, method, seed), g.dev, rt)


def scale_job(cfg: Config, rt: Runtime, method: str, seed: int, ratio: float) -> None:
    g = generator_samples(cfg, job_splits())
    seq2seq_run(cfg, method, seed, ratio_subsets(g.train, [ratio], seed)[ratio], {"test": g.test}, g.dev, rt)


def fewshot_job(cfg: Config, rt: Runtime) -> None:
    shots, graphs = fewshot_inputs(cfg, job_splits())
    gen.fewshot_outputs(cfg.fewshot.model, shots, graphs, rt, cfg.fewshot.max_new_tokens)


def feature_job(cfg: Config, rt: Runtime) -> None:
    """The feature model's fits: on all of train (the baselines' row), on each data share, and for
    the error analysis when it categorises this model's predictions."""
    splits = job_splits()
    train, test = splits["train"], splits["test"]
    gen.feature_predictions(train, test)
    if "features" in cfg.scale.methods:
        feature_scale(train, test, cfg.scale.ratios, cfg.scale.seeds)
    if cfg.error_analysis.system == "features":
        gen.feature_predictions(train, error_sample(cfg, splits))


def decoding_tokens(sources: Sequence[str], targets: Sequence[str], d: Decoding) -> Tokens:
    """The tokens of greedy decoding ``sources`` as :func:`rcstudy.models.seq2seq.generate` does:
    in batches of ``eval_batch_size``, shortest source first, each source cut at
    ``infer_max_src_len`` and run once (an encoder-decoder model: through its encoder); then as
    many decoding steps per batch as its longest output, taken as its longest target and the end
    token (at most ``gen_max_len``: a batch decodes until every sequence in it has ended)."""
    order = sorted(range(len(sources)), key=lambda i: text_tokens(sources[i]))
    total = Tokens()
    for k in range(0, len(order), d.eval_batch_size):
        batch = order[k:k + d.eval_batch_size]
        steps = min(max(text_tokens(targets[i]) + 1 for i in batch), d.gen_max_len)
        total += generation_tokens([sources[i] for i in batch], steps, len(batch), d.infer_max_src_len)
    return total


def generator_tokens(cfg: Config, method: str, seed: int, train: Sequence[Metagraph], g: Generated,
                     decoded: Sequence[Metagraph]) -> Tokens:
    """The tokens of one fine-tuned generator: the optimiser steps' examples, each source and
    target forward and backward (:func:`rcstudy.jobs.seq2seq_tokens`, cut at ``max_src_len`` and
    ``max_tgt_len``), then the dev decodings that select its checkpoint (one per evaluation) and
    the decoding of ``decoded`` (:func:`decoding_tokens`)."""
    c, d = engine_config(cfg, seed), cfg.decoding
    sources, targets = gen.METHOD_PAIRS[method](train)
    seen = c.total_steps(len(sources)) * c.batch_size * c.grad_accum
    once = seq2seq_tokens(sources, [[t] for t in targets], c.max_src_len, c.max_tgt_len, train=True)
    share = seen / max(1, len(sources))
    trained = Tokens(train=round(once.train * share), train_target=round(once.train_target * share))
    dev = decoding_tokens(*gen.METHOD_PAIRS[method](g.dev, d.input_format), d)
    return sum([dev] * (c.evaluations or 0), trained) + decoding_tokens(*gen.METHOD_PAIRS[method](decoded, d.input_format), d)


#: The context length :func:`rcstudy.models.lm.load_lm` gives the few-shot LM, and the prompts it
#: generates from at once (:meth:`rcstudy.models.lm.CausalLM.generate`'s default).
FEWSHOT_MAX_LENGTH, FEWSHOT_BATCH = 2048, 4


def jobs(cfg: Config) -> list[Job]:
    """Every fine-tuning and generation of :func:`run`, as jobs that fill the cache entries it
    reads: each method per seed (trained, its checkpoints selected on dev, then decoding test and,
    for the error analysis, dev), each data-scale run (a share of train that is all of it, with a
    seed trained anyway, is that seed's run), the few-shot LM, and the feature model's fits
    (logistic regression on the CPU, of unknown size)."""
    splits = job_splits()
    g = generator_samples(cfg, splits)
    t, chapter = cfg.seq2seq, Config.chapter
    out = []
    for m in t.methods:
        for seed in t.seeds:
            decoded = [x for graphs in generator_sets(cfg, splits, g, m, seed).values() for x in graphs]
            out.append(Job(chapter, "train", f"{METHOD_NAMES[m]} seed {seed}", t.model, cfg.decoding.input_format,
                           seed, items=len(g.train), epochs=t.epochs if t.max_steps is None else 0.0,
                           tokens=generator_tokens(cfg, m, seed, g.train, g, decoded), step="generator_job",
                           arguments={"method": m, "seed": seed}))
    whole = gen.ids_key(g.train)
    for m in scaled_generators(cfg):
        for seed in cfg.scale.seeds:
            for ratio, subset in ratio_subsets(g.train, cfg.scale.ratios, seed).items():
                if gen.ids_key(subset) == whole and seed in t.seeds:
                    continue
                out.append(Job(chapter, "train", f"{METHOD_NAMES[m]} seed {seed}, {ratio:.0%} of train", t.model,
                               cfg.decoding.input_format, seed, items=len(subset),
                               epochs=t.epochs if t.max_steps is None else 0.0,
                               tokens=generator_tokens(cfg, m, seed, subset, g, g.test), step="scale_job",
                               arguments={"method": m, "seed": seed, "ratio": ratio}))
    if cfg.fewshot.model:
        shots, graphs = fewshot_inputs(cfg, splits)
        # every prompt decodes all max_new_tokens: the answer is cut at its first line afterwards
        tokens = generation_tokens([prompts.fewshot_prompt(shots, x) for x in graphs], cfg.fewshot.max_new_tokens,
                                   FEWSHOT_BATCH, FEWSHOT_MAX_LENGTH - cfg.fewshot.max_new_tokens)
        out.append(Job(chapter, "generate", f"few-shot {split_revision(cfg.fewshot.model)[0]}", cfg.fewshot.model,
                       f"{cfg.fewshot.shots} shot{'s' * (cfg.fewshot.shots != 1)}", items=len(graphs),
                       tokens=tokens, step="fewshot_job"))
    out.append(Job(chapter, "train", "feature model", "features", "passage", items=len(splits["train"]),
                   step="feature_job", note="logistic regression on the CPU"))
    return out
