"""Every LivePlot in poslib.viz: updates in place, changes what is drawn, labels its axes."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from poslib.viz import LivePlot, all_live_plots, render_png

PLOTS = all_live_plots()


def _pixels(fig):
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


@pytest.mark.parametrize("cls", PLOTS, ids=[c.__name__ for c in PLOTS])
def test_update_is_in_place_and_changes_the_picture(cls):
    assert cls.bench_values, f"{cls.__name__} needs bench_values for the slider benchmark"
    plot = cls()
    fig, axes = plot.fig, list(plot.fig.axes)
    before = _pixels(fig)
    changed = False
    for values in cls.bench_values:
        assert plot.update(**values) is fig
        assert list(fig.axes) == axes, "update must reuse the axes, not add new ones"
        after = _pixels(fig)
        changed |= after.shape != before.shape or bool((after != before).any())
        before = after
    assert changed, f"{cls.__name__}.update never changed the picture"
    assert render_png(fig)[:4] == b"\x89PNG"
    plot.close()


@pytest.mark.parametrize("cls", PLOTS, ids=[c.__name__ for c in PLOTS])
def test_axes_are_labelled_and_titled(cls):
    plot = cls()
    for ax in plot.fig.axes:
        if ax.get_label() == "<colorbar>" or not ax.axison:
            continue
        assert ax.get_xlabel() and ax.get_ylabel(), f"{cls.__name__}: unlabelled axes"
        assert ax.get_title() or plot.fig._suptitle is not None, f"{cls.__name__}: untitled axes"
    plot.close()


def test_unknown_parameter_is_named():
    class Dummy(LivePlot):
        defaults = {"a": 1}

        def build(self):
            return plt.figure()

    with pytest.raises(TypeError, match="'b'"):
        Dummy(b=2)
    d = Dummy()
    with pytest.raises(TypeError, match="'b'"):
        d.update(b=3)
    d.close()
