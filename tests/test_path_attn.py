"""PaTH attention (poslib.path_attn): explicit d×d products pair by pair, the decoding form with a key cache, NoPE
at β = 0, and norm-keeping reflections at β = 2.

Expected values are computed here: the matrices H_t = I − β_t w_t w_tᵀ are built explicitly and multiplied for
every (query, key) pair, or the keys of a cache are updated token by token as a decoder would.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P
from poslib.path_attn import path_deltanet_qk, path_scores

rng = np.random.default_rng(38)


def inputs(r, lead, q_len, k_len, d, *, unit=True, beta=(0.0, 2.0)):
    q, k, v = (
        r.standard_normal((*lead, q_len, d)),
        r.standard_normal((*lead, k_len, d)),
        r.standard_normal((*lead, k_len, d)),
    )
    w = r.standard_normal((*lead, k_len, d))
    if unit:
        w /= np.linalg.norm(w, axis=-1, keepdims=True)
    return q, k, v, w, r.uniform(*beta, (*lead, k_len))


def scores_by_matrices(q, k, w, beta, log_f, scale):
    """scale·(q_iᵀ H_i H_{i−1} ⋯ H_{j+1} k_j + Λ_i − Λ_j), every H_t an explicit d×d matrix; −inf for future keys."""
    *lead, q_len, d = q.shape
    k_len = k.shape[-2]
    out = np.full((*lead, q_len, k_len), -np.inf)
    for idx in np.ndindex(*lead):
        for i in range(q_len):
            p = k_len - q_len + i
            for j in range(p + 1):
                product = np.eye(d)
                for t in range(p, j, -1):  # H_p H_{p−1} ⋯ H_{j+1}, left to right
                    product = product @ (np.eye(d) - beta[idx][t] * np.outer(w[idx][t], w[idx][t]))
                gate = 0.0 if log_f is None else sum(log_f[idx][ell] for ell in range(j + 1, p + 1))
                out[idx][i, j] = scale * (q[idx][i] @ product @ k[idx][j] + gate)
    return out


def scores_by_decoding(q, k, w, beta, log_f, scale):
    """A decoder's view (flash-linear-attention's PaTHAttention with a cache): when token t arrives every cached key
    becomes H_t k_j = k_j − β_t (w_tᵀ k_j) w_t, then k_t joins the cache and q_t scores plain dot products."""
    *lead, t_len, _ = q.shape
    out = np.full((*lead, t_len, t_len), -np.inf)
    lam = np.zeros((*lead, t_len)) if log_f is None else np.cumsum(log_f, -1)
    for idx in np.ndindex(*lead):
        cache = []
        for t in range(t_len):
            cache = [kj - beta[idx][t] * (w[idx][t] @ kj) * w[idx][t] for kj in cache]  # k_j ← H_t k_j
            cache.append(k[idx][t].copy())
            for j, kj in enumerate(cache):
                out[idx][t, j] = scale * (q[idx][t] @ kj + lam[idx][t] - lam[idx][j])
    return out


@pytest.mark.parametrize("q_len", [6, 2])
@pytest.mark.parametrize("gate", [False, True])
def test_scores_match_explicit_matrix_products_pair_by_pair(q_len, gate):
    q, k, v, w, beta = inputs(rng, (2, 2), q_len, 6, 3, unit=False)
    log_f = -rng.random((2, 2, 6)) if gate else None
    got = path_scores(q, k, w, beta, log_f=log_f, scale=0.6)
    np.testing.assert_allclose(got, scores_by_matrices(q, k, w, beta, log_f, 0.6), rtol=1e-12, atol=1e-13)
    out, weights = P.path_attention(q, k, v, w, beta, log_f=log_f, scale=0.6)
    want_w = np.exp(got - got.max(-1, keepdims=True))
    want_w /= want_w.sum(-1, keepdims=True)
    np.testing.assert_allclose(weights, want_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, want_w @ v, rtol=1e-12, atol=1e-14)


def test_hand_worked_reflection_in_the_plane():
    # d = 2, w₁ = (1, 0), β₁ = 2: H₁ = diag(−1, 1) flips the first coordinate. q₁ = (1, 2), k₀ = (3, 4):
    # q₁ᵀ H₁ k₀ = −3 + 8 = 5 (plain q·k would be 11); k₁ = (1, 1) on the diagonal: q₁·k₁ = 3, no reflection.
    q = np.array([[0.0, 0.0], [1.0, 2.0]])
    k = np.array([[3.0, 4.0], [1.0, 1.0]])
    w = np.array([[0.0, 1.0], [1.0, 0.0]])
    beta = np.array([2.0, 2.0])
    got = path_scores(q, k, w, beta, scale=1.0)
    np.testing.assert_array_equal(got, [[0.0, -np.inf], [5.0, 3.0]])
    # a gate log f₁ = −1, scaled like q·k: scale = 0.5 gives 0.5·(5 − 1) and 0.5·3
    got = path_scores(q, k, w, beta, log_f=np.array([0.0, -1.0]), scale=0.5)
    np.testing.assert_array_equal(got, [[0.0, -np.inf], [2.0, 1.5]])


@given(t_len=st.integers(1, 8), d=st.integers(1, 5), gate=st.booleans(), unit=st.booleans(), seed=st.integers(0, 2**16))
def test_the_decoding_form_gives_the_same_scores(t_len, d, gate, unit, seed):
    r = np.random.default_rng(seed)
    q, k, _, w, beta = inputs(r, (2,), t_len, t_len, d, unit=unit)
    log_f = -r.random((2, t_len)) if gate else None
    want = scores_by_decoding(q, k, w, beta, log_f, 1 / math.sqrt(d))
    np.testing.assert_allclose(path_scores(q, k, w, beta, log_f=log_f), want, rtol=1e-11, atol=1e-12)


@given(q_len=st.integers(1, 8), extra=st.integers(0, 4), d=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_beta_zero_is_causal_softmax_attention_without_positions(q_len, extra, d, seed):
    r = np.random.default_rng(seed)
    q, k, v, w, _ = inputs(r, (2, 2), q_len, q_len + extra, d)
    out, weights = P.path_attention(q, k, v, w, np.zeros((2, 2, q_len + extra)))
    want_out, want_w = P.attention(q, k, v, causal=True)
    np.testing.assert_allclose(weights, want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, want_out, rtol=1e-12, atol=1e-14)


def test_beta_zero_with_a_gate_is_forgetting_attention_with_the_gate_scaled():
    # PaTH multiplies Λ_i − Λ_j by scale (flash-linear-attention's naive_path_attn); FoX does not
    q, k, v, w, _ = inputs(rng, (2, 3), 5, 5, 4)
    log_f = -rng.random((2, 3, 5))
    out, weights = P.path_attention(q, k, v, w, np.zeros((2, 3, 5)), log_f=log_f, scale=0.25)
    want_out, want_w = P.forgetting_attention(q, k, v, 0.25 * log_f, scale=0.25)
    np.testing.assert_allclose(weights, want_w, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out, want_out, rtol=1e-12, atol=1e-14)
    assert np.abs(P.forgetting_attention(q, k, v, log_f, scale=0.25)[1] - weights).max() > 1e-3


@given(t_len=st.integers(2, 9), d=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_beta_two_with_unit_w_is_a_product_of_reflections_that_keeps_norms(t_len, d, seed):
    # One head per basis vector e_c, every key equal to e_c: the scores of head c are the c-th coordinates of
    # u = H_{j+1} ⋯ H_i q_i, so across the heads they spell out the transformed query, whose norm is ‖q_i‖.
    r = np.random.default_rng(seed)
    q = np.broadcast_to(r.standard_normal((t_len, d)), (d, t_len, d))
    k = np.broadcast_to(np.eye(d)[:, None, :], (d, t_len, d))
    w = r.standard_normal((t_len, d))
    w = np.broadcast_to(w / np.linalg.norm(w, axis=-1, keepdims=True), (d, t_len, d))
    u = path_scores(q, k, w, np.full((d, t_len), 2.0), scale=1.0)  # (d heads = coordinates, query, key)
    i, j = np.nonzero(np.tril(np.ones((t_len, t_len), bool)))  # the causal pairs
    np.testing.assert_allclose(np.linalg.norm(u[:, i, j], axis=0), np.linalg.norm(q[0, i], axis=-1), rtol=1e-12)
    # one w for every token: H_t = H, a reflection, H² = I, so u = q_i for an even number of steps i − j, H q_i for odd
    w0 = w[0, 0]
    u = path_scores(q, k, np.broadcast_to(w0, w.shape), np.full((d, t_len), 2.0), scale=1.0)
    for i in range(t_len):
        for j in range(i + 1):
            want = q[0, i] if (i - j) % 2 == 0 else q[0, i] - 2 * (q[0, i] @ w0) * w0
            np.testing.assert_allclose(u[:, i, j], want, rtol=1e-12, atol=1e-12)


def test_w_is_used_as_given_not_normalised():
    # H_t depends on β_t w_t w_tᵀ only: (2w, β/4) is the same map as (w, β); (2w, β) is not, though an op that
    # normalised w would make it so
    q, k, _, w, beta = inputs(rng, (1, 2), 6, 6, 4, beta=(0.2, 1.0))
    base = path_scores(q, k, w, beta)
    np.testing.assert_allclose(path_scores(q, k, 2 * w, beta / 4), base, rtol=1e-12, atol=1e-13)
    causal = np.isfinite(base)
    assert np.abs(path_scores(q, k, 2 * w, beta)[causal] - base[causal]).max() > 1e-2


def test_short_queries_are_the_last_rows_of_the_square():
    q, k, v, w, beta = inputs(rng, (2,), 7, 7, 4)
    log_f = -rng.random((2, 7))
    out, weights = P.path_attention(q, k, v, w, beta, log_f=log_f)
    out3, w3 = P.path_attention(q[:, -3:], k, v, w, beta, log_f=log_f)
    np.testing.assert_allclose(w3, weights[:, -3:], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out3, out[:, -3:], rtol=1e-13, atol=1e-15)


def test_numpy_equals_torch_in_float64_and_float32_and_keeps_dtype_and_gradients():
    q, k, v, w, beta = inputs(rng, (2, 2), 6, 6, 4)
    log_f = -rng.random((2, 2, 6))
    a = P.path_attention(q, k, v, w, beta, log_f=log_f)[0]
    b = P.path_attention(*(torch.tensor(x) for x in (q, k, v, w, beta)), log_f=torch.tensor(log_f))[0]
    np.testing.assert_allclose(b.numpy(), a, rtol=1e-12, atol=1e-14)
    a32 = P.path_attention(*(x.astype(np.float32) for x in (q, k, v, w, beta)), log_f=log_f.astype(np.float32))[0]
    t32 = [torch.tensor(x, dtype=torch.float32, requires_grad=True) for x in (q, k, v, w, beta, log_f)]
    b32 = P.path_attention(*t32[:5], log_f=t32[5])[0]
    assert a32.dtype == np.float32 and b32.dtype == torch.float32
    np.testing.assert_allclose(b32.detach().numpy(), a32, rtol=1e-5, atol=1e-6)
    b32.sum().backward()
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in t32)


# PaTH as softmax over DeltaNet-corrected q and k (issue 44 item 5): q̂_iᵀ k̂_j = q_iᵀ H_i ⋯ H_{j+1} k_j.


def delta_rule_state(w, beta, t):
    """S_t of the delta rule S ← S − β (S w − v) wᵀ with v = 0 and S_0 = I, run step by step (explicit d×d)."""
    s = np.eye(w.shape[-1])
    for step in range(t + 1):
        s = s - beta[step] * np.outer(s @ w[step] - 0.0, w[step])
    return s


@given(
    t_len=st.integers(1, 8),
    d=st.integers(1, 5),
    unit=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_deltanet_corrected_qk_reproduce_path_scores(t_len, d, unit, seed):
    r = np.random.default_rng(seed)
    # strengths kept 0.2 away from the singular β‖w‖² = 1, where the factorisation loses its digits
    q, k, _, w, _ = inputs(r, (2,), t_len, t_len, d, unit=unit)
    norm2 = (w * w).sum(-1)
    beta = (
        np.where(r.random((2, t_len)) < 0.5, r.uniform(0.0, 0.8, (2, t_len)), r.uniform(1.2, 2.0, (2, t_len))) / norm2
    )
    q_hat, k_hat = path_deltanet_qk(q, k, w, beta)
    want = path_scores(q, k, w, beta, scale=1.0)
    got = q_hat @ np.swapaxes(k_hat, -1, -2)
    causal = np.tril(np.ones((t_len, t_len), bool))
    bound = 1e-9 * max(1.0, float(np.abs(k_hat).max()) * float(np.abs(q_hat).max()))
    assert np.abs(got - want)[:, causal].max() < bound


def test_corrected_query_is_the_deltanet_read_out_and_the_weights_are_softmax():
    q, k, v, w, beta = inputs(np.random.default_rng(5), (3,), 10, 10, 4)
    q_hat, k_hat = path_deltanet_qk(q, k, w, beta)
    for h in range(3):
        for t in range(10):
            np.testing.assert_allclose(q_hat[h, t], delta_rule_state(w[h], beta[h], t) @ q[h, t], rtol=0, atol=1e-12)
    _, weights = P.path_attention(q, k, v, w, beta)
    _, soft = P.attention(q_hat, k_hat, v, causal=True, scale=1 / math.sqrt(4))
    assert np.abs(weights - soft).max() < 1e-10


def test_reflections_give_the_same_deltanet_for_queries_and_keys():
    q, k, _, w, _ = inputs(np.random.default_rng(6), (), 9, 9, 5)
    beta = np.full(9, 2.0)
    q_hat, k_hat = path_deltanet_qk(q, k, w, beta)
    k_same, _ = path_deltanet_qk(k, k, w, beta)  # the queries' DeltaNet applied to the keys
    assert np.abs(k_hat - k_same).max() < 1e-12
    assert np.abs(np.linalg.norm(q_hat, axis=-1) - np.linalg.norm(q, axis=-1)).max() < 1e-12


def test_deltanet_qk_in_torch_equals_numpy_and_a_singular_factor_is_refused():
    q, k, _, w, beta = inputs(np.random.default_rng(7), (2, 2), 6, 6, 3)
    beta = np.where(np.abs(beta - 1) < 0.2, 0.5, beta)
    got = path_deltanet_qk(*(torch.tensor(a) for a in (q, k, w, beta)))
    want = path_deltanet_qk(q, k, w, beta)
    for g, e in zip(got, want, strict=True):
        assert isinstance(g, torch.Tensor) and np.abs(g.numpy() - e).max() < 1e-12
    beta[0, 0, 3] = 1.0  # unit w, β = 1: H projects w out
    with pytest.raises(ValueError, match="beta"):
        path_deltanet_qk(q, k, w, beta)
    with pytest.raises(ValueError, match="one query per key"):
        path_deltanet_qk(q[..., 1:, :], k, w, beta)
