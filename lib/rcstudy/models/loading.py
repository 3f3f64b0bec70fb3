"""Loading tokenizers and models by the book's model names (see :mod:`.registry`)."""

from __future__ import annotations

import torch
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForMultipleChoice,
    AutoTokenizer,
    BertConfig,
    LlamaConfig,
)

from transformers.utils import logging as hf_logging

from ..errors import ModelUnavailable
from .registry import TINY_MODELS, minilm_path, resolve, smollm2_path

# Load reports ("classifier.weight MISSING") and progress bars are noise in a rendered book.
hf_logging.set_verbosity_error()
hf_logging.disable_progress_bar()

TINY_DIMS = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


def _tokenizer_source(name: str) -> str:
    if name == "tiny-bert":
        return str(minilm_path())
    if name == "tiny-llama":
        return str(smollm2_path())
    return resolve(name)


def load_tokenizer(name: str):
    tok = load_or_explain(lambda: AutoTokenizer.from_pretrained(_tokenizer_source(name)), name)
    if tok.pad_token is None:  # causal LMs: pad with EOS, padding is always masked out
        tok.pad_token = tok.eos_token
    return tok


def _tiny_config(name: str, vocab_size: int):
    if name == "tiny-bert":
        return BertConfig(vocab_size=vocab_size, max_position_embeddings=512, **TINY_DIMS)
    return LlamaConfig(vocab_size=vocab_size, max_position_embeddings=2048, num_key_value_heads=2, **TINY_DIMS)


def load_or_explain(load, name: str):
    try:
        return load()
    except ModelUnavailable:
        raise
    except OSError as e:  # from_pretrained's "can't load" (no network, no such repo)
        raise ModelUnavailable(f"could not load model {name!r}: {e}") from None


def _load(auto_cls, name: str, seed: int = 0):
    if name in TINY_MODELS:
        torch.manual_seed(seed)
        return auto_cls.from_config(_tiny_config(name, len(load_tokenizer(name))))
    return load_or_explain(lambda: auto_cls.from_pretrained(resolve(name)), name)


def load_multiple_choice(name: str, seed: int = 0):
    """An encoder with a fresh multiple-choice head (``seed`` fixes the head's init)."""
    if name in TINY_MODELS:
        return _load(AutoModelForMultipleChoice, name, seed)
    torch.manual_seed(seed)  # the classifier head is newly initialised
    return _load(AutoModelForMultipleChoice, name)


def load_causal_lm(name: str):
    model = _load(AutoModelForCausalLM, name)
    model.eval()
    return model


def model_config(name: str):
    if name in TINY_MODELS:
        return _tiny_config(name, len(load_tokenizer(name)))
    return load_or_explain(lambda: AutoConfig.from_pretrained(resolve(name)), name)
