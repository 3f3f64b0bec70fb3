"""The Attention Sum Reader (Kadlec et al., 2016) over ReCoRD's candidate entities, trained from scratch."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn

from ..cache import cached
from ..schema import param
from ..data.records import ClozeQuery, MCItem
from ..models import mc, scratch
from ..prompts.record import cloze_items, placeholder_query
from ..runtime import seed_everything


class AttentionSumReader(nn.Module):
    """Kadlec et al. (2016): P(c) = Σ over c's mentions of softmax_i(doc_i · query).

    Shared embeddings; bidirectional GRUs over document and query; the query vector joins the
    forward GRU's last state and the backward GRU's first. A mention is its first token.
    """

    def __init__(self, vocab_size: int, emb: int = 64, hidden: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=0)
        self.doc_rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.query_rnn = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.hidden = hidden

    def forward(self, doc, doc_mask, query, query_mask, positions, option_mask):
        f, _ = self.doc_rnn(self.embed(doc))  # (B, Ld, 2H)
        q, _ = self.query_rnn(self.embed(query))  # (B, Lq, 2H)
        last = query_mask.sum(1) - 1
        g = torch.cat([q[torch.arange(len(q)), last, :self.hidden], q[:, 0, self.hidden:]], -1)
        att = torch.softmax((f @ g.unsqueeze(-1)).squeeze(-1).masked_fill(~doc_mask, -1e9), -1)  # (B, Ld)
        p = (positions * att.unsqueeze(1)).sum(-1)  # (B, n_options)
        return torch.log(p.clamp(min=1e-12)).masked_fill(~option_mask, float("-inf"))


@dataclass(frozen=True)
class ASReaderConfig:
    """ASReader's sizes and training (the ReCoRD chapter's ``asreader`` section)."""

    emb: int = param(64, "word embedding size")
    hidden: int = param(64, "GRU size")
    vocab_size: int = param(20000, "vocabulary: the most frequent training words")
    epochs: int = param(5, "training epochs")
    lr: float = param(1e-3, "Adam learning rate")
    batch_size: int = param(16, "queries per optimiser step")


def first_token_positions(q: ClozeQuery) -> list[list[int]]:
    """Document token index of each mention, grouped by candidate (tokenised like the document)."""
    index = {c: k for k, c in enumerate(q.candidates)}
    out: list[list[int]] = [[] for _ in index]
    for e in q.entities:
        out[index[e.text]].append(len(scratch.tokenize(q.passage[:e.start])))
    return out


def asreader_batcher(queries: Sequence[ClozeQuery], vocab: scratch.Vocab, n_options: int):
    """The batch function for :mod:`rcstudy.models.scratch`: ids, masks and mention positions."""
    enc = {q.id: (vocab.encode(q.passage), vocab.encode(placeholder_query(q)), first_token_positions(q))
           for q in queries}

    def batches(items: list[MCItem]) -> dict:
        docs, qs, pos = zip(*(enc[it.id] for it in items))
        doc, doc_mask = scratch.pad(docs)
        query, query_mask = scratch.pad(qs)
        positions = torch.zeros((len(items), n_options, doc.shape[1]))
        option_mask = torch.zeros((len(items), n_options), dtype=torch.bool)
        for b, cand_pos in enumerate(pos):
            for k, ps in enumerate(cand_pos):
                positions[b, k, [p for p in ps if p < doc.shape[1]]] = 1.0
                option_mask[b, k] = True
        return {"doc": doc, "doc_mask": doc_mask, "query": query, "query_mask": query_mask,
                "positions": positions, "option_mask": option_mask}

    return batches


def asreader(cfg: ASReaderConfig, train: Sequence[ClozeQuery], queries: Sequence[ClozeQuery],
             seeds: Sequence[int]) -> list[tuple[np.ndarray, list[float]]]:
    """Train the attention-sum reader from scratch per seed (cached): per seed, the candidate
    logits of every query in ``queries`` and the training losses."""
    train_items = [it for it in cloze_items(train, fill=False) if it.label is not None]
    eval_items = cloze_items(queries, fill=False)
    n_options = max(len(q.candidates) for q in [*train, *queries])
    out = []
    for seed in seeds:
        def compute(seed=seed):
            texts = [t for q in train for t in (q.passage, placeholder_query(q))]
            vocab = scratch.Vocab.build(texts, max_size=cfg.vocab_size)
            batches = asreader_batcher([*train, *queries], vocab, n_options)
            seed_everything(seed)
            model = AttentionSumReader(len(vocab), cfg.emb, cfg.hidden)
            loss = scratch.train_mc_module(model, batches, train_items, epochs=cfg.epochs, lr=cfg.lr,
                                           batch_size=cfg.batch_size, seed=seed)
            return scratch.predict_mc_module(model, batches, eval_items, batch_size=64), loss

        key = {"cfg": asdict(cfg), "seed": seed,
               "train": mc.items_fingerprint(train_items), "eval": mc.items_fingerprint(eval_items)}
        out.append(cached("record_asreader", key, compute))
    return out
