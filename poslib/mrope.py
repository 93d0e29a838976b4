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

**Interleaved M-RoPE** (Qwen3-VL, ``mrope_interleaved: true``, ``mrope_section = [24, 20, 20]``):
the pairs are dealt to t, h, w in turn (pair j to axis j mod 3 while the axis's share lasts), so each
axis turns with frequencies from the whole spectrum, the fastest and the slowest alike, instead of time
getting only the fastest and width only the slowest. The relative property per axis is the same.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import torch

from ._backend import Array, check_choice, is_torch, to_float, xp_of
from .rope import LAYOUTS, _rotate_pairs, apply_rope, rope_angles

__all__ = ["apply_mrope", "apply_rope_2d", "mrope_axis_of_pair"]


def mrope_axis_of_pair(mrope_section: Sequence[int], *, interleaved: bool = False) -> np.ndarray:
    """Which axis (0 = t, 1 = h, 2 = w) turns each frequency pair.

    Sectioned (Qwen2-VL, ``interleaved=False``): ``repeat([0, 1, 2], mrope_section)``, three consecutive
    blocks. Interleaved (Qwen3-VL, ``interleaved=True``): the pairs are dealt to t, h, w in turn, pair j
    going to axis j mod 3 while that axis's share lasts (h takes pairs 1, 4, …, 3n_h − 2; w takes 2, 5, …,
    3n_w − 1), and every other pair, the tail included, turns with t. With [24, 20, 20] (head_dim 128)
    h and w each get 20 pairs spread from the fastest to the slowest frequency; t gets 20 of them plus the
    four slowest. ``mrope_section`` must then leave each of h and w its full share inside head_dim/2 pairs.
    Length sum(mrope_section) = head_dim/2, int64 NumPy (an index, the same on both backends).
    """
    _check_sections(mrope_section)
    n_t, n_h, n_w = (int(n) for n in mrope_section)
    if not interleaved:
        return np.repeat(np.arange(3), [n_t, n_h, n_w])
    n_pairs = n_t + n_h + n_w
    axis = np.zeros(n_pairs, dtype=np.int64)
    # As Qwen3-VL's apply_interleaved_mrope: start from all-t, then overwrite h at 1::3 and w at 2::3.
    axis[1 : 3 * n_h : 3] = 1
    axis[2 : 3 * n_w : 3] = 2
    counts = np.bincount(axis, minlength=3)
    if (counts[1], counts[2]) != (n_h, n_w):
        raise ValueError(
            f"mrope_section {list(mrope_section)} cannot be interleaved: h and w need pairs up to "
            f"{max(3 * n_h - 2, 3 * n_w - 1)}, but there are only {n_pairs} pairs"
        )
    return axis


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
    interleaved: bool = False,
) -> Array:
    """Multimodal RoPE (Qwen2-VL, arXiv:2409.12191): pairs in section k turn with position axis k.

    ``x``: ``(..., seq, head_dim)``. ``positions_thw``: ``(3, ..., seq)``, the
    (t, h, w) position of every token, as Qwen2-VL's ``position_ids``; each
    ``positions_thw[k]`` must broadcast against ``x.shape[:-1]`` (for
    ``x`` of shape (batch, heads, seq, d) pass (3, batch, 1, seq) or (3, seq)).
    ``inv_freq``: head_dim/2 frequencies θ_j; ``mrope_section``: [n_t, n_h, n_w]
    with n_t + n_h + n_w = head_dim/2. Angles p_k·θ_j are formed in float64.
    ``layout="half"`` matches Hugging Face's Qwen2-VL; ``"interleaved"`` applies
    the same angles to (2j, 2j+1) pairs. ``interleaved=True`` deals the frequency pairs to t, h, w
    in turn (Qwen3-VL, ``mrope_interleaved``) instead of in three consecutive sections; see
    :func:`mrope_axis_of_pair`. (``layout`` is about which features form a pair; ``interleaved`` is
    about which position axis each pair's frequency follows.)
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
    # angle_j = p_{axis(j)} · θ_j (float64): every axis's angles at every pair, then each pair keeps
    # the one of its own axis (three angle tables of seq × d/2: small beside x itself).
    axis = mrope_axis_of_pair(mrope_section, interleaved=interleaved)
    per_axis = [rope_angles(pos[k], freq) for k in range(3)]
    lead = np.broadcast_shapes(*(tuple(p.shape[:-1]) for p in per_axis))
    per_axis = [xp.broadcast_to(p, (*lead, half)) for p in per_axis]
    pick = [torch.as_tensor(axis == k, device=x.device) if xp is torch else axis == k for k in range(3)]
    angles = xp.where(pick[0], per_axis[0], xp.where(pick[1], per_axis[1], per_axis[2]))
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
