"""Sandwich (Chi et al., 2023, "Dissecting Transformer Length Extrapolation via the Lens of Receptive Field Analysis").

Sandwich keeps the sinusoidal encoding but uses it only as a *bias*: the inner
product of two sinusoidal vectors, which depends only on i − j::

    PE(i) · PE(j) = Σ_{k<d/2} cos((i − j) ω_k),   ω_k = base^(−2k/d)

poslib subtracts d/2 (its value at distance 0), so the bias is 0 on the
diagonal and ≤ 0 elsewhere, and decays (on average, with ripples) with
distance, like a smooth ALiBi. Per head, the bias is divided by 8h/H (head h
of H, 1-based; pass ``n_heads``), as ALiBi spreads its slopes. Source of the
divisor: NVIDIA NeMo's ``SandwichRelativePositionEmbedding`` (which implements
arXiv:2212.10356 as (Σ_k cos − d/2) / (8h/H)) and the paper's Figure 1, which uses
h·8/H for ALiBi's heads; the Sandwich section's own text was not checked for it.
NeMo takes ω_k for k = 1 … d/2, poslib (the sinusoidal table's) k = 0 … d/2 − 1.
"""

from __future__ import annotations

from typing import Any

from ._backend import Array, Backend, arange, check_positive_int, namespace
from .attention import mask_future, relative_distance
from .sinusoidal import sinusoidal_frequencies

__all__ = ["sandwich_bias"]


def sandwich_bias(
    q_len: int,
    k_len: int | None,
    dim: int,
    *,
    base: float = 10000.0,
    n_heads: int | None = None,
    causal: bool = False,
    backend: Backend = "numpy",
    device: Any = None,
) -> Array:
    """Σ_k [cos((i − j) ω_k) − 1], shape ``(q_len, k_len)``, or ``(n_heads, q_len, k_len)`` with per-head scaling."""
    xp = namespace(backend)
    k_len = q_len if k_len is None else k_len
    freqs = sinusoidal_frequencies(dim, base, backend=backend, device=device)
    distance = relative_distance(q_len, k_len, dtype=xp.int64, backend=backend, device=device)
    # The bias depends on j − i only, which takes q_len + k_len − 1 values from −(k_len − 1)
    # to q_len − 1: evaluate the cosine sum once per value (O((q+k)·d) work and memory,
    # not O(q·k·d)), then read the matrix out of that table.
    offsets = arange(q_len + k_len - 1, xp, device=device) - (k_len - 1)
    per_offset = (xp.cos(offsets[:, None] * freqs) - 1).sum(-1)
    bias = per_offset[distance + (k_len - 1)]
    if n_heads is not None:
        check_positive_int("n_heads", n_heads)
        h = xp.arange(1, n_heads + 1, dtype=xp.float64)
        if device is not None:
            h = h.to(device)
        bias = bias[None] / (8 * h / n_heads)[:, None, None]
    return mask_future(bias) if causal else bias
