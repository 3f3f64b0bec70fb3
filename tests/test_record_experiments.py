"""The ReCoRD pipeline: statistics, exact random guess, rules, LM scoring, ASReader, encoder ranker."""

from pathlib import Path

import numpy as np
import pytest

from rcstudy import runtime
from rcstudy.data.record import load_record
from rcstudy.data.records import ClozeQuery, Entity
from rcstudy.experiments import record as ex

REC = Path(__file__).parent / "fixtures" / "data" / "record"


def make_query(qid, mentions, answers, query="Fans cheered @placeholder again.", passage_extra=""):
    passage, spans = "", []
    for m in mentions:
        spans.append(Entity(len(passage), len(passage) + len(m), m))
        passage += m + " met "
    passage += passage_extra
    return ClozeQuery(qid, passage, query, tuple(spans), tuple(answers))


@pytest.fixture(scope="module")
def rt():
    return runtime.setup("cpu", threads=1)


@pytest.fixture(scope="module")
def data():
    return load_record(REC)


def test_random_guess_is_the_exact_expectation():
    q = make_query("q", ["Forlan", "Madrid", "Forlan", "Diego Forlan"], ["Forlan"])
    mention = ex.random_guess([q], "mention")
    assert mention.em[0] == pytest.approx(2 / 4)
    assert mention.f1[0] == pytest.approx((1 + 0 + 1 + 2 / 3) / 4)  # F1(Diego Forlan, Forlan) = 2/3
    unique = ex.random_guess([q], "unique")
    assert unique.em[0] == pytest.approx(1 / 3)
    assert unique.f1[0] == pytest.approx((1 + 0 + 2 / 3) / 3)
    with pytest.raises(ValueError):
        ex.random_guess([q], "uniform")


def test_rule_baselines_and_oracle():
    q = make_query("q", ["Madrid", "Forlan", "Real Vega", "Forlan"], ["Forlan"])
    assert ex.first_entity([q]).predictions == {"q": "Madrid"}
    assert ex.most_frequent_entity([q]).predictions == {"q": "Forlan"}
    assert ex.candidate_oracle([q]).em[0] == 1.0
    tie = make_query("t", ["Madrid", "Forlan"], ["Forlan"])
    assert ex.most_frequent_entity([tie]).predictions == {"t": "Madrid"}  # ties: first in the passage


def test_corpus_stats_count_passages_once():
    a = make_query("a", ["Forlan", "Madrid"], ["Forlan"])
    b = ClozeQuery("b", a.passage, "Then @placeholder left .", a.entities, ("Madrid",))
    s = ex.corpus_stats([a, b])
    assert (s["queries"], s["unique passages"]) == (2, 1)
    assert s["entities / passage"] == 2
    assert s["tokens / query"] == pytest.approx((5 + 4) / 2)  # "@placeholder" counts as one token
    assert s["tokens / passage"] == 4  # "Forlan met Madrid met"


def test_construction_checks_on_fixtures(data):
    checks = ex.construction_checks(data.train + data.eval)
    assert checks["exactly one @placeholder in the query"] == 100
    assert checks["a gold answer is among the candidate entities"] == 100
    assert checks["every answer span holds its answer text"] == 100


def test_cloze_items_keep_the_gold_when_subsampling():
    q = make_query("q", [f"E{k}" for k in range(8)], ["E5"])
    full = ex.cloze_items([q], fill=True)[0]
    assert full.options[5] == "Fans cheered E5 again." and full.label == 5 and full.question == ""
    small = ex.cloze_items([q], fill=True, max_options=3, seed=1)[0]
    assert len(small.options) == 3 and small.options[small.label] == "Fans cheered E5 again."
    assert ex.cloze_items([q], fill=False)[0].options == tuple(q.candidates)
    none = ex.cloze_items([make_query("n", ["A", "B"], ["C"])], fill=True)[0]
    assert none.label is None


def test_lm_result_scorings(data):
    q = data.eval[0]
    n = len(q.candidates)
    k = np.arange(n, dtype=float)
    scores = [{"id": q.id, "loglik": -(1 + k), "tokens": np.maximum(1, 10 * k)}]
    assert ex.lm_result("LM", [q], scores, "full").predictions[q.id] == q.candidates[0]
    # per token: -1 for the first, -(1 + k) / 10k for the others, highest for the last
    assert ex.lm_result("LM", [q], scores, "mean").predictions[q.id] == q.candidates[-1]


def test_asreader_learns_and_is_deterministic(data, isolated_cache, monkeypatch, tmp_path):
    cfg = ex.ASReaderConfig(emb=16, hidden=16, vocab_size=500, epochs=40, lr=5e-3, batch_size=2)
    res, _, losses = ex.asreader(cfg, data.train, data.eval, [0])
    curve = np.asarray(losses[0])
    assert curve[-3:].mean() < curve[:3].mean()
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "other"))
    again, _, _ = ex.asreader(cfg, data.train, data.eval, [0])
    np.testing.assert_array_equal(res.f1, again.f1)
    assert res.predictions == again.predictions


def test_encoder_ranker_runs_and_repeats(data, rt, isolated_cache, monkeypatch, tmp_path):
    cfg = ex.RankerConfig(model="tiny-bert", fields="QA", max_length=48, epochs=1, batch_size=2, train_options=3)
    mean, per_seed, losses = ex.encoder_ranker(cfg, data.train, data.eval, [0], rt)
    assert len(mean.ids) == len(data.eval) and len(losses[0]) > 0
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "other"))
    again, _, _ = ex.encoder_ranker(cfg, data.train, data.eval, [0], rt)
    assert mean.predictions == again.predictions


def test_paired_difference_and_subset():
    qs = [make_query(str(k), ["Ann", "Bob"], ["Ann"]) for k in range(20)]
    first = ex.first_entity(qs)
    rand = ex.random_guess(qs, "unique")
    diff = ex.paired_difference(first, rand)
    assert diff.estimate == pytest.approx(50.0) and diff.low == diff.high == pytest.approx(50.0)
    assert ex.paired_difference(first, rand.subset([q.id for q in qs[:5]])).estimate == pytest.approx(50.0)


def test_export_predictions(tmp_path):
    qs = [make_query("q1", ["Ann", "Bob"], ["Ann"])]
    path = ex.export_predictions(ex.first_entity(qs), tmp_path)
    assert path.name == "preds_first_entity.json" and path.read_text().count("q1") == 1
    assert ex.export_predictions(ex.random_guess(qs), tmp_path) is None
