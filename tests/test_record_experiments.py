"""The ReCoRD pipeline: statistics, exact random guess, rules, LM scoring, ASReader, encoder ranker."""

from pathlib import Path

import numpy as np
import pytest

from rcstudy import exports, runtime
from rcstudy.baselines.asreader import ASReaderConfig
from rcstudy.config import as_dict
from rcstudy.data.record import load_record
from rcstudy.data.records import ClozeQuery, Entity
from rcstudy.experiments import record as ex
from rcstudy.experiments.record.trained import SPAN_NO_LOSS
from rcstudy.prompts.record import cloze_items

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
    return runtime.setup("cpu", threads=1, precision="fp32")  # exact comparisons: fp32 on every machine


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
    full = cloze_items([q], fill=True)[0]
    assert full.options[5] == "Fans cheered E5 again." and full.label == 5 and full.question == ""
    small = cloze_items([q], fill=True, max_options=3, seed=1)[0]
    assert len(small.options) == 3 and small.options[small.label] == "Fans cheered E5 again."
    assert cloze_items([q], fill=False)[0].options == tuple(q.candidates)
    none = cloze_items([make_query("n", ["A", "B"], ["C"])], fill=True)[0]
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
    cfg = ASReaderConfig(emb=16, hidden=16, vocab_size=500, epochs=40, lr=5e-3, batch_size=2)
    res, _, losses = ex.asreader_result(cfg, data.train, data.eval, [0])
    curve = np.asarray(losses[0])
    assert curve[-3:].mean() < curve[:3].mean()
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "other"))
    again, _, _ = ex.asreader_result(cfg, data.train, data.eval, [0])
    np.testing.assert_array_equal(res.f1, again.f1)
    assert res.predictions == again.predictions


def test_encoder_ranker_runs_and_repeats(data, rt, isolated_cache, monkeypatch, tmp_path):
    cfg = ex.RankerConfig(fields="QA", max_length=48, epochs=1, batch_size=2, train_options=3)
    mean, per_seed, losses = ex.encoder_ranker(cfg, "tiny-bert", data.train, data.eval, [0], rt)
    assert len(mean.ids) == len(data.eval) and len(losses[0]) > 0
    monkeypatch.setenv("RCSTUDY_CACHE", str(tmp_path / "other"))
    again, _, _ = ex.encoder_ranker(cfg, "tiny-bert", data.train, data.eval, [0], rt)
    assert mean.predictions == again.predictions


def test_a_candidate_ranker_is_judged_by_its_held_out_loss_at_its_gold_candidates():
    """A query's held-out loss is −ln of the summed probability of its gold candidates, and the
    random guess's is −ln of the share of its draws that land on them (a mention, or a string)."""
    from rcstudy.experiments.record.methods import SeedRun, candidate_logits, from_candidate_logits
    from rcstudy.experiments.record.trained import ranker_check

    two = [make_query(f"t{k}", ["Ann", "Bob", "Cy", "Ann Lee"], ["Ann", "Ann Lee"]) for k in range(20)]  # g = 2 of 4
    one = [make_query(f"o{k}", ["Ann", "Bob", "Bob"], ["Bob"]) for k in range(20)]  # Bob: 2 of 3 mentions
    queries, pad = two + one, [-np.inf, -np.inf]  # a ranker's rows are padded past a query's candidates
    # p = (1/3, 1/6, 1/6, 1/3): gold 2/3; p = (1/4, 3/4): gold 3/4
    sure = [np.log([2, 1, 1, 2])] * 20 + [np.r_[0.0, np.log(3), pad]] * 20
    mentions = [np.log([1, 1, 1, 1]) - 1e-9 * np.arange(4)] * 20 + [np.r_[0.0, np.log(2), pad]] * 20  # the draw itself
    even = [np.array([0, 1e-9, 0, 0])] * 20 + [np.r_[1e-9, 0.0, pad]] * 20  # a wrong pick at even odds
    cands = candidate_logits(queries, sure)
    assert cands.gold[0] == (0, 3) and cands.gold[-1] == (1,) and np.isnan(cands.logits[-1, 2:]).all()
    assert cands.guessing(["t0", "o0"], "mention") == pytest.approx([np.log(2), np.log(1.5)])
    assert cands.guessing(["t0", "o0"], "unique") == pytest.approx([np.log(2), np.log(2)])

    def runs(logits: list) -> list:
        return [SeedRun(from_candidate_logits("r", queries, logits), [1.2, 0.5], candidate_logits(queries, logits))] * 2

    chance = ex.random_guess(queries, "mention")
    learned = ranker_check("ranker", 3, runs(sure), chance, "mention")
    assert learned.heldout_loss.estimate == pytest.approx((np.log(1.5) + np.log(4 / 3)) / 2)
    assert learned.guessing_loss == pytest.approx((np.log(2) + np.log(1.5)) / 2) and learned.learned
    assert learned.columns()["held-out guessing loss"] == "0.549" and learned.columns()["ln 3"] == "1.099"
    # the mention draw's own probabilities: exactly the loss of the random guess, whatever even strings would cost
    prior = ranker_check("ranker", 3, runs(mentions), chance, "mention")
    assert prior.loss_margin.estimate == pytest.approx(0, abs=1e-6) and prior.loss_margin.high >= -1e-6
    assert ranker_check("ranker", 3, runs(mentions), chance, "unique").loss_margin.high < 0
    flat = ranker_check("ranker", 3, runs(even), chance, "mention")
    assert flat.heldout_loss.estimate == pytest.approx(np.log(2)) and not flat.learned
    assert "nor its loss there, 0.693 [0.693, 0.693], below the loss of a random guess, 0.549" in flat.warning()


def test_paired_difference_and_subset():
    qs = [make_query(str(k), ["Ann", "Bob"], ["Ann"]) for k in range(20)]
    first = ex.first_entity(qs)
    rand = ex.random_guess(qs, "unique")
    diff = ex.f1_difference(first, rand)
    assert diff.estimate == pytest.approx(50.0) and diff.low == diff.high == pytest.approx(50.0)
    assert ex.f1_difference(first, rand.subset([q.id for q in qs[:5]])).estimate == pytest.approx(50.0)
    a, b = ex.aligned(first, rand.subset([q.id for q in qs[5:0:-1]]))
    assert a.ids == b.ids == tuple(q.id for q in qs[1:6])  # the first result's order


def test_export_predictions_one_file_per_row(tmp_path, monkeypatch):
    monkeypatch.setenv("RCSTUDY_EXPORTS", str(tmp_path))
    qs = [make_query("q1", ["Ann", "Bob"], ["Ann"])]
    other = ex.MethodResult("first entity", ("q1",), np.ones(1), np.ones(1), {"q1": "Bob"})
    paths = ex.export_predictions({"First entity": ex.first_entity(qs), "Random Guess": ex.random_guess(qs),
                                   "DocQA w/o ELMo": other, "DocQA w/ ELMo": other})
    assert [p.name for p in paths] == ["preds_first_entity.json", "preds_docqa_w_o_elmo.json",
                                       "preds_docqa_w_elmo.json"]  # rows of one method do not overwrite each other
    assert paths[0] == exports.path("record/preds_first_entity.json") and paths[0].read_text().count("q1") == 1


def test_config_defaults_are_the_quick_profile_and_map_onto_the_engines():
    assert ex.Config.load("quick") == ex.Config()
    full = ex.Config.load("full")
    mc = full.ranker.mc_config(full.model, seed=2)
    assert (mc.model.partition("@")[0], mc.fields, mc.max_length, mc.grad_accum, mc.seed) == ("roberta-base", "CQA", 384, 4, 2)
    assert full.docqa.engine(elmo=False).features is None
    elmo = full.docqa.engine(elmo=True)
    assert (elmo.features.partition("@")[0], elmo.feature_layers, elmo.emb, elmo.vocab_size) == ("bert-large-cased", None, 300, 50000)
    assert ex.Config().docqa.engine(elmo=True).feature_layers == (2, 4, 6)
    assert full.extractor.engine(full.model).model == full.model
    smoke = ex.Config.load("smoke", {"ranker.epochs": 3, "lm": {"scoring": "mean"}})
    assert (smoke.ranker.epochs, smoke.lm.scoring, smoke.lm.model) == (3, "mean", "tiny-llama")
    assert as_dict(ex.Config())["sizes"] == {"train": None, "lm_eval": None, "span_eval": 80, "seed": 0}


def test_run_on_the_smoke_config(isolated_cache, monkeypatch, tmp_path):
    monkeypatch.setenv("RCSTUDY_DATA", str(Path(__file__).parent / "fixtures" / "data"))
    monkeypatch.setenv("RCSTUDY_EXPORTS", str(tmp_path / "exports"))
    # a row at chance says what the full profile would spend on it (here a stand-in for rcstudy.plan.row_needs)
    res = ex.run(ex.Config.load("smoke"), runtime.setup("cpu", threads=1),
                 full_profile=lambda rows: {row: "seven GPU hours" for row in rows})
    assert set(res.tables) == {"record_sources", "record_table1", "record_checks", "record_metric_cases",
                               "record_table4", "record_trained"}
    # the candidate rankers are judged on the evaluation queries against a random guess among the same candidates
    trained = res.tables["record_trained"]
    assert {"held-out accuracy", "chance", "learned"} <= set(trained.columns) and "ASReader" in trained.index
    stuck = list(trained.index[trained["learned"] == "NO"])
    model = ex.Config.load("smoke").model
    assert not trained.loc[["ASReader", f"The encoder ranker ({model})"], "held-out loss"].str.startswith("n/a").any()
    spans = ["DocQA-lite w/o ELMo", "DocQA-lite w/ ELMo", f"The span extractor ({model})"]
    assert (trained.loc[spans, "held-out loss"] == SPAN_NO_LOSS).all() and (trained.loc[spans, "training loss"] == "—").all()
    assert res.facts["record_loss_warnings"].data.count("The full profile would need seven GPU hours") == len(stuck)
    assert len(res.table4) == 12 and set(res.table4.index) <= set(res.tables["record_table4"].index)
    for name in ("record_n_eval", "record_best_name", "record_lm_f1", "record_span_train_n", "record_gap_words",
                 "record_elmo_layers", "record_pct_trigram", "record_paper_total"):
        assert name in res.facts
    assert res.facts["record_n_eval"] == len(res.lengths[res.lengths["set"] == "evaluation"])
    assert [c.id for c in res.claims.claims] == [s.id for s in res.claims.specs.values()]
    assert all(c.evidence for c in res.claims.claims)
    assert set(res.curves) and all(len(lines) for panel in res.curves.values() for lines in panel.values())
    assert (tmp_path / "exports" / "record" / "preds_lm.json").is_file()


def test_the_full_profiles_plan_counts_the_lm_prefix_once_per_batch_of_candidates(fixture_data):
    """The LM baseline's job in the full profile, on one fixture query: the passage and the query
    up to its blank (⌈characters / 4⌉ tokens and a start token) run once for every batch of
    candidates, each candidate's continuation after it but its last token; GPT-2 Large is charged
    2 FLOPs per parameter for those tokens alone."""
    import math

    from rcstudy import plan
    from rcstudy.jobs import Tokens, option_tokens
    from rcstudy.prompts.record import lm_prefix_and_continuations

    def lm_job(overrides):
        cfg = plan.chapter_config("record", "full", {"sizes.lm_eval": 1, **overrides})
        (job,) = [j for j in ex.jobs(cfg) if j.step == "lm_job"]
        (query,) = ex.lm_queries(cfg, ex.job_queries(cfg)[1])
        return cfg, job, lm_prefix_and_continuations(query)

    cfg, job, (prefix, continuations) = lm_job({})
    assert 2 < len(continuations) <= cfg.lm.batch_size  # one batch of 32
    once = math.ceil(len(prefix) / 4) + 1
    rest = sum(math.ceil(len(c) / 4) - 1 for c in continuations)
    assert job.tokens == Tokens(forward=once + rest)
    assert option_tokens(f"{prefix} {c}" for c in continuations) > 2 * (once + rest)  # what the plan counted before
    n = plan.model_size(cfg.lm.model).params
    assert plan.plan_table([job], "h100").loc[job.name, "PFLOPs"] == pytest.approx(2 * n * (once + rest) / 1e15)
    _, job2, _ = lm_job({"lm.batch_size": 2})  # two candidates a pass: the prefix runs once per pair
    assert job2.tokens == Tokens(forward=once * math.ceil(len(continuations) / 2) + rest)


def test_a_candidate_ranker_row_needs_every_seed_of_its_full_profile_jobs(fixture_data):
    """Each candidate ranker's row averages its seeds, so what the full profile would spend on it
    is all of its jobs there: GPU hours for the fine-tuned ranker, none for ASReader (from scratch)."""
    from rcstudy import plan

    cfg, full = ex.Config.load("smoke"), ex.Config.load("full")
    needs = plan.row_needs("record", ex.full_profile_rows(cfg))
    ranker = ", ".join(f"encoder ranker seed {s}" for s in full.seeds)
    assert needs[f"The encoder ranker ({cfg.model})"].endswith(f"GPU hours on one H100 (3 jobs: {ranker})")
    asreader = ", ".join(f"ASReader seed {s}" for s in full.seeds)
    assert needs["ASReader"] == (f"3 jobs ({asreader}) of a model trained from scratch, whose GPU hours the plan "
                                 "does not estimate")
