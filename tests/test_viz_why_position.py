"""Figures of notebook 01 (poslib.viz.why_position)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from poslib.teaching import toy
from poslib.viz.style import freeze_layout
from poslib.viz.why_position import ORDERS, PermutationPlot, permutation_views


def test_permutation_plot_draws_permuted_weights():
    plot = PermutationPlot()
    reference = permutation_views((0, 1, 2), False)
    for order in ORDERS:
        plot.update(order=order, causal=False)
        v = permutation_views(order, False)
        np.testing.assert_allclose(plot.images[0].get_array(), v["weights"])
        np.testing.assert_allclose(plot.images[1].get_array(), reference["weights"], atol=1e-12)
        np.testing.assert_allclose(plot.out_im.get_array(), v["outputs"])
        assert [t.get_text() for t in plot.axes[0].get_xticklabels()] == [toy.PINYIN[i] for i in order]
        assert "same weights" in plot.status.get_text()
    plot.update(order=(2, 1, 0), causal=True)
    assert "weights changed" in plot.status.get_text()
    assert plot.texts[0][0][1].get_text() == "0.00"  # the first query cannot see the second key
    plot.close()


def test_permutation_views_errors():
    with pytest.raises(ValueError, match="permutation"):
        permutation_views((0, 0, 1), False)


def test_freeze_layout_turns_the_engine_off():
    fig, ax = plt.subplots(layout="constrained")
    ax.set_title("a title")
    before = ax.get_position().bounds
    assert freeze_layout(fig).get_layout_engine() is None
    assert ax.get_position().bounds != before  # the layout was solved once before switching off
    plt.close(fig)
