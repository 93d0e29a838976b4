"""Every LivePlot in poslib.viz: labels its axes, names a bad parameter (the update checks: test_figures.py)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from poslib.viz import LivePlot, all_live_plots, interact

PLOTS = all_live_plots()


# Updating in place and changing the picture at every benchmark setting: tests/test_figures.py, in the same
# pass as the readability checks (one draw per setting serves both).


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

        def redraw(self):
            pass

    with pytest.raises(TypeError, match="'b'"):
        Dummy(b=2)
    d = Dummy()
    with pytest.raises(TypeError, match="'b'"):
        d.update(b=3)
    d.close()


def test_live_plot_runs_build_redraw_freeze_itself():
    calls = []

    class Traced(LivePlot):
        defaults = {"a": 1}

        def build(self):
            calls.append("build")
            fig, ax = plt.subplots(layout="constrained")
            self.line = ax.plot([0, 1], [0, 0])[0]
            return fig

        def redraw(self):
            calls.append("redraw")
            self.line.set_ydata([0, self.params["a"]])

    plot = Traced(a=2)
    assert calls == ["build", "redraw"]
    assert plot.fig.get_layout_engine() is None, "the layout is solved once, then frozen"
    assert list(plot.line.get_ydata()) == [0, 2]
    plot.close()


def test_interact_adds_labels_number_box_reset_and_caption():
    widgets = pytest.importorskip("ipywidgets")
    plot = PLOTS[0]()
    name = next(iter(plot.defaults))
    wide = widgets.IntSlider(value=0, min=0, max=4096, description="a long label (tokens)")
    # any LivePlot with an int parameter would do; this one only needs the widget wiring, so stub update
    plot.update = lambda **kw: plot.fig  # type: ignore[method-assign]
    box = interact(plot, caption="the line moves", **{name: wide})
    assert wide.style.description_width == f"{len(wide.description) + 2}ch", "one label width: the tracks line up"
    assert wide.readout_format == ",d", "counts read 16,384 everywhere, as in the figure titles"
    row = box.children[0]
    number = row.children[1]
    number.value = 1234
    assert wide.value == 1234, "the number box sets the slider exactly"
    assert wide.step == 1 and number.step == 1, "the slider keeps its step: the front end snaps values to it"
    back, forward = row.children[2:4]
    forward.click()
    assert wide.value == 1234 + 16, "a page is 16 of 4,096"
    number.value = 4090
    forward.click()
    back.click()
    assert wide.value == 4096 - 16, "a page stops at the end of the range"
    assert wide.readout is False, "one number on screen: the box's"
    reset = next(c for c in box.children if isinstance(c, widgets.Button))
    reset.click()
    assert wide.value == 0 and number.value == 0
    assert any(isinstance(c, widgets.HTML) and "the line moves" in c.value for c in box.children)
    plt.close("all")


def test_slider_limits_follow_the_plot():
    from poslib.viz.learned import SimilarityRowPlot

    widgets = pytest.importorskip("ipywidgets")
    tables = {"short": np.eye(32), "long": np.eye(512)}
    pick = widgets.Dropdown(options=list(tables), value="short")
    position = widgets.IntSlider(value=10, min=0, max=511)
    interact(SimilarityRowPlot(tables=tables), table=pick, position=position)
    assert position.max == 31, "the slider ends at the shown table's last row"
    pick.value = "long"
    assert position.max == 511
    plt.close("all")


def test_selection_slider_of_counts_reads_with_separators():
    widgets = pytest.importorskip("ipywidgets")
    from poslib.viz.alibi import AlibiReachPlot

    length = widgets.SelectionSlider(options=[1024, 8192], value=8192)
    interact(AlibiReachPlot(), length=length)
    assert length.value == 8192 and length.label == "8,192"
    plt.close("all")
