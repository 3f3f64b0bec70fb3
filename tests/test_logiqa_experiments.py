"""The LogiQA chapter's pipeline on the fixtures: diagnostics, analyses computed by hand, the
tiny-model runs (encoder, ablation, transfer, LM), and the published numbers' shapes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rcstudy import papers, report, runtime, sampling
from rcstudy.data.records import MCItem
from rcstudy.experiments import logiqa as ex
from rcstudy.stats import direction, paired_difference

pytestmark = pytest.mark.usefixtures("fixture_data")  # every test reads the fixtures


@pytest.fixture(scope="module")
def data(fixture_data):
    return ex.load_data(ex.Dataset(languages=("en", "zh")))


def test_diagnostics(data):
    diag = ex.split_diagnostics(data)
    assert diag.loc["questions"].tolist() == [8, 10, 8, 10]
    assert diag.loc["blocks printed out of order", "en-test"] == 2
    assert diag.loc["answers that differ if the letter is read as the line", "en-test"] == 1
    assert diag.loc["blocks with a label left in the text", "en-eval"] == 1
    assert diag.loc["glued sentence periods", "en-eval"] == 1  # "Tuesday.Lena"
    assert diag.loc["answer D (%)", "en-eval"] == pytest.approx(37.5)
    shares = ex.answer_shares(data)
    assert set(shares["split"]) == {"en-eval", "en-test", "zh-eval", "zh-test", "training set"}
    assert ex.paragraph_leak(data.splits["en-eval"], data.splits["en-eval"][:2]) == 2


def test_glued_periods_and_token_statistics():
    assert ex.fix_glued_periods("park.These four. No.3 valve") == "park. These four. No.3 valve"
    item = MCItem("x", "One two.Three", "Why?", ("a b", "c", "d e f", "g"), 0)
    stats = ex.token_statistics([item]).set_index(["tokeniser", "row"])
    assert stats.loc[("whitespace", "Paragraph"), "Ave. tokens"] == 2
    assert stats.loc[("whitespace, glued periods fixed", "Paragraph"), "Ave. tokens"] == 3
    assert stats.loc[(r"\w+ and punctuation", "Question"), "Ave. tokens"] == 2
    assert stats.loc[("whitespace", "Candidate Answer"), "Max. tokens"] == 3


def test_length_buckets():
    def of(n):
        return MCItem("x", " ".join(["w"] * (n - 5)), "q", ("a", "b", "c", "d"), 0)
    assert [ex.item_length(of(n)) for n in (100, 101)] == [100, 101]
    assert ex.length_bucket([of(n) for n in (20, 100, 101, 150, 151, 200, 201, 500)]).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]


def test_heuristic_types():
    item = MCItem("x", "If all members vote, then the motion passes only if either A or B agrees.", "Why?",
                  ("a", "b", "c", "d"), 0)
    assert ex.heuristic_types(item) == ("categorical", "sufficient", "necessary", "disjunctive")
    assert ex.heuristic_types(MCItem("y", "Only if it rains.", "Why?", ("a",), 0)) == ("necessary",)


def test_type_labels_from_logiqa2(data):
    sources = ex.type_labels(data.splits["en-test"], data.logiqa2, threshold=0.5)
    proxy = sources["LogiQA 2.0 labels (proxy)"]
    assert proxy.types == {"en-test-3": ("sufficient", "conjunctive")}
    assert proxy.shares()["sufficient"] == 100.0 and proxy.shares()["categorical"] == 0.0
    assert len(sources["keyword heuristic (proxy)"].types) == 10
    assert ex.gold_agreement(data.splits["en-test"], data.logiqa2, threshold=0.5) == 1.0


def fake(name, preds, split="en-test"):
    return ex.Predictions(name, "test", "—", {split: np.atleast_2d(np.array(preds))})


def test_score_ignores_unevaluated_items(data):
    gold = data.gold("en-test")  # [1, 0, 2, 3, 1, 0, 2, 3, 1, 0]
    two_seeds = ex.Predictions("m", "t", "—", {"en-test": np.array([gold, np.where(np.arange(10) < 5, gold, 0)])})
    sc = ex.score(two_seeds, data, "en-test")
    assert sc.seeds.mean == pytest.approx((100 + 70) / 2) and sc.n == 10  # seed 2: 5 + two gold zeros
    sub = fake("s", [gold[0], gold[1], 0] + [-1] * 7)
    sc = ex.score(sub, data, "en-test")
    assert sc.n == 3 and sc.seeds.mean == pytest.approx(100 * 2 / 3)
    assert ex.score(sub, data, "zh-test") is None
    table = ex.results_table([sub], data, name_map={"s": "Renamed"})
    assert list(table.index) == ["Renamed"] and list(table.columns) == ["LogiQA Test"]


def test_overlap_table_by_hand(data):
    items = data.splits["en-test"]
    bm, gold = ex.best_match(items), data.gold("en-test")
    always_bm = fake("bm", bm)
    t = ex.overlap_table([always_bm], data)
    assert t.loc["bm", "Overlap Ratio"] == 100.0
    assert t.loc["bm", "Accuracy(%)"] == pytest.approx(100 * (bm == gold).mean())
    assert t.loc["Gold-standard", "Overlap Ratio"] == pytest.approx(100 * (bm == gold).mean())
    never = fake("never", (bm + 1) % 4)
    t = ex.overlap_table([never], data)
    assert t.loc["never", "Overlap Ratio"] == 0.0 and np.isnan(t.loc["never", "Accuracy(%)"])
    assert t.loc["never", "accuracy when gold is the best match"] == 0.0


def test_length_and_type_tables(data):
    gold = data.gold("en-test")
    perfect = fake("perfect", gold)
    t5 = ex.length_table([perfect], data)
    assert t5.loc["#Instances"].sum() == 10 and (t5.loc["perfect"].dropna() == 100).all()
    labels = ex.TypeLabels("hand", {"en-test-0": ("categorical",), "en-test-1": ("categorical", "sufficient")}, 10)
    wrong_first = fake("w", np.where(np.arange(10) == 0, (gold + 1) % 4, gold))
    t7 = ex.type_table([wrong_first], data, labels)
    assert t7.loc["categorical", "items"] == 2 and t7.loc["categorical", "w"] == 50.0
    assert t7.loc["sufficient", "w"] == 100.0 and np.isnan(t7.loc["necessary", "w"])
    pts = ex.length_points([perfect], data)
    assert (pts["accuracy"] == 100).all() and pts["n"].sum() == 10


def test_samples_are_seeded_and_sorted():
    a, b = sampling.draw_positions(50, 10, 3), sampling.draw_positions(50, 10, 3)
    assert a.tolist() == b.tolist() == sorted(a.tolist()) and len(set(a.tolist())) == 10
    assert sampling.draw_positions(50, None, 0).tolist() == list(range(50))
    assert ex.full_length(np.array([2, 3]), np.array([1, 4]), 5).tolist() == [-1, 2, -1, -1, 3]


def test_lexical_systems_cover_every_split(data):
    systems = {s.name: s for s in ex.lexical_systems(data)}
    assert set(systems) == {"Word Matching", "Sliding Window", "Sliding Window + Distance"}
    assert systems["Word Matching"].preds["zh-test"].shape == (1, 10)
    assert ex.majority_system(data).preds["en-eval"].shape == (1, 8)


def test_each_trained_row_is_judged_by_its_held_out_loss_too(data):
    """A trained row keeps its option logits over the split (NaN where not scored): its held-out
    loss is their cross-entropy at the gold option, against ln 4."""
    from rcstudy.experiments.logiqa.runs import eval_positions

    sizes = ex.Sizes(n_dev=4, n_test_sub=6)
    pos = eval_positions(data, sizes)["test-sub"]
    gold = data.gold("en-test")[pos]
    sure = np.where(np.arange(4) == gold[:, None], 3.0, 0.0)  # each item: −ln(e³ / (e³ + 3))
    even = np.where(np.arange(4) == (gold[:, None] + 1) % 4, 1e-9, 0.0)  # a wrong pick, at even odds
    runs = {"sure": [{"en-test": sure, "losses": [1.4, 0.2]}], "even": [{"en-test": even, "losses": [1.4, 1.39]}]}
    majority = ex.majority_system(data)
    ablations = ex.ablation_systems(data, sizes, majority, runs)
    logits = ablations[1].extra["logits"]["en-test"]
    assert logits.shape == (1, 10, 4) and np.isfinite(logits[0, pos]).all() and np.isnan(np.delete(logits[0], pos, 0)).all()
    systems = ex.Systems(majority, [], [], majority, [], majority, ablations, [], 0)
    checks = systems.loss_checks(data)
    assert set(checks) == {"sure", "even"}
    assert checks["sure"].heldout_loss.estimate == pytest.approx(np.log(1 + 3 * np.exp(-3)))
    assert checks["sure"].learned and checks["sure"].columns()["held-out loss"] == "0.139 [0.139, 0.139]"
    assert checks["even"].heldout_loss.estimate == pytest.approx(np.log(4)) and not checks["even"].learned
    assert "nor its loss there, 1.386" in checks["even"].warning()


def test_tiny_encoder_pipeline(data, isolated_cache, monkeypatch, tmp_path):
    """Each trained row from its runs (what its jobs' steps return), one per seed."""
    rt = runtime.setup(device="cpu", threads=1)
    encoder = ex.Encoder(model="tiny-bert", seeds=(0,), n_train=None, max_length=48, lr=1e-3, batch_size=4)
    sizes = ex.Sizes(n_dev=4, n_test_sub=6)

    def encoder_runs():
        return [ex.encoder_run(data, encoder, sizes, s, rt) for s in encoder.seeds]

    main = ex.plm_system(data, encoder, sizes, encoder_runs())
    assert main.evaluated("en-test").all() and main.evaluated("en-eval").sum() == 4
    again = ex.plm_system(data, encoder, sizes, encoder_runs())  # from the cache
    np.testing.assert_array_equal(main.preds["en-test"], again.preds["en-test"])
    abl = ex.ablation_systems(data, sizes, main, {a: [ex.ablation_run(data, encoder, sizes, a, s, rt) for s in encoder.seeds]
                                                  for a in ["no question", "options only"]})
    assert [s.name for s in abl] == ["full input", "no question", "options only"]
    assert all(s.evaluated("en-test").sum() == 6 for s in abl)
    source = data.splits["en-eval"]
    # the source stage trains with its own settings (here 2 questions a step), the target stage with the encoder's
    transfer_cfg = ex.Transfer(then_logiqa=True, source_lr=1e-3, source_batch_size=2)
    stages = ex.transfer_row_stages(source, ex.encoder_train_items(data, encoder, sizes), transfer_cfg.then_logiqa)
    runs = [[ex.transfer_run(data, encoder, transfer_cfg, sizes, row, s, rt) for s in encoder.seeds] for row in stages]
    transfer = ex.transfer_systems(data, encoder, sizes, main, source, "Source", runs)
    assert len(transfer[1].extra["losses"][0]) == 4 and len(transfer[2].extra["losses"][0]) == 3  # 8/2, 12/4 steps
    assert [s.name for s in transfer] == ["tiny-bert_LogiQA", "tiny-bert_Source", "tiny-bert_Source → LogiQA"]
    assert transfer[2].trained_on == "8 Source, then 12 LogiQA"
    assert all(s.evaluated("en-test").sum() == 6 and s.evaluated("en-eval").sum() == 4 for s in transfer)
    sub = transfer[0].evaluated("en-test")  # the LogiQA-only row is the main model on the subsample
    np.testing.assert_array_equal(transfer[0].preds["en-test"][:, sub], main.preds["en-test"][:, sub])

    def lm_system(lm):
        return ex.lm_system(data, lm, sizes, ex.lm_run(data, lm, sizes, rt))

    lm = lm_system(ex.LM(model="tiny-llama", batch_size=4))
    assert lm.evaluated("en-test").all()  # the LM scores all of Test unless told otherwise
    assert lm.extra["acc_norm"].shape == lm.preds["en-test"].shape
    assert lm_system(ex.LM(model="tiny-llama", batch_size=4, n_test=6)).evaluated("en-test").sum() == 6
    monkeypatch.setenv("RCSTUDY_EXPORTS", str(tmp_path))
    path = ex.export_predictions([main, lm], data)
    saved = json.loads(path.read_text())
    assert len(saved["systems"]["tiny-bert"]["en-test"]) == 10 and len(saved["systems"][lm.name]["en-test"]) == 10


def test_published_numbers():
    t3 = papers.table("logiqa", "Table 3")
    assert t3.shape == (10, 4) and t3.loc["RoBERTa", "LogiQA Test"] == 35.31
    assert t3["LogiQA Dev"].isna().sum() == 2  # the human rows
    f3 = papers.table("logiqa", "Figure 3")["RoBERTa Test"]
    assert f3.isna().sum() == 2 and f3["no paragraph"] == 28.92
    t5 = papers.table("logiqa", "Table 5")
    weighted = (t5.loc["#Instances"] * t5.loc["RoBERTa"]).sum() / t5.loc["#Instances"].sum()
    assert weighted == pytest.approx(35.31, abs=0.01)
    assert papers.table("logiqa", "Figure 2").sum().iloc[0] == pytest.approx(122.9)
    assert papers.table("logiqa", "Table 6").shape == (7, 2) and papers.table("logiqa", "Table 7").shape == (5, 1)


def test_paired_difference_and_direction(data):
    x = np.array([1, 1, 1, 1, np.nan, 0])
    y = np.array([0, 0, 0, 0, 1, 0])
    ci = paired_difference(x, y)
    assert ci.estimate == pytest.approx(80.0) and ci.low > 0  # the NaN item is left out
    assert direction(ci) is True and direction(paired_difference(y[:4], x[:4])) is False
    assert direction(paired_difference(np.array([1.0, 0.0]), np.array([0.0, 1.0]))) is None
    bm = ex.best_match(data.splits["en-test"])
    half = ex.Predictions("h", "t", "—", {"en-test": np.array([bm, np.where(np.arange(10) < 5, bm, -1)])})
    over = ex.per_item_overlap(half, data)
    assert np.isnan(over[5:]).all() and (over[:5] == 1).all()


def test_run_on_the_smoke_config(isolated_cache, monkeypatch, tmp_path):
    monkeypatch.setenv("RCSTUDY_EXPORTS", str(tmp_path))
    from rcstudy import plan

    asked = []

    def full_profile(rows):  # the page's: what the full profile would spend on each row at chance
        asked.append(rows)
        return plan.row_needs("logiqa", rows)

    res = ex.run(ex.Config.load("smoke"), runtime.setup(device="cpu", threads=1), profile="smoke",
                 full_profile=full_profile)
    assert {"logiqa_splits", "logiqa_table2", "logiqa_figure2", "logiqa_wm_grid", "logiqa_table3", "logiqa_figure3",
            "logiqa_table4", "logiqa_table5", "logiqa_table6", "logiqa_table7_logiqa", "logiqa_table7_all_keyword",
            "logiqa_consistency"} <= set(res.tables)
    assert res.facts["logiqa_n_test"] == 10 and res.facts["logiqa_model"] == "tiny-bert"
    assert res.facts["logiqa_sizes_text"].startswith("This smoke run")
    # 8 ReClor questions drawn, 2 of them RULE main questions (left out of every shared ReClor model)
    assert res.facts["logiqa_source_n"] == 6 and len(res.systems.transfer) == 3
    trained = res.tables["logiqa_trained"]
    assert {"tiny-bert", "no paragraph", "no question", "options only", "tiny-bert_ReClor"} <= set(trained.index)
    assert set(trained.index) == set(res.learning.losses)
    assert not trained["held-out loss"].str.startswith("n/a").any()  # every trained row's logits on Test
    stuck = trained.index[trained["learned"] == "NO"]
    assert all(report.md_text(name) in res.facts["logiqa_loss_warnings"].data for name in stuck)  # names shown as text
    # each row at chance names the full profile's GPU hours for its jobs: the main encoder's are the full
    # profile's main encoder (roberta-base), in its warning and in every claim resting on it
    assert "tiny-bert" in stuck and set(asked[0]) == set(stuck)
    assert asked[0]["tiny-bert"] == {"step": "encoder_job", "arguments": {"model": ex.Config.load("full").encoder.model}}
    main = report.md_text(" GPU hours on one H100 (3 jobs: encoder roberta-base seed 0, encoder roberta-base seed 1, "
                          "encoder roberta-base seed 2) for this row.")
    assert main in res.facts["logiqa_loss_warnings"].data
    at_chance = [c for c in res.claims.claims if c.reason == report.NOT_LEARNED]
    assert at_chance and all("the full profile would need" in c.evidence and "GPU hours" in c.evidence for c in at_chance)
    # the zero-shot LM under both harness accuracies, on all of Test, and the length preference
    assert res.facts["logiqa_lm_n"] == 10 and res.facts["logiqa_lm_acc"].endswith("]")
    assert 0 <= res.facts["logiqa_lm_picks_shortest"] <= 100 and 0 <= res.facts["logiqa_gold_shortest"] <= 100
    assert [c.id for c in res.claims.claims] == [s.id for s in papers.claims("logiqa")]
    saved = json.loads((tmp_path / ex.EXPORT_FILE).read_text())
    assert set(saved["systems"]) == {s.name for s in res.systems.everything}


def test_lm_scores_are_the_harness_acc_and_acc_norm(isolated_cache):
    """``sum`` is the summed log-likelihood of each option (acc); ``per_char`` divides it by the
    option's length in characters (acc_norm), as lm-evaluation-harness does: the option itself, not
    the space that joins it to the prompt."""
    from rcstudy.baselines.option_lm import option_logliks
    from rcstudy.data.logiqa import load_logiqa
    items = load_logiqa("test", "en")[:2]
    out = option_logliks("tiny-llama", items, runtime.setup(device="cpu", threads=1), batch_size=4)
    chars = np.array([[len(o) for o in it.options] for it in items], dtype=float)  # without the joining space
    np.testing.assert_allclose(out["per_char"] * chars, out["sum"])
    assert (out["sum"] < 0).all()


def test_the_full_profiles_plan_counts_the_lm_prompt_once_per_batch_of_its_options():
    """The zero-shot LM's job in the full profile, on one fixture question: its prompt (the
    harness's passage, question and lettered choices; ⌈characters / 4⌉ tokens and a start token)
    runs once for its four options (16 a batch), each option's tokens after it but its last; the
    plan charges Qwen2.5-7B 2 FLOPs per parameter for those tokens alone."""
    import math

    from rcstudy import plan
    from rcstudy.jobs import Tokens, option_tokens
    from rcstudy.prompts.logiqa import lm_context

    cfg = plan.chapter_config("logiqa", "full", {"lm.n_test": 1})
    (job,) = [j for j in ex.jobs(cfg) if j.step == "lm_job"]
    (item,) = ex.lm_items(ex.job_data(cfg.dataset), cfg.lm, cfg.sizes)[1]
    prompt = lm_context(item)
    hand = math.ceil(len(prompt) / 4) + 1 + sum(math.ceil(len(" " + o) / 4) - 1 for o in item.options)
    assert job.tokens == Tokens(forward=hand)
    every_pair = option_tokens(prompt + " " + o for o in item.options)  # what the plan counted before
    assert every_pair > 3 * hand
    table = plan.plan_table([job], "h100")
    n = plan.model_size(cfg.lm.model).params
    assert table.loc[job.name, "PFLOPs"] == pytest.approx(2 * n * hand / 1e15)
    # two options a batch: the prompt runs twice
    cfg2 = plan.chapter_config("logiqa", "full", {"lm.n_test": 1, "lm.batch_size": 2})
    (job2,) = [j for j in ex.jobs(cfg2) if j.step == "lm_job"]
    assert job2.tokens.forward - hand == math.ceil(len(prompt) / 4) + 1


def test_the_ablation_claims_rest_on_the_full_model_not_on_the_ablated_ones(data):
    """An ablated model at chance is what an ablation can find: the claims on Figure 3 are gated on
    the full-input model alone, and the paired intervals judge the ablated ones."""
    from rcstudy.experiments.logiqa.ablation import ablation_claims
    from rcstudy.experiments.logiqa.runs import eval_positions

    sizes = ex.Sizes(n_dev=4, n_test_sub=6)
    pos = eval_positions(data, sizes)["test-sub"]
    even = np.zeros((len(pos), 4))
    runs = {a: [{"en-test": even, "losses": [1.4, 1.39]}] for a in ("no paragraph", "no question")}
    majority = ex.majority_system(data)
    ablations = ex.ablation_systems(data, sizes, majority, runs)
    systems = ex.Systems(majority, [], [], majority, [], majority, ablations, [], 0)
    claims = {c.id: c for c in ablation_claims(ex.Config(ablations=("no paragraph", "no question")), systems, data)}
    assert claims["ablations-drop"].rests_on == (majority.name,) == claims["paragraph-matters-more"].rests_on
    assert set(claims["ablations-drop"].evidence["drops"]) == {"no paragraph", "no question"}
