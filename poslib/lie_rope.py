"""Rotations from generators: RoPE as exp(m·A), N-D RoPE and LieRE / ComRoPE as exp(Σ_k p_k A_k).

Every rotation of R^D is exp(A) for a skew-symmetric A (Aᵀ = −A). RoPE is the one-parameter group
R(m) = exp(m·A) of a single generator A, block-diagonal with 2×2 blocks θ_i·[[0, −1], [1, 0]]
(:func:`rope_generator`); because exp(−mA)·exp(nA) = exp((n − m)A),

    score(m, n) = (R(m) q)ᵀ (R(n) k) = qᵀ R(m)ᵀ R(n) k = qᵀ exp((n − m)·A) k

depends on n − m only, for *any* skew-symmetric A, block-diagonal or not. With a position p ∈ R^N on N axes
(image rows and columns, time), LieRE (Ostmeier et al. 2024, arXiv:2406.10322; StanfordMIMI/LieRE) learns
one generator per axis and rotates by R(p) = exp(Σ_k p_k A_k). Then
R(p)ᵀ R(p') = exp(−A(p)) exp(A(p')) equals exp(A(p' − p)) for all p, p' exactly when the generators commute,
[A_k, A_l] = 0 (ComRoPE, Yu et al. 2025, arXiv:2506.03737, its theorem on the RoPE equation;
Longin-Yu/ComRoPE). N-D axial RoPE (09's 2-D case, :func:`poslib.apply_rope_2d`) is the commuting special case:
each axis's generator acts on its own block of features (:func:`axial_rope_generators`). ComRoPE keeps
them commuting by construction (its "AP" variant: disjoint blocks per axis; "LD": one block shared by all axes,
scaled per axis); LieRE's do not commute, and :func:`relative_drift` measures how far its scores move
from depending on p' − p alone. (With 2×2 blocks, LieRE's ``generator_dim`` 2 or ComRoPE's ``block_size`` 2, every
generator is a multiple of [[0, −1], [1, 0]] per block and they all commute: RoPE with learned frequencies. The
freedom, and the drift, start at 3×3 blocks.)

Conventions of the reference code (read at StanfordMIMI/LieRE ``models/rope_vit.py`` and Longin-Yu/ComRoPE
``model.py``; commits in tests/test_lie_rope.py): a generator is made skew-symmetric as U − Uᵀ from a free
matrix U (LieRE: U = triu(raw, 1)); positions multiply the generators and are summed over axes before one
``torch.matrix_exp``; the rotation acts on column vectors, x ↦ R(p)·x, on blocks of ``generator_dim``
(LieRE) or ``block_size`` (ComRoPE) features, block-diagonally. Here a generator is one D×D matrix (a
block-diagonal one is a special case), so ``lie_rope(x, p, A)`` is R(p)·x for each token.

Matrix exponential: torch tensors use ``torch.linalg.matrix_exp`` (float64, differentiable), as both
references do; NumPy arrays use the eigendecomposition of the Hermitian matrix iA (exp(A) = V e^{−iΛ} V^H),
exact for a normal matrix up to float64 rounding. ``tests/test_lie_rope.py`` checks each against the other and
against a Taylor series.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
import torch

from ._backend import Array, check_choice, check_positive_int, is_torch, to_float, xp_of
from .rope import LAYOUTS

__all__ = [
    "axial_rope_generators",
    "commutator_norm",
    "generator_rotation",
    "lie_rope",
    "relative_drift",
    "rope_generator",
]

_SKEW_RTOL = 1e-12  # |A + Aᵀ| allowed, relative to max |A|: rounding, not a symmetric part


def _as_float(value: Any, xp: ModuleType, like: Array | None) -> Array:
    return to_float(value, xp, like=like)


def _zeros(shape: tuple[int, ...], like: Array) -> Array:
    # float64 zeros of the kind (and torch device) of ``like``
    if is_torch(like):
        return torch.zeros(shape, dtype=torch.float64, device=like.device)
    return np.zeros(shape)


def rope_generator(inv_freq: Array, *, layout: str = "interleaved") -> Array:
    """The skew-symmetric D×D generator A of plain RoPE, D = 2·len(inv_freq): exp(m·A) is RoPE's R_m.

    Interleaved layout (RoFormer, :func:`poslib.rope_matrix`): A[2i+1, 2i] = θ_i, A[2i, 2i+1] = −θ_i, so block
    i of exp(m·A) is [[cos mθ_i, −sin mθ_i], [sin mθ_i, cos mθ_i]]. Half layout (GPT-NeoX, Hugging Face):
    the same entries on features (i, i + D/2). float64, the kind (NumPy or torch) and device of ``inv_freq``
    (NumPy for lists). ``apply_rope(x, m, inv_freq, layout=layout)`` equals x·exp(m·A)ᵀ row by row.
    """
    check_choice("layout", layout, LAYOUTS)
    xp = xp_of(inv_freq=inv_freq)
    like = inv_freq if is_torch(inv_freq) else None
    theta = _as_float(inv_freq, xp, like)
    if theta.ndim != 1 or theta.shape[0] < 1:
        raise ValueError(f"inv_freq must be a 1-D array of frequencies, got shape {tuple(theta.shape)}")
    n = theta.shape[0]
    dim = 2 * n
    a = _zeros((dim, dim), theta)
    first = np.arange(0, dim, 2) if layout == "interleaved" else np.arange(n)
    second = first + 1 if layout == "interleaved" else first + n
    a[second, first] = theta  # the second feature of a pair grows with +sin of the first
    a[first, second] = -theta
    return a


def axial_rope_generators(inv_freq: Array, n_axes: int, *, layout: str = "interleaved") -> Array:
    """The N commuting generators of N-D axial RoPE, shape ``(n_axes, D, D)`` with D = n_axes·2·len(inv_freq).

    Axis k turns only the k-th block of D/n_axes features, with :func:`rope_generator` (``inv_freq``, ``layout``)
    inside it; the blocks are disjoint, so the generators commute. With n_axes = 2 this is
    :func:`poslib.apply_rope_2d`: ``lie_rope(x, stack([rows, cols], -1), axial_rope_generators(f, 2, layout=l))``
    equals ``apply_rope_2d(x, rows, cols, f, layout=l)`` (first half turns with the row, second with the column).
    """
    check_positive_int("n_axes", n_axes)
    block = rope_generator(inv_freq, layout=layout)
    d = block.shape[0]
    out = _zeros((n_axes, n_axes * d, n_axes * d), block)
    for k in range(n_axes):
        out[k, k * d : (k + 1) * d, k * d : (k + 1) * d] = block
    return out


def _generators(generators: Array) -> tuple[ModuleType, Array, bool]:
    # (N, D, D) float64 skew-symmetric generators, and whether one (D, D) generator was given (N = 1, and
    # then positions carry no axis of their own); ValueError otherwise
    xp = xp_of(generators=generators)
    like = generators if is_torch(generators) else None
    a = _as_float(generators, xp, like)
    single = a.ndim == 2
    if single:
        a = a[None]
    if a.ndim != 3 or a.shape[-1] != a.shape[-2] or a.shape[-1] < 1 or a.shape[0] < 1:
        raise ValueError(f"generators must have shape (D, D) or (N, D, D), got {tuple(a.shape)}")
    scale = float(abs(a).max())
    asym = float(abs(a + xp.swapaxes(a, -1, -2)).max())
    if asym > _SKEW_RTOL * max(scale, 1.0):
        raise ValueError(
            f"generators must be skew-symmetric (Aᵀ = −A, the generators of rotations), got max |A + Aᵀ| = {asym:.3g}"
        )
    return xp, a, single


def _positions(positions: Any, a: Array, single: bool, xp: ModuleType) -> Array:
    # positions as float64 (..., N): one (D, D) generator takes any shape, N generators take (..., N)
    p = _as_float(positions, xp, a if is_torch(a) else None)
    if single:
        return p[..., None]
    if p.ndim == 0 or p.shape[-1] != a.shape[0]:
        raise ValueError(
            f"positions must have shape (..., {a.shape[0]}), one coordinate per generator, got {tuple(p.shape)}"
        )
    return p


def _expm_skew(a: Array) -> Array:
    # exp(A) for real skew-symmetric A (..., D, D)
    if is_torch(a):
        return torch.linalg.matrix_exp(a)  # as LieRE and ComRoPE: torch.matrix_exp
    # iA is Hermitian: iA = V Λ V^H, so A = V (−iΛ) V^H and exp(A) = V e^{−iΛ} V^H (real up to rounding)
    lam, v = np.linalg.eigh(1j * a)
    return ((v * np.exp(-1j * lam)[..., None, :]) @ np.swapaxes(v, -1, -2).conj()).real


def generator_rotation(generators: Array, positions: Array) -> Array:
    """R(p) = exp(Σ_k p_k A_k) for each position p: shape ``(*positions.shape[:-1], D, D)``, float64.

    ``generators``: one skew-symmetric (D, D) matrix A (then ``positions`` has any shape and R(m) = exp(m·A)),
    or N of them, ``(N, D, D)`` (then ``positions`` is ``(..., N)``, one coordinate per axis, as LieRE's
    ``positions`` and ComRoPE's ``(bs, len, num_axes)``). Not skew-symmetric: ``ValueError``. The exponential
    of the *sum*, as both references compute it, not a product of per-axis exponentials (the two agree only
    when the generators commute). The kind (NumPy or torch) follows ``generators``.
    """
    xp, a, single = _generators(generators)
    p = _positions(positions, a, single, xp)
    exponent = (p[..., :, None, None] * a).sum(-3)  # Σ_k p_k A_k
    return _expm_skew(exponent)


def lie_rope(x: Array, positions: Array, generators: Array) -> Array:
    """Rotate each token of ``x`` (``(..., T, D)``) by R(p_t) = exp(Σ_k p_{t,k} A_k): out_t = R(p_t)·x_t.

    ``positions``: ``(T,)`` for one generator ``(D, D)``, ``(T, N)`` for N generators ``(N, D, D)``. With
    ``rope_generator(inv_freq, layout=l)`` this is ``apply_rope(x, positions, inv_freq, layout=l)``; with
    :func:`axial_rope_generators` it is N-D axial RoPE. float64 arithmetic; returns x's dtype.
    """
    xp = xp_of(x=x, positions=positions, generators=generators)
    if not hasattr(x, "ndim") or x.ndim < 2:
        raise ValueError(f"x must have shape (..., T, D), got {getattr(x, 'shape', type(x).__name__)}")
    rot = generator_rotation(generators, positions)
    if rot.shape[-1] != x.shape[-1]:
        raise ValueError(f"generators are {rot.shape[-1]}×{rot.shape[-1]} but x's last dimension is {x.shape[-1]}")
    if rot.ndim != 3 or rot.shape[0] not in (1, x.shape[-2]):
        raise ValueError(f"positions must give one position per token (T = {x.shape[-2]}), got {tuple(rot.shape[:-2])}")
    dtype = x.dtype
    x64 = x.to(torch.float64) if xp is torch else np.asarray(x, np.float64)
    out = (rot @ x64[..., None])[..., 0]  # R(p_t) x_t, broadcast over the leading axes
    return out.to(dtype) if xp is torch else out.astype(dtype, copy=False)


def commutator_norm(generators: Array) -> float:
    """max over pairs k < l of the Frobenius norm ‖A_k A_l − A_l A_k‖ (0 for one generator, or commuting ones)."""
    _, a, _ = _generators(generators)
    worst = 0.0
    for k, m in itertools.combinations(range(a.shape[0]), 2):
        c = a[k] @ a[m] - a[m] @ a[k]
        worst = max(worst, float((c * c).sum() ** 0.5))
    return worst


def relative_drift(
    q: Array, k: Array, generators: Array, p_q: Array, p_k: Array, shifts: Array | Sequence[Any]
) -> float:
    """max over shifts s of |score(p_q + s, p_k + s) − score(p_q, p_k)|, score(a, b) = (R(a) q)·(R(b) k).

    R(p) = exp(Σ_l p_l A_l) (:func:`generator_rotation`). When the score depends only on p_k − p_q the drift
    is 0 up to rounding, which holds for any shifts exactly when the generators commute (one generator always
    does); for LieRE-style non-commuting generators it is of the order of |q|·|k|. ``q``, ``k``: ``(D,)`` or
    batches ``(..., D)`` (the maximum runs over them too); ``p_q``, ``p_k``: one position (a scalar for one
    generator, ``(N,)`` for N); ``shifts``: ``(S,)`` or ``(S, N)``. float64.
    """
    xp_of(q=q, k=k, generators=generators)
    xp, a, single = _generators(generators)
    like = a if is_torch(a) else None
    pq, pk, s = (_positions(v, a, single, xp) for v in (p_q, p_k, shifts))
    if pq.ndim != 1 or pk.ndim != 1 or s.ndim != 2:
        raise ValueError("p_q and p_k must be single positions, and shifts a list of them: (S,) or (S, N)")
    q64, k64 = _as_float(q, xp, like), _as_float(k, xp, like)
    if q64.shape[-1] != a.shape[-1] or k64.shape[-1] != a.shape[-1]:
        raise ValueError(f"q and k must have the generators' dimension D = {a.shape[-1]} on their last axis")

    def scores(p: Array, r: Array) -> Array:
        # (R(p_s) q)·(R(r_s) k) for each s, broadcast over q's and k's leading axes
        rq = xp.einsum("sij,...j->s...i", generator_rotation(a, p), q64)
        rk = xp.einsum("sij,...j->s...i", generator_rotation(a, r), k64)
        return (rq * rk).sum(-1)

    base = scores(pq[None], pk[None])
    moved = scores(pq[None] + s, pk[None] + s)
    return float(abs(moved - base).max())
