"""Figures for notebook 01 (why position).

:class:`PermutationPlot` (sliders: the word order, the causal mask) shows a
seeded one-head attention layer reading 我 爱 你 in any order: its weights, the
same weights sorted back to the original order, and its outputs.
:func:`permutation_views` computes what the figure draws, so tests and the
notebook can check the numbers directly.
"""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

import numpy as np
import torch
from matplotlib.figure import Figure

from ..teaching.toy import PINYIN, TinySelfAttention, word_vectors
from ._live import LivePlot
from .style import new_figure

__all__ = ["ORDERS", "PermutationPlot", "permutation_views"]

ORDERS: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(len(PINYIN))))
DIM = 8


def permutation_views(
    order: tuple[int, ...], causal: bool, *, layer: TinySelfAttention | None = None, words: torch.Tensor | None = None
) -> dict[str, np.ndarray]:
    """Run the layer on the words in ``order``; returns float64 arrays.

    ``weights`` (3, 3) and ``outputs`` (3, d) in the given order, and
    ``weights_sorted`` / ``outputs_sorted``: the same, rows (and columns)
    put back in word order 0, 1, 2, ready to compare with the original sentence.
    """
    order = tuple(int(i) for i in order)
    if sorted(order) != list(range(len(PINYIN))):
        raise ValueError(f"order must be a permutation of {tuple(range(len(PINYIN)))}, got {order}")
    layer = TinySelfAttention(DIM, seed=0) if layer is None else layer
    words = word_vectors(DIM, seed=0) if words is None else words
    with torch.no_grad():
        out, w = layer(words[list(order)], causal=causal)
    back = np.argsort(order)  # position of word i in this order
    w, out = w.numpy(), out.numpy()
    return {"weights": w, "outputs": out, "weights_sorted": w[np.ix_(back, back)], "outputs_sorted": out[back]}


class PermutationPlot(LivePlot):
    """Attention of one seeded head over 我 爱 你 in a chosen order, with or without a causal mask.

    Left: the weights as the layer sees the sentence. Middle: the same weights
    with rows and columns sorted back to wǒ ài nǐ; without a mask they never
    change, whatever the order. Right: the outputs, one row per token.

    Slider speed: above the 150 ms goal. A new word order changes all four panels: four images,
    their tick labels (the words) and the title.
    """

    defaults: ClassVar[dict[str, Any]] = {"order": (0, 1, 2), "causal": False}
    bench_values: ClassVar[list[dict[str, Any]]] = [{"order": o} for o in ORDERS[1:]] + [
        {"causal": True, "order": (2, 1, 0)},
        {"causal": False, "order": (0, 1, 2)},
    ]

    def build(self) -> Figure:
        self.layer = TinySelfAttention(DIM, seed=0)
        self.words = word_vectors(DIM, seed=0)
        self.reference = permutation_views((0, 1, 2), False, layer=self.layer, words=self.words)
        fig, axes = new_figure(9.8, 3.6, ncols=3, gridspec_kw={"width_ratios": [1, 1, 1.5]})
        self.axes = axes
        n = len(PINYIN)
        self.images, self.texts = [], []
        titles = ("attention weights\n(sentence order)", "weights sorted back\nto wǒ ài nǐ", "outputs (sentence order)")
        for ax, title, xlabel in zip(axes[:2], titles[:2], ("key (attended-to token)", "key, word order"), strict=True):
            im = ax.imshow(np.zeros((n, n)), vmin=0, vmax=1, cmap="viridis")
            fig.colorbar(im, ax=ax, shrink=0.8, label="weight $a_{m,n}$", ticks=[0, 0.5, 1])
            ax.set(title=title, xlabel=xlabel, ylabel="query token", xticks=range(n), yticks=range(n))
            self.images.append(im)
            self.texts.append(
                [[ax.text(j, i, "", ha="center", va="center", fontsize=9) for j in range(n)] for i in range(n)]
            )
        axes[1].set_xticklabels(PINYIN)
        axes[1].set_yticklabels(PINYIN)
        lim = float(np.abs(self.reference["outputs"]).max()) * 1.1
        self.out_im = axes[2].imshow(np.zeros((n, DIM)), vmin=-lim, vmax=lim, cmap="RdBu_r", aspect="auto")
        fig.colorbar(self.out_im, ax=axes[2], shrink=0.8, label="output value", ticks=[-1, 0, 1])
        axes[2].set(title=titles[2], xlabel="output dimension", ylabel="token", yticks=range(n))
        self.status = fig.suptitle(" ")
        return fig

    def redraw(self) -> None:
        order, causal = tuple(self.params["order"]), bool(self.params["causal"])
        v = permutation_views(order, causal, layer=self.layer, words=self.words)
        labels = [PINYIN[i] for i in order]
        for ax in (self.axes[0], self.axes[2]):
            ax.set_yticklabels(labels)
        self.axes[0].set_xticklabels(labels)
        for im, texts, w in zip(self.images, self.texts, (v["weights"], v["weights_sorted"]), strict=True):
            im.set_data(w)
            for i, row in enumerate(texts):
                for j, t in enumerate(row):
                    t.set_text(f"{w[i, j]:.2f}")
                    t.set_color("black" if w[i, j] > 0.55 else "white")
        self.out_im.set_data(v["outputs"])
        gap = np.abs(v["weights_sorted"] - self.reference["weights"]).max()
        verdict = "same weights as wǒ ài nǐ, permuted" if gap < 1e-12 else f"weights changed (max |Δ| = {gap:.2f})"
        self.status.set_text(
            f"order: {' '.join(labels)}   ·   causal mask: {'on' if causal else 'off'}   ·   {verdict}"
        )
