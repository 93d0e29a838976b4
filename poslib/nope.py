"""NoPE: no positional encoding at all.

Kazemnejad et al., 2023, "The Impact of Positional Encoding on Length Generalization".

Without positions, bidirectional self-attention is permutation-equivariant:
permuting the tokens permutes the outputs the same way, so order is invisible.
A *causal* mask breaks that symmetry (token i sees exactly i + 1 tokens), so a
decoder-only model can still infer position. poslib's NoPE is the identity,
kept as a named scheme so that experiments can compare against it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._backend import Array, xp_of

__all__ = ["apply_nope"]


def apply_nope(x: Array, positions: Array | None = None) -> Array:
    """Return ``x`` unchanged (positions are accepted and ignored, so NoPE fits wherever RoPE does)."""
    xp_of(x=x, positions=positions)
    return x


def bos_logit_advantage(w_bos: Any) -> Any:
    """The BOS logit advantage Δ_m that a causal head's weight on BOS implies, query by query.

    ``w_bos[m]`` is the attention weight of the query at position m on the BOS token at 0. If
    every other key gets the same logit and BOS gets Δ more, w(m) = e^Δ / (e^Δ + m), so
    Δ_m = log(m · w / (1 − w)) for m ≥ 1 (m = 0 sees only BOS: w = 1, no Δ). Returns an array of
    ``len(w_bos) − 1`` values, for m = 1, 2, …; uniform attention (w = 1/(m + 1)) gives Δ = 0.
    """
    w = np.asarray(w_bos, dtype=float)
    if w.ndim != 1 or len(w) < 2:
        raise ValueError(f"w_bos must be a 1-D array with one weight per query position m ≥ 0, got shape {w.shape}")
    if (w[1:] <= 0).any() or (w[1:] >= 1).any():
        raise ValueError("w_bos must lie strictly between 0 and 1 for m ≥ 1 (a weight shared with other keys)")
    m = np.arange(1, len(w))
    return np.log(m * w[1:] / (1 - w[1:]))
