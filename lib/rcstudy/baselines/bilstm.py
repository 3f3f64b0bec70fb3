"""The Bi-LSTM baseline of ReClor (Appendix A), trained from scratch.

"A two-layer bi-LSTM is randomly initialized as a sentence encoder with GloVe word embedding
... the last hidden state of the second layer is max-pooled and then fed into a
fully-connected layer to compute the output score." Each option is one sequence (the chosen
fields joined: context, question, option), its score comes from the max-pooled second-layer
states, and a softmax over an item's options is trained with cross-entropy (Adam, as the paper
says for all models). GloVe is not available offline, so the embeddings start random and are
trained; a too-long sequence loses words from the front of the context, never from the
question or the option. The learning rate is halved every 10 epochs, as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn

from ..data.records import MCItem
from ..models.mc import MISSING_OPTION, option_pairs
from ..models.scratch import Vocab, pad, predict_mc_module, train_mc_module


@dataclass(frozen=True)
class BiLSTMConfig:
    fields: str = "CQA"
    emb_dim: int = 300
    hidden: int = 300  # per direction
    layers: int = 2
    max_len: int = 256  # words per option sequence
    epochs: int = 100
    lr: float = 0.1
    batch_size: int = 64  # questions per step
    lr_step: int | None = 10  # epochs between learning-rate decays (None: constant)
    lr_gamma: float = 0.5  # the decay factor
    min_freq: int = 1
    seed: int = 0


class BiLSTMScorer(nn.Module):
    """Embedding → 2-layer Bi-LSTM → max-pool over time → linear score, for every option."""

    def __init__(self, vocab_size: int, cfg: BiLSTMConfig):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, cfg.emb_dim, padding_idx=0)
        self.lstm = nn.LSTM(cfg.emb_dim, cfg.hidden, num_layers=cfg.layers, bidirectional=True, batch_first=True)
        self.score = nn.Linear(2 * cfg.hidden, 1)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, option_mask: torch.Tensor) -> torch.Tensor:
        """Scores (B, options) on the CPU, wherever the module lives (the training loop's labels are there)."""
        device = self.score.weight.device
        ids, mask, option_mask = ids.to(device), mask.to(device), option_mask.to(device)
        B, O, L = ids.shape
        flat_ids, flat_mask = ids.view(B * O, L), mask.view(B * O, L)
        lengths = flat_mask.sum(1).clamp(min=1)
        packed = nn.utils.rnn.pack_padded_sequence(self.embed(flat_ids), lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        states, _ = self.lstm(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(states, batch_first=True, total_length=L)
        pooled = states.masked_fill(~flat_mask.unsqueeze(-1), float("-inf")).max(dim=1).values
        return self.score(pooled).view(B, O).masked_fill(~option_mask, MISSING_OPTION).cpu()


class OptionBatcher:
    """Turns a list of items into the (B, options, words) id tensors the scorer reads."""

    def __init__(self, vocab: Vocab, cfg: BiLSTMConfig):
        self.vocab, self.cfg = vocab, cfg
        self._memo: dict[str, list[list[int]]] = {}

    def encode(self, item: MCItem) -> list[list[int]]:
        if item.id not in self._memo:
            seqs = []
            for a, b in option_pairs(item, self.cfg.fields):
                tail = self.vocab.encode(b, self.cfg.max_len)
                head = self.vocab.encode(a)[-(self.cfg.max_len - len(tail)):] if a and len(tail) < self.cfg.max_len else []
                seqs.append(head + tail)
            self._memo[item.id] = seqs
        return self._memo[item.id]

    def __call__(self, items: list[MCItem]) -> dict[str, torch.Tensor]:
        encoded = [self.encode(it) for it in items]
        n_opt = max(len(e) for e in encoded)
        flat = [s for e in encoded for s in e + [[0]] * (n_opt - len(e))]
        ids, mask = pad(flat)
        option_mask = torch.tensor([[j < len(e) for j in range(n_opt)] for e in encoded])
        return {"ids": ids.view(len(items), n_opt, -1), "mask": mask.view(len(items), n_opt, -1),
                "option_mask": option_mask}


def texts(items: Sequence[MCItem], fields: str) -> list[str]:
    """Every text the vocabulary is built from: the fields of each option's sequence."""
    return [t for it in items for pair in option_pairs(it, fields) for t in pair if t]


def fit_predict_mc(train_items: Sequence[MCItem], eval_sets: dict[str, Sequence[MCItem]],
                   cfg: BiLSTMConfig, device: str | torch.device = "cpu") -> dict[str, np.ndarray]:
    """Train on ``train_items`` (vocabulary from them only) and return option logits per eval set,
    plus ``"losses"`` (the loss of every training step). ``device`` holds the module (CUDA is fine)."""
    vocab = Vocab.build(texts(train_items, cfg.fields), min_freq=cfg.min_freq)
    torch.manual_seed(cfg.seed)
    module = BiLSTMScorer(len(vocab), cfg).to(device)
    batcher = OptionBatcher(vocab, cfg)
    losses = train_mc_module(module, batcher, train_items, epochs=cfg.epochs, lr=cfg.lr,
                             batch_size=cfg.batch_size, seed=cfg.seed, lr_step=cfg.lr_step, lr_gamma=cfg.lr_gamma)
    out = {name: predict_mc_module(module, batcher, items, batch_size=cfg.batch_size)
           for name, items in eval_sets.items()}
    out["losses"] = np.asarray(losses)
    return out
