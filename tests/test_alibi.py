"""ALiBi (poslib.alibi): slopes, the bias, its receptive field."""

import numpy as np
from hypothesis import given
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


# ---------- alibi_receptive_field ----------
@given(n_heads=st.integers(1, 40), mass=st.floats(0.05, 0.995), length=st.integers(1, 3000))
def test_receptive_field_against_a_cumulative_sum(n_heads, mass, length):
    slopes = P.alibi_slopes(n_heads)
    reach = P.alibi_receptive_field(slopes, mass, length=length)
    weights = P.softmax(-slopes[:, None] * np.arange(length)[None, :])
    cumulative = np.cumsum(weights, axis=-1)
    for h in range(n_heads):
        d = int(reach[h])
        assert 0 <= d < length
        assert cumulative[h, d] >= mass - 1e-9
        assert d == 0 or cumulative[h, d - 1] < mass + 1e-9


def test_receptive_field_without_length_is_the_infinite_limit():
    slopes = P.alibi_slopes(8)
    np.testing.assert_array_equal(
        P.alibi_receptive_field(slopes, 0.9), P.alibi_receptive_field(slopes, 0.9, length=10**7)
    )
    # slope 1/2: the first D + 1 keys hold 1 − e^(−(D+1)/2) ≥ 0.9 first at D + 1 = 5
    assert P.alibi_receptive_field(slopes, 0.9)[0] == 4
