"""ALiBi: attention with linear biases (Press et al., 2022, "Train Short, Test Long", arXiv:2108.12409).

No position vectors at all: each head h adds ``−μ_h · |m − n|`` to the score of
query m and key n (μ_h is the paper's m_h; m is the query's position here). The slopes
form a geometric sequence; for n_h heads, n_h a power of two::

    μ_h = 2^(−8h/n_h),  h = 1 … n_h          (8 heads: 1/2, 1/4, …, 1/256)

For other n_h the paper takes the n_2 = 2^⌊log₂ n_h⌋ slopes of the nearest lower power
of two, then fills the rest with every other slope of the sequence for 2·n_2 heads
(the odd-indexed terms 2^(−4/n_2)… interleave with the first set).

Conventions of the published code (tests/test_reference.py compares with both):

* Bloom (Hugging Face ``build_alibi_tensor``) adds +μ_h·n, the key's position, not −μ_h·(m − n):
  the two differ by −μ_h·m, a constant per query row, which softmax ignores. It also computes the
  slopes in float32 (relative error up to ~10⁻⁵ for ~1000 heads); poslib's are float64.
* x-transformers' ``AlibiPositionalBias(i, j)`` places the i queries at the end of the j keys,
  as every poslib bias builder does (:mod:`poslib.attn`), and is equal to :func:`alibi_bias`.
"""

from __future__ import annotations

import math
from typing import Any

from ._backend import Array, Backend, check_positive_int, select, to_float, xp_of
from .attn import _relative_distance, mask_future

__all__ = ["alibi_bias", "alibi_slopes"]


def _power_of_two_slopes(n: int) -> list[float]:
    # μ_h = (2^(−8/n))^h for h = 1 … n
    start = 2.0 ** (-8.0 / n)
    return [start**h for h in range(1, n + 1)]


def _slopes(n_heads: int) -> list[float]:
    check_positive_int("n_heads", n_heads)
    p = 2 ** math.floor(math.log2(n_heads))
    slopes = _power_of_two_slopes(p)
    if p < n_heads:  # the odd-indexed slopes of 2p heads fill the rest
        slopes += _power_of_two_slopes(2 * p)[0::2][: n_heads - p]
    return slopes


def alibi_slopes(n_heads: int, *, backend: Backend = "numpy", device: Any = None) -> Array:
    """The paper's slope per head, float64, shape ``(n_heads,)``."""
    xp, device = select(backend, device)
    return to_float(_slopes(n_heads), xp, device=device)


def alibi_bias(
    n_heads: int,
    q_len: int,
    k_len: int | None = None,
    *,
    causal: bool = False,
    backend: Backend | None = None,
    device: Any = None,
) -> Array:
    """ALiBi bias ``(n_heads, q_len, k_len)``: −μ_h·|m − n|, with −inf on future keys when ``causal``.

    Queries are the last q_len of k_len positions (:mod:`poslib.attn`); ``backend=None`` means NumPy.
    """
    xp, device = select(backend, device)
    distance = xp.abs(_relative_distance(q_len, k_len, xp, device))
    bias = -to_float(_slopes(n_heads), xp, device=device)[:, None, None] * distance
    return mask_future(bias) if causal else bias


def alibi_receptive_field(slopes: Array, mass: float = 0.9, *, length: int | None = None) -> Array:
    """Per head, the smallest distance D whose keys 0 … D away hold ``mass`` of a query's attention under ALiBi alone.

    With equal content scores a query's weight on the key Δ tokens back is
    ∝ e^(−μ·Δ), so the keys within distance D hold (1 − e^(−μ(D+1))) / (1 − e^(−μ·N))
    of the mass (N = ``length`` keys; N = ∞ when ``length`` is None):
    D = ⌈−ln(1 − mass·(1 − e^(−μ·N))) / μ⌉ − 1, at most N − 1.
    Returns integer-valued floats of ``slopes``' kind.
    """
    if isinstance(mass, bool) or not isinstance(mass, (int, float)) or not 0 < mass < 1:
        raise ValueError(f"mass must be a number strictly between 0 and 1, got {mass!r}")
    if length is not None:
        check_positive_int("length", length)
    xp = xp_of(slopes=slopes)
    m = to_float(slopes, xp)
    if bool((m <= 0).any()):
        raise ValueError("slopes must be positive")
    total = xp.ones_like(m) if length is None else 1 - xp.exp(-m * length)
    # the 1e-9 keeps an exact boundary (e.g. mass 1 − e^(−m)) from rounding up one step
    d = xp.ceil(-xp.log(1 - mass * total) / m - 1e-9) - 1
    d = xp.clip(d, 0, None)
    return d if length is None else xp.clip(d, 0, length - 1)
