"""Attention entropy against the number of keys (poslib.teaching.entropy)."""

import math

import numpy as np

from poslib import teaching


# ---------- attention_entropy_vs_length ----------
def test_entropy_of_nearly_flat_scores_is_ln_n():
    n = [4, 64, 1024]
    np.testing.assert_allclose(teaching.attention_entropy_vs_length(n, score_std=1e-8), np.log(n), atol=1e-9)


def test_entropy_grows_with_n_and_logn_leaves_short_sequences_alone():
    n = [2**k for k in range(3, 13)]
    plain = teaching.attention_entropy_vs_length(n, score_std=1.0)
    assert (np.diff(plain) > 0).all()
    scaled = teaching.attention_entropy_vs_length(n, 128, score_std=1.0)
    np.testing.assert_array_equal(scaled[: n.index(128) + 1], plain[: n.index(128) + 1])
    assert (scaled[n.index(128) + 1 :] < plain[n.index(128) + 1 :]).all()


def test_logn_holds_entropy_near_flat_when_score_spread_is_sqrt_ln_L():
    # H(n) ≈ ln n − λ²σ²/2 for Gaussian scores; with λ = ln n / ln L, dH/d ln n = 0 at n = L iff σ² = ln L
    L = 512
    n = [L * 2**k for k in range(0, 5)]
    plain = teaching.attention_entropy_vs_length(n, score_std=math.sqrt(math.log(L)))
    scaled = teaching.attention_entropy_vs_length(n, L, score_std=math.sqrt(math.log(L)))
    assert plain[-1] - plain[0] > 2.0
    assert np.ptp(scaled) < 0.6


def test_entropy_draw_is_reproducible_and_seeded():
    a = teaching.attention_entropy_vs_length([100, 300], seed=3)
    np.testing.assert_array_equal(a, teaching.attention_entropy_vs_length([100, 300], seed=3))
    assert not np.array_equal(a, teaching.attention_entropy_vs_length([100, 300], seed=4))
