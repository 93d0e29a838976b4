"""Sandwich (Chi et al., 2023, "Dissecting Transformer Length Extrapolation via the Lens of Receptive Field Analysis").

Sandwich keeps the sinusoidal encoding but uses it only as a *bias*: the inner
product of two sinusoidal vectors, which depends only on m − n::

    PE(m) · PE(n) = Σ_{i<d/2} cos((m − n) ω_i),   ω_i = base^(−2i/d)

poslib subtracts d/2 (its value at distance 0), so the bias is 0 on the
diagonal and ≤ 0 elsewhere, and decays (on average, with ripples) with
distance, like a smooth ALiBi. Per head, the bias is divided by 8h/n_h (head h
of n_h, 1-based), as ALiBi spreads its slopes; head 1 of 8 (divisor 1) is the plain sum. Source of the
divisor: NVIDIA NeMo's ``SandwichRelativePositionEmbedding`` (which implements
arXiv:2212.10356 as (Σ_i cos − d/2) / (8h/n_h)) and the paper's Figure 1, which uses
h·8/n_h for ALiBi's heads; the Sandwich section's own text was not checked for it.
NeMo takes ω_i for i = 1 … d/2, poslib (the sinusoidal table's) i = 0 … d/2 − 1.
"""

from __future__ import annotations

from typing import Any

from ._backend import Array, Backend, arange, check_positive_int, select
from .attn import _relative_distance, mask_future
from .sinusoidal import _frequencies

__all__ = ["sandwich_bias"]


def sandwich_bias(
    n_heads: int,
    dim: int,
    q_len: int,
    k_len: int | None = None,
    *,
    base: float = 10000.0,
    causal: bool = False,
    backend: Backend | None = None,
    device: Any = None,
) -> Array:
    """Σ_i [cos((m − n) ω_i) − 1] / (8h/n_h) for head h of n_h = ``n_heads``, shape ``(n_heads, q_len, k_len)``.

    ``dim`` is the sinusoidal dimension (ω_k = base^(−2k/dim)); queries are the last q_len of
    k_len positions (:mod:`poslib.attn`); ``backend=None`` means NumPy.
    """
    check_positive_int("n_heads", n_heads)
    xp, device = select(backend, device)
    k_len = q_len if k_len is None else k_len
    freqs = _frequencies(dim, base, xp, device)
    distance = _relative_distance(q_len, k_len, xp, device, dtype=xp.int64)
    # The bias depends on j − i only, which takes q_len + k_len − 1 values from −(k_len − 1)
    # to q_len − 1: evaluate the cosine sum once per value (O((q+k)·d) work and memory,
    # not O(q·k·d)), then read the matrix out of that table.
    offsets = arange(q_len + k_len - 1, xp, device=device) - (k_len - 1)
    per_offset = (xp.cos(offsets[:, None] * freqs) - 1).sum(-1)  # Σ_k [cos(r·ω_k) − 1]
    bias = per_offset[distance + (k_len - 1)]
    h = arange(n_heads, xp, device=device) + 1
    bias = bias[None] / (8 * h / n_heads)[:, None, None]  # ÷ 8h/n_h
    return mask_future(bias) if causal else bias
