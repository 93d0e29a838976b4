"""Figures of notebook 06 (poslib.viz.length)."""

import numpy as np
import pytest

import poslib as P
from poslib import teaching
from poslib.viz import length as VE


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
        np.testing.assert_allclose(
            plot.plain.get_ydata(), teaching.attention_entropy_vs_length(plot.lengths, score_std=std)
        )
        np.testing.assert_allclose(
            plot.scaled.get_ydata(), teaching.attention_entropy_vs_length(plot.lengths, L, score_std=std)
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
