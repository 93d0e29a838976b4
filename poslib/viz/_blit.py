"""Fast frames for slider moves: redraw only what changed over a cached picture of the rest, pixel for pixel.

A full Agg draw of a course figure at 2× resolution costs 100–250 ms, most of it
in tick labels, legends and titles that a slider move leaves alone. :class:`FrameCache`
keeps a *background*, the figure drawn without the artists a move changes, and
for each frame restores it and draws only those artists (blitting). It is exact:

* an artist counts as changed when it or any artist inside it is *stale*
  (matplotlib marks an artist stale whenever one of its properties is set);
* an axes whose limits, scale or position moved has every artist in it changed
  (its ticks are new);
* a static artist drawn *after* a changed one (higher zorder) and overlapping it
  is redrawn too, so the order of drawing, and therefore every pixel, is the
  one a full draw gives;
* anything else (the figure's size, its dpi, an artist added or removed, a
  layout engine that may move the axes) makes a full draw.

``tests/test_figures.py`` checks the frames against a full ``savefig`` of the same
state for every LivePlot. :func:`png_bytes` encodes a frame without PNG row
filters: PIL's adaptive filters take three times as long as the compression.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import BboxBase

__all__ = ["FrameCache", "png_bytes"]

PAD_PX = 2.0  # antialiased edges reach about a pixel past an artist's extent: overlap tests pad by two
SHRINK_AFTER = 2  # frames in a row that needed fewer artists than are redrawn before the background is rebuilt


def _family(a: Artist) -> Iterator[Artist]:
    yield a
    for child in a.get_children():
        yield from _family(child)


def _draw_order(fig: Figure) -> tuple[list[Artist], dict[int, Axes]]:
    """Every artist a full draw paints, in the order ``Figure.draw`` and ``Axes.draw`` paint them, and its axes."""
    order: list[Artist] = [fig.patch]  # painted first; if it changes, everything over it is redrawn
    owner: dict[int, Axes] = {}
    for top in sorted((a for a in fig.get_children() if a is not fig.patch), key=lambda a: a.get_zorder()):
        if not isinstance(top, Axes):
            order.append(top)
            continue
        framed = top.axison and top.get_frame_on()
        kids = [k for k in top.get_children() if k is not top.patch]
        if not framed:
            kids = [k for k in kids if k not in top.spines.values()]
        if not top.axison:
            kids = [k for k in kids if not isinstance(k, Axis)]
        kids = ([top.patch] if framed else []) + sorted(kids, key=lambda k: k.get_zorder())
        order.extend(kids)
        owner.update((id(k), top) for k in kids)
    return order, owner


def _extent(a: Artist, renderer: Any, whole: BboxBase) -> BboxBase:
    """Where ``a`` paints (the whole figure when matplotlib cannot say).

    Window extents leave out strokes, path effects and a text's box: the stroke is
    added as padding, and an artist with path effects or a text box counts as
    covering the whole figure.
    """
    if a.get_path_effects() or (isinstance(a, Text) and a.get_bbox_patch() is not None):
        return whole
    try:
        box = a.get_tightbbox(renderer) if isinstance(a, Axis) else a.get_window_extent(renderer)
    except Exception:  # some artists cannot measure themselves: assume they cover everything
        return whole
    if box is None or not (np.isfinite(box.bounds).all() and max(abs(box.width), abs(box.height)) < 1e7):
        return whole
    width = getattr(a, "get_linewidth", lambda: 0.0)()
    stroke_px = float(np.max(width, initial=0.0)) * renderer.dpi / 72 if np.size(width) else 0.0
    return box.padded(PAD_PX + stroke_px)


def _reach(a: Artist, renderer: Any, whole: BboxBase) -> BboxBase:
    """Where a changed artist may paint in any frame: its clip box when clipped, else its extent now."""
    clip = a.get_clip_box() if a.get_clip_on() else None
    if clip is not None and a.get_clip_path() is None:
        return clip.padded(PAD_PX)
    return _extent(a, renderer, whole)


def _titles(ax: Axes) -> list[Text]:
    return [ax.title, ax._left_title, ax._right_title]  # type: ignore[attr-defined]


class FrameCache:
    """Frames of one figure at ``dpi``: a full draw when the figure's structure changed, a blit otherwise.

    ``frame()`` returns the canvas's RGBA buffer for the figure's current state;
    ``full_draws``, ``rebuilds`` and ``blits`` count how each frame was made.
    """

    def __init__(self, fig: Figure, dpi: float) -> None:
        self.fig, self.dpi = fig, dpi
        self.background: Any = None
        self.redrawn: list[Artist] = []
        self.full_draws = self.rebuilds = self.blits = 0
        self._structure: tuple[Any, ...] = ()
        self._axes: dict[int, tuple[Any, ...]] = {}
        self._extents: dict[int, BboxBase] = {}
        self._smaller = 0

    @property
    def canvas(self) -> Any:  # Any: matplotlib's Agg canvas methods carry no annotations
        """The figure's Agg canvas (``frame`` makes one when the figure has none)."""
        return self.fig.canvas

    def _axes_state(self) -> dict[int, tuple[Any, ...]]:
        return {
            id(ax): (tuple(ax.viewLim.bounds), ax.get_xscale(), ax.get_yscale(), tuple(ax.get_position().bounds))
            for ax in self.fig.axes
        }

    def frame(self) -> memoryview:
        """The figure drawn at ``dpi`` (the figure's own dpi is restored afterwards)."""
        fig = self.fig
        if not isinstance(fig.canvas, FigureCanvasAgg):
            FigureCanvasAgg(fig)  # pyplot's close leaves a bare canvas behind; savefig would make this one too
        own_dpi = fig.dpi
        if own_dpi != self.dpi:
            fig.set_dpi(self.dpi)
        try:
            return self._frame()
        finally:
            if own_dpi != self.dpi:
                fig.set_dpi(own_dpi)

    def _frame(self) -> memoryview:
        order, owner = _draw_order(self.fig)
        structure = (id(self.fig.canvas), tuple(self.fig.get_size_inches()), self.fig.dpi, tuple(map(id, order)))
        if structure != self._structure or self.background is None or self.fig.get_layout_engine() is not None:
            return self._full(order, structure)
        changed = {id(a) for a in order if any(x.stale for x in _family(a))}
        axes = self._axes_state()
        moved = {key for key, state in axes.items() if self._axes.get(key) != state}
        self._axes = axes
        changed |= {id(a) for a in order if id(owner.get(id(a))) in moved}
        for key in changed:
            self._extents.pop(key, None)  # a changed artist's extent is measured again when it is static
        renderer = self.canvas.get_renderer()
        needed = self._with_overlaps(order, changed, renderer)
        redrawn = {id(a) for a in self.redrawn}
        # a move that changed nothing (a slider step that rounds to the same picture) says nothing about
        # what the next moves change: it neither counts towards shrinking nor resets the count
        if needed:
            self._smaller = self._smaller + 1 if needed < redrawn else 0
        if not needed <= redrawn or self._smaller >= SHRINK_AFTER:
            return self._rebuild(order, needed, renderer)
        canvas = self.canvas
        canvas.restore_region(self.background)
        self._draw_changed(renderer)
        self._settle(order)
        self.blits += 1
        return canvas.buffer_rgba()

    def _with_overlaps(self, order: list[Artist], ids: set[int], renderer: Any) -> set[int]:
        """``ids`` and every static artist painted after one of them that overlaps it (repeated until stable).

        An axes whose ticks change has its titles redrawn too: ``Axes.draw`` places
        the titles above the tick labels, and :meth:`_draw_changed` places them again.
        """
        whole = self.fig.bbox
        ids = set(ids)
        for ax in self.fig.axes:
            if id(ax.xaxis) in ids or id(ax.yaxis) in ids:
                ids.update(id(t) for t in _titles(ax))
        grew = True
        while grew:
            grew = False
            reaches: list[BboxBase] = []
            for a in order:
                if not a.get_visible():
                    continue
                if id(a) in ids:
                    reaches.append(_reach(a, renderer, whole))
                    continue
                if not reaches:
                    continue
                if id(a) not in self._extents:
                    self._extents[id(a)] = _extent(a, renderer, whole)
                if any(self._extents[id(a)].overlaps(r) for r in reaches):
                    ids.add(id(a))
                    grew = True
        return ids

    def _draw_changed(self, renderer: Any) -> None:
        redrawn = {id(a) for a in self.redrawn}
        for ax in self.fig.axes:
            if any(id(t) in redrawn for t in _titles(ax)):
                ax._update_title_position(renderer)  # type: ignore[attr-defined]  # what Axes.draw does first: titles clear the tick labels
        for a in self.redrawn:
            a.draw(renderer)

    def _settle(self, order: list[Artist]) -> None:
        for a in order:
            for x in _family(a):
                x.stale = False  # setting False tells no parent

    def _full(self, order: list[Artist], structure: tuple[Any, ...]) -> memoryview:
        canvas = self.canvas
        canvas.draw()
        self._settle(order)
        self._structure, self._axes, self._extents = structure, self._axes_state(), {}
        self.background, self.redrawn, self._smaller = canvas.copy_from_bbox(self.fig.bbox), [], 0
        self.full_draws += 1
        return canvas.buffer_rgba()

    def _rebuild(self, order: list[Artist], ids: set[int], renderer: Any) -> memoryview:
        canvas = self.canvas
        self.redrawn = [a for a in order if id(a) in ids]
        for a in self.redrawn:
            a.set_animated(True)
        try:
            canvas.draw()  # a draw that is not a save leaves animated artists out: the background
        finally:
            for a in self.redrawn:
                a.set_animated(False)  # savefig leaves animated figure-level artists out even when saving
        self.background = canvas.copy_from_bbox(self.fig.bbox)
        self._draw_changed(canvas.get_renderer())
        self._settle(order)
        self._smaller = 0
        self.rebuilds += 1
        return canvas.buffer_rgba()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(rgba: Any, dpi: float, *, compress_level: int = 1) -> bytes:
    """An RGBA buffer (height × width × 4, uint8) as PNG bytes, rows unfiltered, zlib at ``compress_level``."""
    pixels = np.asarray(rgba)
    if pixels.ndim != 3 or pixels.shape[2] != 4 or pixels.dtype != np.uint8:
        raise ValueError(f"rgba must be a (height, width, 4) uint8 array, got {pixels.shape} {pixels.dtype}")
    height, width = pixels.shape[:2]
    rows = np.empty((height, 1 + 4 * width), np.uint8)
    rows[:, 0] = 0  # filter type 0 (None) on every row
    rows[:, 1:] = pixels.reshape(height, 4 * width)
    per_metre = round(dpi / 0.0254)
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)),  # 8-bit RGBA, no interlace
            _chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
            _chunk(b"IDAT", zlib.compress(rows.tobytes(), compress_level)),
            _chunk(b"IEND", b""),
        ]
    )
