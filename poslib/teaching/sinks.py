"""Attention sinks: learned ones (gpt-oss) measured on random rows, and StreamingLLM's cache of kept first tokens.

Learned sinks: how much of a row's weight reaches the keys.
With a sink logit z_sink and key scores z_1 … z_N, the keys receive W = Σ_n e^{z_n} / (Σ_n e^{z_n} + e^{z_sink}) of
the row and the sink the rest, which carries no value. For scores drawn N(0, σ²), Σ_n e^{z_n} ≈
N·e^{σ²/2} once N is large, so W ≈ N e^{σ²/2} / (N e^{σ²/2} + e^{z_sink}): a fixed sink matters in short rows
and fades in long ones.

StreamingLLM (Xiao et al. 2023, arXiv:2309.17453, §3.2) keeps the first tokens ("sinks") and a rolling
window, and gives RoPE the positions *within the cache*, 0 … cache size − 1, not the text positions:
:func:`streaming_cache`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..attn import attention

__all__ = ["key_mass_predicted", "key_mass_with_sink", "streaming_cache"]


def key_mass_with_sink(
    lengths: Sequence[int], sink_logits: Sequence[float], seeds: Sequence[int], *, score_std: float = 1.0
) -> np.ndarray:
    """Row weight W on the keys, shape (len(seeds), len(sink_logits), len(lengths)), from ``poslib.attention``.

    One query row per (seed, length): N keys whose scores q·k/√d are N(0, score_std²) (a query and
    keys built so, d = 8), and one head per sink logit.
    """
    heads, d = len(sink_logits), 8
    out = np.empty((len(seeds), heads, len(lengths)))
    for a, seed in enumerate(seeds):
        for b, n in enumerate(lengths):
            rng = np.random.default_rng([int(seed), int(n)])
            q = np.zeros((heads, 1, d))
            q[..., 0] = score_std * np.sqrt(d)  # q·k/√d = score_std · k₀, with k₀ ~ N(0, 1)
            k = np.broadcast_to(rng.standard_normal((1, int(n), d)), (heads, int(n), d))
            v = np.ones((heads, int(n), 1))
            _, w = attention(q, k, v, sinks=np.asarray(sink_logits, dtype=np.float64))
            out[a, :, b] = w.sum(-1)[:, 0]
    return out


def key_mass_predicted(lengths: Sequence[int], sink_logits: Sequence[float], *, score_std: float = 1.0) -> np.ndarray:
    """The large-N prediction N e^{σ²/2} / (N e^{σ²/2} + e^{z_sink}), shape (len(sink_logits), len(lengths))."""
    n = np.asarray(lengths, dtype=np.float64)[None, :] * np.exp(score_std**2 / 2)
    return n / (n + np.exp(np.asarray(sink_logits, dtype=np.float64))[:, None])


def streaming_cache(n_tokens: int, *, n_sink: int = 4, window: int = 248) -> tuple[np.ndarray, np.ndarray]:
    """StreamingLLM's KV cache after ``n_tokens`` tokens: (text positions it holds, positions RoPE gives them).

    The cache holds the first ``n_sink`` tokens and the last ``window`` (all tokens while there are
    fewer than ``n_sink + window``). Keys are cached before rotation and rotated at their slot in the
    cache, 0 … cache size − 1 (Xiao et al. 2023, §3.2), so once the cache is full every step gives RoPE
    the same positions, and no offset reaches the cache size, however long the text.
    """
    if n_tokens < 1 or n_sink < 0 or window < 1:
        raise ValueError(f"need n_tokens ≥ 1, n_sink ≥ 0, window ≥ 1; got {n_tokens}, {n_sink}, {window}")
    sink = np.arange(min(n_sink, n_tokens))
    kept = np.concatenate([sink, np.arange(max(len(sink), n_tokens - window), n_tokens)])
    return kept, np.arange(len(kept))
