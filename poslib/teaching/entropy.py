"""The entropy of an attention row against the number of keys: the curve notebook 06's slider redraws.

A softmax over n keys spreads its mass over more keys as n grows, so the entropy of an
attention row rises like ln n (source 000, §6.1, the "attention span" problem);
:func:`attention_entropy_vs_length` measures it on seeded random scores, with and without
log-n scaling (:func:`poslib.logn_scale`). The draws and the entropies are cached so a
slider can move back and forth without recomputing them. :func:`logn_entropy_rise_over_seeds`
repeats notebook 00's experiment (how much log-n scaling slows the rise of the entropy) over many
seeds, so a claim about it is a claim about a distribution, not about one draw.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._backend import Array, Backend, check_positive, check_positive_int, namespace, to_float
from ..attn import attention_entropy, softmax
from ..logn import logn_scale

__all__ = ["LognEntropyRise", "attention_entropy_vs_length", "logn_entropy_rise_over_seeds", "logn_entropy_slopes"]


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


@dataclass(frozen=True)
class LognEntropyRise:
    """What :func:`logn_entropy_rise_over_seeds` returns; every array has one row per seed.

    ``plain`` and ``scaled`` are ``(seeds, len(lengths))`` mean entropies (nats) of the last query's
    attention row; ``rise_plain`` and ``rise_scaled`` their rise from the first length to the last;
    ``ratio`` = rise_scaled / rise_plain (1 when log-n scaling does nothing, 0 when it stops the rise).
    """

    lengths: tuple[int, ...]
    train_len: int
    plain: np.ndarray
    scaled: np.ndarray

    @property
    def rise_plain(self) -> np.ndarray:
        """Entropy rise without scaling, per seed (nats)."""
        return np.asarray(self.plain[:, -1] - self.plain[:, 0])

    @property
    def rise_scaled(self) -> np.ndarray:
        """Entropy rise with log-n scaling, per seed (nats)."""
        return np.asarray(self.scaled[:, -1] - self.scaled[:, 0])

    @property
    def ratio(self) -> np.ndarray:
        """rise_scaled / rise_plain, per seed."""
        return self.rise_scaled / self.rise_plain


def logn_entropy_rise_over_seeds(
    lengths: Sequence[int] = (64, 256, 1024, 4096),
    train_len: int = 64,
    *,
    dim: int = 16,
    n_rows: int = 32,
    seeds: Sequence[int] = tuple(range(40)),
) -> LognEntropyRise:
    """Notebook 00's log-n experiment, once per seed: entropy of the last query's row, with and without scaling.

    For each seed and each n in ``lengths``, ``n_rows`` independent sequences of n standard-normal
    vectors in ``dim`` dimensions serve as queries, keys and values at once (as in notebook 00's cell);
    the last position's query attends over all n keys with scale 1/√dim (plain) or
    logn_scale(n, train_len)/√dim (scaled), and the entropy of that row is averaged over the rows.
    The same draw feeds both, so per seed they differ only by the scaling.
    """
    lengths_ = tuple(int(n) for n in lengths)
    if len(lengths_) < 2 or any(n < 2 for n in lengths_) or list(lengths_) != sorted(set(lengths_)):
        raise ValueError(f"lengths must be at least two increasing integers ≥ 2, got {lengths!r}")
    check_positive_int("train_len", train_len)
    if train_len < 2:
        raise ValueError(f"train_len must be at least 2 (log 1 = 0), got {train_len}")
    check_positive_int("dim", dim)
    check_positive_int("n_rows", n_rows)
    seeds_ = [int(s) for s in seeds]
    if not seeds_:
        raise ValueError("seeds must name at least one seed, got none")
    plain = np.empty((len(seeds_), len(lengths_)))
    scaled = np.empty_like(plain)
    for a, seed in enumerate(seeds_):
        rng = np.random.default_rng(seed)
        for b, n in enumerate(lengths_):
            # drawn in float32 (twice as fast; the experiment needs no more digits), computed in float64
            x = rng.standard_normal((n_rows, n, dim), dtype=np.float32).astype(np.float64)
            scores = np.einsum("rd,rnd->rn", x[:, -1], x) / math.sqrt(dim)  # the last query against every key
            plain[a, b] = float(attention_entropy(softmax(scores)).mean())
            scaled[a, b] = float(attention_entropy(softmax(scores * logn_scale(n, train_len))).mean())
    return LognEntropyRise(lengths_, train_len, plain, scaled)


def logn_entropy_slopes(
    score_stds: Sequence[float],
    train_len: int,
    lengths: Sequence[int],
    *,
    seeds: Sequence[int] = tuple(range(20)),
    dim: int = 64,
    n_queries: int = 128,
) -> np.ndarray:
    """Slope dH/d ln N of the log-n-scaled entropy curve, least squares over ``lengths``, per spread and seed.

    Returns an array of shape ``(len(score_stds), len(seeds))``: for each score spread σ and each seed,
    :func:`attention_entropy_vs_length` with log-n scaling at ``train_len`` (one independent draw of
    queries and keys per seed) and the straight-line fit of H against ln N. Notebook 06 reads the sign:
    positive where log-n scaling still lets the entropy rise, negative where it turns it down. The slope
    varies from draw to draw (at σ = 3.5 one seed in 100 is positive where the median is ≈ −0.06), so
    notebook 06 claims a bound on the median over seeds, which a test repeats on a disjoint seed set.
    """
    lengths_ = [int(n) for n in lengths]
    if len(set(lengths_)) < 2:
        raise ValueError(f"lengths must hold at least two different lengths to fit a slope, got {lengths!r}")
    stds = [float(v) for v in score_stds]
    if not stds:
        raise ValueError("score_stds must name at least one score spread, got none")
    seeds_ = [int(v) for v in seeds]
    if not seeds_:
        raise ValueError("seeds must name at least one seed, got none")
    x = np.log(np.array(lengths_, dtype=np.float64))
    x = x - x.mean()
    out = np.empty((len(stds), len(seeds_)))
    for b, seed in enumerate(seeds_):  # seeds outside: each seed's cached draw serves every spread
        for a, std in enumerate(stds):
            h = attention_entropy_vs_length(lengths_, train_len, score_std=std, dim=dim, n_queries=n_queries, seed=seed)
            out[a, b] = float(x @ (h - h.mean()) / (x @ x))  # least-squares slope in ln N
    return out
