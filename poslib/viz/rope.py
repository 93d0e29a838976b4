"""Figures for notebook 05 (RoPE).

Sliders drive :class:`RotatingPairsPlot` (position, offset), :class:`RopeMatrixPlot`
(position m), :class:`DecayBoundPlot` (base) and :class:`WavelengthPlot`
(base, training length). :func:`naive_cos` reproduces, on purpose, the
low-precision angle bug that poslib avoids.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch
from matplotlib.figure import Figure

from ..rope import rope_decay_bound, rope_frequencies, rope_matrix
from ._live import LivePlot
from .style import legend_outside, new_figure, sparse_colorbar

__all__ = ["DecayBoundPlot", "RopeMatrixPlot", "RotatingPairsPlot", "WavelengthPlot", "naive_cos"]

_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


def naive_cos(positions: np.ndarray, inv_freq: np.ndarray, dtype: str) -> np.ndarray:
    """cos(m·θ_i) computed the way buggy code does: positions, θ and their product all in ``dtype``.

    ``dtype`` is "bfloat16", "float16" or "float32". The product m·θ is rounded
    to ``dtype`` before the cosine, so at long positions the angle is off by
    up to half a unit in its last place: 2⁻⁸·m·θ relative in bfloat16.
    Returns float64 NumPy for plotting next to the exact values.
    """
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
    t = _DTYPES[dtype]
    m = torch.as_tensor(np.asarray(positions, dtype=np.float64)).to(t)
    f = torch.as_tensor(np.asarray(inv_freq, dtype=np.float64)).to(t)
    return torch.cos(m[..., None] * f).double().numpy()


class RotatingPairsPlot(LivePlot):
    """One panel per frequency: a query pair rotated to position m and a key pair rotated to m − offset.

    Both start from the same 2-D vector. As m moves, both arrows turn, but the
    angle between them stays offset·θ_i: the score depends only on the offset.
    The faint trail is the query's tip for every position 0 … m. The offset
    ends at m (and at ``max_offset``): no key sits before position 0, so the
    slider stops there (``limits``) and a larger offset is drawn as m.
    """

    defaults: ClassVar[dict[str, Any]] = {"position": 12, "offset": 3}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"position": 40},
        {"position": 400},
        {"offset": 10},
        {"position": 3000},
        {"position": 12, "offset": 3},
    ]
    head_dim, base = 64, 10000.0
    max_offset = 64  # the notebook's offset slider ends here, or at m when m is smaller
    pairs = (0, 10, 20, 31)
    start = np.array([np.cos(0.4), np.sin(0.4)])  # the unrotated pair, same for query and key

    def _tip(self, angle: np.ndarray) -> np.ndarray:
        c, s = np.cos(angle), np.sin(angle)
        return np.stack([c * self.start[0] - s * self.start[1], s * self.start[0] + c * self.start[1]], -1)

    def build(self) -> Figure:
        self.theta = rope_frequencies(self.head_dim, self.base)[list(self.pairs)]
        fig, axes = new_figure(9.8, 4.3, ncols=len(self.pairs))
        circle = np.linspace(0, 2 * np.pi, 200)
        self.artists = []
        for ax, i, th in zip(axes, self.pairs, self.theta, strict=True):
            ax.plot(np.cos(circle), np.sin(circle), color="0.85", ls="-", lw=1)
            ax.plot([0, self.start[0]], [0, self.start[1]], color="0.6", ls="--", lw=1, label="both at position 0")
            (trail,) = ax.plot([], [], color="C0", ls="-", lw=0.6, alpha=0.35, label="query's path, 0 … m")
            (q,) = ax.plot([], [], color="C0", ls="-", lw=2.5, marker="o", markevery=[1], label="query at m")
            (k,) = ax.plot([], [], color="C1", ls="-", lw=2.5, marker="s", markevery=[1], label="key at m − offset")
            text = ax.text(0, -1.35, "", ha="center", va="top", fontsize=9)
            ax.set(
                xlim=(-1.25, 1.25),
                ylim=(-2.1, 1.25),
                aspect="equal",
                xlabel=f"dim {2 * i}",
                ylabel=f"dim {2 * i + 1}",
                title=f"pair i = {i}: θ = {th:.3g} rad\nwavelength {2 * np.pi / th:,.0f} tokens",
            )
            ax.set_xticks([])  # the unit circle is the scale; tick labels would only cost redraw time
            ax.set_yticks([])
            self.artists.append((trail, q, k, text))
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=4)
        self.fig = fig
        return fig

    def limits(self) -> dict[str, tuple[float, float]]:
        """The offset slider ends at m: the key at m − offset is a position, never below 0."""
        return {"offset": (0, min(self.max_offset, int(self.params["position"])))}

    def redraw(self) -> None:
        m = int(self.params["position"])
        off = int(np.clip(int(self.params["offset"]), 0, m))  # the key at m − offset ≥ 0, as limits() holds the slider
        trail_pos = np.arange(0, m + 1)
        for (trail, q, k, text), th in zip(self.artists, self.theta, strict=True):
            tq, tk = self._tip(np.array(m * th)), self._tip(np.array((m - off) * th))
            trail.set_data(*self._tip(trail_pos * th).T)
            q.set_data([0, tq[0]], [0, tq[1]])
            k.set_data([0, tk[0]], [0, tk[1]])
            between = (off * th + np.pi) % (2 * np.pi) - np.pi
            text.set_text(f"mθ = {m * th:,.2f} rad\n= {m * th / (2 * np.pi):,.2f} turns\nkey→query {between:+.3f} rad")
        # set_text, not fig.suptitle(): a second suptitle() call puts the title back at its default height,
        # undoing the constrained layout's placement, so the first slider move would shift it
        title = rf"RoPE turns pair $i$ by $m\theta_i$: query at m = {m:,}, key at m − {off} = {m - off:,}"
        if getattr(self, "_title", None) is None:
            self._title = self.fig.suptitle(title)
        else:
            self._title.set_text(title)


class RopeMatrixPlot(LivePlot):
    """The block-diagonal R_{Θ,m} (interleaved layout) as a heatmap, with the angle of each block."""

    defaults: ClassVar[dict[str, Any]] = {"position": 1}
    bench_values: ClassVar[list[dict[str, Any]]] = [{"position": m} for m in (0, 3, 10, 100, 1)]
    head_dim, base = 16, 10000.0

    def build(self) -> Figure:
        fig, (ax, ax_a) = new_figure(9.8, 4.4, ncols=2, gridspec_kw={"width_ratios": [1.15, 1]})
        self.im = ax.imshow(
            rope_matrix(0, self.head_dim, self.base), cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest"
        )
        ax.set(xlabel="input dimension", ylabel="output dimension")
        sparse_colorbar(fig, self.im, ax, "matrix entry")
        self.ax = ax
        idx = np.arange(self.head_dim // 2)
        (self.cos_line,) = ax_a.plot(idx, np.ones(len(idx)), "o-", label=r"$\cos(m\theta_i)$")
        (self.sin_line,) = ax_a.plot(idx, np.zeros(len(idx)), "s--", label=r"$\sin(m\theta_i)$")
        ax_a.set(ylim=(-1.1, 1.1), xlabel="pair index i", ylabel="matrix entry", title="the entries of block i")
        legend_outside(ax_a, where="below", ncol=2)
        self.fig = fig
        return fig

    def redraw(self) -> None:
        m = self.params["position"]
        r = rope_matrix(m, self.head_dim, self.base)
        self.im.set_data(r)
        diag = np.diag(r)[::2]
        self.cos_line.set_ydata(diag)
        self.sin_line.set_ydata(np.diag(r, -1)[::2])
        self.ax.set_title(f"$R_{{\\Theta,m}}$ for m = {m}, d = {self.head_dim}:\nd/2 independent 2×2 rotations")


class DecayBoundPlot(LivePlot):
    """RoFormer's relative upper bound (§3.4.3) against distance, next to a score that keeps oscillating.

    The score shown is the one of a query and key made of identical unit pairs,
    (2/d)·Σ_i cos(r·θ_i): the "same token, moved away" experiment.
    """

    defaults: ClassVar[dict[str, Any]] = {"base": 10000.0}
    bench_values: ClassVar[list[dict[str, Any]]] = [{"base": b} for b in (100.0, 1000.0, 500000.0, 10000.0)]
    head_dim, max_distance = 128, 20000

    def build(self) -> Figure:
        self.r = np.unique(np.round(np.geomspace(1, self.max_distance, 900)))
        fig, (ax, ax_s) = new_figure(9.8, 3.9, ncols=2)
        (self.bound_line,) = ax.plot(self.r, self.r * 0, color="C0", ls="-")
        ax.set(
            xscale="log",
            xlabel="relative distance |m − n| (tokens)",
            ylabel=r"$(2/d)\,\sum_j |S_j|$",
            ylim=(0, (self.head_dim / 2 + 1) / 2 * 1.05),
        )
        (self.score_line,) = ax_s.plot(self.r, self.r * 0, color="C1", ls="-", lw=0.8)
        ax_s.axhline(0, color="0.6", lw=0.8)
        ax_s.set(
            xscale="log",
            xlabel="relative distance |m − n| (tokens)",
            ylabel=r"$(2/d)\,\sum_i \cos(r\theta_i)$",
            ylim=(-0.45, 1.05),
            title="an actual score: same pair at distance r",
        )
        self.ax = ax
        self.fig = fig
        return fig

    def redraw(self) -> None:
        b = float(self.params["base"])
        self.bound_line.set_ydata(rope_decay_bound(self.r, self.head_dim, b))
        theta = rope_frequencies(self.head_dim, b)
        self.score_line.set_ydata(np.cos(self.r[:, None] * theta).mean(-1))
        self.ax.set_title(f"RoFormer's relative upper bound\nd = {self.head_dim}, base = {b:,.0f}")


class WavelengthPlot(LivePlot):
    """Wavelength 2π/θ_i of every pair against the training length: which pairs never finish one turn."""

    defaults: ClassVar[dict[str, Any]] = {"base": 10000.0, "train_len": 4096}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"train_len": 2048},
        {"base": 500000.0},
        {"train_len": 8192},
        {"base": 10000.0, "train_len": 4096},
    ]
    head_dim = 128

    def build(self) -> Figure:
        fig, ax = new_figure(8.5, 4.2)
        self.idx = np.arange(self.head_dim // 2)
        train = r"$L_{\mathrm{train}}$"
        (self.full,) = ax.plot([], [], "o", ms=4, color="C0", label=f"completes ≥ 1 turn within {train}")
        (self.partial,) = ax.plot([], [], "s", ms=4, color="C1", label="never completes a turn")
        self.limit = ax.axhline(1, color="0.3", ls="--", lw=1, label=f"training length {train}")
        ax.set(
            yscale="log",
            xlabel="pair index i",
            ylabel=r"wavelength $2\pi/\theta_i$ (tokens)",
            ylim=(3, 1e7),
            xlim=(-1, self.head_dim // 2),
        )
        legend_outside(ax, where="below", ncol=3)
        self.ax = ax
        self.fig = fig
        return fig

    def redraw(self) -> None:
        b, n = float(self.params["base"]), int(self.params["train_len"])
        wl = 2 * np.pi / rope_frequencies(self.head_dim, b)
        slow = wl > n
        self.full.set_data(self.idx[~slow], wl[~slow])
        self.partial.set_data(self.idx[slow], wl[slow])
        self.limit.set_ydata([n, n])
        self.ax.set_title(
            f"base {b:,.0f}, d = {self.head_dim}, $L_{{\\mathrm{{train}}}}$ = {n:,} tokens: "
            f"{int(slow.sum())} of {len(wl)} pairs never complete a turn"
        )
