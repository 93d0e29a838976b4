"""The figure of notebook 00 (poslib.viz.tour): each family's curve is poslib's own numbers, at every span."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import poslib as P
from poslib.viz import tour as VT


@pytest.mark.parametrize("span", [32, 4096])
def test_every_scheme_draws_poslib_numbers(span):
    plot = VT.SchemeTourPlot()
    k = np.arange(span)
    inv_freq, _ = P.rope_inv_freq(64)
    q = np.random.default_rng(0).standard_normal(64)
    # written out here, not through tour_curves: the score of q with itself Δ = k tokens apart is Σ_i |q_i|² cos(k θ_i)
    pairs = (q[0::2] ** 2 + q[1::2] ** 2) @ np.cos(np.outer(inv_freq, k))
    omega = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    expected = {
        "sinusoidal": [np.cos(np.outer(k, omega)).sum(1) / 32],  # PE(0)·PE(k) = Σ_i cos(k ω_i)
        "RoPE": [pairs / pairs[0]],
        "T5 buckets": [P.t5_relative_bucket(-k, bidirectional=False)],
        "ALiBi": [-k / 2, -k / 256],
        "KERPLE": [-np.log1p(0.5 * k)],
    }
    for scheme in VT.TOUR_SCHEMES:
        plot.update(scheme=scheme, span=span)
        lines = [line for line in (plot.first, plot.second) if line.get_visible()]
        assert len(lines) == len(expected[scheme]), scheme
        for line, want in zip(lines, expected[scheme], strict=True):
            x, y = line.get_data()
            np.testing.assert_array_equal(x, k)
            np.testing.assert_allclose(y, want, atol=1e-9, err_msg=scheme)
        lo, hi = plot.ax.get_ylim()
        assert lo <= min(np.min(w) for w in expected[scheme]) and hi >= max(np.max(w) for w in expected[scheme])
        assert plot.ax.get_xlim() == (0, span - 1)
        assert f"Δ = 0 … {span - 1:,}" in plot.title.get_text()
    plot.close()


def test_t5_cutoff_shows_only_where_it_is_in_view_and_steps_are_steps():
    plot = VT.SchemeTourPlot(scheme="T5 buckets", span=64)
    assert not plot.cutoff.get_visible() and plot.first.get_drawstyle() == "steps-post"
    plot.update(span=1024)
    assert plot.cutoff.get_visible() and plot.cutoff.get_xdata()[0] == 128
    plot.update(scheme="ALiBi")
    assert not plot.cutoff.get_visible() and plot.first.get_drawstyle() == "default"
    plot.close()
    plt.close("all")


def test_unknown_scheme_is_named():
    with pytest.raises(ValueError, match="scheme must be one of"):
        VT.tour_curves("NoPE", 8)
