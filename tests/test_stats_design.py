"""Intervals that respect the design: clusters of items, seeds above items, pairs, two groups, spread."""

from __future__ import annotations

import numpy as np
import pytest

from rcstudy.stats import (bootstrap_ci, hierarchical_ci, hierarchical_difference, hierarchical_paired,
                           spread_ci)


def width(iv):
    return iv.high - iv.low


def test_without_clusters_or_seeds_it_is_the_plain_bootstrap():
    x = np.random.default_rng(1).integers(0, 2, 400).astype(float)
    plain, ours = bootstrap_ci(x, scale=100), hierarchical_ci(x)
    assert ours.estimate == pytest.approx(plain.estimate)
    assert width(ours) == pytest.approx(width(plain), rel=0.1)
    # a proportion of 0.5 on 400 items: half-width 1.96 · sqrt(.25/400) = 4.9 points
    assert width(ours) / 2 == pytest.approx(4.9, rel=0.1) and ours.n == 400


def test_clustering_widens_the_interval_when_items_of_a_cluster_agree():
    # 40 main questions of 10 subquestions each, all right or all wrong within a main question: there
    # are 40 independent answers, not 400, so the interval is sqrt(10) ≈ 3.2 times wider
    mains = np.repeat(np.arange(40), 10)
    x = np.repeat(np.arange(40) % 2, 10).astype(float)
    iid, clustered = hierarchical_ci(x), hierarchical_ci(x, clusters=mains)
    assert clustered.estimate == pytest.approx(50.0) and clustered.n == 40
    assert width(clustered) / width(iid) == pytest.approx(np.sqrt(10), rel=0.2)
    # known value: 40 independent coin flips give a half-width of 1.96 · sqrt(.25/40) = 15.5 points
    assert width(clustered) / 2 == pytest.approx(15.5, rel=0.15)


def test_clusters_of_independent_items_change_little():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2, 600).astype(float)
    mains = np.repeat(np.arange(200), 3)
    assert width(hierarchical_ci(x, clusters=mains)) == pytest.approx(width(hierarchical_ci(x)), rel=0.15)


def test_seeds_are_a_level_above_items():
    # two seeds that disagree completely on the same 300 items: pooling them as 600 items gives a
    # narrow interval around 50; resampling seeds too says the level depends on the run (0 or 100)
    runs = np.vstack([np.ones(300), np.zeros(300)])
    pooled = bootstrap_ci(runs.ravel(), scale=100)
    ours = hierarchical_ci(runs)
    assert ours.estimate == pytest.approx(50.0) and ours.low == pytest.approx(0.0) and ours.high == pytest.approx(100.0)
    assert width(pooled) < 10
    # seeds that agree: resampling them adds nothing
    same = np.vstack([np.tile([1.0, 0.0], 150)] * 3)
    assert width(hierarchical_ci(same)) == pytest.approx(width(hierarchical_ci(same[0])), rel=0.1)
    assert hierarchical_ci(same, resample_seeds=False).estimate == pytest.approx(50.0)


def test_missing_items_are_left_out():
    x = np.array([1.0, 0.0, np.nan, 1.0])
    assert hierarchical_ci(x).estimate == pytest.approx(200 / 3)


def test_pairing_removes_the_items_difficulty():
    # two systems on the same items whose difficulty varies a lot: system a is right exactly where b
    # is, plus 40 more items; the paired interval is narrow, two independent groups' is wide
    rng = np.random.default_rng(3)
    b = rng.integers(0, 2, 400).astype(float)
    a = b.copy()
    a[np.flatnonzero(b == 0)[:40]] = 1.0
    paired = hierarchical_paired(a, b)
    unpaired = hierarchical_difference(a, b)
    assert paired.estimate == pytest.approx(10.0) and unpaired.estimate == pytest.approx(10.0)
    assert paired.low > 0 and unpaired.low < paired.low and width(paired) < width(unpaired) / 2


def test_paired_with_clusters_and_seeds():
    mains = np.repeat(np.arange(50), 4)
    base = np.repeat(np.arange(50) % 2, 4).astype(float)
    gain = np.vstack([base + 0.1 * (np.arange(200) % 2)] * 2)
    diff = hierarchical_paired(gain, base, clusters=mains)
    assert diff.estimate == pytest.approx(5.0) and diff.n == 50 and diff.low > 0
    with pytest.raises(ValueError, match="align"):
        hierarchical_paired(np.ones(3), np.ones(4))


def test_two_groups_with_clusters_are_wider_than_without():
    a = np.repeat(np.arange(30) % 2, 5).astype(float)
    b = np.repeat((np.arange(30) % 3 == 0), 5).astype(float)
    ca, cb = np.repeat(np.arange(30), 5), np.repeat(np.arange(30), 5)
    loose, tight = hierarchical_difference(a, b, clusters_a=ca, clusters_b=cb), hierarchical_difference(a, b)
    assert loose.estimate == pytest.approx(tight.estimate) and width(loose) > 1.8 * width(tight)


def test_spread_across_groups():
    # four types of 100 items each: one type 30 points above the others
    groups = np.repeat(["a", "b", "c", "d"], 100)
    x = np.concatenate([np.tile([1.0, 0.0], 50)] * 3 + [np.tile([1.0, 1.0, 1.0, 1.0, 0.0], 20)])
    s = spread_ci(x, groups)
    assert s.estimate == pytest.approx(80 - 57.5) and s.low > 11.2
    # no spread: the interval's upper end shrinks with n (a maximum of four types, so biased upward)
    flat = spread_ci(np.tile([1.0, 0.0], 800), np.repeat(["a", "b", "c", "d"], 400))
    assert flat.estimate == pytest.approx(0.0) and 0 < flat.high < 7
    with pytest.raises(ValueError, match="one group"):
        spread_ci(np.ones(4), ["a", "b", "a", "b"], clusters=[0, 0, 1, 1])


def test_two_kinds_of_items_of_one_system_share_the_cluster_draw():
    # every main question has one selective and one eliminative subquestion, both right or both wrong
    # except that selective ones are right 10 more times: the shared draw keeps the pairing
    from rcstudy.stats import subset_difference

    mains = np.repeat(np.arange(200), 2)
    kind = np.tile([True, False], 200)
    base = np.repeat(np.arange(200) % 2, 2).astype(float)
    x = base.copy()
    x[np.flatnonzero(kind & (base == 0))[:20]] = 1.0
    shared = subset_difference(x, kind, ~kind, clusters=mains)
    apart = hierarchical_difference(x[kind], x[~kind], clusters_a=mains[kind], clusters_b=mains[~kind])
    assert shared.estimate == pytest.approx(10.0) == apart.estimate
    assert shared.low > 0 and width(shared) < width(apart) / 2 and shared.n == 200
