"""The fast engine paths compute what the plain paths compute, within float noise.

Plain path for the multiple-choice engine: every (segment A, segment B) pair tokenised on its
own and padded to ``max_length=256``, one question at a time, in the given order (no length
buckets). Plain path for the causal LM: one unpadded sequence per (context, continuation), the
full logits tensor, log-softmax, and the continuation tokens' log-probabilities summed.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from rcstudy import runtime
from rcstudy.data import MCItem
from rcstudy.models import loading, mc
from rcstudy.models.loading import load_multiple_choice, load_tokenizer
from rcstudy.models.lm import CausalLM

PLAIN_LENGTH = 256
WORDS = "the premise supports the conclusion only if every step of the argument is valid".split()


@pytest.fixture(scope="module")
def rt():
    return runtime.setup("cpu", threads=1, precision="fp32")  # exact comparisons: fp32 on every machine


def _text(n_words: int, shift: int = 0) -> str:
    return " ".join(WORDS[(shift + j) % len(WORDS)] for j in range(n_words))


def _items(tag: str) -> list[MCItem]:
    """Questions of very different lengths: one has 3 options, one context exceeds 256 tokens."""
    context_words = [5, 40, 12, 90, 3, 60, 25, 300, 8, 50]
    items = []
    for i, n in enumerate(context_words):
        options = tuple(f"option {k}: {_text(1 + (i + k) % 7, k)}" for k in range(3 if i == 4 else 4))
        items.append(MCItem(f"{tag}-{i}", _text(n, i), f"question {i}: which one follows?", options, i % len(options)))
    return items


def _plain_logits(model, tokenizer, items: list[MCItem], fields: str) -> list[np.ndarray]:
    out = []
    for it in items:
        pairs = mc.option_pairs(it, fields)
        seconds = [b for _, b in pairs]
        if pairs[0][0] is None:
            enc = tokenizer(seconds, truncation=True, max_length=PLAIN_LENGTH, padding="max_length",
                            return_tensors="pt")
        else:
            enc = tokenizer([a for a, _ in pairs], seconds, truncation="only_first", max_length=PLAIN_LENGTH,
                            padding="max_length", return_tensors="pt")
        with torch.no_grad():
            out.append(model(**{k: v.unsqueeze(0) for k, v in enc.items()}).logits[0].numpy())
    return out


@pytest.mark.parametrize("fields", ["CQA", "QA", "A"])
def test_predict_matches_plain_padding_to_256(rt, fields):
    items = _items(f"predict-{fields}")
    tokenizer = load_tokenizer("tiny-bert")
    model = load_multiple_choice("tiny-bert", seed=4).eval()
    cfg = mc.MCConfig(model="tiny-bert", fields=fields, eval_batch_size=3)
    fast = mc.predict(mc.TrainedMC(model, tokenizer, cfg), items, rt)
    assert fast.shape == (len(items), 4)
    for row, want in zip(fast, _plain_logits(model, tokenizer, items, fields)):
        np.testing.assert_allclose(row[: len(want)], want, rtol=1e-4, atol=1e-5)
        assert np.all(np.isneginf(row[len(want):]))  # a missing option never wins


def test_memoised_tokenisation_follows_the_text(rt):
    """An item re-built with another passage (same id, question and options) is tokenised anew."""
    tokenizer = load_tokenizer("tiny-bert")
    model = load_multiple_choice("tiny-bert", seed=4).eval()
    trained = mc.TrainedMC(model, tokenizer, mc.MCConfig(model="tiny-bert", fields="CQA"))
    first, second = _items("memo")[1], _items("memo")[3]
    mc.predict(trained, [first], rt)
    edited = MCItem(first.id, second.context, first.question, first.options, first.label)
    want = _plain_logits(model, tokenizer, [edited], "CQA")[0]
    np.testing.assert_allclose(mc.predict(trained, [edited], rt)[0], want, rtol=1e-4, atol=1e-5)


def _collate_to_256(collate):
    def padded(encoded, pad_id, n_options=None, **kwargs):
        batch = collate(encoded, pad_id, n_options, **kwargs)
        extra = PLAIN_LENGTH - batch["input_ids"].shape[-1]
        for key, value in (("input_ids", pad_id), ("attention_mask", 0), ("token_type_ids", 0)):
            batch[key] = F.pad(batch[key], (0, extra), value=value)
        return batch
    return padded


def test_training_matches_padding_to_256(rt, monkeypatch):
    """Same batches, padded to the batch's longest sequence or to 256: the same losses and weights.

    Dropout is switched off: its random masks depend on the tensor shapes, not on the arithmetic.
    """
    monkeypatch.setitem(loading.TINY_DIMS, "hidden_dropout_prob", 0.0)
    monkeypatch.setitem(loading.TINY_DIMS, "attention_probs_dropout_prob", 0.0)
    items = _items("train")
    cfg = mc.MCConfig(model="tiny-bert", fields="CQA", epochs=2, lr=1e-3, batch_size=4, warmup=0.0, seed=1)
    fast = mc.finetune(items, cfg, rt)
    monkeypatch.setattr(mc, "collate", _collate_to_256(mc.collate))
    plain = mc.finetune(items, cfg, rt)
    assert len(fast.losses) == len(plain.losses) == 6
    np.testing.assert_allclose(fast.losses, plain.losses, rtol=1e-5, atol=1e-6)
    # Adam turns float noise in near-zero gradients into steps of up to lr: compare at lr / 10.
    plain_weights = plain.model.state_dict()
    for name, value in fast.model.state_dict().items():
        torch.testing.assert_close(value, plain_weights[name], rtol=0, atol=cfg.lr / 10, msg=name)


def test_frozen_features_match_plain_mean_pooling(rt, isolated_cache):
    items = _items("features")
    tokenizer = load_tokenizer("tiny-bert")
    fast = mc.frozen_features("tiny-bert", items, "CQA", rt, batch_size=8)
    encoder = load_multiple_choice("tiny-bert").base_model.eval()
    for it, row in zip(items, fast):
        pairs = mc.option_pairs(it, "CQA")
        enc = tokenizer([a for a, _ in pairs], [b for _, b in pairs], truncation="only_first",
                        max_length=PLAIN_LENGTH, padding="max_length", return_tensors="pt")
        with torch.no_grad():
            hidden = encoder(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        want = ((hidden * mask).sum(1) / mask.sum(1)).numpy()
        np.testing.assert_allclose(row[: len(pairs)], want, rtol=1e-4, atol=1e-5)
        assert not row[len(pairs):].any()  # missing options are zero rows


@settings(max_examples=50, deadline=None)
@given(lengths=st.lists(st.integers(1, 300), max_size=120), batch_size=st.integers(1, 9),
       shuffle=st.booleans(), seed=st.integers(0, 10**6))
def test_length_batches_cover_every_item_once(lengths, batch_size, shuffle, seed):
    batches = mc.length_batches(lengths, batch_size, shuffle=shuffle, seed=seed)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(1 <= len(b) <= batch_size for b in batches)
    assert batches == mc.length_batches(lengths, batch_size, shuffle=shuffle, seed=seed)


# --- causal LM ---------------------------------------------------------------------------------

CONTEXTS = ["Passage: a b c\nQuestion: which?\nAnswer:", "Short", "", "A much longer context, " * 30,
            "ends with a space ", "Answer:"]
CONTINUATIONS = [" yes", " a longer continuation than the others", "start", " x", "word", " B"]


@pytest.fixture(scope="module")
def llama(rt):
    return CausalLM.load("tiny-llama", rt)


def _plain_loglik(lm: CausalLM, context: str, continuation: str) -> float:
    ctx, cont = lm.encode_pair(context, continuation)
    with torch.no_grad():
        logp = lm.model(input_ids=torch.tensor([ctx + cont])).logits[0].float().log_softmax(-1)
    return float(sum(logp[len(ctx) - 1 + i, t] for i, t in enumerate(cont)))


@pytest.mark.parametrize("max_length", [2048, 24])  # 24: the long pairs are cut from the left
def test_loglik_matches_a_plain_full_forward(llama, max_length):
    lm = CausalLM(llama.name, llama.model, llama.tokenizer, llama.rt, max_length)
    fast = lm.loglik(CONTEXTS, CONTINUATIONS, batch_size=4)
    want = [_plain_loglik(lm, c, x) for c, x in zip(CONTEXTS, CONTINUATIONS)]
    np.testing.assert_allclose(fast, want, rtol=1e-5, atol=1e-4)


def test_next_token_logprobs_match_a_plain_full_forward(llama):
    candidates = [" A", " B", " C", " D"]
    prompts = [c for c in CONTEXTS if c]
    fast = llama.next_token_logprobs(prompts, candidates, batch_size=3)
    first = [llama.tokenizer(c, add_special_tokens=False)["input_ids"][0] for c in candidates]
    for prompt, row in zip(prompts, fast):
        ids = llama.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logp = llama.model(input_ids=torch.tensor([ids])).logits[0, -1].float().log_softmax(-1)
        np.testing.assert_allclose(row, logp[first].numpy(), rtol=1e-5, atol=1e-4)
