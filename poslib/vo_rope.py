"""Rotated values: VO-RoPE as DeepSeek-V4 uses it (one shared key/value head, K = V, and the output turned back).

RoPE turns queries and keys, so a score depends only on the distance j − i; the values stay position-blind.
Su's "second kind of rotary position encoding", VO-RoPE (kexue.fm/archives/10862, 18 April 2025), turns the
values too and the output back::

    s_ij = scale · (R_i q_i)·(R_j k_j) = scale · q_iᵀ R_{j−i} k_j
    o_i  = R_iᵀ Σ_j a_ij R_j v_j  = Σ_j a_ij R_{j−i} v_j

so each value's contribution depends only on its distance to the query as well. DeepSeek-V4 needs it because its
attention has one shared head that is read as both key and value (K = V, multi-query): once the keys are
rotated, so are the values, and the output's rotated slice is rotated back by the query's position (−i).

Conventions, as transformers' ``models/deepseek_v4/modeling_deepseek_v4.py`` (5.25.0: ``DeepseekV4Attention``,
``apply_rotary_pos_emb``, ``eager_attention_forward``) computes them, and as the copies of DeepSeek's inference
code read here do (``apply_rotary_emb(q[..., -rd:], freqs_cis)``, the same for kv, then
``apply_rotary_emb(o[..., -rd:], freqs_cis, True)``, the conjugate; the official file itself was not read):

* the rotated features are the **trailing** ``rope_dim`` of each head, ``x[..., -rope_dim:]`` (the head is laid
  out ``[nope | rope]``; transformers' class docstring says "first rope_head_dim", its code takes the last);
* inside them the pairs are **interleaved**, (2i, 2i + 1), turning at angle position × inv_freq[i];
* the scale defaults to 1/√D over the whole head dimension D (``head_dim ** -0.5``), not 1/√rope_dim;
* one learned sink logit per head joins each row's softmax and its column is dropped afterwards (as gpt-oss,
  :func:`poslib.attention`'s ``sinks``), so a row's weights sum to less than 1 and the sink carries no value;
* the turn back is the conjugate rotation at the query's own position i (``-sin`` in transformers), applied to the
  attention output's trailing slice only.

DeepSeek-V4's sliding window, compressed entries and top-k selection are left out: this is the position part.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from ._backend import Array, arange, cast, check_even, is_torch, xp_of
from ._causal_checks import check_scale, f64, out_dtype
from .attn import _softmax_with_sink, mask_future, softmax
from .rope import _rotate_pairs, rope_cos_sin

__all__ = ["vo_rope_attention"]


def _rotate_trailing(x: Array, cos: Array, sin: Array, rope_dim: int) -> Array:
    # Interleaved RoPE on x[..., -rope_dim:] (pairs (2i, 2i+1)); the leading nope features are copied through.
    xp = xp_of(x=x)
    nope, rope = x[..., : x.shape[-1] - rope_dim], x[..., x.shape[-1] - rope_dim :]
    return xp.concatenate([nope, _rotate_pairs(rope, cos, sin, "interleaved")], axis=-1)


def _turn_back(out: Array, cos: Array, sin: Array, rope_dim: int) -> Array:
    # R_iᵀ = R_{−i}: the conjugate rotation at the query's position (transformers passes −sin)
    return _rotate_trailing(out, cos, -sin, rope_dim)


def _sink_softmax(scores: Array, sinks: Array | None) -> Array:
    # softmax over [scores | sink] with the sink's column dropped afterwards (gpt-oss, DeepSeek-V4)
    if sinks is None:
        return softmax(scores)
    return _softmax_with_sink(scores, sinks, xp_of(scores=scores, sinks=sinks))


def _check(q: Array, kv: Array, inv_freq: Array, rope_dim: Any, sinks: Array | None) -> None:
    xp_of(q=q, kv=kv, inv_freq=inv_freq, sinks=sinks)  # TypeError naming them when NumPy meets torch
    for name, a in (("q", q), ("kv", kv)):
        if not hasattr(a, "ndim") or a.ndim < 3:
            raise ValueError(f"{name} must have shape (B, H, T, D) (at least (H, T, D)), got {getattr(a, 'shape', a)}")
    if kv.ndim != q.ndim or kv.shape[-3] != 1:
        raise ValueError(f"kv must have shape (B, 1, T, D), one shared key/value head, got {tuple(kv.shape)}")
    if q.shape[:-3] != kv.shape[:-3] or q.shape[-2:] != kv.shape[-2:]:
        raise ValueError(
            f"q (B, H, T, D) and kv (B, 1, T, D) must agree on B, T and D, got {tuple(q.shape)} and {tuple(kv.shape)}"
        )
    if isinstance(rope_dim, bool) or not isinstance(rope_dim, numbers.Integral):
        raise ValueError(f"rope_dim must be a positive even integer, got {rope_dim!r}")
    check_even("rope_dim", rope_dim)
    if rope_dim > q.shape[-1]:
        raise ValueError(f"rope_dim must be at most the head dimension D = {q.shape[-1]}, got {rope_dim}")
    n_freq = len(inv_freq) if not hasattr(inv_freq, "shape") else (inv_freq.shape[-1] if inv_freq.ndim else 1)
    if n_freq != rope_dim // 2:
        raise ValueError(f"inv_freq must have rope_dim/2 = {rope_dim // 2} entries, got {n_freq}")


def vo_rope_attention(
    q: Array,
    kv: Array,
    inv_freq: Array,
    *,
    rope_dim: int,
    sinks: Array | None = None,
    scale: float | None = None,
    positions: Array | None = None,
) -> tuple[Array, Array]:
    """``(out, weights)`` of DeepSeek-V4's causal attention with rotated values: o_i = Σ_j a_ij R_{j−i} v_j.

    q ``(B, H, T, D)``; kv ``(B, 1, T, D)``, the one shared head read as both keys and values; ``inv_freq``
    rope_dim/2 frequencies; ``positions`` ``(T,)``, default 0 … T−1 (an offset, as when decoding after a
    prefix, must change nothing). The trailing ``rope_dim`` features of q and kv are rotated
    (interleaved pairs (2i, 2i+1) inside that slice), scores are scale·q kᵀ (``scale`` default 1/√D), causal,
    with ``sinks`` (one logit per head, shape ``(H,)``, or a scalar) as an extra column of each row's softmax
    that is dropped after it; out = weights · (rotated kv), and then its trailing slice is turned back by the
    query's position, R_{−i}. Returns out ``(B, H, T, D)`` and weights ``(B, H, T, T)`` (without the sink
    column: rows sum to 1 − the sink's share, as :func:`poslib.attention` returns them), both in q's dtype;
    angles, scores and softmax are float64. Conventions and sources: the module docstring.

    Shifting every position by the same Δ changes nothing (scores and value contributions depend on j − i
    only); without the turn back the output would carry the query's absolute position.
    """
    _check(q, kv, inv_freq, rope_dim, sinks)
    xp_of(q=q, positions=positions)
    check_scale(scale)
    dtype = out_dtype(q)
    q64, kv64 = f64(q, kv)
    xp = xp_of(q=q64)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    device = q.device if is_torch(q) else None
    if positions is None:
        positions = arange(q.shape[-2], xp, device=device)
    elif not hasattr(positions, "shape") or tuple(positions.shape) != (q.shape[-2],):
        raise ValueError(
            f"positions must have shape (T,) = ({q.shape[-2]},), got {getattr(positions, 'shape', positions)}"
        )
    freq = cast(inv_freq, q64.dtype) if is_torch(inv_freq) else inv_freq
    cos, sin = rope_cos_sin(positions, freq)  # float64 angles m·θ_i, shape (T, rope_dim/2)

    q_rot = _rotate_trailing(q64, cos, sin, rope_dim)  # R_i q_i
    kv_rot = _rotate_trailing(kv64, cos, sin, rope_dim)  # R_j k_j, and R_j v_j: K = V
    scores = (q_rot @ xp.swapaxes(kv_rot, -1, -2)) * scale  # broadcast over the H query heads
    weights = _sink_softmax(mask_future(scores), sinks)  # a_ij over j ≤ i, the sink's share dropped
    out = _turn_back(weights @ kv_rot, cos, sin, rope_dim)  # R_iᵀ Σ_j a_ij R_j v_j
    return cast(out, dtype), cast(weights, dtype)
