"""Figures for notebook 09 (RoPE in production models).

Sliders drive :class:`PartialRotaryPlot` (rotated fraction), :class:`BaseBoundPlot`
(context length) and :class:`MropeGridPlot` (the query patch on an image grid).
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

import numpy as np
from matplotlib.figure import Figure

from ..mrope import apply_mrope, mrope_axis_of_pair
from ..rope import rope_frequencies
from ..rope_configs import rope_base_lower_bound
from ._live import LivePlot
from .style import legend_outside, new_figure, series, sparse_colorbar

__all__ = ["REAL_BASES", "BaseBoundPlot", "MropeGridPlot", "PartialRotaryPlot", "base_bound_table", "p_rope_freq"]

# (model, head_dim, rope_theta, pre-training context): each value with its source in notebook 09.
REAL_BASES = [
    ("GPT-NeoX-20B", 96, 1e4, 2048),
    ("Llama 2", 128, 1e4, 4096),
    ("DeepSeek-V3 (before YaRN)", 64, 1e4, 4096),
    ("Llama 3.1 (before scaling)", 128, 5e5, 8192),
    ("Qwen2.5-7B", 128, 1e6, 32768),
]
CONTEXTS = [2**k for k in range(10, 16)]


def p_rope_freq(head_dim: int, fraction: float, base: float = 10000.0) -> np.ndarray:
    """p-RoPE's frequencies (Barbero et al. 2024, arXiv:2410.06205): keep the top ``fraction`` of θ_i, zero the rest.

    A pair with θ = 0 is never rotated: cos 0 = 1, sin 0 = 0, the identity.
    """
    theta = rope_frequencies(head_dim, base)
    keep = round(fraction * head_dim / 2)
    return np.where(np.arange(head_dim // 2) < keep, theta, 0.0)


def _similar_key_score(inv_freq: np.ndarray, n_pass_pairs: int, distances: np.ndarray) -> np.ndarray:
    # Expected score of a key identical to the query at distance Δ, per feature: E[qᵀ R_Δ q] / d
    # = (Σ_i cos(Δ θ_i) + n_pass) / (n_rot + n_pass) for unit-variance features (two features per pair).
    rotated = np.cos(distances[:, None] * inv_freq).sum(axis=1)
    return (rotated + n_pass_pairs) / (len(inv_freq) + n_pass_pairs)


class PartialRotaryPlot(LivePlot):
    """Which pairs rotate (wavelength per pair) and the score of a similar key against distance.

    Three ways to rotate a fraction p of a 64-dim head: partial rotary (GPT-J,
    GPT-NeoX, Phi: the first p·d features, frequencies over p·d), p-RoPE (the
    highest-frequency p·d/2 pairs of the full spectrum), and full RoPE.
    """

    defaults: ClassVar[dict[str, Any]] = {"fraction": 0.25}
    bench_values: ClassVar[list[dict[str, Any]]] = [{"fraction": 0.5}, {"fraction": 0.75}, {"fraction": 0.25}]
    head_dim, base = 64, 10000.0
    distances = np.arange(0, 4097)

    def _curves(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        d, p = self.head_dim, self.params["fraction"]
        rd = max(2, round(p * d / 2) * 2)
        full = rope_frequencies(d, self.base)
        partial = rope_frequencies(rd, self.base)
        prope = p_rope_freq(d, p, self.base)
        lengths = {
            "full RoPE": (2 * np.pi / full, _similar_key_score(full, 0, self.distances)),
            f"partial rotary (first {rd} of {d} features)": (
                np.concatenate([2 * np.pi / partial, np.full(d // 2 - rd // 2, np.nan)]),
                _similar_key_score(partial, d // 2 - rd // 2, self.distances),
            ),
            "p-RoPE (highest frequencies kept)": (
                np.where(prope > 0, 2 * np.pi / np.where(prope > 0, prope, 1), np.nan),
                _similar_key_score(prope[prope > 0], int((prope == 0).sum()), self.distances),
            ),
        }
        return lengths

    def build(self) -> Figure:
        fig, (ax1, ax2) = new_figure(9.8, 4.6, ncols=2)
        self.lines1, self.lines2 = [], []
        for i, (label, (wl, score)) in enumerate(self._curves().items()):
            (a,) = ax1.semilogy(wl, ms=3, lw=1, label=label, **series(i))
            (b,) = ax2.plot(self.distances, score, lw=1.2, label=label, **series(i, len(self.distances)))
            self.lines1.append(a)
            self.lines2.append(b)
        ax1.set(
            title="rotated pairs\n(missing points: passed through)",
            xlabel="pair index i",
            ylabel=r"wavelength $2\pi/\theta_i$ (tokens)",
        )
        ax2.set(
            title="a key identical to the query",
            xlabel="distance Δ (tokens)",
            ylabel="expected score per feature",
            ylim=(-0.25, 1.05),
        )
        ax2.axhline(0, color="0.7", lw=0.8)
        self.legend = fig.legend(*ax1.get_legend_handles_labels(), loc="outside lower center", ncol=3)
        return fig

    def redraw(self) -> None:
        curves = self._curves()
        for a, b, text, (label, (wl, score)) in zip(
            self.lines1, self.lines2, self.legend.get_texts(), curves.items(), strict=True
        ):
            a.set_ydata(wl)
            b.set_ydata(score)
            text.set_text(label)
        floor = [score[-1000:].mean() for _, score in curves.values()]
        self.lines2[0].axes.set_title(
            f"a key identical to the query (p = {self.params['fraction']:.3g})\n"
            "mean over Δ ∈ [3097, 4096]: " + ", ".join(f"{f:.2f}" for f in floor)
        )


@cache
def base_bound_table(head_dim: int = 128) -> tuple[tuple[int, float], ...]:
    """``(context_len, rope_base_lower_bound(context_len, head_dim))`` for 1k … 32k tokens (cached)."""
    return tuple((n, rope_base_lower_bound(n, head_dim, low=1e3, high=1e8, iterations=12)) for n in CONTEXTS)


class BaseBoundPlot(LivePlot):
    """B(m) = Σ cos(m θ_i) up to a context length, and the smallest base that keeps it ≥ 0, against real bases."""

    defaults: ClassVar[dict[str, Any]] = {"context_len": 4096}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"context_len": 16384},
        {"context_len": 1024},
        {"context_len": 4096},
    ]
    head_dim = 128

    def build(self) -> Figure:
        fig, (ax1, ax2) = new_figure(9.8, 4.0, ncols=2, gridspec_kw={"width_ratios": [1, 1.35]})
        table = dict(base_bound_table(self.head_dim))
        (self.b_bound,) = ax1.plot([], [], color="C0", ls="-", lw=1, label="base = lower bound")
        (self.b_1e4,) = ax1.plot([], [], color="C1", ls="-", lw=1, alpha=0.8, label="base = 10⁴")
        ax1.axhline(0, color="0.5", lw=0.8)
        ax1.set(xlabel="distance m (tokens)", ylabel="B(m)")
        legend_outside(ax1, where="below", ncol=2)
        ns = np.array(list(table))
        ax2.loglog(ns, list(table.values()), "o-", color="C0", label="lower bound (d = 128)")
        for i, (name, _d, base, ctx) in enumerate(REAL_BASES):
            ax2.loglog([ctx], [base], label=name, ms=6, **{**series(i + 1), "linestyle": "none"})
        (self.marker,) = ax2.loglog([], [], "o", ms=12, mfc="none", mec="k")
        ax2.set(
            title="smallest base against context length",
            xlabel="context length L (tokens)",
            ylabel="RoPE base",
            xlim=(600, 60000),
        )
        legend_outside(ax2)
        return fig

    def redraw(self) -> None:
        n = int(self.params["context_len"])
        table = dict(base_bound_table(self.head_dim))
        if n not in table:
            raise ValueError(f"context_len must be one of {sorted(table)}, got {n}")
        bound = table[n]
        m = np.arange(n, dtype=np.float64)
        exps = np.arange(0, self.head_dim, 2) / self.head_dim
        for line, base in [(self.b_bound, bound), (self.b_1e4, 1e4)]:
            line.set_data(m, np.cos(m[:, None] * base**-exps).sum(axis=1))
        ax = self.b_bound.axes
        ax.set_xlim(0, n)
        ax.set_ylim(-12, 66)
        self.marker.set_data([n], [bound])
        ax.set_title(f"$B(m) = \\sum_i \\cos(m\\theta_i)$, d = {self.head_dim}\nL = {n:,}: lower bound {bound:,.0f}")


class MropeGridPlot(LivePlot):
    """M-RoPE on an image grid: which pairs follow t, h, w, and the position-only score of one patch with all others."""

    defaults: ClassVar[dict[str, Any]] = {"row": 5, "col": 8}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"row": 0},
        {"col": 0},
        {"row": 11, "col": 15},
        {"row": 5, "col": 8},
    ]
    head_dim, base, section, grid = 128, 1e6, (16, 24, 24), (12, 16)

    def _scores(self) -> np.ndarray:
        h, w = self.grid
        rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        pos = np.stack([np.zeros(h * w), rows.ravel(), cols.ravel()])  # one image: t = 0 for every patch
        v = np.ones((1, self.head_dim)) / np.sqrt(self.head_dim)  # the same unit vector as query and key
        keys = apply_mrope(np.repeat(v, h * w, axis=0), pos, self.inv_freq, self.section)
        q_pos = np.array([[0.0], [self.params["row"]], [self.params["col"]]])
        query = apply_mrope(v, q_pos, self.inv_freq, self.section)
        return (keys @ query[0]).reshape(h, w)

    def build(self) -> Figure:
        self.inv_freq = rope_frequencies(self.head_dim, self.base)
        fig, (ax1, ax2) = new_figure(9.8, 4.2, ncols=2, width_ratios=[1, 1.1])
        axis = mrope_axis_of_pair(self.section)
        wl = 2 * np.pi / self.inv_freq
        for k, name in enumerate(["t (time)", "h (row)", "w (column)"]):
            sel = axis == k
            style = {**series(k), "linestyle": "none"}
            ax1.semilogy(np.flatnonzero(sel), wl[sel], ms=3, label=f"{name}: {sel.sum()} pairs", **style)
        ax1.axhline(16, color="0.6", ls=":", lw=1, label="grid width, 16 patches")
        ax1.set(
            title="M-RoPE sections [16, 24, 24] (Qwen2-VL)",
            xlabel="pair index j",
            ylabel=r"wavelength $2\pi/\theta_j$ (tokens)",
        )
        legend_outside(ax1, where="below", ncol=2)
        self.image = ax2.imshow(self._scores(), cmap="viridis", origin="upper")
        (self.dot,) = ax2.plot([], [], "r+", ms=12, mew=2)
        ax2.set(title="", xlabel="patch column w", ylabel="patch row h")
        sparse_colorbar(fig, self.image, ax2, "score qᵀk (same content, |q| = |k| = 1)")
        return fig

    def redraw(self) -> None:
        r, c = int(self.params["row"]), int(self.params["col"])
        scores = self._scores()
        self.image.set_data(scores)
        self.image.set_clim(scores.min(), 1.0)  # the range is narrow: the row and column pairs turn slowly
        self.dot.set_data([c], [r])
        self.image.axes.set_title(f"query patch (h, w) = ({r}, {c}):\nscore with every key patch")
