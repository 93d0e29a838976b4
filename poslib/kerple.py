"""KERPLE: kernelized relative positional embedding (Chi et al., 2022, arXiv:2205.09921).

A learnable, conditionally positive definite kernel of the distance |i − j|
is added to the attention scores, per head::

    power:  b(i, j) = −r₁ · |i − j|^r₂          (r₁ > 0, 0 < r₂ ≤ 2)
    log:    b(i, j) = −r₁ · log(1 + r₂ · |i − j|)  (r₁, r₂ > 0)

With r₂ = 1 the power form is ALiBi with a learned slope; the log form decays
ever more slowly, which the paper found extrapolates best.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ._backend import Array, Backend, check_choice, select, to_float
from .attn import _relative_distance, mask_future

__all__ = ["KerpleBias", "kerple_bias"]

KINDS = ("power", "log")


def kerple_bias(
    r1: Any,
    r2: Any,
    q_len: int,
    k_len: int | None = None,
    *,
    kind: str = "log",
    causal: bool = False,
    backend: Backend | None = None,
    device: Any = None,
) -> Array:
    """KERPLE bias ``(n_heads, q_len, k_len)``, one head per entry of r1/r2 (a scalar pair is one head).

    r1 and r2 are numbers or per-head arrays ``(n_heads,)``, possibly tensors with gradients:
    ``backend=None`` follows them (NumPy for plain numbers), and the distances go to their
    device. Queries are the last q_len of k_len positions (:mod:`poslib.attn`).
    """
    check_choice("kind", kind, KINDS)
    xp, device = select(backend, device, r1=r1, r2=r2)
    r1, r2 = to_float(r1, xp, device=device), to_float(r2, xp, device=device)
    if bool((r1 <= 0).any()) or bool((r2 <= 0).any()):
        raise ValueError("r1 and r2 must be positive")
    if kind == "power" and bool((r2 > 2).any()):
        raise ValueError("r2 must be in (0, 2] for kind='power' (the kernel is then conditionally positive definite)")
    for name, r in (("r1", r1), ("r2", r2)):
        if r.ndim > 1:
            raise ValueError(f"{name} must be a number or have shape (n_heads,), got shape {tuple(r.shape)}")
    # (n_heads, 1, 1) against (q_len, k_len): a scalar is one head
    r1, r2 = r1.reshape(-1, 1, 1), r2.reshape(-1, 1, 1)
    distance = xp.abs(_relative_distance(q_len, k_len, xp, device))
    if kind == "power":
        bias = -r1 * distance**r2  # −r₁·|i − j|^r₂
    else:
        bias = -r1 * xp.log(1 + r2 * distance)  # −r₁·log(1 + r₂·|i − j|)
    return mask_future(bias) if causal else bias


def _inverse_softplus(y: float) -> float:
    # softplus(x) = log(1 + e^x) keeps r1, r2 positive; start the raw parameter where softplus gives y.
    return float(torch.log(torch.expm1(torch.tensor(float(y)))).item())


class KerpleBias(nn.Module):
    """Trainable KERPLE bias with one (r₁, r₂) per head.

    ``forward(q_len, k_len=None, *, causal=False)`` → ``(n_heads, q_len, k_len)``.

    The parameters are stored unconstrained and mapped through softplus (and,
    for ``power``, clamped to r₂ ≤ 2) so they stay valid while training.
    """

    def __init__(self, n_heads: int, kind: str = "log", r1_init: float = 1.0, r2_init: float = 1.0) -> None:
        super().__init__()
        check_choice("kind", kind, KINDS)
        self.kind = kind
        self.raw_r1 = nn.Parameter(torch.full((n_heads,), _inverse_softplus(r1_init)))
        self.raw_r2 = nn.Parameter(torch.full((n_heads,), _inverse_softplus(r2_init)))

    def r1_r2(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The constrained (r₁, r₂) per head."""
        r1 = nn.functional.softplus(self.raw_r1) + 1e-6
        r2 = nn.functional.softplus(self.raw_r2) + 1e-6
        if self.kind == "power":
            r2 = r2.clamp(max=2.0)
        return r1, r2

    def forward(self, q_len: int, k_len: int | None = None, *, causal: bool = False) -> torch.Tensor:
        r1, r2 = self.r1_r2()
        return kerple_bias(r1, r2, q_len, k_len, kind=self.kind, causal=causal).to(self.raw_r1.dtype)
