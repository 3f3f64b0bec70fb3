"""The biases of the data: the tokens that mark right options (Table 5) and option length (§3.3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from IPython.display import Markdown

from ... import bias, papers
from ...claims import ClaimEvidence
from ...data.records import MCItem
from ...report import md_text
from ...stats import bootstrap_ci
from .config import P, Tokens
from .dataset import TOKENIZATIONS, side_by_side
from ..section import Section


def table5_side_by_side(stats: pd.DataFrame, *, min_freq: int, rule: str, k: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's Table 5 beside our scores for its tokens and for our own top ``k``.

    Returns the side-by-side table and our top ``k`` (``Score (%)``, ``Freq``, ``rank``)."""
    paper = papers.table("reclor", "Table 5")
    paper["Freq"] = [int(v) for v in paper["Freq"]]
    top = bias.top_tokens(stats, min_freq=min_freq, rule=rule, k=k)
    tokens = list(dict.fromkeys([*paper.index, *top.index]))
    known = [t in stats.index for t in tokens]
    ours = pd.DataFrame({
        "Score (%)": [100 * stats.at[t, "p_right"] if ok else None for t, ok in zip(tokens, known)],
        "Freq": [int(stats.at[t, "count"]) if ok else None for t, ok in zip(tokens, known)],
        "our rank": [int(top.at[t, "rank"]) if t in top.index else None for t in tokens],
    }, index=pd.Index(tokens, name="token"), dtype=object)
    return side_by_side(paper, ours), top


def table5_variants(train: Sequence[MCItem], wp: Callable[[str], list[str]], tokens: Tokens,
                    stats: pd.DataFrame) -> pd.DataFrame:
    """Table 5's sensitivity to the choices the paper leaves open: how tokens are counted and the
    frequency rule."""
    paper = papers.table(P, "Table 5")
    variants = {}
    for mode in bias.COUNT_MODES:
        s = stats if mode == tokens.count_mode else bias.token_label_stats(train, wp, count_mode=mode)
        for rule in bias.FREQ_RULES:
            t = bias.top_tokens(s, min_freq=tokens.min_freq, rule=rule)
            variants[(mode, f"{rule} {tokens.min_freq} times")] = {
                "tokens shared with the paper's top 10": len(set(t.index) & set(paper.index)),
                "our top 3": ", ".join(t.index[:3])}
    return pd.DataFrame(variants).T


def token_bias(train: Sequence[MCItem], wp: Callable[[str], list[str]], tokens: Tokens) -> Section:
    """Table 5 beside the paper's, and its sensitivity to the choices the paper leaves open."""
    stats = bias.token_label_stats(train, wp, count_mode=tokens.count_mode)
    t5, top = table5_side_by_side(stats, min_freq=tokens.min_freq, rule=tokens.freq_rule)
    paper = papers.table(P, "Table 5")
    reproduced = [t in top.index and np.isclose(round(top.at[t, "Score (%)"], 1), paper.at[t, "Score (%)"])
                  and top.at[t, "Freq"] == paper.at[t, "Freq"] for t in paper.index]
    mismatches = len(paper) - sum(reproduced)
    shared = len(set(top.index) & set(paper.index))
    facts = {"reclor_t5_overlap": shared,
             "reclor_t5_same": Markdown("the same ten tokens with the same scores and counts" if mismatches == 0
                                        else "a different top ten")}
    claim = ClaimEvidence("table5-reproduced", {"mismatches": mismatches},
                          f"{shared} of 10 tokens shared; ours: " + ", ".join(top.index))
    return Section(tables={"reclor_table5": t5, "reclor_table5_variants": table5_variants(train, wp, tokens, stats)},
                   facts=facts, claims=(claim,))


@dataclass(frozen=True, kw_only=True)
class OptionLength(Section):
    """Right vs wrong option length, with the WordPiece length of every training option (the figure's data)."""

    lengths: pd.DataFrame  # columns: id, length, right


def longest_option_accuracy(items: Sequence[MCItem], tokenize: Callable[[str], list[str]]) -> float:
    """Accuracy (%) of always picking the longest option (first one on ties)."""
    picks = [int(np.argmax([len(tokenize(o)) for o in it.options])) for it in items if it.label is not None]
    gold = [it.label for it in items if it.label is not None]
    return 100 * float(np.mean(np.array(picks) == np.array(gold)))



def length_claims(right: float, wrong: float, lengths: pd.DataFrame) -> tuple[ClaimEvidence, ...]:
    """Right options are longer (per question, right − wrong), and our means match the paper's."""
    length_diff = None
    if len(lengths):
        per_q = lengths.groupby(["id", "right"])["length"].mean().unstack()
        per_q = per_q.dropna()
        length_diff = bootstrap_ci((per_q[True] - per_q[False]).to_numpy(float))
    paper_right = papers.value(P, "§3.3", "right options", "mean length")
    paper_wrong = papers.value(P, "§3.3", "wrong options", "mean length")
    return (ClaimEvidence("length-bias", {"diff": length_diff} if length_diff is not None else None,
                          f"right {right:.2f}, wrong {wrong:.2f}"
                          + (f"; right − wrong per question {length_diff}" if length_diff is not None else "")),
            ClaimEvidence("lengths-reproduced", {"gaps": {"right": abs(right - paper_right),
                                                          "wrong": abs(wrong - paper_wrong)}},
                          f"right {right:.2f}, wrong {wrong:.2f}"))


def option_length(splits: Mapping[str, Sequence[MCItem]], tok_fns) -> OptionLength:
    """Mean option length, right vs wrong (§3.3), under each tokenisation; the WordPiece lengths
    (the figure's data); the facts, including the longest-option baseline."""
    train, val = splits["train"], splits["val"]
    lengths = {name: bias.option_lengths(train, fn) for name, fn in tok_fns.items()}
    means = {name: f.groupby("right")["length"].mean() for name, f in lengths.items()}
    table = pd.DataFrame({
        "paper": [papers.value(P, "§3.3", r, "mean length") for r in ("right options", "wrong options")],
        **{f"ours ({name})": [means[name][True], means[name][False]] for name in TOKENIZATIONS}},
        index=["right options", "wrong options"]).round(2)
    unit = min(TOKENIZATIONS, key=lambda n: abs(means[n][True] - table.at["right options", "paper"])
               + abs(means[n][False] - table.at["wrong options", "paper"]))
    wp = tok_fns["WordPiece"]
    right, wrong = float(means["WordPiece"][True]), float(means["WordPiece"][False])
    facts = {"reclor_len_unit": Markdown(f"**{md_text(unit)}**"),
             "reclor_len_right": right, "reclor_len_wrong": wrong,
             "reclor_longest_train": longest_option_accuracy(train, wp),
             "reclor_longest_val": longest_option_accuracy(val, wp)}
    return OptionLength(tables={"reclor_option_length": table}, facts=facts,
                        claims=length_claims(right, wrong, lengths["WordPiece"]), lengths=lengths["WordPiece"])
