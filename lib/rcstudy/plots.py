"""Figures: one colour-blind-safe style for the whole book, and images shown with alt text."""

from __future__ import annotations

import base64
import html
import io

import matplotlib.pyplot as plt  # the backend is the user's (matplotlib falls back to Agg without a display)
import numpy as np
import seaborn as sns

PALETTE = "colorblind"


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


def show(fig, alt: str, caption: str | None = None) -> None:
    """Display ``fig`` as a PNG with ``alt`` text (required: screen readers read it), then close it."""
    from IPython.display import HTML, display

    if not alt.strip():
        raise ValueError("every figure needs alt text")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    display(HTML(f'<figure class="rcstudy-figure"><img src="data:image/png;base64,{data}" '
                 f'alt="{html.escape(alt)}" style="max-width:100%"/>{cap}</figure>'))


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


def training_curves(panels, seeds):
    """One panel per method (title → line-label prefix → one loss curve per seed), each curve a
    moving average over a tenth of its steps."""
    fig, axes = plt.subplots(1, len(panels), figsize=(16, 3))
    for ax, (title, runs) in zip(axes, panels.items()):
        for prefix, losses in runs.items():
            for seed, curve in zip(seeds, losses):
                curve = np.asarray(curve, dtype=float)
                window = max(1, len(curve) // 10)
                smooth = np.convolve(curve, np.ones(window) / window, mode="valid")
                ax.plot(np.arange(len(smooth)) + window, smooth, label=f"{prefix}seed {seed}")
        ax.set_title(title)
        ax.set_xlabel("optimiser step")
        ax.legend()
    axes[0].set_ylabel("training loss (moving average)")
    return fig


# --- LogiQA ----------------------------------------------------------------------------------

def logiqa_answer_shares(shares):
    """Grouped bars: the share of each answer letter per split (long table: split, answer, share (%))."""
    fig, ax = plt.subplots(figsize=(8, 3.4))
    sns.barplot(data=shares, x="split", y="share (%)", hue="answer", ax=ax)
    ax.axhline(25, color="grey", lw=1, ls="--")
    ax.set(xlabel="", ylabel="answers (%)")
    ax.legend(title="answer", ncol=4, frameon=False, fontsize=9)
    return fig


def logiqa_similarity(best_similarity, threshold: float):
    """Histogram (log scale) of each LogiQA 2.0 item's closest LogiQA 1.0 paragraph, with the threshold."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.hist(best_similarity, bins=np.linspace(0, 1, 41), color="C0")
    ax.axvline(threshold, color="C3", ls="--", label=f"threshold {threshold}")
    ax.set(xlabel="highest paragraph similarity to any LogiQA 1.0 Eval/Test item", ylabel="LogiQA 2.0 items", yscale="log")
    ax.legend(frameon=False)
    return fig


def logiqa_lengths(lengths, edges):
    """Histogram of question lengths with the inner bin ``edges`` dashed."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.hist(lengths, bins=40, color="C0")
    for edge in edges:
        ax.axvline(edge, color="C3", ls="--")
    ax.set(xlabel="words in paragraph + question + four options", ylabel="test questions")
    return fig


def logiqa_type_shares(shares):
    """Grouped bars of the reasoning-type shares, one bar per labelling (the columns)."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    shares.plot.bar(ax=ax, rot=15)
    ax.set(ylabel="test questions (%)", xlabel="")
    ax.legend(frameon=False, fontsize=9)
    return fig


def logiqa_reader_curves(curves, majority: float, top: str, epochs: int):
    """Eval accuracy per epoch, one colour per reader and one line per seed, with the always-``top`` line."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    for i, (name, runs) in enumerate(curves.items()):
        for curve in runs:
            ax.plot(range(1, len(curve) + 1), 100 * np.array(curve), marker="o", color=f"C{i}", label=name)
    ax.axhline(majority, color="grey", ls=":", label=f"always {top}")
    ax.axhline(25, color="grey", ls="--", lw=1)
    unique = dict(zip(*reversed(ax.get_legend_handles_labels())))  # one entry per reader, not per seed
    ax.legend(unique.values(), unique.keys(), frameon=False, fontsize=9)
    ax.set(xlabel="epoch", ylabel="Eval accuracy (%)")
    ax.set_xticks(range(1, epochs + 1))
    return fig


def logiqa_accuracy_bars(bars, majority: float):
    """English Test accuracy per row, the paper's bar beside ours, with chance and majority lines."""
    fig, ax = plt.subplots(figsize=(9, 3.8))
    bars.plot.bar(ax=ax, rot=30)
    ax.axhline(25, color="grey", ls="--", lw=1, label="chance")
    ax.axhline(majority, color="grey", ls=":", label="majority answer")
    ax.set(ylabel="Test accuracy (%)", xlabel="")
    ax.legend(frameon=False, fontsize=9, ncol=4)
    plt.setp(ax.get_xticklabels(), ha="right")
    return fig


def logiqa_ablation(bars, model: str):
    """Ablation bars: ours with 95% intervals (column ``ours``), the paper's (``paper``; hatched n/a where lost)."""
    fig, ax = plt.subplots(figsize=(7, 3.4))
    x = np.arange(len(bars))
    ours = list(bars["ours"])
    ax.bar(x + 0.2, [c.estimate for c in ours], 0.4, label=f"ours ({model})", color="C1",
           yerr=[[c.estimate - c.low for c in ours], [c.high - c.estimate for c in ours]], capsize=3)
    paper = bars["paper"].to_numpy(dtype=float)
    ax.bar(x - 0.2, np.nan_to_num(paper, nan=0), 0.4, label="paper (RoBERTa)", color="C0")
    for xi, v in zip(x, paper):
        if np.isnan(v):
            ax.bar(xi - 0.2, 1.5, 0.4, color="white", edgecolor="C0", hatch="//")
            ax.text(xi - 0.2, 2.5, "n/a", ha="center", fontsize=8)
    ax.axhline(25, color="grey", ls="--", lw=1)
    ax.set_xticks(x, list(bars.index))
    ax.set(ylabel="Test accuracy (%)")
    ax.legend(frameon=False, fontsize=9)
    return fig


def logiqa_length_accuracy(points, paper, labels):
    """Accuracy per length bin with 95% intervals per system, and the paper's RoBERTa dashed."""
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for i, (name, g) in enumerate(points.groupby("system", sort=False)):
        xs = np.arange(len(g)) + (i - 1) * 0.08
        ax.errorbar(xs, g["accuracy"], yerr=[g["accuracy"] - g["low"], g["high"] - g["accuracy"]], marker="o",
                    capsize=3, label=name)
    ax.plot(range(len(labels)), paper, "k--", marker="s", label="paper RoBERTa")
    ax.axhline(25, color="grey", ls=":", lw=1)
    ax.set_xticks(range(len(labels)), labels)
    ax.set(xlabel="length (words)", ylabel="Test accuracy (%)")
    ax.legend(frameon=False, fontsize=8)
    return fig


def logiqa_overlap(ours, paper, gold: float):
    """Overlap ratio against Test accuracy: ours named, the paper's as squares, gold's ratio dashed."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.scatter(ours["Overlap Ratio"], ours["accuracy"], color="C1", label="ours")
    for n, r in ours.iterrows():
        ax.annotate(n, (r["Overlap Ratio"], r["accuracy"]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.scatter(paper["Overlap Ratio"], paper["accuracy"], color="C0", marker="s", label="paper")
    ax.axvline(gold, color="grey", ls="--", lw=1, label="gold answers (ours)")
    ax.set(xlabel="overlap ratio (%)", ylabel="Test accuracy (%)")
    ax.legend(frameon=False, fontsize=8)
    return fig


def logiqa_type_accuracy(frame):
    """Grouped bars of accuracy per reasoning type, one bar per column."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    frame.plot.bar(ax=ax, rot=15)
    ax.axhline(25, color="grey", ls="--", lw=1)
    ax.set(ylabel="Test accuracy (%)", xlabel="")
    ax.legend(frameon=False, fontsize=8)
    return fig
