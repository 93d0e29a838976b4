"""Figures for notebook 03 (sinusoidal positions).

:class:`WavePairPlot` (sliders: pair i, base) shows one (sin, cos) pair of the
table as waves over position, with its wavelength 2π·base^(2i/d) marked.
:class:`DotDecayPlot` (sliders: base, d) plots PE(0)·PE(Δ) against the offset Δ
beside the sources' experiment with random q and k. :func:`dot_decay_curves`
computes what that figure draws; :func:`cross_terms_figure` contrasts
PE(m)·PE(n) with the same term after random projections.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._backend import check_even, check_positive, check_positive_int
from ..sinusoidal import sinusoidal_encode, sinusoidal_frequencies, sinusoidal_table
from ._live import LivePlot
from .style import legend_outside, new_figure

__all__ = ["DotDecayPlot", "WavePairPlot", "cross_terms_figure", "dot_decay_curves"]


class WavePairPlot(LivePlot):
    """Left: the table PE (dimension × position) with pair i outlined. Right: that pair's sin and cos over position.

    The right panel spans 2.5 wavelengths of the chosen pair, so every pair
    shows its period; dashed lines mark one and two wavelengths
    λ_i = 2π·base^(2i/d), and dots mark the integer positions tokens occupy
    (when there are few enough to see).

    Slider speed: near the 150 ms goal. A move of the pair redraws the outline, two two-line titles
    (one in mathtext) and the wave panel with its ticks; the table image is set again only when the base moves.
    """

    defaults: ClassVar[dict[str, Any]] = {"pair": 4, "base": 10000.0}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"pair": 0},
        {"pair": 1},
        {"pair": 8},
        {"pair": 16},
        {"pair": 31},
        {"base": 100.0},
        {"pair": 4, "base": 10000.0},
    ]
    dim, n_positions, n_samples = 64, 128, 600

    def build(self) -> Figure:
        fig, (ax_t, ax_w) = new_figure(9.8, 4.2, ncols=2, gridspec_kw={"width_ratios": [1, 1.35]})
        self.ax_t, self.ax_w = ax_t, ax_w
        self.im = ax_t.imshow(
            np.zeros((self.dim, self.n_positions)),
            aspect="auto",
            cmap="RdBu_r",
            vmin=-1,
            vmax=1,
            interpolation="nearest",
        )
        fig.colorbar(self.im, ax=ax_t, shrink=0.85, label="PE value", ticks=[-1, 0, 1])
        # black on a white halo: visible on the dark and the light ends of the colour map alike. The halo is
        # a second, wider white outline drawn first (what patheffects.withStroke draws): an artist with path
        # effects counts as covering the whole figure for the frame cache, which then redrew everything.
        self.halo = Rectangle((-0.5, -0.5), self.n_positions, 2, fill=False, ec="white", lw=4.5)
        self.box = Rectangle((-0.5, -0.5), self.n_positions, 2, fill=False, ec="k", lw=2)
        ax_t.add_patch(self.halo)
        ax_t.add_patch(self.box)
        ax_t.set(xlabel="position p (tokens)", ylabel="dimension (2i: sin, 2i+1: cos)", title="")
        (self.sin_line,) = ax_w.plot([], [], color="C0", ls="-", lw=1.3, label=r"$\sin(p\,\omega_i)$, dim $2i$")
        (self.cos_line,) = ax_w.plot([], [], color="C1", ls="--", lw=1.3, label=r"$\cos(p\,\omega_i)$, dim $2i+1$")
        (self.sin_dots,) = ax_w.plot([], [], "o", color="C0", ms=3, label="integer positions")
        (self.cos_dots,) = ax_w.plot([], [], "s", color="C1", ms=3)
        self.periods = [ax_w.axvline(0, color="0.4", ls=":", lw=1) for _ in range(2)]
        self.periods[0].set_label(r"one and two wavelengths $\lambda_i$")
        ax_w.set(ylim=(-1.1, 1.1), xlabel="position p (tokens)", ylabel="PE value", yticks=[-1, 0, 1])
        legend_outside(ax_w, where="below", ncol=2)
        return fig

    def redraw(self) -> None:
        i, base = int(self.params["pair"]), float(self.params["base"])
        if not 0 <= i < self.dim // 2:
            raise ValueError(f"pair must be in [0, {self.dim // 2 - 1}], got {i}")
        check_positive("base", base)
        # Set only what changed: set_data, set_y and set_title mark an artist changed even with equal values,
        # and the frame cache redraws every changed artist (the table: a resampled image) on each move.
        if getattr(self, "_table_base", None) != base:  # the table depends on the base alone
            self._table_base = base
            self.im.set_data(sinusoidal_table(self.n_positions, self.dim, base).T)
        if self.box.get_y() != 2 * i - 0.5:
            self.halo.set_y(2 * i - 0.5)
            self.box.set_y(2 * i - 0.5)
        omega = float(sinusoidal_frequencies(self.dim, base)[i])
        wavelength = 2 * np.pi / omega
        title = f"PE table, d = {self.dim}, base = {base:,.0f}\npair i = {i} outlined"
        if self.ax_t.get_title() != title:
            self.ax_t.set_title(title)
        span = 2.5 * wavelength
        p = np.linspace(0, span, self.n_samples)
        pe = sinusoidal_encode(p, self.dim, base)
        self.sin_line.set_data(p, pe[:, 2 * i])
        self.cos_line.set_data(p, pe[:, 2 * i + 1])
        ints = np.arange(0, int(span) + 1) if span <= 150 else np.array([])
        pe_int = sinusoidal_encode(ints, self.dim, base) if len(ints) else np.zeros((0, self.dim))
        self.sin_dots.set_data(ints, pe_int[:, 2 * i])
        self.cos_dots.set_data(ints, pe_int[:, 2 * i + 1])
        for k, line in enumerate(self.periods, start=1):
            line.set_xdata([k * wavelength, k * wavelength])
        self.ax_w.set_xlim(0, span)
        self.ax_w.set_title(
            f"pair i = {i}:  $\\omega_i$ = {omega:.3g} rad/token\n"
            f"wavelength $\\lambda_i = 2\\pi\\cdot\\mathrm{{base}}^{{2i/d}}$ = {wavelength:,.1f} tokens"
        )


def dot_decay_curves(
    base: float, dim: int, max_offset: int, *, n_draws: int = 256, seed: int = 0, max_dim: int = 512
) -> dict[str, np.ndarray]:
    """What :class:`DotDecayPlot` draws, for key positions n = 0 … max_offset (the query at 0, so n is the offset).

    ``pe``: PE(0)·PE(n). ``one_draw``: the sources' experiment, (q + PE(0))·(k + PE(n))
    for one random pair q, k ~ N(0, I). ``mean_draws``: its mean over ``n_draws``
    random pairs, which tends to PE(0)·PE(n) because the cross terms average to 0.
    The random vectors are drawn once at ``max_dim`` and truncated, so changing
    ``dim`` keeps the same draws.
    """
    check_positive("base", base)
    check_even("dim", dim)
    check_positive_int("max_offset", max_offset)
    check_positive_int("n_draws", n_draws)
    if dim > max_dim:
        raise ValueError(f"dim must be ≤ max_dim = {max_dim}, got {dim}")
    pe = sinusoidal_table(max_offset + 1, dim, base)
    q, k = _random_pairs(n_draws, max_dim, seed)
    q0 = q[:, :dim] + pe[0]  # the query sits at position 0
    constant = (q0 * k[:, :dim]).sum(-1)  # (q + PE(0))·k does not depend on the key's position
    # (q + PE(0))·(k + PE(n)) = (q + PE(0))·PE(n) + (q + PE(0))·k; the mean over draws is linear in q,
    # so average q first instead of scoring every draw
    return {
        "offsets": np.arange(max_offset + 1),
        "pe": pe @ pe[0],
        "one_draw": pe @ q0[0] + constant[0],
        "mean_draws": pe @ q0.mean(0) + constant.mean(),
    }


@functools.lru_cache(maxsize=4)
def _random_pairs(n_draws: int, max_dim: int, seed: int) -> np.ndarray:
    """Seeded q, k ~ N(0, I), shape (2, n_draws, max_dim); cached so slider moves do not redraw them."""
    out = np.random.default_rng(seed).standard_normal((2, n_draws, max_dim))
    out.flags.writeable = False
    return out


class DotDecayPlot(LivePlot):
    """Left: PE(m)·PE(m+Δ) against the offset Δ.

    Right: the sources' experiment, the query at 0 and the key at n: one random draw, and the mean of 256.

    Slider speed: above the 150 ms goal. The sliders move both panels' limits, so their ticks,
    titles and the legend are drawn again on each move.
    """

    defaults: ClassVar[dict[str, Any]] = {"base": 10000.0, "dim": 128}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"base": 1000.0},
        {"base": 100.0},
        {"dim": 64},
        {"dim": 512},
        {"base": 100000.0},
        {"base": 10000.0, "dim": 128},
    ]
    max_offset = 1000

    def build(self) -> Figure:
        fig, (ax_pe, ax_qk) = new_figure(9.8, 4.4, ncols=2)
        self.ax_pe, self.ax_qk = ax_pe, ax_qk
        (self.pe_line,) = ax_pe.plot([], [], color="C2", ls="--", lw=1)
        ax_pe.set(xlabel="offset Δ = n − m (positions)", ylabel="PE(m)·PE(m+Δ)", xlim=(0, self.max_offset))
        (self.one_line,) = ax_qk.plot([], [], color="0.6", ls="-", lw=0.8, label="one random pair q, k")
        (self.mean_line,) = ax_qk.plot([], [], color="C0", ls="-", lw=1.2, label="mean of 256 random pairs")
        (self.pe_ref,) = ax_qk.plot([], [], color="C2", lw=1, ls="--", label="PE(0)·PE(n): the limit of the mean")
        ax_qk.set(
            xlabel="key position n (the query stays at 0)",
            ylabel="(q + PE(0))·(k + PE(n))",
            xlim=(0, self.max_offset),
            title="the sources' experiment:\nquery at 0, key moving away",
        )
        legend_outside(ax_qk, where="below")
        return fig

    def redraw(self) -> None:
        base, dim = float(self.params["base"]), int(self.params["dim"])
        c = dot_decay_curves(base, dim, self.max_offset)
        offsets = c["offsets"]
        self.pe_line.set_data(offsets, c["pe"])
        self.ax_pe.set_ylim(c["pe"].min() - 0.05 * dim, dim / 2 * 1.05)
        self.ax_pe.set_title(f"PE(m)·PE(m+Δ) = $\\sum_i \\cos(\\Delta\\,\\omega_i)$\nd = {dim}, base = {base:,.0f}")
        self.one_line.set_data(offsets, c["one_draw"])
        self.mean_line.set_data(offsets, c["mean_draws"])
        self.pe_ref.set_data(offsets, c["pe"])
        lo = min(c["one_draw"].min(), c["pe"].min())
        hi = max(c["one_draw"].max(), c["pe"].max())
        pad = 0.05 * (hi - lo)
        self.ax_qk.set_ylim(lo - pad, hi + pad)


def cross_terms_figure(dim: int = 64, n: int = 64, *, seed: int = 0) -> tuple[Figure, dict[str, np.ndarray]]:
    """Heatmaps of PE(m)·PE(n) and of PE(m)ᵀ W_qᵀ W_k PE(n) for random W_q, W_k ~ N(0, 1/d).

    Returns (figure, matrices).
    """
    check_even("dim", dim)
    check_positive_int("n", n)
    pe = sinusoidal_table(n, dim)
    rng = np.random.default_rng(seed)
    w_q, w_k = rng.standard_normal((2, dim, dim)) / np.sqrt(dim)
    mats = {"plain": pe @ pe.T, "projected": (pe @ w_q) @ (pe @ w_k).T}
    fig, axes = new_figure(9.8, 4.2, ncols=2, pyplot=True)
    titles = {
        "plain": "PE(m)·PE(n): constant along diagonals",
        "projected": r"$(W_q\,\mathrm{PE}(m))\cdot(W_k\,\mathrm{PE}(n))$, random $W$",
    }
    for ax, (name, mat) in zip(axes, mats.items(), strict=True):
        lim = float(np.abs(mat).max())
        im = ax.imshow(mat, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
        fig.colorbar(im, ax=ax, shrink=0.85, label="score")
        ax.set(title=titles[name], xlabel="key position n", ylabel="query position m")
    return fig, mats
