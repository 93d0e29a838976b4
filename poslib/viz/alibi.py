"""Figures for notebook 07 (ALiBi).

Sliders drive :class:`AlibiBiasPlot` (head count, head, causal or symmetric)
and :class:`AlibiReachPlot` (head count, sequence length).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from ..alibi import alibi_bias, alibi_receptive_field, alibi_slopes
from ..attn import softmax
from ._live import LivePlot
from .style import legend_outside, new_figure, sparse_colorbar

__all__ = ["AlibiBiasPlot", "AlibiReachPlot"]


MAX_HEADS = 64


def _split(n_heads: int) -> int:
    """How many of the paper's slopes come from the power-of-two sequence (the rest are interleaved extras)."""
    return 2 ** math.floor(math.log2(n_heads))


class AlibiBiasPlot(LivePlot):
    """The bias −μ_h·|m − n| of one head as a heatmap (query m, key n), and the slopes of all heads.

    ``head`` is 1-based and clamped to ``n_heads``. With ``causal`` the future
    keys are masked (grey); without, the matrix is symmetric. Every head and head
    count shares one colour scale, [−``floor``, 0] (values below are drawn in the
    darkest colour): a key pushed down by 8 has its weight multiplied by e⁻⁸ ≈ 3·10⁻⁴,
    so a steep head looks local and a gentle one looks nearly flat. (Colour limits
    set per head would make every head's image identical.)
    """

    defaults: ClassVar[dict[str, Any]] = {"n_heads": 8, "head": 1, "causal": True}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"head": 8},
        {"causal": False},
        {"n_heads": 12, "head": 10},
        {"n_heads": 40, "head": 33},
        {"n_heads": 8, "head": 1, "causal": True},
    ]
    seq_len = 24
    floor = 8.0

    def build(self) -> Figure:
        fig, (a_bias, a_slopes) = new_figure(9.8, 4.6, ncols=2, gridspec_kw={"width_ratios": [1, 1.2]})
        cmap = plt.get_cmap("viridis").with_extremes(bad="0.85")
        self.im = a_bias.imshow(np.zeros((self.seq_len, self.seq_len)), cmap=cmap, vmin=-self.floor, vmax=0)
        sparse_colorbar(fig, self.im, a_bias, r"bias $-\mu_h\,|m-n|$ (one scale for all heads)", shrink=1.0)
        a_bias.set(xlabel="key position n", ylabel="query position m")
        self.a_bias = a_bias
        (self.main,) = a_slopes.semilogy(
            [], [], "o", color="C0", label=r"$2^{-8h/n_2}$, $n_2$ = largest power of two ≤ $n_h$"
        )
        (self.extra,) = a_slopes.semilogy([], [], "s", color="C4", label=r"extras: odd terms of the $2n_2$ sequence")
        (self.chosen,) = a_slopes.semilogy([], [], "o", ms=14, mfc="none", mec="C2", mew=2, label="shown head")
        a_slopes.set(xlabel="head h", ylabel=r"slope $\mu_h$", xlim=(0, MAX_HEADS + 1), ylim=(2**-9.5, 1.5))
        a_slopes.set_yticks([2.0**-k for k in range(0, 9)], ["1"] + [f"1/{2**k}" for k in range(1, 9)])
        a_slopes.minorticks_off()
        legend_outside(a_slopes, where="below")
        self.a_slopes = a_slopes
        return fig

    def limits(self) -> dict[str, tuple[float, float]]:
        """The head slider ends at the number of heads."""
        return {"head": (1, int(self.params["n_heads"]))}

    def redraw(self) -> None:
        n = int(self.params["n_heads"])
        h = int(np.clip(self.params["head"], 1, n))
        causal = bool(self.params["causal"])
        slopes = alibi_slopes(n)
        bias = alibi_bias(n, self.seq_len, causal=causal)[h - 1]
        self.im.set_data(np.ma.masked_invalid(bias))  # the colour limits stay fixed: see the class docstring
        kind = "causal" if causal else "symmetric"
        self.a_bias.set_title(f"head {h} of {n}, slope μ = {slopes[h - 1]:.4g} ({kind})")
        p = _split(n)
        heads = np.arange(1, n + 1)
        self.main.set_data(heads[:p], slopes[:p])
        self.extra.set_data(heads[p:], slopes[p:])
        self.chosen.set_data([h], [slopes[h - 1]])
        self.a_slopes.set_xlim(0, n * 1.1 + 1.5)
        self.a_slopes.set_title(f"The paper's slopes for {n} heads")


class AlibiReachPlot(LivePlot):
    """How far each head looks: attention weight against distance from ALiBi alone, and each head's 90 % reach.

    With equal content scores, the last of ``length`` tokens gives the key t
    tokens back a weight ∝ e^(−μ_h·t): a straight line on a log scale, one per head. The n_h heads shown
    are spread over the whole palette (darkest: head 1, the steepest; lightest: head n_h, the gentlest).

    Slider speed: above the 150 ms goal. Both sliders move both panels' x limits, so every tick
    label (a log axis on the left) is drawn again on each move.
    """

    defaults: ClassVar[dict[str, Any]] = {"n_heads": 8, "length": 1024}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"n_heads": 4},
        {"n_heads": 12},
        {"length": 256},
        {"n_heads": 32, "length": 4096},
        {"n_heads": 8, "length": 1024},
    ]

    def build(self) -> Figure:
        fig, (a_w, a_r) = new_figure(9.8, 4.4, ncols=2)
        self.palette = plt.get_cmap("plasma")
        self.lines = [a_w.semilogy([], [], ls="-", lw=1.2)[0] for _ in range(MAX_HEADS)]
        a_w.set(xlabel="distance to the key (tokens)", ylabel="attention weight", ylim=(1e-7, 1.5))
        a_w.minorticks_off()
        self.a_w = a_w
        (self.reach,) = a_r.semilogy([], [], "o-", color="C0", label="90 % of the weight within")
        (self.reach99,) = a_r.semilogy([], [], "s--", color="C2", label="99 % of the weight within")
        self.length_line = a_r.axhline(1, color="C1", ls=":", label="sequence length")
        a_r.set(xlabel="head h", ylabel="distance (tokens)", ylim=(0.5, 3e4))
        a_r.minorticks_off()
        legend_outside(a_r, where="below", ncol=2)
        self.a_r = a_r
        return fig

    def redraw(self) -> None:
        n, length = int(self.params["n_heads"]), int(self.params["length"])
        slopes = alibi_slopes(n)
        # the last query's row of the bias, reversed so that index t is distance t
        weights = softmax(alibi_bias(n, 1, length, causal=True)[:, 0, ::-1])
        # e^(−μ_h·t) is a straight line on a log axis: 65 samples draw it exactly and cheaply
        t = np.unique(np.linspace(0, length - 1, 65).round().astype(int))
        # the n heads shown take the whole palette (0 … 0.9: plasma's last tenth is too pale on white), so
        # "dark: steepest" holds for any n; colours fixed for 64 heads gave 8 heads one dark eighth of it
        colors = self.palette(np.linspace(0, 0.9, n) if n > 1 else [0.0])
        for k, line in enumerate(self.lines):
            if k < n:
                line.set_data(t, weights[k, t])
                line.set_color(colors[k])
            line.set_visible(k < n)
        self.a_w.set_xlim(0, length)
        self.a_w.set_title(f"Weight on each key from ALiBi alone\n{n} heads (dark: steepest), {length:,} tokens")
        heads = np.arange(1, n + 1)
        self.reach.set_data(heads, alibi_receptive_field(slopes, 0.9, length=length))
        self.reach99.set_data(heads, alibi_receptive_field(slopes, 0.99, length=length))
        self.length_line.set_ydata([length] * 2)
        self.a_r.set_xlim(0.5, n + 0.5)
        self.a_r.set_title("Each head's reach (receptive field)")
