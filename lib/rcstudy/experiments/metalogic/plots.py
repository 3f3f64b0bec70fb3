"""The MetaLogic chapter's figures, and the metagraph drawings they are made of (networkx); the
book's style and helpers: :mod:`rcstudy.plots`."""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ... import papers
from ...data import metalogic as ml
from ...data.metalogic import Metagraph, Prediction
from ...metrics import metalogic as mm
from ...plots import message

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


def draw_pair(axes, g: Metagraph, pred: Prediction, label: str, kind: str = "") -> None:
    """Gold (``axes[0]``) and ``pred`` (``axes[1]``) on the same node positions, with the item's scores."""
    s = mm.score_sample(g, pred).scores
    pos = layout(g)
    draw_metagraph(axes[0], g, pos=pos, title=f"{kind + ': ' if kind else ''}{g.id}, gold")
    draw_metagraph(axes[1], g, pred, pos=pos, title=(
        f"{label}: node F1 {100 * s['node_f1']:.0f}, step F1 {100 * s['step_f1']:.0f}, "
        f"formula F1 {100 * s['formula_f1']:.0f}, certainty {100 * s['cert_acc']:.0f}"))
    xlims, ylims = [ax.get_xlim() for ax in axes], [ax.get_ylim() for ax in axes]
    for ax in axes:  # one frame for both panels, so a node sits at the same place in each
        ax.set_xlim(min(lo for lo, _ in xlims), max(hi for _, hi in xlims))
        ax.set_ylim(min(lo for lo, _ in ylims), max(hi for _, hi in ylims))


def pick_examples(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], ids: Sequence[str] = ()
                  ) -> dict[str, Metagraph]:
    """Requested ids (if present) plus the best, median and worst passage by step F1."""
    by_id = {g.id: g for g in graphs}
    chosen = {f"requested ({i})": by_id[i] for i in ids if i in by_id}
    ranked = sorted(graphs, key=lambda g: (mm.score_sample(g, preds.get(g.id, Prediction())).scores["step_f1"], g.id))
    if ranked:
        chosen.update({"best": ranked[-1], "median": ranked[len(ranked) // 2], "worst": ranked[0]})
    return chosen


def pairs(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], ids: Sequence[str], label: str):
    """One row per drawn passage (:func:`pick_examples`): gold beside ``label``'s prediction."""
    picks = pick_examples(graphs, preds, ids)
    fig, axes = plt.subplots(max(1, len(picks)), 2, figsize=(11, 4.2 * max(1, len(picks))), squeeze=False)
    for row, (kind, g) in zip(axes, picks.items()):
        draw_pair(row, g, preds.get(g.id, Prediction()), label, kind)
    fig.tight_layout()
    return fig


def pair_steps(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], ids: Sequence[str]
                         ) -> pd.DataFrame:
    """The steps of the drawn passages, gold and predicted: the text alternative of :func:`pairs`."""
    return pd.DataFrame([{"drawn": kind, "passage": g.id, "gold steps": g.proof.strip() or "none",
                          "predicted steps": "; ".join(s.text for s in preds.get(g.id, Prediction()).steps) or "none"}
                         for kind, g in pick_examples(graphs, preds, ids).items()]).set_index("drawn")


def gold_graphs(shown: Sequence[Metagraph]):
    """The gold metagraphs of ``shown`` side by side."""
    fig, axes = plt.subplots(1, len(shown), figsize=(5.5 * len(shown), 4))
    for ax, g in zip(np.atleast_1d(axes), shown):
        draw_metagraph(ax, g, title=f"{g.id} (gold)")
    return fig


def labels(labels: pd.DataFrame, steps: pd.Series):
    """Degrees per split (log scale), operators over all splits, steps per metagraph."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    degree_cols = [f"degree {d}" for d in range(5)]
    labels[degree_cols].set_axis(ml.DEGREE_WORDS, axis=1).T.plot.bar(ax=axes[0], logy=True, rot=30)
    axes[0].set(title="Degree of certainty per split", ylabel="nodes (log scale)")
    labels.drop(columns=degree_cols).sum().plot.barh(ax=axes[1], color=sns.color_palette()[:1])
    axes[1].set(title="Operators, all splits", xlabel="count")
    steps.plot.bar(ax=axes[2], rot=0)
    axes[2].set(title="Steps per metagraph", xlabel="steps", ylabel="passages")
    return fig


def losses(losses: Mapping[str, Sequence[float]]):
    """Training loss per optimiser step of each fine-tuned generator."""
    if not losses:
        return message("no seq2seq model is trained in this run")
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for name, curve in losses.items():
        ax.plot(np.arange(1, len(curve) + 1), curve, label=name)
    ax.set(xlabel="optimiser step", ylabel="training loss (token cross-entropy)", yscale="log")
    ax.legend()
    return fig


def confusions(confusions: Mapping[str, pd.DataFrame]):
    """Gold × predicted certainty heatmaps, one per system."""
    fig, axes = plt.subplots(1, len(confusions), figsize=(12, 3.6))
    for ax, (name, frame) in zip(np.atleast_1d(axes), confusions.items()):
        sns.heatmap(frame, annot=True, fmt="d", cmap="Blues", cbar=False, ax=ax)
        ax.set_title(name, fontsize=10)
    return fig


def step_types(step_plot: pd.DataFrame, operator_plot: pd.DataFrame):
    """Figures 3 and 4: step-type scores and per-operator formula F1, the paper's beside ours."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 3.8))
    step_plot.plot.barh(ax=axes[0])
    axes[0].set(title="Support and rebut steps (Figure 3)", xlabel="score")
    operator_plot.T.plot.bar(ax=axes[1], rot=0)
    axes[1].set(title="Formula F1 by operator (Figure 4)", ylabel="F1")
    axes[1].legend(fontsize=7)
    return fig


def scale(scale: pd.DataFrame, panels: Sequence[str]):
    """Figure 5: ours (mean ± sd over subsets) solid, the paper's T5-large dashed; the paper's MetGen
    points at ≤ 20 % (copies of its Multitask rows) hollow."""
    paper_t15 = papers.table("metalogic", "Table 15")
    paper_t3 = papers.table("metalogic", "Table 3")
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5), sharex=True)
    palette = dict(zip(["Once", "Multitask", "MetGen"], sns.color_palette()[3:6]))
    for ax, col in zip(axes.flat, panels):
        for system, grp in scale.groupby("system"):
            agg = grp.groupby("ratio")[col].agg(["mean", "std"]).fillna(0)
            ax.errorbar(agg.index, agg["mean"], yerr=agg["std"], marker="o", label=system, capsize=3)
        for name, colour in palette.items():
            row = f"{name} (large)"
            pts = [(float(r.split(", ")[1].rstrip("%")) / 100, paper_t15.loc[r, col]) for r in paper_t15.index
                   if r.startswith(row)] + [(1.0, paper_t3.loc[row, col])]
            pts.sort()
            flagged = [(x, y) for x, y in pts if name == "MetGen" and x <= 0.2]
            clean = [(x, y) for x, y in pts if (x, y) not in flagged]
            ax.plot(*zip(*clean), linestyle="--", marker="s", color=colour, label=f"paper: {name} (T5-large)")
            if flagged:
                ax.plot(*zip(*flagged), linestyle="none", marker="s", mfc="none", color=colour)
        ax.set(xscale="log", title=col, xlabel="share of training passages")
    axes.flat[0].legend(fontsize=7)
    return fig


def error_counts(counts: pd.DataFrame):
    """Error counts per category, one bar per column of ``counts``."""
    fig, ax = plt.subplots(figsize=(9, 3.2))
    counts.plot.bar(ax=ax, rot=0)
    ax.set(ylabel="count")
    return fig
