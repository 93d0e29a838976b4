"""Figures of notebook 04 (poslib.viz.relative)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import poslib as P
from poslib.viz.relative import DebertaPlot, T5BucketPlot, heatmap_row
from poslib.viz.style import freeze_layout


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
    terms = P.deberta_score_terms(d["q_c"], d["k_c"], table @ d["w_q_r"], table @ d["w_k_r"])
    np.testing.assert_allclose(plot.ims["c2p"].get_array(), terms["content-position"])
    np.testing.assert_allclose(plot.ims["p2c"].get_array(), terms["position-content"])
    delta = np.asarray(plot.ims["delta"].get_array())
    assert delta.min() == 0 and delta.max() == 2 * k - 1 and plot.ims["delta"].get_clim() == (0, 2 * k - 1)
    plot.close()
