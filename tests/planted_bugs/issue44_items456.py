"""Planted bugs of issue 44's items 4, 5 and 6, each a mistake a port makes, each caught by notebook 13 and a unit test.

N-D axial RoPE's generators with the axes in each other's blocks (the row turning the column's features); the
inverse Householder strength of PaTH's corrected keys with its sign slipped, η/(1 − η‖w‖²) instead of
η/(η‖w‖² − 1); and VideoRoPE's time put on the fastest pairs, as Qwen2-VL's M-RoPE does, instead of the slowest.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import poslib.mm_rope as mm_rope
import poslib.path_attn as path_attn

from . import bug, swap

# poslib.lie_rope is also the name of a function poslib re-exports: take the module itself
lie_rope = importlib.import_module("poslib.lie_rope")

NOTEBOOK_13 = ("notebooks/13_position_in_late_2026_models.ipynb",)


@bug(
    "axial_generators_axes_swapped",
    "axial_rope_generators puts axis k's rotation in the block of axis n − 1 − k (the row turns the column's features)",
    tests=("tests/test_lie_rope.py",),
    notebooks=NOTEBOOK_13,
    thread="issue 44 item 4 (13's check of exp(row·A_row + col·A_col) against 09's 2-D RoPE)",
)
def _axial_generators_axes_swapped() -> None:
    original = lie_rope.axial_rope_generators

    def swapped(inv_freq: Any, n_axes: int, *, layout: str = "interleaved") -> Any:
        return original(inv_freq, n_axes, layout=layout)[::-1].copy()

    swap(original, swapped)


@bug(
    "path_deltanet_inverse_strength_sign",
    "path_deltanet_qk's keys built with the inverse strength η/(1 − η‖w‖²) instead of η/(η‖w‖² − 1)",
    tests=("tests/test_path_attn.py",),
    notebooks=NOTEBOOK_13,
    thread="issue 44 item 5 (Sherman–Morrison: (I − η w wᵀ)⁻¹ = I + η/(1 − η‖w‖²) w wᵀ, a sign to keep)",
)
def _path_deltanet_inverse_strength_sign() -> None:
    original = path_attn.path_deltanet_qk

    def slipped(q: Any, k: Any, w: Any, beta: Any) -> Any:
        q_hat, _ = original(q, k, w, beta)
        wrong = beta / (1.0 - beta * (np.asarray(w) ** 2).sum(-1))
        k_hat, _ = original(k, k, w, wrong)  # forward factors with the slipped strength: H(η'_wrong), not H⁻¹
        return q_hat, k_hat

    swap(original, slipped)


@bug(
    "videorope_time_on_fastest_pairs",
    "mm_rope_pair_axes gives VideoRoPE's and HoPE's time the n_t fastest pairs (Qwen2-VL's place), not the slowest",
    tests=("tests/test_mm_rope.py",),
    notebooks=NOTEBOOK_13,
    thread="Wiselnn570/VideoRoPE apply_m_modify_multimodal_rotary_pos_emb: mrope_section reversed, t last",
)
def _videorope_time_on_fastest_pairs() -> None:
    original = mm_rope.mm_rope_pair_axes

    def fastest(mrope_section: Any, scheme: str) -> Any:
        axes = original(mrope_section, scheme)
        if scheme in ("videorope", "hope"):
            n_t = int(mrope_section[0])
            return np.concatenate([np.zeros(n_t, dtype=np.int64), axes[: len(axes) - n_t]])
        return axes

    swap(original, fastest)
