"""Attention biases: ALiBi, KERPLE, Sandwich, T5 buckets, DeBERTa, log-n, reference attention."""

import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

import poslib as P


# ---------- ALiBi ----------
def test_alibi_slopes_for_8_heads_are_the_papers():
    np.testing.assert_allclose(P.alibi_slopes(8), [1 / 2**k for k in range(1, 9)], rtol=0, atol=0)


def test_alibi_slopes_for_12_heads_follow_the_papers_rule():
    # 8 slopes 2^-1 … 2^-8, then every other slope of the 16-head sequence 2^(-k/2): k = 1, 3, 5, 7
    expected = [2.0**-k for k in range(1, 9)] + [2.0 ** -(k / 2) for k in (1, 3, 5, 7)]
    np.testing.assert_allclose(P.alibi_slopes(12), expected, rtol=1e-15)


@given(n=st.integers(1, 96))
def test_alibi_slopes_are_distinct_and_in_range(n):
    s = P.alibi_slopes(n)
    assert s.shape == (n,) and len(set(s.tolist())) == n
    assert (s > 0).all() and (s < 1).all()


@given(h=st.integers(1, 12), q=st.integers(1, 20), extra=st.integers(0, 5))
def test_alibi_bias_depends_only_on_distance(h, q, extra):
    k = q + extra
    b = P.alibi_bias(h, q, k, causal=False)
    dist = np.abs(np.arange(k)[None, :] - (np.arange(q) + extra)[:, None])
    np.testing.assert_allclose(b, -P.alibi_slopes(h)[:, None, None] * dist)
    causal = P.alibi_bias(h, q, k, causal=True)
    assert np.isneginf(causal[:, dist.shape[0] - 1 :, :]).sum() == 0  # last query sees everything
    np.testing.assert_array_equal(np.isneginf(causal[0]), np.arange(k)[None, :] > (np.arange(q) + extra)[:, None])


def test_alibi_key_index_form_equals_distance_form_only_with_a_causal_mask():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 6, 8)), rng.standard_normal((2, 6, 8))
    v = rng.standard_normal((2, 6, 8))
    slopes = P.alibi_slopes(2)[:, None, None]
    key_index = slopes * np.arange(6)[None, None, :]  # BLOOM: + m·j, differs from −m·(i−j) by m·i per row
    _, w_paper = P.attention(q, k, v, bias=P.alibi_bias(2, 6, causal=False), causal=True)
    _, w_bloom = P.attention(q, k, v, bias=key_index, causal=True)
    np.testing.assert_allclose(w_paper, w_bloom, atol=1e-12)
    _, w_paper_bi = P.attention(q, k, v, bias=P.alibi_bias(2, 6, causal=False))
    _, w_bloom_bi = P.attention(q, k, v, bias=key_index)
    assert np.abs(w_paper_bi - w_bloom_bi).max() > 1e-3


# ---------- KERPLE and Sandwich ----------
@given(q=st.integers(1, 16), r1=st.floats(0.1, 5), r2=st.floats(0.1, 2), kind=st.sampled_from(["power", "log"]))
def test_kerple_depends_only_on_distance(q, r1, r2, kind):
    b = P.kerple_bias(r1, r2, q_len=q, k_len=q, kind=kind).squeeze(0)
    d = np.abs(np.arange(q)[None] - np.arange(q)[:, None])
    expected = -r1 * d**r2 if kind == "power" else -r1 * np.log1p(r2 * d)
    np.testing.assert_allclose(b, expected, atol=1e-12)
    np.testing.assert_allclose(b, b.T)


def test_kerple_power_with_r2_one_is_alibi():
    np.testing.assert_allclose(
        P.kerple_bias(0.25, 1.0, q_len=5, k_len=5, kind="power", causal=True)[0], P.alibi_bias(4, 5, causal=True)[0]
    )  # head 1 of 4 has slope 2^(-8/4) = 1/4


def test_kerple_module_gets_gradients():
    m = P.KerpleBias(3, "log")
    m(6, causal=True).masked_fill(torch.isinf(m(6, causal=True)), 0).sum().backward()
    assert m.raw_r1.grad is not None and m.raw_r1.grad.abs().sum() > 0


def test_sandwich_is_the_sinusoidal_inner_product_minus_its_peak():
    pe = P.sinusoidal_table(7, 16)
    np.testing.assert_allclose(P.sandwich_bias(8, 16, q_len=7, k_len=7)[0], pe @ pe.T - 8, atol=1e-12)
    np.testing.assert_allclose(
        P.sandwich_bias(8, 16, q_len=3, k_len=7)[0], pe[4:] @ pe.T - 8, atol=1e-12
    )  # queries are the last 3
    per_head = P.sandwich_bias(4, 16, q_len=7, k_len=7)
    np.testing.assert_allclose(per_head[1], (pe @ pe.T - 8) / (8 * 2 / 4), atol=1e-12)


# ---------- T5 ----------
@pytest.mark.parametrize(
    "rel, bucket",
    # bidirectional, 32 buckets, max_distance 128: 16 per side, 8 exact, then 8 + ⌊log(|r|/8)/log(16)·8⌋
    [
        (0, 0),
        (-1, 1),
        (-7, 7),
        (-8, 8),
        (-16, 10),
        (-32, 12),
        (-64, 14),
        (-127, 15),
        (-128, 15),
        (-1000, 15),
        (1, 17),
        (7, 23),
        (16, 26),
        (1000, 31),
    ],
)
def test_t5_buckets_hand_worked(rel, bucket):
    assert int(P.t5_relative_bucket(np.array(rel))) == bucket


@given(nb=st.sampled_from([8, 16, 32, 64]), md=st.sampled_from([20, 64, 128, 512]), bidi=st.booleans())
def test_t5_buckets_in_range_exact_then_monotone(nb, md, bidi):
    assume(md > (nb // 4 if bidi else nb // 2))  # otherwise there is no log range (rejected, tested elsewhere)
    rel = np.arange(-2 * md, 2 * md + 1)
    b = P.t5_relative_bucket(rel, bidirectional=bidi, num_buckets=nb, max_distance=md)
    assert b.min() >= 0 and b.max() < nb
    exact = nb // 4 if bidi else nb // 2
    past = rel[rel <= 0]  # keys before the query, distance −rel
    np.testing.assert_array_equal(b[(rel <= 0) & (rel > -exact)], -rel[(rel <= 0) & (rel > -exact)])
    assert (np.diff(b[rel <= 0][::-1]) >= 0).all()  # non-decreasing with distance into the past
    if bidi:
        future = b[rel > 0]
        assert (np.diff(future) >= 0).all() and future.min() >= nb // 2
    else:
        assert (b[rel > 0] == 0).all()
    assert len(past) > 0


def test_t5_bias_module_reads_the_table_and_gets_gradients():
    m = P.T5RelativeBias(4, num_buckets=32, max_distance=128)
    bias = m(5, 7)
    assert bias.shape == (4, 5, 7)
    buckets = P.t5_relative_bucket(P.t5_relative_positions(5, 7, backend="torch"))
    torch.testing.assert_close(bias[2], m.bias.weight[buckets, 2])
    bias.sum().backward()
    assert m.bias.weight.grad is not None


# ---------- DeBERTa ----------
def _deberta_loop(qc, kc, qr, kr, k):
    lq, lk, d = qc.shape[0], kc.shape[0], qc.shape[1]
    out = np.zeros((lq, lk))
    for row in range(lq):
        i = row + lk - lq  # the queries are the last lq positions
        for j in range(lk):
            dij = min(max(i - j + k, 0), 2 * k - 1)
            dji = min(max(j - i + k, 0), 2 * k - 1)
            out[row, j] = qc[row] @ kc[j] + qc[row] @ kr[dij] + kc[j] @ qr[dji]
    return out / math.sqrt(3 * d)


@given(lq=st.integers(1, 9), lk=st.integers(1, 9), k=st.integers(1, 5), seed=st.integers(0, 1000))
def test_deberta_scores_match_the_papers_definition(lq, lk, k, seed):
    rng = np.random.default_rng(seed)
    d = 6
    qc, kc = rng.standard_normal((lq, d)), rng.standard_normal((lk, d))
    qr, kr = rng.standard_normal((2 * k, d)), rng.standard_normal((2 * k, d))
    np.testing.assert_allclose(P.deberta_scores(qc, kc, qr, kr), _deberta_loop(qc, kc, qr, kr, k), atol=1e-10)


def test_deberta_code_convention_reads_delta_i_j_for_p2c():
    rng = np.random.default_rng(5)
    lq, k, d = 7, 3, 4
    qc, kc, qr, kr = (
        rng.standard_normal((lq, d)),
        rng.standard_normal((lq, d)),
        rng.standard_normal((2 * k, d)),
        rng.standard_normal((2 * k, d)),
    )
    terms = P.deberta_score_terms(qc, kc, qr, kr, p2c_index="code")
    expected = np.array([[kc[j] @ qr[min(max(i - j + k, 0), 2 * k - 1)] for j in range(lq)] for i in range(lq)])
    np.testing.assert_allclose(terms["position-content"], expected, atol=1e-12)
    with pytest.raises(ValueError, match="p2c_index"):
        P.deberta_scores(qc, kc, qr, kr, p2c_index="hf")


def test_deberta_relative_position_sign_and_log_buckets():
    rel = P.deberta_relative_position(4, 4)
    assert rel[3, 0] == 3 and rel[0, 3] == -3  # query − key
    r = np.arange(-300, 301)
    b = P.deberta_log_bucket(r, 256, 512)
    np.testing.assert_array_equal(b[np.abs(r) <= 128], r[np.abs(r) <= 128])  # exact inside ±bucket_size/2
    assert np.abs(b).max() <= 255 and (np.diff(b) >= 0).all()


def test_deberta_module_gets_gradients():
    m = P.DebertaRelativeScores(8, att_span=4)
    m(torch.randn(5, 8), torch.randn(5, 8)).sum().backward()
    assert m.rel_embeddings.grad is not None and m.rel_embeddings.grad.abs().sum() > 0


# ---------- log-n, attention ----------
def test_logn_scale():
    assert P.logn_scale(512, 512) == 1.0 and P.logn_scale(100, 512) == 1.0
    assert P.logn_scale(512**2, 512) == pytest.approx(2.0)
    np.testing.assert_allclose(P.logn_scale(np.array([64, 4096]), 64), [1.0, 2.0])


def test_attention_matches_torch_sdpa():
    q, k, v = (torch.randn(2, 3, 7, 8, dtype=torch.float64) for _ in range(3))
    bias = torch.tensor(P.alibi_bias(3, 7, causal=True))
    out, w = P.attention(q, k, v, bias=bias)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 7, dtype=torch.float64))


def test_attention_entropy():
    uniform = np.full((1, 4), 0.25)
    assert P.attention_entropy(uniform)[0] == pytest.approx(math.log(4))
    assert P.attention_entropy(np.array([[1.0, 0.0]]))[0] == 0.0


def _quadratic_forms_on_sum_zero_vectors(bias, n_vectors=200, seed=0):
    # c·Bc for random c with Σc = 0 (each drawn, then its mean removed): CPD means none is negative
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((n_vectors, bias.shape[-1]))
    c -= c.mean(axis=1, keepdims=True)
    return np.einsum("vi,ij,vj->v", c, bias, c) / np.einsum("vi,vi->v", c, c)


@pytest.mark.parametrize(
    "name",
    ["alibi", "kerple_power_half", "kerple_power_two", "kerple_log", "sandwich"],
)
def test_distance_biases_are_conditionally_positive_definite(name):
    n = 40
    bias = {
        "alibi": lambda: P.alibi_bias(8, n, causal=False)[2],
        "kerple_power_half": lambda: P.kerple_bias(1.5, 0.5, q_len=n, k_len=n, kind="power")[0],
        "kerple_power_two": lambda: P.kerple_bias(0.1, 2.0, q_len=n, k_len=n, kind="power")[0],
        "kerple_log": lambda: P.kerple_bias(2.0, 0.7, q_len=n, k_len=n, kind="log")[0],
        "sandwich": lambda: P.sandwich_bias(8, 32, q_len=n, k_len=n)[0],
    }[name]()
    assert (bias <= 1e-12).all() and np.allclose(np.diag(bias), 0)  # a penalty: 0 on the diagonal, ≤ 0 off it
    assert _quadratic_forms_on_sum_zero_vectors(bias).min() > -1e-9 * np.abs(bias).max()


def test_a_positive_distance_is_not_conditionally_positive_definite():
    d = np.abs(np.subtract.outer(np.arange(40), np.arange(40))).astype(float)
    assert _quadratic_forms_on_sum_zero_vectors(d).max() < 0  # +|i − j| fails on every sum-zero vector tried
