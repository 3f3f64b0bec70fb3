"""Figures: one colour-blind-safe style for the whole book; each figure glued for a numbered {glue:figure}."""

from __future__ import annotations

import io
import math
from typing import Mapping, Sequence

import matplotlib.pyplot as plt  # the backend is the user's (matplotlib falls back to Agg without a display)
import numpy as np
import pandas as pd
import seaborn as sns


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


def smoothed(curve: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """A loss curve's moving average over a tenth of its steps, and the step each average ends at."""
    curve = np.asarray(curve, dtype=float)
    window = max(1, len(curve) // 10)
    smooth = np.convolve(curve, np.ones(window) / window, mode="valid")
    return np.arange(len(smooth)) + window, smooth


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
