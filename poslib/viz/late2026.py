"""Figures of notebook 13 (position in late-2026 models): partial rotary, rotated values, generators, PaTH as
DeltaNet-corrected softmax, and how multimodal RoPE spends its frequencies (the one with a slider).

Data first: each static figure takes the numbers the notebook computed with poslib and only draws them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..mm_rope import MM_ROPE_SCHEMES, mm_rope_frequencies
from ..rope import rope_frequencies
from ._live import LivePlot
from .style import COLORS, legend_outside, new_figure, series

__all__ = [
    "MultimodalPairsPlot",
    "generator_drift_figure",
    "partial_rotary_figure",
    "path_deltanet_figure",
    "vo_rope_shift_figure",
]

SCHEME_LABELS = {
    "mrope": "M-RoPE (Qwen2-VL)",
    "mrope_interleaved": "interleaved (Qwen3-VL)",
    "videorope": "VideoRoPE",
    "hope": "HoPE",
}
AXIS_COLORS = [COLORS[1], COLORS[0], COLORS[2], "#DDDDDD"]  # t, h, w, frequency zero


def partial_rotary_figure(distance: np.ndarray, scores: Mapping[str, np.ndarray]) -> Figure:
    """A unit query's score against itself at each distance, under each reading of Gemma 4's full-attention head."""
    fig, ax = new_figure(9.8, 4.2, pyplot=True)
    for k, (label, s) in enumerate(scores.items()):
        ax.plot(distance, s, lw=1.3, **series(k, len(distance)), ms=4, label=label)
    ax.set(
        xlabel="distance m − n (tokens)",
        ylabel="score q·k (q = k, unit norm)",
        title="Gemma 4's full-attention head, three readings",
    )
    legend_outside(ax, where="below", ncol=2)
    return fig


def vo_rope_shift_figure(shifts: np.ndarray, moved: Mapping[str, np.ndarray]) -> Figure:
    """How far DeepSeek-V4's attention output moves when every position shifts by Δ, with and without the turn back."""
    fig, ax = new_figure(9.8, 3.4, pyplot=True)
    for k, (label, gap) in enumerate(moved.items()):
        ax.semilogy(shifts, np.maximum(gap, 1e-17), lw=1.3, **series(k, len(shifts)), ms=4, label=label)
    ax.set(
        xlabel="shift Δ of every position",
        ylabel="max |out(Δ) − out(0)|",
        title="Rotated values: the turn back removes absolute position",
        ylim=(1e-17, 10.0),
    )
    ax.minorticks_off()
    legend_outside(ax, where="right")
    return fig


def generator_drift_figure(eps: np.ndarray, commutator: np.ndarray, drift: np.ndarray) -> Figure:
    """Drift of a score under a common shift against the size of the generators' commutator."""
    fig, (a_c, a_d) = new_figure(9.8, 3.5, ncols=2, pyplot=True)
    a_c.plot(eps, commutator, **series(0, len(eps)), lw=1.3, ms=4)
    a_c.set(
        xlabel="mix ε of a non-commuting part",
        ylabel=r"$\Vert[A_{row}, A_{col}]\Vert$ (Frobenius)",
        title="How far the generators commute",
    )
    a_d.semilogy(eps, np.maximum(drift, 1e-17), **series(1, len(eps)), lw=1.3, ms=4)
    a_d.set(
        xlabel="mix ε of a non-commuting part",
        ylabel="max |score(p+s, p′+s) − score(p, p′)|",
        title="How far the score moves",
    )
    a_d.minorticks_off()
    return fig


def path_deltanet_figure(gap: np.ndarray, error: np.ndarray, k_norm: np.ndarray) -> Figure:
    """PaTH's scores against q̂·k̂ as the strength β approaches the singular β‖w‖² = 1."""
    fig, ax = new_figure(9.8, 3.5, pyplot=True)
    ax.loglog(gap, np.maximum(error, 1e-17), **series(0, len(gap)), lw=1.3, ms=4, label="max |PaTH score − q̂·k̂|")
    ax.loglog(gap, k_norm, **series(1, len(gap)), lw=1.3, ms=4, label="largest |k̂| entry")
    ax.set(
        xlabel="|β − 1| (unit w: H = I − βwwᵀ is singular at β = 1)",
        title="Exact in exact arithmetic; the rounding follows ‖H⁻¹‖",
    )
    ax.minorticks_off()
    legend_outside(ax, where="right")
    return fig


class MultimodalPairsPlot(LivePlot):
    """Which frequency pair follows t, h or w under four multimodal schemes, and what Δt temporal steps do to each pair.

    Left: one row per scheme, one cell per pair (fastest left), coloured by the axis it turns with (grey: HoPE's
    zero frequency). Right: cos(Δt·θ_i) of each temporal pair of the same patch ``frames`` temporal position steps
    apart (1 means the pair cannot tell the two apart; a temporal pair at a fast frequency wraps around in a few
    steps; a step is not always one frame: VideoRoPE's is δ = 2 per frame).
    head_dim 128, θ = 10⁶ (Qwen2-VL's ``rope_theta``); ``mrope_section`` [16, 24, 24] (Qwen2-VL-7B), and Qwen3-VL's
    [24, 20, 20] for the interleaved row.
    """

    defaults: ClassVar[dict[str, Any]] = {"frames": 4}
    bench_values: ClassVar[list[dict[str, Any]]] = [{"frames": 1}, {"frames": 4096}, {"frames": 4}]
    sections: ClassVar[dict[str, list[int]]] = {
        "mrope": [16, 24, 24],
        "mrope_interleaved": [24, 20, 20],  # Qwen3-VL's own sections ([16, 24, 24] cannot be interleaved)
        "videorope": [16, 24, 24],
        "hope": [16, 24, 24],
    }
    base = 1e6

    def tables(self) -> dict[str, Any]:
        """Per scheme: the axis of each pair (3 = frequency zero) and each pair's frequency."""
        inv_freq = rope_frequencies(128, self.base)
        rows, freqs = [], []
        for scheme in MM_ROPE_SCHEMES:
            axes, freq = mm_rope_frequencies(inv_freq, self.sections[scheme], scheme)
            rows.append(np.where((axes == 0) & (freq == 0), 3, axes))
            freqs.append(np.asarray(freq))
        return {"axes": np.stack(rows), "freq": np.stack(freqs)}

    def build(self) -> Figure:
        fig, (a_map, a_cos) = new_figure(9.8, 4.4, ncols=2, width_ratios=[1.25, 1.0])
        t = self.tables()
        self.freq, self.axes = t["freq"], t["axes"]
        a_map.imshow(
            self.axes, cmap=ListedColormap(AXIS_COLORS), vmin=-0.5, vmax=3.5, aspect="auto", interpolation="nearest"
        )
        a_map.set_yticks(range(len(MM_ROPE_SCHEMES)), [SCHEME_LABELS[s] for s in MM_ROPE_SCHEMES])
        a_map.set(xlabel="pair i (fastest frequency left)", ylabel="scheme", title="Which axis turns each pair")
        handles = [Patch(color=c, label=n) for c, n in zip(AXIS_COLORS, ["t", "h", "w", "θ = 0"], strict=True)]
        a_map.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4, borderaxespad=0.0)
        n = self.axes.shape[1]
        self.lines = []
        for k, scheme in enumerate(MM_ROPE_SCHEMES):
            (line,) = a_cos.plot([], [], lw=1.2, label=SCHEME_LABELS[scheme], **series(k))
            self.lines.append(line)
        a_cos.set(xlim=(-1, n), ylim=(-1.1, 1.1), xlabel="pair i", ylabel=r"$\cos(\Delta t\,\theta_i)$, temporal pairs")
        self.a_cos = a_cos
        legend_outside(a_cos, where="below", ncol=2)
        return fig

    def redraw(self) -> None:
        frames = int(self.params["frames"])
        for line, axes, freq in zip(self.lines, self.axes, self.freq, strict=True):
            j = np.flatnonzero((axes == 0) | (axes == 3))
            line.set_data(j, np.cos(frames * freq[j]))
        self.a_cos.set_title(f"The same patch {frames} temporal step{'s' if frames != 1 else ''} apart")

    def temporal_cos(self, frames: int) -> dict[str, np.ndarray]:
        """cos(Δt·θ_i) of each scheme's temporal pairs at Δt = ``frames`` (what the right panel draws)."""
        out = {}
        for scheme, axes, freq in zip(MM_ROPE_SCHEMES, self.axes, self.freq, strict=True):
            j = np.flatnonzero((axes == 0) | (axes == 3))
            out[scheme] = np.cos(frames * freq[j])
        return out
