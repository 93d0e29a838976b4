"""XPOS: RoPE with an exponential decay per pair.

Sun et al., 2022, "A Length-Extrapolatable Transformer", arXiv:2212.10554.

Each pair i gets a base ζ_i = (2i/d + γ)/(1 + γ) < 1 (γ = 0.4 in the paper).
A query at position m is multiplied by ζ_i^(m/scale_base) and a key at n by ζ_i^(−n/scale_base),
so their score carries ζ_i^((m−n)/scale_base) (m = query, n = key, as in RoPE): it decays
with distance, fastest for the high-frequency pairs (small ζ_i), which are the
ones whose rotation is least reliable at long range.

Range: ζ_0^(±n/scale_base) leaves the floating-point range at large n (γ = 0.4,
scale_base = 512: |n| ≈ 3.6·10⁴ in float32/bfloat16, 4·10³ in float16, 2.9·10⁵ in
float64), and the scores turn into inf/NaN. The scores depend on n − m only, so
any common shift of queries and keys leaves them unchanged: pass the same
``centre`` for both (the reference code, rotary-embedding-torch, uses
seq_len // 2) to move the usable window. :func:`apply_xpos` raises a
``ValueError`` when ζ_0^(±(n − centre)/scale_base) would not be a normal number
of ``x``'s dtype, rather than return non-finite values.

Convention: rotary-embedding-torch scales by ζ^((n − seq_len // 2)/scale_base),
i.e. ``centre = seq_len // 2``; poslib's default ``centre = 0`` is the paper's formula.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ._backend import Array, check_positive, is_torch, to_float, xp_of
from .rope import _check_positions, _rotate_pairs, rope_cos_sin

__all__ = ["apply_xpos", "xpos_scale", "xpos_zeta"]


def xpos_zeta(head_dim: int, gamma: float = 0.4, *, like: Array | None = None) -> Array:
    """ζ_i = (2i/d + γ)/(1 + γ) for i = 0 … d/2 − 1 (float64, backend of ``like``)."""
    xp = xp_of(like=like)
    i = to_float(range(head_dim // 2), xp, like=like)
    return (2 * i / head_dim + gamma) / (1 + gamma)


def xpos_scale(
    positions: Array,
    head_dim: int,
    *,
    scale_base: float = 512.0,
    gamma: float = 0.4,
    is_key: bool = False,
    centre: float = 0.0,
) -> Array:
    """ζ_i^(±(n − centre)/scale_base), shape ``(*positions.shape, head_dim/2)``; the exponent is negated for keys."""
    xp = xp_of(positions=positions)
    p = to_float(positions, xp) - centre
    zeta = xpos_zeta(head_dim, gamma, like=p)
    sign = -1.0 if is_key else 1.0
    return xp.exp(sign * p[..., None] / scale_base * xp.log(zeta))


def _check_range(positions: Array, head_dim: int, scale_base: float, gamma: float, centre: float, dtype: Any) -> None:
    # ζ_0 = γ/(1 + γ) is the smallest base, so pair 0 has the largest |exponent|. Both the scale
    # and its reciprocal (queries and keys) must stay normal numbers of the working dtype.
    if head_dim == 0 or int(np.prod(positions.shape)) == 0:
        return  # nothing is scaled
    info = torch.finfo(dtype) if isinstance(dtype, torch.dtype) else np.finfo(dtype)
    limit = -math.log(float(info.tiny))  # < log(max): the binding side is the underflow to subnormals
    distance = (
        float((positions - centre).abs().max()) if is_torch(positions) else float(np.abs(positions - centre).max())
    )
    exponent = distance / scale_base * -math.log(gamma / (1 + gamma))
    if not exponent <= limit:
        reach = limit / -math.log(gamma / (1 + gamma)) * scale_base
        raise ValueError(
            f"positions reach |n − centre| = {distance:g}, beyond the {reach:.6g} that {dtype} can scale by "
            f"ζ_0^(±(n − centre)/scale_base); pass the same centre (e.g. the window's middle) for queries and keys"
        )


def apply_xpos(
    x: Array,
    positions: Array,
    inv_freq: Array,
    *,
    scale_base: float = 512.0,
    gamma: float = 0.4,
    is_key: bool = False,
    layout: str = "interleaved",
    centre: float = 0.0,
) -> Array:
    """RoPE-rotate ``x`` and scale pair i by ζ_i^(±(n − centre)/scale_base) (queries ×, keys ÷), in one pass.

    Use one ``centre`` for queries and keys: the scores of query m and key n then carry
    ζ_i^((m − n)/scale_base), which decays with the distance m − n ≥ 0, whatever the centre is.
    Raises ``ValueError`` when a position is too far from ``centre`` for ``x``'s dtype (see the
    module docstring); rotary-embedding-torch's ``xpos`` corresponds to ``centre = seq_len // 2``.
    """
    _check_positions(x, positions, inv_freq, layout, None)
    check_positive("scale_base", scale_base)
    check_positive("gamma", gamma)
    xp = xp_of(x=x)
    positions = to_float(positions, xp, like=x if is_torch(x) else None)
    inv_freq = to_float(inv_freq, xp, like=x if is_torch(x) else None)
    if int(np.prod(x.shape)):  # an empty x scales nothing, whatever its positions
        _check_range(positions, x.shape[-1], scale_base, gamma, centre, x.dtype)
    cos, sin = rope_cos_sin(positions, inv_freq)
    scale = xpos_scale(positions, x.shape[-1], scale_base=scale_base, gamma=gamma, is_key=is_key, centre=centre)
    return _rotate_pairs(x, scale * cos, scale * sin, layout)
