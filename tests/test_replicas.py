"""Architecture replicas of the full profile's Hub models, and the replica run of every chapter's full
parameter file: the paper-scale code paths (finetune mode, cross-fitting, last-token heads, XLNet,
encoder-decoder scoring and generation, prompted LMs) on tiny random models, offline."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch
import transformers

from rcstudy import chapters, run
from rcstudy.data.records import MCItem
from rcstudy.errors import ModelUnavailable
from rcstudy.models import loading, mc, registry, replicas
from rcstudy.runtime import Runtime

from conftest import FIXTURES

CHAPTERS = ["reclor", "logiqa", "rule", "record", "metalogic"]

#: The real tokenizers' documented behaviour (their tokenizer_config.json / class defaults), one model per
#: family: class, padding side, special tokens (None: the tokenizer has none), and whether it returns
#: token type ids.
BERT_SPECIAL = dict(bos=None, eos=None, pad="[PAD]", cls="[CLS]", sep="[SEP]")
T5_SPECIAL = dict(bos=None, eos="</s>", pad="<pad>", unk="<unk>")
LLAMA_SPECIAL = dict(bos="<s>", eos="</s>", pad=None, unk="<unk>")
REAL = {
    "roberta-large": ("RobertaTokenizer", "right", dict(bos="<s>", eos="</s>", pad="<pad>", cls="<s>", sep="</s>"),
                      False),
    "xlnet-large-cased": ("XLNetTokenizer", "left", dict(bos="<s>", eos="</s>", pad="<pad>", cls="<cls>", sep="<sep>"),
                          False),
    "bert-base-uncased": ("BertTokenizer", "right", BERT_SPECIAL, True),
    "bert-large-cased": ("BertTokenizer", "right", BERT_SPECIAL, True),
    "microsoft/deberta-v3-large": ("DebertaV2Tokenizer", "right", dict(pad="[PAD]", cls="[CLS]", sep="[SEP]"), True),
    "gpt2": ("GPT2Tokenizer", "right", dict(bos="<|endoftext|>", eos="<|endoftext|>", pad=None), False),
    "openai-gpt": ("OpenAIGPTTokenizer", "right", dict(bos=None, eos=None, pad=None, unk="<unk>"), False),
    "t5-large": ("T5Tokenizer", "right", T5_SPECIAL, False),
    "google/flan-t5-xxl": ("T5Tokenizer", "right", T5_SPECIAL, False),
    "Qwen/Qwen2.5-7B": ("Qwen2Tokenizer", "right", dict(bos=None, eos="<|endoftext|>", pad="<|endoftext|>"), False),
    "meta-llama/Llama-2-7b-hf": ("LlamaTokenizer", "right", LLAMA_SPECIAL, False),
    "mistralai/Mistral-7B-v0.1": (None, "left", LLAMA_SPECIAL, False),  # Transformers picks its class by model type
}
#: The configuration and checkpoint classes of each family's Hub models.
REAL_CLASSES = {
    "roberta-large": ("RobertaConfig", "RobertaForMaskedLM"),
    "xlnet-large-cased": ("XLNetConfig", "XLNetLMHeadModel"),
    "bert-base-uncased": ("BertConfig", "BertForPreTraining"), "bert-large-cased": ("BertConfig", "BertForPreTraining"),
    "microsoft/deberta-v3-large": ("DebertaV2Config", "DebertaV2ForMaskedLM"),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel"),
    "openai-gpt": ("OpenAIGPTConfig", "OpenAIGPTLMHeadModel"), "t5-large": ("T5Config", "T5ForConditionalGeneration"),
    "google/flan-t5-xxl": ("T5Config", "T5ForConditionalGeneration"),
    "Qwen/Qwen2.5-7B": ("Qwen2Config", "Qwen2ForCausalLM"),
    "meta-llama/Llama-2-7b-hf": ("LlamaConfig", "LlamaForCausalLM"),
    "mistralai/Mistral-7B-v0.1": ("MistralConfig", "MistralForCausalLM"),
}


@pytest.fixture(scope="session")
def replica_root(tmp_path_factory):
    """Every replica the tests and the full profiles need, built once (a few seconds)."""
    root = tmp_path_factory.mktemp("replicas")
    names = set(REAL) | {m for c in CHAPTERS for m in chapters.full_profile_hub_models(c)}
    replicas.build_replicas(root, sorted(names), replicas.fixture_texts(FIXTURES / "data"))
    return root


@pytest.fixture
def use_replicas(replica_root, monkeypatch):
    monkeypatch.setenv("RCSTUDY_REPLICAS", str(replica_root))
    return replica_root


@pytest.fixture(scope="module")
def rt():
    return Runtime(torch.device("cpu"), threads=1)  # fp32: exact comparisons on every machine


@pytest.mark.parametrize("name", sorted(REAL))
def test_replica_has_the_real_tokenizer_behaviour(use_replicas, name):
    cls, side, special, type_ids = REAL[name]
    tok = transformers.AutoTokenizer.from_pretrained(registry.resolve(name))
    if cls is not None:
        assert type(tok).__name__ == cls
    assert tok.padding_side == side
    for role, token in special.items():
        assert getattr(tok, f"{role}_token") == token, role
    assert ("token_type_ids" in tok("a b", "c d")) == type_ids


@pytest.mark.parametrize("name", sorted(REAL_CLASSES))
def test_replica_has_the_real_config_and_checkpoint_classes(use_replicas, name):
    config_cls, model_cls = REAL_CLASSES[name]
    config = transformers.AutoConfig.from_pretrained(registry.resolve(name))
    assert type(config).__name__ == config_cls
    assert config.architectures == [model_cls]


def test_special_token_layout_of_pairs(use_replicas):
    """XLNet puts <sep> and <cls> at the end; T5 closes each segment with </s> and has no BOS."""
    xlnet = transformers.AutoTokenizer.from_pretrained(registry.resolve("xlnet-base-cased"))
    assert xlnet.convert_ids_to_tokens(xlnet("a b", "c d")["input_ids"])[-2:] == ["<sep>", "<cls>"]
    t5 = transformers.AutoTokenizer.from_pretrained(registry.resolve("t5-large"))
    ids = t5("a b")["input_ids"]
    assert ids[-1] == t5.eos_token_id and t5.convert_ids_to_tokens(ids[0]) != "<s>"
    llama = transformers.AutoTokenizer.from_pretrained(registry.resolve("meta-llama/Llama-2-7b-hf"))
    assert llama("a b")["input_ids"][0] == llama.bos_token_id


def test_pinned_and_unpinned_names_share_a_replica(use_replicas):
    assert registry.resolve("roberta-base@e2da8e2f811d1448a5b465c236feacd80ffbac7b") == registry.resolve("roberta-base")


def test_a_hub_id_without_replica_fails_fast(use_replicas):
    with pytest.raises(ModelUnavailable, match="no architecture replica"):
        registry.resolve("roberta-xxl@abc")
    with pytest.raises(ValueError, match="no architecture replica"):
        replicas.family_of("facebook/opt-125m")


def _dotted(values: dict, prefix: str = ""):
    for key, value in values.items():
        yield from _dotted(value, f"{prefix}{key}.") if isinstance(value, dict) else [(prefix + key, value)]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_replica_overrides_change_sizes_and_offline_models_only(chapter):
    """Modes, methods, folds, prompt settings and Hub models of the full profile stay as they are; an
    offline model becomes its tiny twin."""
    from rcstudy.config import as_dict, nest

    overrides = dict(_dotted(nest(chapters.replica_overrides(chapter))))
    sizes = {name for name, _ in _dotted(chapters.replica_sizes(chapter))}
    assert not {n.rsplit(".", 1)[-1] for n in sizes} & {
        "model", "models", "main_models", "mode", "option_only_mode", "methods", "folds", "settings", "ablations",
        "optimizer", "shots"}
    cls = chapters.config_class(chapter)
    full = dict(_dotted(as_dict(cls.load("full"))))
    replica = dict(_dotted(as_dict(cls.load("full", chapters.replica_overrides(chapter)))))
    for name in {k for k in full if full[k] != replica[k]} - sizes:
        assert replica[name] == chapters.OFFLINE_REPLICAS[full[name]], name
    offline = {k for k, v in full.items() if isinstance(v, str) and v in chapters.OFFLINE_REPLICAS}
    assert set(overrides) - sizes <= offline


def test_an_override_back_to_a_default_reaches_the_notebook():
    """The full profile sets ReClor's epochs to null (Table 9's); -p encoder.finetune.epochs=1 (the
    default) must still be injected, or the kernel reloads the profile and trains Table 9's epochs."""
    params = run.load_params("reclor", "full", {"encoder.finetune.epochs": 1.0, "bilstm.epochs": 1})
    assert params["encoder"]["finetune"]["epochs"] == 1.0
    assert params["bilstm"]["epochs"] == 1


def test_gpt_without_pad_or_eos_token_pads_with_unk(use_replicas):
    tok = loading.load_tokenizer("openai-gpt@b3ab1942f7090e287d001cec22331dfc2764acf0")
    assert tok.eos_token is None and tok.pad_token == tok.unk_token == "<unk>"


def _item(i: int, context: str) -> MCItem:
    return MCItem(f"q{i}", context, "Which one follows?", ("the first", "the second", "a third option", "none"), 0)


@pytest.mark.parametrize("name", ["xlnet-base-cased", "mistralai/Mistral-7B-v0.1", "gpt2"])
def test_multiple_choice_logits_do_not_depend_on_padding(use_replicas, rt, name):
    """A short question scores the same alone and batched with a long one: XLNet's head reads the last
    position (left padding keeps <cls> there), a decoder's head reads its last real token."""
    model = loading.load_multiple_choice(name, seed=0).eval()
    trained = mc.TrainedMC(model, loading.load_tokenizer(name), mc.MCConfig(model=name, fields="CQA", max_length=128))
    short, long = _item(1, "Birds fly."), _item(2, " ".join(["Every argument here has a premise."] * 8))
    alone = mc.predict(trained, [short], rt)[0]
    batched = mc.predict(trained, [short, long], rt)[0]
    np.testing.assert_allclose(batched, alone, rtol=1e-4, atol=1e-5)


def test_xlnet_reads_its_segment_ids(use_replicas, rt, monkeypatch):
    """XLNet's pair segments (0, 1, and 2 for <cls>) reach the model; RoBERTa's single type does not."""
    seen = {}
    for name in ("xlnet-base-cased", "roberta-base"):
        model = loading.load_multiple_choice(name, seed=0).eval()
        forward = model.forward

        def spy(input_ids=None, attention_mask=None, token_type_ids=None, name=name, forward=forward):
            seen[name] = token_type_ids
            kwargs = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
            return forward(input_ids=input_ids, attention_mask=attention_mask, **kwargs)

        monkeypatch.setattr(model, "forward", spy)
        trained = mc.TrainedMC(model, loading.load_tokenizer(name), mc.MCConfig(model=name, fields="CQA"))
        mc.predict(trained, [_item(1, "Birds fly.")], rt)
    types = seen["xlnet-base-cased"][0, 0].tolist()
    assert types[-1] == 2 and 1 in types and types[0] == 0
    assert seen["roberta-base"] is None


def test_collate_pads_on_the_left_when_asked():
    batch = mc.collate([[{"input_ids": [5, 6]}], [{"input_ids": [7, 8, 9]}]], pad_id=0, padding_side="left")
    assert batch["input_ids"][0, 0].tolist() == [0, 5, 6]
    assert batch["attention_mask"][0, 0].tolist() == [0, 1, 1]


# --- the replica run of every chapter's full parameter file --------------------------------------

@pytest.fixture(scope="module")
def replica_book(tmp_path_factory, replica_root):
    """One book for the replica runs of the full profile: ``run_chapter(chapter)`` runs a chapter once,
    after the chapters whose exports it reads (RULE reads ReClor's), and returns its result."""
    root = tmp_path_factory.mktemp("replica-book")
    results: dict[str, run.ChapterResult] = {}

    def run_chapter(chapter: str) -> run.ChapterResult:
        if chapter not in results:
            reads = run.chapter_dependencies(chapter).get("reads", [])
            for upstream in [] if reads == "all" else reads:
                run_chapter(upstream)
            saved = dict(os.environ)  # the runner sets environment variables for its kernels
            os.environ.update(RCSTUDY_DATA=str(FIXTURES / "data"), RCSTUDY_CACHE=str(root / "cache"),
                              RCSTUDY_REPLICAS=str(replica_root), RCSTUDY_PROGRESS="off")
            try:
                [results[chapter]] = run.run_chapters([chapter], "full", chapters.replica_overrides(chapter),
                                                      root=root)
            finally:
                os.environ.clear()
                os.environ.update(saved)
        return results[chapter]

    return root, run_chapter


@pytest.mark.slow
@pytest.mark.xdist_group("replica_book")  # one worker builds the one book
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_replica_run_of_the_full_profile(chapter, replica_book):
    root, run_chapter = replica_book
    result = run_chapter(chapter)
    assert result.ok, result.message
    nb = json.loads((root / "book" / f"{chapter}.ipynb").read_text())
    assert nb["metadata"]["papermill"]["parameters"]["profile"] == "full"


#: One model per family of the full profiles at full size, and the stack counts plan.py's table records.
FULL_SIZE = ["roberta-large", "bert-base-uncased", "xlnet-large-cased", "microsoft/deberta-v3-large", "gpt2-large",
             "t5-large", "allenai/unifiedqa-v2-t5-3b-1363200", "google/flan-t5-xxl", "meta-llama/Llama-2-7b-hf",
             "mistralai/Mistral-7B-v0.1", "Qwen/Qwen2.5-7B"]


@pytest.mark.parametrize("name", FULL_SIZE)
def test_a_full_size_replica_has_the_parameters_of_the_plan(name):
    """Built on the meta device (no memory), a full-size replica's matmuls have the parameter counts
    of plan.py's table within 2% (encoder, decoder and cross-attention apart for T5)."""
    from rcstudy import plan

    model = replicas.build_full_replica(name)
    assert all(p.device.type == "meta" for p in model.parameters())
    assert type(model).__name__ == replicas.FAMILIES[replicas.family_of(name)].model
    counted, size = replicas.block_matmul_params(model), plan.model_size(name)
    if size.encoder_decoder:
        assert counted["encoder"] == pytest.approx(size.encoder, rel=0.02)
        assert counted["decoder"] == pytest.approx(size.decoder, rel=0.02)
        assert counted["cross_kv"] == pytest.approx(size.cross_kv, rel=0.02)
    else:
        assert counted["all"] == pytest.approx(size.params, rel=0.02)


def test_a_full_size_replica_can_take_another_head():
    """The fine-tuning benchmark builds roberta-large with its multiple-choice head."""
    model = replicas.build_full_replica("roberta-large@722cf37b1afa9454edce342e7895e588b6ff1d59",
                                        model_class="RobertaForMultipleChoice")
    assert model.config.hidden_size == 1024 and model.config.vocab_size == 50265
    assert sum(p.numel() for p in model.parameters()) == pytest.approx(355e6, rel=0.01)  # roberta-large's published 355M
    with pytest.raises(ValueError, match="no full-size dimensions"):
        replicas.full_config("bert-large-uncased-whole-word-masking")
