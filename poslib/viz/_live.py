"""The LivePlot protocol: build a figure once, update it in place, show it with widgets.

A widget's words are made when :func:`interact` builds it, in poslib's language (:mod:`poslib.language`): its own
words (the reset button, a page button's tooltip, the caption's lead) are templates of the ``widgets`` catalogue,
and the labels, menu options and caption a notebook passes in are looked up in the same catalogue (their Chinese
is listed there, extracted from the English notebooks by ``scripts/catalogues.py``). The values a control sets
stay as the code wrote them.
"""

from __future__ import annotations

import base64
import functools
import html
import importlib
import io
import math
import os
import pkgutil
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from matplotlib.figure import Figure
from wcwidth import wcswidth

from ..language import language, translate, translator
from ._blit import FrameCache, png_bytes
from ._book_hook import FRAMES_ENV, record_for_book
from .style import RENDER_DPI, display_width_px, freeze_layout

__all__ = ["LivePlot", "all_live_plots", "caption_html", "interact", "label_ch", "render_png"]

TRACK_PX = 440  # track beside the label: a 4096-position slider moves ~9 positions per pixel; the box is exact
FINE_STEPS = 256  # sliders with more steps than this get a linked number box
_ = translator("widgets")


def N_(template: str) -> str:
    """Marks a template of the widgets catalogue that is looked up where it is used (scripts/catalogues.py)."""
    return template


WIDGET_TEXT = N_("Interactive figure: run the notebook to move its controls.")  # scripts/run_notebooks.py: the same


def render_png(fig: Figure, dpi: int = RENDER_DPI, *, compress_level: int = 1) -> bytes:
    """The figure drawn in full to PNG bytes by ``savefig``, at twice the display resolution.

    Saved notebooks use it (``compress_level=9``); slider moves use the faster
    :meth:`LivePlot.png`, which gives the same pixels.
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, pil_kwargs={"compress_level": compress_level})
    return buf.getvalue()


class LivePlot:
    """A figure with named parameters that sliders turn.

    Subclasses set ``defaults`` (parameter → initial value), implement
    ``build()`` to create the figure and its artists and ``redraw()`` to set
    those artists' data from ``self.params``. The constructor runs build →
    redraw → :func:`~poslib.viz.style.freeze_layout`, so the layout is solved
    once, with the first data drawn. ``bench_values`` lists parameter settings
    the slider benchmark and the tests sweep through; :meth:`frame_values` names,
    per parameter, values where the picture changes fast, which the book's frames
    include (scripts/book/book_frames.py). ``frame_joint`` names groups of sliders
    whose caption asks the reader to combine them ("in range only while G is
    large enough for L′"): the book draws every combination of each group's
    values instead of moving one slider at a time.
    """

    defaults: ClassVar[dict[str, Any]] = {}
    bench_values: ClassVar[list[dict[str, Any]]] = []
    frame_joint: ClassVar[tuple[tuple[str, ...], ...]] = ()

    def __init__(self, **params: Any) -> None:
        self._check(params)
        self._frames: FrameCache | None = None
        self.params: dict[str, Any] = {**self.defaults, **params}
        self.fig: Figure = self.build()
        _images_over_axis_layer(self.fig)
        self.redraw()
        freeze_layout(self.fig)

    def _check(self, params: dict[str, Any]) -> None:
        unknown = set(params) - set(self.defaults)
        if unknown:
            raise TypeError(
                f"{type(self).__name__} has no parameter(s) {sorted(unknown)}; it has {sorted(self.defaults)}"
            )

    def build(self) -> Figure:
        """Create and return the figure and its artists (their data is set by ``redraw``)."""
        raise NotImplementedError

    def redraw(self) -> None:
        """Update the existing artists for ``self.params`` (no new figure, no new axes)."""
        raise NotImplementedError

    def limits(self) -> dict[str, tuple[float, float]]:
        """Current (min, max) of parameters whose range depends on the others; ``interact`` applies them."""
        return {}

    def frame_values(self) -> dict[str, list[Any]]:
        """Values (per parameter) where the picture changes fast: the book draws frames there too. None by default."""
        return {}

    def update(self, **params: Any) -> Figure:
        """Set some parameters and redraw in place; returns the same figure object."""
        self._check(params)
        if params and all(k in self.params and _same(self.params[k], v) for k, v in params.items()):
            return self.fig  # nothing moved (interact re-fires a control at its own value): keep the frame as it is
        self.params.update(params)
        self.redraw()
        return self.fig

    def png(self) -> bytes:
        """The figure as PNG bytes at :data:`~poslib.viz.style.RENDER_DPI`: what a slider move shows.

        Drawn by :class:`~poslib.viz._blit.FrameCache` (only what the last update
        changed is redrawn) and encoded without row filters: the same pixels as
        :func:`render_png`, in a third to a half of the time.
        """
        if self._frames is None:
            self._frames = FrameCache(self.fig, RENDER_DPI)
        return png_bytes(self._frames.frame(), RENDER_DPI)

    def close(self) -> None:
        """Release the figure (tests and benchmarks build many)."""
        import matplotlib.pyplot as plt

        plt.close(self.fig)


def _same(a: Any, b: Any) -> bool:
    """Whether two control values are the same plain value (arrays and other objects never count as unchanged)."""
    plain = (int, float, str, bool, tuple, type(None))
    return isinstance(a, plain) and type(a) is type(b) and a == b


def _images_over_axis_layer(fig: Figure) -> None:
    """Paint images just after the tick layer instead of before it, where ticks point outward and there is no grid.

    Nothing on screen changes (outward ticks do not reach into the image), but
    an image that a slider changes is then no longer painted under the axis, so
    :class:`~poslib.viz._blit.FrameCache` need not redraw the tick labels with it.
    """
    for ax in fig.axes:
        if not ax.images:
            continue
        ticks = [*ax.xaxis.get_major_ticks(), *ax.yaxis.get_major_ticks()]
        if any(t.gridline.get_visible() for t in ticks) or any(t.get_tickdir() != "out" for t in ticks):
            continue
        ax.set_axisbelow(True)  # the axis layer at zorder 0.5
        for image in ax.images:
            if image.get_zorder() < 0.5:
                image.set_zorder(0.75)


def _decimals(step: float) -> int:
    """Digits after the point that show every value a slider of this step can take (0.125 → 3)."""
    for k in range(7):
        if abs(round(step, k) - step) < 1e-12:
            return k
    return 6


def _page_step(span: float, step: float) -> float:
    """The smallest of 1, 2, 5 × 10^k and 2^k that is a multiple of ``step`` and leaves ≤ FINE_STEPS steps."""
    candidates = sorted({m * 10**k for k in range(-6, 9) for m in (1, 2, 5)} | {2.0**k for k in range(-6, 31)})
    for c in candidates:
        if c >= step and span / c <= FINE_STEPS and abs(c / step - round(c / step)) < 1e-9:
            return c
    return step * math.ceil(span / step / FINE_STEPS)


def _widen(w: Any, widgets: Any, width: int) -> Any:
    """Full labels, all ``width`` ch wide so the tracks line up; readouts with the step's digits; page steps.

    A slider with more than :data:`FINE_STEPS` steps gets a linked number box (exact
    values) and two buttons that move it by a page step of about 1/256 of its range.
    The slider keeps its own step: the front end snaps a slider's value to its step
    grid and writes the snapped value back, so a coarser slider step would make
    values off that grid unreachable.
    """
    if isinstance(w, widgets.Checkbox):
        w.indent = False  # an indented checkbox cuts its label at the description width
        w.layout.width = "auto"
        return w
    if hasattr(w, "style") and hasattr(w.style, "description_width"):
        w.style.description_width = f"{width}ch"
    is_slider = "Slider" in type(w).__name__
    if is_slider:
        w.layout.width = f"calc({width}ch + {TRACK_PX}px)"  # the label's share does not shorten the track
    # One format for counts everywhere (slider readouts and figure titles): 16,384, not 16384.
    if isinstance(w, widgets.IntSlider) and w.readout_format == "d":
        w.readout_format = ",d"
    if isinstance(w, widgets.FloatSlider) and w.readout_format == ".2f":
        w.readout_format = f".{max(2, _decimals(w.step))}f"  # a step of 0.125 reads 0.375, not 0.38
    if isinstance(w, widgets.SelectionSlider) and all(isinstance(v, int) for v in w.options):
        value = w.value
        w.options = [(f"{v:,}", v) for v in w.options]
        w.value = value
    steps = (w.max - w.min) / w.step if isinstance(w, widgets.IntSlider | widgets.FloatSlider) else 0
    if steps <= FINE_STEPS:
        return w
    box_cls = widgets.BoundedIntText if isinstance(w, widgets.IntSlider) else widgets.BoundedFloatText
    box = box_cls(value=w.value, min=w.min, max=w.max, step=w.step, layout=widgets.Layout(width="90px"))
    page = _page_step(w.max - w.min, w.step)
    page = int(page) if isinstance(w, widgets.IntSlider) else page
    w.readout = False  # the box shows the value: one number, one format
    widgets.link((w, "value"), (box, "value"))
    widgets.link((w, "max"), (box, "max"))
    buttons = []
    for sign, icon in ((-1, "backward"), (1, "forward")):
        tooltip = _("−{page} (a page)") if sign < 0 else _("+{page} (a page)")
        button = widgets.Button(
            icon=icon, tooltip=tooltip.format(page=f"{page:,}"), layout=widgets.Layout(width="36px")
        )
        button.on_click(lambda _b, sign=sign: setattr(w, "value", min(w.max, max(w.min, w.value + sign * page))))
        buttons.append(button)
    w.page_buttons = buttons
    return widgets.HBox([w, box, *buttons])


def label_ch(labels: Iterable[str]) -> int:
    """One description width for the controls of a figure, in ``ch``: the widest label as a terminal shows it
    (wcwidth: a Chinese character takes two columns), at least 4, plus room for the colon."""
    return max(max((wcswidth(s) for s in labels), default=0), 4) + 2


def _label_ch(controls: dict[str, Any]) -> int:
    return label_ch(getattr(w, "description", "") for w in controls.values())


def caption_html(caption: str) -> str:
    """The HTML of a figure's caption line, "<i>What to look for:</i> …", in the current language."""
    return _("<i>What to look for:</i> {caption}").format(caption=html.escape(translate("widgets", caption)))


def _localize(controls: dict[str, Any], widgets: Any) -> None:
    """The controls' labels and the words among a menu's options in the current language (the values stay as they
    are): each is looked up in the widgets catalogue."""
    for w in controls.values():
        if getattr(w, "description", ""):
            w.description = translate("widgets", w.description)
        if isinstance(w, widgets.Dropdown | widgets.RadioButtons | widgets.Select | widgets.ToggleButtons):
            labels = [str(s) for s in w._options_labels]
            shown = [translate("widgets", s) for s in labels]
            if shown != labels:
                value = w.value
                w.options = list(zip(shown, w._options_values, strict=True))
                w.value = value


class _Interactive:
    """Mix-in for the box ``interact`` returns: a saved notebook shows a PNG of the figure, not the widget's repr."""

    plot: LivePlot

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if bundle is None:
            return None
        data, meta = bundle if isinstance(bundle, tuple) else (bundle, {})
        png = base64.b64encode(render_png(self.plot.fig, compress_level=9)).decode("ascii")
        data = {**data, "image/png": png, "text/plain": _(WIDGET_TEXT)}
        return data, {**meta, "image/png": {"width": display_width_px(self.plot.fig)}}


@functools.cache
def _box_class() -> Callable[..., Any]:
    """A VBox that is also :class:`_Interactive` (made on first use: ipywidgets is imported only when needed)."""
    import ipywidgets as widgets

    return type("InteractiveFigure", (_Interactive, widgets.VBox), {})


def interact(plot: LivePlot, caption: str = "", **controls: Any) -> Any:
    """Wire ipywidgets ``controls`` (parameter name → widget) to ``plot``; returns the box to display.

    The box holds the controls (full labels, wide sliders, a number box for fine
    ranges), a reset button, ``caption`` (one line: what to look for), and the
    figure as an ``ipywidgets.Image`` shown at its display width, whose PNG is
    replaced on every change. Saved in a notebook, the box also carries a PNG
    of the figure, which is what a reader sees before running it.
    """
    import ipywidgets as widgets

    plot._check(controls)
    # the labels and menus in the language current now (English: as the notebook wrote them)
    if language() != "en":
        _localize(controls, widgets)
    # Start from the controls' values, not the plot's defaults: otherwise a control created with
    # another value (a Dropdown on its second option) sits beside a figure of a different setting.
    plot.update(**{name: w.value for name, w in controls.items()})
    initial = {name: w.value for name, w in controls.items()}
    px = display_width_px(plot.fig)
    image = widgets.Image(value=plot.png(), format="png", width=str(px))
    image.layout = widgets.Layout(width=f"{px}px", max_width="100%", height="auto")
    plot.close()  # a pyplot-made figure would otherwise be shown a second time by the inline backend
    holding = [False]

    def apply_limits() -> None:
        for name, (lo, hi) in plot.limits().items():
            if name not in controls:
                continue
            w = controls[name]
            w.max, w.min = max(hi, w.min), min(lo, w.max)

    def on_change(_change: Any = None) -> None:
        if holding[0]:
            return
        plot.update(**{name: w.value for name, w in controls.items()})
        apply_limits()
        image.value = plot.png()

    def reset(_button: Any = None) -> None:
        holding[0] = True
        try:
            for name, value in initial.items():
                controls[name].value = value
        finally:
            holding[0] = False
        on_change()

    apply_limits()
    width = _label_ch(controls)
    rows = [_widen(w, widgets, width) for w in controls.values()]
    if os.environ.get(FRAMES_ENV):  # scripts/build_book.py --frames: draw this figure's frames for the book
        record_for_book(plot, controls, translate("widgets", caption) if caption else caption)
    for w in controls.values():
        w.observe(on_change, names="value")
    button = widgets.Button(description=_("reset"), tooltip=_("back to the starting values"), icon="undo")
    button.layout.width = "90px"
    button.on_click(reset)
    children: list[Any] = [*rows, button]
    if caption:
        children.append(widgets.HTML(caption_html(caption)))
    box = _box_class()([*children, image])
    box.plot, box.image, box.controls = plot, image, controls
    return box


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
