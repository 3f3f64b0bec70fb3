"""A fastText-style bag-of-n-grams classifier (Joulin et al., 2017), in NumPy.

It follows the ``fasttext`` library's supervised mode with its default settings, which is
what ReClor's authors ran ("keep the default setting of the hyper parameters"): a text is
the average of the embeddings of its whitespace-separated words (plus word n-grams when
``word_ngrams > 1``) and of the end-of-line token ``</s>``; a linear layer and a softmax give
the label; plain SGD, one example at a time, with the learning rate decaying linearly to
zero; ``dim`` 100, ``lr`` 0.1, 5 epochs, ``minCount`` 1. Embeddings start uniform in
±1/dim, the output layer at zero.

Two deliberate simplifications: n-grams get their own rows instead of being hashed into 2M
buckets (so no collisions), and n-grams never seen in training are ignored at prediction
time (fastText would add their random initial vectors). The seed sets the initial embeddings
and the order of the training lines (fastText reads its file in order).

For multiple choice (:func:`fit_predict_mc`), each (item, option) pair is one line labelled
right or wrong, and an item's prediction is the option with the highest p(right).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..data.records import MCItem
from ..models.mc import option_pairs

EOS = "</s>"


@dataclass(frozen=True)
class NgramConfig:
    fields: str = "CQA"  # "A", "QA" or "CQA": which texts make up each option's line
    dim: int = 100
    lr: float = 0.1
    epochs: int = 5
    word_ngrams: int = 1
    min_count: int = 1
    seed: int = 0


def tokens(text: str) -> list[str]:
    """fastText's tokenisation: split on whitespace, keep case and punctuation, end with ``</s>``."""
    return text.split() + [EOS]


def ngrams(words: list[str], n: int) -> list[tuple[str, ...]]:
    """The words themselves plus every run of 2..n consecutive words."""
    out = [(w,) for w in words]
    for k in range(2, n + 1):
        out += [tuple(words[i:i + k]) for i in range(len(words) - k + 1)]
    return out


class NgramClassifier:
    """Bag of n-grams → mean embedding → linear → softmax, trained by per-example SGD."""

    def __init__(self, cfg: NgramConfig):
        self.cfg = cfg
        self.rows: dict[tuple[str, ...], int] = {}
        self.embed: np.ndarray | None = None
        self.out: np.ndarray | None = None

    def _features(self, text: str) -> np.ndarray:
        ids = [self.rows[g] for g in ngrams(tokens(text), self.cfg.word_ngrams) if g in self.rows]
        return np.asarray(ids, dtype=np.int64)

    def fit(self, texts: Sequence[str], labels: Sequence[int], n_classes: int = 2) -> "NgramClassifier":
        cfg = self.cfg
        counts: dict[tuple[str, ...], int] = {}
        for t in texts:
            for g in ngrams(tokens(t), cfg.word_ngrams):
                counts[g] = counts.get(g, 0) + 1
        # Words below min_count are dropped; n-grams of kept words are kept (as fastText does).
        self.rows = {g: i for i, g in enumerate(g for g, c in counts.items() if len(g) > 1 or c >= cfg.min_count)}
        rng = np.random.default_rng(cfg.seed)
        embed = rng.uniform(-1 / cfg.dim, 1 / cfg.dim, size=(len(self.rows), cfg.dim))
        out = np.zeros((n_classes, cfg.dim))
        # Each line as its distinct rows and their weights (count / length): a repeated n-gram
        # weighs, and learns, in proportion to its count.
        feats = []
        for t in texts:
            ids, counts = np.unique(self._features(t), return_counts=True)
            feats.append((ids, (counts / max(counts.sum(), 1))[:, None]))
        y = np.asarray(labels)
        lrs = cfg.lr * (1 - np.arange(cfg.epochs * len(texts)) / (cfg.epochs * len(texts)))
        order = np.concatenate([rng.permutation(len(texts)) for _ in range(cfg.epochs)])
        for lr, i in zip(lrs.tolist(), order.tolist()):
            ids, weights = feats[i]
            if ids.size == 0:
                continue
            rows = embed[ids]
            hidden = (weights * rows).sum(axis=0)
            grad = out @ hidden
            grad = np.exp(grad - grad.max())
            grad *= -lr / grad.sum()
            grad[y[i]] += lr  # lr · (onehot − p): the ascent direction of the log-likelihood
            back = grad @ out
            out += grad[:, None] * hidden
            embed[ids] = rows + weights * back
        self.embed, self.out = embed, out
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if self.embed is None:
            raise RuntimeError("fit the classifier first")
        probs = np.empty((len(texts), self.out.shape[0]))
        for i, t in enumerate(texts):
            ids = self._features(t)
            hidden = self.embed[ids].mean(axis=0) if ids.size else np.zeros(self.cfg.dim)
            s = self.out @ hidden
            p = np.exp(s - s.max())
            probs[i] = p / p.sum()
        return probs


def option_text(item: MCItem, j: int, fields: str) -> str:
    """The line fastText reads for option ``j``: the chosen fields joined by spaces."""
    a, b = option_pairs(item, fields)[j]
    return f"{a} {b}" if a else b


def fit_predict_mc(train_items: Sequence[MCItem], eval_sets: dict[str, Sequence[MCItem]],
                   cfg: NgramConfig) -> dict[str, np.ndarray]:
    """Train on one line per (item, option) and return p(right) per option, (n, options) per set."""
    texts, labels = [], []
    for it in train_items:
        if it.label is None:
            continue
        for j in range(len(it.options)):
            texts.append(option_text(it, j, cfg.fields))
            labels.append(int(j == it.label))
    clf = NgramClassifier(cfg).fit(texts, labels)
    results = {}
    for name, items in eval_sets.items():
        n_opt = max((len(it.options) for it in items), default=0)
        scores = np.full((len(items), n_opt), -np.inf)
        for i, it in enumerate(items):
            lines = [option_text(it, j, cfg.fields) for j in range(len(it.options))]
            scores[i, :len(lines)] = clf.predict_proba(lines)[:, 1]
        results[name] = scores
    return results
