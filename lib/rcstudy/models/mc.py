"""Multiple-choice engine: fine-tuning and frozen-encoder heads for any ``MCItem`` list.

Speed matters on 2 CPU cores, so batches are padded dynamically (to the longest sequence in
the batch, never to a fixed 256) and grouped by length; tokenisation is memoised per
(tokenizer, fields, max_length, item); inference runs under ``torch.inference_mode``; bf16
autocast wherever the runtime computes in bf16 (:mod:`rcstudy.runtime`); on a CPU, dropout masks
drawn from random bits in bulk (:mod:`rcstudy.models.bulk_dropout`) and a fused AdamW. Trained weights,
predictions and frozen features are cached on disk, keyed by the configuration, a fingerprint of
the items, the runtime's precision and this module's code, so chapters share them and reruns are free.
"""

from __future__ import annotations

import inspect
import random
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence, TypeVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..cache import cache_key, cached, entry_path, fingerprint, load_weights, save_weights, warn_unreadable
from ..data.records import MCItem
from ..runtime import Runtime, give_back_free_heap, seed_everything, track
from .bulk_dropout import bulk_dropout
from .loading import load_multiple_choice, load_tokenizer

FIELDS = ("A", "QA", "CQA")
#: Logit given to padded (non-existent) options so softmax/argmax ignore them.
MISSING_OPTION = float("-inf")
T = TypeVar("T")


@dataclass(frozen=True)
class MCConfig:
    model: str = "minilm-l6"
    fields: str = "CQA"
    max_length: int = 256
    epochs: float = 1
    lr: float = 2e-5
    batch_size: int = 8  # questions per optimiser step (before accumulation)
    grad_accum: int = 1
    warmup: float = 0.1  # fraction of steps
    weight_decay: float = 0.01
    seed: int = 0
    eval_batch_size: int = 32

    def __post_init__(self):
        if self.fields not in FIELDS:
            raise ValueError(f"fields must be one of {FIELDS}, got {self.fields!r}")


def items_fingerprint(items: Sequence[MCItem]) -> str:
    """Changes whenever any item's text, options, label or order changes."""
    return fingerprint([(it.id, it.context, it.question, it.options, it.label) for it in items])


def option_pairs(item: MCItem, fields: str) -> list[tuple[str | None, str]]:
    """The (segment A, segment B) text pair scored for each option, as in the ReClor baselines."""
    pairs = []
    for option in item.options:
        if fields == "A":
            pairs.append((None, option))
        elif fields == "QA":
            pairs.append((None, f"{item.question} {option}".strip()))
        else:
            pairs.append((item.context, f"{item.question} {option}".strip()))
    return pairs


# --- tokenisation (memoised) ---------------------------------------------------------------

_encodings: dict[tuple, list[dict]] = {}


def _encoding_key(tokenizer, item: MCItem, fields: str, max_length: int) -> tuple:
    return (tokenizer.name_or_path, len(tokenizer), fields, max_length, item.id, item.context, item.question,
            item.options)


def _kept(enc) -> dict:
    return {k: v for k, v in enc.items() if k in ("input_ids", "token_type_ids")}


def encode_item(tokenizer, item: MCItem, fields: str, max_length: int) -> list[dict]:
    """Token ids (and type ids) of each option's pair; the context is truncated first."""
    key = _encoding_key(tokenizer, item, fields, max_length)
    if key not in _encodings:
        out = []
        for a, b in option_pairs(item, fields):
            # type ids always (XLNet's tokenizer leaves them out by default, its model reads them)
            if a is None:
                enc = tokenizer(b, truncation=True, max_length=max_length, return_token_type_ids=True)
            else:
                try:
                    enc = tokenizer(a, b, truncation="only_first", max_length=max_length, return_token_type_ids=True)
                except Exception:  # question+option alone exceed max_length
                    enc = tokenizer(a, b, truncation="longest_first", max_length=max_length,
                                    return_token_type_ids=True)
            out.append(_kept(enc))
        _encodings[key] = out
    return _encodings[key]


def encode_items(tokenizer, items: Sequence[MCItem], fields: str, max_length: int, chunk: int = 256) -> list[list[dict]]:
    """:func:`encode_item` of every item, the ones not memoised yet tokenised ``chunk`` items per
    call: a fast tokenizer encodes a batch on all cores, where one call per option waits on Python.
    The ids are the same as item by item; a chunk where some context cannot be truncated enough
    for its option goes item by item (:func:`encode_item` falls back for that option)."""
    pending: dict[tuple, MCItem] = {}
    for it in items:
        key = _encoding_key(tokenizer, it, fields, max_length)
        if key not in _encodings:
            pending[key] = it
    todo = list(pending.items())
    for start in range(0, len(todo), chunk):
        part = todo[start:start + chunk]
        pairs = [pair for _, it in part for pair in option_pairs(it, fields)]
        firsts, seconds = [a for a, _ in pairs], [b for _, b in pairs]
        try:
            if fields == "CQA":
                enc = tokenizer(firsts, seconds, truncation="only_first", max_length=max_length,
                                return_token_type_ids=True)
            else:
                enc = tokenizer(seconds, truncation=True, max_length=max_length, return_token_type_ids=True)
        except Exception:  # some question+option alone exceeds max_length
            for _, it in part:
                encode_item(tokenizer, it, fields, max_length)
            continue
        rows = iter(_kept({k: enc[k][i] for k in enc}) for i in range(len(pairs)))
        for key, it in part:
            _encodings[key] = [next(rows) for _ in it.options]
    return [encode_item(tokenizer, it, fields, max_length) for it in items]


def collate(encoded: list[list[dict]], pad_id: int, n_options: int | None = None,
            padding_side: str = "right") -> dict[str, torch.Tensor]:
    """Pad a batch of encoded items to (B, n_options, longest sequence in the batch), on the
    tokenizer's side: XLNet pads left, its multiple-choice head reads the last position (``<cls>``)."""
    n_opt = n_options or max(len(e) for e in encoded)
    length = max(len(o["input_ids"]) for e in encoded for o in e)
    B = len(encoded)
    ids = torch.full((B, n_opt, length), pad_id, dtype=torch.long)
    attn = torch.zeros((B, n_opt, length), dtype=torch.long)
    types = torch.zeros((B, n_opt, length), dtype=torch.long)
    present = torch.zeros((B, n_opt), dtype=torch.bool)
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'right' or 'left', got {padding_side!r}")
    for i, e in enumerate(encoded):
        for j, o in enumerate(e):
            n = len(o["input_ids"])
            span = slice(0, n) if padding_side == "right" else slice(length - n, length)
            ids[i, j, span] = torch.tensor(o["input_ids"])
            attn[i, j, span] = 1
            if "token_type_ids" in o:
                types[i, j, span] = torch.tensor(o["token_type_ids"])
            present[i, j] = True
        for j in range(len(e), n_opt):  # a padded option: one pad token, masked out of the softmax
            attn[i, j, 0 if padding_side == "right" else -1] = 1
    return {"input_ids": ids, "attention_mask": attn, "token_type_ids": types, "option_mask": present}


def length_batches(lengths: Sequence[int], batch_size: int, *, shuffle: bool, seed: int = 0,
                   pool: int = 50) -> list[list[int]]:
    """Group indices into batches of similar length (pools of ``pool`` batches, sorted inside).

    With ``shuffle`` the pools and the batch order are random (seeded), so training still sees
    the data in random order while padding stays small.
    """
    idx = list(range(len(lengths)))
    rng = random.Random(seed)
    if shuffle:
        rng.shuffle(idx)
    else:
        idx.sort(key=lambda i: lengths[i])
    batches = []
    for start in range(0, len(idx), batch_size * pool):
        chunk = sorted(idx[start:start + batch_size * pool], key=lambda i: lengths[i])
        batches += [chunk[k:k + batch_size] for k in range(0, len(chunk), batch_size)]
    if shuffle:
        rng.shuffle(batches)
    return batches


def reads_token_types(model) -> bool:
    """Whether ``model`` reads segment ids: BERT's type embeddings or XLNet's relative segment
    encoding (it has no ``type_vocab_size``); RoBERTa, DeBERTa-v3 (one type or none) and the
    decoder heads do not."""
    takes = "token_type_ids" in inspect.signature(model.forward).parameters
    return takes and getattr(model.config, "type_vocab_size", 2) >= 2


def _forward(model, batch: dict[str, torch.Tensor], rt: Runtime) -> torch.Tensor:
    inputs = {k: v.to(rt.device, non_blocking=True) for k, v in batch.items() if k != "option_mask"}
    if not reads_token_types(model):
        inputs.pop("token_type_ids")
    with rt.autocast():
        logits = model(**inputs).logits.float()
    return logits.masked_fill(~batch["option_mask"].to(rt.device), MISSING_OPTION)


# --- fine-tuning ---------------------------------------------------------------------------

@dataclass
class TrainedMC:
    model: nn.Module
    tokenizer: object
    cfg: MCConfig
    losses: list[float] = field(default_factory=list)


def _adamw(model: nn.Module, cfg: MCConfig, rt: Runtime) -> torch.optim.AdamW:
    """AdamW with ``cfg``'s weight decay on every weight but biases and normalisation weights."""
    no_decay = ("bias", "LayerNorm.weight", "layer_norm", "norm.weight")
    groups = [
        {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)],
         "weight_decay": cfg.weight_decay},
        {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
    ]
    # one fused kernel for the whole update, as the Trainer's default optimiser (torch's default on a
    # CPU updates one tensor at a time)
    return torch.optim.AdamW(groups, lr=cfg.lr, fused=True if rt.device.type in ("cpu", "cuda") else None)


def finetune(train_items: Sequence[MCItem], cfg: MCConfig, rt: Runtime, *, init: nn.Module | None = None) -> TrainedMC:
    """Fine-tune ``cfg.model`` with a multiple-choice head on ``train_items`` (AdamW, linear warm-up).

    ``init`` continues from an already fine-tuned model (sequential transfer) instead of the
    pretrained weights; it is trained in place.
    """
    from transformers import get_linear_schedule_with_warmup

    train_items = [it for it in train_items if it.label is not None]
    if not train_items:
        raise ValueError("finetune needs labelled items")
    seed_everything(cfg.seed)
    tokenizer = load_tokenizer(cfg.model)
    model = (init if init is not None else load_multiple_choice(cfg.model, seed=cfg.seed)).to(rt.device)
    encoded = encode_items(tokenizer, train_items, cfg.fields, cfg.max_length)
    lengths = [max(len(o["input_ids"]) for o in e) for e in encoded]
    labels = torch.tensor([it.label for it in train_items])
    n_epochs = max(1, int(np.ceil(cfg.epochs)))
    steps_per_epoch = int(np.ceil(len(train_items) / cfg.batch_size))
    total_batches = int(round(cfg.epochs * steps_per_epoch))
    total_steps = max(1, total_batches // cfg.grad_accum)
    optimizer = _adamw(model, cfg, rt)
    schedule = get_linear_schedule_with_warmup(optimizer, int(cfg.warmup * total_steps), total_steps)
    model.train()
    # each optimiser step's loss stays on the device until the end: reading it every step
    # (``.item()``) would make the host wait for the GPU instead of preparing the next batch
    losses: list[torch.Tensor] = []
    done, running = 0, torch.zeros((), dtype=torch.float64, device=rt.device)
    bar = track(range(total_batches), desc=f"fine-tune {cfg.model} (seed {cfg.seed})", unit="batch")
    steps = iter(bar)
    with bulk_dropout(model, rt.device, cfg.seed):
        for epoch in range(n_epochs):
            for batch_idx in length_batches(lengths, cfg.batch_size, shuffle=True, seed=cfg.seed * 1000 + epoch):
                if done >= total_batches:
                    break
                next(steps)
                batch = collate([encoded[i] for i in batch_idx], tokenizer.pad_token_id,
                                padding_side=tokenizer.padding_side)
                logits = _forward(model, batch, rt)
                loss = F.cross_entropy(logits, labels[batch_idx].to(rt.device)) / cfg.grad_accum
                loss.backward()
                running += loss.detach()
                done += 1
                if done % cfg.grad_accum == 0 or done == total_batches:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    schedule.step()
                    optimizer.zero_grad(set_to_none=True)
                    if rt.device.type == "cpu":
                        give_back_free_heap()
                    losses.append(running)
                    running = torch.zeros((), dtype=torch.float64, device=rt.device)
    bar.close()
    model.eval()
    return TrainedMC(model, tokenizer, cfg, torch.stack(losses).tolist())


def predict(trained: TrainedMC, items: Sequence[MCItem], rt: Runtime) -> np.ndarray:
    """Option logits, shape (n_items, max options); ``-inf`` where an item has fewer options."""
    cfg, tok = trained.cfg, trained.tokenizer
    encoded = encode_items(tok, items, cfg.fields, cfg.max_length)
    if not encoded:
        return np.zeros((0, 0), dtype=np.float32)
    n_opt = max(len(e) for e in encoded)
    lengths = [max(len(o["input_ids"]) for o in e) for e in encoded]
    batches = length_batches(lengths, cfg.eval_batch_size, shuffle=False)
    logits = []  # kept on the device and copied once: a copy per batch would wait for the GPU each time
    trained.model.eval()
    with torch.inference_mode():
        for batch_idx in track(batches, desc=f"predict {cfg.model} ({len(items)} questions)", unit="batch"):
            batch = collate([encoded[i] for i in batch_idx], tok.pad_token_id, n_opt, padding_side=tok.padding_side)
            logits.append(_forward(trained.model, batch, rt))
    out = np.zeros((len(items), n_opt), dtype=np.float32)
    out[[i for batch_idx in batches for i in batch_idx]] = torch.cat(logits).cpu().numpy()
    return out


def _model_cache_key(cfg: MCConfig, train_items: Sequence[MCItem]) -> dict:
    return cache_key("mc_models", {"cfg": asdict(cfg), "train": items_fingerprint(train_items)}, code=[__name__])


def finetune_cached(train_items: Sequence[MCItem], cfg: MCConfig, rt: Runtime) -> TrainedMC:
    """:func:`finetune`, with the trained weights and losses cached on disk (shared across chapters)
    as safetensors; a weight file that cannot be read or does not fit the model is retrained with a warning."""
    from ..settings import refresh_requested

    path = entry_path("mc_models", _model_cache_key(cfg, train_items)).with_suffix(".safetensors")
    state = None if refresh_requested() else load_weights(path)
    if state is not None:
        model = load_multiple_choice(cfg.model, seed=cfg.seed)
        try:
            model.load_state_dict(state["weights"])
            losses = list(state["losses"])
        except (KeyError, TypeError, ValueError, RuntimeError) as e:
            warn_unreadable(path, f"{type(e).__name__}: {e}")
        else:
            return TrainedMC(model.to(rt.device).eval(), load_tokenizer(cfg.model), cfg, losses)
    trained = finetune(train_items, cfg, rt)
    save_weights(path, {"weights": dict(trained.model.state_dict()), "losses": trained.losses}, "mc_models")
    return trained


def cached_predictions(namespace: str, params: dict, eval_sets: dict[str, Sequence[MCItem]],
                       trained_model: Callable[[], T], predict_fn: Callable[[T, Sequence[MCItem]], np.ndarray]
                       ) -> dict[str, np.ndarray]:
    """``predict_fn(model, items)`` on each evaluation set, cached per set under ``params`` plus the
    items' fingerprint. ``trained_model`` is called (once) only when some set is not cached yet."""
    results: dict[str, np.ndarray] = {}
    model = None
    for name, items in eval_sets.items():
        def compute(items=items):
            nonlocal model
            model = model or trained_model()
            return predict_fn(model, items)

        results[name] = cached(namespace, {**params, "eval": items_fingerprint(items)}, compute)
    return results


def finetune_and_predict(cfg: MCConfig, train_items: Sequence[MCItem], eval_sets: dict[str, Sequence[MCItem]],
                         rt: Runtime) -> dict[str, np.ndarray]:
    """Logits on each evaluation set (plus ``"losses"``), cached per configuration and items."""
    params = {"cfg": asdict(cfg), "train": items_fingerprint(train_items)}
    results = cached_predictions("mc_predictions", params, eval_sets,
                                 lambda: finetune_cached(train_items, cfg, rt), lambda m, items: predict(m, items, rt))
    results["losses"] = np.asarray(cached("mc_losses", params, lambda: finetune_cached(train_items, cfg, rt).losses))
    return results


# --- frozen encoder + linear head ----------------------------------------------------------

def frozen_features(model_name: str, items: Sequence[MCItem], fields: str, rt: Runtime, *,
                    max_length: int = 256, batch_size: int = 32) -> np.ndarray:
    """Mean-pooled encoder states of every (item, option) pair: (n, max options, hidden), cached.

    Missing options are all-zero rows. The encoder is the pretrained one, never updated.
    """
    def compute() -> np.ndarray:
        from transformers import AutoModel

        from .registry import TINY_MODELS, resolve

        tok = load_tokenizer(model_name)
        if model_name in TINY_MODELS:
            encoder = load_multiple_choice(model_name).base_model
        else:
            encoder = AutoModel.from_pretrained(resolve(model_name))
        encoder = encoder.to(rt.device).eval()
        encoded = encode_items(tok, items, fields, max_length)
        n_opt = max((len(e) for e in encoded), default=0)
        feats = np.zeros((len(items), n_opt, encoder.config.hidden_size), dtype=np.float32)
        lengths = [max(len(o["input_ids"]) for o in e) for e in encoded]
        with torch.inference_mode():
            for batch_idx in length_batches(lengths, max(1, batch_size // max(n_opt, 1)), shuffle=False):
                batch = collate([encoded[i] for i in batch_idx], tok.pad_token_id, n_opt, padding_side=tok.padding_side)
                B, O, L = batch["input_ids"].shape
                inputs = {k: v.view(B * O, L).to(rt.device) for k, v in batch.items() if k != "option_mask"}
                if not reads_token_types(encoder):
                    inputs.pop("token_type_ids")
                with rt.autocast():
                    hidden = encoder(**inputs).last_hidden_state.float()
                mask = inputs["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
                pooled = pooled.view(B, O, -1) * batch["option_mask"].to(rt.device).unsqueeze(-1)
                feats[batch_idx] = pooled.cpu().numpy()
        return feats

    params = {"model": model_name, "fields": fields, "max_length": max_length, "items": items_fingerprint(items)}
    return cached("mc_frozen_features", params, compute)


class LinearOptionHead(nn.Module):
    """Scores each option's feature vector with one linear layer; softmax over the options."""

    def __init__(self, hidden: int):
        super().__init__()
        self.score = nn.Linear(hidden, 1)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        return self.score(feats).squeeze(-1)


def fit_linear_head(feats: np.ndarray, labels: Sequence[int], seed: int, *, epochs: int = 30, lr: float = 1e-2,
                    weight_decay: float = 1e-3, batch_size: int = 64) -> LinearOptionHead:
    """Train a :class:`LinearOptionHead` on frozen features (Adam, cross-entropy over options)."""
    seed_everything(seed)
    x = torch.from_numpy(np.ascontiguousarray(feats))
    present = x.abs().sum(-1) > 0
    y = torch.as_tensor(list(labels), dtype=torch.long)
    head = LinearOptionHead(x.shape[-1])
    opt = torch.optim.Adam(head.parameters(), lr=lr, weight_decay=weight_decay)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        for idx in torch.randperm(len(x), generator=gen).split(batch_size):
            logits = head(x[idx]).masked_fill(~present[idx], MISSING_OPTION)
            loss = F.cross_entropy(logits, y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return head.eval()


def head_logits(head: LinearOptionHead, feats: np.ndarray) -> np.ndarray:
    x = torch.from_numpy(np.ascontiguousarray(feats))
    with torch.inference_mode():
        return head(x).masked_fill(x.abs().sum(-1) == 0, MISSING_OPTION).numpy()
