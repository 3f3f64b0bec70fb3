"""MetaLogic metrics: hand-computed scores, the three variants, error categories, official anchors."""

from __future__ import annotations

from pathlib import Path

import pytest

from rcstudy.baselines import metalogic_rules as rules
from rcstudy.data import metalogic as ml
from rcstudy.metrics import metalogic as mm
from rcstudy.settings import data_dir

DATA = Path(__file__).parent / "fixtures" / "data" / "metalogic"
S = ml.Step
T = ml.Triple
N, B, D, IMP, AND, OR = ml.NEG, ml.BOX, ml.DIA, ml.IMP, ml.AND, ml.OR


@pytest.fixture(scope="module")
def uranus():
    """The paper's Table 10 passage: s1 -> s3, s2 -> s3, s4 => s2; sent3: v2 ∧ □v3; degrees 2, 2, 4, 2."""
    return next(g for g in ml.load_metagraphs(DATA / "metalogic_test.json") if g.id == "train_4341")


@pytest.fixture
def prediction():
    return ml.Prediction(
        steps=(S("sent1", "->", "sent3"), S("sent4", "->", "sent2"), S("sent1", "->", "sent3")),
        triples={"sent3": (T((), "v2", AND, (B,), "v3"), T((), "v1", IMP, (), "v3")),
                 "sent1": (T((), "v1", AND, (), "v2"),)},
        degrees={"sent1": 2, "sent2": 2, "sent3": 2, "sent9": 3})


def test_prf_conventions():
    assert mm.prf(0, 0, 0) == (1.0, 1.0, 1.0)  # nothing to find, nothing found
    assert mm.prf(0, 2, 0)[2] == 0.0 and mm.prf(0, 0, 2)[2] == 0.0
    assert mm.prf(1, 2, 1) == (0.5, 1.0, pytest.approx(2 / 3))


def test_selection_score_is_the_official_dev_criterion():
    # the trivial prediction's dev scores (spec anchors): Overall 3.58, Step F1 49.61, Formula F1 55.83, Cert. Acc 79.38
    scores = {"overall_all": 3.58, "step_f1": 49.61, "formula_f1": 55.83, "cert_acc": 79.38}
    assert mm.selection_score(scores) == pytest.approx(0.0358 + 0.01 * 0.4961 * 0.5583 * 0.7938)
    assert mm.selection_score({**scores, "overall_all": 0.0}) < mm.selection_score(scores)


def test_hand_computed_sample(uranus, prediction):
    s = mm.score_sample(uranus, prediction).scores
    assert s["node_f1"] == 1.0 and s["node_all"] == 1.0  # {s1, s2, s3, s4} both sides
    assert s["step_f1"] == pytest.approx(1 / 3)  # 1 of 3 gold steps; 3 predicted (a duplicate counts)
    assert s["support_f1"] == pytest.approx(0.4)  # p = 1/3, r = 1/2
    assert s["rebut_f1"] == 0.0 and s["rebut_all"] == 0.0
    # formula F1 per node: s1 0 (a triple where none is), s2 1, s3 2/3 (p 1/2, r 1), s4 1
    assert s["formula_f1"] == pytest.approx((0 + 1 + 2 / 3 + 1) / 4)
    assert s["formula_all"] == 0.5  # official: the fraction of perfect nodes
    assert s["cert_acc"] == 0.5  # s3 wrong, s4 missing (-1); sent9 is not a gold node
    assert s["cert_all"] == 0.0 and s["overall_all"] == 0.0


def test_strict_and_symmetric_variants(uranus):
    gold = uranus.gold()
    half = ml.Prediction(gold.steps, {"sent1": (T((), "v1", OR, (), "v2"),), "sent3": gold.triples["sent3"]},
                         gold.degrees)
    official = mm.score_sample(uranus, half).scores
    strict = mm.score_sample(uranus, half, "strict").scores
    assert official["formula_all"] == 0.75 and official["overall_all"] == 0.75  # fractional Overall
    assert strict["formula_all"] == 0.0 and strict["overall_all"] == 0.0
    swapped = ml.Prediction(gold.steps, {"sent3": (T((B,), "v3", AND, (), "v2"),)}, gold.degrees)
    assert mm.score_sample(uranus, swapped).scores["formula_f1"] == 0.75  # ∧ is order-sensitive officially
    assert mm.score_sample(uranus, swapped, "symmetric").scores["formula_f1"] == 1.0
    reversed_imp = [T((), "v3", IMP, (), "v2")]
    assert mm.formula_f1(reversed_imp, [T((), "v2", IMP, (), "v3")], symmetric=True) == 0.0  # → stays directional
    with pytest.raises(ValueError):
        mm.score_sample(uranus, half, "lenient")


def test_unary_operators_are_compared_after_s5_reduction(uranus):
    gold = uranus.gold()
    doubled = ml.parse_triples("v2 [and] [negative] [negative] [possible] [necessary] v3")
    pred = ml.Prediction(gold.steps, {"sent3": tuple(doubled)}, gold.degrees)
    assert mm.score_sample(uranus, pred).scores["formula_f1"] == 1.0


def test_macro_f1_keeps_the_unresolved_class(uranus, prediction):
    pairs = mm.score_sample(uranus, prediction).degrees
    assert pairs == [(2, 2), (2, 2), (4, 2), (2, -1)]
    # labels {-1, 2, 4}: class 2 has p = r = 2/3; classes 4 and -1 score 0
    assert mm.macro_f1(pairs) == pytest.approx((2 / 3) / 3)
    scores = mm.evaluate([uranus], {uranus.id: prediction})
    assert scores["cert_macro_f1"] == pytest.approx(100 * (2 / 3) / 3)
    assert list(scores)[:10] == list(mm.MAIN_COLUMNS)


def test_gold_scores_100_and_missing_predictions_score_empty(uranus):
    assert set(mm.evaluate([uranus], {uranus.id: uranus.gold()}).values()) == {100.0}
    empty = mm.evaluate([uranus], {})
    assert empty["formula_f1"] == 75.0  # 3 of 4 gold formulas are empty
    assert empty["rebut_f1"] == 0.0 and empty["support_f1"] == 0.0 and empty["cert_acc"] == 0.0


def test_per_operator_groups(uranus, prediction):
    per = mm.per_operator([uranus], {uranus.id: prediction})
    assert per[AND] == (pytest.approx(100 * 2 / 3), 1)  # sent3: v2 ∧ □v3 (local □ counts too)
    assert per[B] == (pytest.approx(100 * 2 / 3), 1)
    assert per[IMP] == (pytest.approx(float("nan"), nan_ok=True), 0)
    assert per["none"] == (pytest.approx(100 * 2 / 3), 3)  # sent1 0, sent2 1, sent4 1


def test_error_categories():
    gold = [S("s1", "->", "s3"), S("s2", "->", "s3"), S("s4", "=>", "s2")]
    assert mm.graph_error(gold[::-1], gold) is None
    assert mm.graph_error([S("s1", "=>", "s3"), gold[1], gold[2]], gold) == "G1"  # same pairs, a type differs
    assert mm.graph_error(gold[:2], gold) == "G2"  # the rebut step is missing
    assert mm.graph_error([S("s3", "->", "s1"), S("s2", "->", "s1"), gold[2]], gold) == "G3"
    assert mm.graph_error([*gold, S("s5", "->", "s3")], gold) == "G4"  # one step too many
    assert mm.graph_error([S("s1", "->", "s2"), S("s2", "->", "s3"), gold[2]], gold) == "G5"
    g = [T((), "v1", IMP, (), "v2")]
    assert mm.formula_error(g, g) is None
    assert mm.formula_error([T((), "v1", IMP, (), "v3")], g) == "F1"
    assert mm.formula_error([T((N,), "v1", IMP, (), "v2")], g) == "F2"
    assert mm.formula_error([T((), "v1", AND, (), "v2")], g) == "F3"
    assert mm.formula_error([T((), "v2", IMP, (), "v1")], g) == "F4"
    assert [mm.certainty_error(p, gd) for p, gd in [(3, 3), (-1, 2), (2, 4), (0, 2), (0, 3)]] == \
        [None, "C4", "C2", "C3", "C1"]


def test_error_counts(uranus, prediction):
    counts = mm.error_counts([uranus], {uranus.id: prediction})
    assert counts["G2"] == 1  # the rebut step s4 => s2 became support
    assert counts["F1"] == 2  # sent1 (a variable pair where none is) and sent3 (an extra variable v1)
    assert counts["C2"] == 1 and counts["C4"] == 1


# --- the official scorer's values on the released data (skipped without it) --------------------

ANCHORS = {  # (split, predictor) -> official scores, from the official evaluate_metric.py
    ("test", "empty"): dict(node_f1=0.0, step_f1=0.0, formula_f1=56.94, formula_all=56.94, cert_acc=0.0,
                            cert_macro_f1=0.0, overall_all=0.0, support_f1=3.0, rebut_f1=59.0),
    ("test", "trivial"): dict(node_f1=95.03, node_all=71.0, step_f1=48.72, step_all=12.5, formula_f1=56.94,
                              formula_all=56.94, cert_acc=80.85, cert_all=46.0, cert_macro_f1=17.98, overall_all=4.21,
                              support_f1=53.01, support_all=12.5, rebut_f1=59.0, rebut_all=59.0),
    ("dev", "empty"): dict(formula_f1=55.83, formula_all=55.83, support_f1=1.5, rebut_f1=57.0),
    ("dev", "trivial"): dict(node_f1=94.47, node_all=70.0, step_f1=49.61, step_all=16.5, formula_f1=55.83,
                             cert_acc=79.38, cert_all=48.5, cert_macro_f1=17.84, overall_all=3.58, support_f1=53.77),
}
STRICT_ANCHORS = {("test", "trivial"): 2.5, ("dev", "trivial"): 2.5}


def _release(split):
    path = data_dir() / "metalogic" / f"metalogic_{split}.json"
    if not path.is_file():
        pytest.skip("the MetaLogic release is not in RCSTUDY_DATA")
    graphs = ml.load_metagraphs(path)
    if len(graphs) != 200:
        pytest.skip("RCSTUDY_DATA holds a MetaLogic copy other than the release")
    return graphs


@pytest.mark.parametrize("split,name", sorted(ANCHORS))
def test_official_anchors(split, name):
    graphs = _release(split)
    predict = {"empty": rules.empty_prediction, "trivial": rules.trivial_prediction}[name]
    scores = mm.evaluate(graphs, {g.id: predict(g) for g in graphs})
    for key, value in ANCHORS[(split, name)].items():
        assert scores[key] == pytest.approx(value, abs=0.01), key
    if (split, name) in STRICT_ANCHORS:
        strict = mm.evaluate(graphs, {g.id: predict(g) for g in graphs}, "strict")
        assert strict["overall_all"] == pytest.approx(STRICT_ANCHORS[(split, name)], abs=0.01)


def test_published_tables_have_the_papers_shapes():
    from rcstudy import papers

    assert papers.table("metalogic", "Table 3").shape == (6, len(mm.MAIN_COLUMNS))
    assert papers.table("metalogic", "Table 14").shape == (6, 11)
    assert papers.table("metalogic", "Table 15").shape == (18, 10)
    assert papers.table("metalogic", "Table 16").shape == (18, 11)
    flagged = {n.row for n in papers.numbers("metalogic") if n.table == "Table 15" and "copy" in n.note}
    assert flagged == {f"MetGen (large), {r}" for r in ("20%", "10%", "5%", "2%", "1%")}
    # the flagged MetGen rows are indeed the Multitask rows
    t15 = papers.table("metalogic", "Table 15")
    assert (t15.loc["MetGen (large), 10%"] == t15.loc["Multitask (large), 10%"]).all()
