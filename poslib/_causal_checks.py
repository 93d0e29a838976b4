"""Shared input checks and helpers of the causal attention variants (forgetting, stickbreaking, path_attn, dca).

Each of them takes q ``(..., q_len, d)``, k ``(..., k_len, d)``, v ``(..., k_len, d_v)`` with the same leading
axes (typically (B, H)), is causal, puts the queries at the last q_len of the k_len positions (query i at
k_len − q_len + i, :mod:`poslib.attn`), computes in float64 and returns q's dtype (float64 for integer q).
"""

from __future__ import annotations

import math
import numbers
from types import ModuleType
from typing import Any

import numpy as np
import torch

from ._backend import Array, cast, is_torch, xp_of


def check_qkv(q: Array, k: Array, v: Array, **others: Any) -> tuple[ModuleType, int, int]:
    """``(xp, q_len, k_len)`` after checking kinds and shapes; ValueError naming the argument otherwise."""
    xp = xp_of(q=q, k=k, v=v, **others)
    for name, a in (("q", q), ("k", k), ("v", v)):
        if not hasattr(a, "ndim") or a.ndim < 2:
            raise ValueError(f"{name} must have shape (..., seq, dim), e.g. (B, H, T, D), got {_shape(a)}")
    if q.shape[:-2] != k.shape[:-2] or q.shape[:-2] != v.shape[:-2]:
        raise ValueError(
            f"q, k and v must share their leading axes (B, H, …), got q {tuple(q.shape)}, k {tuple(k.shape)} "
            f"and v {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their last dimension, got q {tuple(q.shape)} and k {tuple(k.shape)}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys, got k {tuple(k.shape)} and v {tuple(v.shape)}")
    q_len, k_len = q.shape[-2], k.shape[-2]
    if k_len < 1:
        raise ValueError(f"k must hold at least one key, got shape {tuple(k.shape)}")
    if q_len > k_len:
        raise ValueError(
            f"q must have at most k_len = {k_len} queries (the queries are the last q_len keys), got {q_len}"
        )
    return xp, q_len, k_len


def check_per_key(name: str, a: Array, k: Array, *, extra: tuple[int, ...] = ()) -> None:
    """``a`` must have shape ``k.shape[:-1] + extra``: one value (or vector) per key, e.g. (B, H, T)."""
    want = (*tuple(k.shape[:-1]), *extra)
    if not hasattr(a, "shape") or tuple(a.shape) != want:
        raise ValueError(f"{name} must have shape {want} (k's leading axes and one entry per key), got {_shape(a)}")


def check_log_gate(name: str, log_f: Array) -> None:
    """A log forget gate: finite and ≤ 0 (log σ(·) of a gate in (0, 1]); ValueError naming ``name`` otherwise."""
    xp = xp_of(**{name: log_f})
    bad = xp.isnan(log_f) | xp.isinf(log_f) | (log_f > 0)
    if bool(bad.any()):
        worst = float(log_f[bad].reshape(-1)[0])
        raise ValueError(f"{name} must be finite and ≤ 0 (a log forget gate, log σ(·)), got {worst!r}")


def check_scale(scale: Any) -> None:
    if scale is not None and (
        isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not math.isfinite(scale)
    ):
        raise ValueError(f"scale must be None (1/√d) or a finite number, got {scale!r}")


def out_dtype(q: Array) -> Any:
    """q's dtype when floating, else float64."""
    if is_torch(q):
        return q.dtype if torch.is_floating_point(q) else torch.float64
    return q.dtype if np.issubdtype(q.dtype, np.floating) else np.float64


def f64(*arrays: Array) -> list[Array]:
    """Each array as float64 (same kind and device)."""
    return [cast(a, torch.float64 if is_torch(a) else np.float64) for a in arrays]


def flip_last(x: Array) -> Array:
    return x.flip(-1) if is_torch(x) else x[..., ::-1]


def concat_last(arrays: list[Array]) -> Array:
    return torch.cat(arrays, dim=-1) if is_torch(arrays[0]) else np.concatenate(arrays, axis=-1)


def _shape(a: Any) -> str:
    return str(tuple(a.shape)) if hasattr(a, "shape") else type(a).__name__
