"""Figures and sliders for the notebooks.

Every interactive figure is a :class:`LivePlot`: built once, then updated in
place when a slider moves (``update(**params)`` changes the artists' data, it
never makes a new figure). The notebooks only wire a LivePlot to widgets with
:func:`interact`; tests and ``benchmarks/sliders.py`` call ``update`` directly.

One module per notebook holds that notebook's LivePlots.
"""

from ._live import LivePlot, all_live_plots, interact, render_png

__all__ = ["LivePlot", "all_live_plots", "interact", "render_png"]
