"""The three from-scratch readers: shapes, learning on a toy task, determinism, caching."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rcstudy.baselines.readers import (
    READERS, ReaderConfig, ReaderInputs, split_sentences, train_reader, train_reader_cached,
)
from rcstudy.data.records import MCItem
from rcstudy.models.scratch import Vocab, tokenize

WORDS = ["apple", "river", "stone", "cloud", "piano", "tiger", "lemon", "candle", "forest", "mirror", "rocket", "violin"]


def toy_items(n: int, seed: int) -> list[MCItem]:
    """The right option names the colour of the thing the passage mentions; the others do not appear."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        w = rng.choice(WORDS, size=4, replace=False)
        label = int(rng.integers(4))
        context = f"There is a {w[label]} here. It is old. Nobody moves the {w[label]}."
        items.append(MCItem(f"toy-{seed}-{i}", context, "What is here?", tuple(f"the {x}" for x in w), label))
    return items


TRAIN, DEV = toy_items(48, 0), toy_items(16, 1)
SMALL = dict(emb_dim=16, hidden=12, batch_size=8, lr=1e-2, dropout=0.0)


def test_sentence_split_and_batch_shapes():
    assert split_sentences(tokenize("One.Two! three")) == [["one", "."], ["two", "!"], ["three"]]
    vocab = Vocab.build([t for it in TRAIN for t in (it.context, it.question, *it.options)])
    batch = ReaderInputs(vocab)(TRAIN[:3])
    assert batch["options"].shape[:2] == (3, 4) and batch["sentences"].shape[:2] == (3, 3)
    assert batch["sentences_mask"].any(-1).all()


@pytest.mark.parametrize("name", list(READERS))
def test_reader_forward_learns_and_is_deterministic(name):
    vocab = Vocab.build([t for it in TRAIN for t in (it.context, it.question, *it.options)])
    module = READERS[name][1](len(vocab), 16, 12, 0.0)
    assert module(**ReaderInputs(vocab)(TRAIN[:5])).shape == (5, 4)

    cfg = ReaderConfig(model=name, epochs=6, seed=3, **SMALL)
    run = train_reader(cfg, TRAIN, DEV, {"dev": DEV})
    per_epoch = np.array(run.losses).reshape(cfg.epochs, -1).mean(1)
    assert per_epoch[-1] < per_epoch[0]
    assert len(run.dev_accuracy) == cfg.epochs and run.best_epoch == int(np.argmax(run.dev_accuracy)) + 1
    assert run.logits["dev"].shape == (16, 4)
    again = train_reader(cfg, TRAIN, DEV, {"dev": DEV})
    np.testing.assert_allclose(run.logits["dev"], again.logits["dev"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(READERS))
def test_scores_do_not_depend_on_the_batch(name):
    """Padding is masked out: an item scores the same alone as beside longer passages (co-matching
    only encodes the real tokens of its padded sentence grid)."""
    long = MCItem("long", " ".join(f"The {w} is far from the {v}, and nobody asks why." for w, v in zip(WORDS, WORDS[1:])),
                  "Where is the apple?", ("near the river", "in a cloud", "by the stone wall", "nowhere"), 0)
    batch = [TRAIN[0], long, TRAIN[1]]
    vocab = Vocab.build([t for it in batch for t in (it.context, it.question, *it.options)])
    module = READERS[name][1](len(vocab), 16, 12, 0.0).eval()
    inputs = ReaderInputs(vocab)
    with torch.inference_mode():
        together = module(**inputs(batch))
        alone = torch.cat([module(**inputs([it])) for it in batch])
    torch.testing.assert_close(together, alone, rtol=1e-4, atol=1e-5)


def test_dev_logits_come_from_the_best_epoch():
    cfg = ReaderConfig(model="sar", epochs=3, seed=1, **SMALL)
    run = train_reader(cfg, TRAIN, DEV, {"dev": DEV, "dev copy": list(DEV)})
    np.testing.assert_allclose(run.logits["dev"], run.logits["dev copy"], rtol=1e-5, atol=1e-6)


def test_attentive_reader_solves_the_toy_task():
    run = train_reader(ReaderConfig(model="sar", epochs=12, seed=0, **SMALL), TRAIN, DEV, {"dev": DEV})
    assert max(run.dev_accuracy) >= 0.5  # chance is 0.25


def test_cached_run_is_reused(isolated_cache):
    cfg = ReaderConfig(model="sar", epochs=1, seed=0, **SMALL)
    first = train_reader_cached(cfg, TRAIN, DEV, {"dev": DEV})
    assert any(isolated_cache.rglob("*.npz"))
    torch.manual_seed(123)  # a cached result does not depend on the global RNG
    second = train_reader_cached(cfg, TRAIN, DEV, {"dev": DEV})
    np.testing.assert_array_equal(first.logits["dev"], second.logits["dev"])


def test_unknown_reader():
    with pytest.raises(ValueError, match="unknown reader"):
        ReaderConfig(model="bidaf")
