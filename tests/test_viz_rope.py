"""Figures of notebook 05 (poslib.viz.rope)."""

import numpy as np
import pytest

import poslib as P
from poslib.viz.rope import DecayBoundPlot, RopeMatrixPlot, RotatingPairsPlot, WavelengthPlot, naive_cos


def test_naive_cos_reproduces_the_low_precision_bug():
    th = P.rope_frequencies(128)
    m = np.array([1900.0, 1901.0, 1903.0])
    exact = np.cos(m[:, None] * th)
    assert np.abs(naive_cos(m, th, "bfloat16") - exact).max() > 0.5
    assert np.abs(naive_cos(m, th, "float32") - exact).max() < 1e-3
    with pytest.raises(ValueError, match="dtype"):
        naive_cos(m, th, "float8")


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


def test_rotating_pairs_offset_ends_at_the_query_position():
    """No key before position 0 (issue 43 item 4): the offset slider ends at m, and a larger offset is drawn as m."""
    widgets = pytest.importorskip("ipywidgets")
    from poslib.viz import interact

    position = widgets.IntSlider(value=12, min=0, max=4096)
    offset = widgets.IntSlider(value=3, min=0, max=64)
    interact(RotatingPairsPlot(), position=position, offset=offset)
    assert offset.max == 12, "at m = 12 the offset slider ends at 12"
    position.value = 400
    assert offset.max == 64, "past m = 64 it ends at the notebook's 64"
    offset.value = 48
    position.value = 15
    assert offset.max == 15 and offset.value == 15, "moving m below the offset pulls the offset down to m"
    plot = RotatingPairsPlot()
    plot.update(position=15, offset=48)
    assert "key at m − 15 = 0" in plot._title.get_text(), plot._title.get_text()
    for _, _, k, _ in plot.artists:
        (_, kx), (_, ky) = k.get_data()
        assert complex(kx, ky) == pytest.approx(complex(*plot.start), abs=1e-12), "the key drawn at position 0"
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
