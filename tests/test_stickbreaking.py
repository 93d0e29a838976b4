"""Stick-breaking attention (poslib.stickbreaking): hand-worked halving sticks, a pair-by-pair product loop, the
stick always adds up to one, and large logits stay finite.

Expected values come from A_ij = β_ij Π_{j<m<i}(1 − β_im), β = σ(scale·q·k), multiplied out one factor at a
time here, never from the function under test.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

rng = np.random.default_rng(38)


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def stick_by_loop(q, k, v, scale, attend_current):
    """(output, weights, rest) by the definition, one key and one factor at a time (queries the last q_len keys)."""
    *lead, q_len, _ = q.shape
    k_len = k.shape[-2]
    weights, rest = np.zeros((*lead, q_len, k_len)), np.zeros((*lead, q_len))
    out = np.zeros((*lead, q_len, v.shape[-1]))
    for idx in np.ndindex(*lead):
        for i in range(q_len):
            p = k_len - q_len + i
            last = p if attend_current else p - 1  # the nearest key the stick starts from
            beta = {j: sigmoid(scale * float(q[idx][i] @ k[idx][j])) for j in range(last + 1)}
            left = 1.0
            for j in range(last, -1, -1):  # walk back from the nearest key
                weights[idx][i, j] = beta[j] * left
                left *= 1 - beta[j]
            rest[idx][i] = left
            out[idx][i] = weights[idx][i] @ v[idx] + left * v[idx][p]
    return out, weights, rest


def test_hand_worked_even_sticks():
    # q·k = 0 everywhere: every β = σ(0) = ½, so the nearest key takes ½, the next ¼, … and the query keeps 2^−n.
    q = k = np.zeros((1, 4, 2))
    v = np.arange(8.0).reshape(1, 4, 2)
    _, w = P.stickbreaking_attention(q, k, v)
    np.testing.assert_allclose(w[0], [[0, 0, 0, 0], [1 / 2, 0, 0, 0], [1 / 4, 1 / 2, 0, 0], [1 / 8, 1 / 4, 1 / 2, 0]])
    _, w = P.stickbreaking_attention(q, k, v, attend_current=True)
    np.testing.assert_allclose(
        w[0], [[1 / 2, 0, 0, 0], [1 / 4, 1 / 2, 0, 0], [1 / 8, 1 / 4, 1 / 2, 0], [1 / 16, 1 / 8, 1 / 4, 1 / 2]]
    )


def test_the_first_query_without_attend_current_returns_its_own_value():
    q, k, v = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 5, 2))
    out, w = P.stickbreaking_attention(q, k, v)
    assert (w[:, 0] == 0).all()
    np.testing.assert_allclose(out[:, 0], v[:, 0], rtol=1e-15)


@pytest.mark.parametrize("attend_current", [False, True])
@pytest.mark.parametrize("q_len", [7, 3, 1])
def test_matches_the_pair_by_pair_product(attend_current, q_len):
    q, k = 1.5 * rng.standard_normal((2, 3, q_len, 4)), 1.5 * rng.standard_normal((2, 3, 7, 4))
    v = rng.standard_normal((2, 3, 7, 3))
    out, w = P.stickbreaking_attention(q, k, v, scale=0.8, attend_current=attend_current)
    want_out, want_w, _ = stick_by_loop(q, k, v, 0.8, attend_current)
    np.testing.assert_allclose(w, want_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, want_out, rtol=1e-12, atol=1e-14)


@given(
    q_len=st.integers(1, 8),
    extra=st.integers(0, 4),
    spread=st.floats(0.01, 30.0),
    attend_current=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_the_stick_adds_up_to_one_and_no_piece_is_negative(q_len, extra, spread, attend_current, seed):
    r = np.random.default_rng(seed)
    k_len = q_len + extra
    q, k = spread * r.standard_normal((2, q_len, 3)), r.standard_normal((2, k_len, 3))
    _, w, rest = stick_by_loop(q, k, np.zeros((2, k_len, 1)), 1 / math.sqrt(3), attend_current)
    out, got = P.stickbreaking_attention(q, k, np.ones((2, k_len, 1)), attend_current=attend_current)
    assert (got >= 0).all() and (got <= 1).all()
    np.testing.assert_allclose(got.sum(-1) + rest, 1.0, rtol=0, atol=1e-13)  # Σ_j A_ij + Π_m (1 − β_im) = 1
    np.testing.assert_allclose(got, w, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(out, 1.0, rtol=0, atol=1e-13)  # all values 1: the stick and its rest give exactly 1


def test_huge_logits_stay_finite_in_log_space():
    # z = ±2000: σ and 1 − σ underflow in a direct product; log σ = −softplus(−z) does not
    q, k = np.array([[[40.0], [-40.0], [40.0]]]), np.array([[[50.0], [50.0], [-50.0]]])
    out, w = P.stickbreaking_attention(q, k, np.eye(3)[None], scale=1.0, attend_current=True)
    assert np.isfinite(out).all() and np.isfinite(w).all()
    # query 2 (q = 40): key 2 has z = −2000 (β = 0, passes the whole stick), key 1 z = +2000 (β = 1, takes it all)
    np.testing.assert_array_equal(w[0, 2], [0.0, 1.0, 0.0])
    # query 1 (q = −40): z = −2000 on keys 0 and 1, nothing taken; the whole stick stays with v₁
    np.testing.assert_array_equal(w[0, 1], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(out[0, 1], [0.0, 1.0, 0.0])


def test_short_queries_are_the_last_rows_of_the_square():
    q, k, v = (rng.standard_normal((2, 6, 4)) for _ in range(3))
    out, w = P.stickbreaking_attention(q, k, v)
    out2, w2 = P.stickbreaking_attention(q[:, -2:], k, v)
    np.testing.assert_allclose(w2, w[:, -2:], rtol=1e-14, atol=1e-16)
    np.testing.assert_allclose(out2, out[:, -2:], rtol=1e-14, atol=1e-15)


def test_numpy_equals_torch_in_float64_and_float32_and_keeps_dtype_and_gradients():
    q, k, v = (rng.standard_normal((2, 2, 6, 4)) for _ in range(3))
    a = P.stickbreaking_attention(q, k, v, attend_current=True)[0]
    b = P.stickbreaking_attention(*(torch.tensor(x) for x in (q, k, v)), attend_current=True)[0]
    np.testing.assert_allclose(b.numpy(), a, rtol=1e-12, atol=1e-14)
    a32 = P.stickbreaking_attention(*(x.astype(np.float32) for x in (q, k, v)))[0]
    t32 = [torch.tensor(x, dtype=torch.float32, requires_grad=True) for x in (q, k, v)]
    b32 = P.stickbreaking_attention(*t32)[0]
    assert a32.dtype == np.float32 and b32.dtype == torch.float32
    np.testing.assert_allclose(b32.detach().numpy(), a32, rtol=1e-5, atol=1e-6)
    b32.sum().backward()
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in t32)
