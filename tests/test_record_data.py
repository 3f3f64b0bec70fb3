"""ReCoRD loaders: every layout, offsets, highlight rendering, deduplication, malformed input."""

import json
import shutil
from pathlib import Path

import pytest

from rcstudy.data.record import (
    CLUES_PREFIX, PLACEHOLDER, deduplicate, discover, load_clues, load_explorer, load_file, load_official,
    load_record, load_superglue, query_key, render_passage, unwrap_clues_question,
)
from rcstudy.errors import DataFileMissing, DataFormatError

FIX = Path(__file__).parent / "fixtures"
REC = FIX / "data" / "record"
BAD = FIX / "malformed" / "record"


def _spans_hold(q):
    return all(q.passage[e.start:e.end] == e.text for e in q.entities)


def test_render_passage_moves_offsets():
    raw = "Lead text.\n@highlight\nBullet one\n@highlight\nTwo"
    text, pos = render_passage(raw)
    assert text == "Lead text.\n- Bullet one\n- Two"
    start = raw.index("Bullet")
    assert text[pos[start]:pos[start] + 6] == "Bullet"
    assert pos[len(raw)] == len(text)


def test_superglue_layout_inclusive_ends_become_exclusive():
    qs = load_superglue(REC / "fewglue" / "train.jsonl", source="fewglue")
    raw = json.loads((REC / "fewglue" / "train.jsonl").read_text().splitlines()[0])
    first = raw["passage"]["entities"][0]
    assert qs[0].entities[0].text == raw["passage"]["text"][first["start"]:first["end"] + 1]
    assert len(qs) == 3 and all(_spans_hold(q) for q in qs)
    assert qs[0].id == "fewglue:10" and qs[0].source == "fewglue"
    assert "@highlight" not in qs[0].passage and "\n- Maria Lind is the first woman" in qs[0].passage
    assert qs[0].answers == ("Maria Lind", "Lind")  # every gold mention, deduplicated by text, in order
    assert all(qs[0].passage[s:e] in qs[0].answers for s, e in qs[0].meta["answer_spans"])


def test_official_layout_and_preference_for_full_data():
    d = load_record(REC / "official")
    assert d.mode == "official"
    assert (len(d.train), len(d.eval), len(d.test)) == (3, 2, 1)
    assert d.test[0].answers == ()  # hidden test answers
    assert d.eval[0].id == "p2-q0" and d.eval[0].meta["passage_id"] == "p2"
    assert load_official(REC / "official" / "dev.json")[1].answers == ("Diego Forlan", "Forlan")


def test_discover_uses_only_the_official_files_when_present(tmp_path):
    shutil.copytree(REC, tmp_path / "record")
    shutil.copy(REC / "official" / "dev.json", tmp_path / "record" / "dev.json")
    found = discover(tmp_path / "record")
    assert [(f.source, f.role, f.path.name) for f in found] == [("official", "eval", "dev.json")]


def test_no_evaluation_file_names_what_to_do(tmp_path):
    with pytest.raises(DataFileMissing, match="dev.json"):
        discover(tmp_path)


def test_clues_template_is_unwrapped():
    qs = load_clues(REC / "clues" / "record_test.jsonl")
    assert qs[0].query == "Fans sang the name of @placeholder long after the final whistle."
    assert qs[0].answers == ("Diego Forlan",) and qs[0].meta["answers_complete"] is False
    assert _spans_hold(qs[0])
    wrapped = CLUES_PREFIX + 'X @placeholder y". What is @placeholder?'
    assert unwrap_clues_question(wrapped, Path("f")) == "X @placeholder y"


def test_explorer_pages_give_passage_entities_and_gold():
    qs = load_explorer(REC / "explorer" / "examples.json")
    q = qs[0]
    assert q.query == "Fans sang the name of @placeholder long after the final whistle."
    assert q.answers == ("Diego Forlan", "Forlan")
    assert _spans_hold(q) and "Luis Pardo" in q.candidates
    assert q.passage.splitlines()[1] == "- Real Vega beat Atletico Sur 3-1"
    # the same query read from CLUES has the same identity
    assert query_key(q) == query_key(load_clues(REC / "clues" / "record_test.jsonl")[0])


def test_load_file_detects_the_layout():
    assert load_file(REC / "clues" / "record_test.jsonl")[0].source == "clues"
    assert load_file(REC / "fewglue" / "dev32.jsonl")[0].source == "superglue"
    assert load_file(REC / "explorer" / "examples.json")[0].source == "explorer"
    assert load_file(REC / "official" / "train.json")[0].source == "official"


def test_local_subsets_are_deduplicated_and_split_by_passage():
    d = load_record(REC)
    assert d.mode == "local subsets"
    # CLUES repeats a training query across its nested files; CLUES test and the explorer share one;
    # FewGLUE train shares a query with the explorer
    assert sorted(d.duplicates) == [("clues", "clues"), ("clues", "explorer"), ("fewglue", "explorer")]
    forlan = [q for q in d.eval if "Fans sang" in q.query]
    assert len(forlan) == 1 and forlan[0].source == "explorer" and len(forlan[0].answers) == 2
    # the other query of that FewGLUE passage is dropped from training: its passage is evaluated on
    assert d.train_dropped_for_overlap == 1
    eval_passages = {q.passage for q in d.eval}
    assert not any(q.passage in eval_passages for q in d.train)
    assert len({q.id for q in d.train + d.eval}) == len(d.train) + len(d.eval)


def test_deduplicate_prefers_fuller_sources():
    explorer = load_explorer(REC / "explorer" / "examples.json")[:1]
    clues = load_clues(REC / "clues" / "record_test.jsonl")[:1]
    kept, dropped = deduplicate(clues + explorer)
    assert [q.source for q in kept] == ["explorer"] and dropped == [("clues", "explorer")]


@pytest.mark.parametrize("name, where, problem", [
    ("superglue_bad_json.jsonl", ":2:", "invalid JSON"),
    ("superglue_entity_outside.jsonl", ":2 (item 2)", "outside the passage"),
    ("superglue_no_placeholder.jsonl", ":2 (item 30)", f"no {PLACEHOLDER}"),
    ("official_missing_qas.json", " (item p1)", "missing field 'qas'"),
    ("clues_no_template.jsonl", ":2 (item ReCoRD_12_1)", "CLUES template"),
    ("explorer_no_gold.json", " (item ee55-ff66-0)", "correct-answer"),
    ("superglue_no_entities.jsonl", ":2 (item 20)", "the query has no candidate entities"),
    ("superglue_gold_not_entity.jsonl", ":2 (item 20)", "answer 0 'the' is not among the passage's"),
])
def test_malformed_input_names_file_line_and_problem(name, where, problem):
    with pytest.raises(DataFormatError) as err:
        load_file(BAD / name)
    message = str(err.value)
    assert message.startswith(str(BAD / name) + where), message
    assert problem in message


def _jsonl_copy(tmp_path, source, edit):
    rows = [json.loads(x) for x in source.read_text().splitlines() if x.strip()]
    edit(rows)
    path = tmp_path / source.name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _shift_answer(a):
    a["text"] = a["text"][1:] + "x"


@pytest.mark.parametrize("edit, where, problem", [
    (lambda rows: _shift_answer(rows[0]["qas"][0]["answers"][0]), ":1", "answer 0: text"),
    (lambda rows: rows[0].pop("source"), ":1", "missing field 'source'"),
    (lambda rows: rows[0]["qas"][0].__setitem__("answers", []), ":1", "no answer (this file is labelled)"),
    (lambda rows: rows[0].__setitem__("idx", True), ":1", "field 'idx' should be int, got bool"),
    (lambda rows: rows.insert(1, rows[0]), ":2", "duplicate query idx"),
    (lambda rows: rows.clear(), "", "the file has no queries"),
])
def test_superglue_lines_must_be_consistent(tmp_path, edit, where, problem):
    path = _jsonl_copy(tmp_path, REC / "fewglue" / "train.jsonl", edit)
    with pytest.raises(DataFormatError) as e:
        load_superglue(path)
    assert str(e.value).startswith(f"{path}{where}") and problem in str(e.value), str(e.value)


@pytest.mark.parametrize("edit, problem", [
    (lambda rows: _shift_answer(rows[0]["answer"][0]), "differs from the passage text"),
    (lambda rows: rows[0].__setitem__("is_impossible", True), "is_impossible is true"),
    (lambda rows: rows.insert(1, rows[0]), "duplicate id"),
])
def test_clues_lines_must_be_consistent(tmp_path, edit, problem):
    path = _jsonl_copy(tmp_path, REC / "clues" / "record_test.jsonl", edit)
    with pytest.raises(DataFormatError) as e:
        load_clues(path)
    assert str(e.value).startswith(f"{path}:") and problem in str(e.value), str(e.value)


def test_official_answer_text_must_match_its_span(tmp_path):
    doc = json.loads((REC / "official" / "dev.json").read_text())
    _shift_answer(doc["data"][0]["qas"][0]["answers"][0])
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(DataFormatError, match=rf"dev.json \(item {doc['data'][0]['qas'][0]['id']}\): answer 0: text"):
        load_official(path)


def test_a_stray_file_is_refused_and_clues_reads_its_declared_files_only(tmp_path):
    root = tmp_path / "record"
    shutil.copytree(REC, root)
    shutil.copy(root / "clues" / "record_train_10_1.jsonl", root / "clues" / "record_train_40_1.jsonl")
    with pytest.raises(DataFormatError) as err:
        load_record(root)
    assert err.value.path == root / "clues" / "record_train_40_1.jsonl"
    assert "the file is not one of the record release's files" in str(err.value)
