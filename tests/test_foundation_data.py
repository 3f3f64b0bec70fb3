"""Data layer: the data directory, clear errors for missing and malformed files."""


import pytest

from rcstudy.data import MCItem, dataset_file
from rcstudy.data.io import iter_jsonl, read_json, require_fields
from rcstudy.errors import DataFileMissing, DataFormatError


def test_data_dir_comes_from_environment(tmp_path, monkeypatch):
    (tmp_path / "reclor").mkdir()
    (tmp_path / "reclor" / "val.json").write_text("[]")
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    assert dataset_file("reclor", "val.json") == tmp_path / "reclor" / "val.json"


def test_missing_file_names_path_and_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    with pytest.raises(DataFileMissing) as e:
        dataset_file("logiqa", "Test.txt")
    msg = str(e.value)
    assert str(tmp_path / "logiqa" / "Test.txt") in msg
    assert "github.com/lgw863/LogiQA-dataset" in msg and "RCSTUDY_DATA" in msg


def test_malformed_json_names_file_and_line(tmp_path):
    path = tmp_path / "val.json"
    path.write_text('[\n {"a": 1},\n {"a": 2,,}\n]')
    with pytest.raises(DataFormatError) as e:
        read_json(path)
    assert e.value.line == 3 and str(e.value).startswith(f"{path}:3:")


def test_jsonl_reports_the_bad_line_and_skips_blank_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n{"a": \n')
    it = iter_jsonl(path)
    assert next(it) == (1, {"a": 1})
    assert next(it) == (3, {"a": 2})
    with pytest.raises(DataFormatError, match=r"x.jsonl:4: invalid JSON"):
        next(it)


def test_jsonl_rejects_non_objects(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text("[1, 2]\n")
    with pytest.raises(DataFormatError, match="x.jsonl:1: expected a JSON object, got list"):
        list(iter_jsonl(path))


def test_non_utf8_file_is_a_format_error(tmp_path):
    path = tmp_path / "x.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(DataFormatError, match="not UTF-8"):
        read_json(path)


def test_require_fields_names_field_type_and_item(tmp_path):
    path = tmp_path / "f.json"
    require_fields({"a": "x", "b": [1]}, {"a": str, "b": list}, path)
    with pytest.raises(DataFormatError, match=r"f.json:7 \(item q1\): missing field 'c'"):
        require_fields({"a": "x"}, {"c": str}, path, line=7, item="q1")
    with pytest.raises(DataFormatError, match="field 'b' should be list, got str"):
        require_fields({"b": "x"}, {"b": list}, path)


def test_mc_item_validates_its_label():
    item = MCItem("1", "c", "q", ("a", "b"), 1)
    assert item.answer == "b"
    assert MCItem("2", "c", "q", ("a", "b"), None).answer is None
    with pytest.raises(ValueError, match="label 2 outside 2 options"):
        MCItem("3", "c", "q", ("a", "b"), 2)
