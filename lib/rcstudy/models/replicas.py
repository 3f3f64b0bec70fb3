"""Architecture replicas: tiny random stand-ins for the full profile's Hub models, built offline.

The full profile names paper-scale models by Hub id (``roberta-large@<sha>``, ``xlnet-large-cased``,
``t5-large``, ...), which no offline machine can load. A replica has the same configuration class,
the same pretraining model class (what the Hub checkpoint holds) and a tokenizer of the same class
with the same special tokens, padding side and token-type behaviour, but a few layers of width 32,
random weights, and a vocabulary trained (with ``tokenizers``) on the test fixtures' text. So the
engines' architecture-dependent paths (XLNet's left padding and last-token summary, GPT's missing
pad token, token type ids, encoder-decoder scoring and generation) run as they would on a GPU.

``build_replicas(directory, names)`` writes one folder per Hub id; with ``RCSTUDY_REPLICAS`` set to
that directory the registry resolves every Hub id to its replica (:func:`.registry.hub_snapshot`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import string
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import torch
import transformers
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

from .registry import replica_dir

#: Every printable ASCII character is in each replica's vocabulary, as in the real ones, whatever the
#: fixtures hold (MetaLogic's targets use ``$`` and ``|``); byte-level and byte-fallback models have all bytes.
ALPHABET = sorted(set(string.printable) - set(string.whitespace))
DIMS = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
VOCAB_SIZE = 2000  # or what the fixtures support: long enough pieces keep sequences short


@dataclass(frozen=True)
class Family:
    """How a model family's replica is made: its config class (with the tiny sizes), the
    pretraining class its Hub checkpoints hold, its tokenizer class and how the vocabulary is trained."""

    config: str
    model: str
    tokenizer: str
    vocab: str  # "wordpiece", "byte-bpe", "gpt-bpe", "unigram", "spm-bpe"
    dims: dict = field(default_factory=dict)  # the tiny sizes, in the config class's own names
    tokenizer_kwargs: dict = field(default_factory=dict)
    special: tuple[str, ...] = ()  # the first entries of the vocabulary, in the real one's order


BERT = dict(vocab="wordpiece", dims=DIMS, special=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"))
ROBERTA_SPECIAL = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
T5 = dict(config="T5Config", model="T5ForConditionalGeneration", tokenizer="T5Tokenizer", vocab="unigram",
          special=("<pad>", "</s>", "<unk>"))
T5_DIMS = dict(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=2)
LLAMA = dict(model="LlamaForCausalLM", tokenizer="LlamaTokenizer", vocab="spm-bpe", special=("<unk>", "<s>", "</s>"))
#: Qwen2.5's tokenizers carry a ChatML template (the real one adds a default system turn).
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")

FAMILIES = {
    "bert-uncased": Family("BertConfig", "BertForPreTraining", "BertTokenizer", **BERT),
    "bert-cased": Family("BertConfig", "BertForPreTraining", "BertTokenizer", **BERT,
                         tokenizer_kwargs=dict(do_lower_case=False)),
    "roberta": Family("RobertaConfig", "RobertaForMaskedLM", "RobertaTokenizer", "byte-bpe",
                      dims=dict(DIMS, max_position_embeddings=514, type_vocab_size=1), special=ROBERTA_SPECIAL),
    "xlnet": Family("XLNetConfig", "XLNetLMHeadModel", "XLNetTokenizer", "unigram",
                    dims=dict(d_model=32, n_layer=2, n_head=2, d_inner=64),
                    special=("<unk>", "<s>", "</s>", "<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>")),
    "deberta-v3": Family("DebertaV2Config", "DebertaV2ForMaskedLM", "DebertaV2Tokenizer", "unigram",
                         dims=dict(DIMS, relative_attention=True, position_buckets=256, norm_rel_ebd="layer_norm",
                                   share_att_key=True, pos_att_type=["p2c", "c2p"], max_relative_positions=-1,
                                   position_biased_input=False, type_vocab_size=0),
                         special=("[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]")),
    "gpt2": Family("GPT2Config", "GPT2LMHeadModel", "GPT2Tokenizer", "byte-bpe",
                   dims=dict(n_embd=32, n_layer=2, n_head=2, n_positions=1024), special=("<|endoftext|>",)),
    "openai-gpt": Family("OpenAIGPTConfig", "OpenAIGPTLMHeadModel", "OpenAIGPTTokenizer", "gpt-bpe",
                         dims=dict(n_embd=32, n_layer=2, n_head=2, n_positions=512), special=("<unk>",)),
    "t5": Family(**T5, dims=T5_DIMS),
    "flan-t5": Family(**T5, dims=dict(T5_DIMS, feed_forward_proj="gated-gelu", tie_word_embeddings=False)),
    "qwen2": Family("Qwen2Config", "Qwen2ForCausalLM", "Qwen2Tokenizer", "byte-bpe",
                    dims=dict(DIMS, num_key_value_heads=1, max_position_embeddings=4096, tie_word_embeddings=False),
                    special=("<|endoftext|>", "<|im_start|>", "<|im_end|>"),
                    tokenizer_kwargs=dict(chat_template=CHATML)),
    "llama-2": Family("LlamaConfig", **LLAMA, dims=dict(DIMS, num_key_value_heads=2, max_position_embeddings=4096),
                      tokenizer_kwargs=dict(add_bos_token=True, padding_side="right")),
    "mistral": Family("MistralConfig", "MistralForCausalLM", "LlamaTokenizer", "spm-bpe",
                      dims=dict(DIMS, num_key_value_heads=1, max_position_embeddings=4096, sliding_window=4096),
                      special=LLAMA["special"], tokenizer_kwargs=dict(add_bos_token=True, padding_side="left")),
}

#: Which family a Hub id belongs to: the first pattern found in its name (without the revision).
FAMILY_PATTERNS = [
    (r"deberta-v3", "deberta-v3"), (r"roberta", "roberta"), (r"xlnet", "xlnet"), (r"bert-.*-cased", "bert-cased"),
    (r"bert-", "bert-uncased"), (r"openai-gpt", "openai-gpt"), (r"gpt2", "gpt2"), (r"flan-t5", "flan-t5"),
    (r"(^|/)t5-|unifiedqa", "t5"), (r"qwen2", "qwen2"), (r"llama-2|vicuna", "llama-2"), (r"mistral", "mistral"),
]


def family_of(name: str) -> str:
    """The replica family of a Hub id (pinned or not); ValueError naming the known families otherwise."""
    repo = name.partition("@")[0]
    for pattern, family in FAMILY_PATTERNS:
        if re.search(pattern, repo, re.IGNORECASE):
            return family
    raise ValueError(f"model {name!r} has no architecture replica; replicas exist for {', '.join(FAMILIES)}")


# --- tokenizers ------------------------------------------------------------------------------

def _trained(model, pre_tokenizer, trainer, texts: Iterable[str], normalizer=None) -> Tokenizer:
    tok = Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizer
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.train_from_iterator(texts, trainer)
    return tok


def _vocab_and_merges(tok: Tokenizer) -> tuple[dict[str, int], list[tuple[str, str]]]:
    model = json.loads(tok.to_str())["model"]
    return model["vocab"], [tuple(m.split(" ") if isinstance(m, str) else m) for m in model["merges"]]


def train_tokenizer(family: Family, texts: list[str]):
    """A tokenizer of ``family``'s class whose vocabulary is trained on ``texts``."""
    cls = getattr(transformers, family.tokenizer)
    special = list(family.special)
    if family.vocab == "wordpiece":
        lower = family.tokenizer_kwargs.get("do_lower_case", True)
        tok = _trained(models.WordPiece(unk_token="[UNK]"), pre_tokenizers.BertPreTokenizer(),
                       trainers.WordPieceTrainer(vocab_size=VOCAB_SIZE, special_tokens=special,
                                                 initial_alphabet=ALPHABET), texts,
                       normalizers.BertNormalizer(lowercase=lower))
        return cls(vocab=tok.get_vocab(), **family.tokenizer_kwargs)
    if family.vocab == "byte-bpe":
        tok = _trained(models.BPE(), pre_tokenizers.ByteLevel(add_prefix_space=False),
                       trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=special,
                                           initial_alphabet=pre_tokenizers.ByteLevel.alphabet()), texts)
        vocab, merges = _vocab_and_merges(tok)
        return cls(vocab=vocab, merges=merges, **family.tokenizer_kwargs)
    if family.vocab == "gpt-bpe":
        tok = _trained(models.BPE(unk_token="<unk>", end_of_word_suffix="</w>"), pre_tokenizers.BertPreTokenizer(),
                       trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=special, end_of_word_suffix="</w>",
                                           initial_alphabet=ALPHABET),
                       texts, normalizers.BertNormalizer(lowercase=True))
        vocab, merges = _vocab_and_merges(tok)
        return cls(vocab=vocab, merges=merges, **family.tokenizer_kwargs)
    if family.vocab == "unigram":  # SentencePiece unigram (XLNet, T5 with its 100 sentinels, DeBERTa-v3)
        unk = "<unk>" if "<unk>" in special else "[UNK]"
        tok = _trained(models.Unigram(), pre_tokenizers.Metaspace(),
                       trainers.UnigramTrainer(vocab_size=VOCAB_SIZE, special_tokens=special, initial_alphabet=ALPHABET,
                                               unk_token=unk), texts)
        pieces = [tuple(p) for p in json.loads(tok.to_str())["model"]["vocab"]]
        kwargs = dict(family.tokenizer_kwargs)
        if family.tokenizer != "T5Tokenizer":  # T5's unknown piece is found by name
            kwargs["unk_id"] = [p for p, _ in pieces].index(unk)
        return cls(vocab=pieces, **kwargs)
    if family.vocab == "spm-bpe":  # SentencePiece BPE with byte fallback (Llama, Mistral)
        byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
        tok = _trained(models.BPE(unk_token="<unk>", byte_fallback=True), pre_tokenizers.Metaspace(),
                       trainers.BpeTrainer(vocab_size=VOCAB_SIZE + 256, special_tokens=special + byte_tokens), texts)
        vocab, merges = _vocab_and_merges(tok)
        return cls(vocab=vocab, merges=merges, **family.tokenizer_kwargs)
    raise ValueError(f"unknown vocabulary kind {family.vocab!r}")


# --- models ----------------------------------------------------------------------------------

def tiny_config(family: Family, tokenizer):
    """``family``'s configuration class with the tiny sizes and the tokenizer's special token ids."""
    cls = getattr(transformers, family.config)
    ids = {k: getattr(tokenizer, f"{k}_id") for k in ("pad_token", "bos_token", "eos_token")}
    ids = {f"{k}_id": v for k, v in ids.items() if v is not None}
    if family.config == "T5Config":
        ids["decoder_start_token_id"] = tokenizer.pad_token_id
    return cls(vocab_size=len(tokenizer), **family.dims, **ids)


def build_replica(name: str, target: Path, texts: list[str], seed: int = 0) -> Path:
    """Write the replica of Hub id ``name`` into ``target`` (a ``save_pretrained`` folder)."""
    family = FAMILIES[family_of(name)]
    tokenizer = train_tokenizer(family, texts)
    config = tiny_config(family, tokenizer)
    torch.manual_seed(seed)
    model = getattr(transformers, family.model)(config)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    try:  # complete or absent: a half-written folder would pass for a replica
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def fixture_texts(data_dir: Path) -> list[str]:
    """Every line of text under ``data_dir`` (the test fixtures): the corpus replica vocabularies learn."""
    return [line for path in sorted(Path(data_dir).rglob("*")) if path.is_file()
            for line in path.read_text(encoding="utf-8", errors="ignore").splitlines() if line.strip()]


def build_replicas(directory: Path, names: Iterable[str], texts: list[str]) -> dict[str, Path]:
    """The replica of every Hub id in ``names`` under ``directory``, each built once (reused after)."""
    out = {}
    for name in names:
        target = replica_dir(directory, name)
        if not (target / "config.json").is_file():
            build_replica(name, target, texts)
        out[name] = target
    return out


# --- full-size replicas: the Hub configurations' dimensions, random weights ----------------------

#: The dimensions of each full-profile Hub model's config.json (as :mod:`rcstudy.plan`'s table of
#: sizes records them), in its configuration class's own names; the vocabulary is the real one's
#: size, so the embeddings and output head have their real shapes (a replica's small tokenizer
#: only uses the first few thousand rows).
_BERT_LARGE = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
_BERT_BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)
_ROBERTA = dict(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1, bos_token_id=0,
                eos_token_id=2)
_T5 = dict(vocab_size=32128, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
_LLAMA_7B = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=4096, rms_norm_eps=1e-5,
                 bos_token_id=1, eos_token_id=2)
FULL_DIMS: dict[str, dict] = {
    "bert-base-uncased": dict(_BERT_BASE, vocab_size=30522),
    "bert-large-uncased": dict(_BERT_LARGE, vocab_size=30522),
    "bert-large-cased": dict(_BERT_LARGE, vocab_size=28996),
    "roberta-base": dict(_BERT_BASE, **_ROBERTA),
    "roberta-large": dict(_BERT_LARGE, **_ROBERTA),
    "xlnet-base-cased": dict(vocab_size=32000, d_model=768, n_layer=12, n_head=12, d_inner=3072),
    "xlnet-large-cased": dict(vocab_size=32000, d_model=1024, n_layer=24, n_head=16, d_inner=4096),
    "microsoft/deberta-v3-large": dict(_BERT_LARGE, vocab_size=128100, relative_attention=True, position_buckets=256,
                                       norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"],
                                       max_relative_positions=-1, position_biased_input=False, type_vocab_size=0),
    "gpt2": dict(vocab_size=50257, n_embd=768, n_layer=12, n_head=12, n_positions=1024),
    "gpt2-large": dict(vocab_size=50257, n_embd=1280, n_layer=36, n_head=20, n_positions=1024),
    "openai-gpt": dict(vocab_size=40478, n_embd=768, n_layer=12, n_head=12, n_positions=512),
    "t5-large": dict(_T5, d_model=1024, d_kv=64, d_ff=4096, num_layers=24, num_decoder_layers=24, num_heads=16),
    "allenai/unifiedqa-v2-t5-base-1363200": dict(_T5, d_model=768, d_kv=64, d_ff=3072, num_layers=12,
                                                 num_decoder_layers=12, num_heads=12),
    "allenai/unifiedqa-v2-t5-large-1363200": dict(_T5, d_model=1024, d_kv=64, d_ff=4096, num_layers=24,
                                                  num_decoder_layers=24, num_heads=16),
    "allenai/unifiedqa-v2-t5-3b-1363200": dict(_T5, d_model=1024, d_kv=128, d_ff=16384, num_layers=24,
                                               num_decoder_layers=24, num_heads=32),
    "google/flan-t5-xxl": dict(_T5, d_model=4096, d_kv=64, d_ff=10240, num_layers=24, num_decoder_layers=24,
                               num_heads=64, feed_forward_proj="gated-gelu", tie_word_embeddings=False),
    "meta-llama/Llama-2-7b-hf": _LLAMA_7B,
    "lmsys/vicuna-7b-v1.5": _LLAMA_7B,
    "meta-llama/Llama-2-13b-hf": dict(_LLAMA_7B, hidden_size=5120, intermediate_size=13824, num_hidden_layers=40,
                                      num_attention_heads=40, num_key_value_heads=40),
    "mistralai/Mistral-7B-v0.1": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                                      num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=32768,
                                      sliding_window=4096, bos_token_id=1, eos_token_id=2),
    "Qwen/Qwen2.5-7B": dict(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=28,
                            num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=131072,
                            tie_word_embeddings=False, bos_token_id=151643, eos_token_id=151643),
}


def full_config(name: str):
    """The configuration of Hub id ``name`` (pinned or not) at its full size: its family's config
    class with :data:`FULL_DIMS`; ValueError for a model with no recorded dimensions."""
    repo = name.partition("@")[0]
    if repo not in FULL_DIMS:
        raise ValueError(f"no full-size dimensions recorded for {name!r}; known: {', '.join(FULL_DIMS)}")
    family = FAMILIES[family_of(repo)]
    dims = {k: v for k, v in family.dims.items() if k not in _SIZE_KEYS}  # the family's other settings
    return getattr(transformers, family.config)(**{**dims, **FULL_DIMS[repo]})


#: The tiny replicas' size settings, which a full-size configuration replaces.
_SIZE_KEYS = {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "num_key_value_heads",
              "d_model", "d_kv", "d_ff", "num_layers", "num_decoder_layers", "num_heads", "n_layer", "n_head",
              "d_inner", "n_embd", "n_positions", "max_position_embeddings"}


def build_full_replica(name: str, device: str | torch.device = "meta", *, model_class: str | None = None,
                       dtype: torch.dtype | None = None, seed: int = 0):
    """A full-size random-weight model of Hub id ``name``'s architecture (its checkpoint class, or
    ``model_class``, e.g. ``"RobertaForMultipleChoice"``) built directly on ``device``: on
    ``"meta"`` no memory is allocated (parameter counts and shapes only), on ``"cuda"`` the weights
    are drawn there, in ``dtype`` (None: torch's default, fp32, as the engines hold weights)."""
    family = FAMILIES[family_of(name)]
    config = full_config(name)
    torch.manual_seed(seed)
    previous = torch.get_default_dtype()
    try:
        if dtype is not None:
            torch.set_default_dtype(dtype)
        with torch.device(device):
            model = getattr(transformers, model_class or family.model)(config)
        return model.to(device)  # XLNet makes its attention's tensors with torch.FloatTensor, on the CPU
    finally:
        torch.set_default_dtype(previous)


def block_matmul_params(model) -> dict[str, int]:
    """Parameters of the matmuls inside a model's numbered blocks (attention projections and
    feed-forward layers: what :mod:`rcstudy.plan` counts as N), by stack: ``"encoder"`` and
    ``"decoder"`` (the decoder's cross-attention key and value projections apart, as
    ``"cross_kv"``) for an encoder-decoder model, ``"all"`` otherwise. Embeddings, norms, poolers
    and output heads are not counted."""
    from transformers.pytorch_utils import Conv1D

    out: dict[str, int] = {}
    for qualified, module in model.named_modules():
        if not re.search(r"\.\d+\.", f".{qualified}."):
            continue
        if isinstance(module, (torch.nn.Linear, Conv1D)):
            n = module.weight.numel()
        else:  # XLNet holds its attention's query, key, value and output projections as bare tensors
            n = sum(p.numel() for name, p in module.named_parameters(recurse=False) if name in ("q", "k", "v", "o"))
            if not n:
                continue
        if qualified.startswith("encoder."):
            stack = "encoder"
        elif qualified.startswith("decoder."):
            stack = "cross_kv" if re.search(r"EncDecAttention\.[kv]$", qualified) else "decoder"
        else:
            stack = "all"
        out[stack] = out.get(stack, 0) + n
    return out
