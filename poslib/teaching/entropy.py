"""The entropy of an attention row against the number of keys: the curve notebook 06's slider redraws.

A softmax over n keys spreads its mass over more keys as n grows, so the entropy of an
attention row rises like ln n (source 000, §6.1, the "attention span" problem);
:func:`attention_entropy_vs_length` measures it on seeded random scores, with and without
log-n scaling (:func:`poslib.logn_scale`). The draws and the entropies are cached so a
slider can move back and forth without recomputing them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from .._backend import Array, Backend, check_positive, check_positive_int, namespace, to_float
from ..attn import attention_entropy, softmax
from ..logn import logn_scale

__all__ = ["attention_entropy_vs_length"]


@functools.lru_cache(maxsize=64)
def _random_scores(n: int, dim: int, n_queries: int, seed: int) -> np.ndarray:
    # One seeded draw per length, cached: a slider redraw rescales the same scores instead of redrawing them.
    rng = np.random.default_rng([seed, n])
    q = rng.standard_normal((n_queries, dim))
    k = rng.standard_normal((n, dim))
    scores = q @ k.T / math.sqrt(dim)
    scores.setflags(write=False)
    return scores


def attention_entropy_vs_length(
    lengths: Sequence[int],
    train_len: int | None = None,
    *,
    score_std: float = 1.0,
    dim: int = 64,
    n_queries: int = 128,
    seed: int = 0,
    backend: Backend = "numpy",
) -> Array:
    """Mean entropy (nats) of an attention row over n random keys, for each n in ``lengths``.

    Queries and keys are standard normal in ``dim`` dimensions; the scores are
    ``score_std · q·k/√dim`` (standard deviation ≈ ``score_std``). With
    ``train_len`` the scores are also multiplied by log-n scaling,
    max(1, ln n / ln train_len). The same seeded draw is used for every call,
    so curves with and without scaling differ only by the scaling.
    """
    lengths = [int(n) for n in lengths]
    if not lengths or any(n < 1 for n in lengths):
        raise ValueError(f"lengths must be a non-empty list of positive integers, got {lengths!r}")
    check_positive("score_std", score_std)
    check_positive_int("dim", dim)
    check_positive_int("n_queries", n_queries)
    if train_len is not None:
        check_positive_int("train_len", train_len)
    xp = namespace(backend)
    out = []
    for n in lengths:
        factor = score_std * (1.0 if train_len is None else logn_scale(n, train_len))
        if xp is np:
            out.append(_mean_entropy(n, dim, n_queries, seed, factor))
        else:
            # the cached draw is read-only; torch wants a writable buffer, so it gets a copy
            scores = to_float(_random_scores(n, dim, n_queries, seed).copy(), xp)
            out.append(attention_entropy(softmax(scores * factor)).mean())
    return xp.stack(out) if xp is not np else np.array(out)


@functools.lru_cache(maxsize=4096)
def _mean_entropy(n: int, dim: int, n_queries: int, seed: int, factor: float) -> float:
    # Memoised: below the training length log-n scaling is 1, so the two curves share most points,
    # and a slider that moves back and forth revisits the same settings.
    return float(attention_entropy(softmax(_random_scores(n, dim, n_queries, seed) * factor)).mean())
