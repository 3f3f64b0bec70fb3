"""Dropout on a CPU with masks drawn from random bits in bulk.

On a CPU torch draws a dropout mask one element at a time from its Mersenne Twister
(``bernoulli_``): in a fine-tuning step of minilm-l6 on ReClor (8 questions, bf16, 2 cores) that
is more time than every matmul of the attention together. Here the mask comes from numpy's SFC64
generator, 64 bits per call (``random_raw``), in about a quarter of the time for a mask of the
attention's size. Each element keeps its value, scaled by 1/(1 − p), where its 32 random bits read
as an integer are at least p·2³²: the same Bernoulli(1 − p) masks and the same scaling as torch's
dropout, from another random stream.

BERT-style models pass the attention's dropout rate to an attention function rather than to a
dropout module, so the attention is computed here as well (softmax(QKᵀ · scale + mask), dropped,
times V; what torch's SDPA computes on a CPU in training), registered with transformers' attention
interface. On a GPU torch's dropout is already cheap and fused into its attention kernels:
:func:`bulk_dropout` changes nothing there.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
import torch
from torch import nn

#: The attention implementation registered with transformers (and its mask: the SDPA one, boolean).
ATTENTION = "rcstudy_bulk_dropout"
#: Implementations whose computation :func:`_attention` reproduces.
REPLACEABLE = ("sdpa", "eager")

_BITS: ContextVar[np.random.SFC64 | None] = ContextVar("rcstudy_dropout_bits", default=None)


def keep_mask(shape: torch.Size | tuple, p: float) -> torch.Tensor:
    """Booleans, True with probability 1 − ``p``, from the bits of the active :func:`bulk_dropout`."""
    bits = _BITS.get()
    if bits is None:
        raise RuntimeError("keep_mask needs random bits: call it inside bulk_dropout(...)")
    n = math.prod(shape)
    draws = torch.from_numpy(bits.random_raw((n + 1) // 2).view(np.int32)[:n]).view(shape)
    return draws >= round(p * 2**32) - 2**31  # the int32 draws are uniform on [-2³¹, 2³¹)


def drop(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """``torch.nn.functional.dropout`` with the mask from :func:`keep_mask`."""
    if not training or p == 0:
        return x
    if p >= 1:
        return x * 0
    return torch.where(keep_mask(x.shape, p), x * (1 / (1 - p)), 0)


class BulkDropout(nn.Dropout):
    """An ``nn.Dropout`` whose masks come from :func:`keep_mask`."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return drop(x, self.p, self.training)


def _attention(module: nn.Module, query, key, value, attention_mask, scaling: float | None = None,
               dropout: float = 0.0, **kwargs):
    """Scaled dot-product attention, the probabilities dropped out with :func:`drop`."""
    if getattr(module, "is_causal", False) or key.size(1) != query.size(1):  # causal or grouped-query: as before
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling,
                                      dropout=dropout, **kwargs)
    scale = query.size(-1) ** -0.5 if scaling is None else scaling
    scores = torch.matmul(query, key.transpose(2, 3)) * scale
    if attention_mask is not None:
        scores = (scores.masked_fill(~attention_mask, torch.finfo(scores.dtype).min)
                  if attention_mask.dtype == torch.bool else scores + attention_mask.to(scores.dtype))
    probs = drop(torch.softmax(scores, dim=-1), dropout, module.training)
    return torch.matmul(probs, value).transpose(1, 2).contiguous(), None


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ATTENTION, _attention)
    AttentionMaskInterface.register(ATTENTION, sdpa_mask)


@contextmanager
def bulk_dropout(model: nn.Module, device: torch.device, seed: int):
    """Within the block, on a CPU, every ``nn.Dropout`` of ``model`` and its attention's dropout draw
    their masks from SFC64 bits seeded with ``seed``; the model is restored on leaving. Elsewhere
    (a GPU) nothing changes."""
    if device.type != "cpu":
        yield model
        return
    swapped = [(parent, name, child) for parent in model.modules() for name, child in parent.named_children()
               if type(child) is nn.Dropout]
    for parent, name, child in swapped:
        setattr(parent, name, BulkDropout(child.p, child.inplace).train(child.training))
    config = getattr(model, "config", None)
    attention = getattr(config, "_attn_implementation", None)
    replace_attention = getattr(model, "_supports_attention_backend", False) and attention in REPLACEABLE
    if replace_attention:
        _register()
        model.set_attn_implementation(ATTENTION)
    token = _BITS.set(np.random.SFC64(seed))
    try:
        yield model
    finally:
        _BITS.reset(token)
        if replace_attention:
            model.set_attn_implementation(attention)
        for parent, name, child in swapped:
            setattr(parent, name, child)
