"""Comparing position tables: cosine-similarity matrices, their profile by offset, and how far they are from Toeplitz.

A position table P (L × d) is judged by its similarity matrix
S[m, n] = cos∠(P_m, P_n). If S[m, n] depends only on m − n, S is constant along
each diagonal (a Toeplitz matrix): :func:`toeplitz_gap` measures the largest
spread along any diagonal, :func:`offset_profile` the mean along each one. :func:`numerical_rank`
counts the directions a table spans to a stated relative tolerance (its conditioning, not its exact rank).
"""

from __future__ import annotations

import numpy as np

from .._backend import Array, check_positive, xp_of

__all__ = ["cosine_similarity_matrix", "numerical_rank", "offset_profile", "toeplitz_gap"]


def _check_square(name: str, s: Array) -> None:
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise ValueError(f"{name} must be a square (L, L) matrix, got shape {tuple(s.shape)}")


def cosine_similarity_matrix(table: Array) -> Array:
    """``(L, L)`` cosine similarity between the rows of a ``(L, d)`` table (float64; zero rows raise)."""
    xp = xp_of(table=table)
    if table.ndim != 2:
        raise ValueError(f"table must have shape (L, d), got {tuple(table.shape)}")
    t = table.double() if hasattr(table, "double") else table.astype("float64")
    norms = (t * t).sum(-1) ** 0.5
    if bool((norms == 0).any()):
        raise ValueError("table has an all-zero row, whose cosine similarity is undefined")
    unit = t / norms[:, None]
    return unit @ xp.swapaxes(unit, 0, 1)


def offset_profile(s: Array, max_offset: int | None = None) -> Array:
    """Mean of ``s[m, m + k]`` over m, for k = 0 … max_offset (default L − 1): similarity against distance."""
    _check_square("s", s)
    xp = xp_of(s=s)
    n = s.shape[0]
    max_offset = n - 1 if max_offset is None else max_offset
    if not 0 <= max_offset < n:
        raise ValueError(f"max_offset must be in [0, {n - 1}], got {max_offset}")
    return xp.stack([xp.diagonal(s, k).mean() for k in range(max_offset + 1)])


def toeplitz_gap(s: Array) -> float:
    """max over offsets k of (max − min of the k-th diagonal): 0 exactly when s[m, n] depends on n − m only."""
    _check_square("s", s)
    xp = xp_of(s=s)
    n = s.shape[0]
    return max(float(d.max() - d.min()) for d in (xp.diagonal(s, k) for k in range(-(n - 1), n)))


def numerical_rank(table: Array, rtol: float = 1e-10) -> int:
    """Number of singular values of ``table`` above ``rtol`` times the largest one (computed in float64).

    The exact rank of a matrix is fragile: rounding makes almost every matrix full rank. The numerical rank
    says how many directions are resolved to a relative accuracy ``rtol``; the default 1e-10 sits far above
    float64 rounding (about 1e-16 of the largest singular value) and far below any direction that matters.
    """
    if table.ndim != 2:
        raise ValueError(f"table must be a 2-D matrix, got shape {tuple(table.shape)}")
    check_positive("rtol", rtol)
    if rtol >= 1:
        raise ValueError(f"rtol must be below 1 (a fraction of the largest singular value), got {rtol}")
    t = table.detach().cpu().double().numpy() if hasattr(table, "detach") else np.asarray(table, dtype=np.float64)
    s = np.linalg.svd(t, compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return 0
    return int((s > rtol * s[0]).sum())
