"""The figure of notebook 00 (a tour of poslib): one family of positional encodings at a time, against distance.

:class:`SchemeTourPlot` draws, for the family a dropdown picks, what position contributes to the score of a
query m and a key n a distance Δ = m − n apart, for Δ = 0 … ``span`` − 1: the sinusoidal table's dot product, RoPE's
score of a vector with itself, T5's bucket, ALiBi's and KERPLE's bias. Every number drawn comes from poslib.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from matplotlib.figure import Figure

from ..alibi import alibi_bias, alibi_slopes
from ..kerple import kerple_bias
from ..rope import apply_rope
from ..rope_scaling import rope_inv_freq
from ..sinusoidal import sinusoidal_table
from ..t5 import t5_relative_bucket
from ._live import LivePlot
from .style import COLORS, new_figure

__all__ = ["TOUR_SCHEMES", "SchemeTourPlot", "tour_curves"]

TOUR_SCHEMES = ("sinusoidal", "RoPE", "T5 buckets", "ALiBi", "KERPLE")
DIM = 64  # the model width of the tour's other cells
T5_MAX_DISTANCE = 128  # T5's default max_distance: every key further back shares one bucket

# per scheme: the title (what is drawn), the y label, and what to look for
_TEXT = {
    "sinusoidal": (
        "Sinusoidal table: similarity PE(m)·PE(n) ÷ (d/2), d = 64",
        "dot product ÷ (d/2)",
        "falls over the first tokens, then wiggles: near positions look alike, far ones only roughly",
    ),
    "RoPE": (
        "RoPE: score of a random query with itself, rotated to positions m and n (÷ the score at Δ = 0)",
        "score ÷ score at Δ = 0",
        "the same at every absolute position (only Δ matters); it drifts down while it oscillates",
    ),
    "T5 buckets": (
        "T5: the bucket of a key Δ tokens back (32 buckets, causal; one learned bias each)",
        "bucket index",
        f"exact for small Δ, logarithmic further out, one bucket for every Δ ≥ {T5_MAX_DISTANCE} (dotted)",
    ),
    "ALiBi": (
        r"ALiBi: bias $-\mu_h\,\Delta$, head 1 of 8 (solid, $\mu_1$ = 1/2) and head 8 (dashed, $\mu_8$ = 1/256)",
        "bias added to the score",
        "falls in a straight line without end: a steep head looks local, a gentle one far",
    ),
    "KERPLE": (
        "KERPLE (log): bias −r₁·log(1 + r₂·Δ), r₁ = 1, r₂ = 0.5",
        "bias added to the score",
        "falls fast near the query, then ever more slowly: far keys keep a chance",
    ),
}


def tour_curves(scheme: str, span: int) -> dict[str, np.ndarray[Any, np.dtype[np.float64]]]:
    """The curves :class:`SchemeTourPlot` draws for ``scheme`` over distances Δ = 0 … ``span`` − 1, by label.

    The first curve is the scheme's; ALiBi has a second (its gentlest head of eight). Labels name the curves.
    """
    delta = np.arange(span)
    if scheme == "sinusoidal":
        pe = sinusoidal_table(span, DIM)
        return {"d = 64": (pe[0] @ pe.T) / (DIM / 2)}
    if scheme == "RoPE":
        inv_freq, _ = rope_inv_freq(DIM)
        q = np.random.default_rng(0).standard_normal((1, DIM))
        rotated = apply_rope(np.repeat(q, span, 0), delta, inv_freq)
        score = rotated @ q[0]  # q at position 0 against q at position Δ: depends on Δ only
        return {"random q, d = 64": score / score[0]}
    if scheme == "T5 buckets":
        buckets = t5_relative_bucket(-delta, bidirectional=False, max_distance=T5_MAX_DISTANCE)
        return {"32 buckets": np.asarray(buckets, dtype=np.float64)}
    if scheme == "ALiBi":
        slopes = alibi_slopes(8)
        row = alibi_bias(8, 1, span, causal=True)[:, 0, ::-1]  # index t: the key t tokens back
        return {
            f"head 1 (μ = 1/{round(1 / slopes[0])})": row[0].astype(np.float64),
            f"head 8 (μ = 1/{round(1 / slopes[7])})": row[7].astype(np.float64),
        }
    if scheme == "KERPLE":
        row = kerple_bias(1.0, 0.5, q_len=1, k_len=span, kind="log")[0][0, ::-1]
        return {"r₁ = 1, r₂ = 0.5": np.asarray(row, dtype=np.float64)}
    raise ValueError(f"scheme must be one of {list(TOUR_SCHEMES)}, got {scheme!r}")


class SchemeTourPlot(LivePlot):
    """What each family of positional encodings adds to a query–key score, against the distance Δ = m − n.

    ``scheme`` (one of :data:`TOUR_SCHEMES`) picks the family, ``span`` the distances shown (Δ < span): a
    short span shows the fine structure (T5's exact buckets, RoPE's first oscillations), a long one the trend
    (ALiBi's bias keeps falling, T5's bucket stops at 128). The title says what is drawn; the line under it,
    what to look for.
    """

    defaults: ClassVar[dict[str, Any]] = {"scheme": "sinusoidal", "span": 256}
    spans = (32, 64, 128, 256, 512, 1024, 2048, 4096)  # the notebook's span slider
    bench_values: ClassVar[list[dict[str, Any]]] = [
        {"scheme": "RoPE"},
        {"scheme": "T5 buckets"},
        {"scheme": "ALiBi", "span": 4096},
        {"scheme": "KERPLE", "span": 64},
        {"scheme": "sinusoidal", "span": 256},
    ]

    def build(self) -> Figure:
        fig, ax = new_figure(9.8, 3.9)
        ax.set_xlabel("distance Δ = m − n, query − key (tokens)")
        # changing headings are the figure's title and a plain text, not an axes title: that is re-placed with the
        # ticks on every change
        self.title = fig.suptitle(" ", y=0.985, va="top", fontsize=11)
        self.look = ax.text(
            0.5, 1.02, "", transform=ax.transAxes, ha="center", va="bottom", fontsize=10, style="italic", color="0.25"
        )
        self.ylabel = ax.set_ylabel(" ")
        # no legend: the title names what each line is (one line, or ALiBi's solid and dashed heads)
        (self.first,) = ax.plot([], [], color=COLORS[0], lw=2)
        (self.second,) = ax.plot([], [], color=COLORS[1], lw=2, ls="--")
        self.cutoff = ax.axvline(T5_MAX_DISTANCE, color="0.45", ls=":", lw=1.5)
        ax.axhline(0, color="0.75", lw=0.8, zorder=0)
        self.ax = ax
        # fixed margins instead of the constrained layout: it would be solved for the first scheme's tick labels
        # and y label, and cut off a wider one (ALiBi's −2,000) when the dropdown moves
        fig.set_layout_engine(None)
        fig.subplots_adjust(left=0.085, right=0.985, top=0.85, bottom=0.14)
        return fig

    def redraw(self) -> None:
        scheme, span = str(self.params["scheme"]), int(self.params["span"])
        curves = tour_curves(scheme, span)
        delta = np.arange(span)
        ys = list(curves.values())
        for i, line in enumerate((self.first, self.second)):
            line.set_visible(i < len(ys))
            line.set_data(delta, ys[i] if i < len(ys) else [])
        self.first.set_drawstyle("steps-post" if scheme == "T5 buckets" else "default")  # one bucket per integer Δ
        self.cutoff.set_visible(scheme == "T5 buckets" and span > T5_MAX_DISTANCE)
        values = np.concatenate(list(curves.values()))
        lo, hi = float(values.min()), float(values.max())
        pad = 0.06 * max(hi - lo, 1e-9)
        self.ax.set_xlim(0, span - 1)
        self.ax.set_ylim(min(lo, 0.0) - pad, max(hi, 0.0) + pad)
        title, ylabel, look = _TEXT[scheme]
        self.title.set_text(f"{title}; Δ = 0 … {span - 1:,}")
        self.look.set_text(f"look for: {look}")
        self.ylabel.set_text(ylabel)
