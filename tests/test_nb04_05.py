"""What notebooks 04 (relative) and 05 (RoPE) add to poslib: the RoFormer decay bound and the slider figures."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P
from poslib.viz.relative import DebertaPlot, T5BucketPlot, heatmap_row
from poslib.viz.rope import DecayBoundPlot, RopeMatrixPlot, RotatingPairsPlot, WavelengthPlot, naive_cos
from poslib.viz.style import freeze_layout

# ---------------------------------------------------------------- rope_decay_bound


def _bound_by_hand(r, d, base):
    theta = base ** (-np.arange(0, d, 2) / d)
    s = np.cumsum(np.exp(1j * np.outer(r, theta)), axis=-1)  # S_1 … S_{d/2}
    return np.abs(s).mean(-1)


@pytest.mark.parametrize("d, base", [(2, 10000.0), (16, 100.0), (128, 10000.0), (64, 5e5)])
def test_decay_bound_matches_the_papers_definition(d, base):
    r = np.array([0, 1, 2, 7, 100, 2500, -13])
    np.testing.assert_allclose(P.rope_decay_bound(r, d, base), _bound_by_hand(r, d, base), rtol=1e-12)


def test_decay_bound_at_zero_and_symmetry():
    r = np.arange(-50, 51)
    b = P.rope_decay_bound(r, 128)
    assert b[50] == pytest.approx((128 / 2 + 1) / 2)  # S_j = j at r = 0
    np.testing.assert_allclose(b, b[::-1], rtol=1e-12)  # |S_j(−r)| = |conj S_j(r)|
    assert b[50] == b.max()


@given(seed=st.integers(0, 2**32 - 1), d=st.sampled_from([4, 16, 64]), base=st.sampled_from([50.0, 1e4, 1e6]))
def test_decay_bound_bounds_every_rope_score(seed, d, base):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, d))
    r = np.arange(0, 400)
    scores = P.apply_rope(np.tile(q, (len(r), 1)), r, P.rope_frequencies(d, base)) @ k
    h = (q[0::2] + 1j * q[1::2]) * np.conj(k[0::2] + 1j * k[1::2])
    step = np.abs(np.diff(np.append(h, 0))).max()
    assert np.all(np.abs(scores) <= step * (d / 2) * P.rope_decay_bound(r, d, base) + 1e-9)


def test_decay_bound_torch_keeps_kind_and_bad_input_is_named():
    out = P.rope_decay_bound(torch.arange(5), 8)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    with pytest.raises(ValueError, match="head_dim"):
        P.rope_decay_bound(np.arange(3), 7)
    with pytest.raises(ValueError, match="base"):
        P.rope_decay_bound(np.arange(3), 8, base=1.0)
    with pytest.raises(ValueError, match="base"):
        P.rope_decay_bound(np.arange(3), 8, base=True)
    with pytest.raises(TypeError, match="distances"):
        P.rope_decay_bound("far", 8)


def test_frequencies_start_at_one_and_fall():
    # The test a lost minus sign in θ_i = base^(−2i/d) fails (the relative-property test does not).
    for d, base in [(2, 10.0), (64, 10000.0), (128, 5e5)]:
        th = P.rope_frequencies(d, base)
        assert th[0] == 1.0 and np.all(np.diff(th) < 0) and th[-1] == pytest.approx(base ** (-(d - 2) / d))


# ---------------------------------------------------------------- helpers in the viz modules


def test_heatmap_row_shares_one_colour_scale_unless_asked_and_rejects_mismatch():
    fig = heatmap_row([np.eye(3), -2 * np.eye(3)], ["a", "b"])
    assert sum(ax.get_label() == "<colorbar>" for ax in fig.axes) == 1
    assert {im.get_clim() for ax in fig.axes for im in ax.images} == {(-2.0, 2.0)}, "equal colours, equal values"
    plt.close(fig)
    fig = heatmap_row([np.eye(3), -2 * np.eye(3)], ["a", "b"], shared_scale=False)
    assert sum(ax.get_label() == "<colorbar>" for ax in fig.axes) == 2
    plt.close(fig)
    with pytest.raises(ValueError, match="mats and titles"):
        heatmap_row([np.eye(3)], ["a", "b"])


def test_freeze_layout_switches_the_engine_off():
    fig, _ = plt.subplots(layout="constrained")
    freeze_layout(fig)
    assert fig.get_layout_engine() is None
    plt.close(fig)


def test_naive_cos_reproduces_the_low_precision_bug():
    th = P.rope_frequencies(128)
    m = np.array([1900.0, 1901.0, 1903.0])
    exact = np.cos(m[:, None] * th)
    assert np.abs(naive_cos(m, th, "bfloat16") - exact).max() > 0.5
    assert np.abs(naive_cos(m, th, "float32") - exact).max() < 1e-3
    with pytest.raises(ValueError, match="dtype"):
        naive_cos(m, th, "float8")


# ---------------------------------------------------------------- slider callbacks against poslib numbers


@pytest.mark.parametrize("values", T5BucketPlot.bench_values)
def test_t5_plot_draws_poslib_buckets(values):
    plot = T5BucketPlot()
    plot.update(**values)
    p = plot.params
    kw = {"bidirectional": p["bidirectional"], "num_buckets": p["num_buckets"], "max_distance": p["max_distance"]}
    np.testing.assert_array_equal(plot.line.get_ydata(), P.t5_relative_bucket(np.arange(-300, 301), **kw))
    np.testing.assert_array_equal(plot.im.get_array(), P.t5_relative_bucket(P.t5_relative_positions(160), **kw))
    assert plot.im.get_clim() == (0, p["num_buckets"] - 1)
    assert plot.marks[3].get_xdata()[0] == p["max_distance"]
    plot.close()


@pytest.mark.parametrize("k", [1, 3, 8, 32])
def test_deberta_plot_draws_poslib_terms(k):
    plot = DebertaPlot()
    plot.update(att_span=k)
    d = plot.inputs
    table = plot.relative_table(k, plot.dim)
    _, terms = P.deberta_scores(d["q_c"], d["k_c"], table @ d["w_q_r"], table @ d["w_k_r"], return_terms=True)
    np.testing.assert_allclose(plot.ims["c2p"].get_array(), terms["c2p"])
    np.testing.assert_allclose(plot.ims["p2c"].get_array(), terms["p2c"])
    delta = np.asarray(plot.ims["delta"].get_array())
    assert delta.min() == 0 and delta.max() == 2 * k - 1 and plot.ims["delta"].get_clim() == (0, 2 * k - 1)
    plot.close()


@pytest.mark.parametrize("m, off", [(0, 0), (12, 3), (400, 10), (4096, 64)])
def test_rotating_pairs_hands_and_trail(m, off):
    plot = RotatingPairsPlot()
    plot.update(position=m, offset=off)
    for (trail, q, k, _), th in zip(plot.artists, plot.theta, strict=True):
        (_, qx), (_, qy) = q.get_data()
        (_, kx), (_, ky) = k.get_data()
        start = complex(*plot.start)
        assert complex(qx, qy) == pytest.approx(start * np.exp(1j * m * th), abs=1e-12)
        assert complex(kx, ky) == pytest.approx(start * np.exp(1j * (m - off) * th), abs=1e-12)
        assert len(trail.get_xdata()) == m + 1
    plot.close()


@pytest.mark.parametrize("m", [0, 1, 7, 250])
def test_rope_matrix_plot_shows_rope_matrix(m):
    plot = RopeMatrixPlot()
    plot.update(position=m)
    r = P.rope_matrix(m, plot.head_dim)
    np.testing.assert_allclose(plot.im.get_array(), r)
    np.testing.assert_allclose(plot.cos_line.get_ydata(), np.cos(m * P.rope_frequencies(plot.head_dim)), atol=1e-12)
    np.testing.assert_allclose(plot.sin_line.get_ydata(), np.sin(m * P.rope_frequencies(plot.head_dim)), atol=1e-12)
    plot.close()


@pytest.mark.parametrize("base", [100.0, 10000.0, 500000.0])
def test_decay_plot_shows_the_bound_and_the_same_pair_score(base):
    plot = DecayBoundPlot()
    plot.update(base=base)
    np.testing.assert_allclose(plot.bound_line.get_ydata(), P.rope_decay_bound(plot.r, plot.head_dim, base))
    th = P.rope_frequencies(plot.head_dim, base)
    np.testing.assert_allclose(plot.score_line.get_ydata(), np.cos(plot.r[:, None] * th).mean(-1))
    plot.close()


@pytest.mark.parametrize("base, n", [(1e4, 4096), (5e5, 8192), (1e4, 512)])
def test_wavelength_plot_splits_pairs_at_the_training_length(base, n):
    plot = WavelengthPlot()
    plot.update(base=base, train_len=n)
    wl = 2 * np.pi / P.rope_frequencies(plot.head_dim, base)
    np.testing.assert_allclose(plot.partial.get_ydata(), wl[wl > n])
    np.testing.assert_allclose(plot.full.get_ydata(), wl[wl <= n])
    assert plot.limit.get_ydata()[0] == n
    plot.close()
