"""The LogiQA chapter's figures (the book's style and helpers: :mod:`rcstudy.plots`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

from ...plots import message


def answer_shares(shares):
    """Grouped bars: the share of each answer letter per split (long table: split, answer, share (%))."""
    fig, ax = plt.subplots(figsize=(8, 3.4))
    sns.barplot(data=shares, x="split", y="share (%)", hue="answer", ax=ax)
    ax.axhline(25, color="grey", lw=1, ls="--")
    ax.set(xlabel="", ylabel="answers (%)")
    ax.legend(title="answer", ncol=4, frameon=False, fontsize=9)
    return fig


def similarity(best_similarity, threshold: float):
    """Histogram (log scale) of each LogiQA 2.0 item's closest LogiQA 1.0 paragraph, with the threshold
    (``best_similarity`` None: the official training file is read, so nothing was deduplicated)."""
    if best_similarity is None:
        return message("Train.txt is read: LogiQA 2.0 is not trained on, so nothing is deduplicated")
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.hist(best_similarity, bins=np.linspace(0, 1, 41), color="C0")
    ax.axvline(threshold, color="C3", ls="--", label=f"threshold {threshold}")
    ax.set(xlabel="highest paragraph similarity to any LogiQA 1.0 Eval/Test item", ylabel="LogiQA 2.0 items", yscale="log")
    ax.legend(frameon=False)
    return fig


def lengths(lengths, edges):
    """Histogram of question lengths with the inner bin ``edges`` dashed."""
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.hist(lengths, bins=40, color="C0")
    for edge in edges:
        ax.axvline(edge, color="C3", ls="--")
    ax.set(xlabel="words in paragraph + question + four options", ylabel="test questions")
    return fig


def type_shares(shares):
    """Grouped bars of the reasoning-type shares, one bar per labelling (the columns)."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    shares.plot.bar(ax=ax, rot=15)
    ax.set(ylabel="test questions (%)", xlabel="")
    ax.legend(frameon=False, fontsize=9)
    return fig


def reader_curves(curves, majority: float, top: str, epochs: int):
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


def accuracy_bars(bars, majority: float):
    """English Test accuracy per row, the paper's bar beside ours, with chance and majority lines."""
    fig, ax = plt.subplots(figsize=(9, 3.8))
    bars.plot.bar(ax=ax, rot=30)
    ax.axhline(25, color="grey", ls="--", lw=1, label="chance")
    ax.axhline(majority, color="grey", ls=":", label="majority answer")
    ax.set(ylabel="Test accuracy (%)", xlabel="")
    ax.legend(frameon=False, fontsize=9, ncol=4)
    plt.setp(ax.get_xticklabels(), ha="right")
    return fig


def ablation(bars, model: str):
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


def length_accuracy(points, paper, labels):
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


def overlap(ours, paper, gold: float):
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


def type_accuracy(frame):
    """Grouped bars of accuracy per reasoning type, one bar per column."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    frame.plot.bar(ax=ax, rot=15)
    ax.axhline(25, color="grey", ls="--", lw=1)
    ax.set(ylabel="Test accuracy (%)", xlabel="")
    ax.legend(frameon=False, fontsize=8)
    return fig
