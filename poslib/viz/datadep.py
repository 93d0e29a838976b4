"""Figures for notebook 12 (position from the data): FoX's forget gate, stick-breaking's stick, PaTH's reflections.

* :class:`ForgetGatePlot`: the bias Λ_m − Λ_n of the last query and its attention weights, for a constant
  gate (ALiBi's line) beside the same gate with one "reset" token whose gate closes (sliders: the slope
  μ = −log f, the reset token's position and its −log f).
* :class:`StickBreakingPlot`: the weights of one query against distance for a constant β, beside ALiBi's
  softmax with the matching slope −log(1 − β), and the stick left unspent (sliders: β, the number of keys).
* :class:`PathReflectionPlot`: a query carried through PaTH's reflections in a 2-D plane, the normals of
  consecutive tokens at an angle φ, beside RoPE's rotation by φ per token; and the scores against distance
  (sliders: φ, and PaTH's strength η, the parameter ``beta``).

Every curve comes from poslib's functions (:func:`poslib.forgetting_attention`,
:func:`poslib.stickbreaking_attention`, :func:`poslib.path_attn.path_scores`, :func:`poslib.rope_matrix`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..forgetting import forgetting_attention
from ..path_attn import path_scores
from ..rope import rope_matrix
from ..stickbreaking import stickbreaking_attention
from ._live import LivePlot
from .style import COLORS, legend_outside, new_figure

__all__ = ["ForgetGatePlot", "PathReflectionPlot", "StickBreakingPlot", "path_normals", "reflection_path"]


def fox_gates(length: int, slope: float, reset: int, depth: float) -> np.ndarray:
    """Two rows of log forget gates: all −``slope``; and the same with token ``reset`` at −``depth``."""
    log_f = np.full((2, length), -float(slope))
    log_f[1, int(reset)] = -float(depth)
    return log_f


class ForgetGatePlot(LivePlot):
    """FoX's bias Σ_{t=n+1..m} log f_t of the last query and its weights (equal content scores), two gate rows.

    Constant gate log f = −μ: the bias is ALiBi's line −μ·(m − n). A reset token p with log f_p = −μ_p (``depth``):
    every key *before* p (n < p) loses μ_p − μ more than with the constant gate; the reset token itself
    (n = p) does not, since the sum starts at n + 1. Weights on a log axis: a straight line with a step at the reset.
    """

    defaults: ClassVar[dict[str, Any]] = {"slope": 0.1, "reset": 20, "depth": 4.0}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"slope": 0.5},
        {"reset": 5},
        {"depth": 0.0},
        {"slope": 0.0, "reset": 28, "depth": 10.0},
        {"slope": 0.1, "reset": 20, "depth": 4.0},
    ]
    length = 32

    def curves(self) -> dict[str, np.ndarray]:
        """Key positions, the two bias rows and the two weight rows of the last query."""
        n = self.length
        log_f = fox_gates(n, self.params["slope"], self.params["reset"], self.params["depth"])
        lam = log_f.cumsum(-1)
        bias = lam[:, -1:] - lam  # Λ_m − Λ_n for the last query m = length − 1
        zeros = np.zeros((2, n, 1))
        _, weights = forgetting_attention(zeros[:, -1:], zeros, zeros, log_f)  # equal content scores
        return {"keys": np.arange(n), "bias": bias, "weights": weights[:, 0], "log_f": log_f}

    def build(self) -> Figure:
        fig, (a_bias, a_w) = new_figure(9.8, 4.3, ncols=2)
        n = self.length
        (self.alibi,) = a_bias.plot([], [], "-", color=COLORS[6], lw=1.0, label=r"ALiBi's line $-\mu\,(m-n)$")
        (self.const_bias,) = a_bias.plot([], [], "o", color=COLORS[0], ms=5, label="FoX, constant gate")
        (self.reset_bias,) = a_bias.plot([], [], "s", color=COLORS[1], ms=4, label="FoX, one reset token")
        self.line_b = a_bias.axvline(0, color=COLORS[2], ls=":", lw=1.5, label="reset token p")
        a_bias.set(xlabel="key position n (query m = 31)", ylabel=r"bias $\Lambda_m-\Lambda_n$", xlim=(-1, n))
        a_bias.yaxis.set_major_locator(MaxNLocator(6, integer=True))  # whole numbers: tick labels keep their width
        self.a_bias = a_bias
        (self.const_w,) = a_w.semilogy([], [], "o-", color=COLORS[0], ms=4, lw=1.0, label="constant gate")
        (self.reset_w,) = a_w.semilogy([], [], "s--", color=COLORS[1], ms=4, lw=1.0, label="one reset token")
        self.line_w = a_w.axvline(0, color=COLORS[2], ls=":", lw=1.5)
        a_w.set(xlabel="key position n", ylabel="attention weight (equal content scores)", xlim=(-1, n))
        a_w.minorticks_off()
        a_w.set_title("The weights: softmax of the bias")
        self.a_w = a_w
        legend_outside(a_bias, where="below", ncol=2)
        return fig

    def redraw(self) -> None:
        c = self.curves()
        keys, mu, r = c["keys"], float(self.params["slope"]), int(self.params["reset"])
        self.alibi.set_data(keys, -mu * (keys[-1] - keys))
        self.const_bias.set_data(keys, c["bias"][0])
        self.reset_bias.set_data(keys, c["bias"][1])
        self.const_w.set_data(keys, c["weights"][0])
        self.reset_w.set_data(keys, c["weights"][1])
        for line in (self.line_b, self.line_w):
            line.set_xdata([r, r])
        # the lower limit moves in steps of 5 (a new limit redraws every tick label: most moves keep it)
        self.a_bias.set_ylim(-5.0 * math.ceil((0.5 - float(c["bias"].min())) / 5.0), 0.5)
        # whole decades, down to the smallest weight drawn (1e-16 at most): a new limit redraws every tick label
        low = max(float(c["weights"].min()), 1e-16)
        self.a_w.set_ylim(min(10.0 ** math.floor(math.log10(low)), 1e-3), 1.5)
        before = float(c["weights"][1][:r].sum())
        self.a_bias.set_title(
            rf"$\log f = -{mu:.2f}$ everywhere, $\log f_p = -{float(self.params['depth']):.1f}$ at p = {r}"
        )
        self.a_w.set_title(f"The weights: keys before p keep {before:.1%} (one reset token)")


def stick_weights(beta: float, n_keys: int) -> tuple[np.ndarray, float]:
    """Stick-breaking weights of the last query over ``n_keys`` earlier keys at constant β, nearest first, and the rest.

    Built with :func:`poslib.stickbreaking_attention`: d = 1, q = 1, k = logit(β), scale 1, so every z_ij = logit(β).
    """
    logit = math.log(beta) - math.log1p(-beta)
    n = n_keys + 1  # the keys and the query
    q = np.ones((1, 1))
    k = np.full((n, 1), logit)
    v = np.eye(n)  # one-hot values: the output row holds the weights and, at the query, the rest of the stick
    out, weights = stickbreaking_attention(q, k, v, scale=1.0)
    return weights[0, -2::-1], float(out[0, -1])  # distance 1 … n_keys, and the stick left over


class StickBreakingPlot(LivePlot):
    """Stick-breaking at constant β: weight β(1 − β)^(t−1) at distance t, beside ALiBi's softmax of slope −log(1 − β).

    Both fall as (1 − β)^t, straight lines on a log axis; softmax renormalises over the keys it has, the stick
    does not: what the keys leave, (1 − β)^n, goes to the query's own value. Right: the stick spent up to
    distance t and the stick left, which meet their ends at the last key.
    """

    defaults: ClassVar[dict[str, Any]] = {"beta": 0.2, "n_keys": 8}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"beta": 0.05},
        {"beta": 0.8},
        {"n_keys": 4},
        {"n_keys": 64, "beta": 0.1},
        {"beta": 0.2, "n_keys": 8},
    ]

    def curves(self) -> dict[str, Any]:
        """Distances, stick-breaking weights, ALiBi's softmax weights, the stick spent and left, the rest."""
        beta, n = float(self.params["beta"]), int(self.params["n_keys"])
        weights, rest = stick_weights(beta, n)
        t = np.arange(1, n + 1)
        mu = -math.log1p(-beta)  # ALiBi's matching slope
        logits = -mu * t
        soft = np.exp(logits - logits.max())
        soft = soft / soft.sum()
        spent = np.cumsum(weights)
        left = np.exp(t * math.log1p(-beta))  # (1 − β)^t
        return {"t": t, "stick": weights, "alibi": soft, "spent": spent, "left": left, "rest": rest, "mu": mu}

    def build(self) -> Figure:
        fig, (a_w, a_s) = new_figure(9.8, 4.3, ncols=2)
        (self.sb,) = a_w.semilogy([], [], "o", color=COLORS[0], ms=5, label="stick-breaking")
        (self.al,) = a_w.semilogy([], [], "-", color=COLORS[1], lw=1.5, label=r"ALiBi softmax, $\mu=-\ln(1-\beta)$")
        a_w.set(xlabel="distance Δ = m − n (tokens)", ylabel="attention weight")
        a_w.minorticks_off()
        legend_outside(a_w, where="below", ncol=2)
        self.a_w = a_w
        (self.spent,) = a_s.plot([], [], "o-", color=COLORS[0], ms=3, lw=1.2, label="stick spent on keys ≤ Δ")
        (self.left,) = a_s.plot([], [], "s--", color=COLORS[2], ms=3, lw=1.2, label=r"stick left, $(1-\beta)^\Delta$")
        self.rest_line = a_s.axhline(0, color=COLORS[4], ls=":", lw=1.5, label="left for the query's own value")
        a_s.set(xlabel="distance Δ (tokens)", ylabel="fraction of the stick", ylim=(-0.03, 1.03))
        legend_outside(a_s, where="below", ncol=2)
        self.a_s = a_s
        return fig

    def redraw(self) -> None:
        c = self.curves()
        beta, n = float(self.params["beta"]), int(self.params["n_keys"])
        self.sb.set_data(c["t"], c["stick"])
        self.al.set_data(c["t"], c["alibi"])
        self.spent.set_data(c["t"], c["spent"])
        self.left.set_data(c["t"], c["left"])
        self.rest_line.set_ydata([c["rest"]] * 2)
        for ax in (self.a_w, self.a_s):
            ax.set_xlim(0, n + 1)
        low = min(float(c["stick"].min()), float(c["alibi"].min()))
        self.a_w.set_ylim(10.0 ** math.floor(math.log10(max(low, 1e-300) / 2)), 1.5)  # whole decades
        self.a_w.set_title(f"β = {beta:.2f} on every key, {n} keys: ALiBi = stick ÷ {1 - c['rest']:.3f}")
        self.a_s.set_title(f"The stick: {c['rest']:.1%} left after {n} keys")


def path_normals(phi: float, n_tokens: int) -> np.ndarray:
    """Unit normals w_s of ``n_tokens`` tokens in a plane, the last token's at angle 0, then φ, 0, φ, … going back."""
    angle = np.where((n_tokens - 1 - np.arange(n_tokens)) % 2 == 0, 0.0, float(phi))
    return np.stack([np.cos(angle), np.sin(angle)], -1)


def reflection_path(q: np.ndarray, normals: np.ndarray, beta: float) -> np.ndarray:
    """The query carried back through the tokens: u_0 = q, u_Δ = ℋ_{m−Δ+1} u_{Δ−1}, ℋ = I − η w wᵀ; ``(n_tokens, 2)``.

    u_Δ is ℋ_{m−Δ+1} ⋯ ℋ_m q, so the score on the key Δ tokens back is u_Δᵀ k (what :func:`path_scores` computes).
    """
    path = [np.asarray(q, dtype=np.float64)]
    for w in normals[::-1][:-1]:  # the query's own token first, the first token never used
        u = path[-1]
        path.append(u - beta * (w @ u) * w)
    return np.array(path)


class PathReflectionPlot(LivePlot):
    """PaTH in a plane: reflections whose normals alternate between angle 0 and φ turn the query by 2φ every two tokens.

    Left: the query carried back through the tokens (PaTH, filled) and RoPE's query rotated by t·φ (open);
    the two mirror lines dashed. Right: the score on a key equal to the query, t tokens back: PaTH from
    :func:`poslib.path_attn.path_scores`, RoPE's cos(t·φ) from :func:`poslib.rope_matrix`. At η = 2 they agree
    at every even distance; an odd distance is one reflection more, which no rotation is. η = 0 is NoPE.
    η is PaTH's strength (the paper's β_t, the parameter ``beta``; β is stick-breaking's break fraction here).
    """

    defaults: ClassVar[dict[str, Any]] = {"phi": 20, "beta": 2.0}
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"phi": 45},
        {"phi": 5},
        {"beta": 1.0},
        {"beta": 0.0},
        {"phi": 20, "beta": 2.0},
    ]
    n_tokens = 13
    query_angle = math.radians(60)

    def query(self) -> np.ndarray:
        return np.array([math.cos(self.query_angle), math.sin(self.query_angle)])

    def curves(self) -> dict[str, np.ndarray]:
        """Distances, PaTH's and RoPE's scores, PaTH's carried query and RoPE's rotated query."""
        phi, beta, n = math.radians(float(self.params["phi"])), float(self.params["beta"]), self.n_tokens
        q = self.query()
        w = path_normals(phi, n)
        scores = path_scores(q[None], np.tile(q, (n, 1)), w, np.full(n, beta), scale=1.0)[0, ::-1]
        t = np.arange(n)
        rope = np.array([rope_matrix(s * phi, 2) @ q for s in t])  # R(t·φ) q: d = 2, θ = 1 rad per unit position
        return {"t": t, "path": scores, "rope": rope @ q, "carried": reflection_path(q, w, beta), "rotated": rope}

    def build(self) -> Figure:
        fig, (a_p, a_s) = new_figure(9.8, 4.6, ncols=2, gridspec_kw={"width_ratios": [1, 1.25]})
        s = np.linspace(0, 2 * math.pi, 181)
        a_p.plot(np.cos(s), np.sin(s), color="0.75", lw=1.0)
        (self.mirror_a,) = a_p.plot(
            [0, 0], [-1.3, 1.3], "--", color=COLORS[6], lw=1.0, label="mirror ⊥ w, tokens m, m−2, …"
        )
        (self.mirror_b,) = a_p.plot([], [], "-.", color=COLORS[3], lw=1.2, label="mirror ⊥ w, tokens m−1, m−3, …")
        (self.carried,) = a_p.plot([], [], "o-", color=COLORS[0], ms=5, lw=0.6, label="PaTH: q after Δ reflections")
        (self.rotated,) = a_p.plot([], [], "o", mfc="none", mec=COLORS[1], ms=9, mew=1.5, label="RoPE: q turned by Δ·φ")
        (self.start,) = a_p.plot(*self.query(), "*", color=COLORS[4], ms=12, label="q (Δ = 0)")
        a_p.set(xlim=(-1.35, 1.35), ylim=(-1.35, 1.35), aspect="equal", xlabel="plane coordinate 1")
        a_p.set_ylabel("plane coordinate 2")
        legend_outside(a_p, where="below")
        self.a_p = a_p
        (self.s_path,) = a_s.plot([], [], "o-", color=COLORS[0], ms=5, lw=1.0, label="PaTH")
        (self.s_rope,) = a_s.plot([], [], "s--", color=COLORS[1], ms=4, lw=1.0, label=r"RoPE, $\cos(\Delta\varphi)$")
        a_s.set(
            xlabel="distance Δ = m − n (tokens)",
            ylabel=r"score $q_m^\top \mathcal{H}_m\cdots \mathcal{H}_{n+1}k_n$ (k = q)",
        )
        a_s.set(xlim=(-0.5, self.n_tokens - 0.5), ylim=(-1.1, 1.1))
        legend_outside(a_s, where="below", ncol=2)
        self.a_s = a_s
        return fig

    def redraw(self) -> None:
        c = self.curves()
        phi_deg, beta = float(self.params["phi"]), float(self.params["beta"])
        phi = math.radians(phi_deg)
        d = np.array([-math.sin(phi), math.cos(phi)]) * 1.3  # the mirror line ⊥ w_b = (cos φ, sin φ)
        self.mirror_b.set_data([-d[0], d[0]], [-d[1], d[1]])
        self.carried.set_data(c["carried"][:, 0], c["carried"][:, 1])
        self.rotated.set_data(c["rotated"][:, 0], c["rotated"][:, 1])
        self.s_path.set_data(c["t"], c["path"])
        self.s_rope.set_data(c["t"], c["rope"])
        self.a_p.set_title(f"Normals at 0° and φ = {phi_deg:.0f}°, η = {beta:.2f}")
        even = float(np.abs(c["path"] - c["rope"])[::2].max())
        self.a_s.set_title(
            f"Two reflections turn by 2φ = {2 * phi_deg:.0f}°: PaTH = RoPE at even Δ"
            if even < 1e-9
            else f"η = {beta:.2f}: not reflections; at even Δ PaTH − RoPE reaches {even:.2f}"
        )
