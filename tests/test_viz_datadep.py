"""Figures of notebook 12 (poslib.viz.datadep): each draws what its formula says, computed here independently."""

import math

import matplotlib.pyplot as plt
import numpy as np

from poslib.viz import datadep as VD


def test_forget_gate_plot_draws_sums_of_log_gates_from_j_plus_one():
    plot = VD.ForgetGatePlot()
    for slope, reset, depth in [(0.1, 20, 4.0), (0.5, 3, 0.0), (0.0, 30, 8.0)]:
        plot.update(slope=slope, reset=reset, depth=depth)
        n = plot.length
        log_f = np.full(n, -slope)
        log_f[reset] = -depth
        # Σ_{l=j+1..i} log f_l, one key at a time, for the last query i = n − 1
        want_const = np.array([-slope * (n - 1 - j) for j in range(n)])
        want_reset = np.array([sum(log_f[j + 1 :]) for j in range(n)])
        np.testing.assert_allclose(plot.const_bias.get_ydata(), want_const, atol=1e-12)
        np.testing.assert_allclose(plot.reset_bias.get_ydata(), want_reset, atol=1e-12)
        np.testing.assert_allclose(plot.alibi.get_ydata(), want_const, atol=1e-12)
        w = np.exp(want_reset - want_reset.max())
        np.testing.assert_allclose(plot.reset_w.get_ydata(), w / w.sum(), rtol=1e-12)
        assert list(plot.line_w.get_xdata()) == [reset, reset]
    plot.close()


def test_forget_gate_plot_reset_token_itself_is_not_penalised():
    plot = VD.ForgetGatePlot(slope=0.0, reset=10, depth=5.0)
    bias = plot.reset_bias.get_ydata()
    assert bias[10] == 0.0 and bias[9] == -5.0  # the gate of token r counts for keys before r only
    plot.close()


def test_stick_breaking_plot_draws_geometric_weights_and_the_rest():
    plot = VD.StickBreakingPlot()
    for beta, n in [(0.2, 8), (0.05, 64), (0.8, 4)]:
        plot.update(beta=beta, n_keys=n)
        t, w = plot.sb.get_data()
        np.testing.assert_array_equal(t, np.arange(1, n + 1))
        np.testing.assert_allclose(w, beta * (1 - beta) ** (t - 1.0), rtol=1e-12)
        rest = (1 - beta) ** n
        assert math.isclose(plot.rest_line.get_ydata()[0], rest, rel_tol=1e-12)
        assert math.isclose(w.sum() + rest, 1.0, rel_tol=1e-12)
        soft = (1 - beta) ** t / ((1 - beta) ** t).sum()
        np.testing.assert_allclose(plot.al.get_ydata(), soft, rtol=1e-12)
        np.testing.assert_allclose(plot.left.get_ydata(), (1 - beta) ** t, rtol=1e-12)
    plot.close()


def _reflect(u, angle, beta):
    w = np.array([math.cos(angle), math.sin(angle)])
    return u - beta * np.dot(w, u) * w


def test_path_plot_scores_are_products_of_reflections_and_match_rope_at_even_distances():
    plot = VD.PathReflectionPlot()
    for phi, beta in [(20, 2.0), (45, 2.0), (33, 1.0), (10, 0.0)]:
        plot.update(phi=phi, beta=beta)
        q = plot.query()
        u, want = q.copy(), [1.0]
        for t in range(1, plot.n_tokens):  # the query's own token has normal 0, the one before φ, …
            u = _reflect(u, 0.0 if t % 2 == 1 else math.radians(phi), beta)
            want.append(float(u @ q))
        np.testing.assert_allclose(plot.s_path.get_ydata(), want, atol=1e-12)
        np.testing.assert_allclose(plot.carried.get_data()[0][-1], u[0], atol=1e-12)
        t = np.arange(plot.n_tokens)
        np.testing.assert_allclose(plot.s_rope.get_ydata(), np.cos(t * math.radians(phi)), atol=1e-12)
        if beta == 2.0:
            np.testing.assert_allclose(plot.s_path.get_ydata()[::2], np.cos(t[::2] * math.radians(phi)), atol=1e-12)
        if beta == 0.0:
            np.testing.assert_allclose(plot.s_path.get_ydata(), 1.0, atol=1e-15)  # NoPE: nothing turns
    plot.close()
    plt.close("all")


def test_figures_keep_text_at_least_9_points():
    for cls in (VD.ForgetGatePlot, VD.StickBreakingPlot, VD.PathReflectionPlot):
        plot = cls()
        sizes = [t.get_fontsize() for t in plot.fig.findobj(lambda a: hasattr(a, "get_fontsize"))]
        assert min(sizes) >= 9, (cls.__name__, min(sizes))
        plot.close()
