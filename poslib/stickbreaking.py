"""Stick-breaking attention (Tan et al., ICLR 2025, "Scaling Stick-Breaking Attention", arXiv:2410.17980).

No softmax and no positions: each query breaks a stick of length 1, starting from the *nearest* key and
walking back. Key j takes the fraction β_ij = σ(z_ij) of what the keys between it and the query left::

    z_ij = scale · q_i·k_j,            β_ij = σ(z_ij)
    A_ij = β_ij · Π_{j<m<i} (1 − β_im)          keys j < i   (attend_current: m ≤ i, keys j ≤ i)
    o_i  = Σ_j A_ij v_j + (1 − Σ_j A_ij) · v_i

A near key that takes most of the stick hides every key behind it: the order of the keys *is* the
position, as a decaying recency bias learned from content. The weights of a row sum to at most 1; the
rest of the stick, 1 − Σ_j A_ij = Π_m (1 − β_im), goes to the query's own value v_i, as the reference
code's tests do (``o + rem[..., None] * v``). The first query, with ``attend_current=False``, sees no key
at all: its output is v_0.

Computed in log space, as the reference does, so that long products neither underflow nor lose digits::

    log A_ij = log σ(z_ij) + Σ_{j<m<i} log σ(−z_im),     log σ(x) = −softplus(−x)

Reference: shawntan/stickbreaking-attention, ``stickbreaking_attention/sb_ref.py`` (``stickbreaking``:
``logsigmoid`` of the logits and of their negatives, summed over the later keys by a matrix product with
a strictly lower-triangular matrix) and ``tests/test_attn.py`` (``ref_fwd``: the masks for
``attend_current``, and the remainder added to v). Its logits are q·k/√d (``inv_temp`` = 1/√d by default).
The reference takes square inputs only; here q_len < k_len puts the queries at the last q_len keys and
the remainder goes to the value at the query's own position.
"""

from __future__ import annotations

import math

from ._backend import Array, cast, select, xp_of
from ._causal_checks import check_qkv, check_scale, concat_last, f64, flip_last, out_dtype
from .attn import _relative_distance

__all__ = ["stickbreaking_attention"]


def _softplus(x: Array) -> Array:
    # softplus(x) = log(1 + eˣ) = max(x, 0) + log1p(e^(−|x|)), finite for every finite x;
    # (x + |x|)/2 = max(x, 0) exactly, on either backend
    xp = xp_of(x=x)
    return (x + xp.abs(x)) / 2 + xp.log1p(xp.exp(-xp.abs(x)))


def stickbreaking_attention(
    q: Array, k: Array, v: Array, *, scale: float | None = None, attend_current: bool = False
) -> tuple[Array, Array]:
    """``(output, weights)`` of stick-breaking attention: A_ij = σ(z_ij) Π_{j<m<i}(1 − σ(z_im)), z = scale·q kᵀ.

    q ``(..., q_len, d)``, k ``(..., k_len, d)``, v ``(..., k_len, d_v)``, e.g. (B, H, T, D); ``scale``
    defaults to 1/√d. Keys j < i (j ≤ i with ``attend_current``, the product then running over m ≤ i).
    The output adds the rest of the stick to the query's own value, o_i = Σ_j A_ij v_j + (1 − Σ_j A_ij)·v_i,
    with 1 − Σ_j A_ij computed as the product Π_m (1 − β_im) (no cancellation); the weights are A
    ``(..., q_len, k_len)``, ≥ 0, each row summing to at most 1. Queries are the last q_len keys. Log space
    and float64 throughout; results in q's dtype.
    """
    xp, q_len, k_len = check_qkv(q, k, v)
    check_scale(scale)
    _, device = select(None, None, q=q)
    dtype = out_dtype(q)
    q, k, v = f64(q, k, v)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)

    z = (q @ xp.swapaxes(k, -1, -2)) * scale  # z_ij = scale · q_i·k_j
    gap = _relative_distance(q_len, k_len, xp, device)  # j − i (query i at k_len − q_len + i)
    seen = gap <= 0 if attend_current else gap < 0  # the keys a query breaks its stick over
    log_take = -_softplus(-z)  # log β_ij = log σ(z_ij)
    log_keep = xp.where(seen, -_softplus(z), 0.0)  # log(1 − β_im) = log σ(−z_im), 0 on unseen keys
    behind = flip_last(flip_last(log_keep).cumsum(-1))  # Σ_{m≥j} log(1 − β_im)
    after = concat_last([behind[..., 1:], xp.zeros_like(behind[..., :1])])  # Σ_{m>j}: the keys nearer the query
    log_a = xp.where(seen, log_take + after, -math.inf)  # log A_ij
    weights = xp.exp(log_a)  # A_ij ≥ 0
    rest = xp.exp(behind[..., 0])  # Π_m (1 − β_im) = 1 − Σ_j A_ij: the stick left over
    v_self = v[..., k_len - q_len :, :]  # v_i, the value at the query's own position
    out = weights @ v + rest[..., None] * v_self  # o_i = Σ_j A_ij v_j + (1 − Σ_j A_ij) v_i
    return cast(out, dtype), cast(weights, dtype)
