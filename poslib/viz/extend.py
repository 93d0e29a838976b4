"""Figures for notebook 11 (extending a trained model's context).

:class:`RemapDistancePlot` draws the query − key distance each training-free remap of
:mod:`poslib.remap` scores a pair at, as a matrix and along one row, against the distances a model
trained at L_train has seen. Every number drawn comes from poslib; the class only lays it out.
"""

from __future__ import annotations

from typing import Any, ClassVar

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..dca import dual_chunk_relative_positions
from ..remap import rerope_relative_positions, self_extend_relative_positions
from ._live import LivePlot
from .style import legend_outside, new_figure

__all__ = ["DCA_CHUNK_SIZE", "DCA_LOCAL_WINDOW", "REMAP_METHODS", "RemapDistancePlot", "remap_distances"]

# label shown in the dropdown -> what poslib computes
REMAP_METHODS = ("plain RoPE", "ReRoPE", "Leaky ReRoPE", "Self-Extend", "Dual Chunk Attention")
# DCA at the lab's settings for L_train = 64, ChunkLlama's defaults for the pretraining length L:
# chunk_size = 3L/4, local_window = L/8 (HKUNLP/ChunkLlama, chunkllama_attn_replace.py)
DCA_CHUNK_SIZE, DCA_LOCAL_WINDOW = 48, 8


def remap_distances(
    method: str, length: int, *, window: int = 16, leak: float = 16.0, group_size: int = 6
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """The distance ``method`` (one of :data:`REMAP_METHODS`) scores each causal pair at, ``(length, length)``.

    Future keys (n > m) are NaN: the causal mask removes them, whatever a remap gives them.
    ``window`` is ReRoPE's w and Self-Extend's neighbour window w (LongLM's W); ``leak`` is Leaky ReRoPE's factor;
    ``group_size`` is Self-Extend's G (the defaults are the lab's: L_train / 4 = 16, Su's 16, and the
    smallest G that keeps 256 tokens in range). Dual Chunk Attention takes none of them: it is drawn at the
    lab's settings, :data:`DCA_CHUNK_SIZE` and :data:`DCA_LOCAL_WINDOW` (:func:`poslib.dual_chunk_relative_positions`).
    Distances are query − key, m − n, as in :mod:`poslib.remap`.
    """
    if method == "plain RoPE":
        m = np.arange(length)
        d = (m[:, None] - m[None, :]).astype(np.float64)
    elif method == "ReRoPE":
        d = rerope_relative_positions(length, window=window).astype(np.float64)
    elif method == "Leaky ReRoPE":
        d = rerope_relative_positions(length, window=window, leak=leak)
    elif method == "Self-Extend":
        d = self_extend_relative_positions(length, group_size=group_size, neighbor_window=window).astype(np.float64)
    elif method == "Dual Chunk Attention":
        d = dual_chunk_relative_positions(length, chunk_size=DCA_CHUNK_SIZE, local_window=DCA_LOCAL_WINDOW).astype(
            np.float64
        )
    else:
        raise ValueError(f"method must be one of {list(REMAP_METHODS)}, got {method!r}")
    return np.where(np.tri(length, dtype=bool), d, np.nan)


class RemapDistancePlot(LivePlot):
    """What distance each remap gives a pair (query m, key n), against the distances seen in training.

    Left: the matrix of remapped distances d'(m, n) over an input of ``length`` tokens; colours run over
    the distances a model trained at ``train_len`` has seen, 0 … L_train − 1, and every pair scored at a
    distance beyond them is red. Right: the last query's row, d' against the true distance m − n, beside
    plain RoPE's diagonal. ``window`` is ReRoPE's w and Self-Extend's neighbour window w (LongLM's W),
    ``leak`` applies to Leaky ReRoPE only, ``group_size`` to Self-Extend only.

    Slider speed: above the 150 ms goal for the length only. A move of the window, leak, group size or
    method redraws the matrix and the row in about 130 ms; a new length moves both panels' limits, so
    every tick label is drawn again (about 280 ms; ``python benchmarks/sliders.py --only Remap`` on one
    thread: drag median 218 ms over all controls).
    """

    defaults: ClassVar[dict[str, Any]] = {
        "method": "Self-Extend",
        "window": 16,
        "leak": 16.0,
        "group_size": 6,
        "length": 256,
    }
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"window": 24},
        {"group_size": 4},
        {"method": "Leaky ReRoPE", "leak": 4.0},
        {"method": "ReRoPE", "window": 32},
        {"method": "plain RoPE", "length": 512},
        {"method": "Self-Extend", "length": 1024, "group_size": 22},
        {"method": "Dual Chunk Attention", "length": 256},
    ]
    train_len = 64
    max_length = 1024
    # the caption combines them: Self-Extend stays in range only while G is large enough for L' (the book's
    # frames draw every pair of G and L' instead of moving one slider at a time)
    frame_joint: ClassVar[tuple[tuple[str, ...], ...]] = (("group_size", "length"),)

    def smallest_group_size(self, length: int, largest: int = 64) -> int | None:
        """The smallest G ≤ ``largest`` that keeps Self-Extend's distances over ``length`` tokens within training."""
        window = int(self.params["window"])
        for g in range(1, largest + 1):
            d = remap_distances("Self-Extend", length, window=window, group_size=g)
            if np.nanmax(d) <= self.train_len - 1:
                return g
        return None

    def frame_values(self) -> dict[str, list[Any]]:
        """For each input length, the smallest G that stays in range and the G just below it (the flip)."""
        values: set[int] = set()
        length = 2 * self.train_len
        while length <= self.max_length:
            g = self.smallest_group_size(length)
            if g is not None:
                values |= {g, g - 1} - {0}
            length *= 2
        return {"group_size": sorted(values)}

    def build(self) -> Figure:
        fig, (a_map, a_row) = new_figure(9.8, 4.7, ncols=2, gridspec_kw={"width_ratios": [1.1, 1]})
        fig.suptitle(
            f"The distance each pair is scored at, against the distances 0 … {self.train_len - 1} seen in training"
        )
        cmap = plt.get_cmap("viridis").with_extremes(over="#D55E00", bad="white")
        self.im = a_map.imshow(
            np.zeros((2, 2)), cmap=cmap, vmin=0, vmax=self.train_len - 1, interpolation="nearest", origin="upper"
        )
        cb = fig.colorbar(
            self.im, ax=a_map, shrink=0.85, extend="max", label=f"distance d' (red: > {self.train_len - 1})"
        )
        cb.locator = MaxNLocator(4)
        cb.update_ticks()
        a_map.set(xlabel="key position n", ylabel="query position m")
        # the changing headings are plain texts, not titles: a title is re-placed with its axes' ticks on every
        # change, which would redraw both panels' tick labels on each slider move
        self.map_title = a_map.text(0.5, 1.03, "", transform=a_map.transAxes, ha="center", va="bottom", fontsize=11)
        self.a_map = a_map
        (self.plain,) = a_row.plot([], [], color="0.55", ls="--", lw=1.2, label="plain RoPE: d' = m − n")
        (self.row,) = a_row.plot([], [], color="#0072B2", ls="-", lw=2, label="this remap")
        a_row.axhline(self.train_len - 1, color="#D55E00", ls=":", lw=1.2, label="largest distance trained")
        self.window_mark = a_row.axvline(0, color="0.3", ls="-.", lw=1, label="window w")
        a_row.set(xlabel="true distance m − n (last query)", ylabel="distance d' it is scored at")
        self.row_title = a_row.text(0.5, 1.03, "", transform=a_row.transAxes, ha="center", va="bottom", fontsize=11)
        self.shown_length: int | None = None
        legend_outside(a_row, where="below", ncol=2)
        self.a_row = a_row
        return fig

    def distances(self) -> np.ndarray[Any, np.dtype[np.float64]]:
        """The matrix the left panel shows, for the current parameters."""
        p = self.params
        return remap_distances(
            str(p["method"]),
            int(p["length"]),
            window=int(p["window"]),
            leak=float(p["leak"]),
            group_size=int(p["group_size"]),
        )

    def redraw(self) -> None:
        p = self.params
        length, method = int(p["length"]), str(p["method"])
        d = self.distances()
        self.im.set_data(np.ma.masked_invalid(d))
        if length != self.shown_length:  # limits move (and every tick label is redrawn) only with the length
            self.im.set_extent((-0.5, length - 0.5, length - 0.5, -0.5))
            self.a_row.set(xlim=(0, length - 1), ylim=(0, max(length - 1, self.train_len)))
            self.shown_length = length
        details = {
            "plain RoPE": "no remap",
            "ReRoPE": f"w = {int(p['window'])}",
            "Leaky ReRoPE": f"w = {int(p['window'])}, leak {float(p['leak']):g}",
            "Self-Extend": f"w = {int(p['window'])}, G = {int(p['group_size'])}",
            "Dual Chunk Attention": f"chunk_size {DCA_CHUNK_SIZE}, local_window {DCA_LOCAL_WINDOW}",
        }[method]
        self.map_title.set_text(f"{method} ({details}), {length:,} tokens")
        true = np.arange(length)
        last = d[-1, ::-1]  # key n = length − 1 − t sits at true distance t
        self.plain.set_data(true, true)
        self.row.set_data(true, last)
        self.window_mark.set_xdata([p["window"], p["window"]])
        self.window_mark.set_visible(method not in ("plain RoPE", "Dual Chunk Attention"))
        causal = ~np.isnan(d)
        unseen = int((d[causal] > self.train_len - 1).sum())
        largest = np.nanmax(d)
        self.row_title.set_text(
            f"largest d' = {largest:.4g} (trained: ≤ {self.train_len - 1});\n"
            f"{unseen:,} of {int(causal.sum()):,} pairs beyond it"
        )
