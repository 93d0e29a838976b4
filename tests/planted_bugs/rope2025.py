"""Planted bugs in 2025's RoPE variants and attention sinks (issue 27): LongRoPE, interleaved M-RoPE, learned sinks."""

from __future__ import annotations

from typing import Any

import numpy as np

import poslib.attn as attn
import poslib.mrope as mrope
import poslib.rope_scaling as scaling

from . import bug, swap

NB09 = ("notebooks/09_rope_in_production.ipynb",)


@bug(
    "longrope_switch_early",
    "LongRoPE switches to the long factors at seq_len ≥ L instead of seq_len > L (one token early)",
    tests=("tests/test_longrope.py",),
    notebooks=NB09,
    thread="transformers modeling_rope_utils.py: `if seq_len and seq_len > original_max_position_embeddings`",
)
def _longrope_switch_early() -> None:
    original = scaling.ROPE_SCALINGS["longrope"]

    def wrong(head_dim: int, base: float, cfg: Any, seq_len: Any, backend: Any) -> Any:
        bumped = None if seq_len is None else seq_len + 1  # seq_len = L now reads as L + 1 > L
        return original(head_dim, base, cfg, bumped, backend)

    swap(original, wrong)


@bug(
    "longrope_yarn_temperature",
    "LongRoPE's default attention factor taken from YaRN (0.1·ln s + 1) instead of √(1 + ln s / ln L)",
    tests=("tests/test_longrope.py",),
    notebooks=NB09,
    thread="LongRoPE, Ding et al. 2024 (arXiv:2402.13753); Phi-3's su/longrope scaling",
)
def _longrope_yarn_temperature() -> None:
    original = scaling.longrope_attention_factor

    def wrong(factor: float, original_max_position_embeddings: int) -> float:
        return scaling.yarn_attention_factor(factor)

    swap(original, wrong)


@bug(
    "mrope_interleave_from_zero",
    "interleaved M-RoPE deals h from pair 0 and t from pair 1 (the deal shifted by one)",
    tests=("tests/test_mrope_interleaved.py",),
    notebooks=NB09,
    thread="Qwen3-VL's apply_interleaved_mrope: h at slice(1, 3·n_h, 3), w at slice(2, 3·n_w, 3)",
)
def _mrope_interleave_from_zero() -> None:
    original = mrope.mrope_axis_of_pair

    def wrong(mrope_section: Any, *, interleaved: bool = False) -> Any:
        axis = original(mrope_section, interleaved=interleaved)
        if not interleaved:
            return axis
        shifted = axis.copy()
        swap_t_h = (axis == 0) | (axis == 1)
        shifted[swap_t_h] = 1 - axis[swap_t_h]  # t ↔ h: h now takes pairs 0, 3, 6, …
        return np.asarray(shifted)

    swap(original, wrong)


@bug(
    "sinks_renormalised",
    "learned sinks dropped and the row renormalised to 1 (the sink's share given back to the keys)",
    tests=("tests/test_attn.py",),
    notebooks=NB09,
    thread="gpt-oss eager_attention_forward: softmax over [scores | sink], then `probs[..., :-1]`",
)
def _sinks_renormalised() -> None:
    original = attn._softmax_with_sink

    def wrong(scores: Any, sinks: Any, xp: Any) -> Any:
        return attn.softmax(scores)

    swap(original, wrong)
