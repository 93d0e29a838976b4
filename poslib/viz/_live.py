"""The LivePlot protocol: build a figure once, update it in place, show it with widgets."""

from __future__ import annotations

import importlib
import io
import pkgutil
from typing import Any, ClassVar

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

__all__ = ["LivePlot", "all_live_plots", "interact", "render_png"]


def render_png(fig: Figure, dpi: int = 80) -> bytes:
    """The figure drawn to PNG bytes (what the notebook's image widget shows)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


class LivePlot:
    """A figure with named parameters that sliders turn.

    Subclasses set ``defaults`` (parameter → initial value), implement
    ``build()`` to create the figure and artists from ``self.params``, and
    ``redraw()`` to change those artists' data for new ``self.params``.
    ``bench_values`` lists parameter settings the slider benchmark and the
    tests sweep through.
    """

    defaults: ClassVar[dict[str, Any]] = {}
    bench_values: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **params: Any) -> None:
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise TypeError(
                f"{type(self).__name__} has no parameter(s) {sorted(unknown)}; it has {sorted(self.defaults)}"
            )
        self.params: dict[str, Any] = {**self.defaults, **params}
        self.fig: Figure = self.build()

    def build(self) -> Figure:
        """Create and return the figure for ``self.params``."""
        raise NotImplementedError

    def redraw(self) -> None:
        """Update the existing artists for ``self.params`` (no new figure, no new axes)."""
        raise NotImplementedError

    def update(self, **params: Any) -> Figure:
        """Set some parameters and redraw in place; returns the same figure object."""
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise TypeError(
                f"{type(self).__name__} has no parameter(s) {sorted(unknown)}; it has {sorted(self.defaults)}"
            )
        self.params.update(params)
        self.redraw()
        return self.fig

    def close(self) -> None:
        """Release the figure (tests and benchmarks build many)."""
        plt.close(self.fig)


def interact(plot: LivePlot, **controls: Any) -> Any:
    """Wire ipywidgets ``controls`` (name → widget) to ``plot.update``; returns a widget box to display.

    The figure is shown as an ``ipywidgets.Image`` whose PNG is replaced on
    every change, so the browser swaps one image instead of a new output.
    """
    import ipywidgets as widgets

    # Start from the controls' values, not the plot's defaults: otherwise a control created with
    # another value (a Dropdown on its second option) sits beside a figure of a different setting,
    # and moving it onto the plot's default redraws nothing.
    plot.update(**{name: w.value for name, w in controls.items()})
    image = widgets.Image(value=render_png(plot.fig), format="png")
    plt.close(plot.fig)  # keep the inline backend from showing it a second time

    def on_change(_change: Any = None) -> None:
        plot.update(**{name: w.value for name, w in controls.items()})
        image.value = render_png(plot.fig)

    for w in controls.values():
        w.observe(on_change, names="value")
    return widgets.VBox([widgets.HBox(list(controls.values())), image])


def all_live_plots() -> list[type[LivePlot]]:
    """Every LivePlot subclass defined in the modules of ``poslib.viz`` (imported on demand)."""
    import poslib.viz as viz

    for info in pkgutil.iter_modules(viz.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"poslib.viz.{info.name}")

    def subclasses(cls: type[Any]) -> list[type[Any]]:
        children: list[type[Any]] = cls.__subclasses__()
        return [c for child in children for c in (child, *subclasses(child))]

    return [c for c in subclasses(LivePlot) if c.__module__.startswith("poslib.viz.")]
