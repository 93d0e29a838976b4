"""Reference scaled-dot-product attention, masks, distances and the measurements the notebooks take of it.

(The module is ``attn``, not ``attention``: ``poslib.attention`` is the function, and a module of
the same name would be shadowed by it as soon as the package re-exports it.)

Where queries sit: with ``q_len`` queries and ``k_len ≥ q_len`` keys, the queries are the *last*
q_len positions, query i at position k_len − q_len + i (decoding with a KV cache). Every bias
builder and relative-position helper in poslib follows this one convention.

    scores = q kᵀ · scale + bias,   scale = 1/√d by default
    weights = softmax(scores) over keys,   output = weights · v

Written for clarity and exactness (it returns the weights), not speed; the lab's
model uses ``torch.nn.functional.scaled_dot_product_attention`` instead.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ._backend import Array, Backend, arange, check_positive_int, select, xp_of

__all__ = ["attention", "attention_entropy", "causal_mask", "mask_future", "relative_distance", "softmax"]


def relative_distance(
    q_len: int, k_len: int | None = None, *, dtype: Any = None, backend: Backend = "numpy", device: Any = None
) -> Array:
    """``j − i`` for query i and key j, shape ``(q_len, k_len)``, float64 unless ``dtype`` is given.

    The queries are the *last* q_len of k_len positions (module docstring): query i sits at
    absolute position k_len − q_len + i.
    """
    xp, device = select(backend, device)
    return _relative_distance(q_len, k_len, xp, device, dtype)


def _relative_distance(q_len: int, k_len: int | None, xp: Any, device: Any, dtype: Any = None) -> Array:
    # j − i with i = k_len − q_len + (0 … q_len − 1): the queries are the last q_len positions
    check_positive_int("q_len", q_len)
    k_len = q_len if k_len is None else k_len
    check_positive_int("k_len", k_len)
    i = arange(q_len, xp, dtype=dtype, device=device) + (k_len - q_len)
    j = arange(k_len, xp, dtype=dtype, device=device)
    return j[None, :] - i[:, None]


def causal_mask(q_len: int, k_len: int | None = None, *, backend: Backend = "numpy", device: Any = None) -> Array:
    """Boolean ``(q_len, k_len)``, True where key j may be seen by query i (j ≤ i)."""
    xp, device = select(backend, device)
    return _causal_mask(q_len, k_len, xp, device)


def _causal_mask(q_len: int, k_len: int | None, xp: Any, device: Any) -> Array:
    return _relative_distance(q_len, k_len, xp, device) <= 0  # j − i ≤ 0: the key is not after the query


def mask_future(scores: Array) -> Array:
    """``scores`` with −inf wherever the key comes after the query (last two axes are query, key)."""
    xp, device = select(None, None, scores=scores)
    q_len, k_len = scores.shape[-2:]
    return xp.where(_causal_mask(q_len, k_len, xp, device), scores, -math.inf)


def softmax(scores: Array, axis: int = -1) -> Array:
    """Numerically stable softmax along ``axis`` (rows that are all −inf give NaN, as in PyTorch)."""
    if xp_of(scores=scores) is torch:
        return torch.softmax(scores, dim=axis)
    shifted = scores - np.max(scores, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def attention(
    q: Array,
    k: Array,
    v: Array,
    *,
    bias: Array | None = None,
    causal: bool = False,
    scale: float | None = None,
    sinks: Array | None = None,
) -> tuple[Array, Array]:
    """``(output, weights)`` of softmax(q kᵀ·scale + bias [+ causal mask]) v.

    Shapes: q ``(..., q_len, d)``, k ``(..., k_len, d)``, v ``(..., k_len, d_v)``,
    bias broadcastable to ``(..., q_len, k_len)``.

    ``sinks``: learned attention sinks as in gpt-oss (one logit per head, shape ``(n_heads,)`` for
    q ``(..., n_heads, q_len, d)``, or a scalar). Each row's softmax then runs over its scores *and*
    the sink logit z_sink,h, and the sink's column is dropped:

        a_{m,n} = exp(z_{m,n}) / (Σ_n' exp(z_{m,n'}) + exp(z_sink,h)),

    so the returned weights of a row sum to less than 1 and the sink carries no value. (StreamingLLM's
    sinks are different: real first tokens, kept in the cache, whose values do count.)
    """
    xp = xp_of(q=q, k=k, v=v, bias=bias, sinks=sinks)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their last dimension, got q {tuple(q.shape)} and k {tuple(k.shape)}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys, got k {tuple(k.shape)} and v {tuple(v.shape)}")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ xp.swapaxes(k, -1, -2)) * scale
    if bias is not None:
        scores = scores + bias
    if causal:
        scores = mask_future(scores)
    weights = softmax(scores) if sinks is None else _softmax_with_sink(scores, sinks, xp)
    return weights @ v, weights


def _softmax_with_sink(scores: Array, sinks: Array, xp: Any) -> Array:
    """Softmax over each row of ``scores`` joined by its head's sink logit, the sink column dropped."""
    sink = sinks if hasattr(sinks, "shape") else xp.asarray(sinks, dtype=scores.dtype)
    if sink.ndim > 1 or (sink.ndim == 1 and (scores.ndim < 3 or sink.shape[0] != scores.shape[-3])):
        heads = scores.shape[-3] if scores.ndim >= 3 else None
        raise ValueError(
            f"sinks must be a scalar or hold one logit per head (shape ({heads},)), got shape {tuple(sink.shape)}"
        )
    sink = sink.reshape(-1, 1, 1) if sink.ndim == 1 else sink
    sink = sink.to(scores.dtype) if xp is torch else sink.astype(scores.dtype, copy=False)
    # subtract each row's largest logit, the sink included, before exponentiating (as gpt-oss does)
    row_max = scores.amax(-1, keepdim=True) if xp is torch else np.max(scores, axis=-1, keepdims=True)
    top = xp.maximum(row_max, sink)
    e = xp.exp(scores - top)
    row_sum = e.sum(-1, keepdim=True) if xp is torch else np.sum(e, axis=-1, keepdims=True)
    return e / (row_sum + xp.exp(sink - top))


def attention_entropy(weights: Array) -> Array:
    """Entropy −Σ_j w_ij ln w_ij of each attention row (in nats; 0·ln 0 counts as 0)."""
    xp = xp_of(weights=weights)
    safe = xp.where(weights > 0, weights, 1.0)
    return -(weights * xp.log(safe)).sum(-1)
