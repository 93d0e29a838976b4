"""poslib.viz.interact shows the figure for the controls' starting values (no browser needed).

The browser test found a notebook whose Dropdown started on another option than
its LivePlot's default: the picture contradicted the control, and choosing the
default option redrew nothing.
"""

import io

import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
import pytest
from PIL import Image

from poslib.viz import LivePlot, interact, render_png


class _Level(LivePlot):
    defaults = {"level": 0.0}

    def build(self):
        fig, ax = plt.subplots(figsize=(2, 2))
        (self.line,) = ax.plot([0, 1], [self.params["level"]] * 2)
        ax.set_ylim(-1, 4)
        return fig

    def redraw(self):
        self.line.set_ydata([self.params["level"]] * 2)


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


def test_first_picture_follows_the_controls_not_the_defaults():
    plot = _Level()
    box = interact(plot, level=widgets.Dropdown(options=[0.0, 3.0], value=3.0))
    image = box.image
    assert plot.params["level"] == 3.0
    assert np.array_equal(_pixels(image.value), _pixels(render_png(_Level(level=3.0).fig)))
    box.controls["level"].value = 0.0
    assert np.array_equal(_pixels(image.value), _pixels(render_png(_Level(level=0.0).fig)))
    plt.close("all")


def test_unknown_control_name_fails_at_once():
    with pytest.raises(TypeError, match="'levle'"):
        interact(_Level(), levle=widgets.FloatSlider())
    plt.close("all")
