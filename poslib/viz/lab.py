"""Figures for notebook 08 (the extrapolation lab): perplexity and passkey retrieval against length, and attention.

Every figure is drawn from a results dictionary of :func:`poslib.lab.run_lab` (or the JSON file it
writes): perplexity curves, perplexity beside passkey accuracy, the depth × length passkey map per
scheme, and per-head attention profiles (:func:`poslib.lab.attention_profile`). They have no slider,
because the knobs of this notebook are training runs, not cheap redraws.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

__all__ = [
    "SCHEME_STYLE",
    "attention_profile_figure",
    "finetune_curves_figure",
    "passkey_map_figure",
    "perplexity_figure",
    "ppl_and_passkey_figure",
]

# RoPE's inference-time variants share dashes (one family) but not colours (Okabe-Ito hues, told apart).
SCHEME_STYLE: dict[str, dict[str, Any]] = {
    "nope": dict(color="0.45", ls="-", marker="o"),
    "learned": dict(color="#8c564b", ls="-", marker="s"),
    "sinusoidal": dict(color="#e377c2", ls="-", marker="D"),
    "rope": dict(color="#1f77b4", ls="-", marker="o", lw=2.2),
    "rope+pi": dict(color="#E69F00", ls="--", marker="v"),
    "rope+ntk": dict(color="#009E73", ls="--", marker="^"),
    "rope+dynamic": dict(color="#CC79A7", ls="--", marker="<"),
    "rope+yarn": dict(color="#56B4E9", ls=":", marker=">"),
    "rope+logn": dict(color="#000000", ls="-.", marker="x"),
    "xpos": dict(color="#9467bd", ls="-", marker="P"),
    "t5": dict(color="#bcbd22", ls="-", marker="*"),
    "alibi": dict(color="#d62728", ls="-", marker="o", lw=2.2),
    "alibi+logn": dict(color="#ff9896", ls="-.", marker="x"),
    "kerple": dict(color="#ff7f0e", ls="-", marker="h"),
    "sandwich": dict(color="#2ca02c", ls="-", marker="p"),
    "fire": dict(color="#b15928", ls="-", marker="d"),
    "cope": dict(color="#01665e", ls="-", marker="s"),
    "rope+random": dict(color="#4292c6", ls="--", marker="D"),  # trained, but of the RoPE family
    # notebook 11: remaps dash-dotted, fine-tuned models solid with open markers; each pairs its
    # training-free namesake's hue (ft_pi with pi, ft_ntk with ntk, ft_yarn with yarn)
    "rope+rerope": dict(color="#D55E00", ls="-.", marker="s"),
    "rope+leaky_rerope": dict(color="#8c510a", ls="-.", marker="D"),
    "rope+self_extend": dict(color="#7570b3", ls="-.", marker="P"),
    "rope+ft": dict(color="0.35", ls="-", marker="o", mfc="white"),
    "rope+ft_pi": dict(color="#E69F00", ls="-", marker="v", mfc="white"),
    "rope+ft_ntk": dict(color="#009E73", ls="-", marker="^", mfc="white"),
    "rope+ft_yarn": dict(color="#56B4E9", ls="-", marker=">", mfc="white"),
    # notebook 12: position from the data (no index), dashed; the RoPE/NoPE hybrid in RoPE's family
    "fox": dict(color="#6a3d9a", ls="--", marker="o"),
    "fox+rope": dict(color="#cab2d6", ls="--", marker="^", mec="#6a3d9a"),
    "stickbreaking": dict(color="#e7298a", ls="--", marker="s"),
    "rope_nope_hybrid": dict(color="#1f77b4", ls=":", marker="x", mfc="white"),
    "rope+dca": dict(color="#1b9e77", ls="-.", marker="*"),
    # notebook 13: RoPE dropped after training reads as a NoPE model: NoPE's grey, dashed, open markers
    "rope+drope": dict(color="0.45", ls="--", marker="o", mfc="white"),
}


def _seed_range(results: dict[str, Any], key: str, name: str, L: int) -> tuple[float, float] | None:
    """(min, max) over seeds of perplexity or passkey accuracy (mean over depths) at length ``L``; None if unknown."""
    runs = results.get("runs", {}).get(name) or {}
    values = []
    for run in runs.values():
        v = run.get(key, {}).get(str(L))
        if v is None:
            return None
        values.append(sum(v.values()) / len(v) if isinstance(v, dict) else v)
    return (min(values), max(values)) if values else None


def perplexity_figure(
    results: dict[str, Any], schemes: Sequence[str] | None = None, *, ylim: tuple[float, float] | None = None
) -> Figure:
    """Validation perplexity against evaluation length (log₂ x axis), one line per scheme.

    Error bars (from the lowest to the highest seed) appear when the run had
    several seeds. Undefined points (a learned table beyond its length) are left
    out and marked "not defined" at the first missing length.
    """
    cfg = results["config"]
    lens, train_len = list(cfg["eval"]["eval_lens"]), cfg["model"]["train_len"]
    schemes = list(schemes) if schemes is not None else list(results["ppl"])
    fig, ax = plt.subplots(figsize=(9.8, 5.2), layout="constrained")
    finite = []
    for name in schemes:
        ys = [results["ppl"][name][str(L)] for L in lens]
        xs = [L for L, y in zip(lens, ys, strict=True) if y is not None]
        yv = [y for y in ys if y is not None]
        ranges = [_seed_range(results, "ppl", name, L) for L in xs]
        several = len(results.get("runs", {}).get(name) or {}) > 1 and all(r is not None for r in ranges)
        style = {"ls": "-", "marker": "o", **SCHEME_STYLE.get(name, {})}
        # A scheme undefined beyond some length says so in its legend entry, not in a note over the curves.
        label = name if len(xs) == len(lens) else f"{name} (not defined beyond {xs[-1] if xs else 0})"
        if several:
            below = [max(0.0, y - r[0]) for y, r in zip(yv, ranges, strict=True) if r is not None]
            above = [max(0.0, r[1] - y) for y, r in zip(yv, ranges, strict=True) if r is not None]
            ax.errorbar(xs, yv, yerr=[below, above], capsize=3, label=label, **style)
        else:
            ax.plot(xs, yv, label=label, **style)
        finite += yv
    ax.axvline(train_len, color="k", lw=1, ls=":")
    ax.text(train_len, 1.01, r"$L_{\mathrm{train}}$", transform=ax.get_xaxis_transform(), ha="center", va="bottom")
    ax.set_xscale("log", base=2)
    ax.set_xticks(lens, [f"{L}\n({L // train_len}×)" for L in lens])
    if ylim is not None:
        ax.set_ylim(*ylim)
    elif finite:
        # Blow-ups beyond 4× the best perplexity are clipped (and named), so the
        # differences between the good curves stay readable.
        lo = min(finite)
        top = max(v for v in finite if v <= 4 * lo) * 1.04
        ax.set_ylim(lo * 0.97, top)
        clipped = [n for n in schemes if any(v is not None and v > top for v in results["ppl"][n].values())]
        for k, name in enumerate(clipped):
            worst = max(v for v in results["ppl"][name].values() if v is not None)
            ax.annotate(  # outside the axes, below the legend: a note inside would cross the clipped curve
                f"{name} off the chart\n(up to {worst:.0f})",
                xy=(1.01, 0.1 * k),
                xycoords="axes fraction",
                ha="left",
                va="bottom",
                fontsize=9,
                color=SCHEME_STYLE.get(name, {}).get("color", "k"),
            )
    ax.set_xlabel("evaluation length L (bytes; log scale)")
    ax.set_ylabel("validation perplexity (bytes)")
    ax.set_title(f"Trained at $L_{{\\mathrm{{train}}}}$ = {train_len}, evaluated on non-overlapping windows of L")
    ax.grid(alpha=0.3, which="both")
    # Outside the axes, so no legend ever covers a curve.
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig


def attention_profile_figure(profiles: dict[str, dict[str, dict[str, np.ndarray]]], train_len: int) -> Figure:
    """Mean attention distance and entropy per (layer, head), for each scheme at each evaluation length.

    ``profiles[scheme][label]`` is a :func:`poslib.lab.attention_profile` result,
    ``label`` naming the evaluation length (e.g. "1×", "8×"; labels starting with
    "1" are drawn pale). Bars are grouped by layer·head; a dotted line marks
    L_train on the distance panel.
    """
    fig, axes = plt.subplots(1, 2, figsize=(9.8, 4.6), layout="constrained")
    entries = [(scheme, label, prof) for scheme, by_len in profiles.items() for label, prof in by_len.items()]
    n_layers, n_heads = next(iter(entries))[2]["entropy"].shape
    x = np.arange(n_layers * n_heads)
    width = 0.8 / len(entries)
    for k, (scheme, label, prof) in enumerate(entries):
        color = SCHEME_STYLE.get(scheme, {}).get("color", None)
        alpha = 0.45 if label.startswith("1") else 1.0
        for ax, key in zip(axes, ("distance", "entropy"), strict=True):
            ax.bar(
                x + (k - (len(entries) - 1) / 2) * width,
                prof[key].ravel(),
                width,
                color=color,
                alpha=alpha,
                label=f"{scheme} at {label}",
            )
    ticks = [f"L{layer}·h{head}" for layer in range(n_layers) for head in range(n_heads)]
    axes[0].axhline(train_len, color="k", ls=":", lw=1)
    axes[0].text(1.01, train_len, r"$L_{\mathrm{train}}$", transform=axes[0].get_yaxis_transform(), va="center")
    axes[0].set_ylabel(r"mean distance $\sum_j w_{ij}\,(i-j)$ (bytes)")
    axes[0].set_title("How far each head looks (queries in the last quarter)")
    axes[1].set_ylabel("attention entropy (nats)")
    axes[1].set_title("How spread out each head's attention is")
    for ax in axes:
        ax.set_xticks(x, ticks, rotation=45, fontsize=9)
        ax.set_xlabel("layer · head")
        ax.grid(alpha=0.3, axis="y")
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", fontsize=9)  # beside the bars, never over them
    return fig


def passkey_map_figure(results: dict[str, Any], schemes: Sequence[str], *, ncols: int = 5) -> Figure:
    """The "needle" picture: exact-match passkey accuracy per needle depth (rows) and length (columns), per scheme.

    Each cell is the mean over seeds of ``results["passkey_by_depth"][scheme][L][depth]``; grey
    cells are lengths the scheme does not define. The dotted line separates L_train from the
    lengths beyond it.
    """
    lens, train_len = list(results["config"]["eval"]["eval_lens"]), results["config"]["model"]["train_len"]
    depths = list(results["config"]["retrieval"]["passkey_depths"])
    nrows = -(-len(schemes) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(9.8, 2.1 * nrows + 0.6), layout="constrained", squeeze=False)
    image = None
    for ax, name in zip(axes.flat, schemes, strict=False):
        by_len = results["passkey_by_depth"][name]
        grid = np.array(
            [[np.nan if by_len[str(L)] is None else by_len[str(L)][str(d)] for L in lens] for d in depths], dtype=float
        )
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto", origin="upper")
        ax.set_facecolor("0.85")
        ax.axvline(0.5, color="w", ls=":", lw=1.2)
        ax.set_title(name, fontsize=10, color=SCHEME_STYLE.get(name, {}).get("color", "k"))
        ax.set_xticks(range(len(lens)), [f"{L // train_len}" for L in lens], fontsize=9)
        ax.set_yticks(range(len(depths)), [f"{d}%" for d in depths], fontsize=9)
    for ax in axes.flat[len(schemes) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("needle depth (% of filler)", fontsize=9)
    for ax in axes[-1, :]:
        ax.set_xlabel(r"length ($\times L_{\mathrm{train}}$)", fontsize=9)
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label="exact-match accuracy (seed mean)")
    fig.suptitle(f"Passkey retrieval, trained at $L_{{\\mathrm{{train}}}}$ = {train_len} bytes", fontsize=11)
    return fig


def ppl_and_passkey_figure(results: dict[str, Any], schemes: Sequence[str], *, log_ppl: bool = False) -> Figure:
    """Perplexity (left) and passkey accuracy (right) against length: seed mean, bars from the lowest to the
    highest seed (a range, not ± a standard deviation, so an accuracy bar never leaves [0, 1]).

    ``log_ppl``: a log perplexity axis with plain tick labels, for curves that rise by ×5 beside flat ones.
    """
    lens, train_len = list(results["config"]["eval"]["eval_lens"]), results["config"]["model"]["train_len"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.8, 4.6), layout="constrained")
    for ax, key in zip((left, right), ("ppl", "passkey"), strict=True):
        for name in schemes:
            points = [(L, results[key][name][str(L)]) for L in lens]
            points = [(L, v) for L, v in points if v is not None]
            ranges = [_seed_range(results, key, name, L) or (v, v) for L, v in points]
            style = {"ls": "-", "marker": "o", **SCHEME_STYLE.get(name, {})}
            ax.errorbar(
                [p[0] for p in points],
                [p[1] for p in points],
                yerr=[
                    [max(0.0, v - lo) for (_, v), (lo, _) in zip(points, ranges, strict=True)],
                    [max(0.0, hi - v) for (_, v), (_, hi) in zip(points, ranges, strict=True)],
                ],
                capsize=3,
                label=name,
                **style,
            )
        ax.axvline(train_len, color="k", lw=1, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xticks(lens, [f"{L}\n({L // train_len}×)" for L in lens])
        ax.set_xlabel("evaluation length L (bytes; log scale)")
        ax.grid(alpha=0.3, which="both")
    if log_ppl:
        left.set_yscale("log")
        low, high = left.get_ylim()
        ticks = [t for t in (2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100, 200) if low <= t <= high]
        left.set_yticks(ticks, [str(t) for t in ticks])
        left.minorticks_off()
    left.set_ylabel("validation perplexity (bytes)")
    left.set_title("Perplexity: lower is better", fontsize=11)
    right.set_ylabel("passkey exact-match accuracy (mean over depths)")
    right.set_ylim(-0.03, 1.03)
    right.set_title("Passkey retrieval: higher is better", fontsize=11)
    right.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig


def finetune_curves_figure(results: dict[str, Any], methods: Sequence[str]) -> Figure:
    """Held-out loss during fine-tuning, per method: the seed mean, shaded from the lowest to the highest seed.

    Reads ``training[method][seed]["heldout"]`` (``steps``, ``loss``), which ``--heldout-every`` records; the
    dotted line is the trained model's own held-out loss before fine-tuning (step 0 of the control).
    """
    fig, ax = plt.subplots(figsize=(9.8, 4.4), layout="constrained")
    for name in methods:
        records = [r["heldout"] for r in results["training"][name].values() if "heldout" in r]
        if not records:
            raise ValueError(f"{name} has no held-out curve (run --extend with --heldout-every)")
        steps = records[0]["steps"]
        losses = np.array([r["loss"] for r in records], dtype=float)
        style = {"ls": "-", **SCHEME_STYLE.get(name, {})}
        style.pop("marker", None)
        (line,) = ax.plot(steps, losses.mean(0), label=name, **style)
        ax.fill_between(steps, losses.min(0), losses.max(0), color=line.get_color(), alpha=0.15, lw=0)
    start = np.mean([r["heldout"]["loss"][0] for r in results["training"][methods[0]].values()])
    ax.axhline(start, color="k", lw=1, ls=":", label="before fine-tuning (seed mean)")
    f_len = results.get("extension", {}).get("finetune_len")
    ax.set_xlabel("fine-tuning step")
    ax.set_ylabel(f"held-out loss at {f_len} bytes (nats per byte)")
    ax.set_title("Fine-tuning at the longer length: held-out loss (line: seed mean; band: lowest to highest seed)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig
