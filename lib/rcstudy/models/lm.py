"""Language-model engine: continuation log-likelihoods, next-token choices and greedy generation.

:func:`load_lm` picks the engine a model needs: :class:`CausalLM` for decoder-only models
(SmolLM2, Llama, Mistral, GPT-2) and :class:`Seq2SeqLM` for encoder-decoder ones (Flan-T5,
UnifiedQA); both answer the same calls.

Causal scoring follows lm-evaluation-harness: context and continuation are tokenised separately (a
trailing space of the context moves to the continuation), the pair is truncated from the
left, and the score is the summed log-probability of the continuation tokens. Batches are
left-padded with explicit position ids. Pairs that share a context (the options of a question)
run it once and reuse its key/value cache for every continuation, and logits are computed only
where they are scored (``logits_to_keep``): no (batch × context × vocabulary) tensor is built.
Encoder-decoder scoring, as lm-evaluation-harness does it too, feeds the context to the encoder
and scores the continuation as the decoder's target; each distinct context is encoded once.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch
from torch import nn

from ..runtime import Runtime, track
from .loading import load_causal_lm, load_seq2seq_lm, load_tokenizer, model_config


@contextmanager
def quiet_encoder_decoder():
    """Silence the note ``EncoderDecoderModel`` (BERT2BERT) prints on every call given labels: that
    its loss changed in transformers v4.12, which concerns no model trained here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Version v4.12.0 introduces", category=FutureWarning)
        yield


def load_lm(name: str, rt: Runtime, max_length: int = 2048) -> "CausalLM | Seq2SeqLM":
    """The scoring engine for ``name``: encoder-decoder models get :class:`Seq2SeqLM`."""
    engine = Seq2SeqLM if getattr(model_config(name), "is_encoder_decoder", False) else CausalLM
    return engine.load(name, rt, max_length)


@dataclass
class _LanguageModel:
    """What both engines share: the model, its tokenizer, batching and prompt helpers."""

    name: str
    model: torch.nn.Module
    tokenizer: object
    rt: Runtime
    max_length: int = 2048

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    @staticmethod
    def _batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # longest first: OOM shows at once
        return [order[k:k + batch_size] for k in range(0, len(order), batch_size)]

    def _first_tokens(self, candidates: Sequence[str]) -> list[int]:
        first = [self._ids(c)[0] for c in candidates]
        if len(set(first)) != len(first):
            raise ValueError(f"candidates {list(candidates)} share a first token; scoring would be ambiguous")
        return first

    def chat_prompt(self, user_text: str) -> str:
        """``user_text`` wrapped in the model's chat template (unchanged if it has none)."""
        if not getattr(self.tokenizer, "chat_template", None):
            return user_text
        return self.tokenizer.apply_chat_template([{"role": "user", "content": user_text}], tokenize=False,
                                                  add_generation_prompt=True)


def fp32_output_head(model: nn.Module) -> nn.Module:
    """Make ``model``'s output projection run in fp32 under autocast (in place; returns it).

    Under bf16 autocast the vocabulary logits come out in bf16, whose step near a logit of 20 is
    0.125: summed over an option's tokens that moves a log-likelihood by tenths and flips near
    ties. The rest of the network keeps the speed of bf16; the head's weights are fp32 already."""
    head = model.get_output_embeddings()
    if head is None or getattr(head, "_rcstudy_fp32", False):
        return model
    bf16_forward = head.forward

    def forward(hidden: torch.Tensor) -> torch.Tensor:
        with torch.autocast(device_type=hidden.device.type, enabled=False):
            return bf16_forward(hidden.float())

    head.forward, head._rcstudy_fp32 = forward, True
    return model


@dataclass
class CausalLM(_LanguageModel):
    @classmethod
    def load(cls, name: str, rt: Runtime, max_length: int = 2048) -> "CausalLM":
        model = fp32_output_head(load_causal_lm(name).to(rt.device).eval())
        limit = getattr(model.config, "max_position_embeddings", max_length) or max_length
        return cls(name, model, load_tokenizer(name), rt, min(max_length, limit))

    # --- tokenisation ------------------------------------------------------------------------

    def _start_ids(self) -> list[int]:
        """What an empty context is conditioned on: BOS if the tokenizer has one, else EOS."""
        tok = self.tokenizer
        start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        return [start]

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        n_space = len(context) - len(context.rstrip(" "))
        if n_space:
            context, continuation = context[:-n_space], context[-n_space:] + continuation
        ctx = self._ids(context) if context else self._start_ids()
        cont = self._ids(continuation)
        whole = (ctx + cont)[-(self.max_length + 1):]
        n_cont = min(len(cont), len(whole) - 1)
        return whole[: len(whole) - n_cont], whole[len(whole) - n_cont:]

    # --- batched forward ---------------------------------------------------------------------
    def _last_logprobs(self, sequences: list[list[int]], keep: int) -> torch.Tensor:
        """Log-softmax over the vocabulary at the last ``keep`` positions of each sequence."""
        ids, mask = self._left_padded(sequences)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        dev = self.rt.device
        with torch.inference_mode(), self.rt.autocast():
            out = self.model(input_ids=ids.to(dev), attention_mask=mask.to(dev), position_ids=positions.to(dev),
                             logits_to_keep=keep)
        return torch.log_softmax(out.logits[:, -keep:].float(), dim=-1)

    def _left_padded(self, sequences: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        length = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), length), pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for i, s in enumerate(sequences):
            ids[i, length - len(s):] = torch.tensor(s)
            mask[i, length - len(s):] = 1
        return ids, mask

    def _shared_context_logprobs(self, contexts: list[list[int]], continuations: list[list[int]],
                                 owner: list[int]) -> list[float]:
        """Summed log p(continuation | its context): each context runs once, its cache serves every
        continuation of it (``owner[r]`` is the context of continuation ``r``)."""
        dev = self.rt.device
        ids, mask = self._left_padded(contexts)
        own = torch.tensor(owner)
        own_dev = own.to(dev)
        # Each log-probability is picked out on the device: only (rows × tokens) numbers travel to
        # the host, never the (rows × tokens × vocabulary) log-softmax (hundreds of MB a batch on a GPU).
        with torch.inference_mode(), self.rt.autocast():
            out = self.model(input_ids=ids.to(dev), attention_mask=mask.to(dev),
                             position_ids=(mask.cumsum(-1) - 1).clamp(min=0).to(dev), use_cache=True,
                             logits_to_keep=1)
            first_ids = torch.tensor([c[0] for c in continuations], device=dev)
            first = torch.log_softmax(out.logits[:, -1].float(), dim=-1)[own_dev, first_ids].cpu()
            rest_len = max(len(c) for c in continuations) - 1
            if rest_len > 0:  # every continuation token but the last, right-padded, after its context
                cache = out.past_key_values
                cache.reorder_cache(own_dev)
                rest = torch.zeros((len(continuations), rest_len), dtype=torch.long)
                rest_mask = torch.zeros_like(rest)
                targets = torch.zeros_like(rest)  # the token each position of ``rest`` predicts
                for r, c in enumerate(continuations):
                    rest[r, :len(c) - 1] = torch.tensor(c[:-1], dtype=torch.long)
                    rest_mask[r, :len(c) - 1] = 1
                    targets[r, :len(c) - 1] = torch.tensor(c[1:], dtype=torch.long)
                positions = mask[own].sum(-1, keepdim=True) + torch.arange(rest_len)
                logits = self.model(input_ids=rest.to(dev), attention_mask=torch.cat([mask[own], rest_mask], 1).to(dev),
                                    position_ids=positions.to(dev), past_key_values=cache).logits
                rest_logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, targets.to(dev)[..., None])[..., 0].cpu()
        scores = []
        for r, c in enumerate(continuations):
            score = first[r].item()
            if len(c) > 1:
                score += rest_logp[r, :len(c) - 1].sum().item()
            scores.append(score)
        return scores

    def loglik(self, contexts: Sequence[str], continuations: Sequence[str], batch_size: int = 8,
               return_counts: bool = False):
        """Summed log p(continuation | context) per pair (and the continuation token counts).

        Pairs that share a context (the options of one question) share one forward pass over it:
        the context's key/value cache is reused for each continuation. ``batch_size`` counts
        continuations per forward pass.
        """
        if len(contexts) != len(continuations):
            raise ValueError("contexts and continuations differ in length")
        pairs = [self.encode_pair(c, x) for c, x in zip(contexts, continuations)]
        scores = np.zeros(len(pairs), dtype=np.float64)
        counts = np.array([len(cont) for _, cont in pairs])
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, (ctx, cont) in enumerate(pairs):
            if cont:  # an empty continuation scores 0
                groups.setdefault(tuple(ctx), []).append(i)
        # A context with more continuations than batch_size (a cloze passage with many candidate
        # entities) is split into pieces; pieces are packed into passes of at most batch_size rows.
        pieces = [(ctx, members[k:k + batch_size]) for ctx, members in groups.items()
                  for k in range(0, len(members), batch_size)]
        pieces.sort(key=lambda p: len(p[0]), reverse=True)  # longest first: OOM shows at once
        start = 0
        bar = track(None, total=len(pieces), desc=f"{self.name}: score", unit="context")
        while start < len(pieces):
            chunk, rows = [pieces[start]], len(pieces[start][1])
            start += 1
            while start < len(pieces) and rows + len(pieces[start][1]) <= batch_size:
                chunk.append(pieces[start])
                rows += len(pieces[start][1])
                start += 1
            bar.update(len(chunk))
            members = [(g, i) for g, (_, rows_of) in enumerate(chunk) for i in rows_of]
            got = self._shared_context_logprobs([list(ctx) for ctx, _ in chunk], [pairs[i][1] for _, i in members],
                                                [g for g, _ in members])
            scores[[i for _, i in members]] = got
        bar.close()
        return (scores, counts) if return_counts else scores

    def next_token_logprobs(self, prompts: Sequence[str], candidates: Sequence[str], batch_size: int = 8) -> np.ndarray:
        """(n_prompts, n_candidates) log-probabilities of each candidate's first token after the prompt."""
        first = self._first_tokens(candidates)
        seqs = [self._ids(p)[-self.max_length:] or self._start_ids() for p in prompts]
        out = np.zeros((len(prompts), len(candidates)))
        for idx in track(self._batches([len(s) for s in seqs], batch_size), desc=f"{self.name}: answer letters",
                         unit="batch"):
            logp = self._last_logprobs([seqs[i] for i in idx], 1)[:, -1].cpu()
            out[idx] = logp[:, first].numpy()
        return out

    def generate(self, prompts: Sequence[str], max_new_tokens: int, stop: Sequence[str] | None = None,
                 batch_size: int = 4) -> list[str]:
        """Greedy continuations, cut at the first ``stop`` string."""
        tok = self.tokenizer
        tok.padding_side = "left"
        texts: list[str] = [""] * len(prompts)
        lengths = [len(self._ids(p)) for p in prompts]
        for idx in track(self._batches(lengths, batch_size), desc=f"{self.name}: generate", unit="batch"):
            enc = tok([prompts[i] for i in idx], return_tensors="pt", padding=True, add_special_tokens=False,
                      truncation=True, max_length=self.max_length - max_new_tokens)
            with torch.inference_mode(), self.rt.autocast():
                out = self.model.generate(**{k: v.to(self.rt.device) for k, v in enc.items()},
                                          max_new_tokens=max_new_tokens, do_sample=False,
                                          pad_token_id=tok.pad_token_id)
            for row, i in enumerate(idx):
                text = tok.decode(out[row, enc["input_ids"].shape[1]:], skip_special_tokens=True)
                for s in stop or ():
                    text = text.split(s, 1)[0]
                texts[i] = text
        return texts


@dataclass
class Seq2SeqLM(_LanguageModel):
    """An encoder-decoder model: the context (prompt) is the encoder's input, the continuation the
    decoder's target. Inputs longer than ``max_length`` keep their end, as the causal engine does."""

    @classmethod
    def load(cls, name: str, rt: Runtime, max_length: int = 2048) -> "Seq2SeqLM":
        model = fp32_output_head(load_seq2seq_lm(name).to(rt.device))
        return cls(name, model, load_tokenizer(name), rt, max_length)

    def _source(self, text: str) -> list[int]:
        ids = self.tokenizer(text)["input_ids"]  # with the tokenizer's special tokens (T5: closing </s>)
        return ids[-self.max_length:]

    def _encode(self, sources: list[list[int]]):
        pad = self.tokenizer.pad_token_id
        length = max(len(s) for s in sources)
        ids = torch.full((len(sources), length), pad, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for i, s in enumerate(sources):
            ids[i, :len(s)], mask[i, :len(s)] = torch.tensor(s), 1
        dev = self.rt.device
        with torch.inference_mode(), self.rt.autocast():
            encoded = self.model.get_encoder()(input_ids=ids.to(dev), attention_mask=mask.to(dev))
        return encoded, mask.to(dev)

    def _target_logprobs(self, sources: list[list[int]], targets: list[list[int]], owner: list[int]) -> torch.Tensor:
        """Log-softmax at each target position; target ``r`` is decoded from source ``owner[r]``."""
        encoded, mask = self._encode(sources)
        own = torch.tensor(owner, device=mask.device)
        length = max(len(t) for t in targets)
        labels = torch.full((len(targets), length), -100, dtype=torch.long)
        for r, t in enumerate(targets):
            labels[r, :len(t)] = torch.tensor(t)
        with torch.inference_mode(), self.rt.autocast(), quiet_encoder_decoder():
            hidden = encoded.last_hidden_state[own]
            logits = self.model(encoder_outputs=(hidden,), attention_mask=mask[own],
                                labels=labels.to(mask.device)).logits
        return torch.log_softmax(logits.float(), dim=-1).cpu()

    def loglik(self, contexts: Sequence[str], continuations: Sequence[str], batch_size: int = 8,
               return_counts: bool = False):
        """Summed log p(continuation | context) per pair (and the continuation token counts)."""
        if len(contexts) != len(continuations):
            raise ValueError("contexts and continuations differ in length")
        targets = [self._ids(c) for c in continuations]
        counts = np.array([len(t) for t in targets])
        scores = np.zeros(len(targets), dtype=np.float64)
        rows = [i for i, t in enumerate(targets) if t]  # an empty continuation scores 0
        for idx in track(self._batches([len(contexts[i]) for i in rows], batch_size), desc=f"{self.name}: score",
                         unit="batch"):
            idx = [rows[k] for k in idx]
            distinct = list(dict.fromkeys(contexts[i] for i in idx))
            owner = [distinct.index(contexts[i]) for i in idx]
            logp = self._target_logprobs([self._source(c) for c in distinct], [targets[i] for i in idx], owner)
            for r, i in enumerate(idx):
                t = torch.tensor(targets[i])
                scores[i] = logp[r, torch.arange(len(t)), t].sum().item()
        return (scores, counts) if return_counts else scores

    def next_token_logprobs(self, prompts: Sequence[str], candidates: Sequence[str], batch_size: int = 8) -> np.ndarray:
        """(n_prompts, n_candidates) log-probabilities of each candidate's first token as the answer's first."""
        first = self._first_tokens(candidates)
        sources = [self._source(p) for p in prompts]
        out = np.zeros((len(prompts), len(candidates)))
        for idx in track(self._batches([len(s) for s in sources], batch_size), desc=f"{self.name}: answer letters",
                         unit="batch"):
            logp = self._target_logprobs([sources[i] for i in idx], [[first[0]]] * len(idx), list(range(len(idx))))
            out[idx] = logp[:, 0, first].numpy()
        return out

    def generate(self, prompts: Sequence[str], max_new_tokens: int, stop: Sequence[str] | None = None,
                 batch_size: int = 4) -> list[str]:
        """Greedy answers, cut at the first ``stop`` string."""
        texts: list[str] = [""] * len(prompts)
        sources = [self._source(p) for p in prompts]
        for idx in track(self._batches([len(s) for s in sources], batch_size), desc=f"{self.name}: generate",
                         unit="batch"):
            encoded, mask = self._encode([sources[i] for i in idx])
            with torch.inference_mode(), self.rt.autocast():
                out = self.model.generate(encoder_outputs=encoded, attention_mask=mask,
                                          max_new_tokens=max_new_tokens, do_sample=False)
            for row, i in enumerate(idx):
                text = self.tokenizer.decode(out[row], skip_special_tokens=True)
                for s in stop or ():
                    text = text.split(s, 1)[0]
                texts[i] = text
        return texts
