"""ReClor loader: the official layout, the accepted variations, and located errors."""

import json
import shutil
import warnings

import numpy as np
import pytest

from rcstudy.data import reclor
from rcstudy.errors import DataFormatError
from conftest import FIXTURES

DATA = FIXTURES / "data"
BAD = FIXTURES / "malformed" / "reclor"
# The fixtures are far smaller than the official splits; that warning is tested once, below.
pytestmark = pytest.mark.filterwarnings("ignore::rcstudy.data.reclor.SplitSizeWarning")


@pytest.fixture
def fixture_data(monkeypatch):
    monkeypatch.setenv("RCSTUDY_DATA", str(DATA))


def test_fixture_splits_load_with_types_and_hidden_test_labels(fixture_data):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        splits = reclor.load_all()
    assert {s: len(v) for s, v in splits.items()} == {"train": 40, "val": 16, "test": 8}
    # Fixture sizes differ from the official 4,638 / 500 / 1,000: a warning per split, no failure.
    assert sum(issubclass(w.category, reclor.SplitSizeWarning) for w in caught) == 3
    assert all(it.label is None for it in splits["test"])
    assert all(it.label in range(4) for it in splits["train"] + splits["val"])
    # Types: from question_types.json for train/val, from the item's own field for test.
    first = json.loads((DATA / "reclor" / "question_types.json").read_text())["train"]["train_0"]
    assert splits["train"][0].meta["question_type"] == reclor.QUESTION_TYPES[first]
    test0 = json.loads((DATA / "reclor" / "test.json").read_text())[0]
    assert splits["test"][0].meta["question_type"] == reclor.QUESTION_TYPES[test0["question_type"]]
    assert splits["val"][0].meta["split"] == "val"


@pytest.mark.parametrize("value, expected", [(2, 2), ("3", 3), (" 0 ", 0), ("b", 1), ("D", 3), (None, None)])
def test_label_forms(value, expected, tmp_path):
    assert reclor.parse_label(value, tmp_path / "x.json") == expected


@pytest.mark.parametrize("value", [4, -1, "E", "AB", True, 1.0, ""])
def test_bad_labels_are_refused(value, tmp_path):
    with pytest.raises(DataFormatError):
        reclor.parse_label(value, tmp_path / "x.json", item="val_3")


def test_jsonl_with_string_labels_and_type_names(tmp_path):
    rows = [{**ROW, "label": "C", "id_string": "val_0", "question_type": 3},
            {**ROW, "label": " 1 ", "id_string": "val_1", "question_type": "Weaken"}]
    items = reclor.read_split_file(_write_jsonl(tmp_path / "val.jsonl", rows))
    assert [it.label for it in items] == [2, 1]
    assert items[1].meta == {"question_type": "Weaken", "line": 2}


def _write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


ROW = {"context": "c", "question": "q", "answers": list("abcd")}


@pytest.mark.parametrize("label, problem", [
    (None, "missing label (this split is labelled)"),
    (True, "label True is neither an option index"),
    (1.0, "label 1.0 is neither an option index"),
    (4, "label 4 is outside the 4 options"),
    ([1], "label [1] is neither an option index"),
])
def test_labelled_split_refuses_an_item_without_a_valid_label(tmp_path, label, problem):
    second = {**ROW, "id_string": "val_1"} if label is None else {**ROW, "id_string": "val_1", "label": label}
    path = _write_jsonl(tmp_path / "val.jsonl", [{**ROW, "id_string": "val_0", "label": 0}, second])
    with pytest.raises(DataFormatError) as e:
        reclor.read_split_file(path)
    assert str(e.value).startswith(f"{path}:2 (item val_1): {problem}"), str(e.value)


def test_deleting_a_label_from_val_json_is_refused(tmp_path, monkeypatch):
    shutil.copytree(DATA / "reclor", tmp_path / "reclor")
    val = tmp_path / "reclor" / "val.json"
    rows = json.loads(val.read_text())
    del rows[3]["label"]
    val.write_text(json.dumps(rows))
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    with pytest.raises(DataFormatError, match=rf"val.json \(item {rows[3]['id_string']}\): missing label"):
        reclor.load_split("val")


def test_test_split_labels_and_types_are_all_or_none(tmp_path):
    path = tmp_path / "test.jsonl"
    rows = [{**ROW, "id_string": f"test_{k}", "question_type": 2} for k in range(3)]
    assert [it.label for it in reclor.read_split_file(_write_jsonl(path, rows))] == [None] * 3
    rows[1]["label"] = 2  # one label among hidden ones
    with pytest.raises(DataFormatError, match=r"test.jsonl:2 \(item test_1\): field 'label' is given here"):
        reclor.read_split_file(_write_jsonl(path, rows))
    del rows[1]["label"], rows[2]["question_type"]  # one type missing among given ones
    with pytest.raises(DataFormatError, match=r"test.jsonl:3 \(item test_2\): field 'question_type' is missing"):
        reclor.read_split_file(_write_jsonl(path, rows))


@pytest.mark.parametrize("content", ["[]", "", "\n\n"])
def test_empty_split_file_is_refused(tmp_path, content):
    path = tmp_path / "train.json"
    path.write_text(content)
    with pytest.raises(DataFormatError, match="train.json: the file has no items"):
        reclor.read_split_file(path)


@pytest.mark.parametrize("name, where, problem", [
    ("missing_question.json", " (item val_1)", "missing field 'question'"),
    ("three_answers.jsonl", ":2 (item train_1)", "has 3 options, expected 4"),
    ("bad_label.jsonl", ":3 (item val_1)", "label 'E'"),
    ("duplicate_id.json", " (item val_0)", "duplicate id_string 'val_0' (first at position 0)"),
    ("syntax_error.json", ":3", "invalid JSON"),
    ("bad_question_type.json", " (item test_0)", "question type 17"),
    ("label_arabic_indic_digit.jsonl", ":2 (item val_1)", "label '٣' is neither an option index 0-3 nor a letter A-D"),
    ("label_superscript_digit.jsonl", ":2 (item val_1)", "label '²' is neither an option index 0-3 nor a letter A-D"),
    ("zero_width_option.jsonl", ":2 (item val_1)", "the answer 2 (C) is empty ('\\u200b': only whitespace or invisible"),
    ("empty_context.jsonl", ":2 (item val_1)", "the context is empty"),
    ("identical_options.jsonl", ":2 (item val_1)", "answer 1 (B) repeats answer 0 (A)"),
])
def test_malformed_files_name_file_location_and_problem(name, where, problem):
    path = BAD / name
    with pytest.raises(DataFormatError) as e:
        reclor.read_split_file(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}{where}: "), msg
    assert problem in msg


def test_question_types_file_with_other_names_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "reclor"
    shutil.copytree(DATA / "reclor", folder)
    shutil.copy(BAD / "question_types_wrong_names.json", folder / "question_types.json")
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    with pytest.raises(DataFormatError, match="question_types.json: 'names' differ"):
        reclor.load_split("val")


def test_side_files_supply_test_labels_and_types(tmp_path, fixture_data):
    labels = tmp_path / "test_labels.json"
    labels.write_text(json.dumps({"test_0": "A", "test_3": 2}))
    types = tmp_path / "test_types.json"
    own = json.loads((DATA / "reclor" / "test.json").read_text())[1]["question_type"]
    types.write_text(json.dumps({"test_1": own}))  # a side file may repeat the item's own type
    test = reclor.load_split("test", labels_file=labels, types_file=types)
    assert [it.label for it in test[:4]] == [0, None, None, 2]
    assert test[1].meta["question_type"] == reclor.QUESTION_TYPES[own] != "Role"
    types.write_text(json.dumps({"test_1": "Role"}))  # but not contradict it
    with pytest.raises(DataFormatError, match=r"test.json \(item test_1\): question_type '.*' contradicts 'Role'"):
        reclor.load_split("test", types_file=types)
    bad = tmp_path / "bad_labels.json"
    bad.write_text(json.dumps({"test_5": 7}))
    with pytest.raises(DataFormatError, match=r"bad_labels.json \(item test_5\): label 7"):
        reclor.load_split("test", labels_file=bad)


def test_leaderboard_array_orders_by_test_number(tmp_path, fixture_data):
    test = reclor.load_split("test")
    shuffled = [test[i] for i in (2, 0, 1, 3, 4, 5, 6, 7)]
    pred = np.array([3, 0, 1, 2, 2, 2, 2, 2])
    arr = reclor.leaderboard_array(shuffled, pred)
    assert arr.tolist() == [0, 1, 3, 2, 2, 2, 2, 2] and arr.dtype == np.int64
    path = reclor.write_leaderboard_file(shuffled, pred, tmp_path / "preds.npy")
    assert np.load(path).tolist() == arr.tolist()
    with pytest.raises(ValueError, match="test_0 … test_6"):
        reclor.leaderboard_array(test[1:], pred[1:])
    with pytest.raises(ValueError, match="option indices"):
        reclor.leaderboard_array(test, pred + 2)


def _reclor_copy(tmp_path, monkeypatch, split, edit):
    folder = tmp_path / "reclor"
    shutil.copytree(DATA / "reclor", folder, dirs_exist_ok=True)
    rows = json.loads((folder / f"{split}.json").read_text())
    edit(rows, folder)
    (folder / f"{split}.json").write_text(json.dumps(rows))
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    return folder


def test_a_question_in_two_splits_is_refused_naming_both(tmp_path, monkeypatch):
    def copy_val_item(rows, folder):  # a val question copied into train under a new id
        rows.append({**json.loads((folder / "val.json").read_text())[2], "id_string": "train_777"})
    folder = _reclor_copy(tmp_path, monkeypatch, "train", copy_val_item)
    with pytest.raises(DataFormatError) as e:
        reclor.load_all()
    assert str(e.value) == (f"{folder / 'val.json'} (item val_2): the same question (context, question and options) "
                            f"as train.json (item train_777): leakage between splits")
    assert "\n" not in str(e.value)


def test_an_id_in_two_splits_is_refused_naming_both(tmp_path, monkeypatch):
    folder = _reclor_copy(tmp_path, monkeypatch, "test", lambda rows, folder: rows[1].__setitem__("id_string", "val_0"))
    with pytest.raises(DataFormatError, match=r"test.json \(item val_0\): the same id as val.json \(item val_0\): "
                                              r"leakage between splits$"):
        reclor.load_all()


def test_the_release_s_own_repeats_are_declared():
    assert {frozenset(g) for g in reclor.KNOWN_REPEATS} >= {frozenset({("train", "train_983"), ("test", "test_405")})}
    assert all(len(g) == 2 and {s for s, _ in g} == {"train", "test"} for g in reclor.KNOWN_REPEATS)


def test_a_declared_repeat_loads_and_an_undeclared_one_does_not(tmp_path, monkeypatch):
    def repeat(rows, folder, test_id):
        train = json.loads((folder / "train.json").read_text())
        train[0]["id_string"] = "train_983"
        (folder / "train.json").write_text(json.dumps(train))
        rows[0].update({k: train[0][k] for k in ("context", "question", "answers")}, id_string=test_id)
    _reclor_copy(tmp_path, monkeypatch, "test", lambda rows, folder: repeat(rows, folder, "test_405"))
    assert len(reclor.load_all()["test"]) == 8  # the release's own: kept
    _reclor_copy(tmp_path, monkeypatch, "test", lambda rows, folder: repeat(rows, folder, "test_406"))
    with pytest.raises(DataFormatError, match=r"test.json \(item test_406\): the same question .* as train.json "
                                              r"\(item train_983\)"):
        reclor.load_all()


def test_a_stray_file_in_the_folder_is_named(tmp_path, monkeypatch):
    folder = _reclor_copy(tmp_path, monkeypatch, "val", lambda rows, folder: None)
    (folder / "README.md").write_text("the release's documentation is allowed")
    (folder / "val_extra.json").write_text("[]")
    with pytest.raises(DataFormatError) as e:
        reclor.load_split("val")
    assert e.value.path == folder / "val_extra.json" and "not one of the reclor release's files" in str(e.value)
