"""The MetaLogic chapter's pipeline, called without papermill."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd
import pytest

from rcstudy import runtime
from rcstudy.baselines import metalogic_rules as rules
from rcstudy.config import ConfigError
from rcstudy.data import metalogic as ml
from rcstudy.experiments import metalogic as ex
from rcstudy.experiments.metalogic import plots as figures

DATA = Path(__file__).parent / "fixtures" / "data"


def test_config_sections_map_onto_the_engine():
    cfg = ex.Config.load("full")
    engine = ex.engine_config(cfg, seed=2)
    assert (engine.model.partition("@")[0], engine.optimizer, engine.lr, engine.seed) == ("t5-large", "adafactor", 1e-5, 2)
    assert engine.gen_max_len == cfg.decoding.gen_max_len and engine.train_layers is None
    assert ex.Config.load("quick") == ex.Config()  # the defaults are the quick profile
    with pytest.raises(ConfigError, match="unknown system"):
        ex.Config.load("quick", {"error_analysis.system": "metgen"})


def test_run_on_the_smoke_config(isolated_cache, monkeypatch):
    monkeypatch.setenv("RCSTUDY_DATA", str(DATA))
    res = ex.run(ex.Config.load("smoke"), runtime.setup("cpu", threads=1))
    for name in ("metalogic_splits", "metalogic_table3", "metalogic_table4", "metalogic_table5", "metalogic_table14",
                 "metalogic_table15_ours", "metalogic_baselines", "metalogic_linearisations"):
        assert isinstance(res.tables[name], pd.DataFrame) and len(res.tables[name]), name
    assert res.facts["metalogic_n_test"] == 3 and res.facts["metalogic_main_label"] == "All-at-Once (tiny-llama)"
    assert res.facts["metalogic_roundtrip_min"] == 100.0
    assert [c.id for c in res.claims.claims] == [
        "certainty-hard", "nodes-high-steps-low", "formula-around-60", "rebut-easier", "scale-fast-then-flat",
        "metgen-best", "errors-variables", "errors-contingent"]
    assert res.claims.claims[5].holds is None  # MetGen is not trained here
    assert set(res.training.losses) == {"All-at-Once, seed 0", "Multitask, seed 0"}
    assert set(res.scale.frame.system) == {"Features (logistic regression)", "All-at-Once (tiny-llama)"}


def test_the_full_profiles_plan_counts_the_few_shot_prompt_once_and_its_decoding_steps(fixture_data):
    """The full profile's few-shot job on two fixture passages: each prompt runs once
    (⌈characters / 4⌉ tokens and a start token), then 256 decoding steps for the batch of both,
    each reading every weight once; the fine-tuned T5's jobs tell its encoder's tokens from its
    decoder's, in training and in decoding."""
    import math

    from rcstudy import plan
    from rcstudy.jobs import Tokens
    from rcstudy.prompts import metalogic as prompts

    cfg = plan.chapter_config("metalogic", "full", {"fewshot.n": 2})
    jobs = {j.name: j for j in ex.jobs(cfg)}
    shots, graphs = ex.fewshot_inputs(cfg, ex.job_splits())
    assert len(graphs) == 2 and cfg.fewshot.max_new_tokens == 256
    hand = sum(math.ceil(len(prompts.fewshot_prompt(shots, g)) / 4) + 1 for g in graphs)
    job = jobs[f"few-shot {cfg.fewshot.model}"]
    assert job.tokens == Tokens(forward=hand, generated=2 * 256, decode_steps=256)
    cost = plan.job_cost(job, plan.GPUS["h100"])
    assert cost.generate_seconds > 0 and cost.flops == pytest.approx(2 * plan.model_size(job.model).params * (hand + 512))
    t5 = jobs["All-at-Once seed 1"].tokens
    assert min(t5.train, t5.train_target, t5.forward, t5.generated) > 0 and t5.forward_target == 0


def test_drawing():
    matplotlib.use("Agg")
    g = next(g for s in ml.SPLITS for g in ml.load_metagraphs(DATA / "metalogic" / f"metalogic_{s}.json")
             if g.id == "train_1300")
    preds = {g.id: rules.trivial_prediction(g)}
    fig = figures.pairs([g], preds, ["train_1300"], "trivial")
    assert len(fig.axes) == 8  # the requested passage, then best, median and worst: gold beside prediction
    steps = figures.pair_steps([g], preds, ["train_1300"])
    assert list(steps.index) == ["requested (train_1300)", "best", "median", "worst"]
    assert steps.at["best", "gold steps"] == g.proof.strip()
    pos = figures.layout(g)
    assert pos["sent1"][1] > pos["sent4"][1] > pos["sent2"][1]  # the conclusion on top
