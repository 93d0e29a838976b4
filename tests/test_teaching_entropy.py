"""Attention entropy against the number of keys (poslib.teaching.entropy)."""

import math

import numpy as np
import pytest

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


# ---------- logn_entropy_rise_over_seeds (notebook 00's claim, over seeds) ----------
def test_logn_rise_without_scaling_is_the_plain_rise():
    # train_len above every length: log-n's factor is max(1, ·) = 1, so both curves are one draw, one curve
    r = teaching.entropy.logn_entropy_rise_over_seeds((64, 256), 4096, seeds=range(3))
    np.testing.assert_array_equal(r.scaled, r.plain)
    np.testing.assert_array_equal(r.ratio, np.ones(3))


def test_logn_rise_matches_one_row_computed_by_hand():
    # seed 5, n = 2 keys and 1 row: the entropy of a 2-way softmax, written out from the scores
    r = teaching.entropy.logn_entropy_rise_over_seeds((2, 8), 2, dim=4, n_rows=1, seeds=[5])
    x = np.random.default_rng(5).standard_normal((1, 2, 4), dtype=np.float32).astype(np.float64)[0]
    s = x @ x[-1] / 2.0  # scores of the last query, 1/√4
    p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    assert abs(r.plain[0, 0] - float(-(p * np.log(p)).sum())) < 1e-12
    assert r.scaled[0, 0] == r.plain[0, 0]  # n = L: factor 1


def test_logn_slows_the_entropy_rise_on_every_seed_but_does_not_stop_it():
    # notebook 00's claim as a distribution: over 20 seeds the ratio of the rises sits well inside (0, 1);
    # without the factor it is 1, with the factor of a longer L (512 instead of 64) about 0.9
    r = teaching.entropy.logn_entropy_rise_over_seeds((64, 1024), 64, n_rows=8, seeds=range(20))
    assert (r.rise_plain > 0.6 * math.log(1024 / 64)).all(), r.rise_plain  # ln n − ln 64, up to the scores
    lo, med, hi = np.percentile(r.ratio, [5, 50, 95])
    assert 0.2 < lo and hi < 0.8, (lo, hi)  # 8 rows per seed (notebook 00: 32) keep the test fast, and noisier
    # the median carries notebook 00's "a little over half": measured 0.53 here; the factor of L = 128 gives
    # 0.70 and of L = 32 gives 0.40 (fix0003, same call with train_len changed), so both fall outside
    assert 0.45 < med < 0.62, med


def test_logn_rise_errors():
    import pytest

    f = teaching.entropy.logn_entropy_rise_over_seeds
    with pytest.raises(ValueError, match="lengths"):
        f((64,), 64)
    with pytest.raises(ValueError, match="lengths"):
        f((256, 64), 64)
    with pytest.raises(ValueError, match="train_len"):
        f((64, 256), 1)
    with pytest.raises(ValueError, match="seeds"):
        f((64, 256), 64, seeds=[])


# ---------- logn_entropy_slopes (notebook 06's claim (g), over seeds) ----------
def test_logn_slope_matches_a_fit_computed_by_hand():
    # seed 2, lengths 4, 8, 16, L = 4, d = 2, 3 queries: the draw, the entropies and the slope written out
    lengths, L, std = (4, 8, 16), 4, 1.5
    got = teaching.entropy.logn_entropy_slopes([std], L, lengths, seeds=[2], dim=2, n_queries=3)
    h = []
    for n in lengths:
        rng = np.random.default_rng([2, n])
        q, k = rng.standard_normal((3, 2)), rng.standard_normal((n, 2))
        z = q @ k.T / math.sqrt(2) * std * max(1.0, math.log(n) / math.log(L))
        w = np.exp(z - z.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        h.append(float(-(w * np.log(w)).sum(axis=1).mean()))
    expected = np.polyfit(np.log(lengths), h, 1)[0]
    assert got.shape == (1, 1)
    assert got[0, 0] == pytest.approx(expected, rel=1e-9)


def test_logn_slopes_are_one_independent_draw_per_seed():
    slopes = teaching.entropy.logn_entropy_slopes([2.5, 3.5], 64, (64, 256), seeds=range(4), n_queries=8)
    assert slopes.shape == (2, 4)
    assert len(np.unique(slopes[0])) == 4  # four seeds, four draws


def test_logn_slope_medians_hold_on_a_seed_set_disjoint_from_notebook_06s():
    # Notebook 06's claim (g) on seeds 0–19: the median slope of the log-n entropy curve (N = 512…16384,
    # L = 512) is above +0.04 at σ = √ln L and below −0.03 at σ = 3.5. The same bounds on seeds 20–39.
    # Measured once over seeds 0–99 (fix06, issue 22): at √ln L every slope is positive, median ≈ +0.08;
    # at 3.5 the median is ≈ −0.06 with 1 positive seed of 100 (seed 37), so a claim on every seed would fail.
    std = math.sqrt(math.log(512))
    lengths = [2**p for p in range(9, 15)]
    slopes = teaching.entropy.logn_entropy_slopes([std, 3.5], 512, lengths, seeds=range(20, 40))
    med = np.median(slopes, axis=1)
    assert med[0] > 0.04 and med[1] < -0.03, med


def test_logn_slope_errors():
    f = teaching.entropy.logn_entropy_slopes
    with pytest.raises(ValueError, match="two different lengths"):
        f([1.0], 64, (64, 64))
    with pytest.raises(ValueError, match="score_stds"):
        f([], 64, (64, 128))
    with pytest.raises(ValueError, match="seeds"):
        f([1.0], 64, (64, 128), seeds=[])
