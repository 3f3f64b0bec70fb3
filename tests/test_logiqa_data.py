"""LogiQA 1.0 / 2.0 loaders on hand-written fixtures in the official formats, malformed files,
and the text matching (deduplication, type-label proxy) between the two releases."""

from __future__ import annotations

import json

import shutil
from pathlib import Path

import pytest

from rcstudy.data import logiqa as lq
from rcstudy.data.records import MCItem
from rcstudy.errors import DataFileMissing, DataFormatError

FIXTURES = Path(__file__).parent / "fixtures"
DATA = FIXTURES / "data"
BAD = FIXTURES / "malformed" / "logiqa"
BAD2 = FIXTURES / "malformed" / "logiqa2"


@pytest.fixture(autouse=True)
def fixture_data(monkeypatch):
    monkeypatch.setenv("RCSTUDY_DATA", str(DATA))


def test_sizes_and_answers():
    assert [len(lq.load_logiqa(s, lang)) for lang in lq.LANGS for s in ("eval", "test")] == [8, 10, 8, 10]
    ev = lq.load_logiqa("eval")
    assert [it.label for it in ev] == [3, 0, 3, 2, 1, 3, 0, 2]
    assert ev[0].id == "en-eval-0" and ev[0].meta["line"] == 2
    assert ev[0].context.startswith("Every member") and ev[0].question == "Which of the following must be true?"
    assert ev[0].answer == "Lena plays on Tuesday."


def test_out_of_order_options_follow_the_label():
    test = lq.load_logiqa("test")
    valve = test[0]  # printed A., C., B., D. with answer b
    assert valve.meta["reordered"] and valve.meta["raw_labels"] == ("A", "C", "B", "D")
    assert valve.options == ("Only No.1.", "No.1 and No.2.", "No.1 and No.3 only.", "None of them.")
    assert valve.answer == "No.1 and No.2."
    naive = lq.load_logiqa("test", label_mode="position")[0]
    assert not naive.meta["reordered"] and naive.meta["permuted"]
    assert naive.answer == "No.1 and No.3 only."  # the wrong option the line reading gives
    # answer a: both readings agree although the block is permuted
    assert test[1].answer == lq.load_logiqa("test", label_mode="position")[1].answer


def test_label_forms_are_removed():
    ev = lq.load_logiqa("eval")
    assert ev[2].options[0] == "Omar failed the test."  # full-width period
    assert ev[3].options[2] == "The lamp is broken."  # full-width comma
    assert ev[5].options[3] == "Mia cannot open the door."  # lower-case d.
    assert ev[6].options[0] == "The bakery did not open at seven."  # "A " before a capital
    test = lq.load_logiqa("test")
    assert test[2].options == ("Nobody", "Paul", "Rita", "Nina")  # spaced labels on all four lines
    assert test[3].options[0] == "It rained."  # "A?"
    zh = lq.load_logiqa("test", "zh")
    assert zh[3].options[0] == "下雨了。" and zh[4].options[0] == "汤姆超过十岁。" and zh[7].options[3] == "这段文字不是书里的诗。"


def test_letters_belonging_to_the_text_are_kept():
    ev = lq.load_logiqa("eval")
    assert ev[7].options[2] == "Country C.H raised prices after a tax rise."
    assert ev[7].meta["unlabelled"] == (2,)
    test = lq.load_logiqa("test")
    assert test[7].options[0].startswith("When the land in City A.B")


def test_parse_options_rules():
    parsed = lq.parse_options(["A small amount of land.", "B.x", "A small amount in C.A area", "D.y"])
    assert parsed.texts == ("A small amount of land.", "x", "A small amount in C.A area", "y")
    assert parsed.unlabelled == (0, 2)
    assert lq.parse_options(["A first", "B Third", "C Fourth", "D fifth"]).texts == ("first", "Third", "Fourth", "fifth")


def test_chinese_matches_english_structure():
    en, zh = lq.load_logiqa("test"), lq.load_logiqa("test", "zh")
    assert [it.label for it in en] == [it.label for it in zh]
    assert [it.meta["reordered"] for it in en] == [it.meta["reordered"] for it in zh]
    assert zh[0].meta["lang"] == "zh" and zh[0].id == "zh-test-0"


@pytest.mark.parametrize("name, line, words", [
    ("missing_option.txt", 16, "option D line is empty"),
    ("bad_answer.txt", 10, "answer letter"),
    ("truncated.txt", 17, "incomplete block"),
    ("empty_question.txt", 4, "question line is empty"),
    ("no_separator.txt", 17, "blank line that starts a block"),
])
def test_malformed_txt_names_file_and_line(name, line, words):
    with pytest.raises(DataFormatError) as err:
        lq.parse_logiqa_txt(BAD / name, split="eval", lang="en")
    assert err.value.line == line and err.value.path.name == name
    assert f"{name}:{line}:" in str(err.value) and words in str(err.value)


@pytest.mark.parametrize("name, where, words", [
    ("zero_width_option.txt", ":14: ", "option B has a label but no text"),
    ("repeated_option.txt", ":10 (item block 1): ", "option C repeats option A"),
])
def test_invisible_and_repeated_options_are_refused(name, where, words):
    with pytest.raises(DataFormatError) as err:
        lq.parse_logiqa_txt(BAD / name, split="test", lang="en")
    assert str(err.value).startswith(f"{BAD / name}{where}") and words in str(err.value), str(err.value)


def test_the_release_s_repeated_options_are_declared_block_by_block(tmp_path):
    lines = (BAD / "repeated_option.txt").read_text(encoding="utf-8").split("\n")
    path = tmp_path / "Eval.txt"
    path.write_text("\n".join(lines[:8] * 0 + lines), encoding="utf-8")
    with pytest.raises(DataFormatError, match="option C repeats option A"):
        lq.parse_logiqa_txt(path, split="eval", lang="en")  # block 1 of Eval.txt is not one of them
    assert lq.REPEATED_OPTIONS == {("eval", 163): 3, ("eval", 204): 3, ("eval", 236): 3, ("eval", 564): 3}


def test_a_question_in_two_splits_is_refused_naming_both(tmp_path, monkeypatch):
    shutil.copytree(DATA / "logiqa", tmp_path / "logiqa")
    eval_lines = (DATA / "logiqa" / "Eval.txt").read_text(encoding="utf-8").split("\n")
    test = tmp_path / "logiqa" / "Test.txt"
    test.write_text("\n".join(eval_lines[8:16] + test.read_text(encoding="utf-8").split("\n")), encoding="utf-8")
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    with pytest.raises(DataFormatError) as err:
        lq.load_logiqa("test")
    assert str(err.value) == (f"{test}:2 (item block 0): the same question (context, question and options) as "
                              f"Eval.txt:10 (item block 1): leakage between splits")
    assert len(lq.load_logiqa("test", "zh")) == len(lq.load_logiqa("test", "zh", source="folder"))  # not compared with English


def test_a_stray_file_in_the_folder_is_named(tmp_path, monkeypatch):
    shutil.copytree(DATA / "logiqa", tmp_path / "logiqa")
    (tmp_path / "logiqa" / "Dev.txt").write_text("")
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    with pytest.raises(DataFormatError, match=r"logiqa/Dev.txt: the file is not one of the logiqa release's files"):
        lq.load_logiqa("eval")


def test_not_utf8_is_reported():
    with pytest.raises(DataFormatError, match="latin1.txt:3: not UTF-8"):
        lq.parse_logiqa_txt(BAD / "latin1.txt", split="eval", lang="en")


def test_missing_file_says_where(tmp_path, monkeypatch):
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    with pytest.raises(DataFileMissing, match="Eval.txt"):
        lq.load_logiqa("eval")
    with pytest.raises(ValueError):
        lq.load_logiqa("dev")


def test_logiqa2_fields_types_and_labels():
    dev = lq.load_logiqa2("dev")
    assert len(dev) == 8 and dev[0].id == "logiqa2-dev-101" and dev[0].label == 3
    assert dev[0].meta["types"] == ("sufficient", "conjunctive")
    assert dev[6].meta["types"] == ("necessary", "conjunctive")  # the release's misspelt key
    ood = lq.load_logiqa2("ood_test")[0]
    assert ood.options[1] == "Jo's ticket is valid tomorrow." and ood.meta["types"] == ()


@pytest.mark.parametrize("name, line, words", [
    ("invalid_json.txt", 2, "invalid JSON"),
    ("three_options.txt", 3, "4 non-empty option strings"),
    ("answer_out_of_range.txt", 2, "not an option index"),
    ("unknown_type.txt", 1, "unknown reasoning type"),
    ("missing_question.txt", 2, "missing field 'question'"),
    ("duplicate_id.txt", 2, "duplicate id 101 (first at line 1)"),
    ("invisible_question.txt", 2, "the question is empty (only invisible characters"),
    ("deeply_nested_type.txt", 2, "invalid JSON: values nested too deeply to read"),
])
def test_malformed_logiqa2_names_file_and_line(name, line, words):
    with pytest.raises(DataFormatError) as err:
        lq.parse_logiqa2_jsonl(BAD2 / name, split="dev")
    assert err.value.line == line and words in str(err.value)


def item(i: str, context: str, question: str = "Q?", options=("a", "b", "c", "d")) -> MCItem:
    return MCItem(i, context, question, tuple(options), 0)


def test_normalise():
    assert lq.normalise("Park.These  FOUR, ｃｏｍｍｕｎｉｔｉｅｓ!") == "park these four communities"


def test_deduplicate_exact_and_near():
    reference = [item("r0", "The river floods every spring and the bridge closes."),
                 item("r1", "Every member of the chess club plays chess on Tuesday evenings.")]
    candidates = [
        item("c0", "every member of the chess club plays chess on tuesday evenings"),  # exact after normalising
        item("c1", "Each spring the river floods, and then the bridge is closed."),  # a re-translation
        item("c2", "Violinists in the orchestra read music; Karl cannot."),  # unrelated
    ]
    d = lq.deduplicate(candidates, reference, threshold=0.3)
    assert [c.id for c in d.kept] == ["c2"] and (d.exact, d.near) == (1, 1)
    assert d.best_match[:2] == ["r1", "r0"] and d.best_similarity[0] == pytest.approx(1.0)
    assert d.counts() == {"candidates": 3, "exact duplicates": 1, "near duplicates": 1, "removed": 2, "kept": 1}
    strict = lq.deduplicate(candidates, reference, threshold=0.99)
    assert [c.id for c in strict.kept] == ["c1", "c2"]


def test_match_items_is_mutual_best():
    queries = [item("q0", "Nina is older than Paul.", options=("Nina", "Paul", "Rita", "Tom")),
               item("q1", "The museum closes on Mondays.", options=("open", "closed", "Monday", "Sunday"))]
    pool = [item("p0", "The museum is closed every Monday.", options=("open", "closed", "Monday", "Sunday")),
            item("p1", "Completely different text about ferries.")]
    assert {k: v.id for k, v in lq.match_items(queries, pool, threshold=0.3).items()} == {"q1": "p0"}
    assert lq.match_items(queries, pool, threshold=0.99) == {}


def test_training_set_falls_back_to_deduplicated_logiqa2():
    ts = lq.training_set()
    assert ts.dedup is not None and ts.dedup.counts() == {
        "candidates": 14, "exact duplicates": 1, "near duplicates": 1, "removed": 2, "kept": 12}
    assert {it.id for it in ts.dedup.removed} == {"logiqa2-dev-101", "logiqa2-dev-102"}
    assert "LogiQA 2.0" in ts.source


def test_training_set_uses_official_train_file(tmp_path, monkeypatch):
    shutil.copytree(DATA / "logiqa", tmp_path / "logiqa")
    shutil.copy(DATA / "logiqa" / "Eval.txt", tmp_path / "logiqa" / "Train.txt")
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    ts = lq.training_set()
    assert ts.dedup is None and len(ts.items) == 8 and ts.items[0].id == "en-train-0"
    with pytest.raises(FileNotFoundError, match="zh_train.txt"):
        lq.training_set("zh")


def test_repeated_block_is_refused(tmp_path):
    lines = (DATA / "logiqa" / "Eval.txt").read_text(encoding="utf-8").split("\n")
    path = tmp_path / "Eval.txt"
    path.write_text("\n".join(lines[:8] + lines[:8] + lines[8:]), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"Eval.txt:10: duplicate block \(the same paragraph, question and "
                                              r"options\) \(first at line 2\)"):
        lq.parse_logiqa_txt(path, split="eval", lang="en")


def _logiqa2_copy(tmp_path, edit):
    import json
    rows = [json.loads(x) for x in (DATA / "logiqa2" / "dev.txt").read_text().splitlines() if x.strip()]
    edit(rows)
    path = tmp_path / "dev.txt"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_logiqa2_same_id_on_different_questions_is_the_release_s_variant(tmp_path):
    def reuse_id(rows):  # one of the two ids the release's dev.txt gives to two questions
        rows[0]["id"] = rows[1]["id"] = 10882
    items = lq.parse_logiqa2_jsonl(_logiqa2_copy(tmp_path, reuse_id), split="dev")
    assert items[0].meta["source_id"] == items[1].meta["source_id"] and items[0].context != items[1].context


def test_logiqa2_any_other_repeated_id_is_refused(tmp_path):
    def reuse_id(rows):
        rows[1]["id"] = rows[0]["id"]
    path = _logiqa2_copy(tmp_path, reuse_id)
    with pytest.raises(DataFormatError, match=r"dev.txt:2 \(item 101\): duplicate id 101 \(first at line 1\)$"):
        lq.parse_logiqa2_jsonl(path, split="dev")
    with pytest.raises(DataFormatError, match="duplicate id 10882"):  # declared for dev.txt, not for test.txt
        lq.parse_logiqa2_jsonl(_logiqa2_copy(tmp_path, lambda rows: [r.__setitem__("id", 10882) for r in rows[:2]]),
                               split="test")


@pytest.mark.parametrize("edit, where, problem", [
    (lambda rows: rows.insert(1, dict(rows[0])), ":2", "duplicate record (the same line repeated) (first at line 1)"),
    (lambda rows: rows[1].__setitem__("answer", True), ":2", "field 'answer' should be int, got bool"),
    (lambda rows: rows[1].__setitem__("id", str(rows[1]["id"])), ":2", "field 'id' should be int, got str"),
    (lambda rows: rows[1].pop("type"), ":2", "field 'type' is missing here but given by"),
    (lambda rows: rows[1]["type"].update({"Categorical Reasoning": "yes"}), ":2",
     "field 'type.Categorical Reasoning' should be bool"),
    (lambda rows: rows.clear(), "", "the file has no questions"),
])
def test_malformed_logiqa2_records_are_refused(tmp_path, edit, where, problem):
    path = _logiqa2_copy(tmp_path, edit)
    with pytest.raises(DataFormatError) as e:
        lq.parse_logiqa2_jsonl(path, split="dev")
    assert str(e.value).startswith(f"{path}{where}") and problem in str(e.value), str(e.value)


def _logiqa2_folder(tmp_path, monkeypatch, edit):
    shutil.copytree(DATA / "logiqa2", tmp_path / "logiqa2")
    path = tmp_path / "logiqa2" / "test.txt"
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    dev = [json.loads(x) for x in (DATA / "logiqa2" / "dev.txt").read_text().splitlines() if x.strip()]
    edit(rows, dev)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    return path


def test_logiqa2_question_or_id_in_two_files_is_refused(tmp_path, monkeypatch):
    path = _logiqa2_folder(tmp_path, monkeypatch, lambda rows, dev: rows.append({**dev[1], "id": 4242}))
    with pytest.raises(DataFormatError, match=r"dev.txt:2 \(item 102\): the same question \(context, question and "
                                              r"options\) as test.txt:\d+ \(item 4242\): leakage between splits$"):
        lq.load_logiqa2("dev")
    path = _logiqa2_folder(tmp_path / "b", monkeypatch, lambda rows, dev: rows[0].__setitem__("id", dev[0]["id"]))
    with pytest.raises(DataFormatError, match=rf"{path}:1 \(item 101\): the same id as dev.txt:1 \(item 101\)"):
        lq.load_logiqa2("test")


def test_logiqa2_the_release_s_own_repeats_are_declared():
    groups = lq.LOGIQA2_KNOWN_REPEATS
    assert len(groups) == 142 + 15 and frozenset({("dev", 9335), ("test", 8083), ("ood_test", 17)}) in groups
    assert lq.LOGIQA2_DUPLICATE_IDS == {"dev": {10882, 10973}, "test": {10906, 10948, 10591, 10571}}
