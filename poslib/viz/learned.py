"""Figures for notebook 02 (learned absolute positions).

:class:`SimilarityRowPlot` (sliders: position, table) shows a position table's
cosine-similarity matrix with one row picked out and plotted. It accepts the
tables to compare (``SimilarityRowPlot(tables={...})``); with none given it
uses all-MiniLM-L6-v2's learned table (shipped with poslib) and the sinusoidal
table of the same shape. :func:`table_heatmaps` and
:func:`offset_profiles_figure` draw the static comparisons.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from matplotlib.figure import Figure

from ..sinusoidal import sinusoidal_table
from ..teaching.similarity import cosine_similarity_matrix, offset_profile
from ._live import LivePlot
from .style import legend_outside, new_figure, series

__all__ = ["SimilarityRowPlot", "default_tables", "offset_profiles_figure", "table_heatmaps"]

MINILM = "all-MiniLM-L6-v2 (learned)"
SINUSOIDAL = "sinusoidal (d = 384)"


def default_tables() -> dict[str, np.ndarray]:
    """MiniLM's learned table (shipped in poslib/data) and a sinusoidal table of the same shape, (512, 384)."""
    from ..teaching.pretrained import pretrained_position_table

    return {MINILM: pretrained_position_table(), SINUSOIDAL: sinusoidal_table(512, 384)}


def _as_numpy(table: Any, name: str) -> np.ndarray:
    arr = table.detach().cpu().numpy() if hasattr(table, "detach") else np.asarray(table)
    if arr.ndim != 2 or arr.shape[0] < 2:
        raise ValueError(f"table {name!r} must have shape (L, d) with L ≥ 2, got {arr.shape}")
    return arr.astype(np.float64)


class SimilarityRowPlot(LivePlot):
    """Cosine similarity between positions of one table; the row of the chosen position is drawn on the right.

    ``tables`` maps a name to an ``(L, d)`` table (NumPy or torch). The
    ``table`` parameter names the one shown (default: the first); ``position``
    is clipped to that table's last row.

    Slider speed: a move of the position redraws the marker line over the matrix, the row panel's curve
    and its title; the 512 × 512 image, the limits and the matrix's title are set again only when the
    table changes (setting them, even to the same values, would make the frame cache redraw them).
    """

    defaults: ClassVar[dict[str, Any]] = {"position": 100, "table": ""}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"position": 0},
        {"position": 5},
        {"position": 200},
        {"position": 511},
        {"table": SINUSOIDAL},
        {"position": 60},
        {"table": MINILM, "position": 100},
    ]

    def __init__(self, tables: Mapping[str, Any] | None = None, **params: Any) -> None:
        raw = default_tables() if tables is None else dict(tables)
        if not raw:
            raise ValueError("tables must name at least one table")
        self.tables = {name: _as_numpy(t, name) for name, t in raw.items()}
        self.similarity = {name: cosine_similarity_matrix(t) for name, t in self.tables.items()}
        super().__init__(**params)

    def _name(self) -> str:
        name = self.params["table"] or next(iter(self.tables))
        if name not in self.tables:
            name = next(iter(self.tables))  # a caller's own tables need not include the named one
        return name

    def build(self) -> Figure:
        fig, (ax_s, ax_r) = new_figure(9.8, 4.0, ncols=2, gridspec_kw={"width_ratios": [1, 1.3]})
        self.ax_s, self.ax_r = ax_s, ax_r
        self.im = ax_s.imshow(np.eye(2), vmin=-1, vmax=1, cmap="RdBu_r", interpolation="nearest")
        fig.colorbar(self.im, ax=ax_s, shrink=0.85, label="cosine similarity", ticks=[-1, 0, 1])
        self.hline = ax_s.axhline(0, color="k", lw=1, ls="--")
        ax_s.set(xlabel="position n", ylabel="position m")
        (self.row_line,) = ax_r.plot([], [], color="C0", lw=1.2, ls="-", label="row m of the matrix")
        (self.row_dot,) = ax_r.plot([], [], "o", color="C1", ms=6, label="n = m (always 1)")
        ax_r.axhline(0, color="0.7", lw=0.8)
        ax_r.set(
            ylim=(-1.05, 1.05), xlabel="position n", ylabel=r"$\cos\angle(p_m, p_n)$", yticks=[-1, -0.5, 0, 0.5, 1]
        )
        legend_outside(ax_r, where="below", ncol=2)
        return fig

    def limits(self) -> dict[str, tuple[float, float]]:
        """The position slider ends at the shown table's last row."""
        return {"position": (0, self.tables[self._name()].shape[0] - 1)}

    def redraw(self) -> None:
        name = self._name()
        s = self.similarity[name]
        n = s.shape[0]
        m = int(min(max(int(self.params["position"]), 0), n - 1))
        if getattr(self, "_shown", None) != name:  # the matrix, its limits and its title change with the table only
            self._shown = name
            self.im.set_data(s)
            self.im.set_extent((-0.5, n - 0.5, n - 0.5, -0.5))
            self.ax_s.set_xlim(-0.5, n - 0.5)
            self.ax_s.set_ylim(n - 0.5, -0.5)
            self.ax_s.set_title(f"{name}\nsimilarity matrix, {n} positions")
            self.ax_r.set_xlim(-0.5, n - 0.5)
        self.hline.set_ydata([m, m])
        self.row_line.set_data(np.arange(n), s[m])
        self.row_dot.set_data([m], [1.0])
        self.ax_r.title.set_text(f"row m = {m}: how similar position {m} is to every other")


def table_heatmaps(tables: Mapping[str, Any], *, max_dims: int | None = None) -> Figure:
    """One heatmap per table (position × dimension).

    Each has its own symmetric colour scale (99th percentile of |value|) and colour bar.
    """
    if not tables:
        raise ValueError("tables must name at least one table")
    fig, axes = new_figure(min(9.8, 4.2 * len(tables)), 3.6, ncols=len(tables), pyplot=True, squeeze=False)
    for ax, (name, table) in zip(axes[0], tables.items(), strict=True):
        t = _as_numpy(table, name)
        if max_dims is not None:
            t = t[:, :max_dims]
        lim = float(np.percentile(np.abs(t), 99))  # a few outliers (e.g. BERT's row 0) would wash out the rest
        im = ax.imshow(t.T, aspect="auto", cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
        fig.colorbar(im, ax=ax, shrink=0.85, label="value")
        ax.set(title=name, xlabel="position m", ylabel="dimension")
    return fig


def offset_profiles_figure(tables: Mapping[str, Any], max_offset: int = 128) -> Figure:
    """Mean cosine similarity against distance |m − n| (0 … max_offset) for each table, one line each."""
    if not tables:
        raise ValueError("tables must name at least one table")
    fig, ax = new_figure(9.0, 3.4, pyplot=True)
    for j, (name, table) in enumerate(tables.items()):
        s = cosine_similarity_matrix(_as_numpy(table, name))
        k = min(max_offset, s.shape[0] - 1)
        ax.plot(np.arange(k + 1), offset_profile(s, k), label=name, **series(j, k + 1))
    ax.axhline(0, color="0.7", lw=0.8)
    ax.set(
        title="How similar are two positions k apart? (mean over all pairs)",
        xlabel="distance k = |m − n| (positions)",
        ylabel=r"mean $\cos\angle(p_m, p_{m+k})$",
    )
    legend_outside(ax)
    return fig
