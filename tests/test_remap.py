"""Training-free distance remapping (poslib.remap): ReRoPE, Leaky ReRoPE, Self-Extend, and their RoPE scores.

Expected values come from the papers' formulas written again here (loops over m and n, and small
matrices worked by hand), never from the functions under test; the scores are checked against the
explicit rotation matrix R(d) of :func:`poslib.rope_matrix`, one pair at a time.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

# ---- hand-worked matrices ------------------------------------------------------------------------------------------

# ReRoPE, 6 positions, w = 2: min(m − n, 2); above the diagonal the plain (negative) m − n.
RE_6_W2 = [
    [0, -1, -2, -3, -4, -5],
    [1, 0, -1, -2, -3, -4],
    [2, 1, 0, -1, -2, -3],
    [2, 2, 1, 0, -1, -2],
    [2, 2, 2, 1, 0, -1],
    [2, 2, 2, 2, 1, 0],
]
# Leaky ReRoPE, w = 2, leak = 2, last 3 queries of 6: beyond the window 2 + (m − n − 2)/2.
# m = 5: n = 0 → 2 + 3/2 = 3.5, n = 1 → 3, n = 2 → 2.5, n = 3 → 2 (m − n = w: both regions give 2).
LEAKY_3_OF_6 = [
    [2.5, 2.0, 1.0, 0.0, -1.0, -2.0],
    [3.0, 2.5, 2.0, 1.0, 0.0, -1.0],
    [3.5, 3.0, 2.5, 2.0, 1.0, 0.0],
]
# Self-Extend, G = 2, W = 3, 10 positions, rows m = 4 and m = 9.
# Beyond the window (m − n ≥ 3): ⌊m/2⌋ + 3 − ⌊3/2⌋ − ⌊n/2⌋ = ⌊m/2⌋ + 2 − ⌊n/2⌋.
# m = 4: n = 0, 1 → 2 + 2 − 0 = 4; n = 2, 3, 4 inside the window → 2, 1, 0.
# m = 9: n = 0, 1 → 4 + 2 − 0 = 6; n = 2, 3 → 5; n = 4, 5 → 4; n = 6 → 4 + 2 − 3 = 3; n = 7, 8, 9 → 2, 1, 0.
SE_ROW_4 = [4, 4, 2, 1, 0, -1, -2, -3, -4, -5]
SE_ROW_9 = [6, 6, 5, 5, 4, 4, 3, 2, 1, 0]


def test_rerope_is_the_hand_worked_matrix():
    got = P.rerope_relative_positions(6, window=2)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, RE_6_W2)


def test_leaky_rerope_is_the_hand_worked_matrix_for_the_last_queries():
    got = P.rerope_relative_positions(3, 6, window=2, leak=2.0)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, LEAKY_3_OF_6)


def test_self_extend_is_the_hand_worked_rows():
    got = P.self_extend_relative_positions(10, group_size=2, neighbor_window=3)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got[4], SE_ROW_4)
    np.testing.assert_array_equal(got[9], SE_ROW_9)
    # the same rows as the last queries of a longer key range: queries sit at k_len − q_len + i
    np.testing.assert_array_equal(P.self_extend_relative_positions(6, 10, group_size=2, neighbor_window=3)[5], SE_ROW_9)


def test_self_extend_shift_floors_w_over_g_as_the_code_does():
    # W = 5, G = 2: LongLM's integer code shifts by W − ⌊W/G⌋ = 3, the paper's W − W/G would be 2.5.
    d = P.self_extend_relative_positions(12, group_size=2, neighbor_window=5)
    assert d[11, 0] == 11 // 2 + 5 - 2 == 8
    assert d[11, 6] == 5 + 3 - 3 == 5  # the first pair beyond the window: m − n = W = 5 exactly
    assert d[11, 7] == 4  # the last pair inside it


# ---- the formulas again, written as loops ---------------------------------------------------------------------------


def _rerope_loop(q_len, k_len, w, leak):
    out = np.zeros((q_len, k_len))
    for i in range(q_len):
        m = k_len - q_len + i
        for n in range(k_len):
            d = m - n
            out[i, n] = d if d < w else (w if leak is None else w + (d - w) / leak)
    return out


def _self_extend_loop(q_len, k_len, G, W):
    out = np.zeros((q_len, k_len), dtype=np.int64)
    for i in range(q_len):
        m = k_len - q_len + i
        for n in range(k_len):
            out[i, n] = m - n if m - n < W else (m // G + W - W // G) - n // G
    return out


sizes = st.integers(1, 40).flatmap(lambda k: st.tuples(st.integers(1, k), st.just(k)))


@given(sizes, st.integers(1, 20), st.one_of(st.none(), st.floats(1.01, 50)))
def test_rerope_equals_the_formula(size, w, leak):
    q_len, k_len = size
    np.testing.assert_allclose(
        P.rerope_relative_positions(q_len, k_len, window=w, leak=leak), _rerope_loop(q_len, k_len, w, leak), rtol=1e-15
    )


@given(sizes, st.integers(1, 9), st.integers(1, 20))
def test_self_extend_equals_the_formula(size, G, W):
    q_len, k_len = size
    np.testing.assert_array_equal(
        P.self_extend_relative_positions(q_len, k_len, group_size=G, neighbor_window=W),
        _self_extend_loop(q_len, k_len, G, W),
    )


# ---- properties ----------------------------------------------------------------------------------------------------


def _maps(q_len, k_len, w, leak, G):
    return {
        "rerope": (P.rerope_relative_positions(q_len, k_len, window=w), w),
        "leaky": (P.rerope_relative_positions(q_len, k_len, window=w, leak=leak), w),
        "self_extend": (P.self_extend_relative_positions(q_len, k_len, group_size=G, neighbor_window=w), w),
    }


def _true(q_len, k_len):
    m = np.arange(q_len)[:, None] + (k_len - q_len)
    return m - np.arange(k_len)[None, :]  # m − n


@given(sizes, st.integers(1, 20), st.floats(1.01, 50), st.integers(1, 9))
def test_every_map_is_plain_inside_the_window_and_never_decreases_along_a_row(size, w, leak, G):
    q_len, k_len = size
    true = _true(q_len, k_len)
    for name, (d, window) in _maps(q_len, k_len, w, leak, G).items():
        inside = true < window  # past keys inside the window, and every future key
        np.testing.assert_array_equal(d[inside], true[inside], err_msg=name)
        for i in range(q_len):
            past = true[i] >= 0
            row = d[i][past][::-1]  # the past keys of query i, by growing true distance 0, 1, 2, …
            assert np.all(np.diff(row) >= 0), (name, i, row)


@given(sizes, st.integers(1, 20), st.floats(1.01, 50))
def test_rerope_never_exceeds_w_and_leaky_grows_strictly_at_slope_one_over_k(size, w, leak):
    q_len, k_len = size
    true = _true(q_len, k_len)
    hard = P.rerope_relative_positions(q_len, k_len, window=w)
    assert hard.max() == min(w, k_len - 1)  # w is reached as soon as a pair is w apart
    soft = P.rerope_relative_positions(q_len, k_len, window=w, leak=leak)
    beyond = true >= w
    assert np.all(soft[beyond] >= w)
    assert soft.max() <= w + (k_len - 1 - w) / leak + 1e-12 if k_len - 1 >= w else soft.max() == k_len - 1
    for i in range(q_len):
        row = soft[i][true[i] >= w][::-1]  # beyond the window, by growing true distance
        np.testing.assert_allclose(np.diff(row), 1 / leak, rtol=1e-12)  # strictly increasing: every step is 1/leak > 0


@given(st.integers(1, 80), st.integers(1, 9), st.integers(1, 20))
def test_self_extend_never_exceeds_its_bound(length, G, W):
    d = P.self_extend_relative_positions(length, group_size=G, neighbor_window=W)
    bound = length - 1 if length - 1 < W else (length - 1) // G + W - W // G
    assert d.max() == bound == P.self_extend_max_distance(length, group_size=G, neighbor_window=W)


@given(st.integers(2, 40), st.integers(1, 8), st.integers(1, 39))
def test_self_extend_within_the_readme_rule_stays_within_the_training_length(L, G, W):
    # LongLM's README: an input of up to (L − W)·G + W tokens. Every distance is then ≤ L, and ≤ L − 1
    # (only distances a model trained at L has seen) when G divides W.
    if W >= L:
        return
    length = (L - W) * G + W
    worst = P.self_extend_relative_positions(length, group_size=G, neighbor_window=W).max()
    assert worst <= L
    if W % G == 0:
        assert worst <= L - 1


def test_group_size_one_is_plain_rope():
    np.testing.assert_array_equal(P.self_extend_relative_positions(5, 9, group_size=1, neighbor_window=3), _true(5, 9))


def test_positions_per_region_give_the_distances():
    pos = P.rerope_positions(3, 7, window=2, leak=4.0)
    assert pos.q_positions.shape == (2, 3) and pos.k_positions.shape == (2, 7) and pos.region.shape == (3, 7)
    # region 1 of Leaky ReRoPE: query at (m + w(leak − 1))/leak, key at n/leak
    np.testing.assert_allclose(pos.q_positions[1], (np.arange(4, 7) + 2 * 3) / 4)
    np.testing.assert_allclose(pos.k_positions[1], np.arange(7) / 4)
    np.testing.assert_array_equal(pos.region, (_true(3, 7) >= 2).astype(int))
    se = P.self_extend_positions(4, group_size=3, neighbor_window=4)
    np.testing.assert_array_equal(se.q_positions[1], np.arange(4) // 3 + 4 - 1)
    np.testing.assert_array_equal(se.k_positions[1], np.arange(4) // 3)


# ---- NumPy = torch ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda **kw: P.rerope_relative_positions(5, 11, window=3, **kw),
        lambda **kw: P.rerope_relative_positions(5, 11, window=3, leak=2.5, **kw),
        lambda **kw: P.self_extend_relative_positions(5, 11, group_size=3, neighbor_window=4, **kw),
        lambda **kw: P.rerope_positions(5, 11, window=3, leak=2.5, **kw).q_positions,
        lambda **kw: P.self_extend_positions(5, 11, group_size=3, neighbor_window=4, **kw).k_positions,
    ],
)
def test_numpy_equals_torch(build):
    a, b = build(), build(backend="torch")
    assert isinstance(a, np.ndarray) and isinstance(b, torch.Tensor)
    assert str(b.dtype).split(".")[-1] == str(a.dtype)
    np.testing.assert_array_equal(b.numpy(), a)


# ---- scores --------------------------------------------------------------------------------------------------------


def _brute_force(q, k, distances, base=10000.0):
    # score of query m and key n at distance d: (R(d) q_m)ᵀ k_n with the explicit block-diagonal R(d)
    d = q.shape[-1]
    out = np.zeros((*q.shape[:-2], q.shape[-2], k.shape[-2]))
    for idx in np.ndindex(*q.shape[:-2]):
        for i in range(q.shape[-2]):
            for j in range(k.shape[-2]):
                out[(*idx, i, j)] = (P.rope_matrix(float(distances[i, j]), d, base) @ q[(*idx, i)]) @ k[(*idx, j)]
    return out


def _independent_distances(kind, q_len, k_len):
    if kind == "rerope":
        return _rerope_loop(q_len, k_len, 3, None)
    if kind == "leaky":
        return _rerope_loop(q_len, k_len, 3, 2.5)
    return _self_extend_loop(q_len, k_len, 2, 3)


POSITIONS = {
    "rerope": lambda q_len, k_len, **kw: P.rerope_positions(q_len, k_len, window=3, **kw),
    "leaky": lambda q_len, k_len, **kw: P.rerope_positions(q_len, k_len, window=3, leak=2.5, **kw),
    "self_extend": lambda q_len, k_len, **kw: P.self_extend_positions(
        q_len, k_len, group_size=2, neighbor_window=3, **kw
    ),
}


@pytest.mark.parametrize("kind", sorted(POSITIONS))
@pytest.mark.parametrize("q_len, k_len", [(9, 9), (4, 9)])
def test_scores_equal_the_brute_force_rotation_per_pair(kind, q_len, k_len):
    rng = np.random.default_rng(len(kind) + q_len)
    q, k = rng.normal(size=(2, q_len, 8)), rng.normal(size=(2, k_len, 8))
    inv_freq = P.rope_frequencies(8, base=100.0)  # a small base: the slow pairs turn visibly too
    got = P.rope_remapped_scores(q, k, POSITIONS[kind](q_len, k_len), inv_freq)
    want = _brute_force(q, k, _independent_distances(kind, q_len, k_len), base=100.0)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # the half layout is the same rotation after one fixed permutation of the features
    perm = P.rope_layout_permutation(8)
    half = P.rope_remapped_scores(q[..., perm], k[..., perm], POSITIONS[kind](q_len, k_len), inv_freq, layout="half")
    np.testing.assert_allclose(half, want, rtol=1e-12, atol=1e-12)
    # torch, float32 in, float32 out
    t = P.rope_remapped_scores(
        torch.tensor(q, dtype=torch.float32),
        torch.tensor(k, dtype=torch.float32),
        POSITIONS[kind](q_len, k_len, backend="torch"),
        torch.tensor(inv_freq),
    )
    assert t.dtype == torch.float32
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-4, atol=1e-4)


def test_scores_inside_the_window_are_plain_rope_bit_for_bit():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(7, 8)), rng.normal(size=(7, 8))
    f = P.rope_frequencies(8)
    plain = P.apply_rope(q, np.arange(7), f) @ P.apply_rope(k, np.arange(7), f).T
    for kind, build in POSITIONS.items():
        got = P.rope_remapped_scores(q, k, build(7, 7), f)
        inside = _true(7, 7) < 3
        assert np.array_equal(got[inside], plain[inside]), kind


# ---- bad input -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc, word",
    [
        (lambda: P.rerope_relative_positions(4, window=0), ValueError, "window"),
        (lambda: P.rerope_relative_positions(4, window=2.5), ValueError, "window"),
        (lambda: P.rerope_relative_positions(4, window=2, leak=1), ValueError, "leak"),
        (lambda: P.rerope_relative_positions(4, window=2, leak=0.5), ValueError, "leak"),
        (lambda: P.rerope_relative_positions(4, window=2, leak=True), ValueError, "leak"),
        (lambda: P.rerope_relative_positions(4, window=2, leak=math.inf), ValueError, "leak"),
        (lambda: P.rerope_relative_positions(0, window=2), ValueError, "q_len"),
        (lambda: P.rerope_relative_positions(5, 3, window=2), ValueError, "q_len"),
        (lambda: P.rerope_relative_positions(3, window=2, backend="jax"), ValueError, "backend"),
        (lambda: P.self_extend_relative_positions(4, group_size=0, neighbor_window=2), ValueError, "group_size"),
        (lambda: P.self_extend_relative_positions(4, group_size=2, neighbor_window=-1), ValueError, "neighbor_window"),
        (lambda: P.self_extend_relative_positions(4, 0, group_size=2, neighbor_window=2), ValueError, "k_len"),
        (lambda: P.self_extend_max_distance(0, group_size=2, neighbor_window=2), ValueError, "length"),
        (
            lambda: P.rope_remapped_scores(
                np.ones((3, 8)), np.ones((4, 8)), P.rerope_positions(3, window=2), np.ones(4)
            ),
            ValueError,
            "positions",
        ),
        (
            lambda: P.rope_remapped_scores(
                np.ones((3, 8)), np.ones((3, 6)), P.rerope_positions(3, window=2), np.ones(4)
            ),
            ValueError,
            "head_dim",
        ),
        (
            lambda: P.rope_remapped_scores(
                torch.ones(3, 8), np.ones((3, 8)), P.rerope_positions(3, window=2), np.ones(4)
            ),
            TypeError,
            "mixed",
        ),
        (
            lambda: P.rope_remapped_scores(
                np.ones((3, 8)), np.ones((3, 8)), P.rerope_positions(3, window=2), np.ones(4), layout="neox"
            ),
            ValueError,
            "layout",
        ),
    ],
)
def test_bad_input_is_named(call, exc, word):
    with pytest.raises(exc, match=word):
        call()
