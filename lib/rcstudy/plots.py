"""Figures: one colour-blind-safe style for the whole book; each figure glued for a numbered {glue:figure}."""

from __future__ import annotations

import io
import math
from typing import Mapping, Sequence

import matplotlib.pyplot as plt  # the backend is the user's (matplotlib falls back to Agg without a display)
import numpy as np
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
