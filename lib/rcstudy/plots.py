"""Figures: one colour-blind-safe style for the whole book; each figure glued for a numbered {glue:figure}."""

from __future__ import annotations

import io
import math
from typing import Mapping, Sequence

import matplotlib.pyplot as plt  # the backend is the user's (matplotlib falls back to Agg without a display)
import numpy as np
import pandas as pd
import seaborn as sns

from .data import metalogic as ml
from .data.metalogic import Metagraph, Prediction
from .metrics import metalogic as mm

PALETTE = "colorblind"


def message(text: str, figsize=(7, 1.2)):
    """A figure that only says ``text``: what a numbered figure shows when its analysis did not run."""
    fig, ax = plt.subplots(figsize=figsize)
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
    return fig


def use_book_style() -> None:
    """Seaborn's colour-blind palette, readable sizes, no top/right spines."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE)
    plt.rcParams.update({"figure.dpi": 110, "savefig.bbox": "tight", "axes.spines.top": False,
                         "axes.spines.right": False})


def glue_figure(name: str, fig) -> None:
    """Glue ``fig`` as a PNG under ``name``, then close it. The prose places it with a numbered,
    captioned ``{glue:figure}`` (``:name: fig-...`` for ``{numref}``, ``:alt:`` for screen readers);
    the rendered page links the image file instead of inlining it."""
    from IPython.display import Image

    from .report import glue

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    glue(name, Image(buf.getvalue(), format="png"))


# --------------------------------------------------------------------------- ReCoRD

def record_funnel(funnel):
    """Horizontal bars of the paper's collection pipeline (stage → count)."""
    ys = range(len(funnel))[::-1]
    fig, ax = plt.subplots(figsize=(7, 2.6))
    ax.barh(ys, funnel.values, color=sns.color_palette()[0])
    ax.set_yticks(ys, funnel.index)
    ax.set_xlabel("count (paper, Figure 2)")
    for y, v in zip(ys, funnel.values):
        ax.text(v, y, f" {v / 1000:.0f}k", va="center")
    ax.set_xlim(0, funnel.max() * 1.15)
    ax.xaxis.set_major_formatter(lambda v, _: f"{v / 1000:.0f}k")
    return fig


def record_lengths(lengths):
    """Histograms of per-query lengths and counts, one step line per set (column ``set``)."""
    fig, axes = plt.subplots(1, 4, figsize=(12, 2.8), constrained_layout=True)
    for ax, col in zip(axes, ["passage tokens", "query tokens", "entity mentions", "distinct candidates"]):
        sns.histplot(data=lengths, x=col, hue="set", stat="density", common_norm=False, element="step",
                     ax=ax, legend=ax is axes[-1])
        ax.set_ylabel("")
    axes[0].set_ylabel("density")
    return fig


def record_f1(ours, paper, human: float, best_paper: float):
    """Our F1 intervals per row (dots) beside the paper's dev F1 (diamonds), with lines at the
    paper's human and best-model F1."""
    order = list(ours.index)
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(order) + 1.2))
    ys = np.arange(len(order))[::-1]
    for y, r in zip(ys, order):
        ci = ours.at[r, "F1 (dev)"]
        ax.errorbar(ci.estimate, y, xerr=[[ci.estimate - ci.low], [ci.high - ci.estimate]], fmt="o",
                    color=sns.color_palette()[0], capsize=3, label="ours (95% interval)" if y == ys[0] else None)
        if r in paper.index:
            ax.plot(paper.at[r, "F1 (dev)"], y, "D", color=sns.color_palette()[1],
                    label="paper (dev)" if r == "Random Guess" else None)
    ax.axvline(human, ls="--", color="grey")
    ax.text(human, ys[0] + 0.6, " human (paper)", color="grey", ha="right")
    ax.axvline(best_paper, ls=":", color="grey")
    ax.text(best_paper, ys[0] + 0.6, "DocQA w/ ELMo (paper) ", color="grey", ha="right")
    ax.set_yticks(ys, order)
    ax.set_xlabel("F1 (%)")
    ax.set_xlim(0, 102)
    ax.legend(loc="lower right", frameon=True)
    return fig


def smoothed(curve: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """A loss curve's moving average over a tenth of its steps, and the step each average ends at."""
    curve = np.asarray(curve, dtype=float)
    window = max(1, len(curve) // 10)
    smooth = np.convolve(curve, np.ones(window) / window, mode="valid")
    return np.arange(len(smooth)) + window, smooth


def training_curves(panels, seeds):
    """One panel per method (title → line-label prefix → one loss curve per seed), each curve a
    moving average over a tenth of its steps."""
    fig, axes = plt.subplots(1, len(panels), figsize=(16, 3))
    for ax, (title, runs) in zip(axes, panels.items()):
        for prefix, losses in runs.items():
            for seed, curve in zip(seeds, losses):
                ax.plot(*smoothed(curve), label=f"{prefix}seed {seed}")
        ax.set_title(title)
        ax.set_xlabel("optimiser step")
        ax.legend()
    axes[0].set_ylabel("training loss (moving average)")
    return fig


def loss_curves(curves: Mapping[str, Sequence[Sequence[float]]], k: int):
    """Training loss of each trained row (one line per seed, a moving average over a tenth of its
    steps) against ln k, the loss of guessing among k options, and the 2% band below it within
    which its training loss counts as not having fallen. A fallen training loss is not learning:
    a row counts as learned on its held-out score (:attr:`rcstudy.learning.LossCheck.learned`)."""
    from .learning import CHANCE_MARGIN

    if not curves:
        return message("no trained row reports its training loss in this run")
    fig, ax = plt.subplots(figsize=(8, 3.4))
    for name, runs in curves.items():
        for seed, curve in enumerate(runs):
            ax.plot(*smoothed(curve), label=name if len(runs) == 1 else f"{name}, seed {seed + 1}")
    chance = math.log(k)
    ax.axhspan((1 - CHANCE_MARGIN) * chance, chance, color="0.85", zorder=0)
    ax.axhline(chance, color="0.3", ls="--", lw=1, label=f"ln {k}: guessing")
    ax.set(xlabel="optimiser step", ylabel="training loss (moving average)")
    ax.legend(fontsize=8, loc="lower left")
    return fig


# --- ReClor ----------------------------------------------------------------------------------

def reclor_option_length(lengths: pd.DataFrame):
    """Step histograms (densities) of training-option length, right vs wrong (columns: length, right)."""
    f = lengths.assign(option=lambda d: np.where(d["right"], "right", "wrong"))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    sns.histplot(f, x="length", hue="option", stat="density", common_norm=False, binwidth=2, element="step",
                 hue_order=["wrong", "right"], ax=ax)
    ax.set(xlabel="option length (WordPiece tokens)", ylabel="density", xlim=(0, np.percentile(f["length"], 99.5)))
    return fig


def reclor_overlaps(paper: pd.DataFrame, ours: pd.DataFrame, runs_right: np.ndarray, *, paper_items: float,
                    our_items: int, models: int, seeds: int):
    """Table 27 as heatmaps (the paper's on test, ours on val) and how many runs got each item right."""
    fig, axes = plt.subplots(1, 3, figsize=(14, 4), gridspec_kw={"width_ratios": [1.1, 1, 1]})
    sns.heatmap(paper, annot=True, fmt=".0f", cmap="Blues", cbar=False, ax=axes[0], mask=paper.isna())
    axes[0].set_title(f"paper: test ({paper_items:,.0f} items)")
    sns.heatmap(ours, annot=True, fmt="d", cmap="Blues", cbar=False, ax=axes[1],
                mask=np.tril(np.ones(ours.shape, bool), k=-1))
    axes[1].set_title(f"ours: val ({our_items} items)")
    counts = np.bincount(runs_right, minlength=runs_right.max() + 1)
    axes[2].bar(np.arange(len(counts)), counts, color=sns.color_palette()[2])
    axes[2].set(xlabel="runs (model × seed) that got the item right", ylabel="validation items",
                title=f"{models} models × {seeds} seeds")
    axes[2].xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    for ax in axes[:2]:
        ax.tick_params(axis="x", rotation=30)
    return fig


def reclor_easy_hard(bars: pd.DataFrame, chance: float):
    """Horizontal bars of each Table 7 row's accuracy on EASY and HARD (long: model, subset, accuracy)."""
    fig, ax = plt.subplots(figsize=(8, 3.8))
    sns.barplot(bars, y="model", x="accuracy", hue="subset", ax=ax, orient="h")
    ax.axvline(chance, color="grey", ls="--", lw=1)
    ax.text(chance + 0.5, -0.6, "chance", color="grey", va="bottom")
    ax.set(xlabel="accuracy on val (%), mean over seeds", ylabel="")
    ax.legend(title="subset", loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def reclor_types(by_type: pd.DataFrame, types: Sequence[str]):
    """Figure 4: heatmaps of accuracy by question type (rows, with their EASY / HARD counts) and
    model (columns), EASY left and HARD right (long: model, subset, type, n, accuracy)."""
    models = list(dict.fromkeys(by_type["model"]))
    counts = by_type.groupby(["type", "subset"])["n"].first().unstack()
    labels = [f"{t} ({counts.at[t, 'EASY']} / {counts.at[t, 'HARD']})" for t in types]
    fig, axes = plt.subplots(1, 2, figsize=(12, 7), sharey=True)
    for ax, subset in zip(axes, ("EASY", "HARD")):
        part = by_type[by_type["subset"] == subset]
        grid = part.pivot(index="type", columns="model", values="accuracy").loc[list(types), models]
        grid.index = labels
        sns.heatmap(grid, annot=True, fmt=".0f", vmin=0, vmax=100, cmap="viridis", cbar=subset == "HARD", ax=ax,
                    cbar_kws={"label": "accuracy (%)"})
        ax.set(title=f"val-{subset}", xlabel="", ylabel="")
        ax.tick_params(axis="x", rotation=30)
    return fig


# ---------------------------------------------------------------------------------------------
# MetaLogic: metagraphs (networkx), label counts, scores
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


def metalogic_pairs(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], ids: Sequence[str], label: str):
    """One row per drawn passage (:func:`pick_examples`): gold beside ``label``'s prediction."""
    picks = pick_examples(graphs, preds, ids)
    fig, axes = plt.subplots(max(1, len(picks)), 2, figsize=(11, 4.2 * max(1, len(picks))), squeeze=False)
    for row, (kind, g) in zip(axes, picks.items()):
        draw_pair(row, g, preds.get(g.id, Prediction()), label, kind)
    fig.tight_layout()
    return fig


def metalogic_pair_steps(graphs: Sequence[Metagraph], preds: Mapping[str, Prediction], ids: Sequence[str]
                         ) -> pd.DataFrame:
    """The steps of the drawn passages, gold and predicted: the text alternative of :func:`metalogic_pairs`."""
    return pd.DataFrame([{"drawn": kind, "passage": g.id, "gold steps": g.proof.strip() or "none",
                          "predicted steps": "; ".join(s.text for s in preds.get(g.id, Prediction()).steps) or "none"}
                         for kind, g in pick_examples(graphs, preds, ids).items()]).set_index("drawn")


def metalogic_gold(shown: Sequence[Metagraph]):
    """The gold metagraphs of ``shown`` side by side."""
    fig, axes = plt.subplots(1, len(shown), figsize=(5.5 * len(shown), 4))
    for ax, g in zip(np.atleast_1d(axes), shown):
        draw_metagraph(ax, g, title=f"{g.id} (gold)")
    return fig


def metalogic_labels(labels: pd.DataFrame, steps: pd.Series):
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


def metalogic_losses(losses: Mapping[str, Sequence[float]]):
    """Training loss per optimiser step of each fine-tuned generator."""
    if not losses:
        return message("no seq2seq model is trained in this run")
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for name, curve in losses.items():
        ax.plot(np.arange(1, len(curve) + 1), curve, label=name)
    ax.set(xlabel="optimiser step", ylabel="training loss (token cross-entropy)", yscale="log")
    ax.legend()
    return fig


def metalogic_confusions(confusions: Mapping[str, pd.DataFrame]):
    """Gold × predicted certainty heatmaps, one per system."""
    fig, axes = plt.subplots(1, len(confusions), figsize=(12, 3.6))
    for ax, (name, frame) in zip(np.atleast_1d(axes), confusions.items()):
        sns.heatmap(frame, annot=True, fmt="d", cmap="Blues", cbar=False, ax=ax)
        ax.set_title(name, fontsize=10)
    return fig


def metalogic_step_types(step_plot: pd.DataFrame, operator_plot: pd.DataFrame):
    """Figures 3 and 4: step-type scores and per-operator formula F1, the paper's beside ours."""
    fig, axes = plt.subplots(1, 2, figsize=(13, 3.8))
    step_plot.plot.barh(ax=axes[0])
    axes[0].set(title="Support and rebut steps (Figure 3)", xlabel="score")
    operator_plot.T.plot.bar(ax=axes[1], rot=0)
    axes[1].set(title="Formula F1 by operator (Figure 4)", ylabel="F1")
    axes[1].legend(fontsize=7)
    return fig


def metalogic_scale(scale: pd.DataFrame, panels: Sequence[str]):
    """Figure 5: ours (mean ± sd over subsets) solid, the paper's T5-large dashed; the paper's MetGen
    points at ≤ 20 % (copies of its Multitask rows) hollow."""
    from . import papers

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


def metalogic_error_counts(counts: pd.DataFrame):
    """Error counts per category, one bar per column of ``counts``."""
    fig, ax = plt.subplots(figsize=(9, 3.2))
    counts.plot.bar(ax=ax, rot=0)
    ax.set(ylabel="count")
    return fig


# --------------------------------------------------------------------------- RULE

def rule_splits(by_split: pd.DataFrame, none_answers: pd.Series, per_main: pd.Series):
    """Left: selective/eliminative subquestions per split (stacked; triangles: None is the answer).
    Right: main questions by their number of subquestions."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    by_split[["selective", "eliminative"]].plot.bar(stacked=True, ax=axes[0], rot=0)
    axes[0].plot(range(len(none_answers)), none_answers, "k^", label="None is the answer")
    axes[0].set(xlabel="split", ylabel="subquestions", title="Subquestions per split")
    axes[0].set_ylim(0, 1.3 * by_split.sum(axis=1).max())
    axes[0].legend(frameon=False, fontsize=8, ncol=3, loc="upper center")
    axes[1].bar(per_main.index.astype(str), per_main.values)
    axes[1].set(xlabel="subquestions of the main question", ylabel="main questions",
                title="Subquestions per main question")
    return fig


def rule_selective_eliminative(bars: pd.DataFrame, human_eliminative: float, chance: float):
    """Selective vs eliminative accuracy per system (rows of ``bars``), the paper's human
    eliminative accuracy (dashed) and chance (dotted)."""
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(bars) + 1.5))
    bars.plot.barh(ax=ax)
    ax.axvline(human_eliminative, color="k", ls="--", lw=1, label="human, eliminative (paper)")
    ax.axvline(chance, color="grey", ls=":", lw=1, label="chance")
    ax.set(xlabel="accuracy (%)", ylabel="")
    ax.invert_yaxis()
    ax.legend(frameon=False, fontsize=9, loc="lower right")
    return fig


def rule_main_vs_sub(points: pd.DataFrame, human: Mapping[str, float], chance: float):
    """MainQ against SubQ accuracy per system (marker size: consistency), chance and the paper's human point."""
    fig, ax = plt.subplots(figsize=(6.5, 5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (n, p) in enumerate(points.iterrows()):
        ax.scatter(p["MainQ"], p["SubQ"], s=40 + 4 * p["Consistency"], label=n, marker="os^Dv<>"[i % 7],
                   color=colors[i % 10])
    ax.scatter([chance], [chance], c="grey", marker="x", s=80, label="chance")
    ax.scatter([human["MainQ"]], [human["SubQ"]], c="k", marker="*", s=160, label="human (paper, derived)")
    ax.plot([0, 100], [0, 100], c="grey", lw=0.8, ls=":")
    ax.set(xlim=(0, 100), ylim=(0, 100), xlabel="MainQ accuracy (%)", ylabel="SubQ accuracy (%)")
    ax.legend(frameon=False, fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    return fig


def rule_length(curves: Mapping[tuple[str, str], pd.DataFrame], chance: float):
    """Accuracy by question length (left) and option length (right), one colour per system group,
    solid for main questions and dashed for subquestions (``curves``: (group, column) → bins)."""
    if not curves:
        return message("the length analysis did not run (switched off, or no system could be run)")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    groups = list(dict.fromkeys(group for group, _ in curves))
    for (group, column), curve in curves.items():
        ax = axes[0 if column == "question words" else 1]
        for kind, style in (("main question", "-o"), ("subquestion", "--s")):
            c = curve[curve["kind"] == kind]
            ax.plot(c["length"], c["accuracy"], style, color=colors[groups.index(group) % len(colors)],
                    label=f"{group}: {kind}s")
    for ax, xlabel in zip(axes, ("question length (words, bin median)", "mean option length (words, bin median)")):
        ax.axhline(chance, color="grey", ls=":", lw=1)
        ax.set(xlabel=xlabel, ylim=(0, 100))
    axes[0].set_ylabel("accuracy (%)")
    axes[0].legend(frameon=False, fontsize=8, bbox_to_anchor=(0, -0.2), loc="upper left", ncol=2)
    return fig


def rule_easy_hard(hard_table: pd.DataFrame, chance: float):
    """MainQ-wise SubQ accuracy per system on RULE main questions from ReClor's EASY vs HARD set."""
    if hard_table is None or not len(hard_table):
        return message("no system's subquestions could be split by ReClor's EASY/HARD set")
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(hard_table) + 1.5))
    hard_table[["MainQ-wise SubQ EASY", "MainQ-wise SubQ HARD"]].rename(columns=lambda c: c.split()[-1]).plot.barh(ax=ax)
    ax.axvline(chance, color="grey", ls=":", lw=1)
    ax.set(xlabel="MainQ-wise SubQ accuracy (%)", ylabel="")
    ax.invert_yaxis()
    ax.legend(frameon=False, title="ReClor subset of\nthe main question", bbox_to_anchor=(1.02, 1), loc="upper left")
    return fig


# --------------------------------------------------------------------------- benchmark appendix

def bench_cost_curves(curves: Mapping[str, dict]):
    """Seconds (top) and peak memory (bottom) against the amount of work, log-log, one panel per
    curve; ours solid, the reference dashed, each line labelled with its growth exponent."""
    fig, axes = plt.subplots(2, len(curves), figsize=(3.6 * len(curves), 5.6), squeeze=False)
    for col, (name, curve) in enumerate(curves.items()):
        for i, (system, line) in enumerate(curve["lines"].items()):
            xs = [p["x"] for p in line["points"]]
            style = dict(marker="o", color=f"C{i}", ls="-" if system == "ours" else "--")
            axes[0, col].plot(xs, [p["seconds"] for p in line["points"]], label=f"{system} (exponent "
                              f"{line['exponent']:.2f})", **style)
            axes[1, col].plot(xs, [p["peak_rss_mb"] for p in line["points"]], label=system, **style)
        axes[0, col].set(title=name, xscale="log", yscale="log", ylabel="seconds" if col == 0 else "")
        axes[1, col].set(xscale="log", xlabel=curve["x"], ylabel="peak memory (MB)" if col == 0 else "")
        for ax in axes[:, col]:
            ax.set_xticks(xs, [str(x) for x in xs], minor=False)
            ax.xaxis.set_minor_locator(plt.NullLocator())  # the sizes themselves, not log-scale minor ticks
            ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return fig
