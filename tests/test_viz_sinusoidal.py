"""Figures of notebook 03 (poslib.viz.sinusoidal)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import poslib as P
from poslib.teaching import similarity
from poslib.viz.sinusoidal import DotDecayPlot, WavePairPlot, cross_terms_figure, dot_decay_curves


def test_wave_pair_plot_marks_the_wavelength():
    plot = WavePairPlot()
    for pair, base in [(0, 10000.0), (5, 10000.0), (31, 10000.0), (3, 100.0)]:
        plot.update(pair=pair, base=base)
        lam = 2 * np.pi * base ** (2 * pair / plot.dim)
        assert plot.periods[0].get_xdata()[0] == pytest.approx(lam)
        assert plot.periods[1].get_xdata()[0] == pytest.approx(2 * lam)
        p = plot.sin_line.get_xdata()
        np.testing.assert_allclose(plot.sin_line.get_ydata(), np.sin(p / base ** (2 * pair / plot.dim)), atol=1e-12)
        np.testing.assert_allclose(plot.cos_line.get_ydata(), np.cos(p / base ** (2 * pair / plot.dim)), atol=1e-12)
        assert plot.box.get_y() == 2 * pair - 0.5
        assert plot.ax_w.get_xlim()[1] == pytest.approx(2.5 * lam)
    with pytest.raises(ValueError, match="pair"):
        plot.update(pair=32)
    plot.close()


def test_dot_decay_plot_draws_the_cosine_sum():
    plot = DotDecayPlot()
    for base, dim in [(10000.0, 128), (100.0, 64), (1e5, 512)]:
        plot.update(base=base, dim=dim)
        k = plot.pe_line.get_xdata()
        expected = np.cos(k[:, None] * P.sinusoidal_frequencies(dim, base)).sum(-1)
        np.testing.assert_allclose(plot.pe_line.get_ydata(), expected, atol=1e-9)
        np.testing.assert_allclose(plot.pe_ref.get_ydata(), expected, atol=1e-9)
    plot.close()


def test_dot_decay_curves_expectation_and_errors():
    c = dot_decay_curves(10000.0, 32, 50, n_draws=20000)
    assert np.abs(c["mean_draws"] - c["pe"]).max() < 0.5  # cross terms average out
    assert c["one_draw"].shape == (51,)
    # the draws are shared across d: the first draw at d = 16 uses the first 16 coordinates of the d = 32 draw
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 256, 512))[:, :1, :16]
    pe = P.sinusoidal_table(11, 16)
    np.testing.assert_allclose(dot_decay_curves(10000.0, 16, 10)["one_draw"], ((q[0] + pe[0]) * (k[0] + pe)).sum(-1))
    with pytest.raises(ValueError, match="dim must be ≤ max_dim"):
        dot_decay_curves(10000.0, 1024, 10)
    with pytest.raises(ValueError, match="dim must be even"):
        dot_decay_curves(10000.0, 15, 10)
    with pytest.raises(ValueError, match="base"):
        dot_decay_curves(-1.0, 16, 10)


def test_cross_terms_figure():
    fig, mats = cross_terms_figure(16, 20)
    pe = P.sinusoidal_table(20, 16)
    np.testing.assert_allclose(mats["plain"], pe @ pe.T)
    assert similarity.toeplitz_gap(mats["plain"]) < 1e-12 and similarity.toeplitz_gap(mats["projected"]) > 0.1
    plt.close(fig)
    with pytest.raises(ValueError, match="dim"):
        cross_terms_figure(15)
