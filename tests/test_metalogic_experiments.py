"""The MetaLogic chapter's pipeline, called without papermill."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rcstudy import runtime
from rcstudy.config import ConfigError
from rcstudy.experiments import metalogic as ex

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
    assert set(res.losses) == {"All-at-Once, seed 0", "Multitask, seed 0"}
    assert set(res.scale.system) == {"Features (logistic regression)", "All-at-Once (tiny-llama)"}
