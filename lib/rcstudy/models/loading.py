"""Loading tokenizers and models by the book's model names (see :mod:`.registry`)."""

from __future__ import annotations

import torch
import transformers
from torch import nn
from transformers.utils import logging as hf_logging

from ..errors import ModelUnavailable
from ..settings import hub_offline
from .registry import TINY_MODELS, minilm_path, resolve, smollm2_path

# Load reports ("classifier.weight MISSING") are noise in a rendered book; progress bars are kept
# where something is downloaded (online), on stderr, which the book leaves out of its pages.
hf_logging.set_verbosity_error()
if hub_offline():
    hf_logging.disable_progress_bar()

TINY_DIMS = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


def _tokenizer_source(name: str) -> str:
    if name == "tiny-bert":
        return str(minilm_path())
    if name == "tiny-llama":
        return str(smollm2_path())
    return resolve(name)


def load_tokenizer(name: str):
    tok = load_or_explain(lambda: transformers.AutoTokenizer.from_pretrained(_tokenizer_source(name)), name)
    if tok.pad_token is None:  # causal LMs: pad with EOS (GPT has none: UNK); padding is always masked out
        tok.pad_token = tok.eos_token if tok.eos_token is not None else tok.unk_token
    if tok.pad_token is None:
        raise ModelUnavailable(f"the tokenizer of {name!r} has no pad, end-of-sequence or unknown token to pad with")
    return tok


def _tiny_config(name: str, vocab_size: int):
    if name == "tiny-bert":
        return transformers.BertConfig(vocab_size=vocab_size, max_position_embeddings=512, **TINY_DIMS)
    return transformers.LlamaConfig(vocab_size=vocab_size, max_position_embeddings=2048, num_key_value_heads=2,
                                    **TINY_DIMS)


def load_or_explain(load, name: str):
    try:
        return load()
    except ModelUnavailable:
        raise
    except OSError as e:  # from_pretrained's "can't load" (no network, no such repo)
        raise ModelUnavailable(f"could not load model {name!r}: {e}") from None


def load_auto(auto_cls, name: str, seed: int = 0):
    """Any Transformers auto class (``AutoModel``, ``AutoModelForQuestionAnswering``, ...) by the
    book's model names; a tiny model gets random weights drawn with ``seed``."""
    if name in TINY_MODELS:
        torch.manual_seed(seed)
        return auto_cls.from_config(_tiny_config(name, len(load_tokenizer(name))))
    return load_or_explain(lambda: auto_cls.from_pretrained(resolve(name)), name)


class DecoderForMultipleChoice(nn.Module):
    """A decoder-only model (GPT, GPT-2, Llama, ...) with a multiple-choice head.

    Transformers has no multiple-choice class for these models. As the multiple-choice head of
    GPT-2's double-heads model does with its classification token, each option sequence is scored
    by a new linear layer on the hidden state of its last token, which in a causal model has seen
    the whole sequence. Sequences are padded on the tokenizer's side (:func:`rcstudy.models.mc.collate`);
    positions count real tokens only, so a left-padded sequence scores as it would alone.
    """

    def __init__(self, backbone: nn.Module):
        super().__init__()
        self.backbone = backbone
        self.config = backbone.config
        self.dropout = nn.Dropout(getattr(self.config, "summary_first_dropout", 0.1))
        self.score = nn.Linear(self.config.hidden_size, 1)

    @property
    def base_model(self) -> nn.Module:
        return self.backbone

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                **_) -> transformers.modeling_outputs.MultipleChoiceModelOutput:
        B, O, L = input_ids.shape
        mask = attention_mask.view(B * O, L)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        hidden = self.backbone(input_ids=input_ids.view(B * O, L), attention_mask=mask,
                               position_ids=positions).last_hidden_state
        last_real = L - 1 - mask.flip(-1).argmax(-1)  # the last unmasked position, whichever side is padded
        last = hidden[torch.arange(B * O, device=hidden.device), last_real]
        return transformers.modeling_outputs.MultipleChoiceModelOutput(logits=self.score(self.dropout(last)).view(B, O))


def load_multiple_choice(name: str, seed: int = 0):
    """A pretrained model with a fresh multiple-choice head (``seed`` fixes the head's init).

    Encoders get Transformers' multiple-choice class; decoder-only models, which have none, get
    :class:`DecoderForMultipleChoice`.
    """
    torch.manual_seed(seed)  # the head is newly initialised (tiny models: all weights)
    if model_config(name).model_type in transformers.models.auto.modeling_auto.MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES:
        return load_auto(transformers.AutoModelForMultipleChoice, name, seed)
    backbone = load_auto(transformers.AutoModel, name, seed)
    torch.manual_seed(seed)
    return DecoderForMultipleChoice(backbone)


def load_causal_lm(name: str):
    model = load_auto(transformers.AutoModelForCausalLM, name)
    model.eval()
    return model


def load_seq2seq_lm(name: str):
    """A pretrained encoder-decoder LM (T5, Flan-T5, UnifiedQA, ...) by Hub name, in eval mode."""
    model = load_auto(transformers.AutoModelForSeq2SeqLM, name)
    model.eval()
    return model


def model_config(name: str):
    if name in TINY_MODELS:
        return _tiny_config(name, len(load_tokenizer(name)))
    return load_or_explain(lambda: transformers.AutoConfig.from_pretrained(resolve(name)), name)
