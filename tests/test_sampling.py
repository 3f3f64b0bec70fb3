"""The two kinds of seeded subsample."""

import numpy as np

from rcstudy import sampling


def test_draw_keeps_original_order_and_is_reproducible():
    items = list(range(100))
    a = sampling.draw(items, 10, seed=3)
    assert a == sorted(a) and len(set(a)) == 10 and a == sampling.draw(items, 10, seed=3)
    assert sampling.draw(items, None, 0) == items and sampling.draw(items, 500, 0) == items
    # the draw the chapters have always made: sorted positions of one choice without replacement
    assert a == sorted(np.random.default_rng(3).choice(100, size=10, replace=False).tolist())


def test_nested_samples_grow_without_redrawing():
    items = [f"q{i}" for i in range(50)]
    small, large = sampling.nested(items, 5, seed=1), sampling.nested(items, 20, seed=1)
    assert large[:5] == small and len(set(large)) == 20
    assert sampling.nested(items, None, 1) == items
