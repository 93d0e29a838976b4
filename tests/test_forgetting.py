"""Forgetting attention, FoX (poslib.forgetting): hand-worked rows, a pair-by-pair loop, NoPE and ALiBi inside it.

Expected values are computed here from the paper's formula, s_ij = scale·q_i·k_j + Σ_{l=j+1..i} log f_l, one
pair and one gate at a time, never by calling the function under test.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

rng = np.random.default_rng(38)


def fox_by_loop(q, k, v, log_f, scale):
    """softmax_j(scale·q_i·k_j + Σ_{l=j+1..i} log f_l) over j ≤ i, query i at k_len − q_len + i; one pair at a time."""
    *lead, q_len, _ = q.shape
    k_len = k.shape[-2]
    weights = np.zeros((*lead, q_len, k_len))
    for idx in np.ndindex(*lead):
        for i in range(q_len):
            p = k_len - q_len + i
            s = [
                scale * q[idx][i] @ k[idx][j] + sum(log_f[idx][ell] for ell in range(j + 1, p + 1))
                for j in range(p + 1)
            ]
            e = np.exp(np.array(s) - max(s))
            weights[idx][i, : p + 1] = e / e.sum()
    return weights @ v, weights


def test_hand_worked_row_with_halving_gates():
    # d = 1, q = k = 0: only the gates score. log f = (0, ln ½, ln ½): the query at 2 weighs key 0 by f₁f₂ = ¼,
    # key 1 by f₂ = ½ and itself by 1 (its own gate is never counted): weights (1, 2, 4)/7.
    q = k = np.zeros((1, 1, 3, 1))
    v = np.array([1.0, 2.0, 4.0]).reshape(1, 1, 3, 1)
    log_f = np.log(np.array([[[1.0, 0.5, 0.5]]]))
    out, w = P.forgetting_attention(q, k, v, log_f)
    np.testing.assert_allclose(w[0, 0], [[1, 0, 0], [1 / 3, 2 / 3, 0], [1 / 7, 2 / 7, 4 / 7]], rtol=1e-14, atol=1e-15)
    # outputs: v₀ = 1; (1 + 2·2)/3 = 5/3; (1 + 2·2 + 4·4)/7 = 3
    np.testing.assert_allclose(out[0, 0, :, 0], [1.0, 5 / 3, 3.0], rtol=1e-14)


@pytest.mark.parametrize("q_len", [6, 4, 1])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_matches_the_pair_by_pair_loop(q_len, scale):
    q = rng.standard_normal((2, 3, q_len, 5))
    k, v = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 3, 6, 4))
    log_f = -np.abs(rng.standard_normal((2, 3, 6))) * 2
    out, w = P.forgetting_attention(q, k, v, log_f, scale=scale)
    want_out, want_w = fox_by_loop(q, k, v, log_f, 1 / math.sqrt(5) if scale is None else scale)
    np.testing.assert_allclose(w, want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, want_out, rtol=1e-12, atol=1e-14)
    assert out.shape == (2, 3, q_len, 4) and w.shape == (2, 3, q_len, 6)


@given(q_len=st.integers(1, 9), extra=st.integers(0, 5), d=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_open_gates_are_causal_softmax_attention_without_positions(q_len, extra, d, seed):
    r = np.random.default_rng(seed)
    k_len = q_len + extra
    q, k, v = r.standard_normal((2, q_len, d)), r.standard_normal((2, k_len, d)), r.standard_normal((2, k_len, 3))
    out, w = P.forgetting_attention(q, k, v, np.zeros((2, k_len)))  # log f = 0: every gate open
    want_out, want_w = P.attention(q, k, v, causal=True)
    np.testing.assert_allclose(w, want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, want_out, rtol=1e-12, atol=1e-14)


@given(q_len=st.integers(1, 9), extra=st.integers(0, 5), n_heads=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_a_constant_gate_is_alibi_with_slope_minus_log_f(q_len, extra, n_heads, seed):
    # log f_l = −μ_h for every l: Σ_{l=j+1..i} log f_l = −μ_h·(i − j), ALiBi's causal bias with slope μ_h
    r = np.random.default_rng(seed)
    k_len = q_len + extra
    q = r.standard_normal((2, n_heads, q_len, 4))
    k, v = r.standard_normal((2, n_heads, k_len, 4)), r.standard_normal((2, n_heads, k_len, 4))
    slopes = P.alibi_slopes(n_heads)
    log_f = np.broadcast_to(-slopes[:, None], (2, n_heads, k_len))
    out, w = P.forgetting_attention(q, k, v, log_f)
    want_out, want_w = P.attention(q, k, v, bias=P.alibi_bias(n_heads, q_len, k_len), causal=True)
    np.testing.assert_allclose(w, want_w, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(out, want_out, rtol=1e-11, atol=1e-14)


def test_scale_multiplies_q_dot_k_only_never_the_gate():
    # scale = 0 leaves the gate alone: weights ∝ exp(Λ_i − Λ_j) whatever q and k are (fla's FoX adds g unscaled)
    q, k, v = rng.standard_normal((1, 4, 3)), rng.standard_normal((1, 4, 3)), rng.standard_normal((1, 4, 2))
    log_f = np.array([[-0.1, -0.7, -0.2, -1.5]])
    _, w = P.forgetting_attention(q, k, v, log_f, scale=0.0)
    lam = np.cumsum(log_f[0])
    want = np.tril(np.exp(lam[:, None] - lam[None, :]))
    np.testing.assert_allclose(w[0], want / want.sum(-1, keepdims=True), rtol=1e-13)


def test_short_queries_are_the_last_rows_of_the_square():
    q, k, v = rng.standard_normal((2, 7, 4)), rng.standard_normal((2, 7, 4)), rng.standard_normal((2, 7, 4))
    log_f = -rng.random((2, 7))
    out, w = P.forgetting_attention(q, k, v, log_f)
    out3, w3 = P.forgetting_attention(q[:, -3:], k, v, log_f)
    np.testing.assert_allclose(w3, w[:, -3:], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out3, out[:, -3:], rtol=1e-13, atol=1e-15)


def test_numpy_equals_torch_in_float64_and_float32_and_keeps_dtype_and_gradients():
    q, k, v = (rng.standard_normal((2, 2, 6, 4)) for _ in range(3))
    log_f = -rng.random((2, 2, 6))
    a = P.forgetting_attention(q, k, v, log_f)[0]
    b = P.forgetting_attention(*(torch.tensor(x) for x in (q, k, v, log_f)))[0]
    np.testing.assert_allclose(b.numpy(), a, rtol=1e-12, atol=1e-14)
    a32 = P.forgetting_attention(*(x.astype(np.float32) for x in (q, k, v, log_f)))[0]
    t32 = [torch.tensor(x, dtype=torch.float32, requires_grad=True) for x in (q, k, v, log_f)]
    b32 = P.forgetting_attention(*t32)[0]
    assert a32.dtype == np.float32 and b32.dtype == torch.float32
    np.testing.assert_allclose(b32.detach().numpy(), a32, rtol=1e-5, atol=1e-6)
    b32.sum().backward()
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in t32)


@pytest.mark.parametrize(
    "log_f, words",
    [
        (np.full((1, 4), 0.1), "log_f must be finite and ≤ 0"),
        (np.array([[0.0, -np.inf, 0.0, 0.0]]), "log_f must be finite"),
        (np.zeros((1, 3)), r"log_f must have shape \(1, 4\)"),
    ],
)
def test_bad_gates_are_named(log_f, words):
    q = np.ones((1, 4, 2))
    with pytest.raises(ValueError, match=words):
        P.forgetting_attention(q, q, q, log_f)
