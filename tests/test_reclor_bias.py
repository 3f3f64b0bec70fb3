"""Option-bias statistics and the EASY/HARD set logic, on hand-made items and predictions."""

import numpy as np
import pandas as pd
import pytest

from rcstudy import bias
from rcstudy.data import MCItem


def item(i, options, label):
    return MCItem(f"x_{i}", "ctx", "q", tuple(options), label)


# Two items; right options: "a a b" (item 0) and "b c" (item 1).
ITEMS = [
    item(0, ["a a b", "c", "b d", "d"], 0),
    item(1, ["a", "b c", "c c", "d"], 1),
    item(2, ["a", "b", "c", "d"], None),  # unlabelled: ignored by the statistics
]


def test_token_counts_and_p_right_by_occurrence():
    stats = bias.token_label_stats(ITEMS, str.split)
    # a: 3 occurrences (2 right); b: 3 (2 right); c: 4 (1 right); d: 3 (0 right).
    assert stats.loc[["a", "b", "c", "d"], "count"].tolist() == [3, 3, 4, 3]
    assert stats.loc[["a", "b", "c", "d"], "right"].tolist() == [2, 2, 1, 0]
    assert stats.loc["c", "p_right"] == pytest.approx(0.25)
    assert list(stats.index) == ["a", "b", "c", "d"]  # order of first appearance


def test_token_counts_by_presence_count_an_option_once():
    stats = bias.token_label_stats(ITEMS, str.split, count_mode="presence")
    # a: options "a a b", "a" → 2 (1 right); c: "c", "b c", "c c" → 3 (1 right).
    assert stats.loc["a", ["count", "right"]].tolist() == [2, 1]
    assert stats.loc["c", ["count", "right"]].tolist() == [3, 1]
    with pytest.raises(ValueError, match="count_mode"):
        bias.token_label_stats(ITEMS, str.split, count_mode="types")


def test_top_tokens_frequency_rule_and_stable_ties():
    stats = pd.DataFrame({"count": [20, 21, 25, 40, 19], "right": [15, 11, 11, 10, 19]},
                         index=["at20", "tieA", "tieB", "low", "rare"])
    stats["p_right"] = stats["right"] / stats["count"]
    top = bias.top_tokens(stats, min_freq=20, rule="at least", k=3)
    assert list(top.index) == ["at20", "tieA", "tieB"] and top["rank"].tolist() == [1, 2, 3]
    assert top.loc["at20", "Score (%)"] == pytest.approx(75.0)
    assert list(bias.top_tokens(stats, min_freq=20, rule="more than", k=2).index) == ["tieA", "tieB"]
    # Equal scores keep the order of first appearance.
    stats.loc["tieB", ["count", "right"]] = [21, 11]
    stats["p_right"] = stats["right"] / stats["count"]
    assert list(bias.top_tokens(stats, min_freq=21, k=2).index) == ["tieA", "tieB"]


def test_option_lengths():
    lengths = bias.option_lengths(ITEMS, str.split)
    assert len(lengths) == 8
    assert lengths.groupby("right")["length"].mean().to_dict() == {False: pytest.approx(8 / 6), True: 2.5}


def runs_from_strings(rows):
    """"1101" → a boolean vector; one string per seed."""
    return np.array([[ch == "1" for ch in r] for r in rows])


IDS = [f"val_{i}" for i in range(6)]
RUNS = {
    # Item 0 right under every seed of both models; item 1 only for M1; item 2 only for M2;
    # item 3 right under 3 of 4 seeds of M1 (not consistent); items 4, 5 never consistent.
    "M1": runs_from_strings(["110110", "110101", "110100", "110000"]),
    "M2": runs_from_strings(["101001", "101010", "101001", "101100"]),
}


def test_intersection_over_seeds_then_union_over_models():
    eh = bias.EasyHard.from_runs(IDS, RUNS)
    assert eh.consistent("M1").tolist() == [True, True, False, False, False, False]
    assert eh.consistent("M2").tolist() == [True, False, True, False, False, False]
    assert eh.easy.tolist() == [True, True, True, False, False, False]
    assert eh.hard.tolist() == [False, False, False, True, True, True]
    assert eh.runs_right.tolist() == [8, 4, 4, 4, 2, 3]
    assert eh.sizes().to_dict() == {"M1": 2, "M2": 2, "Union": 3}


def test_overlap_matrix_is_symmetric_with_sizes_on_the_diagonal():
    overlap = bias.EasyHard.from_runs(IDS, RUNS).overlap()
    assert overlap.values.tolist() == [[2, 1], [1, 2]]
    assert list(overlap.index) == list(overlap.columns) == ["M1", "M2"]


def test_export_frame_columns():
    frame = bias.EasyHard.from_runs(IDS, RUNS).frame("val")
    assert list(frame.columns) == ["id_string", "split", "subset", "right_all_seeds:M1", "right_all_seeds:M2",
                                   "runs_right", "runs_total"]
    assert frame["subset"].tolist() == ["EASY"] * 3 + ["HARD"] * 3
    assert frame["runs_total"].unique().tolist() == [8]


def test_a_single_seed_makes_every_right_item_easy_and_shapes_are_checked():
    eh = bias.EasyHard.from_runs(IDS, {"M": [np.array([1, 0, 1, 0, 0, 0], bool)]})
    assert eh.easy.sum() == 2
    with pytest.raises(ValueError, match="expected"):
        bias.EasyHard.from_runs(IDS, {"M": [np.ones(5, bool)]})


def test_correct_needs_labels():
    logits = np.array([[3.0, 0, 0, 0], [0, 0, 1.0, 0]])
    assert bias.correct(logits, ITEMS[:2]).tolist() == [True, False]
    with pytest.raises(ValueError, match="labelled"):
        bias.correct(logits, ITEMS[1:])


def test_kfold_partitions_and_is_seeded():
    folds = bias.kfold(11, 3, seed=5)
    assert sorted(np.concatenate(folds).tolist()) == list(range(11))
    assert sorted(len(f) for f in folds) == [3, 4, 4]
    assert [f.tolist() for f in bias.kfold(11, 3, seed=5)] == [f.tolist() for f in folds]
    with pytest.raises(ValueError):
        bias.kfold(3, 4, seed=0)


def test_cross_fit_never_trains_on_the_item_it_predicts():
    items = [item(i, ["a", "b", "c", "d"], i % 4) for i in range(10)]
    folds = bias.kfold(len(items), 5, seed=0)
    seen = []

    def fit_predict(train, held):
        assert not {it.id for it in train} & {it.id for it in held}
        assert len(train) + len(held) == len(items)
        seen.extend(it.id for it in held)
        # Score = the item's own number on its label option: lets us check rows land in place.
        out = np.zeros((len(held), 4))
        for r, it in enumerate(held):
            out[r, it.label] = int(it.id.split("_")[1]) + 1
        return out

    scores = bias.cross_fit(items, folds, fit_predict)
    assert sorted(seen) == sorted(it.id for it in items)
    assert scores.max(axis=1).tolist() == [i + 1 for i in range(10)]
    assert bias.correct(scores, items).all()


def test_kfold_is_scikit_learns():
    from sklearn.model_selection import KFold

    expected = [held.tolist() for _, held in KFold(4, shuffle=True, random_state=7).split(range(23))]
    assert [f.tolist() for f in bias.kfold(23, 4, seed=7)] == expected
