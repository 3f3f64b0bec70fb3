"""MetaLogic: loader (official JSON Lines, malformed lines), S5 reduction, linearisations, parsers."""

from __future__ import annotations

import itertools
import json
import random
import shutil
from pathlib import Path

import pytest

from rcstudy.data import metalogic as ml
from rcstudy.errors import DataFormatError

FIXTURES = Path(__file__).parent / "fixtures"
DATA = FIXTURES / "data" / "metalogic"
MALFORMED = FIXTURES / "malformed" / "metalogic"

# The paper's Table 10 (input) and the official code's target for it (double spaces included).
TABLE10_INPUT = (
    "sent1: v1: measurements of the motion of the planet uranus seem to show uranus being tugged by a force pulling "
    "it away from the sun and the inner planets . sent2: v1: neptune and pluto , v2: the two known planets whose "
    "orbits are farther from the sun than is the orbit of uranus , v3: do not have enough mass to exert the force "
    "that the measurements indicate . sent3: v1: therefore , v2: in addition to the known planets , v3: there must "
    "be at least one planet in our solar system that we have yet to discover . sent4: v1: there is a belt of comets "
    "beyond the orbit of pluto with powerful gravitational pull . ")
TABLE10_TARGET = ("$tree$ sent1 -> sent3; sent2 -> sent3; sent4 => sent2;  $formulae$ sent3: v2 [and] [necessary] v3;  "
                  "$degree$ sent1: contingent | sent2: contingent | sent3: necessary | sent4: contingent ")
FIGURE1_TARGET = ("$tree$ sent2 -> sent4; sent3 -> sent4; sent4 -> sent1; sent5 => sent4;  $formulae$ sent3: v3 [and]  "
                  "v2; | sent4: v2 [entail] [necessary] v3; | sent5: [negative] [necessary] v3 [entail]  v1;  $degree$ "
                  "sent1: contingent | sent2: contingent | sent3: necessary | sent4: necessary | sent5: unnecessary ")


@pytest.fixture(scope="module")
def graphs():
    return {split: ml.load_metagraphs(DATA / f"metalogic_{split}.json") for split in ml.SPLITS}


def by_id(graphs, gid):
    return next(g for split in graphs.values() for g in split if g.id == gid)


# --- loader -----------------------------------------------------------------------------------

def test_loader_reads_the_fixture_splits(graphs):
    assert [len(graphs[s]) for s in ml.SPLITS] == [6, 3, 3]
    g = by_id(graphs, "train_4295")
    assert g.sids == ["sent1", "sent3", "sent4"]  # a merged node: ids are never renumbered
    assert "[AND]" in g.nodes["sent1"].text
    assert g.steps == (ml.Step("sent4", "->", "sent3"), ml.Step("sent1", "->", "sent3"))
    assert g.proof == "sent4 -> sent3; sent1 -> sent3; "
    assert by_id(graphs, "train_9004").nodes["sent1"].text_with_vars == ""  # empty variable string is kept


def test_node_fields(graphs):
    node = by_id(graphs, "train_1300").nodes["sent5"]
    assert node.global_ops == (ml.NEG, ml.BOX) and node.degree == 1
    assert node.triples == (ml.Triple((ml.NEG, ml.BOX), "v3", ml.IMP, (), "v1"),)
    assert node.spans == {"v1": "most people will not be able to afford these prescriptions", "v2": "since",
                          "v3": "the majority of health care plans will not cover the new drugs ."}
    assert node.formula() == "¬□(¬□v3 → v1)"


def test_dataset_file_names_the_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="metalogic_dev.json"):
        ml.load_split("dev")
    with pytest.raises(ValueError, match="unknown MetaLogic split"):
        ml.metalogic_file("validation")


MALFORMED_CASES = {
    "self_loop": "proof step 'sent1 -> sent1' is a self-loop",
    "cycle": "the proof's steps form a cycle: sent1 -> sent3 -> sent1",
    "invalid_json": "invalid JSON",
    "missing_proof": "missing field 'proof'",
    "unknown_global_operator": "unknown global operator",
    "unknown_relation": "unknown relation '[I-XOR]'",
    "unmarked_variable": "variable 'v7' is not marked",
    "step_to_missing_sentence": "names sent2, which is not in sent_dict",
    "unreadable_step": "is not 'sentA -> sentB'",
    "degree_out_of_range": "degree_label 7",
    "context_mismatch": "do not join into meta_info context + option",
    "duplicate_id": "duplicate id_string 'train_9101' (first at line 1)",
}


@pytest.mark.parametrize("name,problem", sorted(MALFORMED_CASES.items()))
def test_malformed_lines_name_file_and_line(name, problem):
    path = MALFORMED / f"{name}.json"
    with pytest.raises(DataFormatError) as err:
        ml.load_metagraphs(path)
    assert err.value.line == 2
    assert f"{name}.json:2" in str(err.value)
    assert problem in str(err.value)


# --- S5 ------------------------------------------------------------------------------------------

def test_s5_reduction_rules():
    N, B, D = ml.NEG, ml.BOX, ml.DIA
    assert ml.s5_reduce([B, N]) == (N, D)  # □¬p = ¬◇p
    assert ml.s5_reduce([D, N]) == (N, B)  # ◇¬p = ¬□p
    assert ml.s5_reduce([B, B]) == (B,) and ml.s5_reduce([D, D]) == (D,)
    assert ml.s5_reduce([B, D]) == (D,) and ml.s5_reduce([D, B]) == (B,)
    assert ml.s5_reduce([N, N]) == ()
    assert ml.s5_reduce([N, D, N]) == (B,)  # ¬◇¬p = □p
    assert ml.s5_reduce(["[FOO]", N]) == ("[FOO]", N)  # invalid sequences are returned unchanged


def test_s5_reduction_is_canonical_and_idempotent():
    canonical = {(), (ml.NEG,), (ml.BOX,), (ml.DIA,), (ml.NEG, ml.BOX), (ml.NEG, ml.DIA)}
    for n in range(6):
        for ops in itertools.product(ml.UNARY, repeat=n):
            r = ml.s5_reduce(ops)
            assert r in canonical and ml.s5_reduce(r) == r
            # the reduction keeps the meaning: as many negations modulo 2 outside all modalities
            assert (ml.NEG in r) == (ops.count(ml.NEG) % 2 == 1)


def test_degrees():
    assert [ml.degree_of(ml.DEGREE_OPERATORS[d]) for d in range(5)] == [0, 1, 2, 3, 4]
    assert ml.degree_of([ml.NEG]) == 2  # negation alone is contingent
    assert ml.degree_of([ml.BOX, ml.NEG]) == 0  # □¬ = ¬◇: impossible


# --- linearisations ---------------------------------------------------------------------------------

def test_once_strings_match_the_paper_and_the_official_code(graphs):
    g = by_id(graphs, "train_4341")
    assert ml.once_source(g) == TABLE10_INPUT
    assert ml.once_target(g) == TABLE10_TARGET
    assert ml.once_target(by_id(graphs, "train_1300")) == FIGURE1_TARGET
    assert ml.once_target(g, flags="paper").startswith("$graph$ sent1 -> sent3;")
    assert ml.once_source(g, "released").startswith("measurements of the motion")
    with pytest.raises(ValueError):
        ml.once_source(g, "other")


def test_multitask_examples(graphs):
    g = by_id(graphs, "train_4341")
    exs = ml.multitask_examples(g)
    assert len(exs) == 1 + 2 * len(g.nodes)
    assert exs[0].source.startswith("TREE: sent1: measurements") and exs[0].target == "$tree$ " + g.proof
    formula = next(e for e in exs if e.task == "formulae" and e.node == "sent3")
    assert formula.source.startswith("FORMULAE: v1: therefore ,")
    assert formula.target == "$formulae$  v2 [and] [necessary] v3; "
    assert next(e for e in exs if e.task == "formulae" and e.node == "sent1").target == "$formulae$ "
    assert next(e for e in exs if e.task == "degree" and e.node == "sent3").target == "$degree$ necessary"
    assert ml.multitask_examples(g, "released")[0].source.startswith("TREE: measurements")


def test_metgen_controller_and_modules(graphs):
    g = by_id(graphs, "train_4341")
    ctrl = ml.metgen_controller_examples(g)
    # steps sorted by string; i previous steps → up to n permutations × remaining steps, "done" at the end
    assert ctrl[0].source.startswith("CONTROL: proof: ; context: sent1: measurements")
    assert {e.target for e in ctrl if e.source == ctrl[0].source} == {"sent1 sent3", "sent2 sent3", "sent2 sent4"}
    assert ctrl[-1].target == "done" and "sent4 => sent2" in ctrl[-1].source
    assert len(ctrl) == 3 + 2 + 2 + 3  # 0, 1, 2 previous steps (1, 1, 2 orders), then 3 of the 6 orders → done
    mods = ml.metgen_module_examples(g, random.Random(0), neg_pos_rate=2.0)
    pos = [m for m in mods if m.target != "none"]
    assert [m.target for m in pos] == [s.text for s in g.steps]
    assert pos[2].source == "REBUTTAL: sent2: neptune and pluto , the two known planets whose orbits are farther from " \
                            "the sun than is the orbit of uranus , do not have enough mass to exert the force that the " \
                            "measurements indicate . sent4: there is a belt of comets beyond the orbit of pluto with " \
                            "powerful gravitational pull . "
    assert len(mods) == 3 * 3  # positives + type negatives + pair negatives = 2 × positives


# --- parsing -------------------------------------------------------------------------------------

def test_normalise_undoes_wordpiece_spacing():
    spaced = "$ tree $ sent1 - > sent3 ; sent4 = > sent2 ; $ formulae $ sent3 : v2 [ and ] [ necessary ] v3 ;"
    assert ml.normalise(spaced) == "$tree$ sent1 -> sent3 ; sent4 => sent2 ; $formulae$ sent3 : v2 [and] [necessary] v3 ;"


def test_wordpiece_round_trip_is_lossless(graphs):
    from rcstudy.models.loading import load_tokenizer

    tok = load_tokenizer("minilm-l6")
    for g in graphs["train"] + graphs["test"]:
        decoded = tok.decode(tok(ml.once_target(g))["input_ids"], skip_special_tokens=True)
        assert decoded != ml.once_target(g)
        pred = ml.parse_once(ml.normalise(decoded))
        gold = g.gold()
        assert pred.steps == gold.steps and pred.degrees == gold.degrees
        assert {k: v for k, v in pred.triples.items() if v} == {k: v for k, v in gold.triples.items() if v}


def test_parse_proof_follows_the_official_parser():
    steps = ml.parse_proof("sent2 & sent1 -> sent3; sent4 => sent3; garbage; sent1 -> ; sent5 -> sent6 -> sent7; "
                           "sent1 -> sent3")
    assert steps == [ml.Step("sent1", "->", "sent3"), ml.Step("sent2", "->", "sent3"), ml.Step("sent4", "=>", "sent3"),
                     ml.Step("sent1", "->", "sent3")]


def test_parse_triples():
    ts = ml.parse_triples("[negative] [negative] v1 [and] [possible] v2; v3 [entail] [necessary] [possible] v4; "
                          "v5 v6; [and] v7; foo v8 [or] v9")
    assert ts == [ml.Triple((), "v1", ml.AND, (ml.DIA,), "v2"), ml.Triple((), "v3", ml.IMP, (ml.DIA,), "v4"),
                  ml.Triple(("foo",), "v8", ml.OR, (), "v9")]
    # the last relation in the official order (∧ ∨ →) wins; the rest becomes operators that match nothing
    assert ml.parse_triples("v1 [and] v2 [entail] v3") == [ml.Triple(("v1", ml.AND), "v2", ml.IMP, (), "v3")]
    assert ml.parse_triples("v1 [and] v2 [and] v3") == []  # three parts: dropped


def test_parse_degree_is_sequential():
    assert [ml.parse_degree(w) for w in ml.DEGREE_WORDS] == [0, 1, 2, 3, 4]
    assert ml.parse_degree(" possible ") == 3
    assert ml.parse_degree("causal") == ml.UNRESOLVED
    assert ml.parse_degree("possible possible") == ml.UNRESOLVED


def test_parse_once_accepts_the_paper_slot_names():
    text = "$graph$ sent1 -> sent2; $formula$ sent2: v1 [or] v2; $degree$ sent1: possible | sent2: blah"
    pred = ml.parse_once(text)
    assert pred.steps == (ml.Step("sent1", "->", "sent2"),)
    assert pred.triples == {"sent2": (ml.Triple((), "v1", ml.OR, (), "v2"),)}
    assert pred.degrees == {"sent1": 3, "sent2": ml.UNRESOLVED}


def test_multitask_parts():
    pred = ml.prediction_from_parts("$tree$ sent1 => sent2;", {"sent1": "$formulae$ v1 [entail] v2;", "sent2": ""},
                                    {"sent1": "$degree$ necessary", "sent2": "$degree$"})
    assert pred.steps == (ml.Step("sent1", "=>", "sent2"),)
    assert pred.triples["sent1"] == (ml.Triple((), "v1", ml.IMP, (), "v2"),) and pred.triples["sent2"] == ()
    assert pred.degrees == {"sent1": 4, "sent2": ml.UNRESOLVED}


def test_table4_definitions(graphs):
    stats = ml.table4(graphs["train"])
    assert stats["passage"] == 6 and stats["node"] == 21
    assert stats["reb"] == 3  # train_1300, train_9002, train_9004
    assert stats["multi_step"] == 2  # train_1300 (support chain) and train_9004 (rebut into a support step)
    assert stats["multi_premise"] == 4  # a node with two incoming support steps
    assert stats["form"] == 10 and stats["avg_binary"] == 10 / 6  # one triple per formula-bearing node


def _metalogic_copy(tmp_path, edit):
    import json
    rows = [json.loads(x) for x in (DATA / "metalogic_dev.json").read_text().splitlines() if x.strip()]
    edit(rows)
    path = tmp_path / "metalogic_dev.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _first_node(rows):
    return next(iter(rows[0]["sent_dict"].values()))["inner_info"]


@pytest.mark.parametrize("edit, problem", [
    (lambda rows: _first_node(rows).update(global_operators=["[BOX]"]), "contradicts global_operators ['[BOX]']"),
    (lambda rows: _first_node(rows).update(degree_label=True), "inner_info.degree_label missing or not a int"),
    (lambda rows: rows[0]["gold_item"].update(proof_str="sent9 -> sent1; "), "gold_item.proof_str differs from proof"),
    (lambda rows: rows[0]["gold_item"]["degree_str_dict"].update(
        {next(iter(rows[0]["sent_dict"])): "impossible"}), "gold_item.degree_str_dict says 'impossible'"),
    (lambda rows: _first_node(rows)["formula_triples"].append([[], ["v1"], "[I-CONJUNCTION]", [], "v1"]),
     "the variables and the relation must be strings"),
])
def test_redundant_fields_must_agree(tmp_path, edit, problem):
    path = _metalogic_copy(tmp_path, edit)
    with pytest.raises(DataFormatError) as e:
        ml.load_metagraphs(path)
    assert str(e.value).startswith(f"{path}:1 (item ") and problem in str(e.value), str(e.value)


def test_empty_file_is_refused(tmp_path):
    with pytest.raises(DataFormatError, match="metalogic_dev.json: the file has no metagraphs"):
        ml.load_metagraphs(_metalogic_copy(tmp_path, lambda rows: rows.clear()))


def _metalogic_folder(tmp_path, monkeypatch, split, edit):
    shutil.copytree(FIXTURES / "data" / "metalogic", tmp_path / "metalogic")
    path = tmp_path / "metalogic" / f"metalogic_{split}.json"
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    edit(rows, tmp_path / "metalogic")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("RCSTUDY_DATA", str(tmp_path))
    return path


def _first(folder, split):
    return json.loads((folder / f"metalogic_{split}.json").read_text().splitlines()[0])


def test_a_passage_in_two_splits_is_refused_naming_both(tmp_path, monkeypatch):
    path = _metalogic_folder(tmp_path, monkeypatch, "train",
                             lambda rows, f: rows.append({**_first(f, "dev"), "id_string": "train_77777"}))
    with pytest.raises(DataFormatError) as err:
        ml.load_split("train")
    assert str(err.value).startswith(f"{path}:{path.read_text().count(chr(10))} (item train_77777): the same question")
    assert "as metalogic_dev.json:1 (item" in str(err.value) and "leakage between splits" in str(err.value)


def test_an_id_in_two_splits_is_refused(tmp_path, monkeypatch):
    _metalogic_folder(tmp_path, monkeypatch, "test", lambda rows, f: rows[0].__setitem__("id_string",
                                                                                         _first(f, "dev")["id_string"]))
    with pytest.raises(DataFormatError, match=r"metalogic_test.json:1 \(item .*\): the same id as metalogic_dev.json:1"):
        ml.load_split("test")


def test_the_release_s_own_self_loop_and_repeat_are_declared():
    assert ml.KNOWN_SELF_LOOPS == {"_train_52": frozenset({"sent1"})}
    assert [set(g) for g in ml.KNOWN_REPEATS] == [{("train", "train_844"), ("dev", "train_3200")}]


def test_a_stray_file_in_the_folder_is_named(tmp_path, monkeypatch):
    _metalogic_folder(tmp_path, monkeypatch, "dev", lambda rows, f: (f / "metalogic_extra.json").write_text(""))
    with pytest.raises(DataFormatError, match="metalogic_extra.json: the file is not one of the metalogic release"):
        ml.load_split("dev")
