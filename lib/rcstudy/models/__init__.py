"""Models: name resolution (offline packages, tiny smoke models, Hub ids) and the shared engines."""

from .loading import load_causal_lm, load_multiple_choice, load_tokenizer, model_config
from .registry import OFFLINE_MODELS, TINY_MODELS, resolve

__all__ = [
    "OFFLINE_MODELS", "TINY_MODELS", "resolve",
    "load_causal_lm", "load_multiple_choice", "load_tokenizer", "model_config",
]
