"""Extractive span readers: decoding, span mapping, DocQA-lite training, and the ReCoRD glue."""

from pathlib import Path

import numpy as np
import pytest

from rcstudy import runtime
from rcstudy.baselines import span_readers as sr
from rcstudy.data.record import load_record
from rcstudy.data.records import ClozeQuery, Entity
from rcstudy.experiments import record as ex
from rcstudy.prompts.record import span_examples

REC = Path(__file__).parent / "fixtures" / "data" / "record"


@pytest.fixture(scope="module")
def rt():
    return runtime.setup("cpu", threads=1, precision="fp32")  # exact comparisons: fp32 on every machine


def test_free_span_respects_max_length_and_order():
    start = np.array([-1.0, 5.0, 0.0, 0.0, 0.0, 0.0])
    end = np.array([9.0, 0.0, 0.0, 0.0, 0.0, 4.0])  # (1, 0) would score 14 but ends before it starts
    assert sr.best_span(start, end, max_answer_len=10) == (1, 5, 9.0)
    i, j, _ = sr.best_span(start, end, max_answer_len=3)
    assert i <= j < i + 3
    assert (i, j) == (0, 0)  # -1 + 9 beats every span of at most 3 tokens starting at 1 (5 + 0)


def test_free_span_single_token_when_max_length_is_one():
    rng = np.random.default_rng(0)
    s, e = rng.normal(size=20), rng.normal(size=20)
    i, j, score = sr.best_span(s, e, max_answer_len=1)
    assert i == j and score == pytest.approx(max(s + e))


def test_candidate_restricted_decoding_picks_the_best_mention():
    start = np.array([0.0, 3.0, 0.0, 1.0, 0.0, 8.0])
    end = np.array([0.0, 0.0, 2.0, 0.0, 1.0, 0.0])
    spans = [(1, 2), (3, 4), None, (0, 0)]
    k, score = sr.best_mention(start, end, spans)
    assert (k, score) == (0, 5.0)  # the free best (5, 5) is no mention and is never chosen


def test_token_char_mapping_round_trips_on_a_fixture_passage():
    q = load_record(REC).eval[0]
    offsets = sr.word_offsets(q.passage)
    for k, (s, e) in enumerate(offsets):
        assert sr.char_to_token_span(offsets, s, e) == (k, k)
        assert sr.token_to_char_span(offsets, k, k) == (s, e)
    starts, ends = {s for s, _ in offsets}, {e for _, e in offsets}
    aligned = [ent for ent in q.entities if ent.start in starts and ent.end in ends]
    assert aligned
    for ent in q.entities:
        a, b = sr.token_to_char_span(offsets, *sr.char_to_token_span(offsets, ent.start, ent.end))
        assert a <= ent.start and ent.end <= b  # the covering tokens
        if ent in aligned:
            assert (a, b) == (ent.start, ent.end)


def _synthetic(n: int) -> list[sr.SpanExample]:
    names = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"]
    out = []
    for k in range(n):
        a, b = names[k % 6], names[(k + 1) % 6]
        context = f"{a} visited Paris . {b} stayed home ."
        s = context.index(b)
        out.append(sr.SpanExample(f"s{k}", context, "Who stayed home ?", ((s, s + len(b)),),
                                  ((0, len(a)), (s, s + len(b)))))
    return out


def test_docqa_lite_lowers_its_loss_and_is_reproducible(rt):
    cfg = sr.DocQAConfig(emb=8, char_filters=4, hidden=8, epochs=15, batch_size=4, dropout=0.0, lr=1e-2)
    train = _synthetic(8)
    losses, starts, ends = sr.train_docqa(cfg, train, train[:2], seed=0, rt=rt)
    assert np.mean(losses[-2:]) < 0.5 * np.mean(losses[:2])
    again, starts2, _ = sr.train_docqa(cfg, train, train[:2], seed=0, rt=rt)
    assert again == losses
    np.testing.assert_array_equal(starts[0], starts2[0])
    free, cand = sr.decode(train[:2], starts, ends, [sr.word_offsets(e.context) for e in train[:2]], 15)
    assert cand["s0"] in ("Alice", "Bob")


def test_docqa_lite_takes_frozen_features(rt):
    cfg = sr.DocQAConfig(emb=8, char_filters=4, hidden=8, epochs=1, batch_size=4, features="tiny-bert")
    losses, starts, _ = sr.train_docqa(cfg, _synthetic(4), _synthetic(2), seed=0, rt=rt)
    assert len(losses) == 1 and len(starts[0]) == len(sr.word_offsets(_synthetic(1)[0].context))


def test_record_span_examples_mark_gold_mentions():
    passage = "Diego Forlan scored. Forlan left Madrid."
    ents = (Entity(0, 12, "Diego Forlan"), Entity(21, 27, "Forlan"), Entity(33, 39, "Madrid"))
    q = ClozeQuery("q", passage, "Fans cheered @placeholder .", ents, ("Forlan",))
    (e,) = span_examples([q], "X")
    assert e.question == "Fans cheered X ." and e.gold == ((21, 27),) and len(e.mentions) == 3


def test_span_extractor_runs_on_fixtures(rt, tmp_path, monkeypatch):
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path))
    data = load_record(REC)
    cfg = sr.ExtractorConfig(model="tiny-bert", max_length=64, stride=32, epochs=1, batch_size=2)
    free, cand, losses = ex.span_extractor(cfg, data.train, data.eval, [0], rt)
    assert len(free.ids) == len(data.eval) and losses[0]
    assert all(any(p == e.text for e in q.entities) for q, p in zip(data.eval, cand.predictions.values()))


def test_span_extractor_windows_refuse_a_stride_that_leaves_no_room():
    from rcstudy.models.loading import load_tokenizer

    examples = _synthetic(2)
    with pytest.raises(ValueError, match="stride .* must be below the room"):
        sr._windows(load_tokenizer("tiny-bert"), examples, sr.ExtractorConfig(max_length=32, stride=28))
    assert sr._windows(load_tokenizer("tiny-bert"), examples, sr.ExtractorConfig(max_length=32, stride=8))["input_ids"]
