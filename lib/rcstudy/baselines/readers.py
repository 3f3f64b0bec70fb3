"""Three neural readers trained from scratch for multiple-choice questions.

* :class:`AttentiveReader` — the Stanford attentive reader (Chen et al., 2016) in its
  multiple-choice form (as in the RACE baselines): a Bi-LSTM passage, the question's final
  states, bilinear attention ``softmax(p_i^T W_s q)`` pooling the passage into ``o``, and
  ``score_j = a_j^T W_o o`` with ``a_j`` the option's final Bi-LSTM states.
* :class:`GatedAttentionReader` — the gated-attention reader (Dhingra et al., 2017): K = 3 hops
  of Bi-GRU passage encoding, each token multiplied by its attention-weighted question summary;
  the last layer is pooled by attention on the question's final states and scored bilinearly
  against each option.
* :class:`CoMatchingNetwork` — co-matching (Wang et al., 2018): every passage token attends
  over the question and over the option, the two matches ``ReLU(W[h̄ − h; h̄ ⊙ h] + b)`` are
  concatenated, then aggregated hierarchically (Bi-LSTM + max-pool within each passage sentence,
  Bi-LSTM + max-pool over sentences) into one score per option.

Words are embedded in 100 dimensions, randomly initialised unless a GloVe text file is given.
The readers run on any device (a GPU in the full profile); the loss is computed on the CPU.
Training reuses :func:`rcstudy.models.scratch.train_mc_module` one epoch at a time and keeps
the epoch with the best development accuracy (early stopping); the optimiser restarts each epoch.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from ..cache import cached
from ..data.records import MCItem
from ..models.mc import items_fingerprint
from ..models.scratch import Vocab, pad, predict_mc_module, tokenize, train_mc_module
from ..runtime import seed_everything

#: Tokens that end a sentence (the scratch tokeniser splits "park.These" into park / . / these).
SENTENCE_END = frozenset(".!?。！？;；")


def split_sentences(tokens: Sequence[str]) -> list[list[str]]:
    """Cut a token list after each sentence-final punctuation token."""
    out, cur = [], []
    for t in tokens:
        cur.append(t)
        if t in SENTENCE_END:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out or [[]]


@dataclass
class ReaderInputs:
    """Turns a list of items into the tensors the readers take (a ``Batcher``)."""

    vocab: Vocab
    max_passage: int = 300
    max_question: int = 60
    max_option: int = 60
    max_sentences: int = 15
    max_sentence_len: int = 60
    device: str = "cpu"  # where the tensors go (the module's device)

    def ids(self, tokens: Sequence[str], limit: int) -> list[int]:
        return ([self.vocab.stoi.get(t, 1) for t in tokens] or [1])[:limit]

    def __call__(self, items: list[MCItem]) -> dict[str, torch.Tensor]:
        passage, passage_mask = pad([self.vocab.encode(it.context, self.max_passage) for it in items])
        question, question_mask = pad([self.vocab.encode(it.question, self.max_question) for it in items])
        n_opt = max(len(it.options) for it in items)
        opts = [self.vocab.encode(o, self.max_option) for it in items for o in it.options]
        if any(len(it.options) != n_opt for it in items):
            raise ValueError("the readers need the same number of options for every item in a batch")
        options, options_mask = pad(opts)
        sents = [[self.ids(s, self.max_sentence_len) for s in split_sentences(tokenize(it.context))[:self.max_sentences]]
                 for it in items]
        n_s = max(len(s) for s in sents)
        flat = [s for doc in sents for s in doc + [[0]] * (n_s - len(doc))]
        sentences, sentences_mask = pad(flat)
        for i, doc in enumerate(sents):  # padded sentences are masked out entirely
            sentences_mask[i * n_s + len(doc):(i + 1) * n_s] = False
        B = len(items)
        batch = {
            "passage": passage, "passage_mask": passage_mask, "question": question, "question_mask": question_mask,
            "options": options.view(B, n_opt, -1), "options_mask": options_mask.view(B, n_opt, -1),
            "sentences": sentences.view(B, n_s, -1), "sentences_mask": sentences_mask.view(B, n_s, -1),
        }
        return {k: v.to(self.device) for k, v in batch.items()}


# --- building blocks -----------------------------------------------------------------------

def masked_softmax(scores: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=dim)


def masked_max(x: torch.Tensor, mask: torch.Tensor, dim: int) -> torch.Tensor:
    """Max over ``dim`` of the unmasked positions (``mask`` has x's shape without the last axis)."""
    return x.masked_fill(~mask.unsqueeze(-1), -1e4).max(dim=dim).values


class BiRNN(nn.Module):
    """One bidirectional LSTM/GRU layer over padded sequences: (outputs, final states)."""

    def __init__(self, kind: str, input_dim: int, hidden: int):
        super().__init__()
        cls = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.rnn = cls(input_dim, hidden, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        lengths = mask.sum(-1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, state = self.rnn(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        h = state[0] if isinstance(state, tuple) else state  # LSTM returns (h, c)
        return out, torch.cat([h[0], h[1]], dim=-1)


class _Reader(nn.Module):
    def __init__(self, vocab_size: int, emb_dim: int, hidden: int, dropout: float,
                 embeddings: np.ndarray | None = None):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, emb_dim, padding_idx=0)
        if embeddings is not None:
            self.emb.weight.data.copy_(torch.from_numpy(embeddings))
        self.drop = nn.Dropout(dropout)
        self.hidden = hidden

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.drop(self.emb(ids))

    def encode_options(self, rnn: BiRNN, options: torch.Tensor, options_mask: torch.Tensor) -> torch.Tensor:
        B, O, L = options.shape
        _, last = rnn(self.embed(options.view(B * O, L)), options_mask.view(B * O, L))
        return last.view(B, O, -1)


class AttentiveReader(_Reader):
    def __init__(self, vocab_size: int, emb_dim: int = 100, hidden: int = 64, dropout: float = 0.3,
                 embeddings: np.ndarray | None = None):
        super().__init__(vocab_size, emb_dim, hidden, dropout, embeddings)
        self.p_rnn, self.q_rnn, self.a_rnn = (BiRNN("lstm", emb_dim, hidden) for _ in range(3))
        self.w_s = nn.Linear(2 * hidden, 2 * hidden, bias=False)
        self.w_o = nn.Linear(2 * hidden, 2 * hidden, bias=False)

    def forward(self, passage, passage_mask, question, question_mask, options, options_mask, **_):
        p, _ = self.p_rnn(self.embed(passage), passage_mask)
        _, q = self.q_rnn(self.embed(question), question_mask)
        alpha = masked_softmax(torch.einsum("bld,bd->bl", p, self.w_s(q)), passage_mask)
        o = self.drop(torch.einsum("bl,bld->bd", alpha, p))
        a = self.encode_options(self.a_rnn, options, options_mask)
        return torch.einsum("bod,bd->bo", a, self.w_o(o))


class GatedAttentionReader(_Reader):
    def __init__(self, vocab_size: int, emb_dim: int = 100, hidden: int = 64, dropout: float = 0.3,
                 embeddings: np.ndarray | None = None, hops: int = 3):
        super().__init__(vocab_size, emb_dim, hidden, dropout, embeddings)
        self.doc_rnns = nn.ModuleList(BiRNN("gru", emb_dim if k == 0 else 2 * hidden, hidden) for k in range(hops))
        self.q_rnns = nn.ModuleList(BiRNN("gru", emb_dim, hidden) for _ in range(hops))
        self.a_rnn = BiRNN("gru", emb_dim, hidden)
        self.w = nn.Linear(2 * hidden, 2 * hidden, bias=False)

    def forward(self, passage, passage_mask, question, question_mask, options, options_mask, **_):
        x, q_emb = self.embed(passage), self.embed(question)
        hops = len(self.doc_rnns)
        for k in range(hops):
            d, _ = self.doc_rnns[k](x, passage_mask)
            q, q_last = self.q_rnns[k](q_emb, question_mask)
            if k < hops - 1:  # gate every passage token by its attention-weighted question summary
                att = masked_softmax(torch.einsum("bld,bmd->blm", d, q), question_mask.unsqueeze(1))
                x = self.drop(d * torch.einsum("blm,bmd->bld", att, q))
        alpha = masked_softmax(torch.einsum("bld,bd->bl", d, q_last), passage_mask)
        o = self.drop(torch.einsum("bl,bld->bd", alpha, d))
        a = self.encode_options(self.a_rnn, options, options_mask)
        return torch.einsum("bod,bd->bo", a, self.w(o))


class CoMatchingNetwork(_Reader):
    def __init__(self, vocab_size: int, emb_dim: int = 100, hidden: int = 64, dropout: float = 0.3,
                 embeddings: np.ndarray | None = None):
        super().__init__(vocab_size, emb_dim, hidden, dropout, embeddings)
        d = 2 * hidden
        self.enc = BiRNN("lstm", emb_dim, hidden)  # shared by passage, question and options
        self.w_g = nn.Linear(d, d)
        self.w_m = nn.Linear(2 * d, d)
        self.sent_rnn = BiRNN("lstm", 2 * d, hidden)
        self.doc_rnn = BiRNN("lstm", d, hidden)
        self.w = nn.Linear(d, 1)

    def match(self, hp: torch.Tensor, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Passage tokens (N, P, d) matched against a sequence (N, M, d): (N, P, d)."""
        att = masked_softmax(torch.einsum("npd,nmd->npm", hp, self.w_g(h)), mask[:, None, :])
        bar = torch.einsum("npm,nmd->npd", att, h)
        return torch.relu(self.w_m(torch.cat([bar - hp, bar * hp], dim=-1)))

    def forward(self, sentences, sentences_mask, question, question_mask, options, options_mask, **_):
        """The sentence grid (B, S, L) is mostly padding, so only its real tokens are encoded and
        matched: the R real sentences are encoded, their T tokens laid out per item (B, P), and
        the matches put back into sentences for the hierarchical aggregation."""
        B, O, La = options.shape
        real = sentences_mask.any(-1)  # (B, S): the sentences that hold tokens
        tok_mask = sentences_mask[real]  # (R, L)
        R, L = tok_mask.shape
        tok_item = torch.arange(B, device=real.device)[:, None].expand_as(real)[real][:, None].expand(R, L)[tok_mask]
        counts = torch.bincount(tok_item, minlength=B)
        tok_pos = torch.arange(len(tok_item), device=real.device) - (counts.cumsum(0) - counts)[tok_item]
        h_sent, _ = self.enc(self.embed(sentences[real]), tok_mask)
        hp = h_sent.new_zeros(B, int(counts.max()), h_sent.shape[-1])
        hp[tok_item, tok_pos] = h_sent[tok_mask]  # (B, P, d): each item's passage tokens in order
        hq, _ = self.enc(self.embed(question), question_mask)
        ha, _ = self.enc(self.embed(options.view(B * O, La)), options_mask.view(B * O, La))
        mq = self.match(hp, hq, question_mask)  # (B, P, d)
        ma = self.match(hp.repeat_interleave(O, dim=0), ha, options_mask.view(B * O, La))  # (B*O, P, d)
        c = torch.cat([mq.repeat_interleave(O, dim=0), ma], dim=-1).view(B, O, hp.shape[1], -1)
        grid = c.new_zeros(R, L, O, c.shape[-1])
        grid[tok_mask] = c.transpose(1, 2)[tok_item, tok_pos]  # back into the real sentences
        seq_mask = tok_mask.unsqueeze(1).expand(R, O, L).reshape(R * O, L)
        hs, _ = self.sent_rnn(self.drop(grid.transpose(1, 2).reshape(R * O, L, -1)), seq_mask)
        hs = masked_max(hs, seq_mask, dim=1).view(R, O, -1)
        S = real.shape[1]
        doc = hs.new_zeros(B, S, O, hs.shape[-1])
        doc[real] = hs
        sent_mask = real.unsqueeze(1).expand(B, O, S).reshape(B * O, S)
        ht, _ = self.doc_rnn(doc.transpose(1, 2).reshape(B * O, S, -1), sent_mask)
        return self.w(self.drop(masked_max(ht, sent_mask, dim=1))).view(B, O)


class LogitsOnCPU(nn.Module):
    """Runs a reader on its device and hands the logits back on the CPU, where
    :func:`~rcstudy.models.scratch.train_mc_module` computes the loss."""

    def __init__(self, reader: nn.Module):
        super().__init__()
        self.reader = reader

    def forward(self, **batch) -> torch.Tensor:
        return self.reader(**batch).float().cpu()


READERS = {
    "sar": ("Stanford Attentive Reader", AttentiveReader),
    "ga": ("Gated-Attention Reader", GatedAttentionReader),
    "comatch": ("Co-Matching Network", CoMatchingNetwork),
}


# --- training ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReaderConfig:
    model: str = "sar"  # key of READERS
    emb_dim: int = 100
    hidden: int = 64
    dropout: float = 0.3
    epochs: int = 3  # the best of these epochs on the development set is kept
    lr: float = 1e-3
    batch_size: int = 32
    seed: int = 0
    min_freq: int = 1
    max_passage: int = 300
    max_question: int = 60
    max_option: int = 60
    max_sentences: int = 15
    max_sentence_len: int = 60
    glove_path: str | None = None

    def __post_init__(self):
        if self.model not in READERS:
            raise ValueError(f"unknown reader {self.model!r}; choose one of {', '.join(READERS)}")


@dataclass
class ReaderRun:
    logits: dict[str, np.ndarray]  # per evaluation set, (n, n_options), from the best epoch
    dev_accuracy: list[float]  # development accuracy after each epoch
    losses: list[float]  # training loss of every step
    best_epoch: int  # 1-based
    vocab_size: int


def load_glove(path: str | Path, vocab: Vocab, dim: int, seed: int = 0) -> np.ndarray:
    """An embedding matrix for ``vocab``: GloVe vectors where the word has one, small random otherwise."""
    rng = np.random.default_rng(seed)
    mat = rng.normal(0, 0.1, size=(len(vocab), dim)).astype(np.float32)
    mat[0] = 0.0
    with open(path, encoding="utf-8") as f:
        for line in f:
            word, *vec = line.rstrip().split(" ")
            if word in vocab.stoi and len(vec) == dim:
                mat[vocab.stoi[word]] = np.asarray(vec, dtype=np.float32)
    return mat


def build_reader(cfg: ReaderConfig, train_items: Sequence[MCItem], device: str = "cpu") -> tuple[nn.Module, ReaderInputs]:
    texts = [t for it in train_items for t in (it.context, it.question, *it.options)]
    vocab = Vocab.build(texts, min_freq=cfg.min_freq)
    seed_everything(cfg.seed)
    embeddings = load_glove(cfg.glove_path, vocab, cfg.emb_dim, cfg.seed) if cfg.glove_path else None
    module = READERS[cfg.model][1](len(vocab), cfg.emb_dim, cfg.hidden, cfg.dropout, embeddings).to(device)
    inputs = ReaderInputs(vocab, cfg.max_passage, cfg.max_question, cfg.max_option, cfg.max_sentences,
                          cfg.max_sentence_len, device)
    return LogitsOnCPU(module), inputs


def train_reader(cfg: ReaderConfig, train_items: Sequence[MCItem], dev_items: Sequence[MCItem],
                 eval_sets: dict[str, Sequence[MCItem]], device: str = "cpu") -> ReaderRun:
    """Train with early stopping on ``dev_items``; logits of the best epoch on every evaluation set
    (an evaluation set that is ``dev_items`` itself reuses the best epoch's development logits)."""
    module, inputs = build_reader(cfg, train_items, device)
    dev_labels = np.array([it.label for it in dev_items])
    best, best_state, best_dev, curve, losses = -1.0, None, None, [], []
    for epoch in range(cfg.epochs):
        losses += train_mc_module(module, inputs, train_items, epochs=1, lr=cfg.lr, batch_size=cfg.batch_size,
                                  seed=cfg.seed * 1000 + epoch)
        dev_logits = predict_mc_module(module, inputs, dev_items)
        acc = float((dev_logits.argmax(1) == dev_labels).mean())
        curve.append(acc)
        if acc > best:
            best, best_state, best_dev = acc, copy.deepcopy(module.state_dict()), dev_logits
    module.load_state_dict(best_state)
    logits = {name: best_dev if items is dev_items else predict_mc_module(module, inputs, items)
              for name, items in eval_sets.items()}
    return ReaderRun(logits, curve, losses, int(np.argmax(curve)) + 1, len(inputs.vocab))


def train_reader_cached(cfg: ReaderConfig, train_items: Sequence[MCItem], dev_items: Sequence[MCItem],
                        eval_sets: dict[str, Sequence[MCItem]], device: str = "cpu") -> ReaderRun:
    """:func:`train_reader`, cached on disk per configuration and items (not per device)."""
    params = {"cfg": asdict(cfg), "train": items_fingerprint(train_items), "dev": items_fingerprint(dev_items),
              "eval": {k: items_fingerprint(v) for k, v in eval_sets.items()}}
    return cached("logiqa_readers", params, lambda: train_reader(cfg, train_items, dev_items, eval_sets, device))

