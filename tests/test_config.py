"""Chapter configurations: defaults in the dataclasses, profiles as differences, one-line errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from rcstudy import config
from rcstudy.config import ChapterConfig, ConfigError, param, section


@dataclass(frozen=True)
class Encoder:
    model: str = param("minilm-l6", "model name")
    epochs: int = param(1, "training epochs")
    lr: float = param(5e-5, "learning rate")
    train_questions: int | None = param(None, "training questions (none: all)")


@dataclass(frozen=True)
class Toy(ChapterConfig):
    chapter = "toy"
    seeds: tuple[int, ...] = param((0, 1), "seeds")
    aggregation: Literal["per_split_mean", "pooled"] = param("per_split_mean", "how splits combine")
    max_length: dict[str, int] = param(factory=lambda: {"A": 64, "CQA": 256}, help="tokens per input")
    encoder: Encoder = section(Encoder, "the encoder")
    run_alignment: bool = param(True, "run the alignment analysis")


@pytest.fixture
def chapters(tmp_path, monkeypatch):
    (tmp_path / "params").mkdir()
    monkeypatch.setenv("RCSTUDY_CHAPTERS", str(tmp_path))
    (tmp_path / "params" / "toy.quick.yaml").write_text("profile: quick\nencoder: {epochs: 3}\nseeds: [4]\n")
    (tmp_path / "params" / "toy.smoke.yaml").write_text("profile: smoke\ndata: tests/fixtures/data\n")
    return tmp_path


def test_profile_differences_over_defaults(chapters):
    cfg = Toy.load("quick")
    assert cfg.encoder.epochs == 3 and cfg.encoder.lr == 5e-5 and cfg.seeds == (4,)
    assert Toy.load("smoke") == Toy()


def test_overrides_nested_dotted_and_merged(chapters):
    cfg = Toy.load("quick", {"encoder.lr": "1e-4", "max_length.A": 32, "encoder": {"model": "tiny-bert"}})
    assert cfg.encoder == Encoder("tiny-bert", 3, 1e-4, None)
    assert cfg.max_length == {"A": 32, "CQA": 256}


@pytest.mark.parametrize("overrides, message", [
    ({"seedz": [1]}, "unknown parameter 'seedz'; did you mean 'seeds'?"),
    ({"encoder.epoch": 2}, "did you mean 'encoder.epochs'?"),
    ({"epochs": 2}, "did you mean 'encoder.epochs'?"),
    ({"seeds": [1, "a"]}, "parameter 'seeds[1]' expects int, got 'a'"),
    ({"encoder.epochs": 1.5}, "parameter 'encoder.epochs' expects int, got 1.5"),
    ({"run_alignment": 1}, "expects bool"),
    ({"aggregation": "poled"}, "did you mean 'pooled'?"),
    ({"encoder": 3}, "parameter 'encoder' expects section"),
    ({"import os; os.system('touch PWNED'); x": 1}, "is not a name"),
    ({"seeds": "[1,"}, "not valid YAML"),
])
def test_mistakes_are_one_line_naming_the_parameter(chapters, overrides, message):
    with pytest.raises(ConfigError) as e:
        Toy.load("quick", overrides)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_text_values_are_read_as_yaml_never_as_code(chapters):
    assert Toy.load("quick", {"seeds": "[3, 5]"}).seeds == (3, 5)
    assert Toy.load("quick", {"encoder.train_questions": "null"}).encoder.train_questions is None
    with pytest.raises(ConfigError):
        Toy.load("quick", {"seeds": "__import__('os').system('x')"})


def test_unknown_profile_and_bad_file(chapters):
    with pytest.raises(ConfigError, match="did you mean 'quick'"):
        Toy.load("quik")
    (chapters / "params" / "toy.full.yaml").write_text("seeds: [1,\n")
    with pytest.raises(ConfigError, match=r"toy.full.yaml:\d+: not valid YAML"):
        Toy.load("full")


def test_from_notebook_reads_parameters_and_refuses_unknown_names(chapters, monkeypatch):
    monkeypatch.delenv("RCSTUDY_DATA", raising=False)
    ns = {"profile": "smoke", "data": "tests/fixtures/data", "seeds": [7], "encoder": None, "In": [], "_": 1}
    cfg = Toy.from_notebook(ns)
    assert cfg.seeds == (7,) and cfg.encoder == Encoder()
    import os
    assert os.environ["RCSTUDY_DATA"].endswith("tests/fixtures/data")
    with pytest.raises(ConfigError, match="unknown parameter 'sedes'"):
        Toy.from_notebook({"profile": "quick", "sedes": [1]})


def test_describe_lists_every_field_with_type_and_help(chapters):
    rows = {r["name"]: r for r in Toy.describe("quick")}
    assert rows["encoder.epochs"]["type"] == "int" and rows["encoder.epochs"]["value"] == 3
    assert rows["seeds"]["type"] == "list of int" and rows["seeds"]["description"] == "seeds"
    assert rows["encoder.train_questions"]["type"] == "int or none"


def test_difference_is_what_a_profile_file_holds(chapters):
    assert config.difference(Toy.load("quick"), Toy()) == {"encoder": {"epochs": 3}, "seeds": [4]}


def test_from_notebook_checks_data_like_the_runner(chapters, monkeypatch, tmp_path):
    """Without the runner (plain papermill), the config cell checks the declared datasets itself."""
    monkeypatch.delenv("RCSTUDY_PREFLIGHT_DONE", raising=False)
    monkeypatch.setattr(Toy, "datasets", ("reclor",), raising=False)
    with pytest.raises(ConfigError, match="^reclor: missing data file .*set profile = \"smoke\""):
        Toy.from_notebook({"profile": "quick", "data": str(tmp_path)})
    monkeypatch.setenv("RCSTUDY_PREFLIGHT_DONE", "1")
    assert Toy.from_notebook({"profile": "quick", "data": str(tmp_path)}) == Toy.load("quick")
