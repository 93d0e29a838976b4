"""Figures for notebook 04 (relative position encodings): the four-term expansion, T5 buckets, DeBERTa.

Sliders drive :class:`T5BucketPlot` (num_buckets, max_distance, bidirectional)
and :class:`DebertaPlot` (the clipping distance k). :func:`heatmap_row` draws
a row of labelled heatmaps with colour bars for the static figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from matplotlib.figure import Figure

from ..deberta import deberta_delta, deberta_relative_position, deberta_score_terms
from ..sinusoidal import sinusoidal_encode
from ..t5 import t5_relative_bucket, t5_relative_positions
from ._live import LivePlot
from .style import MAX_WIDTH, following_colorbar, new_figure

__all__ = ["DebertaPlot", "T5BucketPlot", "deberta_demo_inputs", "heatmap_row"]


def heatmap_row(
    mats: Sequence[np.ndarray],
    titles: Sequence[str],
    *,
    xlabel: str = "key position n",
    ylabel: str = "query position m",
    suptitle: str | None = None,
    cmap: str = "RdBu_r",
    symmetric: bool = True,
    cbar_label: str = "value",
    width: float = 3.4,
    shared_scale: bool = True,
) -> Figure:
    """One figure, one heatmap per matrix.

    With ``shared_scale`` (the default) every panel uses one colour scale and one colour
    bar, so equal colours mean equal values across panels; otherwise each panel gets its
    own scale and colour bar. Scales are symmetric around 0 when ``symmetric``.
    """
    if len(mats) != len(titles) or not mats:
        raise ValueError(f"mats and titles must be non-empty and of equal length, got {len(mats)} and {len(titles)}")
    arrays = [np.asarray(m, dtype=float) for m in mats]
    panel = min(width, (MAX_WIDTH - 0.8) / len(arrays))
    fig, axes = new_figure(panel * len(arrays) + 0.8, max(2.6, panel * 0.95 + 0.6), ncols=len(arrays), pyplot=True)
    axes = np.atleast_1d(axes)

    def limits(ms: Sequence[np.ndarray]) -> dict[str, float]:
        if not symmetric:
            return {"vmin": min(float(m.min()) for m in ms), "vmax": max(float(m.max()) for m in ms)}
        lim = max(float(np.abs(m).max()) for m in ms) or 1.0
        return {"vmin": -lim, "vmax": lim}

    shared = limits(arrays)
    for ax, m, title in zip(axes, arrays, titles, strict=True):
        im = ax.imshow(m, cmap=cmap, **(shared if shared_scale else limits([m])))
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        if not shared_scale:
            fig.colorbar(im, ax=ax, shrink=0.8, label=cbar_label)
    if shared_scale:
        fig.colorbar(im, ax=list(axes), shrink=0.8, label=f"{cbar_label}\n(one scale, all panels)")
    if suptitle:
        fig.suptitle(suptitle)
    return fig


class T5BucketPlot(LivePlot):
    """T5's bucket index against relative position (left) and as a (query, key) matrix (right).

    ``num_buckets`` and ``max_distance`` as in :func:`poslib.t5_relative_bucket`;
    ``bidirectional`` switches between encoder (both directions) and decoder buckets.

    Slider speed: the colour scale follows the number of buckets; its colour bar
    (:func:`~poslib.viz.style.following_colorbar`) relabels its ticks instead of being rebuilt, so every
    control blits.
    """

    defaults: ClassVar[dict[str, Any]] = {"num_buckets": 32, "max_distance": 128, "bidirectional": True}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"num_buckets": 16},
        {"max_distance": 64},
        {"bidirectional": False},
        {"num_buckets": 64, "max_distance": 256},
        {"num_buckets": 32, "max_distance": 128, "bidirectional": True},
    ]
    span = 300  # relative positions −span … span on the left panel
    n_tokens = 160  # tokens on each side of the matrix

    def _buckets(self) -> tuple[np.ndarray, np.ndarray]:
        p = self.params
        kw: dict[str, Any] = {
            "bidirectional": bool(p["bidirectional"]),
            "num_buckets": int(p["num_buckets"]),
            "max_distance": int(p["max_distance"]),
        }
        return t5_relative_bucket(self.rel, **kw), t5_relative_bucket(self.rel_matrix, **kw)

    def build(self) -> Figure:
        self.rel = np.arange(-self.span, self.span + 1)
        self.rel_matrix = t5_relative_positions(self.n_tokens)
        fig, (ax, ax_m) = new_figure(9.8, 4.2, ncols=2, gridspec_kw={"width_ratios": [1.5, 1]})
        curve, matrix = self._buckets()
        (self.line,) = ax.step(self.rel, curve, where="mid", color="C0", ls="-", lw=1.5)
        self.marks = [
            ax.axvline(0, color=c, ls=ls, lw=1.2) for c, ls in [("C2", "--"), ("C2", "--"), ("C1", ":"), ("C1", ":")]
        ]
        self.top = ax.axhline(0, color="gray", lw=0.8)
        ax.set(xlabel="relative position r = n − m (key − query)", ylabel="bucket index", xlim=(-self.span, self.span))
        self.ax = ax
        self.im = ax_m.imshow(matrix, cmap="viridis", interpolation="nearest")
        ax_m.set(title="bucket of each (query, key) pair", xlabel="key position n", ylabel="query position m")
        following_colorbar(fig, self.im, ax_m, "bucket index")  # follows num_buckets without a rebuilt colour bar
        return fig

    def _decorate(self, curve: np.ndarray, matrix: np.ndarray) -> None:
        # Only what a control changed is set again: any set_ylim, set_title or set_xdata marks its artist
        # as changed even with the same value, and the frame cache then redraws it (and what it overlaps).
        p = self.params
        nb, md, bidi = int(p["num_buckets"]), int(p["max_distance"]), bool(p["bidirectional"])
        max_exact = (nb // 2 if bidi else nb) // 2
        for line, x in zip(self.marks, [-max_exact, max_exact, -md, md], strict=True):
            if list(line.get_xdata()) != [x, x]:
                line.set_xdata([x, x])
        if list(self.top.get_ydata()) != [nb - 1, nb - 1]:
            self.top.set_ydata([nb - 1, nb - 1])
        if self.ax.get_ylim() != (-1, nb + 1):
            self.ax.set_ylim(-1, nb + 1)
        kind = "bidirectional" if bidi else "causal"
        # One title instead of a legend box: every text artist is redrawn on each slider move.
        title = (
            f"{nb} buckets, max_distance {md} tokens, {kind}\n"
            f"exact up to |r| = {max_exact - 1} (green dashes), log-spaced to {md} (red dots)"
        )
        if self.ax.get_title() != title:
            self.ax.set_title(title)
        if not np.array_equal(self.im.get_array(), matrix):
            self.im.set_data(matrix)
        self.im.set_clim(0, nb - 1)  # a new value only when num_buckets moved

    def redraw(self) -> None:
        curve, matrix = self._buckets()
        if not np.array_equal(self.line.get_ydata(), curve):
            self.line.set_ydata(curve)
        self._decorate(curve, matrix)


def deberta_demo_inputs(n_tokens: int = 40, dim: int = 16, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded content vectors and projections for the DeBERTa figures.

    Returns ``q_c``, ``k_c`` (n_tokens, dim) and ``w_q_r``, ``w_k_r`` (dim, dim).
    The relative table itself is built per κ by :meth:`DebertaPlot.relative_table`.
    """
    rng = np.random.default_rng(seed)
    q_c, k_c = rng.standard_normal((2, n_tokens, dim))
    w_q_r, w_k_r = rng.standard_normal((2, dim, dim)) / np.sqrt(dim)
    return {"q_c": q_c, "k_c": k_c, "w_q_r": w_q_r, "w_k_r": w_k_r}


class DebertaPlot(LivePlot):
    """DeBERTa's table row δ(m, n), content→position and position→content terms, for a clipping distance κ.

    The relative embeddings P (2κ × d) would be learned; here row δ holds the
    sinusoid of the distance δ − κ, a smooth stand-in that makes the clipping
    visible: beyond |m − n| ≥ κ every pair reuses the first or last row.

    Slider speed: κ changes every colour scale; the colour bars (:func:`~poslib.viz.style.following_colorbar`)
    relabel their ticks instead of being rebuilt, so a move blits the three images, the title and those ticks.
    """

    defaults: ClassVar[dict[str, Any]] = {"att_span": 8}
    bench_values: ClassVar[list[dict[str, Any]]] = [{"att_span": k} for k in (2, 4, 16, 32, 8)]
    n_tokens, dim = 40, 16

    @staticmethod
    def relative_table(att_span: int, dim: int) -> np.ndarray:
        """Stand-in relative embeddings P, row δ = sinusoid of distance δ − κ, shape (2κ, dim)."""
        return sinusoidal_encode(np.arange(-att_span, att_span), dim)

    def terms(self) -> dict[str, np.ndarray]:
        """The unscaled c2p and p2c terms and the δ(m, n) matrix for the current κ."""
        k = int(self.params["att_span"])
        p = self.relative_table(k, self.dim)
        d = self.inputs
        terms = deberta_score_terms(d["q_c"], d["k_c"], p @ d["w_q_r"], p @ d["w_k_r"])
        delta = deberta_delta(deberta_relative_position(self.n_tokens), k)
        return {"delta": delta, "c2p": terms["content-position"], "p2c": terms["position-content"]}

    def build(self) -> Figure:
        self.inputs = deberta_demo_inputs(self.n_tokens, self.dim)
        t = self.terms()
        fig, axes = new_figure(9.8, 3.9, ncols=3)
        self.ims = {}
        spec = [
            ("delta", r"row $\delta(m, n)$ of $P$ used", "viridis"),
            ("c2p", "content→position\n" r"$q^c_m \cdot k^r_{\delta(m,n)}$", "RdBu_r"),
            ("p2c", "position→content\n" r"$k^c_n \cdot q^r_{\delta(n,m)}$", "RdBu_r"),
        ]
        for ax, (key, title, cmap) in zip(axes, spec, strict=True):
            self.ims[key] = ax.imshow(t[key], cmap=cmap, interpolation="nearest")
            ax.set(title=title, xlabel="key position n", ylabel="query position m")
            ax.locator_params(nbins=4)
        for ax in axes[1:]:
            ax.tick_params(labelleft=False)  # same rows as the first panel: one set of tick labels is enough
        # κ moves every colour scale: these colour bars relabel their ticks instead of being rebuilt (a full draw)
        following_colorbar(fig, self.ims["delta"], axes[0], r"row index $\delta$", shrink=0.8)
        following_colorbar(fig, self.ims["p2c"], list(axes[1:]), "score (both terms)", shrink=0.8)
        self.fig = fig
        return fig

    def _set(self, t: dict[str, np.ndarray]) -> None:
        k = int(self.params["att_span"])
        self.ims["delta"].set_data(t["delta"])
        self.ims["delta"].set_clim(0, 2 * k - 1)
        lim = max(float(np.abs(t["c2p"]).max()), float(np.abs(t["p2c"]).max()))
        for key in ("c2p", "p2c"):
            self.ims[key].set_data(t[key])
            self.ims[key].set_clim(-lim, lim)
        title = f"DeBERTa, clipping distance κ = {k}: pairs with |m − n| ≥ {k} share the end rows"
        if getattr(self, "_title", None) is None:  # set_text after the first: see RotatingPairsPlot.redraw
            self._title = self.fig.suptitle(title)
        else:
            self._title.set_text(title)

    def redraw(self) -> None:
        self._set(self.terms())
