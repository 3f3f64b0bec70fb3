"""The chapter pipeline on the fixtures: runs, cross-fitting, caching, exports, the paper's tables,
and run() on the smoke configuration."""

import re
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from rcstudy import exports, papers, report, runtime
from rcstudy.baselines import bilstm, ngram
from rcstudy.config import ConfigError
from rcstudy.data import reclor
from rcstudy.experiments import reclor as ex
from rcstudy.experiments import shared
from rcstudy.models import mc
from conftest import FIXTURES

CONFIG = ex.Config(
    seeds=(1, 2), encoder=ex.Encoder(mode="frozen", seeds=None, max_length={"A": 32, "QA": 64, "CQA": 96}, head=ex.Head(epochs=3)),
    sizes=ex.Sizes(train_questions={"A": None, "QA": None, "CQA": 12}, bilstm_questions=12),
    fasttext=ex.FastText(dim=8, epochs=2), bilstm=ex.BiLSTM(emb_dim=8, hidden=4, epochs=1), crossfit=ex.CrossFit(folds=2))


@pytest.fixture
def runner(isolated_cache, monkeypatch, tmp_path):
    monkeypatch.setenv("RCSTUDY_DATA", str(FIXTURES / "data"))
    monkeypatch.setenv("RCSTUDY_EXPORTS", str(tmp_path / "exports"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", reclor.SplitSizeWarning)
        splits = reclor.load_all()
    return ex.Runner(CONFIG, splits, runtime.setup("cpu", threads=1))


@pytest.mark.parametrize("family", ["fastText", "Bi-LSTM", "tiny-bert"])
def test_seed_runs_shapes_and_cache(runner, family, monkeypatch):
    val, test = runner.splits["val"], runner.splits["test"]
    runs = runner.seed_runs(family, "A", {"val": val, "test": test})
    assert runs["val"].shape == (2, len(val), 4) and runs["test"].shape == (2, len(test), 4)
    # A second call is served from the on-disk cache: nothing is trained again.
    monkeypatch.setattr(ngram, "fit_predict_mc", lambda *a, **k: pytest.fail("retrained fastText"))
    monkeypatch.setattr(bilstm, "fit_predict_mc", lambda *a, **k: pytest.fail("retrained the Bi-LSTM"))
    monkeypatch.setattr(mc, "fit_linear_head", lambda *a, **k: pytest.fail("retrained the head"))
    again = runner.seed_runs(family, "A", {"val": val, "test": test})
    np.testing.assert_array_equal(runs["val"], again["val"])


def test_train_questions_subsample_neural_runs_only(runner):
    assert len(runner.train_items("Bi-LSTM", "CQA")) == 12
    assert len(runner.train_items("fastText", "CQA")) == len(runner.splits["train"])
    # the encoders' draw leaves out RULE's main questions (the RULE chapter evaluates on them)
    held = shared.rule_main_ids()
    drawn = runner.train_items("Bi-LSTM", "CQA")
    assert runner.train_items("tiny-bert", "CQA") == [it for it in drawn if it.id not in held]
    assert any(it.id in held for it in drawn)
    assert len(runner.train_items("tiny-bert", "CQA", option_only=True)) == len(runner.splits["train"])


def test_fine_tuned_encoders_have_their_own_seeds_and_report_losses(runner):
    cfg = ex.Config(seeds=(1, 2), encoder=ex.Encoder(finetune=ex.FineTune(max_length=64, epochs=2, batch_size=4)))
    assert cfg.seeds_of("tiny-bert") == (0,) and cfg.seeds_of("fastText") == (1, 2)
    assert cfg.seeds_of("tiny-bert", option_only=True) == (1, 2)
    assert ex.Config(encoder=ex.Encoder(seeds=None)).seeds_of("tiny-bert") == (1, 2, 3, 4)
    fine = ex.Runner(cfg, runner.splits, runner.rt)
    runs = fine.seed_runs("tiny-bert", "CQA", {"val": runner.splits["val"]})
    assert runs["val"].shape[0] == 1 and len(runs["losses"]) == 1 and len(runs["losses"][0]) > 1
    # the option-only models of Eq. 1 stay frozen (no losses) and use the chapter's seeds
    frozen = fine.seed_runs("tiny-bert", "A", {"val": runner.splits["val"]}, option_only=True)
    assert frozen["val"].shape[0] == 2 and "losses" not in frozen


def test_the_default_encoder_is_the_shared_reclor_model():
    cfg = ex.Config()
    assert cfg.encoder.mode == "finetune" and cfg.seeds_of(cfg.headline) == (shared.RECLOR_ENCODER.seed,)
    assert cfg.encoder.finetune.engine(cfg.headline, "CQA", 0) == shared.RECLOR_ENCODER


def test_cross_fit_labels_every_training_item_and_exports(runner, tmp_path):
    train, val = runner.splits["train"], runner.splits["val"]
    cf = {f: runner.cross_fit(f) for f in ("fastText", "tiny-bert")}
    assert cf["fastText"].shape == (2, len(train), 4)
    eh_train = ex.easy_hard(cf, train)
    eh_val = ex.easy_hard({f: runner.seed_runs(f, "A", {"val": val})["val"] for f in cf}, val)
    path = exports.write_easy_hard({"val": eh_val, "train": eh_train})
    assert path == tmp_path / "exports" / exports.EASY_HARD
    frame = pd.read_csv(path)
    assert len(frame) == len(val) + len(train) and frame["id_string"].is_unique
    assert set(frame["subset"]) <= {"EASY", "HARD"}
    assert {"right_all_seeds:fastText", "right_all_seeds:tiny-bert", "runs_right", "runs_total"} <= set(frame)
    easy = frame[frame["subset"] == "EASY"]
    assert (easy[["right_all_seeds:fastText", "right_all_seeds:tiny-bert"]].max(axis=1) == 1).all()


def test_tables_and_leaderboard_file(runner, tmp_path):
    val, test = runner.splits["val"], runner.splits["test"]
    keys = [("fastText", "CQA"), ("tiny-bert", "A")]
    results = {k: runner.seed_runs(*k, {"val": val})["val"] for k in keys}
    eh = ex.easy_hard({"fastText": results[("fastText", "CQA")]}, val)
    t7 = ex.table7(results, val, eh, "BERT_LARGE")
    assert list(t7.index) == ["Chance (C, Q, A)", "fastText (C, Q, A)", "tiny-bert (A) · paper: BERT_LARGE"]
    side = ex.table7_side_by_side(t7, keys, "BERT_LARGE")
    assert side.loc["tiny-bert (A) · paper: BERT_LARGE", ("Val", "paper")] == "46.4"
    assert side.loc["fastText (C, Q, A)", ("HARD", "paper")] == "23.4"
    assert side.loc["fastText (C, Q, A)", ("Test (hidden)", "ours")] == "n/a"
    # fastText's EASY items are, by construction, the ones it always gets right.
    assert t7.loc["fastText (C, Q, A)", "Val-E"].mean == 100.0
    scores = runner.seed_runs("fastText", "CQA", {"val": val, "test": test})["test"]
    path = exports.write_npy(ex.leaderboard_file_name("fastText", 1),
                             reclor.leaderboard_array(test, scores[0].argmax(axis=1)))
    assert path == tmp_path / "exports" / "reclor_test_preds_fastText_CQA_seed1.npy"
    assert np.load(path).tolist() == scores[0].argmax(axis=1).tolist()  # the fixture's test ids are in order


def test_finetune_settings_come_from_table9():
    table9 = ex.FineTune(lr=None, epochs=None, weight_decay=None, warmup=None, max_length=None)
    cfg = replace(table9, batch_size=8, grad_accum=3).engine("roberta-large", "CQA", seed=5)
    assert (cfg.lr, cfg.weight_decay, cfg.epochs, cfg.max_length) == (1e-5, 0.01, 10, 256)
    assert (cfg.batch_size * cfg.grad_accum, cfg.seed, cfg.fields) == (24, 5, "CQA")
    assert table9.engine("minilm-l6", "A", 0).lr == papers.value("reclor", "Table 9", "Learning Rate", "BERT_BASE")
    assert replace(table9, lr=3e-5).engine("roberta-large", "A", 0).lr == 3e-5  # a value given overrides Table 9
    # the full profile asks for Table 9's values; the quick profile's are the shared model's
    full = ex.Config.load("full")
    assert full.encoder.finetune.engine(full.headline, "CQA", 0).lr == 1e-5  # a pinned id reads its model's column
    with pytest.raises(ConfigError, match="encoder.mode"):
        ex.Config.load("quick", {"encoder.mode": "lora"})


def test_the_headline_model_and_table7_runs_come_from_main_models():
    cfg = ex.Config.load("full")
    rl, gpt2 = cfg.headline, cfg.main_models[6]
    assert rl.startswith("roberta-large@") and gpt2.startswith("gpt2@")  # pinned Hub ids
    assert ex.row_label(rl, "CQA", "BERT_BASE") == "RoBERTa_LARGE (C, Q, A)" and ex.paper_name(gpt2) == "GPT-2"
    runs = cfg.table7_runs()
    assert runs[:5] == [("fastText", "CQA"), ("Bi-LSTM", "CQA"), (rl, "A"), (rl, "QA"), (rl, "CQA")]
    assert (gpt2, "CQA") in runs and (gpt2, "A") not in runs and len(runs) == 2 + 3 * 3 + 5
    one = ex.Config.load("full", {"main_models": ["roberta-large"]})  # partial_inputs outside main_models: ignored
    assert one.table7_runs()[2:] == [("roberta-large", "A"), ("roberta-large", "QA"), ("roberta-large", "CQA")]
    with pytest.raises(ConfigError, match="main_models"):
        ex.Config.load("quick", {"main_models": []})
    with pytest.raises(ConfigError, match="model"):
        ex.Config.load("quick", {"model": "roberta-large"})  # the old name is gone, not silently ignored


def test_run_on_the_smoke_config(isolated_cache, monkeypatch, tmp_path):
    monkeypatch.setenv("RCSTUDY_DATA", str(FIXTURES / "data"))
    monkeypatch.setenv("RCSTUDY_EXPORTS", str(tmp_path))
    # a row at chance says what the full profile would spend on it (here a stand-in for rcstudy.plan.row_needs)
    res = ex.run(ex.Config.load("smoke"), runtime.setup(device="cpu", threads=1),
                 full_profile=lambda rows: {row: "seven GPU hours" for row in rows})
    assert {"reclor_splits", "reclor_table2", "reclor_table3", "reclor_table5", "reclor_table5_variants",
            "reclor_option_length", "reclor_table6", "reclor_table27", "reclor_easy_hard_sizes", "reclor_table7",
            "reclor_table7_paper", "reclor_test_files"} <= set(res.tables)
    assert res.facts["reclor_n_val"] == 16 and res.facts["reclor_n_seeds"] == 2 and res.facts["reclor_folds"] == 2
    assert res.facts["reclor_model"].data == "`tiny-bert`"
    assert res.facts["reclor_n_easy"] + res.facts["reclor_n_hard"] == 16
    assert [c.id for c in res.claims.claims] == [s.id for s in papers.claims("reclor")]
    assert list(res.tables["reclor_test_files"].index) == ["fastText", "Bi-LSTM", "tiny-bert"]
    # every run that reports its losses has a row, a curve and, if it did not learn, a warning
    trained = res.tables["reclor_trained"]
    assert set(trained.index) == set(res.losses) and "Bi-LSTM (C, Q, A)" in trained.index
    # the losses keep three decimals (not 1.4 vs 1.4); learned is read from the val accuracy against chance
    assert all(re.fullmatch(r"\d+\.\d{3}( → \d+\.\d{3})?", v) for v in [*trained["training loss"], *trained["ln 4"]])
    assert {"held-out loss", "held-out accuracy", "chance"} <= set(trained.columns)
    stuck = trained.index[trained["learned"] == "NO"]
    assert all(report.md_text(name) in res.facts["reclor_t7_warnings"].data for name in stuck)  # names shown as text
    assert res.facts["reclor_t7_warnings"].data.count("The full profile would need seven GPU hours") == len(stuck)
    assert (tmp_path / exports.EASY_HARD).is_file()
    assert len(pd.read_csv(tmp_path / exports.EASY_HARD)) == res.facts["reclor_export_rows"]


def test_a_trained_row_needs_its_full_profile_counterpart_on_the_same_input(fixture_data):
    """The headline encoder's rows are the full profile's headline on the same input (every seed),
    the Bi-LSTM its notebook job; an encoder the full profile does not train names its step alone."""
    from rcstudy import plan

    cfg, full = ex.Config.load("smoke"), ex.Config.load("full")
    rows = ex.full_profile_rows(cfg, [("tiny-bert", "QA"), ("tiny-llama", "CQA"), ("Bi-LSTM", "CQA")])
    assert rows["Bi-LSTM (C, Q, A)"] == {"step": "notebook_job", "arguments": {"family": "Bi-LSTM", "fields": "CQA"}}
    assert rows["tiny-llama (C, Q, A) · paper: BERT_LARGE"] == {"step": "table7_job"}
    needs = plan.row_needs("reclor", rows)
    headline = [f"roberta-large (QA) seed {s}" for s in full.seeds]
    assert needs["tiny-bert (Q, A) · paper: BERT_LARGE"].endswith(
        f"GPU hours on one H100 (4 jobs: {', '.join(headline[:3])} and 1 more)")
    assert needs["Bi-LSTM (C, Q, A)"] == ("1 job (Bi-LSTM (CQA) in the notebook) of a model trained from scratch, "
                                          "whose GPU hours the plan does not estimate")
    assert "all its table7_job jobs, having no one counterpart there" in needs["tiny-llama (C, Q, A) · paper: BERT_LARGE"]


def test_published_tables_are_consistent():
    t7 = papers.table("reclor", "Table 7")
    models = t7.drop(["Graduate Students (C, Q, A)", "Ceiling Performance (C, Q, A)"])
    easy_share = papers.value("reclor", "Table 6", "Union", "Number") / papers.value("reclor", "§3.2", "test", "items")
    gap = (easy_share * models["Test-E"] + (1 - easy_share) * models["Test-H"] - models["Test"]).abs()
    assert gap.max() <= 0.051
    t5 = papers.table("reclor", "Table 5")
    # Every score is an exact fraction count / Freq.
    assert np.allclose((t5["Score (%)"] * t5["Freq"] / 100).round(), t5["Score (%)"] * t5["Freq"] / 100, atol=0.02)
    assert papers.table("reclor", "Table 3")["Test (%)"].sum() == pytest.approx(100.0)
    assert list(papers.table("reclor", "Table 3").index) == list(reclor.QUESTION_TYPES)
    t27 = papers.table("reclor", "Table 27")
    assert t27.shape == (5, 5) and np.isnan(t27.values[np.tril_indices(5, -1)]).all()
