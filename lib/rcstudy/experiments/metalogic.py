"""The MetaLogic chapter's pipeline: statistics, predictions of every system, scores, drawings.

Everything expensive is cached on disk (:func:`rcstudy.cache.cached`) under its parameters and
the data files' checksums, so a rebuild after a text edit re-runs nothing heavy.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import asdict
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..baselines import metalogic_rules as rules
from ..cache import cached, fingerprint
from ..data import metalogic as ml
from ..data.metalogic import Metagraph, Prediction
from ..metrics import metalogic as mm
from ..runtime import Runtime
from ..stats import mean_sd

# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


def load_splits() -> dict[str, list[Metagraph]]:
    return {split: ml.load_split(split) for split in ml.SPLITS}


def data_files() -> list:
    return [ml.metalogic_file(split) for split in ml.SPLITS]


def subsample(graphs: Sequence[Metagraph], n: int | None, seed: int = 0) -> list[Metagraph]:
    """The first ``n`` passages of a seeded shuffle (so smaller samples nest in larger ones)."""
    if n is None or n >= len(graphs):
        return list(graphs)
    order = list(graphs)
    random.Random(seed).shuffle(order)
    return order[:n]


def ratio_subsets(graphs: Sequence[Metagraph], ratios: Sequence[float], seed: int) -> dict[float, list[Metagraph]]:
    """Nested random passage subsets (at least 2 passages each) for the data-scale experiment."""
    return {r: subsample(graphs, max(2, int(round(r * len(graphs)))), seed) for r in ratios}


def ids_key(graphs: Sequence[Metagraph]) -> str:
    return fingerprint([g.id for g in graphs])


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
        "Once input (ids + variables)": [ml.once_source(g) for g in gs],
        "Once input (released inference)": [ml.once_source(g, "released") for g in gs],
        "Once target": [ml.once_target(g) for g in gs],
        "TREE input": [ex.source for g in gs for ex in ml.multitask_examples(g)[:1]],
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


def feature_model(train: Sequence[Metagraph], seed: int = 0) -> rules.FeatureModel:
    """The logistic-regression feature model, fitted once per training set (cached)."""
    return cached("metalogic_feature_model", {"train": ids_key(train), "seed": seed},
                  lambda: rules.FeatureModel(seed).fit(list(train)), data_files=data_files())


def feature_predictions(train: Sequence[Metagraph], graphs: Sequence[Metagraph], seed: int = 0
                        ) -> dict[str, Prediction]:
    def compute():
        model = feature_model(train, seed)
        return {g.id: model.predict(g) for g in graphs}
    return cached("metalogic_feature_predictions", {"train": ids_key(train), "eval": ids_key(graphs), "seed": seed},
                  compute, data_files=data_files())


def feature_scale(train: Sequence[Metagraph], test: Sequence[Metagraph], ratios: Sequence[float],
                  seeds: Sequence[int]) -> pd.DataFrame:
    """Test scores of the feature model trained on nested random subsets (one row per ratio × seed)."""
    rows = []
    for seed in seeds:
        for ratio, subset in ratio_subsets(train, ratios, seed).items():
            preds = feature_predictions(subset, test, seed)
            rows.append({"ratio": ratio, "seed": seed, "n_train": len(subset), **mm.evaluate(test, preds)})
    return pd.DataFrame(rows)


# --- seq2seq (All-at-Once, Multitask) ---------------------------------------------------------

def once_pairs(graphs: Sequence[Metagraph]) -> tuple[list[str], list[str]]:
    return [ml.once_source(g) for g in graphs], [ml.once_target(g) for g in graphs]


def multitask_pairs(graphs: Sequence[Metagraph]) -> tuple[list[str], list[str]]:
    exs = [ex for g in graphs for ex in ml.multitask_examples(g)]
    return [ex.source for ex in exs], [ex.target for ex in exs]


METHOD_PAIRS: dict[str, Callable] = {"once": once_pairs, "multitask": multitask_pairs}


def seq2seq_outputs(method: str, cfg, train: Sequence[Metagraph], evals: Mapping[str, Sequence[Metagraph]],
                    rt: Runtime, *, input_format: str = "paper", stop_after_minutes: float | None = None,
                    dev: Sequence[Metagraph] = ()) -> dict[str, dict]:
    """Raw generated text for each evaluation set, plus the training losses under ``"losses"``
    and the dev selection scores ``[(step, score), ...]`` under ``"selection"``.

    Once: ``{graph id: text}``. Multitask: ``{graph id: {"tree": text, "formulae": {sid: text},
    "degree": {sid: text}}}``. With ``dev`` passages and ``cfg.evaluations``, the checkpoint with
    the best official selection score on them is kept (else the last). Training is shared by
    every evaluation set and cached with its checkpoint; outputs are cached per set.
    """
    from ..models import seq2seq

    sources, targets = METHOD_PAIRS[method](train)
    trained = None
    selecting = bool(dev) and bool(cfg.evaluations)
    select_key = ids_key(dev) + input_format if selecting else ""

    def dev_score(candidate) -> float:
        return mm.selection_score(mm.evaluate(dev, parse_outputs(method, _decode(method, candidate, dev, input_format,
                                                                                  rt))))

    def model():
        nonlocal trained
        if trained is None:
            trained = seq2seq.train(sources, targets, cfg, rt, stop_after_minutes=stop_after_minutes,
                                    select=dev_score if selecting else None, select_key=select_key)
        return trained

    base = {"method": method, "cfg": asdict(cfg), "train": seq2seq.examples_fingerprint(sources, targets),
            "select": select_key}
    out = {}
    for name, graphs in evals.items():
        params = {**base, "eval": ids_key(graphs), "input_format": input_format}
        out[name] = cached("metalogic_seq2seq_outputs", params,
                           lambda graphs=graphs: _decode(method, model(), graphs, input_format, rt),
                           data_files=data_files())
    out["losses"] = cached("metalogic_seq2seq_losses", base, lambda: model().losses)
    out["selection"] = cached("metalogic_seq2seq_selection", base, lambda: model().selection)
    return out


def _decode(method: str, trained, graphs: Sequence[Metagraph], input_format: str, rt: Runtime) -> dict:
    from ..models import seq2seq

    if method == "once":
        texts = seq2seq.generate(trained, [ml.once_source(g, input_format) for g in graphs], rt)
        return {g.id: t for g, t in zip(graphs, texts)}
    jobs = []  # (graph id, part, sid, source)
    for g in graphs:
        exs = ml.multitask_examples(g, input_format)
        jobs += [(g.id, ex.task, ex.node, ex.source) for ex in exs]
    texts = seq2seq.generate(trained, [j[3] for j in jobs], rt)
    out = {g.id: {"tree": "", "formulae": {}, "degree": {}} for g in graphs}
    for (gid, task, sid, _), text in zip(jobs, texts):
        if task == "tree":
            out[gid]["tree"] = text
        else:
            out[gid][task][sid] = text
    return out


def parse_outputs(method: str, outputs: Mapping[str, object]) -> dict[str, Prediction]:
    """Predictions from raw outputs (normalised first: WordPiece decoding spaces out the symbols)."""
    if method in ("once", "fewshot"):
        return {gid: ml.parse_once(ml.normalise(text)) for gid, text in outputs.items()}
    return {gid: ml.prediction_from_parts(ml.normalise(o["tree"]),
                                          {s: ml.normalise(t) for s, t in o["formulae"].items()},
                                          {s: ml.normalise(t) for s, t in o["degree"].items()})
            for gid, o in outputs.items()}


def roundtrip_scores(tokenizer, graphs: Sequence[Metagraph]) -> dict[str, float]:
    """Scores of gold → linearise → encode → decode → normalise → parse (must all be 100)."""
    targets = [ml.once_target(g) for g in graphs]
    decoded = tokenizer.batch_decode(tokenizer(targets)["input_ids"], skip_special_tokens=True)
    return mm.evaluate(graphs, {g.id: ml.parse_once(ml.normalise(t)) for g, t in zip(graphs, decoded)})


# --- few-shot generation with a causal LM ---------------------------------------------------

FEWSHOT_INSTRUCTION = (
    "Each sentence of a passage is a node sentK; its atomic parts are variables vK. Write the logic "
    "metagraph: after $tree$ the steps (a -> b: a supports b; a => b: a rebuts b), after $formulae$ each "
    "node's formula with [entail] [and] [or] and the unary operators [negative] [necessary] [possible], "
    "after $degree$ each node's certainty (impossible, unnecessary, contingent, possible, necessary).")


def fewshot_prompt(shots: Sequence[Metagraph], g: Metagraph) -> str:
    """Instruction, ``shots`` solved examples, then the passage (whitespace collapsed for BPE models)."""
    def block(x: Metagraph, answer: str) -> str:
        return f"Passage: {ml.once_source(x)}\nMetagraph: {answer}"

    parts = [FEWSHOT_INSTRUCTION] + [block(s, ml.once_target(s)) for s in shots] + [block(g, "")]
    return re.sub(r"[ \t]+", " ", "\n\n".join(parts)).rstrip()


def fewshot_shots(train: Sequence[Metagraph], k: int) -> list[Metagraph]:
    """The ``k`` shortest training passages that have both a rebut step and a formula (fixed, not sampled)."""
    ok = [g for g in train if ml.has_rebut(g) and any(n.triples for n in g.nodes.values())] or list(train)
    return sorted(ok, key=lambda g: (len(ml.once_source(g)), g.id))[:k]


def fewshot_outputs(model_name: str, shots: Sequence[Metagraph], graphs: Sequence[Metagraph], rt: Runtime,
                    max_new_tokens: int = 160) -> dict[str, str]:
    def compute():
        from ..models.lm import load_lm

        lm = load_lm(model_name, rt)
        texts = lm.generate([fewshot_prompt(shots, g) for g in graphs], max_new_tokens, stop=["\n"])
        return {g.id: t for g, t in zip(graphs, texts)}

    params = {"model": model_name, "shots": [g.id for g in shots], "eval": ids_key(graphs),
              "max_new_tokens": max_new_tokens, "prompt": fingerprint(FEWSHOT_INSTRUCTION)}
    return cached("metalogic_fewshot_outputs", params, compute, data_files=data_files())


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


# ---------------------------------------------------------------------------------------------
# Drawing metagraphs (networkx + matplotlib)
# ---------------------------------------------------------------------------------------------

NODE_COLOURS = {"conclusion": "#f0c05a", "rebuttal": "#f4a582", "irrelevant": "#dddddd", "other": "#a6cee3"}


def _roles(steps: Sequence[ml.Step], sids: Sequence[str]) -> dict[str, str]:
    used = {s.pre for s in steps} | {s.con for s in steps}
    final = {s.con for s in steps} - {s.pre for s in steps if s.type == ml.SUPPORT}
    rebut = {s.pre for s in steps if s.type == ml.REBUT}
    return {sid: "rebuttal" if sid in rebut else "conclusion" if sid in final else
            "other" if sid in used else "irrelevant" for sid in sids}


def layout(g: Metagraph) -> dict[str, tuple[float, float]]:
    """Layered positions: conclusions on top, premises below, sentences outside the graph at the bottom."""
    import networkx as nx

    dg = nx.DiGraph([(s.pre, s.con) for s in g.steps])
    if not nx.is_directed_acyclic_graph(dg):
        return nx.spring_layout(nx.DiGraph(dg), seed=0)
    pos = {}
    layers = list(nx.topological_generations(dg))
    for depth, layer in enumerate(layers):
        layer = sorted(layer, key=g.sids.index)
        for k, sid in enumerate(layer):
            pos[sid] = (k - (len(layer) - 1) / 2, -(len(layers) - 1 - depth))
    rest = [sid for sid in g.sids if sid not in pos]
    for k, sid in enumerate(rest):
        pos[sid] = (k - (len(rest) - 1) / 2, -len(layers) - 0.2)
    return pos


def _node_label(g: Metagraph, p: Prediction, sid: str) -> str:
    d = p.degrees.get(sid, ml.UNRESOLVED)
    body = " ∧ ".join(t.readable() for t in p.triples.get(sid, ()))
    return f"{sid}\n{ml.DEGREE_WORDS[d] if d in range(5) else '?'}" + (f"\n{body}" if body else "")


def draw_metagraph(ax, g: Metagraph, pred: Prediction | None = None, pos=None, title: str = "") -> None:
    """Draw the gold metagraph of ``g`` on ``ax``, or ``pred`` against it (colours mark agreement).

    Nodes: conclusion gold, rebuttal salmon, outside the graph grey, others blue; labels give the
    certainty and formula (red where the prediction differs from gold). Support edges are solid,
    rebut edges dashed red; on a prediction, matched steps are green, extra ones orange and missed
    gold steps dotted grey.
    """
    import networkx as nx

    gold = g.gold()
    shown = pred or gold
    pos = pos or layout(g)
    dg = nx.DiGraph()
    dg.add_nodes_from(g.sids)
    roles = _roles(shown.steps, g.sids)
    extra = [sid for s in shown.steps for sid in (s.pre, s.con) if sid not in pos]
    for k, sid in enumerate(dict.fromkeys(extra)):  # predicted ids the passage lacks
        pos = {**pos, sid: (k, 1.0)}
        dg.add_node(sid)
        roles[sid] = "other"
    nx.draw_networkx_nodes(dg, pos, ax=ax, node_size=1500, node_color=[NODE_COLOURS[roles[n]] for n in dg.nodes],
                           edgecolors="black")
    for step in shown.steps:
        colour = "black" if pred is None else ("green" if step in gold.steps else "orange")
        if step.type == ml.REBUT and pred is None:
            colour = "crimson"
        nx.draw_networkx_edges(dg, pos, edgelist=[(step.pre, step.con)], ax=ax, edge_color=colour, width=2,
                               style="dashed" if step.type == ml.REBUT else "solid", arrowsize=18,
                               node_size=1500)
    if pred is not None:
        missed = [(s.pre, s.con) for s in gold.steps if s not in pred.steps]
        nx.draw_networkx_edges(dg, pos, edgelist=missed, ax=ax, edge_color="grey", style="dotted", width=1.5,
                               arrowsize=12, node_size=1500)
    for sid in dg.nodes:
        wrong = pred is not None and sid in g.nodes and (
            pred.degrees.get(sid, ml.UNRESOLVED) != gold.degrees[sid]
            or mm.formula_f1(pred.triples.get(sid, ()), gold.triples[sid]) < 1)
        x, y = pos[sid]
        ax.text(x, y, _node_label(g, shown, sid), ha="center", va="center", fontsize=7,
                color="crimson" if wrong else "black")
    ax.margins(x=0.25, y=0.25)  # room for the labels under and beside the circles
    ax.set_title(title, fontsize=9)
    ax.axis("off")


def draw_pair(g: Metagraph, pred: Prediction, label: str):
    """A figure: gold (left) and ``pred`` (right) on the same node positions, with the item's scores."""
    import matplotlib.pyplot as plt

    s = mm.score_sample(g, pred).scores
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    pos = layout(g)
    draw_metagraph(axes[0], g, pos=pos, title=f"{g.id}: gold")
    draw_metagraph(axes[1], g, pred, pos=pos, title=(
        f"{label}: node F1 {100 * s['node_f1']:.0f}, step F1 {100 * s['step_f1']:.0f}, "
        f"formula F1 {100 * s['formula_f1']:.0f}, certainty {100 * s['cert_acc']:.0f}"))
    xlims, ylims = [ax.get_xlim() for ax in axes], [ax.get_ylim() for ax in axes]
    for ax in axes:  # one frame for both panels, so a node sits at the same place in each
        ax.set_xlim(min(lo for lo, _ in xlims), max(hi for _, hi in xlims))
        ax.set_ylim(min(lo for lo, _ in ylims), max(hi for _, hi in ylims))
    fig.tight_layout()
    return fig


def pick_examples(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], ids: Sequence[str] = ()
                  ) -> dict[str, Metagraph]:
    """Requested ids (if present) plus the best, median and worst passage by step F1."""
    by_id = {g.id: g for g in graphs}
    chosen = {f"requested ({i})": by_id[i] for i in ids if i in by_id}
    ranked = sorted(graphs, key=lambda g: (mm.score_sample(g, preds.get(g.id, Prediction())).scores["step_f1"], g.id))
    if ranked:
        chosen.update({"best": ranked[-1], "median": ranked[len(ranked) // 2], "worst": ranked[0]})
    return chosen
