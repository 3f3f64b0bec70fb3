"""Sequence-to-sequence engine: fine-tune, checkpoint/resume, batched greedy generation.

Model names, as everywhere in the book:

* ``minilm-l6`` — an ``EncoderDecoderModel`` warm-started from MiniLM on both sides (BERT2BERT;
  the decoder's cross-attention is new, randomly initialised). Its tokenizer is uncased
  WordPiece, so generated text comes back spaced (``- >``, ``[ and ]``): parse it after the
  dataset's normalisation.
* ``tiny-bert`` — the same architecture with 2 tiny random layers on each side (smoke tests).
* anything else — a Hub seq2seq model (``t5-base``, ``t5-large``) via ``AutoModelForSeq2SeqLM``.

Training pads each batch to its longest sequence (batches grouped by length), masks padding
out of the loss, and writes a checkpoint (weights, optimiser, schedule, step, losses) every
``checkpoint_every`` optimiser steps; a later call with the same configuration and examples
resumes from it. ``stop_after_minutes`` saves and stops with :class:`TrainingInterrupted`, for
machines that limit how long one command may run: run the same command again to continue.
"""

from __future__ import annotations

import io
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from ..cache import atomic_write_bytes, cache_key, entry_path, fingerprint
from ..runtime import Runtime, seed_everything
from ..settings import refresh_requested
from .loading import TINY_DIMS, load_or_explain, load_tokenizer
from .mc import length_batches
from .registry import minilm_path, resolve

BERT2BERT = ("minilm-l6", "tiny-bert")
OPTIMIZERS = ("adamw", "adafactor")


class TrainingInterrupted(RuntimeError):
    """Training stopped at its time limit; the checkpoint holds the progress (run again to resume)."""


@dataclass(frozen=True)
class Seq2SeqConfig:
    model: str = "minilm-l6"
    max_src_len: int = 256  # training truncation of inputs
    max_tgt_len: int = 160  # training truncation of targets
    infer_max_src_len: int | None = None  # inference truncation (default: max_src_len)
    gen_max_len: int = 160  # generated tokens at most
    epochs: float = 1.0
    max_steps: int | None = None  # optimiser steps; overrides epochs when set
    batch_size: int = 8
    grad_accum: int = 1
    lr: float = 3e-4
    optimizer: str = "adamw"  # the paper: Adafactor (scale_parameter=False, relative_step=False)
    warmup: float = 0.05  # fraction of steps, then constant (the official schedule)
    weight_decay: float = 0.0
    seed: int = 0
    eval_batch_size: int = 16
    checkpoint_every: int | None = None  # optimiser steps between checkpoints (None: only at the end)

    def __post_init__(self):
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, not {self.optimizer!r}")

    def total_steps(self, n_examples: int) -> int:
        if self.max_steps is not None:
            return self.max_steps
        batches = int(round(self.epochs * int(np.ceil(n_examples / self.batch_size))))
        return max(1, batches // self.grad_accum)


@dataclass
class TrainedSeq2Seq:
    model: torch.nn.Module
    tokenizer: object
    cfg: Seq2SeqConfig
    losses: list[float] = field(default_factory=list)


def load_seq2seq(name: str, seed: int = 0):
    """``(model, tokenizer)`` for a model name (see the module docstring)."""
    from transformers import AutoModelForSeq2SeqLM, BertConfig, BertLMHeadModel, BertModel, EncoderDecoderModel

    tok = load_tokenizer(name)
    seed_everything(seed)  # new weights (cross-attention, tiny models) depend on the seed
    if name == "tiny-bert":
        enc = BertConfig(vocab_size=len(tok), max_position_embeddings=512, **TINY_DIMS)
        dec = BertConfig(vocab_size=len(tok), max_position_embeddings=512, is_decoder=True, add_cross_attention=True,
                         **TINY_DIMS)
        model = EncoderDecoderModel(encoder=BertModel(enc), decoder=BertLMHeadModel(dec))
    elif name == "minilm-l6":
        path = str(minilm_path())
        model = EncoderDecoderModel.from_encoder_decoder_pretrained(path, path)
    else:
        model = load_or_explain(lambda: AutoModelForSeq2SeqLM.from_pretrained(resolve(name)), name)
    if name in BERT2BERT:
        for conf in (model.config, model.generation_config):
            conf.decoder_start_token_id = tok.cls_token_id
            conf.eos_token_id = tok.sep_token_id
            conf.pad_token_id = tok.pad_token_id
    return model, tok


def _encode_targets(tok, name: str, targets: Sequence[str], max_len: int) -> list[list[int]]:
    ids = tok(list(targets), truncation=True, max_length=max_len + (name in BERT2BERT))["input_ids"]
    # BERT2BERT: the decoder starts from [CLS] itself, so the labels drop it
    return [x[1:] for x in ids] if name in BERT2BERT else ids


def truncation_rate(tok, texts: Sequence[str], max_len: int) -> float:
    """Fraction of texts longer than ``max_len`` tokens (special tokens included)."""
    if not texts:
        return 0.0
    lengths = [len(x) for x in tok(list(texts))["input_ids"]]
    return float(np.mean([n > max_len for n in lengths]))


def _pad(seqs: list[list[int]], value: int) -> torch.Tensor:
    out = torch.full((len(seqs), max(len(s) for s in seqs)), value, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = torch.tensor(s)
    return out


def examples_fingerprint(sources: Sequence[str], targets: Sequence[str]) -> str:
    return fingerprint([list(sources), list(targets)])


def checkpoint_path(cfg: Seq2SeqConfig, sources: Sequence[str], targets: Sequence[str]) -> Path:
    key = cache_key("seq2seq_models", {"cfg": asdict(cfg), "examples": examples_fingerprint(sources, targets)})
    return entry_path("seq2seq_models", key).with_suffix(".pt")


def _make_optimizer(model, cfg: Seq2SeqConfig, total: int):
    from transformers import Adafactor, get_constant_schedule_with_warmup

    if cfg.optimizer == "adafactor":
        opt = Adafactor(model.parameters(), lr=cfg.lr, scale_parameter=False, relative_step=False,
                        weight_decay=cfg.weight_decay)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    return opt, get_constant_schedule_with_warmup(opt, int(np.ceil(cfg.warmup * total)))


def _save(path: Path, model, opt, sched, step: int, losses: list[float], complete: bool) -> None:
    state = {"weights": {k: v.detach().cpu() for k, v in model.state_dict().items()}, "step": step,
             "losses": losses, "complete": complete}
    if not complete:
        state.update(optimizer=opt.state_dict(), scheduler=sched.state_dict(), rng=torch.get_rng_state())
    buf = io.BytesIO()
    torch.save(state, buf)
    atomic_write_bytes(path, buf.getvalue())


def train(sources: Sequence[str], targets: Sequence[str], cfg: Seq2SeqConfig, rt: Runtime, *,
          resume: bool = True, stop_after_minutes: float | None = None) -> TrainedSeq2Seq:
    """Fine-tune ``cfg.model`` on (source, target) pairs; cached, checkpointed and resumable.

    A finished run with the same configuration and examples is loaded from disk instead of
    re-trained (unless a refresh is requested).
    """
    if len(sources) != len(targets) or not sources:
        raise ValueError("train needs as many targets as sources, and at least one pair")
    path = checkpoint_path(cfg, sources, targets)
    model, tok = load_seq2seq(cfg.model, cfg.seed)
    state = torch.load(path, map_location="cpu", weights_only=False) if path.exists() and (
        resume and not refresh_requested()) else None
    if state is not None:
        model.load_state_dict(state["weights"])
    model.to(rt.device)
    if state is not None and state["complete"]:
        return TrainedSeq2Seq(model.eval(), tok, cfg, state["losses"])

    src = tok(list(sources), truncation=True, max_length=cfg.max_src_len)["input_ids"]
    tgt = _encode_targets(tok, cfg.model, targets, cfg.max_tgt_len)
    total = cfg.total_steps(len(src))
    schedule: list[list[int]] = []  # the batch order of the whole run (same seed → same order)
    epoch = 0
    while len(schedule) < total * cfg.grad_accum:
        schedule += length_batches([len(a) + len(b) for a, b in zip(src, tgt)], cfg.batch_size, shuffle=True,
                                   seed=cfg.seed * 1000 + epoch)
        epoch += 1
    schedule = schedule[:total * cfg.grad_accum]
    opt, sched = _make_optimizer(model, cfg, total)
    step, losses = 0, []
    if state is not None:
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        step, losses = state["step"], list(state["losses"])
    else:
        seed_everything(cfg.seed)
    pad = tok.pad_token_id
    start = time.monotonic()
    model.train()
    while step < total:
        running = 0.0
        for batch in schedule[step * cfg.grad_accum:(step + 1) * cfg.grad_accum]:
            ids = _pad([src[i] for i in batch], pad).to(rt.device)
            labels = _pad([tgt[i] for i in batch], -100).to(rt.device)
            with rt.autocast(), warnings.catch_warnings():
                # EncoderDecoderModel warns on every loss that its loss changed in transformers v4.12
                warnings.filterwarnings("ignore", message="Version v4.12.0 introduces", category=FutureWarning)
                loss = model(input_ids=ids, attention_mask=(ids != pad).long(), labels=labels).loss / cfg.grad_accum
            loss.backward()
            running += loss.item()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        losses.append(running)
        step += 1
        if step < total and cfg.checkpoint_every and step % cfg.checkpoint_every == 0:
            _save(path, model, opt, sched, step, losses, complete=False)
        if step < total and stop_after_minutes is not None and time.monotonic() - start > 60 * stop_after_minutes:
            _save(path, model, opt, sched, step, losses, complete=False)
            raise TrainingInterrupted(f"stopped after {stop_after_minutes} min at step {step}/{total}; "
                                      f"the checkpoint {path} resumes it: run the same command again")
    _save(path, model, opt, sched, step, losses, complete=True)
    return TrainedSeq2Seq(model.eval(), tok, cfg, losses)


def generate(trained: TrainedSeq2Seq, sources: Sequence[str], rt: Runtime) -> list[str]:
    """Greedy outputs (special tokens removed), batched by input length."""
    cfg, tok, model = trained.cfg, trained.tokenizer, trained.model
    if not sources:
        return []
    src = tok(list(sources), truncation=True, max_length=cfg.infer_max_src_len or cfg.max_src_len)["input_ids"]
    out: list[str] = [""] * len(src)
    model.eval()
    for batch in length_batches([len(s) for s in src], cfg.eval_batch_size, shuffle=False):
        ids = _pad([src[i] for i in batch], tok.pad_token_id).to(rt.device)
        with torch.inference_mode(), rt.autocast():
            gen = model.generate(input_ids=ids, attention_mask=(ids != tok.pad_token_id).long(),
                                 max_new_tokens=cfg.gen_max_len, num_beams=1, do_sample=False)
        for i, text in zip(batch, tok.batch_decode(gen, skip_special_tokens=True)):
            out[i] = text
    return out
