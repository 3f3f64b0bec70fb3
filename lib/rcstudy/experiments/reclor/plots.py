"""The ReClor chapter's figures (the book's style and the shared helpers: :mod:`rcstudy.plots`)."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns


def option_length(lengths: pd.DataFrame):
    """Step histograms (densities) of training-option length, right vs wrong (columns: length, right)."""
    f = lengths.assign(option=lambda d: np.where(d["right"], "right", "wrong"))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    sns.histplot(f, x="length", hue="option", stat="density", common_norm=False, binwidth=2, element="step",
                 hue_order=["wrong", "right"], ax=ax)
    ax.set(xlabel="option length (WordPiece tokens)", ylabel="density", xlim=(0, np.percentile(f["length"], 99.5)))
    return fig


def overlaps(paper: pd.DataFrame, ours: pd.DataFrame, runs_right: np.ndarray, *, paper_items: float,
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


def easy_hard(bars: pd.DataFrame, chance: float):
    """Horizontal bars of each Table 7 row's accuracy on EASY and HARD (long: model, subset, accuracy)."""
    fig, ax = plt.subplots(figsize=(8, 3.8))
    sns.barplot(bars, y="model", x="accuracy", hue="subset", ax=ax, orient="h")
    ax.axvline(chance, color="grey", ls="--", lw=1)
    ax.text(chance + 0.5, -0.6, "chance", color="grey", va="bottom")
    ax.set(xlabel="accuracy on val (%), mean over seeds", ylabel="")
    ax.legend(title="subset", loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def type_heatmaps(by_type: pd.DataFrame, types: Sequence[str]):
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
