"""What RoPE meets beyond its training length: angles it never saw, and a KV cache that drifts.

Unseen angles (source 000, §6.1, used by notebook 06). Over a training context of L tokens, RoPE pair i
turns through the relative angles (m − n)·θ_i with |m − n| ≤ L − 1. A pair
that completes a full turn in training has seen every angle (mod 2π); a slow
pair (wavelength 2π/θ_i > L − 1) has only seen the arc [0, (L − 1)·θ_i].
At an inference length L' > L it meets new angles up to (L' − 1)·θ_i:
:func:`rope_unseen_angle` measures that new arc per pair.

(The other problem of that section, a softmax spreading over more keys as n grows, is
measured by :func:`poslib.teaching.attention_entropy_vs_length`: a teaching curve on random
scores, not a property of a scheme.)

Cache drift: :func:`rope_cache_drift` shows why dynamic NTK and a KV
cache disagree (huggingface/transformers #25104): each cached key was rotated
with the frequencies in force when it was written, not with today's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ._backend import Array, Backend, check_positive_int, namespace, to_float, xp_of
from .rope_scaling import rope_inv_freq

__all__ = ["rope_cache_drift", "rope_unseen_angle"]


def rope_unseen_angle(inv_freq: Array, train_len: int, infer_len: int, *, infer_inv_freq: Array | None = None) -> Array:
    """Per RoPE pair, the arc (radians, in [0, 2π]) of relative angles unseen in training.

    An angle counts when it is met below ``infer_len`` but never below ``train_len``.

    seen = min(2π, (L − 1)·θ_i),  reached = min(2π, (L' − 1)·θ'_i),  unseen = max(0, reached − seen),
    where θ are the training frequencies ``inv_freq`` and θ' the inference ones
    (``infer_inv_freq``, e.g. after PI or NTK scaling; default θ' = θ).
    Zero for every pair that turned at least once in training, and, with θ' = θ, for every pair when L' ≤ L.
    """
    check_positive_int("train_len", train_len)
    check_positive_int("infer_len", infer_len)
    xp = xp_of(inv_freq=inv_freq, infer_inv_freq=infer_inv_freq)
    theta = to_float(inv_freq, xp)
    later = theta if infer_inv_freq is None else to_float(infer_inv_freq, xp)
    if tuple(later.shape) != tuple(theta.shape):
        raise ValueError(f"infer_inv_freq must have inv_freq's shape {tuple(theta.shape)}, got {tuple(later.shape)}")
    if bool((theta <= 0).any()) or bool((later <= 0).any()):
        raise ValueError("inv_freq and infer_inv_freq must be positive (frequencies in radians per token)")
    full = 2 * math.pi
    seen = xp.clip((train_len - 1) * theta, 0, full)
    reached = xp.clip((infer_len - 1) * later, 0, full)
    return xp.clip(reached - seen, 0, full)


def rope_cache_drift(
    head_dim: int, base: float, scaling: Mapping[str, Any], seq_len: int, *, backend: Backend = "numpy"
) -> Array:
    """Angle error (radians) of each cached key when a length-dependent RoPE scaling meets a KV cache.

    Generating token by token, the key at position j is rotated once, when the
    sequence is j + 1 long, with ``rope_inv_freq(..., seq_len=j + 1)``, then
    cached. At length ``seq_len`` a fresh computation would rotate it with
    ``rope_inv_freq(..., seq_len=seq_len)``. Returns j·|θ_i(seq_len) − θ_i(j + 1)|,
    wrapped to [0, π], shape ``(seq_len, head_dim/2)``: zero for static scalings, non-zero for
    ``"dynamic"`` once ``seq_len`` exceeds the original context.
    """
    check_positive_int("seq_len", seq_len)
    xp = namespace(backend)
    now, _ = rope_inv_freq(head_dim, base, scaling, seq_len=seq_len, backend=backend)
    rows = []
    for j in range(seq_len):
        then, _ = rope_inv_freq(head_dim, base, scaling, seq_len=j + 1, backend=backend)
        rows.append(j * (now - then))
    # wrapped to [0, π]: how far the cached rotation is from the fresh one, whichever way round
    return xp.abs(xp.remainder(xp.stack(rows) + math.pi, 2 * math.pi) - math.pi)
