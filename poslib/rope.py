"""Rotary position embedding, RoPE (Su et al., 2021, "RoFormer", arXiv:2104.09864).

RoPE asks for an encoding f with ⟨f(q, m), f(k, n)⟩ = g(q, k, m − n). In two
dimensions, writing q as the complex number q₀ + i·q₁, the answer is a rotation::

    f(q, m) = q · e^{i m θ}   ⇒   Re[f(q, m) · conj(f(k, n))] = Re[q · conj(k) · e^{i (m−n) θ}]

In d dimensions the vector is cut into d/2 pairs, pair i turning at
θ_i = base^(−2i/d) (the same frequencies as the sinusoidal encoding)::

    R_{Θ,m} = diag(ρ(m θ_0), …, ρ(m θ_{d/2−1})),   ρ(a) = [[cos a, −sin a], [sin a, cos a]]
    ⟨R_m q, R_n k⟩ = qᵀ R_mᵀ R_n k = qᵀ R_{n−m} k

Two memory layouts put the pairs in different places (a real source of bugs
when converting checkpoints):

* ``"interleaved"``: pairs (0, 1), (2, 3), … as in the paper and Meta's LLaMA code;
* ``"half"``: pairs (i, i + d/2) as in GPT-NeoX and Hugging Face's LLaMA
  (``x * cos + rotate_half(x) * sin``).

They are the same rotation after the fixed permutation
:func:`rope_layout_permutation`.

Precision: the angle m·θ_i is always computed in float64, then cos/sin are cast
to the working dtype. Computing m·θ_i in bfloat16 (8 bits of mantissa) loses
the whole fractional part of the angle beyond position 256 (a bug reported in
several well-known libraries).

Two steps, as in lucidrains' rotary-embedding-torch: :func:`rope_cos_sin` turns
positions and frequencies into cos/sin once per forward pass (float64 angles,
then the working dtype), :func:`rope_rotate` rotates queries and keys with them.
:func:`apply_rope` does both in one call. ``rotary_dim`` rotates only the first
``rotary_dim`` features (partial rotary: GPT-J, GPT-NeoX's ``rotary_pct``, Phi).

Scaled variants of ``inv_freq`` (PI, NTK, YaRN, Llama-3…) live in
:mod:`poslib.rope_scaling`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ._backend import Array, Backend, cast, check_choice, check_even, is_torch, namespace, select, to_float, xp_of
from .sinusoidal import _frequencies, sinusoidal_frequencies

__all__ = [
    "apply_rope",
    "rope_angles",
    "rope_cos_sin",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_layout_permutation",
    "rope_matrix",
    "rope_rotate",
    "rotate_half",
]

LAYOUTS = ("interleaved", "half")
_LOW_PRECISION = (torch.float16, torch.bfloat16, np.float16)


def rope_frequencies(head_dim: int, base: float = 10000.0, *, backend: Backend = "numpy", device: Any = None) -> Array:
    """θ_i = base^(−2i/head_dim), i = 0 … head_dim/2 − 1, in float64 (the plain, unscaled RoPE)."""
    check_even("head_dim", head_dim)
    return sinusoidal_frequencies(head_dim, base, backend=backend, device=device)


def rope_angles(positions: Array, inv_freq: Array) -> Array:
    """The float64 angles m·θ_i, shape ``(*positions.shape, len(inv_freq))``.

    Both factors are promoted to float64 first: that is the whole precision fix.
    """
    xp = xp_of(positions=positions, inv_freq=inv_freq)
    like = inv_freq if is_torch(inv_freq) else None
    return to_float(positions, xp, like=like)[..., None] * to_float(inv_freq, xp, like=like)


def rope_cos_sin(
    positions: Array, inv_freq: Array, *, attention_factor: float = 1.0, dtype: Any = None
) -> tuple[Array, Array]:
    """``(cos, sin)`` of the angles m·θ_i, each of shape ``(*positions.shape, len(inv_freq))``.

    The angles are float64 (:func:`rope_angles`); cos and sin are multiplied by
    ``attention_factor`` (YaRN's, applied to queries and keys alike as in Hugging Face's
    code) in float64, then cast to ``dtype`` (default: kept in float64). Compute them once
    per forward pass and hand them to :func:`rope_rotate` for queries and keys.
    """
    angles = rope_angles(positions, inv_freq)
    xp = xp_of(angles=angles)
    cos, sin = xp.cos(angles), xp.sin(angles)
    if attention_factor != 1.0:
        cos, sin = attention_factor * cos, attention_factor * sin
    return cast(cos, dtype), cast(sin, dtype)


def rope_rotate(
    x: Array, cos: Array, sin: Array, *, layout: str = "interleaved", rotary_dim: int | None = None
) -> Array:
    """Rotate ``x`` (shape ``(..., seq, head_dim)``) with cos/sin from :func:`rope_cos_sin`.

    ``cos`` and ``sin`` have shape ``(..., seq, n)`` broadcastable against ``x``'s leading
    axes, with n = rotary_dim/2 (head_dim/2 by default). ``rotary_dim`` (partial rotary:
    GPT-J's ``rotary_dim``, GPT-NeoX's ``rotary_pct``, Hugging Face's ``partial_rotary_factor``)
    rotates only the first ``rotary_dim`` features and returns the others unchanged, bit for
    bit. Inside those features the pairs follow ``layout``: ``"half"`` pairs (i, i + rotary_dim/2)
    as Hugging Face's Phi / GPT-NeoX do, ``"interleaved"`` pairs (2i, 2i+1) as GPT-J does.
    Returns the kind, device and dtype of ``x``; float16/bfloat16 are rotated in float32.
    """
    _check_rotate(x, cos, sin, layout, rotary_dim)
    if rotary_dim is None or rotary_dim == x.shape[-1]:
        return _rotate_pairs(x, cos, sin, layout)
    # Partial rotary: rotate x[..., :rotary_dim], copy x[..., rotary_dim:] through untouched
    # (a concatenation copies bits; no arithmetic touches the pass-through features).
    rotated = _rotate_pairs(x[..., :rotary_dim], cos, sin, layout)
    rest = x[..., rotary_dim:]
    xp = xp_of(x=x)
    if rotated.shape[:-1] != rest.shape[:-1]:  # cos/sin broadcast x to a larger shape
        rest = xp.broadcast_to(rest, (*rotated.shape[:-1], rest.shape[-1]))
    return xp.concatenate([rotated, rest], axis=-1)


def apply_rope(
    x: Array,
    positions: Array,
    inv_freq: Array,
    *,
    layout: str = "interleaved",
    attention_factor: float = 1.0,
    rotary_dim: int | None = None,
) -> Array:
    """Rotate ``x`` (shape ``(..., seq, head_dim)``) to its ``positions`` (shape ``(seq,)`` or broadcastable).

    The one-call form of :func:`rope_cos_sin` then :func:`rope_rotate` (see them for
    ``attention_factor`` and ``rotary_dim``; with ``rotary_dim`` ``inv_freq`` has
    ``rotary_dim / 2`` entries). Returns an array of the same kind, device and dtype as ``x``.
    The angles positions × inv_freq are formed in float64 whatever ``x``'s dtype. Keep
    ``inv_freq`` in float64 (as :func:`rope_inv_freq` returns it): a bfloat16 copy is
    already off by up to 2⁻⁹ relative, i.e. whole radians at long positions, before any
    multiplication.
    """
    _check_positions(x, positions, inv_freq, layout, rotary_dim)
    if is_torch(x):
        inv_freq = to_float(inv_freq, torch, like=x)
    cos, sin = rope_cos_sin(positions, inv_freq, attention_factor=attention_factor)
    return rope_rotate(x, cos, sin, layout=layout, rotary_dim=rotary_dim)


def _n_entries(a: Any) -> int:
    return len(a) if not hasattr(a, "shape") else (a.shape[-1] if a.ndim else 1)


def _check_positions(x: Array, positions: Array, inv_freq: Array, layout: str, rotary_dim: int | None) -> None:
    # what apply_rope checks before cos/sin exist (errors name its arguments); rope_rotate checks the rest
    name, dim = _check_x(x, layout, rotary_dim, positions=positions, inv_freq=inv_freq)
    n_freq = _n_entries(inv_freq)
    if n_freq != dim // 2:
        raise ValueError(f"inv_freq must have {name}/2 = {dim // 2} entries, got {n_freq}")
    n_pos = _n_entries(positions)
    if n_pos not in (1, x.shape[-2]):
        raise ValueError(f"positions must have x.shape[-2] = {x.shape[-2]} entries on its last axis, got {n_pos}")


def _check_x(x: Array, layout: str, rotary_dim: int | None, **others: Any) -> tuple[str, int]:
    # layout, kinds, shape and dtype of x; returns the name and size of the rotated features
    check_choice("layout", layout, LAYOUTS)
    xp = xp_of(x=x, **others)  # TypeError when NumPy and torch are mixed
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq, head_dim), got shape {tuple(x.shape)}")
    head_dim = x.shape[-1]
    if not (torch.is_floating_point(x) if xp is torch else np.issubdtype(x.dtype, np.floating)):
        raise TypeError(f"x must be a floating-point array, got dtype {x.dtype}")
    if rotary_dim is None:
        if head_dim % 2:
            raise ValueError(f"x's last dimension (head_dim) must be even for RoPE, got {head_dim}")
        return "head_dim", head_dim
    check_even("rotary_dim", rotary_dim)
    if rotary_dim > head_dim:
        raise ValueError(f"rotary_dim must be at most head_dim = {head_dim}, got {rotary_dim}")
    return "rotary_dim", rotary_dim


def _check_rotate(x: Array, cos: Array, sin: Array, layout: str, rotary_dim: int | None) -> None:
    name, dim = _check_x(x, layout, rotary_dim, cos=cos, sin=sin)
    if tuple(cos.shape) != tuple(sin.shape):
        raise ValueError(f"cos and sin must have the same shape, got {tuple(cos.shape)} and {tuple(sin.shape)}")
    if cos.ndim < 1 or cos.shape[-1] != dim // 2:
        raise ValueError(
            f"cos and sin must have {name}/2 = {dim // 2} entries on their last axis, got {tuple(cos.shape)}"
        )
    if cos.ndim >= 2 and cos.shape[-2] not in (1, x.shape[-2]):
        raise ValueError(f"cos and sin must have x.shape[-2] = {x.shape[-2]} rows (positions), got {cos.shape[-2]}")


def _rotate_pairs(x: Array, cos: Array, sin: Array, layout: str) -> Array:
    """Rotate the pairs of ``x``'s last axis by angles whose (scaled) cos/sin are given.

    ``cos``/``sin`` have shape ``(..., seq, head_dim/2)`` broadcastable against
    ``x[..., ::2]``. Low-precision inputs are rotated in float32 and cast back.
    """
    out_dtype = x.dtype
    if out_dtype in _LOW_PRECISION:
        x = cast(x, torch.float32 if is_torch(x) else np.float32)
    if layout == "interleaved":
        # One pass: pairs (x₀, x₁) read as complex numbers x₀ + i·x₁, multiplied by cos + i·sin.
        out = _complex_rotate(x, cos, sin)
    else:
        out = _half_rotate(x, cast(cos, x.dtype), cast(sin, x.dtype))
    return cast(out, out_dtype)


def _complex_rotate(x: Array, cos: Array, sin: Array) -> Array:
    # (x₀ + i·x₁)(cos + i·sin) = (x₀cos − x₁sin) + i·(x₀sin + x₁cos): RoFormer's 2×2 block, one complex product
    if is_torch(x):
        # view_as_complex needs unit stride on the pair axis, even strides elsewhere and an even
        # storage offset (a view such as x.flatten()[1:].view(…) starts mid-pair): copy otherwise.
        # clone, not contiguous(): a contiguous view at an odd offset would come back unchanged.
        if x.stride(-1) != 1 or any(s % 2 for s in x.stride()[:-1]) or x.storage_offset() % 2:
            x = x.clone(memory_format=torch.contiguous_format)
        pairs = torch.view_as_complex(x.unflatten(-1, (-1, 2)))
        rotation = torch.complex(cast(cos, x.dtype), cast(sin, x.dtype))
        return torch.view_as_real(pairs * rotation).flatten(-2)
    complex_dtype = np.complex128 if x.dtype == np.float64 else np.complex64
    turn: np.ndarray = np.empty(cos.shape, complex_dtype)  # cos + i·sin, rounded to x's precision
    turn.real, turn.imag = cos, sin
    return (np.ascontiguousarray(x).view(complex_dtype) * turn).view(x.dtype)


def _half_rotate(x: Array, cos: Array, sin: Array) -> Array:
    # o = x·[cos | cos], then o₁ −= x₂·sin and o₂ += x₁·sin, in place. One full-width
    # multiply runs over long contiguous rows; only the two corrections touch halves.
    # This avoids rotate_half's concatenated temporary and its extra full-size products.
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    if is_torch(x):
        out = torch.mul(x, torch.cat([cos, cos], dim=-1))
        out[..., :h].addcmul_(x2, sin, value=-1)
        out[..., h:].addcmul_(x1, sin)
        return out
    if cos.ndim == 2 and x.ndim >= 2:
        return _half_rotate_numpy_blocked(x, cos, sin)
    out = x * np.concatenate([cos, cos], axis=-1)
    out[..., :h] -= x2 * sin
    out[..., h:] += x1 * sin
    return out


def _half_rotate_numpy_blocked(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, block: int = 1 << 16) -> np.ndarray:
    # NumPy has one thread and no fused kernel, and any op on a half-row runs an inner loop of only
    # d/2 floats. So, per block of ~block elements that stays in cache, one swap of the halves (the
    # only short-loop work, two plain copies) and three passes over long contiguous rows:
    #   o = x·[cos | cos] + swap(x)·[−sin | sin],   swap(x₁ | x₂) = (x₂ | x₁)
    # which is o₁ = x₁·cos − x₂·sin, o₂ = x₂·cos + x₁·sin: rotate_half's formula without its temporaries.
    *lead, seq, d = x.shape
    h = d // 2
    if cos.shape[0] != seq:
        # One position broadcast over every row: the blocks below slice cos and sin by row, so
        # they need one row per row of x.
        cos, sin = np.broadcast_to(cos, (seq, h)), np.broadcast_to(sin, (seq, h))
    cos_full, sin_signed = np.concatenate([cos, cos], axis=-1), np.concatenate([-sin, sin], axis=-1)
    # math.prod, not -1: reshape cannot infer a dimension when seq or head_dim is 0
    xs = x.reshape(math.prod(lead), seq, d)
    out = np.empty(xs.shape, dtype=x.dtype)
    if out.size == 0:
        return out.reshape(x.shape)
    slices_per_block = max(1, block // (seq * d))
    rows_per_block = seq if slices_per_block > 1 else max(1, block // d)
    swapped = np.empty((slices_per_block, rows_per_block, d), dtype=x.dtype)
    for i in range(0, xs.shape[0], slices_per_block):
        for j in range(0, seq, rows_per_block):
            rows = slice(j, j + rows_per_block)
            xb, ob = xs[i : i + slices_per_block, rows], out[i : i + slices_per_block, rows]
            t = swapped[: xb.shape[0], : xb.shape[1]]
            t[..., :h], t[..., h:] = xb[..., h:], xb[..., :h]  # swap(x) = (x₂ | x₁)
            np.multiply(xb, cos_full[rows], out=ob)  # o = x·[cos | cos]
            t *= sin_signed[rows]  # (x₂ | x₁)·[−sin | sin] = (−x₂·sin | x₁·sin)
            ob += t  # o₁ = x₁·cos − x₂·sin, o₂ = x₂·cos + x₁·sin
    return out.reshape(*lead, seq, d)


def rope_matrix(position: float, head_dim: int, base: float = 10000.0, *, backend: Backend = "numpy") -> Array:
    """The explicit ``(head_dim, head_dim)`` block-diagonal R_{Θ,m} (interleaved layout, float64).

    Block i is [[cos mθ_i, −sin mθ_i], [sin mθ_i, cos mθ_i]]. This is the
    textbook form: O(d²) memory, meant for teaching and checking, not for models.
    """
    check_even("head_dim", head_dim)
    xp = namespace(backend)
    a = position * rope_frequencies(head_dim, base, backend=backend)
    c, s = xp.cos(a), xp.sin(a)
    m = xp.zeros((head_dim, head_dim), dtype=xp.float64)
    even = xp.arange(0, head_dim, 2)
    m[even, even] = c
    m[even, even + 1] = -s
    m[even + 1, even] = s
    m[even + 1, even + 1] = c
    return m


def rotate_half(x: Array) -> Array:
    """(x₁, x₂) → (−x₂, x₁) on the two halves of the last axis: the GPT-NeoX / HF LLaMA helper."""
    xp = xp_of(x=x)
    h = x.shape[-1] // 2
    return xp.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def rope_layout_permutation(head_dim: int, *, backend: Backend = "numpy") -> Array:
    """The index ``perm`` that turns the interleaved layout into the half layout.

    ``apply_rope(v[..., perm], layout="half") == apply_rope(v, layout="interleaved")[..., perm]``.

    perm = [0, 2, 4, …, 1, 3, 5, …]: the first element of every interleaved pair
    goes to the first half, the second to the second half. Hugging Face's LLaMA
    conversion script applies this reordering to the rows of W_q and W_k.
    """
    check_even("head_dim", head_dim)
    xp = namespace(backend)
    return xp.concatenate([xp.arange(0, head_dim, 2), xp.arange(1, head_dim, 2)])


def rope_decay_bound(distances: Array, head_dim: int, base: float = 10000.0) -> Array:
    """RoFormer's long-range "relative upper bound" (Su et al. 2021, §3.4.3, Fig. 2) at each relative distance r.

    Write the RoPE score as Re[Σ_i h_i e^{i r θ_i}] with h_i = q_[2i:2i+1] · conj(k_[2i:2i+1]).
    Abel summation with the partial sums S_j(r) = Σ_{i<j} e^{i r θ_i} gives::

        |Σ_i h_i e^{i r θ_i}| ≤ (max_i |h_{i+1} − h_i|) · Σ_{j=1}^{d/2} |S_j(r)|,   h_{d/2} := 0

    This returns the factor that depends on r only, averaged as in the paper:
    (2/d) · Σ_{j=1}^{d/2} |S_j(r)|, float64, shape ``distances.shape``, same kind
    (NumPy or torch) as ``distances``. It equals (d/2 + 1)/2 at r = 0 and
    falls, with ripples, as |r| grows. It bounds the *size* of a score (for the
    worst q, k with given max |h_{i+1} − h_i|), not the score itself, which
    keeps oscillating and changing sign.
    """
    check_even("head_dim", head_dim)
    if isinstance(distances, (str, bytes)):
        raise TypeError(f"distances must be numbers (an array, tensor, list or scalar), got {type(distances).__name__}")
    xp, device = select(None, None, distances=distances)
    if not (isinstance(base, (int, float)) and not isinstance(base, bool) and base > 1.0):
        raise ValueError(f"base must be a number greater than 1, got {base!r}")
    angles = rope_angles(distances, _frequencies(head_dim, base, xp, device))
    # |S_j| from the running sums of cos and sin: no complex dtype needed on either backend
    re, im = xp.cumsum(xp.cos(angles), -1), xp.cumsum(xp.sin(angles), -1)
    return xp.sqrt(re * re + im * im).mean(-1)
