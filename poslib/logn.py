"""Log-n attention scaling (Chiang & Cholak 2022; Su 2021, "entropy-invariant" softmax; used by Qwen).

Softmax over n keys spreads its mass more thinly as n grows, so the entropy of
an attention row rises with the sequence length. Multiplying the scores by
log n / log L_train (only when n > L_train) keeps the entropy near its
training value; with L_train = 512 this is the log₅₁₂ n of the sources.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._backend import check_positive, is_torch

__all__ = ["logn_scale"]


def logn_scale(n: Any, train_len: float) -> Any:
    """max(1, log n / log train_len): a float for a scalar n, an array of n's kind otherwise."""
    check_positive("train_len", train_len)
    if train_len <= 1:
        raise ValueError(f"train_len must exceed 1 (log 1 = 0), got {train_len}")
    if is_torch(n):
        return (n.double().log() / math.log(train_len)).clamp(min=1.0)
    if isinstance(n, np.ndarray):
        return np.maximum(1.0, np.log(n.astype(np.float64)) / math.log(train_len))
    check_positive("n", n)
    return max(1.0, math.log(n) / math.log(train_len))
