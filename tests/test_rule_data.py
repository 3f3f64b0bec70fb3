"""The RULE loader on hand-written fixtures in the release's format, including malformed files."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from rcstudy.data.records import MCItem
from rcstudy.data.rule import (
    NONE_OPTION, check_release, compare_with_reclor, exemplar_keys, exemplar_text, load_prompts, load_rule,
    question_block, release_counts,
)
from rcstudy.errors import DataFileMissing, DataFormatError

FIXTURES = Path(__file__).parent / "fixtures"
GOOD = FIXTURES / "data" / "rule"
BAD = FIXTURES / "malformed" / "rule"


@pytest.fixture
def data():
    return load_rule(GOOD)


def with_file(tmp_path: Path, malformed: str, as_name: str) -> Path:
    """A copy of the good fixture with one file replaced by a malformed variant."""
    folder = tmp_path / "rule"
    shutil.copytree(GOOD, folder)
    shutil.copy(BAD / malformed, folder / as_name)
    return folder


def test_counts_and_derived_fields(data):
    counts = release_counts(data)
    assert counts == {
        "main questions": 6, "subquestions": 14, "selective subquestions": 6, "eliminative subquestions": 8,
        "subquestions with a None option": 5, "subquestions whose answer is None": 2,
        "main questions with subquestions in more than one split": 4,
    }
    assert data.splits == [1, 2, 3, 4, 5]
    sub = data.sub("train_17_sub3")  # about option 3 of train_17; every annotator chose None
    assert sub.meta["main_option"] == 3 and not sub.meta["selective"]
    assert sub.meta["none_correct"] and sub.options[sub.label] == NONE_OPTION and sub.meta["none_position"] == 3
    sel = data.sub("train_90_sub1")  # the None option moved to the end, the label follows its rationale
    assert sel.meta["selective"] and sel.label == 1 and not sel.meta["none_correct"]
    assert [s.id for s in data.subs_of("train_1")] == ["train_1_sub1", "train_1_sub2", "train_1_sub3", "train_1_sub4"]
    assert all(s.meta["context_matches_main"] for s in data.subs)


def test_split_and_subset(data):
    s5 = data.split(5)
    assert {s.id for s in s5.subs} == {"train_1_sub4", "train_61_sub1", "train_61_sub2", "train_90_sub2"}
    assert {m.id for m in s5.mains} == {"train_1", "train_61", "train_90"}
    sub = data.subset(["train_48", "train_35"])
    assert len(sub.mains) == 2 and len(sub.subs) == 3


def test_release_check_warns_on_subset(data):
    with pytest.warns(UserWarning, match="differs from the official release"):
        table = check_release(data)
    assert not table["matches"].any()


def test_subq_all_layout_and_answers_list(tmp_path, data):
    folder = tmp_path / "rule"
    folder.mkdir()
    shutil.copy(GOOD / "mainq.jsonl", folder)
    lines = []
    for k in range(1, 6):
        lines += (GOOD / f"subq_split_{k}.jsonl").read_text().splitlines()
    (folder / "subq_all.jsonl").write_text("\n".join(lines) + "\n")
    alt = load_rule(folder)
    assert [s.id for s in alt.subs] == [s.id for s in data.subs]
    assert alt.splits == [] and all(s.meta["split"] is None for s in alt.subs)
    # a copy giving the options as one list "answers"
    import json
    rows = [json.loads(x) for x in (GOOD / "mainq.jsonl").read_text().splitlines()]
    for r in rows:
        r["answers"] = [r.pop(f"answer{i}") for i in range(4)]
    (folder / "mainq.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert load_rule(folder).mains == alt.mains


@pytest.mark.parametrize("malformed, as_name, line, message", [
    ("mainq_invalid_json.jsonl", "mainq.jsonl", 2, "invalid JSON"),
    ("mainq_label_out_of_range.jsonl", "mainq.jsonl", 3, "label 7 is not an option index"),
    ("mainq_duplicate_id.jsonl", "mainq.jsonl", 4, "duplicate main question id"),
    ("subq_unknown_main.jsonl", "subq_split_1.jsonl", 2, "main_id 'train_999' is not in mainq.jsonl"),
    ("subq_option_mismatch.jsonl", "subq_split_1.jsonl", 2, "matches none of train_1's options"),
    ("subq_correctness_contradiction.jsonl", "subq_split_1.jsonl", 1, "main_option_correctness=False"),
    ("subq_missing_field.jsonl", "subq_split_1.jsonl", 3, "missing field 'main_option_correctness'"),
    ("mainq_repeated_option.jsonl", "mainq.jsonl", 2, "answer3 repeats answer1"),
])
def test_malformed_questions_name_file_and_line(tmp_path, malformed, as_name, line, message):
    folder = with_file(tmp_path, malformed, as_name)
    with pytest.raises(DataFormatError) as err:
        load_rule(folder)
    assert err.value.path == folder / as_name and err.value.line == line
    assert message in str(err.value) and f"{as_name}:{line}" in str(err.value)


def test_missing_files(tmp_path):
    with pytest.raises(DataFileMissing, match="mainq.jsonl"):
        load_rule(tmp_path)
    shutil.copy(GOOD / "mainq.jsonl", tmp_path)
    with pytest.raises(DataFileMissing, match="subq_all.jsonl"):
        load_rule(tmp_path)


def test_prompts_structure_and_template():
    prompts = load_prompts(GOOD)
    assert prompts.instruction.startswith("Answer the multiple-choice question")
    assert sorted(prompts.families(5)) == ["cot_step_random", "subq", "vanilla"]
    for (shots, family), batches in prompts.batches.items():
        for b in batches:
            assert len(b.exemplars) == shots
            if family in ("vanilla", "subq"):  # the released strings are the exemplars joined by a space
                assert b.text == " ".join(exemplar_text(e) for e in b.exemplars)
    assert [b.has_none_correct_exemplar for b in prompts.batches[(5, "subq")]] == [False, True]
    assert prompts.get(5, "vanilla", 7).batch == 1  # batches cycle
    cot = prompts.get(1, "cot_step_random", 0)
    assert "Therefore the answer is Option0" in cot.text and cot.exemplars[0].rationale in cot.text
    with pytest.raises(KeyError, match="no 5-shot family 'cot_incorrect'"):
        prompts.get(5, "cot_incorrect", 0)


def test_question_block_layout():
    assert question_block("C.", "Q?", ["a", "b"]) == "Context: C. \n Question: Q? \n Option0: a \n Option1: b \n Answer:"
    assert question_block("", "Q?", ["a", "b"]) == "Question: Q? \n Option0: a \n Option1: b \n Answer:"
    assert question_block("C.", "Q?", ["a", "b"], ["r1.", "r2."]) == (
        "Context: C. \n Question: Q? \n Option0: a \n Option1: b \n Rationale: r1. \n Rationale: r2. \n Answer:")


def test_leaked_exemplar_keys(data):
    prompts = load_prompts(GOOD)
    keys = exemplar_keys(prompts.get(5, "vanilla", 0))
    m = data.main("train_1")
    assert (m.question, m.options) in keys
    assert keys == exemplar_keys(prompts.without_context().get(5, "vanilla", 0))  # contexts are not in the key


def test_without_context(data):
    bare = data.without_context()
    assert [m.id for m in bare.mains] == [m.id for m in data.mains] and len(bare.subs) == len(data.subs)
    assert all(it.context == "" for it in (*bare.mains, *bare.subs))
    assert bare.sub("train_1_sub1").options == data.sub("train_1_sub1").options
    assert bare.sub("train_1_sub1").meta == data.sub("train_1_sub1").meta
    assert data.main("train_1").context  # the original is untouched

    prompts = load_prompts(GOOD)
    stripped = prompts.without_context()
    assert set(stripped.batches) == {k for k in prompts.batches if k[1] in ("vanilla", "subq")}
    assert stripped.instruction == prompts.instruction
    for key, batches in stripped.batches.items():
        for b, original in zip(batches, prompts.batches[key]):
            assert "Context:" not in b.text and b.text.startswith("Question: ")
            assert b.text.count("Question: ") == len(original.exemplars)
            assert b.has_none_correct_exemplar == original.has_none_correct_exemplar
    one = stripped.get(1, "vanilla", 0)
    e = prompts.get(1, "vanilla", 0).exemplars[0]
    assert one.text == question_block("", e.question, e.options) + f" The answer is Option{e.label} \n"


@pytest.mark.parametrize("malformed, item, message", [
    ("prompts_bad_label.json", "5shots/subq batch 1 exemplar 2", "label '7' is not an option index"),
    ("prompts_wrong_shots.json", "5shots/vanilla", "batch 1 has 4 exemplars, expected 5"),
    ("prompts_family_not_object.json", "5shots[0]", "expected {'name': str, 'prompt': {...}}"),
    ("prompts_short_label_list.json", "5shots/vanilla", "'label' of batch 1 has 4 exemplars, expected 5"),
    ("prompts_options_not_list.json", "5shots/vanilla batch 0 exemplar 2", "options should be a list of option strings"),
    ("prompts_batch_not_list.json", "5shots/vanilla", "batch 1 has no list (int), expected 5"),
])
def test_malformed_prompts_name_the_item(tmp_path, malformed, item, message):
    folder = with_file(tmp_path, malformed, "prompts.json")
    with pytest.raises(DataFormatError) as err:
        load_prompts(folder)
    assert err.value.item == item and message in str(err.value) and "prompts.json" in str(err.value)


def test_compare_with_reclor(data):
    m = data.main("train_35")
    reclor = [MCItem(m.id, m.context, m.question, m.options, m.label),
              MCItem("train_1", "another context", data.main("train_1").question, data.main("train_1").options, 0)]
    table = compare_with_reclor(data, reclor)
    assert table.loc["train_35"].all()
    assert table.loc["train_1", "found"] and not table.loc["train_1", "context"] and table.loc["train_1", "label"]
    assert not table.loc["train_48"].any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(table["found"].sum()) == 2


def _rule_copy(tmp_path, name, edit):
    import json
    folder = tmp_path / "rule"
    shutil.copytree(GOOD, folder)
    rows = [json.loads(x) for x in (folder / name).read_text().splitlines() if x.strip()]
    edit(rows)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.mark.parametrize("name, edit, line, problem", [
    ("mainq.jsonl", lambda rows: rows[0].pop("answer3"), 1, "expected 4 option strings, got 3 options"),
    ("mainq.jsonl", lambda rows: rows[0].__setitem__("label", False), 1, "field 'label' should be int, got bool"),
    ("subq_split_1.jsonl", lambda rows: rows[0].__setitem__("id", "train_2_sub1"), 1, "the id names main question"),
    ("subq_split_1.jsonl", lambda rows: rows[0]["main_question"].__setitem__("question", "Why?"), 1,
     "main_question.question differs"),
    ("subq_split_1.jsonl", lambda rows: rows[0]["main_question"].__setitem__("context", "Other."), 1,
     "main_question.context differs"),
    ("subq_split_1.jsonl", lambda rows: rows.clear(), None, "the file has no subquestions"),
])
def test_subquestions_must_agree_with_their_main_question(tmp_path, name, edit, line, problem):
    folder = _rule_copy(tmp_path, name, edit)
    with pytest.raises(DataFormatError) as err:
        load_rule(folder)
    assert err.value.path == folder / name and err.value.line == line and problem in str(err.value), str(err.value)


def test_html_entities_in_the_quoted_main_question_are_the_release_s_variant(tmp_path, data):
    def escape(rows):
        rows[0]["main_question"]["question"] = rows[0]["main_question"]["question"].replace("?", "&#63;")
    folder = _rule_copy(tmp_path, "subq_split_1.jsonl", escape)
    subs = load_rule(folder).subs
    assert [(s.id, s.label, s.meta["main_option"]) for s in subs] == [(s.id, s.label, s.meta["main_option"])
                                                                       for s in data.subs]
    assert "&#63;" in subs[0].meta["main_question"]  # kept as stored


def test_a_subquestion_in_two_splits_is_refused_naming_both(tmp_path):
    import json
    first = json.loads((GOOD / "subq_split_2.jsonl").read_text().splitlines()[0])
    folder = _rule_copy(tmp_path, "subq_split_1.jsonl", lambda rows: rows.append({**first, "id": first["main_id"] + "_sub9"}))
    with pytest.raises(DataFormatError) as err:
        load_rule(folder)
    n = len((folder / "subq_split_1.jsonl").read_text().splitlines())
    assert str(err.value) == (f"{folder / 'subq_split_2.jsonl'}:1 (item {first['id']}): the same question (context, "
                              f"question and options) as subq_split_1.jsonl:{n} (item {first['main_id']}_sub9): "
                              f"leakage between splits")


def test_a_subquestion_id_in_two_splits_names_both_files(tmp_path):
    import json
    first = json.loads((GOOD / "subq_split_2.jsonl").read_text().splitlines()[0])
    folder = _rule_copy(tmp_path, "subq_split_1.jsonl", lambda rows: rows.append(first))
    with pytest.raises(DataFormatError, match=rf"subq_split_2.jsonl:1 \(item {first['id']}\): duplicate subquestion id "
                                              rf"\(first at subq_split_1.jsonl:\d+\): leakage between splits$"):
        load_rule(folder)


def test_a_sixth_split_file_is_refused_not_read(tmp_path):
    folder = tmp_path / "rule"
    shutil.copytree(GOOD, folder)
    shutil.copy(folder / "subq_split_5.jsonl", folder / "subq_split_6.jsonl")
    for load in (load_rule, load_prompts):
        with pytest.raises(DataFormatError) as err:
            load(folder)
        assert err.value.path == folder / "subq_split_6.jsonl"
        assert "the file is not one of the rule release's files" in str(err.value)
    (folder / "subq_split_6.jsonl").unlink()
    (folder / "README.md").write_text("documentation is allowed")
    assert load_rule(folder).splits == [1, 2, 3, 4, 5]
