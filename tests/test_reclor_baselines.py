"""The fastText-style n-gram classifier and the from-scratch Bi-LSTM on tiny, learnable data."""

import numpy as np
import pytest
import torch

from rcstudy.baselines import bilstm, ngram
from rcstudy.bias import correct
from rcstudy.data import MCItem
from rcstudy.prompts import reclor as prompts


def cue_items(n, seed, prefix="x"):
    """The right option always contains "thereby"; wrong ones never do."""
    rng = np.random.default_rng(seed)
    fillers = ["the weather was warm", "prices rose", "few records were kept", "a rival closed", "the staff left"]
    items = []
    for i in range(n):
        label = int(rng.integers(4))
        opts = [fillers[int(k)] for k in rng.choice(len(fillers), 4, replace=False)]
        opts[label] = "the change thereby " + opts[label]
        items.append(MCItem(f"{prefix}_{i}", "Some context here.", "Which is right?", tuple(opts), label))
    return items


TRAIN, VAL = cue_items(48, 0), cue_items(16, 1, "v")


def test_ngram_tokens_and_ngrams():
    assert ngram.tokens("A b.  c") == ["A", "b.", "c", ngram.EOS]
    assert ngram.ngrams(["a", "b", "c"], 2) == [("a",), ("b",), ("c",), ("a", "b"), ("b", "c")]


BACKENDS = ["numpy", pytest.param("fasttext", marks=pytest.mark.skipif(
    ngram.default_backend() != "fasttext", reason="the fasttext binding is not installed here"))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_ngram_classifier_learns_a_cue_word_and_is_seeded(backend):
    cfg = ngram.NgramConfig(fields="A", dim=16, epochs=20, seed=3, backend=backend)
    out = ngram.fit_predict_mc(TRAIN, {"val": VAL}, cfg)
    assert out["val"].shape == (16, 4)
    assert correct(out["val"], VAL).mean() == 1.0
    again = ngram.fit_predict_mc(TRAIN, {"val": VAL}, cfg)
    np.testing.assert_array_equal(out["val"], again["val"])
    other = ngram.fit_predict_mc(TRAIN, {"val": VAL}, ngram.NgramConfig(fields="A", dim=16, epochs=20, seed=4,
                                                                        backend=backend))
    assert not np.array_equal(out["val"], other["val"])


def noisy_cue_items(n, seed, prefix):
    """Like :func:`cue_items`, but the cue marks the right option only 60% of the time (and a
    random option otherwise): a learnable, noisy signal, so accuracy sits well inside (0, 1)."""
    rng = np.random.default_rng(seed)
    items = []
    for it in cue_items(n, seed, prefix):
        if rng.random() < 0.4:
            opts = [o.replace("the change thereby ", "") for o in it.options]
            k = int(rng.integers(4))
            opts[k] = "the change thereby " + opts[k]
            it = MCItem(it.id, it.context, it.question, tuple(opts), it.label)
        items.append(it)
    return items


@pytest.mark.skipif(ngram.default_backend() != "fasttext", reason="the fasttext binding is not installed here")
def test_numpy_fallback_agrees_with_the_fasttext_binding_within_noise():
    train, val = noisy_cue_items(400, 5, "t"), noisy_cue_items(200, 6, "v")
    acc = {b: np.mean([correct(ngram.fit_predict_mc(train, {"val": val}, ngram.NgramConfig(
        fields="A", dim=16, epochs=5, seed=s, backend=b))["val"], val).mean() for s in range(3)])
        for b in ("numpy", "fasttext")}
    # Binomial sd of one accuracy on 200 items is about 3.5 points: the two must agree within noise.
    assert 0.5 < acc["numpy"] < 0.85 and abs(acc["numpy"] - acc["fasttext"]) < 0.07, acc


def test_ngram_repeated_words_weigh_by_count():
    clf = ngram.NgramClassifier(ngram.NgramConfig(dim=4, epochs=1)).fit(["a a b", "c"], [1, 0])
    ids = clf._features("a a b")
    assert sorted(clf.rows[g] for g in [("a",), ("a",), ("b",), (ngram.EOS,)]) == sorted(ids.tolist())
    # Unseen words are ignored: such a line reads as its end-of-line token alone.
    np.testing.assert_allclose(clf.predict_proba(["zzz yyy"]), clf.predict_proba([""]))


def test_ngram_min_count_drops_rare_words_but_keeps_ngrams():
    clf = ngram.NgramClassifier(ngram.NgramConfig(dim=4, epochs=1, min_count=2, word_ngrams=2))
    clf.fit(["a b", "a c"], [1, 0])
    assert ("a",) in clf.rows and ("b",) not in clf.rows and ("a", "b") in clf.rows


def test_fasttext_line_joins_the_chosen_fields():
    it = MCItem("i", "Ctx.", "Q?", ("o1", "o2", "o3", "o4"), 0)
    assert prompts.fasttext_line(it, 1, "A") == "o2"
    assert prompts.fasttext_line(it, 1, "QA") == "Q? o2"
    assert prompts.fasttext_line(it, 1, "CQA") == "Ctx. Q? o2"


def test_bilstm_truncates_the_context_not_the_option():
    vocab = bilstm.Vocab.build(["w" + str(i) for i in range(20)] + ["ctx", "q", "opt"])
    cfg = bilstm.BiLSTMConfig(fields="CQA", max_len=5)
    it = MCItem("i", "ctx " * 10, "q", ("opt", "opt", "opt", "opt"), 0)
    seq = bilstm.OptionBatcher(vocab, cfg).encode(it)[0]
    assert len(seq) == 5 and seq[-2:] == vocab.encode("q opt")


def test_bilstm_loss_falls_and_same_seed_same_result():
    torch.set_num_threads(1)
    cfg = bilstm.BiLSTMConfig(fields="A", emb_dim=16, hidden=8, epochs=15, lr=0.01, batch_size=8, seed=2)
    out = bilstm.fit_predict_mc(TRAIN, {"val": VAL}, cfg)
    losses = out["losses"]
    steps = len(TRAIN) // cfg.batch_size
    assert losses[-steps:].mean() < losses[:steps].mean() - 0.3
    assert correct(out["val"], VAL).mean() >= 0.75
    again = bilstm.fit_predict_mc(TRAIN, {"val": VAL}, cfg)
    np.testing.assert_allclose(out["val"], again["val"], rtol=1e-5)


def test_bilstm_masks_missing_options():
    cfg = bilstm.BiLSTMConfig(fields="A", emb_dim=8, hidden=4, epochs=1, batch_size=4)
    three = MCItem("t", "c", "q", ("a", "b", "c"), 0)
    out = bilstm.fit_predict_mc(TRAIN[:8], {"mixed": [TRAIN[0], three]}, cfg)
    assert out["mixed"].shape == (2, 4) and np.isneginf(out["mixed"][1, 3])
    assert np.isfinite(out["mixed"][0]).all()


@pytest.mark.parametrize("fields", ["QA", "CQA"])
def test_ngram_runs_with_context_fields(fields):
    out = ngram.fit_predict_mc(TRAIN[:8], {"val": VAL[:4]}, ngram.NgramConfig(fields=fields, dim=8, epochs=1))
    assert out["val"].shape == (4, 4) and ((out["val"] >= 0) & (out["val"] <= 1)).all()
