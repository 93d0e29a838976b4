"""Sinusoidal absolute position encoding (Vaswani et al., 2017, "Attention Is All You Need", §3.5).

For position ``p`` and pair index ``i = 0 … d/2 − 1``::

    ω_i          = base^(−2i/d)
    PE(p, 2i)    = sin(p · ω_i)
    PE(p, 2i+1)  = cos(p · ω_i)

Pair ``i`` is a clock hand turning at angular speed ω_i, so its wavelength is
``2π / ω_i = 2π · base^(2i/d)``: from 2π for the first pair to almost
``2π · base`` for the last.

Two consequences the notebooks verify:

* ``PE(m) · PE(n) = Σ_i cos((m − n) ω_i)`` depends only on ``m − n``;
* ``PE(p + k) = M_k · PE(p)`` with ``M_k`` block-diagonal 2×2 rotations that do
  not depend on ``p`` (:func:`sinusoidal_shift_matrix`).

Layouts: ``"interleaved"`` (sin at even, cos at odd dims: the paper, BERT-style
code, DistilBERT) or ``"concat"`` (all sines then all cosines: Transformer-XL,
Marian, GPT-J, many diffusion models).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from ._backend import (
    Array,
    Backend,
    arange,
    check_choice,
    check_even,
    check_positive,
    check_positive_int,
    is_torch,
    namespace,
    select,
    to_float,
    xp_of,
)

__all__ = [
    "SinusoidalEmbedding",
    "sinusoidal_encode",
    "sinusoidal_frequencies",
    "sinusoidal_shift_matrix",
    "sinusoidal_table",
]

LAYOUTS = ("interleaved", "concat")


def sinusoidal_frequencies(dim: int, base: float = 10000.0, *, backend: Backend = "numpy", device: Any = None) -> Array:
    """Angular frequencies ω_i = base^(−2i/dim) for i = 0 … dim/2 − 1 (float64)."""
    return _frequencies(dim, base, *select(backend, device))


def _frequencies(dim: int, base: float, xp: Any, device: Any) -> Array:
    check_even("dim", dim)
    check_positive("base", base)
    two_i = arange(dim // 2, xp, device=device) * 2
    return xp.exp(-two_i / dim * math.log(base))  # ω_i = base^(−2i/dim)


def _interleave_or_concat(sin: Array, cos: Array, layout: str) -> Array:
    xp = xp_of(sin=sin)
    if layout == "concat":
        return xp.concatenate([sin, cos], axis=-1)
    # stack pairs on a new last axis, then flatten: (…, d/2, 2) → (…, d)
    pairs = xp.stack([sin, cos], axis=-1)
    return pairs.reshape(*pairs.shape[:-2], -1)


def sinusoidal_encode(positions: Array, dim: int, base: float = 10000.0, *, layout: str = "interleaved") -> Array:
    """Encode arbitrary (even negative or fractional) ``positions`` as sinusoids, shape ``(*positions.shape, dim)``.

    The result is float64 and has the backend of ``positions`` (a list or range
    gives NumPy). Negative positions are what Transformer-XL needs for its
    relative encodings R_{i−j}.
    """
    check_choice("layout", layout, LAYOUTS)
    xp = xp_of(positions=positions)
    p = to_float(positions, xp)
    freqs = _frequencies(dim, base, xp, p.device if is_torch(p) else None)
    angles = p[..., None] * freqs  # angle = p · ω_i, always float64
    return _interleave_or_concat(xp.sin(angles), xp.cos(angles), layout)


def sinusoidal_table(
    n_positions: int,
    dim: int,
    base: float = 10000.0,
    *,
    layout: str = "interleaved",
    backend: Backend = "numpy",
    device: Any = None,
) -> Array:
    """The ``(n_positions, dim)`` float64 table PE(p) for p = 0 … n_positions − 1."""
    check_positive_int("n_positions", n_positions)
    xp = namespace(backend)
    return sinusoidal_encode(arange(n_positions, xp, device=device), dim, base, layout=layout)


def sinusoidal_shift_matrix(
    k: float, dim: int, base: float = 10000.0, *, layout: str = "interleaved", backend: Backend = "numpy"
) -> Array:
    """The fixed ``(dim, dim)`` matrix M_k with PE(p + k) = M_k · PE(p) for every p.

    From the angle-sum identities, each (sin, cos) pair at frequency ω obeys::

        [sin(ω(p+k))]   [ cos ωk   sin ωk] [sin ωp]
        [cos(ω(p+k))] = [−sin ωk   cos ωk] [cos ωp]

    so M_k is block-diagonal (interleaved layout) and contains no p at all.
    """
    check_choice("layout", layout, LAYOUTS)
    xp = namespace(backend)
    w = sinusoidal_frequencies(dim, base, backend=backend)
    c, s = xp.cos(k * w), xp.sin(k * w)
    half = dim // 2
    m = xp.zeros((dim, dim), dtype=xp.float64)
    sin_rows = arange(half, xp, dtype=xp.int64) * 2 if layout == "interleaved" else arange(half, xp, dtype=xp.int64)
    cos_rows = sin_rows + (1 if layout == "interleaved" else half)
    m[sin_rows, sin_rows] = c
    m[sin_rows, cos_rows] = s
    m[cos_rows, sin_rows] = -s
    m[cos_rows, cos_rows] = c
    return m


class SinusoidalEmbedding(nn.Module):
    """Adds nothing trainable: returns PE(positions) (float32 by default) for ``x + PE``.

    ``forward(positions)`` accepts any integer tensor of positions, so it never
    runs out of rows, which is what makes the scheme defined at every length.
    """

    def __init__(self, dim: int, base: float = 10000.0, *, layout: str = "interleaved") -> None:
        super().__init__()
        check_even("dim", dim)
        check_positive("base", base)
        self.dim, self.base, self.layout = dim, base, layout

    def forward(self, positions: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return sinusoidal_encode(positions, self.dim, self.base, layout=self.layout).to(dtype)
