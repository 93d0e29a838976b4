"""Planted bugs behind notebook 09's repaired checks (issue 23 items 8, 10, 12): the RoPE base bound,
M-RoPE's sections, p-RoPE's kept end, and Llama 4's NoPE-layer temperature (its first step and its period)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import poslib.mrope as mrope
import poslib.rope_configs as configs

from . import bug, swap


@bug(
    "rope_base_interior_crossing",
    "RoPE base bound found by one bisection on ln b: an interior crossing of a non-monotone condition, "
    "not the smallest passing base",
    tests=("tests/test_rope_production.py",),
    notebooks=("notebooks/09_rope_in_production.ipynb",),
    thread="Men et al. 2024 (arXiv:2405.14591): the bound is the smallest base with B(m) ≥ 0 for every m < L",
)
def _rope_base_interior_crossing() -> None:
    original = configs.rope_base_lower_bound

    def wrong(context_len: int, head_dim: int, **kw: Any) -> float:
        exps = np.arange(0, head_dim, 2) / head_dim
        m = np.arange(context_len, dtype=np.float64)[:, None]

        def holds(x: float) -> bool:
            return bool(np.cos(m * math.exp(x) ** -exps).sum(axis=1).min() >= 0)

        lo, hi = math.log(2.0), math.log(1e12)  # fails at e^lo, holds at e^hi: lands on some crossing
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if holds(mid) else (mid, hi)
        return float(math.exp(hi))

    swap(original, wrong)


@bug(
    "mrope_sections_reversed",
    "M-RoPE's mrope_section read back to front ([24, 24, 16] for Qwen2-VL's [16, 24, 24])",
    tests=("tests/test_rope_production.py",),
    notebooks=("notebooks/09_rope_in_production.ipynb",),
    thread="transformers modeling_qwen2_vl.py, apply_multimodal_rotary_pos_emb",
)
def _mrope_sections_reversed() -> None:
    original = mrope.apply_mrope

    def wrong(x: Any, positions_thw: Any, inv_freq: Any, mrope_section: Any, **kw: Any) -> Any:
        return original(x, positions_thw, inv_freq, list(mrope_section)[::-1], **kw)

    swap(original, wrong)


@bug(
    "p_rope_wrong_end",
    "p-RoPE keeps the lowest frequencies and zeroes the highest (the wrong end of the spectrum)",
    tests=("tests/test_rope_production.py",),
    notebooks=("notebooks/09_rope_in_production.ipynb",),
    thread="Barbero et al. 2024 (arXiv:2410.06205): p-RoPE removes the lowest frequencies",
)
def _p_rope_wrong_end() -> None:
    import poslib.viz.production as production

    original = production.p_rope_freq

    def wrong(head_dim: int, fraction: float, base: float = 10000.0) -> np.ndarray:
        kept = original(head_dim, fraction, base)
        theta = 1.0 / base ** (np.arange(0, head_dim, 2) / head_dim)
        n = int((kept > 0).sum())
        return np.where(np.arange(head_dim // 2) >= head_dim // 2 - n, theta, 0.0)

    swap(original, wrong)


@bug(
    "llama4_temperature_floor_shifted",
    "Llama 4's NoPE temperature with floor(p / 8192) instead of floor((p + 1) / 8192): the step one token late",
    tests=("tests/test_rope_production.py",),
    notebooks=("notebooks/09_rope_in_production.ipynb",),
    thread="transformers modeling_llama4.py, Llama4TextAttention (attn_temperature_tuning)",
)
def _llama4_temperature_floor_shifted() -> None:
    original = configs.llama4_attention_temperature

    def wrong(positions: Any, *, floor_scale: int = 8192, attn_scale: float = 0.1) -> np.ndarray:
        p = np.asarray(positions)
        return 1.0 + attn_scale * np.log(np.floor(p / floor_scale) + 1.0)

    swap(original, wrong)


@bug(
    "llama4_temperature_period_8191",
    "Llama 4's NoPE temperature with floor(p / 8191): the first step is right (p = 8191) but the later ones "
    "come every 8191 tokens, not at 8192·k − 1",
    tests=("tests/test_rope_production.py",),
    notebooks=("notebooks/09_rope_in_production.ipynb",),
    thread="transformers modeling_llama4.py, Llama4TextAttention (attn_temperature_tuning)",
)
def _llama4_temperature_period_8191() -> None:
    original = configs.llama4_attention_temperature

    def wrong(positions: Any, *, floor_scale: int = 8192, attn_scale: float = 0.1) -> np.ndarray:
        p = np.asarray(positions)
        return 1.0 + attn_scale * np.log(np.floor(p / (floor_scale - 1)) + 1.0)

    swap(original, wrong)
