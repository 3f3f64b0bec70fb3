"""fastText's bag-of-n-grams classifier (Joulin et al., 2017): the ``fasttext`` binding, with a
NumPy version as the fallback where the binding cannot be installed.

ReClor's authors ran the ``fasttext`` library's supervised mode with its default settings
("keep the default setting of the hyper parameters"); ``NgramConfig.backend`` is "fasttext"
when the binding imports (one thread, so a seed gives one result) and "numpy" otherwise. The
NumPy version follows the library: a text is
the average of the embeddings of its whitespace-separated words (plus word n-grams when
``word_ngrams > 1``) and of the end-of-line token ``</s>``; a linear layer and a softmax give
the label; plain SGD, one example at a time, with the learning rate decaying linearly to
zero; ``dim`` 100, ``lr`` 0.1, 5 epochs, ``minCount`` 1. Embeddings start uniform in
±1/dim, the output layer at zero.

Two deliberate simplifications in the NumPy version: n-grams get their own rows instead of being hashed into 2M
buckets (so no collisions), and n-grams never seen in training are ignored at prediction
time (fastText would add their random initial vectors). The seed sets the initial embeddings
and the order of the training lines (fastText reads its file in order).

For multiple choice (:func:`fit_predict_mc`), each (item, option) pair is one line labelled
right or wrong, and an item's prediction is the option with the highest p(right).
"""

from __future__ import annotations

import importlib.util
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Sequence

import numpy as np

from ..data.records import MCItem
from ..prompts.reclor import fasttext_line

EOS = "</s>"


def default_backend() -> Literal["fasttext", "numpy"]:
    """The ``fasttext`` binding where it is installed, else the NumPy version."""
    return "fasttext" if importlib.util.find_spec("fasttext") else "numpy"


@dataclass(frozen=True)
class NgramConfig:
    fields: str = "CQA"  # "A", "QA" or "CQA": which texts make up each option's line
    dim: int = 100
    lr: float = 0.1
    epochs: int = 5
    word_ngrams: int = 1
    min_count: int = 1
    seed: int = 0
    # Part of the results-cache key, so installing the binding later recomputes the rows.
    backend: Literal["fasttext", "numpy"] = field(default_factory=default_backend)


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


class FastTextClassifier:
    """The same interface over the ``fasttext`` binding's supervised mode (labels 0/1 as
    ``__label__0``/``__label__1``; the seed shuffles the training lines and seeds fastText)."""

    def __init__(self, cfg: NgramConfig):
        self.cfg = cfg
        self.model = None

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> "FastTextClassifier":
        import fasttext

        cfg = self.cfg
        order = np.random.default_rng(cfg.seed).permutation(len(texts))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "train.txt"
            path.write_text("".join(f"__label__{labels[i]} {one_line(texts[i])}\n" for i in order), encoding="utf-8")
            self.model = fasttext.train_supervised(
                input=str(path), dim=cfg.dim, lr=cfg.lr, epoch=cfg.epochs, wordNgrams=cfg.word_ngrams,
                minCount=cfg.min_count, seed=cfg.seed, thread=1, verbose=0)
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if self.model is None:
            raise RuntimeError("fit the classifier first")
        labels, probs = self.model.predict([one_line(t) for t in texts], k=-1)
        out = np.zeros((len(texts), 2))
        for row, (names, ps) in enumerate(zip(labels, probs)):
            for name, p in zip(names, ps):
                out[row, int(name.removeprefix("__label__"))] = p
        return out


def one_line(text: str) -> str:
    """fastText reads one example per line: inner line breaks become spaces."""
    return " ".join(text.splitlines())


def classifier(cfg: NgramConfig) -> NgramClassifier | FastTextClassifier:
    return FastTextClassifier(cfg) if cfg.backend == "fasttext" else NgramClassifier(cfg)


def fit_predict_mc(train_items: Sequence[MCItem], eval_sets: dict[str, Sequence[MCItem]],
                   cfg: NgramConfig) -> dict[str, np.ndarray]:
    """Train on one line per (item, option) and return p(right) per option, (n, options) per set."""
    texts, labels = [], []
    for it in train_items:
        if it.label is None:
            continue
        for j in range(len(it.options)):
            texts.append(fasttext_line(it, j, cfg.fields))
            labels.append(int(j == it.label))
    clf = classifier(cfg).fit(texts, labels)
    results = {}
    for name, items in eval_sets.items():
        n_opt = max((len(it.options) for it in items), default=0)
        scores = np.full((len(items), n_opt), -np.inf)
        for i, it in enumerate(items):
            lines = [fasttext_line(it, j, cfg.fields) for j in range(len(it.options))]
            scores[i, :len(lines)] = clf.predict_proba(lines)[:, 1]
        results[name] = scores
    return results
