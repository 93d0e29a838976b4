"""NoPE: no positional encoding at all.

Kazemnejad et al., 2023, "The Impact of Positional Encoding on Length Generalization".

Without positions, bidirectional self-attention is permutation-equivariant:
permuting the tokens permutes the outputs the same way, so order is invisible.
A *causal* mask breaks that symmetry (token i sees exactly i + 1 tokens), so a
decoder-only model can still infer position. poslib's NoPE is the identity,
kept as a named scheme so that experiments can compare against it.
"""

from __future__ import annotations

from ._backend import Array, xp_of

__all__ = ["apply_nope"]


def apply_nope(x: Array, positions: Array | None = None) -> Array:
    """Return ``x`` unchanged (positions are accepted and ignored, so NoPE fits wherever RoPE does)."""
    xp_of(x=x, positions=positions)
    return x
