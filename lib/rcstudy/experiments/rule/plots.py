"""The RULE page's figures (the book's style and helpers: :mod:`rcstudy.plots`)."""

from __future__ import annotations

from typing import Mapping

import matplotlib.pyplot as plt
import pandas as pd

from ...plots import message


def splits(by_split: pd.DataFrame, none_answers: pd.Series, per_main: pd.Series):
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


def selective_eliminative(bars: pd.DataFrame, human_eliminative: float, chance: float):
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


def main_vs_sub(points: pd.DataFrame, human: Mapping[str, float], chance: float):
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


def length(curves: Mapping[tuple[str, str], pd.DataFrame], chance: float):
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


def easy_hard(hard_table: pd.DataFrame, chance: float):
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
