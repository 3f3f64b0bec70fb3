"""Sequence-to-sequence engine: fine-tune, checkpoint/resume, batched greedy generation.

Model names, as everywhere in the book:

* ``minilm-l6`` — an ``EncoderDecoderModel`` warm-started from MiniLM on both sides (BERT2BERT;
  the decoder's cross-attention is new, randomly initialised). Its tokenizer is uncased
  WordPiece, so generated text comes back spaced (``- >``, ``[ and ]``): parse it after the
  dataset's normalisation.
* ``tiny-bert`` — the same architecture with 2 tiny random layers on each side (smoke tests).
* ``smollm2-135m`` (and ``tiny-llama`` for smoke tests), or any other decoder-only LM — trained
  as a decoder-only seq2seq model: one sequence ``source + "\nOutput:" + " " + target + EOS``
  (whitespace collapsed, as byte-level BPE keeps every space), with the loss on the target tokens
  only; greedy generation continues the prompt ``source + "\nOutput:"``.
* anything else — a Hub seq2seq model (``t5-base``, ``t5-large``) via ``AutoModelForSeq2SeqLM``.

Training pads each batch to its longest sequence (batches grouped by length), masks padding
out of the loss, and writes a checkpoint (weights, optimiser, schedule, step, losses) every
``checkpoint_every`` optimiser steps, as a safetensors file (:func:`rcstudy.cache.save_weights`:
nothing in it runs code when read); a later call with the same configuration and examples
resumes from it, and one that cannot be read, or does not fit the model, is trained again with a
warning. ``stop_after_minutes`` saves and stops with :class:`TrainingInterrupted`, for machines
that limit how long one command may run: run the same command again to continue.
With a ``select`` function (a dev score of the model, higher is better) and ``evaluations``,
the model is scored that many times, evenly spaced over the run (the last at its end), and the
best weights are kept, as the paper's code selects its checkpoint on dev (every 10 of its 300
epochs, i.e. 30 evaluations).
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from ..cache import cache_key, cached, entry_path, fingerprint, load_weights, save_weights, warn_unreadable
from ..data.records import MCItem
from ..runtime import Runtime, seed_everything, track
from ..settings import refresh_requested
from .lm import CausalLM, Seq2SeqLM, quiet_encoder_decoder
from .loading import TINY_DIMS, load_causal_lm, load_or_explain, load_tokenizer, model_config
from .mc import MISSING_OPTION, cached_predictions, items_fingerprint, length_batches
from .registry import minilm_path, resolve

BERT2BERT = ("minilm-l6", "tiny-bert")
OPTIMIZERS = ("adamw", "adafactor")
PROMPT_END = "\nOutput:"  # ends a decoder-only model's prompt; the target follows after a space


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
    evaluations: int | None = None  # dev evaluations over the run, with a select function (None: keep the last)
    train_layers: int | None = None  # decoder-only: fine-tune only the top N blocks (None: every weight)

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
    selection: list[tuple[int, float]] = field(default_factory=list)  # (step, dev score) at each evaluation
    best_step: int | None = None  # the step whose weights were kept (None: the last)


def decoder_only(name: str) -> bool:
    """Whether ``name`` is a decoder-only LM (trained on source and target as one sequence)."""
    return name not in BERT2BERT and not getattr(model_config(name), "is_encoder_decoder", False)


def load_seq2seq(name: str, seed: int = 0):
    """``(model, tokenizer)`` for a model name (see the module docstring)."""
    from transformers import AutoModelForSeq2SeqLM, BertConfig, BertLMHeadModel, BertModel, EncoderDecoderModel

    tok = load_tokenizer(name)
    seed_everything(seed)  # new weights (cross-attention, tiny models) depend on the seed
    if decoder_only(name):
        model = load_causal_lm(name)
    elif name == "tiny-bert":
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


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def causal_prompt(tok, source: str, max_src_len: int) -> str:
    """A decoder-only model's prompt: the source (whitespace collapsed, cut to ``max_src_len``
    tokens) followed by :data:`PROMPT_END`. Training and generation read the same string."""
    ids = tok(_collapse(source), add_special_tokens=False)["input_ids"]
    text = tok.decode(ids[:max_src_len]) if len(ids) > max_src_len else _collapse(source)
    return text + PROMPT_END


def causal_example(tok, source: str, target: str, max_src_len: int, max_tgt_len: int) -> tuple[list[int], list[int]]:
    """``(input ids, labels)`` of one decoder-only training example: the prompt, then
    ``" " + target`` (cut to ``max_tgt_len`` tokens) and EOS. The labels are -100 over the
    prompt, so only the target tokens (and EOS) carry loss."""
    prompt = tok(causal_prompt(tok, source, max_src_len), add_special_tokens=False)["input_ids"]
    answer = tok(" " + _collapse(target), add_special_tokens=False)["input_ids"][:max_tgt_len] + [tok.eos_token_id]
    return prompt + answer, [-100] * len(prompt) + answer


def truncation_rate(tok, texts: Sequence[str], max_len: int) -> float:
    """Fraction of texts longer than ``max_len`` tokens (special tokens included)."""
    if not texts:
        return 0.0
    lengths = [len(x) for x in tok(list(texts))["input_ids"]]
    return float(np.mean([n > max_len for n in lengths]))


def _pad(seqs: list[list[int]], value: int, left: bool = False) -> torch.Tensor:
    width = max(len(s) for s in seqs)
    out = torch.full((len(seqs), width), value, dtype=torch.long)
    for i, s in enumerate(seqs):
        if left:
            out[i, width - len(s):] = torch.tensor(s)
        else:
            out[i, :len(s)] = torch.tensor(s)
    return out


def _loss(model, pairs: list[tuple[list[int], list[int]]], pad: int, rt: Runtime, causal: bool) -> torch.Tensor:
    """Mean token cross-entropy of a batch of (input ids, labels) pairs.

    Decoder-only: left-padded (explicit positions), and logits only over the last positions,
    where the targets are: the prompt never meets the output layer.
    """
    ids = _pad([a for a, _ in pairs], pad, left=causal).to(rt.device)
    labels = _pad([b for _, b in pairs], -100, left=causal).to(rt.device)
    if not causal:
        mask = (ids != pad).long()
        with rt.autocast(), quiet_encoder_decoder():
            return model(input_ids=ids, attention_mask=mask, labels=labels).loss
    mask = _pad([[1] * len(a) for a, _ in pairs], 0, left=True).to(rt.device)
    keep = max(sum(x != -100 for x in b) for _, b in pairs) + 1
    with rt.autocast():
        logits = model(input_ids=ids, attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
                       logits_to_keep=keep).logits[:, -keep:-1]
    return torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                                             labels[:, -keep + 1:].reshape(-1), ignore_index=-100)


def examples_fingerprint(sources: Sequence[str], targets: Sequence[str]) -> str:
    return fingerprint([list(sources), list(targets)])


def checkpoint_path(cfg: Seq2SeqConfig, sources: Sequence[str], targets: Sequence[str], select_key: str = "") -> Path:
    params = {"cfg": asdict(cfg), "examples": examples_fingerprint(sources, targets)}
    if select_key:  # what the selection scores on (the dev passages)
        params["select"] = select_key
    key = cache_key("seq2seq_models", params, code=[__name__])
    return entry_path("seq2seq_models", key).with_suffix(".safetensors")


def _make_optimizer(model, cfg: Seq2SeqConfig, total: int):
    from transformers import Adafactor, get_constant_schedule_with_warmup

    params = [p for p in model.parameters() if p.requires_grad]
    if cfg.optimizer == "adafactor":
        opt = Adafactor(params, lr=cfg.lr, scale_parameter=False, relative_step=False,
                        weight_decay=cfg.weight_decay)
    else:
        opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    return opt, get_constant_schedule_with_warmup(opt, int(np.ceil(cfg.warmup * total)))


def _freeze_below(model, n_top: int) -> None:
    """Train only the top ``n_top`` blocks and the final norm of a decoder-only model. The frozen
    blocks below need no backward pass, which is most of the saving."""
    decoder = model.get_decoder()
    model.requires_grad_(False)
    for module in [*decoder.layers[-n_top:], decoder.norm]:
        module.requires_grad_(True)


def _weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def _save(path: Path, model, opt, sched, step: int, losses: list[float], complete: bool, best: dict,
          selection: list) -> None:
    """A checkpoint; a complete one holds only the kept weights (the best ones, if selected)."""
    state = {"weights": best["weights"] if complete and best else _weights(model), "step": step,
             "losses": losses, "complete": complete, "selection": selection, "best_step": best.get("step")}
    if not complete:
        state.update(optimizer=opt.state_dict(), scheduler=sched.state_dict(), rng=torch.get_rng_state(), best=best)
    save_weights(path, state, "seq2seq_models")


def _load_for_training(cfg: Seq2SeqConfig, path: Path, resume: bool):
    """The model to train, its tokenizer and the run's checkpoint. The checkpoint is None when
    there is none, resuming is off or a refresh is requested, or when it does not fit the model
    (a fresh model is then trained again, with a warning)."""
    model, tok = load_seq2seq(cfg.model, cfg.seed)
    state = load_weights(path) if resume and not refresh_requested() else None
    if state is not None:
        try:
            model.load_state_dict(state["weights"])
        except (KeyError, TypeError, RuntimeError) as e:  # a checkpoint of another model
            warn_unreadable(path, f"{type(e).__name__}: {e}")
            state = None
            model, tok = load_seq2seq(cfg.model, cfg.seed)
    return model, tok, state


def _training_pairs(tok, cfg: Seq2SeqConfig, sources: Sequence[str], targets: Sequence[str],
                    causal: bool) -> list[tuple[list[int], list[int]]]:
    """(input ids, label ids) per example, as a decoder-only or an encoder-decoder model reads them."""
    if causal:
        return [causal_example(tok, s, t, cfg.max_src_len, cfg.max_tgt_len) for s, t in zip(sources, targets)]
    src = tok(list(sources), truncation=True, max_length=cfg.max_src_len)["input_ids"]
    return list(zip(src, _encode_targets(tok, cfg.model, targets, cfg.max_tgt_len)))


def _selection_steps(cfg: Seq2SeqConfig, total: int, selecting: bool) -> set[int]:
    """The steps after which the model is scored for selection: ``cfg.evaluations`` of them,
    evenly spaced, the last at the end of the run (none without a ``select`` function)."""
    if not selecting or not cfg.evaluations:
        return set()
    return {int(np.ceil(total * k / cfg.evaluations)) for k in range(1, cfg.evaluations + 1)}


def _batch_schedule(pairs: Sequence[tuple[list[int], list[int]]], cfg: Seq2SeqConfig, total: int) -> list[list[int]]:
    """The batch order of the whole run, epoch after epoch (same seed → same order)."""
    schedule: list[list[int]] = []
    epoch = 0
    while len(schedule) < total * cfg.grad_accum:
        schedule += length_batches([len(a) + len(b) for a, b in pairs], cfg.batch_size, shuffle=True,
                                   seed=cfg.seed * 1000 + epoch)
        epoch += 1
    return schedule[:total * cfg.grad_accum]


@dataclass
class _Run:
    """A fine-tuning run under way: what it trains, on which batches in which order, and how far it has got."""

    model: torch.nn.Module
    tok: object
    cfg: Seq2SeqConfig
    rt: Runtime
    path: Path
    causal: bool
    pairs: list[tuple[list[int], list[int]]]
    schedule: list[list[int]]
    total: int
    opt: object
    sched: object
    step: int = 0
    losses: list[float] = field(default_factory=list)
    selection: list[tuple[int, float]] = field(default_factory=list)
    best: dict = field(default_factory=dict)

    def save(self, complete: bool) -> None:
        _save(self.path, self.model, self.opt, self.sched, self.step, self.losses, complete, self.best, self.selection)


def _start_run(model, tok, cfg: Seq2SeqConfig, rt: Runtime, path: Path, sources: Sequence[str],
               targets: Sequence[str], state: dict | None) -> _Run:
    """A run from its first step (seeded with ``cfg.seed``), or from an unfinished checkpoint's step,
    with the checkpoint's optimiser, schedule, random state, losses and selection."""
    causal = decoder_only(cfg.model)
    if causal and cfg.train_layers is not None:
        _freeze_below(model, cfg.train_layers)
    pairs = _training_pairs(tok, cfg, sources, targets, causal)
    total = cfg.total_steps(len(pairs))
    schedule = _batch_schedule(pairs, cfg, total)
    opt, sched = _make_optimizer(model, cfg, total)
    run = _Run(model, tok, cfg, rt, path, causal, pairs, schedule, total, opt, sched)
    if state is None:
        seed_everything(cfg.seed)
        return run
    opt.load_state_dict(state["optimizer"])
    sched.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["rng"])
    run.step, run.losses, run.selection, run.best = (state["step"], list(state["losses"]),
                                                     list(state["selection"]), state["best"])
    return run


def _optimizer_step(run: _Run) -> float:
    """The run's next optimiser step, its gradient accumulated over ``grad_accum`` batches; its loss."""
    accum = run.cfg.grad_accum
    running = 0.0
    for batch in run.schedule[run.step * accum:(run.step + 1) * accum]:
        loss = _loss(run.model, [run.pairs[i] for i in batch], run.tok.pad_token_id, run.rt, run.causal) / accum
        loss.backward()
        running += loss.item()
    torch.nn.utils.clip_grad_norm_(run.model.parameters(), 1.0)
    run.opt.step()
    run.sched.step()
    run.opt.zero_grad(set_to_none=True)
    return running


def _score_for_selection(run: _Run, select: Callable[[TrainedSeq2Seq], float]) -> None:
    """Score the model as it is now, and keep its weights if they score best so far."""
    rng = torch.get_rng_state()  # evaluating must not change the rest of the run
    score = float(select(TrainedSeq2Seq(run.model.eval(), run.tok, run.cfg, run.losses)))
    torch.set_rng_state(rng)
    run.model.train()
    run.selection.append((run.step, score))
    if not run.best or score > run.best["score"]:
        run.best = {"score": score, "step": run.step, "weights": _weights(run.model)}


def _run_steps(run: _Run, select: Callable[[TrainedSeq2Seq], float] | None, selection_steps: set[int],
               stop_after_minutes: float | None) -> None:
    """Train from the run's step to its last, scoring for selection and checkpointing on the way;
    past ``stop_after_minutes``, save and raise :class:`TrainingInterrupted`."""
    cfg = run.cfg
    start = time.monotonic()
    run.model.train()
    bar = track(None, total=run.total, desc=f"train {cfg.model} (seed {cfg.seed})", unit="step")
    bar.update(run.step)  # a resumed run starts where its checkpoint stopped
    while run.step < run.total:
        run.losses.append(_optimizer_step(run))
        run.step += 1
        bar.update(1)
        if run.step in selection_steps:
            _score_for_selection(run, select)
        if run.step < run.total and cfg.checkpoint_every and run.step % cfg.checkpoint_every == 0:
            run.save(complete=False)
        if (run.step < run.total and stop_after_minutes is not None
                and time.monotonic() - start > 60 * stop_after_minutes):
            run.save(complete=False)
            raise TrainingInterrupted(f"stopped after {stop_after_minutes} min at step {run.step}/{run.total}; "
                                      f"the checkpoint {run.path} resumes it: run the same command again")
    bar.close()


def train(sources: Sequence[str], targets: Sequence[str], cfg: Seq2SeqConfig, rt: Runtime, *,
          resume: bool = True, stop_after_minutes: float | None = None,
          select: Callable[[TrainedSeq2Seq], float] | None = None, select_key: str = "") -> TrainedSeq2Seq:
    """Fine-tune ``cfg.model`` on (source, target) pairs; cached, checkpointed and resumable.

    A finished run with the same configuration and examples (and ``select_key``, naming what
    ``select`` scores) is loaded from disk instead of re-trained (unless a refresh is requested).
    """
    if len(sources) != len(targets) or not sources:
        raise ValueError("train needs as many targets as sources, and at least one pair")
    if (select is None) != (not select_key):
        raise ValueError("select and select_key go together")
    path = checkpoint_path(cfg, sources, targets, select_key)
    model, tok, state = _load_for_training(cfg, path, resume)
    model.to(rt.device)
    if state is not None and state["complete"]:
        return TrainedSeq2Seq(model.eval(), tok, cfg, state["losses"], state.get("selection", []),
                              state.get("best_step"))
    run = _start_run(model, tok, cfg, rt, path, sources, targets, state)
    _run_steps(run, select, _selection_steps(cfg, run.total, select is not None), stop_after_minutes)
    run.save(complete=True)
    if run.best:
        model.load_state_dict(run.best["weights"])
    return TrainedSeq2Seq(model.eval(), tok, cfg, run.losses, run.selection, run.best.get("step"))


def generate(trained: TrainedSeq2Seq, sources: Sequence[str], rt: Runtime) -> list[str]:
    """Greedy outputs (special tokens removed), batched by input length. A decoder-only model
    continues its prompt (:func:`causal_prompt`) up to EOS or the end of the line."""
    cfg, tok, model = trained.cfg, trained.tokenizer, trained.model
    if not sources:
        return []
    if decoder_only(cfg.model):
        lm = CausalLM(cfg.model, model.eval(), tok, rt)
        limit = cfg.infer_max_src_len or cfg.max_src_len
        return [t.strip() for t in lm.generate([causal_prompt(tok, s, limit) for s in sources], cfg.gen_max_len,
                                               stop=["\n"], batch_size=cfg.eval_batch_size)]
    src = tok(list(sources), truncation=True, max_length=cfg.infer_max_src_len or cfg.max_src_len)["input_ids"]
    out: list[str] = [""] * len(src)
    model.eval()
    for batch in track(length_batches([len(s) for s in src], cfg.eval_batch_size, shuffle=False),
                       desc=f"generate {cfg.model} ({len(src)} inputs)", unit="batch"):
        ids = _pad([src[i] for i in batch], tok.pad_token_id).to(rt.device)
        with torch.inference_mode(), rt.autocast():
            gen = model.generate(input_ids=ids, attention_mask=(ids != tok.pad_token_id).long(),
                                 max_new_tokens=cfg.gen_max_len, num_beams=1, do_sample=False)
        for i, text in zip(batch, tok.batch_decode(gen, skip_special_tokens=True)):
            out[i] = text
    return out


# --- multiple choice as text to text (UnifiedQA) --------------------------------------------

def unifiedqa_source(tok, item: MCItem, max_src_len: int) -> str:
    """UnifiedQA's multiple-choice input, lower-cased: ``question \\n (a) option (b) option ... \\n
    context`` (a literal backslash-n, as in its training data). The context is cut, token-wise, so
    that the whole input fits ``max_src_len`` tokens: training and scoring then read the same string."""
    head = f"{item.question} \\n " + " ".join(f"({chr(ord('a') + i)}) {o}" for i, o in enumerate(item.options))
    head = _collapse(head.lower())
    if not item.context.strip():
        return head
    room = max_src_len - len(tok(head + " \\n ")["input_ids"])
    context = _collapse(item.context.lower())
    ids = tok(context, add_special_tokens=False)["input_ids"]
    if len(ids) > room:
        context = tok.decode(ids[:max(room, 0)]).strip()
    return f"{head} \\n {context}" if context else head


def option_logits(trained: TrainedSeq2Seq, items: Sequence[MCItem], rt: Runtime) -> np.ndarray:
    """Summed log-likelihood of each (lower-cased) option as the answer to the item's UnifiedQA input:
    (n_items, max options), ``-inf`` where an item has fewer options. Ranking the options this way
    leaves no answer unparsed, unlike matching generated text."""
    cfg = trained.cfg
    n_opt = max((len(it.options) for it in items), default=0)
    out = np.full((len(items), n_opt), MISSING_OPTION, dtype=np.float32)
    if not items:
        return out
    # inputs already fit max_src_len (unifiedqa_source), so the scorer's own limit never cuts them
    scorer = Seq2SeqLM(cfg.model, trained.model.eval(), trained.tokenizer, rt, max_length=4 * cfg.max_src_len)
    sources = [unifiedqa_source(trained.tokenizer, it, cfg.max_src_len) for it in items]
    rows = [(i, j) for i, it in enumerate(items) for j in range(len(it.options))]
    scores = scorer.loglik([sources[i] for i, _ in rows], [items[i].options[j].lower() for i, j in rows],
                           batch_size=cfg.eval_batch_size)
    for (i, j), score in zip(rows, scores):
        out[i, j] = score
    return out


def finetune_mc_and_predict(cfg: Seq2SeqConfig, train_items: Sequence[MCItem],
                            eval_sets: dict[str, Sequence[MCItem]], rt: Runtime) -> dict[str, np.ndarray]:
    """Fine-tune a text-to-text model to write the gold option of each training item (UnifiedQA's
    format), then score every option of each evaluation set (:func:`option_logits`); cached,
    with ``"losses"`` as for :func:`rcstudy.models.mc.finetune_and_predict`."""
    train_items = [it for it in train_items if it.label is not None]
    if not train_items:
        raise ValueError("finetune_mc_and_predict needs labelled items")

    def fit() -> TrainedSeq2Seq:  # train() keeps the finished model on disk: a second call loads it
        # built here, not up front: a run whose predictions are all cached never tokenises ReClor
        tok = load_tokenizer(cfg.model)
        sources = [unifiedqa_source(tok, it, cfg.max_src_len) for it in train_items]
        return train(sources, [it.options[it.label].lower() for it in train_items], cfg, rt)

    params = {"cfg": asdict(cfg), "train": items_fingerprint(train_items)}
    results = cached_predictions("seq2seq_mc_predictions", params, eval_sets, fit,
                                 lambda trained, items: option_logits(trained, items, rt))
    results["losses"] = np.asarray(cached("seq2seq_mc_losses", params, lambda: fit().losses))
    return results
