"""The ReCoRD chapter's figures (the book's style and the shared helpers: :mod:`rcstudy.plots`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ...plots import smoothed


def funnel(funnel):
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


def lengths(lengths):
    """Histograms of per-query lengths and counts, one step line per set (column ``set``)."""
    fig, axes = plt.subplots(1, 4, figsize=(12, 2.8), constrained_layout=True)
    for ax, col in zip(axes, ["passage tokens", "query tokens", "entity mentions", "distinct candidates"]):
        sns.histplot(data=lengths, x=col, hue="set", stat="density", common_norm=False, element="step",
                     ax=ax, legend=ax is axes[-1])
        ax.set_ylabel("")
    axes[0].set_ylabel("density")
    return fig


def f1_intervals(ours, paper, human: float, best_paper: float):
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
                ax.plot(*smoothed(curve), label=f"{prefix}seed {seed}")
        ax.set_title(title)
        ax.set_xlabel("optimiser step")
        ax.legend()
    axes[0].set_ylabel("training loss (moving average)")
    return fig
