"""T5 relative position buckets (Raffel et al., 2020, "Exploring the Limits of Transfer Learning", §2.1).

Each head learns one scalar per *bucket* of relative position
``r = key − query`` and adds it to the attention score. With B buckets
(halved per direction when bidirectional):

* the first B/2 buckets are exact: distance 0, 1, …, B/2 − 1;
* the remaining B/2 cover distances up to ``max_distance`` on a log scale:
  bucket = B/2 + ⌊ log(|r| / (B/2)) / log(max_distance / (B/2)) · B/2 ⌋;
* everything beyond ``max_distance`` shares the last bucket.

Bidirectional (encoder) buckets put r > 0 (keys after the query) in the upper
half. Causal (decoder) buckets treat every future key as distance 0.
Sign convention: relative_position = key − query (``memory_position − context_position``
in Hugging Face's T5 code). With fewer queries than keys the queries are the last q_len
positions (:mod:`poslib.attn`), which is what Hugging Face's T5 computes while decoding with a
cache (``compute_bias(real_seq_length, key_length)``, then the last rows); its
``compute_bias(q, k)`` alone puts the queries at 0 … q − 1, i.e. the first q rows (and k
columns) of the square ``t5_bias`` of max(q, k). The bias belongs to self-attention only: T5's
encoder-decoder (cross-)attention has no position bias. Hugging Face's port once applied a bidirectional
bias there too (questioned in huggingface/transformers #7323, removed by PR #8518 after an
integration test against the original T5 model).

Hugging Face's ``_relative_position_bucket`` takes the logarithm in float32; poslib takes the
exact floor at every integer distance (:mod:`poslib._buckets`). They agree on every stored
distance up to 3000 (tests/test_reference.py), but a float32 or float64 ratio can in principle
land one ulp below an integer; poslib's answer is the mathematical one.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ._backend import Array, Backend, asarray, cast, check_positive_int, select, to_float, xp_of
from ._buckets import exact_log_steps
from .attn import _relative_distance, mask_future

__all__ = ["T5RelativeBias", "t5_bias", "t5_relative_bucket", "t5_relative_positions"]


def t5_relative_positions(
    q_len: int, k_len: int | None = None, *, backend: Backend = "numpy", device: Any = None
) -> Array:
    """Integer ``key − query`` matrix ``(q_len, k_len)``, the queries being the last q_len of k_len positions."""
    xp, device = select(backend, device)
    return _relative_distance(q_len, k_len, xp, device, dtype=xp.int64)


def t5_relative_bucket(
    relative_position: Array, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> Array:
    """Bucket index in [0, num_buckets) for each integer ``relative_position`` (= key − query)."""
    check_positive_int("num_buckets", num_buckets)
    check_positive_int("max_distance", max_distance)
    xp = xp_of(relative_position=relative_position)
    rel: Any = relative_position if hasattr(relative_position, "dtype") else np.asarray(relative_position)
    rel = cast(rel, xp.int64)
    buckets: Any = 0
    if bidirectional:
        num_buckets //= 2
        buckets = (rel > 0) * num_buckets
        distance = xp.abs(rel)
    else:
        distance = -xp.minimum(rel, xp.zeros_like(rel))  # future keys count as distance 0
    max_exact = num_buckets // 2
    if max_exact < 1:
        raise ValueError(
            f"num_buckets must be at least {4 if bidirectional else 2}, got {num_buckets * (2 if bidirectional else 1)}"
        )
    if max_distance <= max_exact:
        raise ValueError(
            f"max_distance ({max_distance}) must exceed the {max_exact} exact buckets, "
            "or there is no room for the logarithmic ones"
        )
    is_small = distance < max_exact  # buckets 0 … E − 1 are the distances themselves (E = max_exact)
    # Beyond, E + ⌊(B' − E) · ln(d / E) / ln(max_distance / E)⌋ with B' the buckets per direction,
    # capped at B' − 1. The distance is clamped to ≥ 1 only to keep the log finite (small ones are
    # not read). T5 truncates toward zero (d ≥ E here, so truncation is floor), and the floor is
    # taken exactly: where the log ratio is an integer, a float64 ratio one ulp short drops a bucket.
    safe = to_float(xp.maximum(distance, xp.ones_like(distance)), xp)
    steps = exact_log_steps(safe, max_exact, max_distance, num_buckets - max_exact, "floor")
    large = max_exact + cast(steps, xp.int64)
    large = xp.minimum(large, xp.full_like(large, num_buckets - 1))  # min(·, B' − 1)
    return buckets + xp.where(is_small, distance, large)


def t5_bias(
    bias_table: Array,
    q_len: int,
    k_len: int | None = None,
    *,
    bidirectional: bool = True,
    max_distance: int = 128,
    causal: bool = False,
    backend: Backend | None = None,
    device: Any = None,
) -> Array:
    """Bias ``(n_heads, q_len, k_len)`` read from a ``(num_buckets, n_heads)`` table of learned scalars.

    ``backend=None`` follows the table; queries are the last q_len of k_len positions.
    """
    xp, device = select(backend, device, bias_table=bias_table)
    if bias_table.ndim != 2:
        raise ValueError(f"bias_table must have shape (num_buckets, n_heads), got {tuple(bias_table.shape)}")
    rel = _relative_distance(q_len, k_len, xp, device, dtype=xp.int64)  # key − query
    buckets = t5_relative_bucket(
        rel, bidirectional=bidirectional, num_buckets=bias_table.shape[0], max_distance=max_distance
    )
    values = asarray(bias_table, xp, device=device)[buckets]  # (q_len, k_len, n_heads)
    bias = xp.moveaxis(values, -1, 0)
    return mask_future(bias) if causal else bias


class T5RelativeBias(nn.Module):
    """Trainable T5 bias: an ``nn.Embedding(num_buckets, n_heads)``.

    ``forward(q_len, k_len=None, *, causal=False)`` → ``(n_heads, q_len, k_len)``.
    """

    def __init__(
        self, n_heads: int, *, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True
    ) -> None:
        super().__init__()
        check_positive_int("n_heads", n_heads)
        self.bias = nn.Embedding(num_buckets, n_heads)
        self.max_distance, self.bidirectional = max_distance, bidirectional

    def forward(self, q_len: int, k_len: int | None = None, *, causal: bool = False) -> torch.Tensor:
        return t5_bias(
            self.bias.weight,
            q_len,
            k_len,
            bidirectional=self.bidirectional,
            max_distance=self.max_distance,
            causal=causal,
        )
