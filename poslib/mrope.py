"""RoPE for several position axes: 2-D axial RoPE for image patches and Qwen2-VL's M-RoPE.

Both keep RoPE's one property per axis: a token carries a position on each axis
(row and column; or time, height and width), some rotation pairs turn with one
axis and the others with another, so a query-key score depends only on the
offsets (Δrow, Δcol) or (Δt, Δh, Δw), never on the absolute positions.

**2-D axial RoPE** (Heo et al. 2024, "Rotary Position Embedding for Vision
Transformer", arXiv:2403.13298, "RoPE-Axial"): half of the head's features
are rotated by the row position, the other half by the column position, with
the same frequencies θ_i (d/4 of them)::

    x = [x_row | x_col],   f(x, r, c) = [R_{Θ,r} x_row | R_{Θ,c} x_col]
    ⟨f(q, r, c), f(k, r', c')⟩ = q_rowᵀ R_{Θ, r'−r} k_row + q_colᵀ R_{Θ, c'−c} k_col

Implementations differ in where they put the two axes (halves here, alternate
pairs elsewhere); that is a fixed permutation of features and changes nothing above.

**M-RoPE** (Wang et al. 2024, "Qwen2-VL", arXiv:2409.12191, §2.1): the d/2
frequency pairs are cut into three consecutive sections, ``mrope_section =
[n_t, n_h, n_w]`` (n_t + n_h + n_w = d/2; Qwen2-VL-7B uses [16, 24, 24] with
d = 128). Pair j of section k turns at angle p_k·θ_j, p = (t, h, w)::

    angle_j = t·θ_j  (j < n_t),   h·θ_j  (n_t ≤ j < n_t + n_h),   w·θ_j  (otherwise)

This is exactly what Hugging Face's ``apply_multimodal_rotary_pos_emb``
(``transformers/models/qwen2_vl/modeling_qwen2_vl.py``) does in the half
layout: it splits the full-width cos/sin at ``mrope_section * 2`` and takes the
chunk i from axis i % 3, i.e. the same three sections in each half. Text tokens
get t = h = w, which reduces M-RoPE to plain RoPE. The highest frequencies go
to time, the lowest to width.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import torch

from ._backend import Array, check_choice, is_torch, to_float, xp_of
from .rope import LAYOUTS, _rotate_pairs, apply_rope, rope_angles

__all__ = ["apply_mrope", "apply_rope_2d", "mrope_axis_of_pair"]


def mrope_axis_of_pair(mrope_section: Sequence[int]) -> np.ndarray:
    """Which axis (0 = t, 1 = h, 2 = w) turns each frequency pair: ``repeat([0, 1, 2], mrope_section)``.

    Length sum(mrope_section) = head_dim/2, int64 NumPy (an index, the same on both backends).
    """
    _check_sections(mrope_section)
    return np.repeat(np.arange(len(mrope_section)), list(mrope_section))


def _check_sections(mrope_section: Sequence[int]) -> None:
    if isinstance(mrope_section, (str, bytes)) or not isinstance(mrope_section, Sequence):
        raise TypeError(f"mrope_section must be a sequence of 3 integers, got {type(mrope_section).__name__}")
    if len(mrope_section) != 3 or not all(
        isinstance(n, numbers.Integral) and not isinstance(n, bool) and n >= 0 for n in mrope_section
    ):
        raise ValueError(f"mrope_section must be 3 non-negative integers (t, h, w pairs), got {list(mrope_section)}")


def apply_mrope(
    x: Array,
    positions_thw: Array,
    inv_freq: Array,
    mrope_section: Sequence[int],
    *,
    layout: str = "half",
) -> Array:
    """Multimodal RoPE (Qwen2-VL, arXiv:2409.12191): pairs in section k turn with position axis k.

    ``x``: ``(..., seq, head_dim)``. ``positions_thw``: ``(3, ..., seq)``, the
    (t, h, w) position of every token, as Qwen2-VL's ``position_ids``; each
    ``positions_thw[k]`` must broadcast against ``x.shape[:-1]`` (for
    ``x`` of shape (batch, heads, seq, d) pass (3, batch, 1, seq) or (3, seq)).
    ``inv_freq``: head_dim/2 frequencies θ_j; ``mrope_section``: [n_t, n_h, n_w]
    with n_t + n_h + n_w = head_dim/2. Angles p_k·θ_j are formed in float64.
    ``layout="half"`` matches Hugging Face's Qwen2-VL; ``"interleaved"`` applies
    the same angles to (2j, 2j+1) pairs.
    """
    check_choice("layout", layout, LAYOUTS)
    _check_sections(mrope_section)
    xp = xp_of(x=x, positions_thw=positions_thw, inv_freq=inv_freq)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError(f"x must have shape (..., seq, head_dim) with head_dim even, got shape {tuple(x.shape)}")
    if not (torch.is_floating_point(x) if is_torch(x) else np.issubdtype(x.dtype, np.floating)):
        raise TypeError(f"x must be a floating-point array, got dtype {x.dtype}")
    half = x.shape[-1] // 2
    n_freq = len(inv_freq) if not hasattr(inv_freq, "shape") else inv_freq.shape[-1]
    if n_freq != half:
        raise ValueError(f"inv_freq must have head_dim/2 = {half} entries, got {n_freq}")
    if sum(mrope_section) != half:
        raise ValueError(
            f"mrope_section must sum to head_dim/2 = {half}, got {list(mrope_section)} (sum {sum(mrope_section)})"
        )
    like = x if is_torch(x) else None
    pos = to_float(positions_thw, xp, like=like)
    if pos.ndim < 2 or pos.shape[0] != 3:
        raise ValueError(f"positions_thw must have shape (3, ..., seq), got shape {tuple(pos.shape)}")
    if pos.shape[-1] not in (1, x.shape[-2]):
        raise ValueError(
            f"positions_thw must have x.shape[-2] = {x.shape[-2]} entries on its last axis, got {pos.shape[-1]}"
        )
    freq = to_float(inv_freq, xp, like=like)
    # One section of the frequency axis per position axis, each with its own positions:
    # angle_j = p_k · θ_j for the pairs j of section k (float64), then joined back in order.
    bounds = np.cumsum([0, *mrope_section])
    parts = [rope_angles(pos[k], freq[bounds[k] : bounds[k + 1]]) for k in range(3)]
    lead = np.broadcast_shapes(*(tuple(p.shape[:-1]) for p in parts))
    parts = [xp.broadcast_to(p, (*lead, p.shape[-1])) for p in parts]
    angles = torch.cat(parts, dim=-1) if xp is torch else np.concatenate(parts, axis=-1)
    return _rotate_pairs(x, xp.cos(angles), xp.sin(angles), layout)


def apply_rope_2d(x: Array, rows: Array, cols: Array, inv_freq: Array, *, layout: str = "interleaved") -> Array:
    """2-D axial RoPE (Heo et al. 2024, arXiv:2403.13298): first half of x turns with ``rows``, second with ``cols``.

    ``x``: ``(..., seq, head_dim)`` with head_dim divisible by 4; ``rows``,
    ``cols``: ``(seq,)`` (or broadcastable), the patch's row and column;
    ``inv_freq``: head_dim/4 frequencies, shared by the two axes. Each half is
    a plain RoPE (:func:`apply_rope`) in ``layout``, angles in float64. Scores
    depend only on (Δrow, Δcol).
    """
    check_choice("layout", layout, LAYOUTS)
    xp_of(x=x, rows=rows, cols=cols, inv_freq=inv_freq)
    if x.ndim < 2 or x.shape[-1] % 4:
        raise ValueError(f"x must have shape (..., seq, head_dim) with head_dim divisible by 4, got {tuple(x.shape)}")
    h = x.shape[-1] // 2
    by_row = apply_rope(x[..., :h], rows, inv_freq, layout=layout)
    by_col = apply_rope(x[..., h:], cols, inv_freq, layout=layout)
    if by_row.shape != by_col.shape:  # rows and cols broadcast x differently
        shape = np.broadcast_shapes(tuple(by_row.shape), tuple(by_col.shape))
        by_row, by_col = ((torch.broadcast_to if is_torch(x) else np.broadcast_to)(a, shape) for a in (by_row, by_col))
    return torch.cat([by_row, by_col], dim=-1) if is_torch(x) else np.concatenate([by_row, by_col], axis=-1)
