"""Figures for notebook 06 (beyond the training length).

Sliders drive :class:`UnseenAnglePlot` (inference length, pair),
:class:`EntropyPlot` (training length, score spread), :class:`ScalingPlot`
(factor s, current length N), :class:`XposDecayPlot` (offset c_ζ, the paper's γ; scale length B_ζ) and
:class:`BiasCurvesPlot` (KERPLE's r₁, r₂). Every number drawn comes from
poslib; the classes only lay it out.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from matplotlib.figure import Figure

from ..alibi import alibi_slopes
from ..kerple import kerple_bias
from ..rope import rope_frequencies
from ..rope_diagnostics import rope_unseen_angle
from ..rope_scaling import rope_inv_freq
from ..sandwich import sandwich_bias
from ..teaching.entropy import attention_entropy_vs_length
from ..xpos import xpos_scale
from ._live import LivePlot
from .style import legend_outside, new_figure, series

__all__ = ["BiasCurvesPlot", "EntropyPlot", "ScalingPlot", "UnseenAnglePlot", "XposDecayPlot", "scaling_configs"]


TWO_PI = 2 * np.pi


class UnseenAnglePlot(LivePlot):
    """Which RoPE pairs meet angles at inference that training never showed (source 000 §6.1, problem 1).

    Left: turns each pair completes over the training context L and over the
    inference context L' (log scale); pairs below one turn in training are the
    ones at risk. Middle: the new arc per pair, :func:`poslib.rope_unseen_angle`.
    Right: the chosen pair's circle, the arc seen in training in blue, the new
    arc in orange (C1, as the pairs meeting new angles on the left and in the middle).
    """

    defaults: ClassVar[dict[str, Any]] = {"infer_len": 8192, "pair": 48}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"infer_len": 4096},
        {"infer_len": 16384},
        {"pair": 60},
        {"infer_len": 2048, "pair": 40},
        {"infer_len": 32768, "pair": 55},
    ]
    head_dim, base, train_len = 128, 10000.0, 2048

    def build(self) -> Figure:
        self.theta = rope_frequencies(self.head_dim, self.base)
        self.i = np.arange(len(self.theta))
        fig, (a_turns, a_new, a_circle) = new_figure(9.8, 4.6, ncols=3, gridspec_kw={"width_ratios": [1.3, 1.3, 1]})
        a_turns.semilogy(
            self.i,
            (self.train_len - 1) * self.theta / TWO_PI,
            color="C0",
            ls="-",
            label=f"training, L = {self.train_len:,} tokens",
        )
        (self.infer_line,) = a_turns.semilogy(self.i, self.theta, color="C1", ls="--", label="inference, L'")
        (self.marks,) = a_turns.plot([], [], "o", color="C1", ms=3, label="pairs meeting new angles")
        a_turns.axhline(1, color="0.4", ls=":", lw=1, label="one full turn")
        a_turns.set(
            title="Turns over the context, per pair",
            xlabel="pair index i",
            ylabel=r"turns $(L-1)\,\theta_i/2\pi$",
            ylim=(1e-2, 1e4),
        )
        self.turns_legend = legend_outside(a_turns, where="below")
        a_turns.minorticks_off()
        a_turns.set_yticks([1e-2, 1, 1e2, 1e4])  # tick labels are most of a redraw's cost
        self.bars = a_new.stairs(np.zeros_like(self.theta), np.arange(len(self.theta) + 1) - 0.5, fill=True, color="C1")
        a_new.set(
            title="New angle at L'\n(never seen in training)",
            xlabel="pair index i",
            ylabel="unseen arc (degrees)",
            ylim=(0, 370),
            xlim=(-1, len(self.i)),
        )
        self.count = a_new.text(0.02, 0.97, "", transform=a_new.transAxes, va="top", fontsize=9)
        ring = np.linspace(0, TWO_PI, 200)
        a_circle.plot(np.cos(ring), np.sin(ring), color="0.85", lw=6)
        (self.seen_arc,) = a_circle.plot([], [], color="C0", ls="-", lw=6, label="seen in training")
        (self.new_arc,) = a_circle.plot([], [], color="C1", ls="-", lw=6, label="new at L'")
        a_circle.set(xlim=(-1.3, 1.3), ylim=(-1.3, 1.3), aspect="equal", xlabel="cos(angle)", ylabel="sin(angle)")
        a_circle.set_xticks([-1, 0, 1])
        a_circle.set_yticks([-1, 0, 1])
        legend_outside(a_circle, where="below")
        self.a_circle = a_circle
        return fig

    def redraw(self) -> None:
        infer_len, pair = int(self.params["infer_len"]), int(np.clip(self.params["pair"], 0, len(self.theta) - 1))
        unseen = rope_unseen_angle(self.theta, self.train_len, infer_len)
        if getattr(self, "_drawn_len", None) != infer_len:  # the left and middle panels follow L' only
            self._drawn_len = infer_len
            self.infer_line.set_ydata((infer_len - 1) * self.theta / TWO_PI)
            self.turns_legend.get_texts()[1].set_text(f"inference, L' = {infer_len:,} tokens")
            at_risk = unseen > 0
            self.marks.set_data(self.i[at_risk], ((infer_len - 1) * self.theta / TWO_PI)[at_risk])
            self.bars.set_data(np.degrees(unseen))
            self.count.set_text(f"{int(at_risk.sum())} of {len(self.theta)} pairs\nmeet new angles")
        seen = min(TWO_PI, (self.train_len - 1) * self.theta[pair])
        arc = np.linspace(0, seen, 200)
        self.seen_arc.set_data(np.cos(arc), np.sin(arc))
        arc = np.linspace(seen, seen + unseen[pair], 200)
        self.new_arc.set_data(np.cos(arc), np.sin(arc))
        wavelength, arc_deg = TWO_PI / self.theta[pair], np.degrees(unseen[pair])
        title = f"pair {pair}: wavelength\n{wavelength:,.0f} tokens; new arc {arc_deg:.0f}°"
        if self.a_circle.get_title() != title:  # set_title marks the title changed even when it is not
            self.a_circle.set_title(title)


class EntropyPlot(LivePlot):
    """Entropy of an attention row against the number of keys N, plain and with log-n scaling (problem 2).

    Scores are ``score_std · q·k/√d`` for random q, k
    (:func:`poslib.teaching.attention_entropy_vs_length`); log-n scaling multiplies them
    by max(1, ln N / ln L). ln N, the entropy of uniform attention, is the ceiling.
    """

    defaults: ClassVar[dict[str, Any]] = {"train_len": 512, "score_std": 2.5}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"train_len": 128},
        {"train_len": 1024},
        {"score_std": 1.5},
        {"score_std": 3.0},
        {"train_len": 512, "score_std": 2.5},
    ]
    lengths = [2**k for k in range(4, 15)]

    def build(self) -> Figure:
        n = np.array(self.lengths)
        fig, ax = new_figure(9.8, 4.0)
        ax.semilogx(n, np.log(n), color="0.5", ls=":", label="ln N (uniform attention)")
        (self.plain,) = ax.semilogx(n, np.zeros(len(n)), "o-", color="C1", label="plain softmax")
        (self.scaled,) = ax.semilogx(n, np.zeros(len(n)), "s--", color="C0", label="× ln N / ln L (log-n scaling)")
        self.train_mark = ax.axvline(1, color="0.3", ls="--", lw=1, label="training length L")
        ax.set(
            xlabel="number of keys N (tokens)",
            ylabel="entropy of an attention row (nats)",
            ylim=(0, 10.5),
            xlim=(self.lengths[0] / 1.3, self.lengths[-1] * 1.3),
        )
        ax.set_xscale("log", base=2)
        legend_outside(ax)
        self.ax = ax
        return fig

    def redraw(self) -> None:
        L, std = int(self.params["train_len"]), float(self.params["score_std"])
        self.plain.set_ydata(attention_entropy_vs_length(self.lengths, score_std=std))
        self.scaled.set_ydata(attention_entropy_vs_length(self.lengths, L, score_std=std))
        self.train_mark.set_xdata([L, L])
        self.ax.set_title(
            f"Attention entropy against length\n(training length L = {L:,} tokens, score std σ = {std:g}, "
            f"√ln L = {np.sqrt(np.log(L)):.2f})"
        )


def scaling_configs(factor: float, original: int) -> dict[str, dict[str, Any]]:
    """The ``rope_scaling`` dictionaries notebook 06 compares: factor s (dynamic NTK: factor 1), original context L."""
    return {
        "PI (linear)": {"rope_type": "linear", "factor": factor},
        "NTK-aware": {"rope_type": "ntk", "factor": factor},
        # factor 1: s'(N) = N/L, just the stretch the current length N needs (at N = s·L it equals static NTK);
        # the target s as the factor would overshoot to s² − s + 1 at N = s·L (notebook 06, Going further)
        "dynamic NTK": {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": original},
        "YaRN": {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": original},
        "Llama-3": {
            "rope_type": "llama3",
            "factor": factor,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": original,
        },
    }


class ScalingPlot(LivePlot):
    """Wavelength 2π/θᵢ' of every pair before and after each RoPE scaling rule, and the ratio θᵢ'/θᵢ.

    ``factor`` is s; ``current_len`` is the sequence length N dynamic NTK sees
    (the others do not depend on it).
    """

    defaults: ClassVar[dict[str, Any]] = {"factor": 8.0, "current_len": 16384}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"factor": 2.0},
        {"factor": 16.0},
        {"current_len": 4096},
        {"current_len": 65536},
        {"factor": 8.0, "current_len": 16384},
    ]
    head_dim, base, original = 128, 10000.0, 4096
    styles = ("PI (linear)", "NTK-aware", "dynamic NTK", "YaRN", "Llama-3")

    def build(self) -> Figure:
        self.theta = rope_frequencies(self.head_dim, self.base)
        i = np.arange(len(self.theta))
        fig, (a_wave, a_ratio) = new_figure(9.8, 4.6, ncols=2)
        a_wave.semilogy(i, TWO_PI / self.theta, color="0.3", ls="-", lw=3, alpha=0.5, label="default RoPE")
        self.waves, self.ratios = {}, {}
        for k, name in enumerate(self.styles):
            style = series(k, len(i))
            (self.waves[name],) = a_wave.semilogy(i, TWO_PI / self.theta, label=name, **style)
            (self.ratios[name],) = a_ratio.semilogy(i, np.ones_like(self.theta), label=name, **style)
        a_wave.axhline(self.original, color="0.4", ls=":", lw=1)
        self.long_line = a_wave.axhline(self.original, color="0.4", ls="--", lw=1)
        self.long_text = a_wave.text(1, self.original, "", color="0.2", fontsize=9, va="bottom")
        a_wave.text(1, self.original, f"L = {self.original:,}", color="0.2", fontsize=9, va="top")
        a_wave.set(
            title="Wavelength of each pair", xlabel="pair index i", ylabel=r"wavelength $2\pi/\theta_i'$ (tokens)"
        )
        # one legend, below both panels: same lines in both, and legend text is costly to redraw
        self.wave_legend = fig.legend(*a_wave.get_legend_handles_labels(), loc="outside lower center", ncol=6)
        a_ratio.set(xlabel="pair index i", ylabel=r"$\theta_i'/\theta_i$", ylim=(1 / 80, 1.6))
        a_ratio.axhline(1, color="k", lw=1)
        a_wave.minorticks_off()
        a_ratio.minorticks_off()
        a_ratio.set_yticks([1 / 64, 1 / 16, 1 / 4, 1], ["1/64", "1/16", "1/4", "1"])
        a_wave.set(ylim=(3, 1e8), yticks=[10, 1e3, 1e5, 1e7])  # room for every rule up to s = 32
        self.inv_s = a_ratio.axhline(1, color="0.4", ls=":", lw=1)
        self.a_ratio = a_ratio
        return fig

    def redraw(self) -> None:
        s, n = float(self.params["factor"]), int(self.params["current_len"])
        for name, cfg in scaling_configs(s, self.original).items():
            inv_freq, _ = rope_inv_freq(self.head_dim, self.base, cfg, seq_len=n)
            self.waves[name].set_ydata(TWO_PI / inv_freq)
            self.ratios[name].set_ydata(inv_freq / self.theta)
        self.wave_legend.get_texts()[1 + list(self.styles).index("dynamic NTK")].set_text(f"dynamic NTK, N = {n:,}")
        self.long_line.set_ydata([s * self.original] * 2)
        self.long_text.set_position((1, s * self.original))
        self.long_text.set_text(f"s·L = {s * self.original:,.0f}")
        self.inv_s.set_ydata([1 / s] * 2)
        self.a_ratio.set_title(f"Frequency kept per pair\n(1 = untouched, 1/s = {1 / s:.3g} = as PI)")


class XposDecayPlot(LivePlot):
    """XPOS's extra factor ζᵢ^((m−n)/B_ζ) on the score of query m and key n, for a few pairs (B_ζ: ``scale_base``).

    ζᵢ = (2i/d + c_ζ)/(1 + c_ζ), c_ζ = ``gamma`` (the paper's γ, 0.4): the fast pairs (small i) decay fastest.
    """

    defaults: ClassVar[dict[str, Any]] = {"gamma": 0.4, "scale_base": 512}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"gamma": 0.1},
        {"gamma": 0.9},
        {"scale_base": 128},
        {"scale_base": 2048},
        {"gamma": 0.4, "scale_base": 512},
    ]
    head_dim = 64
    pairs = (0, 8, 16, 24, 31)
    distance = np.arange(0, 2049, 8)

    def build(self) -> Figure:
        fig, ax = new_figure(9.0, 4.0)
        self.lines = [
            ax.semilogy(self.distance, np.ones(len(self.distance)), label=f"pair i = {i}", **series(k, 257))[0]
            for k, i in enumerate(self.pairs)
        ]
        ax.set(
            xlabel="distance m − n, query m, key n (tokens)",
            ylabel=r"decay factor $\zeta_i^{\,(m-n)/B_\zeta}$",
            xlim=(0, self.distance[-1]),
        )
        legend_outside(ax)
        ax.minorticks_off()
        self.ax = ax
        return fig

    def redraw(self) -> None:
        gamma, base = float(self.params["gamma"]), float(self.params["scale_base"])
        # the factor on a score is the query's ζ^(m/B_ζ) times the key's ζ^(−n/B_ζ); key at 0: ζ^(m/B_ζ)
        decay = xpos_scale(self.distance, self.head_dim, scale_base=base, gamma=gamma)
        for line, i in zip(self.lines, self.pairs, strict=True):
            line.set_ydata(decay[:, i])
        # the y range follows the curves: the smallest factor shown spans 10⁻²¹ … 10⁻¹ over the sliders' range
        low = float(decay[:, list(self.pairs)].min())
        self.ax.set_ylim(max(low, 1e-30) / 2, 1.5)
        self.ax.set_title(
            f"XPOS decay per pair (d = {self.head_dim}, $c_\\zeta$ = {gamma:g},"
            f" scale length $B_\\zeta$ = {base:,.0f} tokens)"
        )


class BiasCurvesPlot(LivePlot):
    """Bias added to a score against distance: ALiBi's lines, KERPLE's power and log kernels, Sandwich.

    KERPLE: −r₁·|m−n|^r₂ (power, 0 < r₂ ≤ 2) and −r₁·ln(1 + r₂·|m−n|) (log); Sandwich:
    Σᵢ [cos((m−n)·ωᵢ) − 1] over d/2 sinusoidal frequencies, divided by 8 (its last head of 8).
    """

    defaults: ClassVar[dict[str, Any]] = {"r1": 2.0, "power_r2": 0.5, "log_r2": 1.0}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"r1": 1.0},
        {"power_r2": 1.0},
        {"power_r2": 0.2},
        {"log_r2": 0.1},
        {"r1": 4.0, "log_r2": 4.0},
    ]
    max_distance, sandwich_dim = 512, 128

    def build(self) -> Figure:
        self.distance = np.arange(self.max_distance + 1.0)
        fig, ax = new_figure(9.8, 4.2)
        n = len(self.distance)
        for k, slope in enumerate([alibi_slopes(8)[3], alibi_slopes(8)[7]]):
            ax.plot(
                self.distance, -slope * self.distance, lw=1.2, label=f"ALiBi, slope 1/{1 / slope:g}", **series(k, n)
            )
        # Sandwich for heads 8 of 8: the sinusoidal inner product minus its peak, divided by 8·8/8
        sandwich = sandwich_bias(8, self.sandwich_dim, q_len=1, k_len=self.max_distance + 1)[7, 0]
        ax.plot(
            self.distance, sandwich[::-1], lw=1.2, label=f"Sandwich (d = {self.sandwich_dim}, head 8/8)", **series(2, n)
        )
        zeros = np.zeros_like(self.distance)
        (self.power,) = ax.plot(self.distance, zeros, lw=2, label="KERPLE power", **series(3, n))
        (self.log,) = ax.plot(self.distance, zeros, lw=2, label="KERPLE log", **series(4, n))
        ax.set(
            xlabel="distance |m − n| (tokens)",
            ylabel="bias added to the score",
            ylim=(-40, 2),
            title="Distance penalties (view clipped at −40)",
        )
        self.legend = legend_outside(ax)
        self.ax = ax
        return fig

    def redraw(self) -> None:
        r1, pr2, lr2 = float(self.params["r1"]), float(self.params["power_r2"]), float(self.params["log_r2"])
        # row 0 of a (1, n) bias with the query at the end holds distances n−1 … 0; reverse it
        self.power.set_ydata(
            kerple_bias(r1, pr2, q_len=1, k_len=self.max_distance + 1, kind="power").squeeze(0)[0, ::-1]
        )
        self.log.set_ydata(kerple_bias(r1, lr2, q_len=1, k_len=self.max_distance + 1, kind="log").squeeze(0)[0, ::-1])
        texts = self.legend.get_texts()
        texts[3].set_text(f"KERPLE power\n$-{r1:g}\\,|m-n|^{{{pr2:g}}}$")
        texts[4].set_text(f"KERPLE log\n$-{r1:g}\\,\\ln(1 + {lr2:g}\\,|m-n|)$")
