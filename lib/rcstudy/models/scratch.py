"""Small from-scratch neural baselines: a word vocabulary, padding, and one MC training loop.

The modules themselves (Bi-LSTM, attentive reader, gated-attention reader, co-matching network)
live in :mod:`rcstudy.baselines`; they take a batch dict and return (batch, n_options) logits.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..data.records import MCItem
from ..runtime import seed_everything, track

PAD, UNK = "<pad>", "<unk>"
# Words and punctuation; CJK characters one by one (Chinese LogiQA has no spaces).
_TOKEN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]|[^\W\u4e00-\u9fff\u3400-\u4dbf]+|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass
class Vocab:
    itos: list[str]

    def __post_init__(self):
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Iterable[str], min_freq: int = 1, max_size: int | None = None) -> "Vocab":
        counts = Counter(tok for t in texts for tok in tokenize(t))
        words = sorted((w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w))
        return cls([PAD, UNK] + words[:max_size])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str, max_len: int | None = None) -> list[int]:
        ids = [self.stoi.get(t, 1) for t in tokenize(text)] or [1]
        return ids[:max_len] if max_len else ids


def pad(seqs: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad id lists to a (n, longest) LongTensor and its boolean mask."""
    length = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), length), dtype=torch.long)
    mask = torch.zeros((len(seqs), length), dtype=torch.bool)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(list(s), dtype=torch.long)
        mask[i, :len(s)] = True
    return ids, mask


Batcher = Callable[[list[MCItem]], dict]


def train_mc_module(module: torch.nn.Module, batches: Batcher, train_items: Sequence[MCItem], *, epochs: int,
                    lr: float, batch_size: int, seed: int, weight_decay: float = 0.0,
                    lr_step: int | None = None, lr_gamma: float = 0.5) -> list[float]:
    """Adam + cross-entropy over options; returns the loss of every step.

    With ``lr_step``, the learning rate is multiplied by ``lr_gamma`` after every ``lr_step``
    epochs (a step schedule); without it, the learning rate stays constant.
    """
    seed_everything(seed)
    items = [it for it in train_items if it.label is not None]
    opt = torch.optim.Adam([p for p in module.parameters() if p.requires_grad], lr=lr, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.StepLR(opt, step_size=lr_step, gamma=lr_gamma) if lr_step else None
    rng = np.random.default_rng(seed)
    losses = []
    module.train()
    for _ in track(range(epochs), desc=f"train {type(module).__name__} ({len(items)} questions)", unit="epoch"):
        order = rng.permutation(len(items))
        for start in range(0, len(items), batch_size):
            chunk = [items[i] for i in order[start:start + batch_size]]
            logits = module(**batches(chunk))
            loss = F.cross_entropy(logits, torch.tensor([it.label for it in chunk]))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 5.0)
            opt.step()
            losses.append(loss.item())
        if schedule is not None:
            schedule.step()
    module.eval()
    return losses


def predict_mc_module(module: torch.nn.Module, batches: Batcher, items: Sequence[MCItem],
                      batch_size: int = 64) -> np.ndarray:
    module.eval()
    out = []
    with torch.inference_mode():
        for start in range(0, len(items), batch_size):
            out.append(module(**batches(list(items[start:start + batch_size]))).float().numpy())
    return np.concatenate(out) if out else np.zeros((0, 0))
