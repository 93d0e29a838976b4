"""FIRE: functional interpolation for relative positions (Li et al., 2024, arXiv:2310.04418).

Each head adds a *learned function* of the distance to the attention score of
query i and key j ≤ i::

    b(i, j) = f_θ( ψ(i − j) / ψ(max(L, i)) ),     ψ(x) = log(c·x + 1)

* f_θ : ℝ → ℝ^H is a small MLP, one output per head. poslib uses one ReLU
  hidden layer (width 32 by default), which makes the exact constructions of
  :func:`fire_weights_from_bias` piecewise linear.
* ψ compresses long distances (log), with a learnable c > 0.
* Dividing by ψ(max(L, i)) is the paper's *progressive interpolation*: the input
  of f stays in [0, 1] however long the sequence, so a query far beyond the
  training length still feeds f inputs it was trained on. The learnable
  threshold L keeps short sequences (i < L) from being stretched to [0, 1].

For queries with i ≤ L the denominator is the constant ψ(L), so the bias is a
function of i − j alone: any relative bias on a window of n ≤ L + 1 positions
(T5's buckets, ALiBi's line, KERPLE's logarithm) is then a FIRE bias: the paper
proves that FIRE can represent T5's, ALiBi's and KERPLE's biases, and
:func:`fire_weights_from_bias` constructs the weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ._backend import Array, Backend, arange, asarray, cast, check_positive, is_torch, select, to_float, xp_of
from .attn import _relative_distance, mask_future

__all__ = ["FireBias", "fire_bias", "fire_inputs", "fire_weights_from_bias"]


def _check_c_L(c: Any, L: Any) -> None:
    for name, value in (("c", c), ("L", L)):
        if is_torch(value) or isinstance(value, np.ndarray):
            if not bool((value > 0).all()):
                raise ValueError(f"{name} must be positive, got {value!r}")
        else:
            check_positive(name, value)


def fire_inputs(
    q_len: int,
    k_len: int | None = None,
    *,
    c: Any = 1.0,
    L: Any = 64.0,
    backend: Backend | None = None,
    device: Any = None,
) -> Array:
    """The MLP's input u_ij = ψ(i − j) / ψ(max(L, i)), ψ(x) = log(c·x + 1), shape ``(q_len, k_len)``, float64.

    Queries are the last q_len of k_len positions (a KV cache, :mod:`poslib.attn`); future
    keys (j > i) get u = 0 (a causal bias masks them). ``c`` and ``L`` may be tensors with
    gradients: ``backend=None`` follows them (NumPy for plain numbers).
    """
    _check_c_L(c, L)
    return _fire_inputs(q_len, k_len, c, L, *select(backend, device, c=c, L=L))


def _fire_inputs(q_len: int, k_len: int | None, c: Any, L: Any, xp: Any, device: Any) -> Array:
    k_len = q_len if k_len is None else k_len
    rel = _relative_distance(q_len, k_len, xp, device)  # j − i
    distance = xp.maximum(-rel, xp.zeros_like(rel))
    i = arange(q_len, xp, device=device) + (k_len - q_len)
    c_, L_ = to_float(c, xp, like=rel), to_float(L, xp, like=rel)
    # ψ(max(L, i)) ≥ ψ(L) > 0: never a division by zero, even at the first position
    denominator = xp.log(c_ * xp.maximum(i, L_ + xp.zeros_like(i)) + 1)
    return xp.log(c_ * distance + 1) / denominator[:, None]  # ψ(i − j) / ψ(max(L, i))


def fire_bias(
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
    q_len: int,
    k_len: int | None = None,
    *,
    c: Any = 1.0,
    L: Any = 64.0,
    causal: bool = False,
    backend: Backend | None = None,
    device: Any = None,
) -> Array:
    """FIRE bias ``(n_heads, q_len, k_len)``: b_h(i, j) = f_θ(u_ij)_h with u from :func:`fire_inputs`.

    f_θ(u) = W₂ · ReLU(u·w₁ + b₁) + b₂ with ``w1``, ``b1`` of shape ``(hidden,)``,
    ``w2`` ``(n_heads, hidden)`` and ``b2`` ``(n_heads,)``; ``backend=None`` follows the
    weights, and the dtype follows ``w1``. With ``causal`` future keys are −inf.
    """
    xp, device = select(backend, device, w1=w1, b1=b1, w2=w2, b2=b2)
    if w1.ndim != 1 or b1.shape != w1.shape:
        raise ValueError(f"w1 and b1 must both have shape (hidden,), got {tuple(w1.shape)} and {tuple(b1.shape)}")
    if w2.ndim != 2 or w2.shape[1] != w1.shape[0] or b2.shape != (w2.shape[0],):
        raise ValueError(
            f"w2 must have shape (n_heads, hidden={w1.shape[0]}) and b2 (n_heads,), "
            f"got {tuple(w2.shape)} and {tuple(b2.shape)}"
        )
    w1, b1, w2, b2 = (asarray(a, xp, device=device) for a in (w1, b1, w2, b2))
    _check_c_L(c, L)
    xp_of(c=c, L=L, w1=w1)  # TypeError when NumPy and torch are mixed
    u = cast(_fire_inputs(q_len, k_len, c, L, xp, device), w1.dtype)
    hidden = xp.maximum(u[..., None] * w1 + b1, xp.zeros_like(b1))  # ReLU(u·w₁ + b₁), (q, k, hidden)
    bias = xp.moveaxis(hidden @ w2.T + b2, -1, 0)  # W₂·hidden + b₂, heads first
    return mask_future(bias) if causal else bias


def fire_weights_from_bias(values: Array, *, c: float = 1.0, L: float | None = None) -> dict[str, np.ndarray]:
    """MLP weights with which :func:`fire_bias` reproduces a given relative bias exactly.

    ``values`` is ``(n_heads, n)``: the bias of each head at distance d = i − j = 0 … n − 1
    (for instance ``t5_bias``, ``alibi_bias`` or ``kerple_bias`` read along one row).
    With L ≥ n − 1 every query i < n has ψ(max(L, i)) = ψ(L), so u_d = ψ(d)/ψ(L) is a
    strictly increasing function of d alone. A ReLU layer with one unit per knot u_d is
    the piecewise-linear interpolant through the points (u_d, values[:, d])::

        f(u) = values[:, 0] + Σ_k Δs_k · ReLU(u − u_k),   Δs_k = slope after u_k − slope before

    so f(u_d) = values[:, d] for every d (up to float64 rounding). Returns a dict with
    ``w1``, ``b1``, ``w2``, ``b2`` (NumPy float64), ``c`` and ``L``; n − 1 hidden units.
    """
    v = np.asarray(values.detach().cpu().numpy() if is_torch(values) else values, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] < 2:
        raise ValueError(f"values must have shape (n_heads, n) with n ≥ 2, got {v.shape}")
    n = v.shape[1]
    L = float(n - 1) if L is None else L
    check_positive("c", c)
    check_positive("L", L)
    if L < n - 1:
        raise ValueError(f"L must be ≥ n − 1 = {n - 1} for the bias to depend on i − j alone, got {L}")
    d = np.arange(n, dtype=np.float64)
    knots = np.log(c * d + 1) / np.log(c * L + 1)
    slopes = np.diff(v, axis=1) / np.diff(knots)  # (n_heads, n − 1): slope on [u_k, u_k+1]
    change = np.diff(slopes, axis=1, prepend=0.0)  # slope change at each knot u_0 … u_{n−2}
    return {
        "w1": np.ones(n - 1),
        "b1": -knots[:-1],
        "w2": change,
        "b2": v[:, 0].copy(),
        "c": c,
        "L": L,
    }


def _inverse_softplus(y: float) -> torch.Tensor:
    # the stored value x with softplus(x) = y, so that the constrained parameter starts at y
    return torch.log(torch.expm1(torch.tensor(float(y))))


class FireBias(nn.Module):
    """Trainable FIRE bias with learnable c and L.

    ``forward(q_len, k_len=None, *, causal=False)`` → ``(n_heads, q_len, k_len)``.

    c and L are stored unconstrained and mapped through softplus so they stay positive
    while training. f_θ is ``nn.Linear(1, hidden)`` → ReLU → ``nn.Linear(hidden, n_heads)``
    with PyTorch's default initialisation; ``L_init`` is usually the training length.
    """

    def __init__(self, n_heads: int, *, hidden: int = 32, c_init: float = 1.0, L_init: float = 64.0) -> None:
        super().__init__()
        check_positive("c_init", c_init)
        check_positive("L_init", L_init)
        self.mlp_in = nn.Linear(1, hidden)
        self.mlp_out = nn.Linear(hidden, n_heads)
        self.raw_c = nn.Parameter(_inverse_softplus(c_init))
        self.raw_L = nn.Parameter(_inverse_softplus(L_init))

    def c_L(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The constrained (c, L)."""
        return nn.functional.softplus(self.raw_c) + 1e-6, nn.functional.softplus(self.raw_L) + 1e-6

    def weights(self) -> dict[str, Any]:
        """The current f_θ, c and L as plain lists and floats (JSON-ready; the arguments of :func:`fire_bias`)."""
        c, L = self.c_L()
        return {
            "w1": self.mlp_in.weight[:, 0].tolist(),
            "b1": self.mlp_in.bias.tolist(),
            "w2": self.mlp_out.weight.tolist(),
            "b2": self.mlp_out.bias.tolist(),
            "c": c.item(),
            "L": L.item(),
        }

    def forward(self, q_len: int, k_len: int | None = None, *, causal: bool = False) -> torch.Tensor:
        c, L = self.c_L()
        w = self.mlp_in.weight[:, 0]
        return fire_bias(
            w, self.mlp_in.bias, self.mlp_out.weight, self.mlp_out.bias, q_len, k_len, c=c, L=L, causal=causal
        )
