"""RULE's prompted-LM engine: answer each prompt by letter probability, option log-likelihood or
generated text, cached per model, scoring and exact prompt texts.

Kept apart from the chapter's tables so that editing them does not invalidate these predictions
(cache keys follow the source of the module that calls :func:`rcstudy.cache.cached`).
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Sequence

import numpy as np

from ..cache import cached, fingerprint
from ..prompts import rule as prompts
from ..runtime import Runtime


def parse_answer(text: str) -> int:
    """The option index a generated answer names (``answer is OptionK`` first), else -1."""
    m = re.search(r"answer is\s*Option\s*([0-9])", text, re.IGNORECASE) or re.search(r"Option\s*([0-9])", text)
    return int(m.group(1)) if m else -1


class LazyLM:
    """Loads the causal LM only when a prediction is not already cached."""

    def __init__(self, name: str, rt: Runtime, max_length: int = 2048):
        self.name, self.rt, self.max_length = name, rt, max_length

    @cached_property
    def lm(self):
        from .lm import load_lm

        return load_lm(self.name, self.rt, max_length=self.max_length)


def _score(lm, texts: Sequence[str], options: Sequence[Sequence[str]], scoring: str, max_new_tokens: int) -> list[int]:
    if scoring == "generate":
        out = lm.generate(list(texts), max_new_tokens, stop=list(prompts.GENERATION_STOP))
        return [parse_answer(t) if parse_answer(t) < len(o) else -1 for t, o in zip(out, options)]
    if scoring == "letter":
        n_opt = max(len(o) for o in options)
        digits = [str(k) for k in range(n_opt)]
        try:
            logp = lm.next_token_logprobs([prompts.letter_prompt(t) for t in texts], digits)
        except ValueError:  # a tokenizer whose digits share a first token: score whole continuations
            ctx = [t for t in texts for _ in digits]
            logp = lm.loglik(ctx, [prompts.letter_continuation(k) for _ in texts for k in range(n_opt)]
                             ).reshape(len(texts), n_opt)
        return [int(np.argmax(row[:len(o)])) for row, o in zip(logp, options)]
    ctx = [t for t, o in zip(texts, options) for _ in o]
    scores, counts = lm.loglik(ctx, [prompts.option_continuation(opt) for o in options for opt in o],
                               return_counts=True)
    per_token = scores / np.maximum(counts, 1)
    out, k = [], 0
    for o in options:
        out.append(int(np.argmax(per_token[k:k + len(o)])))
        k += len(o)
    return out


def lm_predict(lazy: LazyLM, texts: Sequence[str], options: Sequence[Sequence[str]], scoring: str,
               max_new_tokens: int = 8) -> list[int]:
    """Predicted option per prompt (cached per model, scoring and exact prompt texts; duplicates run once)."""
    if not texts:
        return []
    unique = list(dict.fromkeys(zip(texts, map(tuple, options))))
    params = {"model": lazy.name, "scoring": scoring, "max_new_tokens": max_new_tokens if scoring == "generate" else None,
              "max_length": lazy.max_length, "prompts": fingerprint(unique), "n": len(unique)}
    preds = cached("rule_lm_predictions", params,
                   lambda: _score(lazy.lm, [t for t, _ in unique], [o for _, o in unique], scoring, max_new_tokens))
    lookup = dict(zip(unique, preds))
    return [lookup[(t, tuple(o))] for t, o in zip(texts, options)]
