"""Figures and sliders for the notebooks.

Every interactive figure is a :class:`LivePlot`: built once, then updated in
place when a slider moves (``update(**params)`` changes the artists' data, it
never makes a new figure). The notebooks only wire a LivePlot to widgets with
:func:`interact`; tests and ``benchmarks/sliders.py`` call ``update`` directly.

One module per notebook holds that notebook's LivePlots; all of them draw in
the one style of :mod:`poslib.viz.style`, applied on import.
"""

from . import style
from ._live import LivePlot, all_live_plots, interact, render_png

style.apply_style()

__all__ = ["LivePlot", "all_live_plots", "interact", "render_png", "style"]
