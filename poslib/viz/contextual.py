"""Figures for notebook 10: FIRE's progressive interpolation, a learned FIRE function, CoPE's positions."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from matplotlib.figure import Figure

from ..fire import fire_bias, fire_inputs, fire_weights_from_bias
from ._live import LivePlot
from .style import legend_outside, new_figure, series

__all__ = ["FireInterpolationPlot", "fire_function_figure"]


class FireInterpolationPlot(LivePlot):
    """FIRE's input u = ψ(m − n)/ψ(max(L, m)) against the distance m − n, and its bias, for four query positions.

    The bias is an exact FIRE copy of ALiBi's slope-¼ line on distances 0 … L (built by
    :func:`poslib.fire_weights_from_bias`). Queries at m ≤ L all see ALiBi; a query at m > L
    feeds f a *compressed* input, so its bias is the same curve stretched over 0 … i.

    Slider speed: L moves both panels' limits, so their ticks are drawn again; c moves the curves and the
    left title only. Only the four rows drawn are computed (:meth:`_curves`), not the full bias matrix.
    """

    defaults: ClassVar[dict[str, Any]] = {"c": 1.0, "L": 64}
    bench_values: ClassVar[list[dict[str, Any]]] = [{"c": 0.05}, {"L": 16}, {"c": 4.0, "L": 128}]

    def _curves(self) -> tuple[list[int], list[np.ndarray], list[np.ndarray]]:
        """The four queries and, per query m, u and the bias at distances d = 0 … m (the rows the plot draws).

        Each row comes from :func:`poslib.fire_inputs` and :func:`poslib.fire_bias` with that query alone
        (``q_len=1``, ``k_len=m + 1``: the queries are the last of the keys), the same numbers as row m of
        the full (4L + 1)² matrices at a small fraction of their cost (the full bias took ~0.3 s at L = 128).
        """
        c, L = float(self.params["c"]), int(self.params["L"])
        queries = [L // 2, L, 2 * L, 4 * L]
        alibi = -0.25 * np.arange(L + 1, dtype=np.float64)[None]  # ALiBi's −m·d for one head, m = 1/4
        w = fire_weights_from_bias(alibi, c=c, L=float(L))
        u_rows, bias_rows = [], []
        for i in queries:
            u = fire_inputs(1, i + 1, c=c, L=float(L))[0]
            bias = fire_bias(w["w1"], w["b1"], w["w2"], w["b2"], q_len=1, k_len=i + 1, c=c, L=float(L), causal=True)
            u_rows.append(u[::-1])  # keys i … 0: distance d = 0 … i
            bias_rows.append(bias[0, 0, ::-1])
        return queries, u_rows, bias_rows

    def build(self) -> Figure:
        fig, (ax1, ax2) = new_figure(9.8, 4.2, ncols=2)
        self.ax1, self.ax2 = ax1, ax2
        queries, u, bias = self._curves()
        self.lines_u, self.lines_b = [], []
        for k, i in enumerate(queries):
            d = np.arange(i + 1)
            (a,) = ax1.plot(d, u[k], lw=1.5, label=f"query m = {i}", **series(k))
            (b,) = ax2.plot(d, bias[k], lw=1.5, label=f"query m = {i}", **series(k))
            self.lines_u.append(a)
            self.lines_b.append(b)
        ax1.set(xlabel="distance m − n (tokens)", ylabel="u = ψ(m − n) / ψ(max(L, m))", ylim=(-0.03, 1.03))
        ax2.set(xlabel="distance m − n (tokens)", ylabel="bias f(u)")
        self.legend = fig.legend(*ax1.get_legend_handles_labels(), loc="outside lower center", ncol=4)
        self._titles()
        return fig

    def _titles(self) -> None:
        c, L = self.params["c"], self.params["L"]
        # set_title marks a title changed even with the same text: the right one is set once
        self.ax1.set_title(f"FIRE's input, c = {c:.2f}, L = {L} tokens")
        if not self.ax2.get_title():
            self.ax2.set_title("FIRE fitted to ALiBi (slope 1/4) on 0 … L")

    def redraw(self) -> None:
        queries, u, bias = self._curves()
        for k, i in enumerate(queries):
            d = np.arange(i + 1)
            self.lines_u[k].set_data(d, u[k])
            self.lines_b[k].set_data(d, bias[k])
            self.legend.get_texts()[k].set_text(f"query m = {i}")
        for ax in (self.ax1, self.ax2):
            before = ax.dataLim.frozen()
            ax.relim()
            # rescale only when the data's extent moved (L moves it, c does not): autoscale_view depends on the
            # data limits alone, and setting the same limits again would redraw every tick of the axes
            if ax.dataLim.bounds != before.bounds or not hasattr(self, "_scaled"):
                ax.autoscale_view()
        self._scaled = True
        if self.ax1.get_ylim() != (-0.03, 1.03):
            self.ax1.set_ylim(-0.03, 1.03)
        self._titles()


def fire_function_figure(layers: list[dict[str, Any]], title: str) -> Figure:
    """The learned f_θ(u) of each head, one panel per layer; ``layers`` holds ``w1, b1, w2, b2, c, L`` each.

    The top axis converts u back to the distance it means for a query at m ≤ L: m − n = ((cL + 1)^u − 1)/c.
    """
    fig, axes = new_figure(min(9.8, 4.6 * len(layers) + 1.2), 3.8, ncols=len(layers), pyplot=True, squeeze=False)
    u = np.linspace(0, 1, 401)
    for ax, (layer, p) in zip(axes[0], enumerate(layers), strict=True):
        hidden = np.maximum(u[:, None] * p["w1"] + p["b1"], 0)
        f = hidden @ p["w2"].T + p["b2"]
        f = f - f[0]  # softmax ignores a constant per query: compare shapes, anchored at distance 0
        for h in range(f.shape[1]):
            ax.plot(u, f[:, h], lw=1.5, label=f"head {h}", **series(h, len(u)))
        # u = 1 is m − n = L itself (a learned, fractional L); the other ticks are round distances below it
        ticks = np.array([t for t in (0, 1, 4, 16, 64, 256) if t < 0.9 * p["L"]] + [p["L"]])
        labels = [str(int(t)) for t in ticks[:-1]] + [f"L = {p['L']:.1f}"]
        ax.set_xticks(np.log(p["c"] * ticks + 1) / np.log(p["c"] * p["L"] + 1), labels)
        ax.set(xlabel=f"distance m − n (tokens), query at m ≤ L\n(learned c = {p['c']:.2f})")
        ax.set(ylabel="f(u) − f(0)", title=f"layer {layer}")
    legend_outside(axes[0, -1])
    fig.suptitle(title)
    return fig
