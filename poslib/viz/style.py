"""One look for every figure of the course: sharp at the size shown, text ≥ 9 pt, lines told apart.

A figure inch is shown as :data:`DISPLAY_DPI` CSS pixels (96, the CSS inch) and
drawn at :data:`RENDER_DPI` (twice that), so a point in matplotlib is a point on
screen and the picture stays sharp on high-density displays. No figure is wider
than :data:`MAX_WIDTH` inches, so JupyterLab's output area (about 964 px at a
1400 px window) never shrinks one. Importing :mod:`poslib.viz` applies
:func:`apply_style`; :func:`new_figure` is the one way the viz modules make a figure.

Palette: Okabe and Ito's eight colours, safe for the common colour-vision
deficiencies; the n-th series also gets the n-th line style (and, through
:func:`series`, the n-th marker), so lines differ in shape too. Backgrounds
are opaque white, readable in JupyterLab's dark theme.
"""

from __future__ import annotations

from typing import Any

import matplotlib as mpl
import numpy as np
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.ticker import Formatter, Locator, MaxNLocator, ScalarFormatter

__all__ = [
    "COLORS",
    "DISPLAY_DPI",
    "LINESTYLES",
    "MARKERS",
    "MAX_WIDTH",
    "MIN_FONT_PT",
    "NOTEBOOK_WIDTH_PX",
    "RENDER_DPI",
    "apply_style",
    "display_width_px",
    "following_colorbar",
    "freeze_layout",
    "legend_outside",
    "new_figure",
    "series",
    "sparse_colorbar",
]

DISPLAY_DPI = 96  # CSS pixels per figure inch: one matplotlib point is one CSS point
RENDER_DPI = 2 * DISPLAY_DPI  # pixels drawn per figure inch: sharp on 2× screens, downscaled cleanly on 1×
MAX_WIDTH = 9.8  # inches: 941 CSS px, and 960 with the inline backend's 0.1 in padding on each side
NOTEBOOK_WIDTH_PX = 960  # JupyterLab's output area at a 1400 px window is 964 CSS px wide
MIN_FONT_PT = 9.0

# Okabe & Ito (2008), "Color Universal Design": distinguishable with any common colour-vision deficiency.
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
LINESTYLES = ["-", "--", "-.", ":", "-", "--", "-.", ":"]

RC: dict[Any, Any] = {  # keys typed loosely: matplotlib types rcParams keys as a Literal union
    "figure.dpi": DISPLAY_DPI,
    "savefig.dpi": RENDER_DPI,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "axes.facecolor": "white",
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "figure.titlesize": 11,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "legend.framealpha": 1.0,
    # colour and line style in the cycle; markers come from series(), sparse, where lines need them
    "axes.prop_cycle": cycler(color=COLORS) + cycler(linestyle=LINESTYLES),
    "lines.markersize": 4,
    "lines.linewidth": 1.5,
    "mathtext.fontset": "dejavusans",
    "image.interpolation": "nearest",
}


def apply_style() -> None:
    """Set the course's rcParams; in an IPython kernel with the inline backend, also show figures at 2× (retina)."""
    mpl.rcParams.update(RC)
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # plain Python: figures are saved, not shown
        return
    if shell is None or "inline" not in str(mpl.get_backend()):
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    # "retina" draws at twice figure.dpi and tells the front end the 1× size: sharp, never stretched.
    # The inline backend keeps its own rc (it can reset figure.dpi and the background): set ours after it.
    set_matplotlib_formats("retina")  # type: ignore[no-untyped-call]
    mpl.rcParams.update(RC)


def series(k: int, n_points: int | None = None) -> dict[str, Any]:
    """Style of the k-th line of a panel (colour, marker, line style); dense lines get ~12 markers, not one a point."""
    style: dict[str, Any] = {
        "color": COLORS[k % len(COLORS)],
        "marker": MARKERS[k % len(MARKERS)],
        "linestyle": LINESTYLES[k % len(LINESTYLES)],
    }
    if n_points is not None and n_points > 24:
        style["markevery"] = max(1, n_points // 12)
    return style


def new_figure(
    width: float, height: float, *, nrows: int = 1, ncols: int = 1, pyplot: bool = False, **subplots: Any
) -> tuple[Figure, Any]:
    """A figure of ``width`` × ``height`` inches with a grid of axes (constrained layout), course style applied.

    ``pyplot=False`` (LivePlots) makes a figure pyplot does not track, so ``plt.show()``
    never shows it a second time beside its widget; ``pyplot=True`` (static figures
    shown with ``plt.show()``) registers it with pyplot.
    """
    if not 0 < width <= MAX_WIDTH:
        raise ValueError(f"width must be in (0, {MAX_WIDTH}] inches (wider figures are shrunk on screen), got {width}")
    with mpl.rc_context(RC):
        if pyplot:
            import matplotlib.pyplot as plt

            fig = plt.figure(figsize=(width, height), layout="constrained")
        else:
            fig = Figure(figsize=(width, height), layout="constrained")
            FigureCanvasAgg(fig)
        axes = fig.subplots(nrows, ncols, **subplots)
    return fig, axes


def display_width_px(fig: Figure) -> int:
    """CSS width at which the figure is shown: :data:`DISPLAY_DPI` pixels per figure inch."""
    return round(fig.get_figwidth() * DISPLAY_DPI)


def legend_outside(ax: Axes, *, where: str = "right", ncol: int = 1, **kw: Any) -> Legend:
    """A legend beside (``"right"``) or below (``"below"``) the axes: outside them, so it never covers data."""
    if where == "right":
        return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, ncol=ncol, **kw)
    if where == "below":
        return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), borderaxespad=0.0, ncol=ncol, **kw)
    raise ValueError(f"where must be 'right' or 'below', got {where!r}")


def sparse_colorbar(fig: Figure, mappable: Any, ax: Any, label: str, *, shrink: float = 0.85, n_ticks: int = 5) -> Any:
    """A colour bar with at most ``n_ticks`` labelled ticks: every tick label is text redrawn on each slider move."""
    cb = fig.colorbar(mappable, ax=ax, shrink=shrink, label=label)
    cb.locator = MaxNLocator(n_ticks)
    cb.update_ticks()
    return cb


class _SpanTicks(Locator):
    """The ticks ``inner`` gives the mappable's colour range, placed on a colour bar drawn over a fixed 0 … 1 scale."""

    def __init__(self, mappable: Any, inner: Locator) -> None:
        self.mappable, self.inner = mappable, inner
        self.real: dict[float, float] = {}  # placed tick → its value, for the formatter

    def span(self) -> tuple[float, float]:
        norm = self.mappable.norm  # the ends a colour bar of the mappable itself would span: norm.inverse(0), (1)
        return float(norm.inverse(0.0)), float(norm.inverse(1.0))

    def __call__(self) -> Any:
        lo, hi = self.span()
        if not hi > lo:  # a colour range of one value: no ticks to place (the sliders of the course never give one)
            self.real = {}
            return np.array([])
        ticks = np.asarray(self.inner.tick_values(lo, hi), dtype=float)
        placed = (ticks - lo) / (hi - lo)
        self.real = {float(p): float(t) for p, t in zip(placed, ticks, strict=True)}
        return placed

    def tick_values(self, vmin: float, vmax: float) -> Any:
        return self()


class _SpanLabels(Formatter):
    """A ScalarFormatter's labels (and offset) for the values of the placed ticks of :class:`_SpanTicks`."""

    def __init__(self, ticks: _SpanTicks) -> None:
        self.ticks, self.inner = ticks, ScalarFormatter()
        self.inner.create_dummy_axis()
        self.dummy: Any = self.inner.axis  # the formatter reads its view interval: the mappable's limits

    def _values(self, placed: Any) -> list[float]:
        lo, hi = self.ticks.span()
        return [self.ticks.real.get(float(p), lo + float(p) * (hi - lo)) for p in placed]

    def format_ticks(self, values: Any) -> list[str]:
        self.dummy.set_view_interval(*self.ticks.span())
        return self.inner.format_ticks(self._values(values))

    def __call__(self, x: float, pos: int | None = None) -> str:
        return self.inner(self._values([x])[0], pos)

    def get_offset(self) -> str:
        return self.inner.get_offset()


def following_colorbar(
    fig: Figure, mappable: Any, ax: Any, label: str, *, shrink: float = 0.85, n_ticks: int = 5
) -> Any:
    """:func:`sparse_colorbar` for a mappable whose colour limits move with a slider, without a full redraw per move.

    A colour bar made from the mappable itself rebuilds its colour strip (a new artist) whenever the
    limits change, and :class:`~poslib.viz._blit.FrameCache` then draws the whole figure again. This
    one draws the same strip once, over a fixed 0 … 1 scale, and places and labels its ticks at the
    mappable's current limits (``MaxNLocator(n_ticks)`` and a ``ScalarFormatter``, as
    :func:`sparse_colorbar`): the same picture, and a move redraws only the colour bar's axis.
    """
    strip = ScalarMappable(norm=Normalize(0.0, 1.0), cmap=mappable.get_cmap())
    cb = fig.colorbar(strip, ax=ax, shrink=shrink, label=label)
    ticks = _SpanTicks(mappable, MaxNLocator(n_ticks))
    cb.locator, cb.formatter = ticks, _SpanLabels(ticks)
    cb.update_ticks()
    axis = cb.ax.yaxis if cb.orientation == "vertical" else cb.ax.xaxis

    def limits_moved(_mappable: Any) -> None:
        axis.stale = True  # new ticks: the frame cache redraws the axis (and what it overlaps), nothing else

    mappable.callbacks.connect("changed", limits_moved)
    return cb


def freeze_layout(fig: Figure) -> Figure:
    """Solve the constrained layout once, then remove the layout engine.

    Slider updates change data, not the figure's furniture, so re-solving the
    layout on every redraw buys nothing. Two passes let colour bars and outside
    legends settle. Removing the engine (``None``, not ``"none"``, whose
    placeholder still counts as one) also spares ``savefig`` the extra layout
    pass it makes for any figure that has an engine: together about 40 % of a
    slider update.
    """
    if fig.get_layout_engine() is not None:
        fig.draw_without_rendering()
        fig.draw_without_rendering()
        fig.set_layout_engine(None)
    return fig
