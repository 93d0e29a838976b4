"""XPOS: RoPE with an exponential decay per pair.

Sun et al., 2022, "A Length-Extrapolatable Transformer", arXiv:2212.10554.

Each pair i gets a base ζ_i = (2i/d + γ)/(1 + γ) < 1 (γ = 0.4 in the paper).
A query at position m is multiplied by ζ_i^(m/scale_base) and a key at n by ζ_i^(−n/scale_base),
so their score carries ζ_i^((m−n)/scale_base) (m = query, n = key, as in RoPE): it decays
with distance, fastest for the high-frequency pairs (small ζ_i), which are the
ones whose rotation is least reliable at long range.

Note: ζ^(±n/scale_base) over- or underflows for large positions (the paper's
code centres positions on the window to delay this); poslib computes the
factor in float64, which is exact up to positions of roughly 10⁵ for d = 64.
"""

from __future__ import annotations

from ._backend import Array, is_torch, to_float, xp_of
from .rope import _check_inputs, _cos, _rotate_pairs, _sin, rope_angles

__all__ = ["apply_xpos", "xpos_scale", "xpos_zeta"]


def xpos_zeta(head_dim: int, gamma: float = 0.4, *, like: Array | None = None) -> Array:
    """ζ_i = (2i/d + γ)/(1 + γ) for i = 0 … d/2 − 1 (float64, backend of ``like``)."""
    xp = xp_of(like=like)
    i = to_float(range(head_dim // 2), xp, like=like)
    return (2 * i / head_dim + gamma) / (1 + gamma)


def xpos_scale(
    positions: Array, head_dim: int, *, scale_base: float = 512.0, gamma: float = 0.4, is_key: bool = False
) -> Array:
    """ζ_i^(±n/scale_base), shape ``(*positions.shape, head_dim/2)``; the exponent is negated for keys."""
    xp = xp_of(positions=positions)
    p = to_float(positions, xp)
    zeta = xpos_zeta(head_dim, gamma, like=p)
    sign = -1.0 if is_key else 1.0
    return xp.exp(sign * p[..., None] / scale_base * xp.log(zeta))


def apply_xpos(
    x: Array,
    positions: Array,
    inv_freq: Array,
    *,
    scale_base: float = 512.0,
    gamma: float = 0.4,
    is_key: bool = False,
    layout: str = "interleaved",
) -> Array:
    """RoPE-rotate ``x`` and scale pair i by ζ_i^(±n/scale_base) (queries ×, keys ÷), in one pass."""
    _check_inputs(x, positions, inv_freq, layout)
    xp = xp_of(x=x)
    positions = to_float(positions, xp, like=x if is_torch(x) else None)
    inv_freq = to_float(inv_freq, xp, like=x if is_torch(x) else None)
    angles = rope_angles(positions, inv_freq)
    scale = xpos_scale(positions, x.shape[-1], scale_base=scale_base, gamma=gamma, is_key=is_key)
    return _rotate_pairs(x, scale * _cos(angles), scale * _sin(angles), layout)
