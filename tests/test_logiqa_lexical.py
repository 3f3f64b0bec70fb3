"""Word matching and sliding window on hand-made items whose scores were computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rcstudy.baselines import lexical as lx
from rcstudy.data.records import MCItem


def mc(context: str, question: str, options, label: int = 0) -> MCItem:
    return MCItem("x", context, question, tuple(options), label)


CAT = mc("the cat sat on the mat", "where did the cat sit", ["the dog", "on the mat", "the cat sat", "mat"], 2)


def test_word_matching_paper_variant():
    # vocab of paragraph + question: the cat sat on mat where did sit
    assert lx.word_matching_scores([CAT]).tolist() == [[1, 3, 3, 1]]
    assert lx.first_argmax(lx.word_matching_scores([CAT])).tolist() == [1]  # tie 1/2 → the earlier option


def test_word_matching_is_case_sensitive_split():
    item = mc("The Cat sat.", "", ["the cat", "The Cat", "sat", "sat."])
    assert lx.word_matching_scores([item]).tolist() == [[0, 2, 0, 1]]
    words = lx.WMVariant(tokens="words")
    assert lx.word_matching_scores([item], words).tolist() == [[2, 2, 1, 1]]


def test_word_matching_variants():
    item = mc("red red blue", "which colour", ["red red red", "blue green", "colour", "the"])
    assert lx.word_matching_scores([item], lx.WMVariant(score="count")).tolist() == [[3, 1, 1, 0]]
    assert lx.word_matching_scores([item], lx.WMVariant(score="norm")).tolist() == [[1.0, 0.5, 1.0, 0.0]]
    assert lx.word_matching_scores([item], lx.WMVariant(context="p")).tolist() == [[1, 1, 0, 0]]
    stop = mc("the plan of the city", "", ["the", "of the city", "plan", "x"])
    assert lx.word_matching_scores([stop], lx.WMVariant(stopwords=True)).tolist() == [[0, 1, 1, 0]]
    with pytest.raises(ValueError):
        lx.WMVariant(context="q")


def test_ties_first_and_random():
    scores = np.array([[1, 3, 3, 1], [0, 0, 0, 0], [2, 1, 0, 0]])
    labels = [2, 3, 0]
    assert lx.per_item_correct(scores, labels, "first").tolist() == [0, 0, 1]
    assert lx.per_item_correct(scores, labels, "random").tolist() == pytest.approx([0.5, 0.25, 1.0])


def test_grid_covers_every_variant():
    rows = lx.word_matching_grid([CAT, CAT])
    assert len(rows) == 2 * 2 * 2 * 3 * 2
    paper = next(r for r in rows if r["variant"] == lx.PAPER_WM.name)
    assert paper["accuracy"] == 0.0  # picks option 1, gold is 2


def test_sliding_window_by_hand():
    item = mc("red blue red green", "blue", ["green", "red", "purple", "blue"])
    sw = lx.sliding_window_scores([item])[0]
    assert sw[0] == pytest.approx(math.log(2))  # S = {green, blue}, width 2
    assert sw[1] == pytest.approx(math.log(1.5) + math.log(2))  # "red blue"
    assert sw[2] == pytest.approx(math.log(2))  # only "blue" is in the passage
    assert sw[3] == pytest.approx(math.log(2))
    swd = lx.sliding_window_scores([item], distance=True)[0]
    assert swd[0] == pytest.approx(math.log(2) - 2 / 3)  # blue at 1, green at 3, |P| - 1 = 3
    assert swd[1] == pytest.approx(math.log(3) - 1 / 3)
    assert swd[2] == pytest.approx(math.log(2) - 1)  # no answer word in the passage
    assert swd[3] == pytest.approx(math.log(2) - 1)  # the answer word is a question word


def test_sliding_window_window_longer_than_passage():
    item = mc("alpha beta", "gamma delta epsilon", ["alpha beta", "zeta", "beta", "eta"])
    assert lx.sliding_window_scores([item])[0].tolist() == pytest.approx([2 * math.log(2), 0, math.log(2), 0])


def test_sliding_window_picks_the_matching_option():
    item = mc("Tom keeps the red key in the blue box.", "Where is the key?",
              ["under the bed", "in the blue box", "in the car", "on the roof"], 1)
    assert lx.first_argmax(lx.sliding_window_scores([item])).tolist() == [1]


def test_chinese_uses_characters():
    assert lx.char_tokens("下雨了。Ab 1") == ["下", "雨", "了", "a", "b", "1"]
    item = mc("如果下雨，比赛就取消。", "比赛怎样？", ["晴天", "比赛取消", "下雪", "无"], 1)
    assert lx.word_matching_scores([item], lx.PAPER_WM_ZH).tolist() == [[0, 4, 1, 0]]
    assert lx.first_argmax(lx.sliding_window_scores([item], lang="zh")).tolist() == [1]


def test_random_baselines():
    assert lx.majority_class_accuracy([3, 3, 1, 0]) == 0.5
    assert lx.uniform_expected_accuracy([CAT, mc("c", "q", ["a", "b"])]) == pytest.approx((0.25 + 0.5) / 2)
