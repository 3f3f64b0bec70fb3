"""Lexical baselines for multiple-choice reading: random, word matching, sliding window.

* **Word matching** (Yih et al., 2013, as LogiQA uses it): pick the option sharing the most
  unigrams with the paragraph + question. The ``paper`` variant is ``set(s.split(" "))`` overlap,
  case-sensitive, first maximum wins — the rule of the LogiQA authors' later code. Every choice
  the paper leaves open (context, tokens, stop words, score, ties) is a :class:`WMVariant` field.
* **Sliding window** (Richardson et al., 2013, MCTest Algorithm 1): for each option, slide a
  window of ``|S|`` passage tokens, S = option words ∪ question words, and sum the inverse
  counts ``log(1 + 1/C(w))`` of the window's words that are in S; the best window is the score.
  ``distance=True`` subtracts MCTest's Algorithm 2 distance term (SW+D).

English is tokenised into words; Chinese (no spaces) into character unigrams.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass
from itertools import product
from typing import Callable, Sequence

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from ..data.records import MCItem

#: scikit-learn's English stop-word list (318 words), used wherever a variant drops stop words.
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS)


def split_tokens(text: str) -> list[str]:
    """``text.split(" ")``: case-sensitive, punctuation attached ("park.These" is one token)."""
    return text.split(" ")


def word_tokens(text: str) -> list[str]:
    """Lower-cased ``\\w+`` runs."""
    return re.findall(r"\w+", text.lower())


def char_tokens(text: str) -> list[str]:
    """Character unigrams (letters, digits, CJK characters; no spaces or punctuation), lower-cased."""
    return [ch for ch in text.lower() if ch.isalnum()]


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {"split": split_tokens, "words": word_tokens,
                                                     "chars": char_tokens}
#: The tokeniser each language uses unless told otherwise.
DEFAULT_TOKENS = {"en": "words", "zh": "chars"}


# --- scores → predictions ------------------------------------------------------------------

def first_argmax(scores: np.ndarray) -> np.ndarray:
    """Index of the highest score per row; ties go to the earliest option (A before B ...)."""
    return np.asarray(scores).argmax(axis=1)


def tie_share(scores: np.ndarray, labels: Sequence[int]) -> np.ndarray:
    """Expected correctness when ties are broken uniformly at random: 1/k if the gold option is
    one of the k options with the top score, else 0 (per item)."""
    scores = np.asarray(scores, dtype=float)
    top = np.isclose(scores, scores.max(axis=1, keepdims=True))
    gold = top[np.arange(len(scores)), np.asarray(labels)]
    return gold / top.sum(axis=1)


def per_item_correct(scores: np.ndarray, labels: Sequence[int], ties: str = "first") -> np.ndarray:
    """Per-item correctness (0/1 for ``first``; expected value for ``random`` ties)."""
    if ties == "first":
        return (first_argmax(scores) == np.asarray(labels)).astype(float)
    if ties == "random":
        return tie_share(scores, labels)
    raise ValueError(f"ties must be 'first' or 'random', got {ties!r}")


# --- random --------------------------------------------------------------------------------

def majority_class_accuracy(labels: Sequence[int]) -> float:
    """Accuracy of always answering the split's most frequent label (a bias diagnostic)."""
    counts = Counter(labels)
    return max(counts.values()) / len(labels)


def uniform_expected_accuracy(items: Sequence[MCItem]) -> float:
    """Expected accuracy of a uniform random guess (1 / number of options, averaged)."""
    return float(np.mean([1 / len(it.options) for it in items]))


# --- word matching -------------------------------------------------------------------------

@dataclass(frozen=True)
class WMVariant:
    context: str = "pq"  # "pq": paragraph + question; "p": paragraph only
    tokens: str = "split"  # key of TOKENIZERS
    stopwords: bool = False  # drop STOP_WORDS from both sides
    score: str = "set"  # "set": |opt ∩ ctx| of sets; "count": option tokens found in ctx; "norm": set / |opt|
    ties: str = "first"  # "first" or "random" (expected accuracy)

    def __post_init__(self):
        if self.context not in ("pq", "p") or self.tokens not in TOKENIZERS or self.score not in ("set", "count", "norm") \
                or self.ties not in ("first", "random"):
            raise ValueError(f"invalid word-matching variant {self}")

    @property
    def name(self) -> str:
        return f"{self.context}/{self.tokens}/{'-stop' if self.stopwords else '+stop'}/{self.score}/{self.ties}"


#: The default rule: paragraph + question, ``split(" ")``, set overlap, first maximum.
PAPER_WM = WMVariant()
#: The same rule for Chinese, on character unigrams.
PAPER_WM_ZH = WMVariant(tokens="chars")


def _tokens(text: str, variant: WMVariant) -> list[str]:
    toks = TOKENIZERS[variant.tokens](text)
    if variant.stopwords:
        toks = [t for t in toks if t.lower() not in STOP_WORDS]
    return toks


def word_matching_scores(items: Sequence[MCItem], variant: WMVariant = PAPER_WM) -> np.ndarray:
    """(n_items, n_options) unigram-overlap scores of each option with the context."""
    out = np.zeros((len(items), max((len(it.options) for it in items), default=0)))
    for i, it in enumerate(items):
        ctx = it.context if variant.context == "p" else it.context + " " + it.question
        vocab = set(_tokens(ctx, variant))
        for j, opt in enumerate(it.options):
            toks = _tokens(opt, variant)
            if variant.score == "count":
                out[i, j] = sum(t in vocab for t in toks)
            else:
                overlap = len(set(toks) & vocab)
                out[i, j] = overlap / max(len(set(toks)), 1) if variant.score == "norm" else overlap
    return out


def word_matching_grid(items: Sequence[MCItem], tokens: Sequence[str] = ("split", "words")) -> list[dict]:
    """Accuracy (%) of every word-matching variant: context × tokens × stop words × score × ties."""
    rows = []
    for context, tok, stop, score in product(("pq", "p"), tokens, (False, True), ("set", "count", "norm")):
        base = WMVariant(context, tok, stop, score)
        scores = word_matching_scores(items, base)
        labels = [it.label for it in items]
        for ties in ("first", "random"):
            v = WMVariant(context, tok, stop, score, ties)
            rows.append({**asdict(v), "variant": v.name,
                         "accuracy": 100 * float(per_item_correct(scores, labels, ties).mean())})
    return rows


# --- sliding window (MCTest) ---------------------------------------------------------------

def _inverse_counts(passage: list[str]) -> dict[str, float]:
    return {w: math.log(1 + 1 / c) for w, c in Counter(passage).items()}


def _best_window(passage: list[str], ic: dict[str, float], targets: set[str]) -> float:
    """max over window starts k of Σ_{i<|S|} IC(P[k+i]) · [P[k+i] ∈ S] (windows may run off the end)."""
    if not passage or not targets:
        return 0.0
    values = np.array([ic[w] if w in targets else 0.0 for w in passage])
    width = len(targets)
    cum = np.concatenate([[0.0], np.cumsum(values)])
    ends = np.minimum(np.arange(len(passage)) + width, len(passage))
    return float((cum[ends] - cum[:-1]).max())


def _distance(passage: list[str], q_words: set[str], a_words: set[str]) -> float:
    """MCTest's d: the closest passage distance between a question word and an answer word,
    divided by |P| − 1 (1 if either set is empty)."""
    if not q_words or not a_words or len(passage) < 2:
        return 1.0
    pos: dict[str, list[int]] = {}
    for i, w in enumerate(passage):
        pos.setdefault(w, []).append(i)
    qp = np.array([i for w in q_words for i in pos[w]])
    ap = np.array([i for w in a_words for i in pos[w]])
    return float(np.abs(qp[:, None] - ap[None, :]).min()) / (len(passage) - 1)


def sliding_window_scores(items: Sequence[MCItem], *, lang: str = "en", distance: bool = False,
                          tokens: str | None = None, stopwords: frozenset[str] | None = None) -> np.ndarray:
    """(n_items, n_options) MCTest sliding-window scores (minus the distance term with ``distance``).

    The passage is the paragraph. Stop words only enter the distance term (Algorithm 2); they
    default to :data:`STOP_WORDS` for English and to none for Chinese characters.
    """
    tok = TOKENIZERS[tokens or DEFAULT_TOKENS[lang]]
    stops = (STOP_WORDS if lang == "en" else frozenset()) if stopwords is None else stopwords
    out = np.zeros((len(items), max((len(it.options) for it in items), default=0)))
    for i, it in enumerate(items):
        passage = tok(it.context)
        ic = _inverse_counts(passage)
        q = set(tok(it.question))
        passage_words = set(passage)
        s_q = (q & passage_words) - stops
        for j, opt in enumerate(it.options):
            a = set(tok(opt))
            out[i, j] = _best_window(passage, ic, a | q)
            if distance:
                s_a = ((a & passage_words) - q) - stops
                out[i, j] -= _distance(passage, s_q, s_a)
    return out
