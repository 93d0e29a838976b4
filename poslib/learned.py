"""Learned absolute position embeddings (BERT, GPT-2, ALBERT, OPT…; Gehring et al. 2017 for ConvS2S).

A trainable table P of shape (L_max, d); token m's vector becomes x_m + P[m].
The model only ever sees rows 0 … L_max − 1: a position ≥ L_max has no row at
all, and rows for positions that never occurred in training stay at their
random initialisation. That is why this scheme cannot extrapolate.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ._backend import Array, asarray, check_positive_int, is_torch, xp_of

__all__ = ["LearnedPositionalEmbedding", "learned_lookup"]


def learned_lookup(table: Array, positions: Any) -> Array:
    """Rows ``table[positions]`` of a ``(L_max, d)`` table, with a clear error for positions outside [0, L_max)."""
    xp = xp_of(table=table, positions=positions)
    if table.ndim != 2:
        raise ValueError(f"table must have shape (L_max, dim), got {tuple(table.shape)}")
    idx = asarray(positions, xp, like=table if is_torch(table) else None)
    integer = (
        (not idx.is_floating_point() and not idx.is_complex() and idx.dtype != torch.bool)
        if is_torch(idx)
        else idx.dtype.kind in "iu"
    )
    if not integer:
        raise TypeError(f"positions must be integers, got dtype {idx.dtype}")
    n = table.shape[0]
    if idx.numel() if is_torch(idx) else idx.size:
        hi, lo = int(idx.max()), int(idx.min())
        if hi >= n or lo < 0:
            bad = hi if hi >= n else lo
            raise IndexError(
                f"positions contains {bad}, but the learned table has rows 0 … {n - 1} only (L_max = {n}); "
                "a learned absolute embedding has no vector for positions it was not built with"
            )
    return table[idx]


class LearnedPositionalEmbedding(nn.Module):
    """A trainable ``(max_len, dim)`` table; ``forward(positions)`` returns its rows (with the same bound check).

    Initialised from N(0, 0.02²) as in GPT-2 and BERT.
    """

    def __init__(self, max_len: int, dim: int, *, init_std: float = 0.02) -> None:
        super().__init__()
        check_positive_int("max_len", max_len)
        check_positive_int("dim", dim)
        self.weight = nn.Parameter(torch.randn(max_len, dim) * init_std)

    @property
    def max_len(self) -> int:
        """L_max, the number of rows."""
        return self.weight.shape[0]

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return learned_lookup(self.weight, positions)
