"""DeBERTa's disentangled attention (He et al., 2021, "DeBERTa: Decoding-enhanced BERT with Disentangled Attention").

Each token carries a content vector; positions enter only through relative
embeddings P (2κ rows, one per clipped distance; κ = ``att_span``, the paper's k).
With Q_c, K_c the content projections and Q_r = P W_{q,r}, K_r = P W_{k,r}, for
query i and key j (the notebooks write m, n)::

    δ(i, j) = clip(i − j + κ, 0, 2κ − 1)                 (query − key, clipped at ±κ; rows 0 … 2κ − 1)
    Ã_ij = Q_c,i · K_c,j        content → content  (c2c, term "content-content")
         + Q_c,i · K_r,δ(i,j)   content → position (c2p, term "content-position")
         + K_c,j · Q_r,δ(j,i)   position → content (p2c, term "position-content")
    A = softmax(Ã / √(3d))                               (three terms, so 3d, not d)

DeBERTa-v2/v3 bucket the relative position logarithmically beyond
``bucket_size/2`` (:func:`deberta_relative_position`). Absolute positions come
back only at the end, in the enhanced mask decoder. Sign convention:
query − key, the opposite of T5. With fewer queries than keys the queries are the last
q_len positions, as everywhere in poslib (:mod:`poslib.attn`).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from ._backend import Array, Backend, arange, cast, check_choice, check_positive_int, select, to_float, xp_of
from ._buckets import exact_log_steps
from .attn import _relative_distance

__all__ = [
    "DebertaRelativeScores",
    "deberta_delta",
    "deberta_log_bucket",
    "deberta_relative_position",
    "deberta_score_terms",
    "deberta_scores",
]


def deberta_log_bucket(relative_position: Array, bucket_size: int, max_position: int) -> Array:
    """DeBERTa-v2's log buckets: exact for |r| ≤ bucket_size/2, log-spaced up to max_position beyond.

    With mid = bucket_size // 2, |r| > mid goes to sign(r)·(mid + ⌈(mid − 1)·ln(|r|/mid) / ln((max_position − 1)/mid)⌉).
    The ceiling is the exact mathematical one at every integer distance (Hugging Face's
    ``make_log_bucket_position`` evaluates it in float32, which agrees except where rounding
    crosses an integer). Needs bucket_size ≥ 2 and max_position − 1 > bucket_size // 2.
    """
    check_positive_int("bucket_size", bucket_size)
    check_positive_int("max_position", max_position)
    mid = bucket_size // 2
    if mid < 1:
        raise ValueError(f"bucket_size must be at least 2 (bucket_size // 2 exact buckets per side), got {bucket_size}")
    if max_position - 1 <= mid:
        raise ValueError(f"max_position ({max_position}) must exceed bucket_size/2 + 1 ({mid + 1})")
    xp = xp_of(relative_position=relative_position)
    rel = to_float(relative_position, xp)
    sign = xp.sign(rel)
    # |r| < mid is replaced by mid only to keep the log finite and positive: those entries use r itself below
    abs_pos = xp.where((rel < mid) & (rel > -mid), xp.full_like(rel, mid), xp.abs(rel))
    log_pos = exact_log_steps(abs_pos, mid, max_position - 1, mid - 1, "ceil") + mid
    out = xp.where(abs_pos <= mid, rel, log_pos * sign)
    return cast(out, xp.int64)


def deberta_relative_position(
    q_len: int,
    k_len: int | None = None,
    *,
    bucket_size: int = -1,
    max_position: int = -1,
    backend: Backend = "numpy",
    device: Any = None,
) -> Array:
    """Integer ``query − key`` matrix ``(q_len, k_len)``, log-bucketed when bucket_size > 0 and max_position > 0.

    The queries are the last q_len of k_len positions (:mod:`poslib.attn`). Hugging Face's
    ``build_relative_position(q, k)`` puts them at 0 … q − 1: the first q rows of the square
    matrix of max(q, k).
    """
    xp, device = select(backend, device)
    rel = -_relative_distance(q_len, k_len, xp, device, dtype=xp.int64)
    if bucket_size > 0 and max_position > 0:
        rel = deberta_log_bucket(rel, bucket_size, max_position)
    return rel


def deberta_delta(relative_position: Array, att_span: int) -> Array:
    """δ = clip(r + κ, 0, 2κ − 1): the table row for relative position r = query − key (κ = att_span)."""
    check_positive_int("att_span", att_span)
    xp = xp_of(relative_position=relative_position)
    return xp.clip(relative_position + att_span, 0, 2 * att_span - 1)


def deberta_scores(
    q_c: Array, k_c: Array, q_r: Array, k_r: Array, *, relative_position: Array | None = None, p2c_index: str = "paper"
) -> Array:
    """Disentangled scores (c2c + c2p + p2c) / √(3d), shape ``(..., q_len, k_len)``.

    ``q_c`` ``(..., q_len, d)``, ``k_c`` ``(..., k_len, d)``; ``q_r``, ``k_r``
    ``(2κ, d)``: projected relative embeddings (κ = att_span = rows / 2).
    ``relative_position`` defaults to plain query − key. The three terms, unscaled, come
    from :func:`deberta_score_terms`.

    ``p2c_index`` picks the row of Q_r that position→content reads: ``"paper"``
    is δ(j, i) as in the paper's equation; ``"code"`` is δ(i, j), what the
    attention code of Hugging Face's DeBERTa/DeBERTa-v2 (ported from
    microsoft/DeBERTa) works out to. Use ``"code"`` to reproduce weights trained there.
    """
    terms = deberta_score_terms(q_c, k_c, q_r, k_r, relative_position=relative_position, p2c_index=p2c_index)
    return sum(terms.values()) / math.sqrt(3 * q_c.shape[-1])  # Ã / √(3d)


def deberta_score_terms(
    q_c: Array, k_c: Array, q_r: Array, k_r: Array, *, relative_position: Array | None = None, p2c_index: str = "paper"
) -> dict[str, Array]:
    """The three unscaled terms of :func:`deberta_scores`: "content-content", "content-position", "position-content"."""
    check_choice("p2c_index", p2c_index, ("paper", "code"))
    xp, device = select(None, None, q_c=q_c, k_c=k_c, q_r=q_r, k_r=k_r, relative_position=relative_position)
    if q_r.shape != k_r.shape or q_r.shape[0] % 2:
        raise ValueError(f"q_r and k_r must both have shape (2k, d), got {tuple(q_r.shape)} and {tuple(k_r.shape)}")
    d = q_c.shape[-1]
    if k_c.shape[-1] != d or q_r.shape[-1] != d:
        raise ValueError("q_c, k_c, q_r and k_r must share their last dimension d")
    q_len, k_len, span = q_c.shape[-2], k_c.shape[-2], q_r.shape[0] // 2
    if relative_position is None:
        relative_position = -_relative_distance(q_len, k_len, xp, device, dtype=xp.int64)  # query − key
    rows = arange(q_len, xp, dtype=xp.int64, device=device)[:, None]
    cols = arange(k_len, xp, dtype=xp.int64, device=device)[None, :]
    p2c_rel = -relative_position if p2c_index == "paper" else relative_position
    return {
        "content-content": q_c @ xp.swapaxes(k_c, -1, -2),  # Q_c,i · K_c,j
        "content-position": (q_c @ xp.swapaxes(k_r, -1, -2))[..., rows, deberta_delta(relative_position, span)],
        "position-content": (k_c @ xp.swapaxes(q_r, -1, -2))[..., cols, deberta_delta(p2c_rel, span)],
    }


class DebertaRelativeScores(nn.Module):
    """Trainable relative embeddings P (2k × d) with their own query/key projections; ``forward(q_c, k_c)`` → scores."""

    def __init__(self, dim: int, att_span: int) -> None:
        super().__init__()
        check_positive_int("dim", dim)
        check_positive_int("att_span", att_span)
        self.rel_embeddings = nn.Parameter(torch.randn(2 * att_span, dim) * 0.02)
        self.w_q_r = nn.Linear(dim, dim, bias=False)
        self.w_k_r = nn.Linear(dim, dim, bias=False)

    def forward(self, q_c: torch.Tensor, k_c: torch.Tensor) -> torch.Tensor:
        return deberta_scores(q_c, k_c, self.w_q_r(self.rel_embeddings), self.w_k_r(self.rel_embeddings))
