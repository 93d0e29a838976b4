"""Figures of notebook 07 (poslib.viz.alibi)."""

import itertools
import math

import matplotlib.pyplot as plt
import numpy as np

import poslib as P
from poslib.viz import alibi as VA


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


def test_alibi_reach_plot_spreads_the_heads_over_the_palette():
    # "dark: steepest" must hold for any head count: the n heads shown span the palette, head 1 darkest
    from matplotlib.colors import to_rgb

    def luminance(c):
        r, g, b = to_rgb(c)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    plot = VA.AlibiReachPlot()
    for n in (8, 3, 64):
        plot.update(n_heads=n, length=1024)
        lum = [luminance(line.get_color()) for line in plot.lines[:n]]
        assert all(a < b for a, b in itertools.pairwise(lum)), lum  # darker to lighter, head by head
        assert lum[-1] - lum[0] > 0.5, (n, lum[0], lum[-1])  # the whole palette, not its first eighth
    plot.close()
    plt.close("all")
