"""Exact logarithmic bucket indices, shared by T5 (:mod:`poslib.t5`) and DeBERTa-v2 (:mod:`poslib.deberta`).

Both schemes map an integer distance a ≥ 1 to ``round(steps · ln(a / small) / ln(large / small))``
with ``round`` = floor (T5) or ceil (DeBERTa). Evaluated in floating point, the ratio of two
logarithms is off by an ulp or two, which is enough to move floor/ceil by one bucket whenever the
exact value is an integer: DeBERTa's ratio at a = max_position − 1 is exactly 1 and came out as
1.0000000000000002 (bucket + 1). So the value is computed in float64 and every entry within a
relative 10⁻⁹ of an integer is decided exactly, with rational arithmetic on Python integers:
v ≥ k  ⇔  (a / small)^steps ≥ (large / small)^k. Only the distinct distances that land near an
integer are checked, so the cost stays that of the vectorised float64 formula.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import torch

from ._backend import Array, is_torch

__all__ = ["exact_log_steps"]

# float64 evaluation errs by a few ulp (~1e-15 relative); anything this close to an integer is re-decided exactly
_NEAR = 1e-9


def _decide(a: int, k: int, small: int, large: int, steps: int, rounding: str) -> int:
    # v = steps·ln(a/small)/ln(large/small) lies within (k − 1, k + 1); compare v with k exactly.
    # ln(large/small) > 0, so  v ≥ k ⇔ steps·ln(a/small) ≥ k·ln(large/small) ⇔ (a/small)^steps ≥ (large/small)^k.
    lhs, rhs = Fraction(a, small) ** steps, Fraction(large, small) ** k
    if rounding == "floor":
        return k if lhs >= rhs else k - 1
    return k if lhs <= rhs else k + 1


def exact_log_steps(distance: Array, small: int, large: int, steps: int, rounding: str) -> Array:
    """⌊·⌋ or ⌈·⌉ (``rounding``) of steps·ln(distance/small)/ln(large/small): exact, float64, kind of ``distance``.

    ``distance`` holds integer values ≥ 1 (float64 array or tensor); ``small`` ≥ 1 and
    ``large`` > ``small`` are integers, ``steps`` ≥ 0.
    """
    xp = torch if is_torch(distance) else np
    v = xp.log(distance / small) / math.log(large / small) * steps
    out = xp.floor(v) if rounding == "floor" else xp.ceil(v)
    if xp is np:
        v, out = np.asarray(v), np.array(out)  # 0-d inputs give NumPy scalars, which take no item assignment
    k = xp.round(v)
    near = xp.abs(v - k) <= _NEAR * xp.maximum(xp.abs(v), xp.ones_like(v))
    if bool(near.any()):
        pairs: dict[tuple[int, int], int] = {}
        a_near, k_near = distance[near].tolist(), k[near].tolist()
        fixed: list[Any] = []
        for a, kk in zip(a_near, k_near, strict=True):
            key = (int(a), int(kk))
            if key not in pairs:
                pairs[key] = _decide(key[0], key[1], small, large, steps, rounding)
            fixed.append(float(pairs[key]))
        if is_torch(out):
            out[near] = torch.tensor(fixed, dtype=out.dtype, device=out.device)
        else:
            out[near] = fixed
    return out
