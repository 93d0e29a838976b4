"""What notebooks 06 (length extrapolation) and 07 (ALiBi) add to poslib: measurements and slider callbacks."""

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P
from poslib.viz import alibi as VA
from poslib.viz import length as VE

THETA = P.rope_frequencies(128)


# ---------- rope_unseen_angle ----------
@given(train=st.integers(2, 5000), extra=st.integers(-2000, 20000))
def test_unseen_angle_is_the_new_arc(train, extra):
    infer = max(1, train + extra)
    unseen = P.rope_unseen_angle(THETA, train, infer)
    assert unseen.shape == THETA.shape and (unseen >= 0).all() and (unseen <= 2 * np.pi + 1e-12).all()
    if infer <= train:
        assert (unseen == 0).all()
    turned = (train - 1) * THETA >= 2 * np.pi  # these pairs saw the whole circle in training
    assert (unseen[turned] == 0).all()
    # brute force on the slowest pair: the arc between the last training angle and the last inference angle
    last = THETA[-1]
    expected = max(0.0, min(2 * np.pi, (infer - 1) * last) - min(2 * np.pi, (train - 1) * last))
    assert unseen[-1] == pytest.approx(expected, abs=1e-12)


def test_unseen_angle_hand_worked():
    # θ = 2π/100 rad per token: 10 tokens see 9·θ, 30 tokens reach 29·θ, 500 tokens wrap the circle
    theta = np.array([2 * np.pi / 100, 4.0])
    np.testing.assert_allclose(P.rope_unseen_angle(theta, 10, 30), [20 * 2 * np.pi / 100, 0], atol=1e-12)
    np.testing.assert_allclose(P.rope_unseen_angle(theta, 10, 500), [2 * np.pi * 91 / 100, 0], atol=1e-12)


def test_unseen_angle_with_scaled_inference_frequencies():
    L, s = 4096, 8.0
    pi, _ = P.rope_inv_freq(128, 10000.0, {"rope_type": "linear", "factor": s})
    # PI reads position m as m/s: the last position s·L − 1 lands at L − 1/s, under one token past L − 1
    unseen = P.rope_unseen_angle(THETA, L, int(s * L), infer_inv_freq=pi)
    np.testing.assert_allclose(unseen, np.where((L - 1) * THETA < 2 * np.pi, (1 - 1 / s) * THETA, 0), atol=1e-12)
    assert (P.rope_unseen_angle(THETA, L, L, infer_inv_freq=pi) == 0).all()  # slower frequencies, same length
    with pytest.raises(ValueError, match="infer_inv_freq"):
        P.rope_unseen_angle(THETA, L, L, infer_inv_freq=pi[:3])


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: P.rope_unseen_angle(THETA, 0, 10), "train_len"),
        (lambda: P.rope_unseen_angle(THETA, 10, 2.5), "infer_len"),
        (lambda: P.rope_unseen_angle(-THETA, 10, 20), "inv_freq"),
        (lambda: P.attention_entropy_vs_length([], 8), "lengths"),
        (lambda: P.attention_entropy_vs_length([8, 0]), "lengths"),
        (lambda: P.attention_entropy_vs_length([8], score_std=0), "score_std"),
        (lambda: P.attention_entropy_vs_length([8], 0), "train_len"),
        (
            lambda: P.rope_cache_drift(
                8, 10000.0, {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4}, 0
            ),
            "seq_len",
        ),
        (lambda: P.alibi_receptive_field(P.alibi_slopes(4), 1.0), "mass"),
        (lambda: P.alibi_receptive_field(P.alibi_slopes(4), 0.9, length=0), "length"),
        (lambda: P.alibi_receptive_field(np.array([0.5, -1.0])), "slopes"),
    ],
)
def test_bad_input_names_the_argument(call, word):
    with pytest.raises(ValueError, match=word):
        call()


# ---------- attention_entropy_vs_length ----------
def test_entropy_of_nearly_flat_scores_is_ln_n():
    n = [4, 64, 1024]
    np.testing.assert_allclose(P.attention_entropy_vs_length(n, score_std=1e-8), np.log(n), atol=1e-9)


def test_entropy_grows_with_n_and_logn_leaves_short_sequences_alone():
    n = [2**k for k in range(3, 13)]
    plain = P.attention_entropy_vs_length(n, score_std=1.0)
    assert (np.diff(plain) > 0).all()
    scaled = P.attention_entropy_vs_length(n, 128, score_std=1.0)
    np.testing.assert_array_equal(scaled[: n.index(128) + 1], plain[: n.index(128) + 1])
    assert (scaled[n.index(128) + 1 :] < plain[n.index(128) + 1 :]).all()


def test_logn_holds_entropy_near_flat_when_score_spread_is_sqrt_ln_L():
    # H(n) ≈ ln n − λ²σ²/2 for Gaussian scores; with λ = ln n / ln L, dH/d ln n = 0 at n = L iff σ² = ln L
    L = 512
    n = [L * 2**k for k in range(0, 5)]
    plain = P.attention_entropy_vs_length(n, score_std=math.sqrt(math.log(L)))
    scaled = P.attention_entropy_vs_length(n, L, score_std=math.sqrt(math.log(L)))
    assert plain[-1] - plain[0] > 2.0
    assert np.ptp(scaled) < 0.6


def test_entropy_draw_is_reproducible_and_seeded():
    a = P.attention_entropy_vs_length([100, 300], seed=3)
    np.testing.assert_array_equal(a, P.attention_entropy_vs_length([100, 300], seed=3))
    assert not np.array_equal(a, P.attention_entropy_vs_length([100, 300], seed=4))


# ---------- rope_cache_drift ----------
DYNAMIC = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 32}


def test_cache_drift_is_zero_for_static_scalings_and_short_sequences():
    assert P.rope_cache_drift(16, 10000.0, {"rope_type": "linear", "factor": 4.0}, 100).max() == 0
    assert P.rope_cache_drift(16, 10000.0, DYNAMIC, 32).max() == 0
    drift = P.rope_cache_drift(16, 10000.0, DYNAMIC, 96)
    assert drift.shape == (96, 8) and drift.max() > 0.1 and drift.max() <= np.pi
    assert (drift[0] == 0).all()  # position 0 is not rotated at all


def test_cache_drift_matches_a_real_cached_versus_fresh_key():
    n, j, d = 80, 50, 16
    rng = np.random.default_rng(1)
    k = rng.standard_normal((1, d))
    then, _ = P.rope_inv_freq(d, 10000.0, DYNAMIC, seq_len=j + 1)
    now, _ = P.rope_inv_freq(d, 10000.0, DYNAMIC, seq_len=n)
    cached, fresh = P.apply_rope(k, np.array([j]), then), P.apply_rope(k, np.array([j]), now)
    # the angle between the two rotated pairs, pair by pair
    c, f = cached.reshape(-1, 2), fresh.reshape(-1, 2)
    angle = np.arccos(np.clip((c * f).sum(-1) / np.linalg.norm(c, axis=-1) / np.linalg.norm(f, axis=-1), -1, 1))
    np.testing.assert_allclose(P.rope_cache_drift(d, 10000.0, DYNAMIC, n)[j], angle, atol=1e-6)


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


# ---------- slider callbacks draw poslib's numbers ----------
def test_unseen_angle_plot_draws_poslib_numbers():
    plot = VE.UnseenAnglePlot()
    for infer_len, pair in [(4096, 45), (32768, 60), (2048, 10), (100000, 200)]:
        plot.update(infer_len=infer_len, pair=pair)
        unseen = P.rope_unseen_angle(plot.theta, plot.train_len, infer_len)
        np.testing.assert_allclose(plot.bars.get_data().values, np.degrees(unseen))
        np.testing.assert_allclose(plot.infer_line.get_ydata(), (infer_len - 1) * plot.theta / (2 * np.pi))
        assert len(plot.marks.get_xdata()) == int((unseen > 0).sum())
        shown = min(pair, len(plot.theta) - 1)
        x, y = plot.new_arc.get_data()
        end = min(2 * np.pi, (plot.train_len - 1) * plot.theta[shown]) + unseen[shown]
        assert (x[-1], y[-1]) == pytest.approx((np.cos(end), np.sin(end)), abs=1e-9)
    plot.close()


def test_entropy_plot_draws_poslib_numbers():
    plot = VE.EntropyPlot()
    for L, std in [(128, 2.0), (1024, 3.0)]:
        plot.update(train_len=L, score_std=std)
        np.testing.assert_allclose(plot.plain.get_ydata(), P.attention_entropy_vs_length(plot.lengths, score_std=std))
        np.testing.assert_allclose(
            plot.scaled.get_ydata(), P.attention_entropy_vs_length(plot.lengths, L, score_std=std)
        )
        assert list(plot.train_mark.get_xdata()) == [L, L]
    plot.close()


def test_scaling_plot_draws_poslib_numbers():
    plot = VE.ScalingPlot()
    for s, n in [(2.0, 4096), (16.0, 100000)]:
        plot.update(factor=s, current_len=n)
        for name, cfg in VE.scaling_configs(s, plot.original).items():
            f, _ = P.rope_inv_freq(plot.head_dim, plot.base, cfg, seq_len=n)
            np.testing.assert_allclose(plot.ratios[name].get_ydata(), f / plot.theta)
            np.testing.assert_allclose(plot.waves[name].get_ydata(), 2 * np.pi / f)
        assert plot.inv_s.get_ydata()[0] == pytest.approx(1 / s)
    plot.close()


def test_xpos_and_bias_plots_draw_poslib_numbers():
    plot = VE.XposDecayPlot()
    plot.update(gamma=0.7, scale_base=256)
    expected = P.xpos_scale(plot.distance, plot.head_dim, scale_base=256, gamma=0.7)
    for line, i in zip(plot.lines, plot.pairs, strict=True):
        np.testing.assert_allclose(line.get_ydata(), expected[:, i])
    plot.close()
    plot = VE.BiasCurvesPlot()
    plot.update(r1=3.0, power_r2=1.5, log_r2=0.3)
    d = plot.distance
    np.testing.assert_allclose(plot.power.get_ydata(), -3.0 * d**1.5)
    np.testing.assert_allclose(plot.log.get_ydata(), -3.0 * np.log1p(0.3 * d))
    plot.close()


def test_alibi_bias_plot_draws_poslib_numbers_and_clamps_the_head():
    plot = VA.AlibiBiasPlot()
    for n, h, causal in [(8, 3, True), (12, 11, False), (6, 9, True)]:
        plot.update(n_heads=n, head=h, causal=causal)
        shown = min(h, n)
        bias = P.alibi_bias(n, plot.seq_len, causal=causal)[shown - 1]
        data = plot.im.get_array()
        np.testing.assert_array_equal(np.ma.getmaskarray(data), np.isneginf(bias))
        np.testing.assert_allclose(data.filled(0), np.where(np.isinf(bias), 0, bias))
        x, y = plot.chosen.get_data()
        assert list(x) == [shown] and y[0] == P.alibi_slopes(n)[shown - 1]
        assert len(plot.main.get_xdata()) + len(plot.extra.get_xdata()) == n
        assert len(plot.extra.get_xdata()) == n - 2 ** int(math.log2(n))
    plot.close()


def test_alibi_bias_plot_uses_one_colour_scale_so_heads_look_different():
    plot = VA.AlibiBiasPlot()
    images = []
    for h in (1, 4, 8):
        plot.update(n_heads=8, head=h, causal=False)
        assert plot.im.get_clim() == (-plot.floor, 0)
        images.append(plot.im.to_rgba(plot.im.get_array()).copy())
    for a, b in [(0, 1), (1, 2), (0, 2)]:
        assert (np.abs(images[a] - images[b]).max(axis=-1) > 0.02).mean() > 0.5
    plot.close()


def test_alibi_reach_plot_draws_poslib_numbers():
    plot = VA.AlibiReachPlot()
    for n, length in [(4, 300), (12, 2000)]:
        plot.update(n_heads=n, length=length)
        assert sum(line.get_visible() for line in plot.lines) == n
        np.testing.assert_array_equal(
            plot.reach.get_ydata(), P.alibi_receptive_field(P.alibi_slopes(n), 0.9, length=length)
        )
        t, w = plot.lines[0].get_data()
        exact = P.softmax(-P.alibi_slopes(n)[0] * np.arange(length))
        np.testing.assert_allclose(w, exact[t.astype(int)])
    plot.close()
    plt.close("all")


def test_new_functions_follow_torch_inputs():
    s = torch.tensor(P.alibi_slopes(8))
    assert isinstance(P.alibi_receptive_field(s), torch.Tensor)
    assert isinstance(P.rope_unseen_angle(torch.tensor(THETA), 10, 20), torch.Tensor)
