"""Transformer-XL / XLNet relative attention (Dai et al., 2019, arXiv:1901.02860, §3.3).

Start from absolute encodings: with token embedding E_x and position vector U,
(E_{x_i} + U_i)ᵀ W_qᵀ W_k (E_{x_j} + U_j) expands into four terms
(:func:`absolute_score_terms`). Transformer-XL rewrites each of them:

    A_ij = q_iᵀ k_j                (a) "content-content"
         + q_iᵀ W_{k,R} R_{i−j}    (b) "content-position": relative sinusoid R, its own projection
         + uᵀ k_j                  (c) "bias-content": u replaces U_iᵀ W_qᵀ, the same for every query
         + vᵀ W_{k,R} R_{i−j}      (d) "bias-position": the global position bias

(Every score-terms function in poslib names its terms "<query side>-<key side>".)

with q_i = W_q E_{x_i}, k_j = W_{k,E} E_{x_j}. (One source document writes
this as QᵢᵀKⱼ + uᵀR + vᵀR: that drops q_i from term (b), drops k_j from (c)
and loses the projection W_{k,R}; the paper's form is the one above.)
XLNet uses the same attention. The relative encodings R use the sinusoidal
formula at (possibly negative) offsets i − j, concatenated [sin | cos].
(u, v are the paper's names and this module's arguments; the notebooks write u, w,
since v is a value vector there, and m, n for the positions i, j.)
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ._backend import Array, Backend, arange, check_positive_int, namespace, select, xp_of
from .attn import _relative_distance
from .sinusoidal import sinusoidal_encode

__all__ = [
    "TransformerXLRelativeScores",
    "absolute_score_terms",
    "transformer_xl_encodings",
    "transformer_xl_offsets",
    "transformer_xl_score_terms",
    "transformer_xl_scores",
]


def absolute_score_terms(x: Array, p: Array, w_q: Array, w_k: Array) -> dict[str, Array]:
    """The four ``(L, L)`` terms of (x_m + p_m)ᵀ W_qᵀ W_k (x_n + p_n) for rows x (L, d) and positions p (L, d).

    Keys: "content-content", "content-position", "position-content", "position-position";
    their sum is the full score (W_q, W_k of shape (d, d_head), applied as x @ W).
    """
    xp = xp_of(x=x, p=p, w_q=w_q, w_k=w_k)
    if x.shape != p.shape:
        raise ValueError(f"x and p must have the same shape, got {tuple(x.shape)} and {tuple(p.shape)}")
    qx, qp, kx, kp = x @ w_q, p @ w_q, x @ w_k, p @ w_k

    def t(a: Array) -> Array:
        return xp.swapaxes(a, -1, -2)

    return {
        "content-content": qx @ t(kx),
        "content-position": qx @ t(kp),
        "position-content": qp @ t(kx),
        "position-position": qp @ t(kp),
    }


def transformer_xl_offsets(
    q_len: int, k_len: int | None = None, *, backend: Backend = "numpy", device: Any = None
) -> Array:
    """All offsets i − j that occur, from −(q_len−1) up to k_len − 1 (queries are the last q_len positions)."""
    check_positive_int("q_len", q_len)
    k_len = q_len if k_len is None else k_len
    check_positive_int("k_len", k_len)
    xp = namespace(backend)
    return arange(q_len + k_len - 1, xp, device=device) - (q_len - 1)


def transformer_xl_encodings(
    q_len: int, k_len: int | None, dim: int, *, base: float = 10000.0, backend: Backend = "numpy", device: Any = None
) -> Array:
    """R_{i−j} for every offset of :func:`transformer_xl_offsets`: ``(q_len + k_len − 1, dim)``, layout [sin | cos]."""
    offsets = transformer_xl_offsets(q_len, k_len, backend=backend, device=device)
    return sinusoidal_encode(offsets, dim, base, layout="concat")


def transformer_xl_scores(q: Array, k: Array, r: Array, u: Array, v: Array) -> Array:
    """A_ij = (a) + (b) + (c) + (d) above, unscaled, shape ``(..., q_len, k_len)``.

    ``q`` ``(..., q_len, d)``, ``k`` ``(..., k_len, d)``, ``r`` the *projected*
    encodings W_{k,R} R for every offset of :func:`transformer_xl_offsets`
    ``(q_len + k_len − 1, d)``, ``u`` and ``v`` ``(d,)``. The four terms come from
    :func:`transformer_xl_score_terms`.
    """
    terms = transformer_xl_score_terms(q, k, r, u, v)
    return terms["content-content"] + terms["content-position"] + terms["bias-content"] + terms["bias-position"]


def transformer_xl_score_terms(q: Array, k: Array, r: Array, u: Array, v: Array) -> dict[str, Array]:
    """The four unscaled terms (a)–(d) of :func:`transformer_xl_scores`, each ``(..., q_len, k_len)``.

    Keys: "content-content", "content-position", "bias-content", "bias-position".
    """
    xp, device = select(None, None, q=q, k=k, r=r, u=u, v=v)
    q_len, k_len, d = q.shape[-2], k.shape[-2], q.shape[-1]
    if r.shape != (q_len + k_len - 1, d):
        raise ValueError(f"r must have shape (q_len + k_len - 1, d) = {(q_len + k_len - 1, d)}, got {tuple(r.shape)}")
    if k.shape[-1] != d or u.shape != (d,) or v.shape != (d,):
        raise ValueError("q, k, r must share their last dimension d, and u, v must have shape (d,)")
    row = -_relative_distance(q_len, k_len, xp, device, dtype=xp.int64) + (q_len - 1)  # index of offset i − j in r
    rows = arange(q_len, xp, dtype=xp.int64, device=device)[:, None]
    return {
        "content-content": q @ xp.swapaxes(k, -1, -2),  # (a) q_iᵀ k_j
        "content-position": (q @ xp.swapaxes(r, -1, -2))[..., rows, row],  # (b) q_iᵀ W_{k,R} R_{i−j}
        "bias-content": xp.broadcast_to((k @ u)[..., None, :], (*k.shape[:-2], q_len, k_len)),  # (c) uᵀ k_j
        "bias-position": (r @ v)[row],  # (d) vᵀ W_{k,R} R_{i−j}
    }


class TransformerXLRelativeScores(nn.Module):
    """Trainable parts of Transformer-XL's relative scores: W_{k,R} and the global biases u, v.

    ``forward(q, k)`` takes already-projected queries and keys ``(..., len, d)``
    and returns the unscaled scores A of :func:`transformer_xl_scores`.
    """

    def __init__(self, dim: int, *, base: float = 10000.0) -> None:
        super().__init__()
        check_positive_int("dim", dim)
        self.dim, self.base = dim, base
        self.w_k_r = nn.Linear(dim, dim, bias=False)
        self.u = nn.Parameter(torch.zeros(dim))
        self.v = nn.Parameter(torch.zeros(dim))

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        encodings = transformer_xl_encodings(
            q.shape[-2], k.shape[-2], self.dim, base=self.base, backend="torch", device=q.device
        ).to(q.dtype)
        return transformer_xl_scores(q, k, self.w_k_r(encodings), self.u, self.v)
