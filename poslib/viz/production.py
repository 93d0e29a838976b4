"""Figures for notebook 09 (RoPE in production models).

Sliders drive :class:`PartialRotaryPlot` (rotated fraction), :class:`BaseBoundPlot`
(the RoPE base) and :class:`MropeGridPlot` (the query patch on an image grid).
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

import numpy as np
from matplotlib.figure import Figure

from ..mrope import apply_mrope, mrope_axis_of_pair
from ..rope import rope_frequencies
from ..rope_configs import rope_base_lower_bound, rope_base_safe_bound, rope_from_config
from ..rope_scaling import rope_inv_freq
from ._live import LivePlot
from .style import following_colorbar, legend_outside, new_figure, series

__all__ = [
    "MROPE_LAYOUTS",
    "REAL_BASES",
    "BaseBoundPlot",
    "MropeGridPlot",
    "PartialRotaryPlot",
    "base_bounds",
    "base_scan",
    "longrope_divisors_figure",
    "min_similarity_sum",
    "p_rope_freq",
    "sink_mass_figure",
]

# (model, rotated features d_r, rope_theta, pre-training context, unrotated pairs): each value with its
# source in notebook 09. The bound is judged on the rotated part only; every unrotated pair would add
# cos 0 = 1 to B(Δ) at every Δ (GPT-NeoX-20B rotates 24 of its 96 features, rotary_pct 0.25; DeepSeek-V3's
# heads have a 64-feature RoPE part beside a 128-feature no-RoPE part, qk_nope_head_dim).
REAL_BASES = [
    ("GPT-NeoX-20B", 24, 1e4, 2048, 36),
    ("Llama 2", 128, 1e4, 4096, 0),
    ("DeepSeek-V3 (before YaRN)", 64, 1e4, 4096, 64),
    ("Llama 3.1 (before scaling)", 128, 5e5, 8192, 0),
    ("Qwen2.5-7B", 128, 1e6, 32768, 0),
]


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

    Slider speed: near the 150 ms goal. Each move redraws the curves, a two-line title and the
    legend that sits over them.
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


def min_similarity_sum(context_len: int, head_dim: int, bases: np.ndarray) -> np.ndarray:
    """min over 0 ≤ Δ < context_len of Σ_i cos(Δ·b^(−2i/d)), for each base b (float64, one row of Δ at a time)."""
    delta = np.arange(context_len, dtype=np.float64)[:, None]
    exps = np.arange(0, head_dim, 2) / head_dim
    return np.array([np.cos(delta * float(b) ** -exps).sum(axis=1).min() for b in np.asarray(bases, dtype=float)])


@cache
def base_bounds(context_len: int, head_dim: int) -> tuple[float, float]:
    """``(rope_base_lower_bound, rope_base_safe_bound)`` at one size (cached: the safe bound takes a second)."""
    return rope_base_lower_bound(context_len, head_dim), rope_base_safe_bound(context_len, head_dim)


@cache
def base_scan(context_len: int = 512, head_dim: int = 128, points: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """``(bases, min_Δ Σ cos)`` on a geometric grid from 0.8× the lower bound to 1.25× the safe bound (cached)."""
    lower, safe = base_bounds(context_len, head_dim)
    bases = np.geomspace(0.8 * lower, 1.25 * safe, points)
    return bases, min_similarity_sum(context_len, head_dim, bases)


class BaseBoundPlot(LivePlot):
    """Slide the RoPE base: the similarity sum over distance (left) and its minimum against the base (right).

    The right panel shows that the bases keeping the minimum ≥ 0 are not an interval: between the
    smallest passing base (Men et al.'s bound) and the base above which every base passes, some fail.
    """

    defaults: ClassVar[dict[str, Any]] = {"base": 2500.0}
    bench_values: ClassVar[list[dict[str, Any]]] = [{"base": 2100.0}, {"base": 3500.0}, {"base": 2500.0}]
    context_len, head_dim = 512, 128
    frame_step = 5.0  # notebook 09's slider step: the book's frames take bases on this grid

    def frame_values(self) -> dict[str, list[Any]]:
        """Bases on both sides of each change between passing and failing (multiples of ``frame_step``).

        Between the smallest passing base and the safe one the verdict flips several times within a few
        units; evenly spread frames would step over those narrow failing bands.
        """
        lower, safe = base_bounds(self.context_len, self.head_dim)
        grid = np.arange(np.floor(0.8 * lower / self.frame_step), np.ceil(1.25 * safe / self.frame_step) + 1)
        bases = grid * self.frame_step
        passing = min_similarity_sum(self.context_len, self.head_dim, bases) >= 0
        flips = np.nonzero(passing[1:] != passing[:-1])[0]
        return {"base": sorted({float(bases[i]) for i in flips} | {float(bases[i + 1]) for i in flips})}

    def build(self) -> Figure:
        fig, (ax1, ax2) = new_figure(9.8, 4.2, ncols=2, gridspec_kw={"width_ratios": [1, 1.35]})
        bases, mins = base_scan(self.context_len, self.head_dim)
        self.lower, self.safe = base_bounds(self.context_len, self.head_dim)
        (self.curve,) = ax1.plot([], [], color="C0", ls="-", lw=1, label="similarity sum")
        (self.worst,) = ax1.plot([], [], "o", color="C3", ms=6, label="its minimum")
        ax1.axhline(0, color="0.5", lw=0.8)
        ax1.set(xlabel="distance Δ (tokens)", ylabel=r"$\mathcal{B}(\Delta)$", xlim=(0, self.context_len))
        legend_outside(ax1, where="below", ncol=2)
        ax2.semilogx(bases, mins, color="C0", ls="-", lw=0.8, label=r"$\min_\Delta \mathcal{B}(\Delta)$")
        passing = np.where(mins >= 0, mins, np.nan)
        ax2.semilogx(bases, passing, color="C2", ls="-", lw=2.2, label="passing bases (min ≥ 0)")
        ax2.axhline(0, color="0.5", lw=0.8)
        ax2.axvline(self.lower, color="C1", ls="--", lw=1, label=f"smallest passing base {self.lower:,.0f}")
        ax2.axvline(self.safe, color="C4", ls=":", lw=1.4, label=f"every base above {self.safe:,.0f} passes")
        (self.marker,) = ax2.semilogx([], [], "o", ms=9, mfc="none", mec="k", label="the slider's base")
        ax2.set(
            title=f"minimum over Δ < {self.context_len:,} against the base (d = {self.head_dim})",
            xlabel="RoPE base b",
            ylabel="minimum similarity sum",
            ylim=(-4, 6),
        )
        legend_outside(ax2)
        return fig

    def redraw(self) -> None:
        base = float(self.params["base"])
        if not base > 1:
            raise ValueError(f"base must be > 1, got {base!r}")
        delta = np.arange(self.context_len, dtype=np.float64)
        sums = np.cos(delta[:, None] * base ** -(np.arange(0, self.head_dim, 2) / self.head_dim)).sum(axis=1)
        self.curve.set_data(delta, sums)
        worst = int(np.argmin(sums))
        self.worst.set_data([delta[worst]], [sums[worst]])
        ax = self.curve.axes
        ax.set_ylim(-12, self.head_dim / 2 + 2)
        verdict = "passes" if sums[worst] >= 0 else "fails"
        ax.set_title(
            f"$\\mathcal{{B}}(\\Delta) = \\sum_i \\cos(\\Delta\\theta_i)$ at b = {base:,.0f}\n"
            f"min {sums[worst]:+.3f} at Δ = {worst}: {verdict}"
        )
        self.marker.set_data([base], [sums[worst]])


# The two published arrangements of M-RoPE's pairs: (mrope_section, rope_theta, interleaved), each from the
# model's config.json as cited in notebook 09.
MROPE_LAYOUTS: dict[str, tuple[tuple[int, int, int], float, bool]] = {
    "sections (Qwen2-VL)": ((16, 24, 24), 1e6, False),
    "interleaved (Qwen3-VL)": ((24, 20, 20), 5e6, True),
}


class MropeGridPlot(LivePlot):
    """M-RoPE on an image grid: the pairs of each axis (time, row, column) and one patch's position-only scores.

    ``layout`` picks Qwen2-VL's three consecutive sections or Qwen3-VL's interleaved deal (:data:`MROPE_LAYOUTS`).

    Slider speed: the colour scale follows the scores; its colour bar (:func:`~poslib.viz.style.following_colorbar`)
    relabels its ticks instead of being rebuilt, so a move of the query patch redraws the image, the cross,
    the title and the colour bar's ticks, not the whole figure.
    """

    defaults: ClassVar[dict[str, Any]] = {"row": 5, "col": 8, "layout": "sections (Qwen2-VL)"}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"row": 0},
        {"col": 0},
        {"row": 11, "col": 15},
        {"layout": "interleaved (Qwen3-VL)"},
        {"row": 5, "col": 8, "layout": "sections (Qwen2-VL)"},
    ]
    head_dim, grid = 128, (12, 16)

    @property
    def arrangement(self) -> tuple[tuple[int, int, int], np.ndarray, bool]:
        """(mrope_section, inv_freq, interleaved) of the chosen layout."""
        section, base, interleaved = MROPE_LAYOUTS[self.params["layout"]]
        return section, rope_frequencies(self.head_dim, base), interleaved

    def scores(self) -> np.ndarray:
        """The position-only score of the query patch with every key patch, a (12, 16) grid (rows × columns).

        Query and key are the same unit vector, so the score is the positional part alone; at the
        current ``row``, ``col`` and ``layout`` (set them with :meth:`update`).
        """
        section, inv_freq, interleaved = self.arrangement
        h, w = self.grid
        rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        pos = np.stack([np.zeros(h * w), rows.ravel(), cols.ravel()])  # one image: t = 0 for every patch
        v = np.ones((1, self.head_dim)) / np.sqrt(self.head_dim)  # the same unit vector as query and key
        keys = apply_mrope(np.repeat(v, h * w, axis=0), pos, inv_freq, section, interleaved=interleaved)
        q_pos = np.array([[0.0], [self.params["row"]], [self.params["col"]]])
        query = apply_mrope(v, q_pos, inv_freq, section, interleaved=interleaved)
        return (keys @ query[0]).reshape(h, w)

    def build(self) -> Figure:
        fig, (ax1, ax2) = new_figure(9.8, 4.2, ncols=2, width_ratios=[1, 1.1])
        self.marks = []
        for k in range(3):
            (line,) = ax1.semilogy([], [], ms=3, **{**series(k), "linestyle": "none"})
            self.marks.append(line)
        ax1.axhline(16, color="0.6", ls=":", lw=1, label="grid width, 16 patches")
        ax1.set(xlabel="pair index i", ylabel=r"wavelength $2\pi/\theta_i$ (tokens)", xlim=(-2, 65), ylim=(3, 3e7))
        self.legend_axes = ax1
        self.image = ax2.imshow(self.scores(), cmap="viridis", origin="upper")
        (self.dot,) = ax2.plot([], [], "r+", ms=12, mew=2)
        ax2.set(title="", xlabel="patch column", ylabel="patch row")
        # the scale follows each query's scores; this colour bar relabels its ticks instead of being rebuilt
        following_colorbar(fig, self.image, ax2, "score qᵀk (same content, |q| = |k| = 1)")
        return fig

    def redraw(self) -> None:
        section, inv_freq, interleaved = self.arrangement
        if getattr(self, "_drawn_layout", None) != self.params["layout"]:  # the left panel changes with the layout only
            self._drawn_layout = self.params["layout"]
            axis = mrope_axis_of_pair(section, interleaved=interleaved)
            wl = 2 * np.pi / inv_freq
            for k, (line, name) in enumerate(zip(self.marks, ["time", "row", "column"], strict=True)):
                sel = axis == k
                line.set_data(np.flatnonzero(sel), wl[sel])
                line.set_label(f"{name}: {sel.sum()} pairs")
            if self.legend_axes.get_legend() is None:
                legend_outside(self.legend_axes, where="below", ncol=2)
            else:  # new counts in the same legend: a new Legend each move would force a full redraw
                for text, line in zip(self.legend_axes.get_legend().get_texts(), self.marks, strict=False):
                    text.set_text(line.get_label())
            self.legend_axes.set_title(f"M-RoPE {self.params['layout']}: {list(section)}")
        r, c = int(self.params["row"]), int(self.params["col"])
        scores = self.scores()
        self.image.set_data(scores)
        self.image.set_clim(scores.min(), 1.0)  # the range can be narrow: slow row and column pairs barely turn
        self.dot.set_data([c], [r])
        self.image.axes.title.set_text(f"query patch (row, column) = ({r}, {c}):\nscore with every key patch")


def longrope_divisors_figure(config: dict[str, Any]) -> Figure:
    """Each pair's frequency divisor θ_i/θ'_i under a LongRoPE config, beside PI, NTK-aware and YaRN at its factor.

    ``config`` is a Phi-3-style config.json (``rope_scaling`` of type longrope, ``max_position_embeddings``
    and ``original_max_position_embeddings`` at the top level); the others use s = max / original.
    """
    short, _, rotary_dim = rope_from_config(config, seq_len=config["original_max_position_embeddings"])
    long, _, _ = rope_from_config(config, seq_len=config["original_max_position_embeddings"] + 1)
    plain, _ = rope_inv_freq(rotary_dim, float(config["rope_theta"]))
    s = config["max_position_embeddings"] / config["original_max_position_embeddings"]
    other = {"original_max_position_embeddings": config["original_max_position_embeddings"], "factor": s}
    ntk, _ = rope_inv_freq(rotary_dim, float(config["rope_theta"]), {"rope_type": "ntk", "factor": s})
    yarn, _ = rope_inv_freq(rotary_dim, float(config["rope_theta"]), {"rope_type": "yarn", **other})
    fig, ax = new_figure(9.8, 3.9, pyplot=True)  # a static figure: plt.show() must find it
    pairs = np.arange(rotary_dim // 2)
    curves = [
        (f"PI (all pairs ÷ s = {s:g})", np.full(len(pairs), s)),
        ("NTK-aware", plain / ntk),
        ("YaRN (code's ramp)", plain / yarn),
        (f"LongRoPE short factors (N ≤ {config['original_max_position_embeddings']:,})", plain / short),
        ("LongRoPE long factors (beyond)", plain / long),
    ]
    for k, (label, divisor) in enumerate(curves):
        ax.semilogy(pairs, divisor, label=label, **series(k, len(pairs)))
    ax.set(
        title=f"frequency divisor per pair, s = {s:g}",
        xlabel="pair index i (fast → slow)",
        ylabel=r"divisor $\theta_i / \theta'_i$",
    )
    legend_outside(ax)
    return fig


def sink_mass_figure(lengths: Any, sink_logits: Any, mass: np.ndarray, predicted: np.ndarray) -> Figure:
    """Row weight left to the keys against the row length, per sink logit: median and 5–95 % over seeds.

    ``mass``: (seeds, sinks, lengths) from :func:`poslib.teaching.sinks.key_mass_with_sink`; ``predicted``:
    (sinks, lengths), the large-N formula, drawn dashed.
    """
    fig, ax = new_figure(9.8, 3.6, pyplot=True)  # a static figure: plt.show() must find it
    lengths = np.asarray(lengths)
    for k, s in enumerate(sink_logits):
        style = series(k, len(lengths))
        lo, mid, hi = np.percentile(mass[:, k], [5, 50, 95], axis=0)
        ax.fill_between(lengths, lo, hi, color=style["color"], alpha=0.15, lw=0)
        ax.semilogx(lengths, mid, label=f"sink logit $z_{{sink}}$ = {s:g}", **style)
        ax.semilogx(lengths, predicted[k], color=style["color"], ls=":", lw=1)
    ax.plot([], [], color="0.4", ls=":", lw=1, label=r"$N e^{1/2} / (N e^{1/2} + e^{z_{sink}})$")
    ax.set(
        title="weight a row gives its keys, with a learned sink (median and 5–95 % over seeds)",
        xlabel="keys in the row N",
        ylabel="row weight on the keys",
        ylim=(0, 1.02),
    )
    legend_outside(ax)
    return fig
