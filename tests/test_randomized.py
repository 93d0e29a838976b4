"""Randomized positions (poslib.randomized)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import poslib as P


# ---------- randomized positions ----------
@given(n=st.integers(1, 64), extra=st.integers(0, 500), seed=st.integers(0, 2**32 - 1))
def test_randomized_positions_are_sorted_distinct_and_in_range(n, extra, seed):
    p = P.randomized_positions(n, n + extra, seed=seed)
    assert p.shape == (n,) and p.dtype == np.int64
    assert (np.diff(p) > 0).all() and p[0] >= 0 and p[-1] < n + extra


def test_randomized_positions_are_seeded_and_fresh_per_draw():
    a, b = P.randomized_positions(16, 1024, seed=3), P.randomized_positions(16, 1024, seed=3)
    np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(3)
    first, second = P.randomized_positions(16, 1024, seed=g), P.randomized_positions(16, 1024, seed=g)
    np.testing.assert_array_equal(first, a)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(P.randomized_positions(8, 8, seed=0), np.arange(8))  # the whole range
    # over many draws every position of the range is used (unlike training at 0 … n − 1)
    seen = np.unique(np.concatenate([P.randomized_positions(16, 256, seed=g) for _ in range(200)]))
    assert len(seen) == 256
