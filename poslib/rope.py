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

Scaled variants of ``inv_freq`` (PI, NTK, YaRN, Llama-3…) live in
:mod:`poslib.rope_scaling`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ._backend import Array, Backend, check_choice, check_even, is_torch, namespace, to_float, xp_of
from .sinusoidal import sinusoidal_frequencies

__all__ = [
    "apply_rope",
    "rope_angles",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_layout_permutation",
    "rope_matrix",
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


def _check_inputs(x: Array, positions: Array, inv_freq: Array, layout: str) -> Any:
    check_choice("layout", layout, LAYOUTS)
    xp = xp_of(x=x, positions=positions, inv_freq=inv_freq)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq, head_dim), got shape {tuple(x.shape)}")
    head_dim = x.shape[-1]
    if head_dim % 2:
        raise ValueError(f"x's last dimension (head_dim) must be even for RoPE, got {head_dim}")
    n_freq = len(inv_freq) if not hasattr(inv_freq, "shape") else inv_freq.shape[-1]
    if n_freq != head_dim // 2:
        raise ValueError(f"inv_freq must have head_dim/2 = {head_dim // 2} entries, got {n_freq}")
    n_pos = len(positions) if not hasattr(positions, "shape") else (positions.shape[-1] if positions.ndim else 1)
    if n_pos not in (1, x.shape[-2]):
        raise ValueError(f"positions must have x.shape[-2] = {x.shape[-2]} entries on its last axis, got {n_pos}")
    if not (xp.is_floating_point(x) if xp is torch else np.issubdtype(x.dtype, np.floating)):
        raise TypeError(f"x must be a floating-point array, got dtype {x.dtype}")
    return xp


def _rotate_pairs(x: Array, cos: Array, sin: Array, layout: str) -> Array:
    """Rotate the pairs of ``x``'s last axis by angles whose (scaled) cos/sin are given (float64).

    ``cos``/``sin`` have shape ``(..., seq, head_dim/2)`` broadcastable against
    ``x[..., ::2]``. Low-precision inputs are rotated in float32 and cast back.
    """
    out_dtype = x.dtype
    if out_dtype in _LOW_PRECISION:
        x = x.float() if is_torch(x) else x.astype(np.float32)
    work = x.dtype
    if layout == "interleaved":
        # One pass: pairs (x₀, x₁) read as complex numbers x₀ + i·x₁, multiplied by cos + i·sin.
        out = _complex_rotate(x, cos, sin)
    else:
        out = _half_rotate(
            x, cos.to(work) if is_torch(cos) else cos.astype(work), sin.to(work) if is_torch(sin) else sin.astype(work)
        )
    if out.dtype != out_dtype:
        out = out.to(out_dtype) if is_torch(out) else out.astype(out_dtype)
    return out


def _complex_rotate(x: Array, cos: Array, sin: Array) -> Array:
    complex_dtype: Any
    if is_torch(x):
        complex_dtype = torch.complex128 if x.dtype == torch.float64 else torch.complex64
        # view_as_complex needs unit stride on the pair axis, even strides elsewhere and an even
        # storage offset (a view such as x.flatten()[1:].view(…) starts mid-pair): copy otherwise.
        # clone, not contiguous(): a contiguous view at an odd offset would come back unchanged.
        if x.stride(-1) != 1 or any(s % 2 for s in x.stride()[:-1]) or x.storage_offset() % 2:
            x = x.clone(memory_format=torch.contiguous_format)
        pairs = torch.view_as_complex(x.unflatten(-1, (-1, 2)))
        rotation = torch.complex(cos, sin).to(complex_dtype)
        return torch.view_as_real(pairs * rotation).flatten(-2)
    complex_dtype = np.complex128 if x.dtype == np.float64 else np.complex64
    pairs = np.ascontiguousarray(x).view(complex_dtype)
    rotation = (cos + 1j * sin).astype(complex_dtype)
    return (pairs * rotation).view(x.dtype)


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
    # NumPy runs one thread and walks half-rows of only d/2 floats, so we work in
    # blocks of ~block elements that stay in cache, with one reusable temporary.
    *lead, seq, d = x.shape
    h = d // 2
    if cos.shape[0] != seq:
        # One position broadcast over every row: the blocks below slice cos and sin by row, so
        # they need one row per row of x.
        cos, sin = np.broadcast_to(cos, (seq, h)), np.broadcast_to(sin, (seq, h))
    cos_full = np.concatenate([cos, cos], axis=-1)
    # math.prod, not -1: reshape cannot infer a dimension when seq or head_dim is 0
    xs = x.reshape(math.prod(lead), seq, d)
    out = np.empty(xs.shape, dtype=x.dtype)
    if out.size == 0:
        return out.reshape(x.shape)
    slices_per_block = max(1, block // (seq * d))
    rows_per_block = seq if slices_per_block > 1 else max(1, block // d)
    tmp = np.empty((slices_per_block, rows_per_block, h), dtype=x.dtype)
    for i in range(0, xs.shape[0], slices_per_block):
        for j in range(0, seq, rows_per_block):
            xb, ob = (
                xs[i : i + slices_per_block, j : j + rows_per_block],
                out[i : i + slices_per_block, j : j + rows_per_block],
            )
            s, t = sin[j : j + rows_per_block], tmp[: xb.shape[0], : xb.shape[1]]
            np.multiply(xb, cos_full[j : j + rows_per_block], out=ob)
            ob[..., :h] -= np.multiply(xb[..., h:], s, out=t)
            ob[..., h:] += np.multiply(xb[..., :h], s, out=t)
    return out.reshape(*lead, seq, d)


def apply_rope(
    x: Array,
    positions: Array,
    inv_freq: Array,
    *,
    layout: str = "interleaved",
    scale: float = 1.0,
    rotary_dim: int | None = None,
) -> Array:
    """Rotate ``x`` (shape ``(..., seq, head_dim)``) to its ``positions`` (shape ``(seq,)`` or broadcastable).

    ``rotary_dim`` (partial rotary: GPT-J's ``rotary_dim``, GPT-NeoX's ``rotary_pct``,
    Hugging Face's ``partial_rotary_factor``) rotates only the first ``rotary_dim``
    features and returns the others unchanged, bit for bit; ``inv_freq`` then has
    ``rotary_dim / 2`` entries. Inside those features the pairs follow ``layout``:
    ``"half"`` pairs (i, i + rotary_dim/2) as Hugging Face's Phi / GPT-NeoX do,
    ``"interleaved"`` pairs (2i, 2i+1) as GPT-J does.

    Returns an array of the same kind, device and dtype as ``x``. The angles
    positions × inv_freq are formed in float64 whatever ``x``'s dtype.
    Keep ``inv_freq`` in float64 (as :func:`rope_inv_freq` returns it): a
    bfloat16 copy is already off by up to 2⁻⁹ relative, i.e. whole radians at
    long positions, before any multiplication. ``scale`` multiplies cos and sin, which is how YaRN's attention factor is
    applied in Hugging Face's code (queries and keys both × scale).
    """
    if rotary_dim is not None:
        return _apply_partial_rope(x, positions, inv_freq, layout, scale, rotary_dim)
    _check_inputs(x, positions, inv_freq, layout)
    angles = rope_angles(positions, inv_freq if not is_torch(x) else to_float(inv_freq, torch, like=x))
    return _rotate_pairs(x, scale * _cos(angles), scale * _sin(angles), layout)


def _apply_partial_rope(
    x: Array, positions: Array, inv_freq: Array, layout: str, scale: float, rotary_dim: int
) -> Array:
    # Partial rotary: rotate x[..., :rotary_dim], copy x[..., rotary_dim:] through untouched
    # (a concatenation copies bits; no arithmetic touches the pass-through features).
    check_even("rotary_dim", rotary_dim)
    if x.ndim < 1 or rotary_dim > x.shape[-1]:
        raise ValueError(f"rotary_dim must be at most head_dim = {x.shape[-1] if x.ndim else 0}, got {rotary_dim}")
    n_freq = len(inv_freq) if not hasattr(inv_freq, "shape") else inv_freq.shape[-1]
    if n_freq != rotary_dim // 2:
        raise ValueError(f"inv_freq must have rotary_dim/2 = {rotary_dim // 2} entries, got {n_freq}")
    rotated = apply_rope(x[..., :rotary_dim], positions, inv_freq, layout=layout, scale=scale)
    rest = x[..., rotary_dim:]
    if rotated.shape[:-1] != rest.shape[:-1]:  # positions broadcast x to a larger shape
        rest = (torch.broadcast_to if is_torch(x) else np.broadcast_to)(rest, (*rotated.shape[:-1], rest.shape[-1]))
    return torch.cat([rotated, rest], dim=-1) if is_torch(x) else np.concatenate([rotated, rest], axis=-1)


def _cos(a: Array) -> Array:
    return torch.cos(a) if is_torch(a) else np.cos(a)


def _sin(a: Array) -> Array:
    return torch.sin(a) if is_torch(a) else np.sin(a)


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
    xp = xp_of(distances=distances)
    if not (isinstance(base, (int, float)) and not isinstance(base, bool) and base > 1.0):
        raise ValueError(f"base must be a number greater than 1, got {base!r}")
    inv_freq = rope_frequencies(
        head_dim,
        base,
        backend="torch" if xp is torch else "numpy",
        device=distances.device if is_torch(distances) else None,
    )
    angles = rope_angles(distances, inv_freq)
    # |S_j| from the running sums of cos and sin: no complex dtype needed on either backend
    re, im = xp.cumsum(_cos(angles), -1), xp.cumsum(_sin(angles), -1)
    return xp.sqrt(re * re + im * im).mean(-1)
