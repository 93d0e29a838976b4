"""KERPLE: kernelized relative positional embedding (Chi et al., 2022, arXiv:2205.09921).

A learnable, conditionally positive definite kernel of the distance |m − n|
is added to the attention scores, per head::

    power:  bias(m, n) = −r₁ · |m − n|^r₂          (r₁ > 0, 0 < r₂ ≤ 2)
    log:    bias(m, n) = −r₁ · log(1 + r₂ · |m − n|)  (r₁, r₂ > 0)

With r₂ = 1 the power form is ALiBi with a learned slope; the log form decays
ever more slowly, which the paper found extrapolates best.
"""

from __future__ import annotations

import math
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
        bias = -r1 * distance**r2  # −r₁·|m − n|^r₂
    else:
        bias = -r1 * xp.log(1 + r2 * distance)  # −r₁·log(1 + r₂·|m − n|)
    return mask_future(bias) if causal else bias


EPS = 1e-2  # the smallest r₁, r₂ (the paper's code: ``self.eps = 1e-2``)


class KerpleBias(nn.Module):
    """Trainable KERPLE bias with one (r₁, r₂) per head, initialised and constrained as in the paper's code.

    ``forward(q_len, k_len=None, *, causal=False)`` → ``(n_heads, q_len, k_len)``.

    The authors' code (``ParallelKerpleLog`` and ``ParallelKerplePower`` in ``megatron/mpu/layers.py``
    of github.com/chijames/KERPLE, their GPT-NeoX fork) stores the two parameters directly and
    draws them per head: the factor of the log kernel r₁ ~ 2·U(0, 1) and its r₂ ~ U(0, 1); for the
    power kernel the scale r₁ ~ U(0, 1) and the exponent r₂ ~ 2·U(0, 1). In every forward pass it
    projects them in place onto r ≥ 0.01 (and r₂ ≤ 2 for the power kernel), so a gradient step
    that crosses the bound is undone before the next use. This module does the same, and projects
    once at initialisation too, so the stored values are valid before the first forward pass.

    One module is one table; the authors' ``gpt2_model.py`` builds a single KERPLE module and hands it
    to every layer, while the lab (``poslib.lab.LabModel``) gives each layer its own.

    ``r1_init`` / ``r2_init``: a number starts every head there instead of the random draw
    (then projected like any other value); ``generator`` draws the initial values (default: torch's
    global generator, so ``torch.manual_seed`` fixes them).

    Because the projection writes the parameters in place, a graph built by an earlier forward
    pass cannot be back-propagated after a later forward pass moved a value onto the bound
    (torch raises); the lab runs one forward and one backward pass per step.
    """

    def __init__(
        self,
        n_heads: int,
        kind: str = "log",
        r1_init: float | None = None,
        r2_init: float | None = None,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        check_choice("kind", kind, KINDS)
        if isinstance(n_heads, bool) or not isinstance(n_heads, int) or n_heads < 1:
            raise ValueError(f"n_heads must be a positive integer, got {n_heads!r}")
        self.kind = kind
        # log: r1 is the factor p ~ 2·U, r2 the inner scale a ~ U; power: r1 the scale a ~ U, r2 the exponent p ~ 2·U
        scale1, scale2 = (2.0, 1.0) if kind == "log" else (1.0, 2.0)

        def start(value: float | None, scale: float) -> torch.Tensor:
            if value is None:
                return torch.rand(n_heads, generator=generator) * scale
            if not math.isfinite(value):
                raise ValueError(f"r1_init and r2_init must be finite numbers or None, got {value!r}")
            return torch.full((n_heads,), float(value))

        self.r1 = nn.Parameter(start(r1_init, scale1))
        self.r2 = nn.Parameter(start(r2_init, scale2))
        self.project_()

    def _upper(self) -> float | None:
        return 2.0 if self.kind == "power" else None

    @torch.no_grad()
    def project_(self) -> None:
        """Move r₁, r₂ onto the valid set in place: r ≥ 0.01, and r₂ ≤ 2 for ``power`` (the paper's clamp)."""
        if bool((self.r1 < EPS).any()):
            self.r1.clamp_(min=EPS)
        upper = self._upper()
        if bool((self.r2 < EPS).any()) or (upper is not None and bool((self.r2 > upper).any())):
            self.r2.clamp_(min=EPS, max=upper)

    def r1_r2(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The (r₁, r₂) per head that the next forward pass uses (projected; the parameters are not changed)."""
        return self.r1.clamp(min=EPS), self.r2.clamp(min=EPS, max=self._upper())

    def forward(self, q_len: int, k_len: int | None = None, *, causal: bool = False) -> torch.Tensor:
        self.project_()  # as the paper's code does at the start of every forward pass
        return kerple_bias(self.r1, self.r2, q_len, k_len, kind=self.kind, causal=causal).to(self.r1.dtype)
