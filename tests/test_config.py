"""Chapter configurations: defaults in the dataclasses, profiles as differences, one-line errors."""

from __future__ import annotations

from dataclasses import dataclass
import re
from typing import Literal

import pytest

from rcstudy import config
from rcstudy.config import ChapterConfig, ConfigError, param, section
from rcstudy.notebook import chapter_config


@dataclass(frozen=True)
class Encoder:
    model: str = param("minilm-l6", "model name")
    epochs: int = param(1, "training epochs")
    lr: float = param(5e-5, "learning rate")
    train_questions: int | None = param(None, "training questions (none: all)")


@dataclass(frozen=True)
class Toy(ChapterConfig):
    chapter = "toy"
    seeds: tuple[int, ...] = param((0, 1), "seeds", ge=0)
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
    with pytest.raises(ConfigError, match="^reclor: missing data file .*profile = \"smoke\" in the parameters cell, "
                                          "or papermill -p profile smoke"):
        chapter_config(Toy, {"profile": "quick", "data": str(tmp_path)})
    monkeypatch.setenv("RCSTUDY_PREFLIGHT_DONE", "1")
    assert chapter_config(Toy, {"profile": "quick", "data": str(tmp_path)}) == Toy.load("quick")


# --- parameters are data ------------------------------------------------------------------------

@pytest.mark.parametrize("text, refused", [
    ("{train_steps: !!binary aW1wb3J0IG9z}", "the YAML tag !!binary is not allowed"),
    ("!!python/object/apply:os.system [echo hi]", "!!python/object/apply:os.system is not allowed"),
    ("!!set {a, b}", "!!set is not allowed"),
    ("[&a [1, 2], *a]", "anchors"),
    ("*a", "aliases"),
])
def test_yaml_values_are_plain_data(text, refused):
    with pytest.raises(ConfigError, match=re.escape(refused)):
        config.parse_yaml(text, "parameter 'x'")


def test_a_date_stays_text():
    assert config.parse_yaml("2024-01-01", "parameter 'x'") == "2024-01-01"


def test_an_alias_bomb_is_refused_at_once_in_one_short_line():
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    with pytest.raises(ConfigError) as e:
        config.parse_yaml(bomb, "parameter 'run_settings'")
    assert "\n" not in str(e.value) and len(str(e.value)) < 300
    with pytest.raises(ConfigError, match="at most 10,000"):
        config.parse_yaml("[" + "1," * 6000 + "1]", "parameter 'seeds'")


@pytest.mark.parametrize("override, message", [
    ({"seeds": [-1]}, "parameter 'seeds[0]' expects a number >= 0, got -1"),
    ({"encoder.epochs": 0}, "parameter 'encoder.epochs' expects a number > 0, got 0"),
    ({"encoder.lr": float("nan")}, "parameter 'encoder.lr' expects a finite number, got nan"),
    ({"encoder.lr": float("inf")}, "parameter 'encoder.lr' expects a finite number, got inf"),
    ({"encoder.lr": -1e-5}, "parameter 'encoder.lr' expects a number > 0"),
    ({"max_length": {"A": -5}}, "parameter 'max_length.A' expects a number > 0, got -5"),
    ({"encoder.train_questions": 0}, "parameter 'encoder.train_questions' expects a number > 0, got 0"),
])
def test_numbers_out_of_their_declared_range_are_refused_before_anything_runs(chapters, override, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        Toy.load("quick", override)


def test_an_error_quotes_at_most_eighty_characters_of_a_value(chapters):
    with pytest.raises(ConfigError) as e:
        Toy.load("quick", {"encoder.epochs": "x" * 5000})
    assert len(str(e.value)) < 200 and "\n" not in str(e.value)


def test_every_chapter_configuration_has_a_closed_schema():
    """No field of any chapter's configuration is Any, a bare list or dict, or another class:
    every value that reaches a notebook is plain data that papermill writes as a literal."""
    import types
    import typing
    from dataclasses import fields, is_dataclass

    from rcstudy.chapters import config_class, toc_chapters

    def closed(tp, where):
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if tp in (bool, int, float, str, type(None)) or origin is Literal:
            return
        if is_dataclass(tp):
            hints = typing.get_type_hints(tp)
            for f in fields(tp):
                closed(hints[f.name], f"{where}.{f.name}")
            return
        assert origin in (typing.Union, types.UnionType, tuple, list, dict) and args, f"{where}: {tp!r}"
        for a in args:
            if a is not Ellipsis:
                closed(a, where)

    for chapter in toc_chapters():
        cls = config_class(chapter)
        if cls is not None:
            closed(cls, chapter)
    with pytest.raises(TypeError, match="not supported"):
        config.coerce({"a": 1}, dict, "x")


def test_the_runner_injects_only_literals_and_refuses_repeats_and_nulls():
    from rcstudy import run

    with pytest.raises(ConfigError, match="given twice"):
        run.parse_overrides(["seeds=[1]", "seeds=[2]"])
    with pytest.raises(ConfigError, match="expects a directory"):
        run.load_params("reclor", "smoke", run.parse_overrides(["data=null"]))
    with pytest.raises(ConfigError, match="'run_preset' = null cannot reach the notebook"):
        run.load_params("benchmarks", "smoke", {"run_preset": None})
    params = run.load_params("benchmarks", "smoke", run.parse_overrides(["run_settings={train_steps: 2}"]))
    assert params["run_settings"]["train_steps"] == 2
    with pytest.raises(ConfigError, match="run_settings.train_steps' expects a number > 0"):
        run.load_params("benchmarks", "smoke", {"run_settings": {"train_steps": -1}})
    with pytest.raises(ConfigError, match=r"run_stages\[0\]' expects one of train, quality"):
        run.load_params("benchmarks", "smoke", {"run_stages": ["trian"]})
    with pytest.raises(ConfigError, match="unknown parameter 'run_settings.train_stpes'"):
        run.load_params("benchmarks", "smoke", {"run_settings": {"train_stpes": 1}})
    with pytest.raises(ConfigError, match="holds a bytes"):
        config.literal({"a": b"import os"}, "run_settings")
