"""Dual Chunk Attention, DCA (An et al., ICML 2024, "Training-Free Long-Context Scaling of Large Language
Models", arXiv:2402.17463; code: HKUNLP/ChunkLlama, and vLLM's ``dual_chunk_attention_config``).

A RoPE model trained at length L never met a query − key distance ≥ L. DCA cuts the keys into chunks of
s = ``chunk_size − local_window`` tokens and gives every key its position *inside* its chunk, n mod s;
the query takes one of three positions, by how many chunks lie between it and the key::

    P_k(n)          = n mod s                                   every key
    P_intra(m)      = m mod s                                   key in the query's chunk
    P_succ(m)       = min(m mod s + s, chunk_size)              key in the chunk just before
    P_inter         = min(2s − 1, chunk_size)                   key two or more chunks back
    d'(m, n)        = P_region(m) − P_k(n)                      the distance RoPE scores the pair at

Inside a chunk the distances are the true ones; to the chunk before, the first ``local_window`` + 1
queries of a chunk keep their true distance to every key of it (P_succ = m mod s + s) and later queries
are held at ``chunk_size``; further back every query sits at the constant P_inter. No distance exceeds
``chunk_size``. One softmax runs over the three regions together (the reference codes merge three flash
attention calls by their log-sum-exp, which is the same thing). This is a three-region remap of the kind
of :mod:`poslib.remap`: :func:`dual_chunk_positions` returns a :class:`poslib.RemappedPositions` and the
scores are :func:`poslib.rope_remapped_scores`' (three RoPE passes, never a rotation per pair).

**The code's parameters against the paper's.** The paper writes s for the chunk length, c for the
pretraining length and w for the local window, with P_k = n mod s, P_succ = [s, s+1, …, s+w−1, c−1, …, c−1]
(w = c − s) and P_inter = c − 1 (its Eqs. 2, 5, 7). ChunkLlama's ``chunkllama_attn_replace.py``
(``chunk_len = chunk_size - local_window``; ``qc_t = (arange(chunk_len) + chunk_len).clamp(max=chunk_size)``;
``k_t = arange(…) % chunk_len``; inter queries at ``qc_t[chunk_len - 1]``) and vLLM's
``dual_chunk_rope.py`` (the same tables from ``chunk_size`` and ``local_size``) give, read against them:
s = chunk_size − local_window, **c − 1 = chunk_size** (the largest query position, and the largest
distance) and **w = local_window + 1**, i.e. the code's ``local_window`` is the paper's **w − 1**, not
w + 1: the paper's Figure 2 (s = 6, c = 10, w = 4, P_succ = [6, 7, 8, 9, 9, 9]) is chunk_size = 9,
local_window = 3 here. Two consequences: the paper's "chunk size s = 3/4 of the training length" (3072 for
Llama 2) is ChunkLlama's default ``chunk_size`` (``pretraining_length * 3 // 4``, with ``local_window =
pretraining_length // 8``), so its chunks hold 2560 tokens, not 3072; and the inter position is the
code's ``min(2s − 1, chunk_size)``, which is the paper's c − 1 whenever local_window < s. ChunkLlama's README
configures vLLM with ``chunk_size`` = the training length itself (8192 for Llama 3, with ``local_size`` 512), so
there the largest distance equals the training length, one more than the paper's c − 1.

Not included (pass ``scale`` to add them): ChunkLlama multiplies cos and sin by
mscale = 0.05·ln(T / max_position_embeddings) + 1 once the input is longer than ``max_position_embeddings``,
and vLLM scales the logits by a length-dependent factor when ``original_max_position_embeddings`` is set.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import torch

from ._backend import Array, Backend, cast, check_positive, check_positive_int, select, xp_of
from ._causal_checks import check_qkv, check_scale, f64, out_dtype
from .attn import mask_future, softmax
from .remap import RemappedPositions, _distances_of, _int64, _positions, remapped_distances, rope_remapped_scores
from .rope import rope_frequencies

# dual_chunk_positions is a building block, imported from poslib.dca (not re-exported by poslib)
__all__ = ["dual_chunk_attention", "dual_chunk_relative_positions"]

REGIONS = ("intra", "successive", "inter")  # region 0, 1, 2 of dual_chunk_positions


def _check_chunks(chunk_size: Any, local_window: Any) -> int:
    # the chunk length s = chunk_size − local_window ≥ 1
    check_positive_int("chunk_size", chunk_size)
    if isinstance(local_window, bool) or not isinstance(local_window, numbers.Integral) or local_window < 0:
        raise ValueError(f"local_window must be a non-negative integer, got {local_window!r}")
    if chunk_size <= local_window:
        raise ValueError(
            f"chunk_size must be larger than local_window (chunk_size − local_window is the chunk length), "
            f"got chunk_size={chunk_size} ≤ local_window={local_window}"
        )
    return int(chunk_size - local_window)


def _at_most(x: Array, top: int) -> Array:
    return x.clamp(max=top) if isinstance(x, torch.Tensor) else x.clip(None, top)


def dual_chunk_positions(
    q_len: int,
    k_len: int | None = None,
    *,
    chunk_size: int,
    local_window: int,
    backend: Backend = "numpy",
    device: Any = None,
) -> RemappedPositions:
    """DCA's three regions as a :class:`poslib.RemappedPositions`, int64 (module docstring).

    Region 0 (intra: key in the query's chunk, future keys included): query at m mod s. Region 1
    (successive: key in the chunk just before): query at min(m mod s + s, chunk_size). Region 2 (inter: two
    or more chunks back): query at min(2s − 1, chunk_size). Keys at n mod s in every region;
    s = chunk_size − local_window, chunks counted from position 0, queries the last q_len of k_len.
    """
    s = _check_chunks(chunk_size, local_window)
    xp, device = select(backend, device)
    m, n, _ = _positions(q_len, k_len, xp, device, _int64(xp))
    q_intra = m % s  # P_intra(m) = m mod s
    q_succ = _at_most(q_intra + s, chunk_size)  # P_succ(m) = min(m mod s + s, chunk_size)
    q_inter = xp.full_like(m, min(2 * s - 1, chunk_size))  # P_inter = min(2s − 1, chunk_size)
    k_pos = n % s  # P_k(n) = n mod s
    back = (m // s)[:, None] - (n // s)[None, :]  # how many chunks the key lies behind the query's
    region = xp.where(back >= 2, 2, xp.where(back == 1, 1, 0))  # inter, successive, else intra
    region = cast(region, _int64(xp))
    return RemappedPositions(xp.stack([q_intra, q_succ, q_inter]), xp.stack([k_pos, k_pos, k_pos]), region)


@_distances_of(dual_chunk_positions)
def dual_chunk_relative_positions(positions: RemappedPositions, d: Array, **_: Any) -> Array:
    """The query − key distance DCA scores each pair at, int64 ``(q_len, k_len)``::

        d'(m, n) = (m mod s) − (n mod s)                    same chunk
                   min(m mod s + s, chunk_size) − (n mod s)  key in the chunk just before
                   min(2s − 1, chunk_size) − (n mod s)       two or more chunks back

    s = chunk_size − local_window (the code's parameters; the paper's c − 1 = chunk_size and
    w − 1 = local_window, module docstring). Every causal distance lies in 0 … chunk_size. Queries are the
    last q_len of k_len positions; **future keys** (n > m) get their plain m − n < 0, as in
    :mod:`poslib.remap` (the causal mask removes them).
    """
    return xp_of(d=d).where(d < 0, d, remapped_distances(positions))


def dual_chunk_attention(
    q: Array,
    k: Array,
    v: Array,
    *,
    chunk_size: int,
    local_window: int,
    base: float = 10000.0,
    scale: float | None = None,
) -> tuple[Array, Array]:
    """``(output, weights)`` of Dual Chunk Attention: causal softmax over RoPE scores at DCA's remapped positions.

    q ``(..., q_len, d)``, k ``(..., k_len, d)``, v ``(..., k_len, d_v)``, e.g. (B, H, T, D), *unrotated*; RoPE
    is applied here in the rotate-half layout (Llama / ChunkLlama: x·cos + rotate_half(x)·sin) with
    θ_i = base^(−2i/d), at the positions of :func:`poslib.dca.dual_chunk_positions`:
    s_mn = scale·⟨R(P_region(m)) q_m, R(P_k(n)) k_n⟩, one softmax over the keys n ≤ m of all three regions.
    ``chunk_size`` and ``local_window`` as ChunkLlama's and vLLM's ``chunk_size`` / ``local_size``; ``scale``
    defaults to 1/√d. With k_len ≤ chunk_size − local_window everything is one chunk and DCA is plain RoPE
    attention. Float64 throughout (angles included); results in q's dtype.
    """
    xp, q_len, k_len = check_qkv(q, k, v)
    _check_chunks(chunk_size, local_window)
    check_positive("base", base)
    check_scale(scale)
    d = q.shape[-1]
    if d % 2:
        raise ValueError(f"q and k's last dimension (head_dim) must be even for RoPE, got {d}")
    _, device = select(None, None, q=q)
    backend: Backend = "torch" if xp is torch else "numpy"
    dtype = out_dtype(q)
    q, k, v = f64(q, k, v)
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)

    positions = dual_chunk_positions(
        q_len, k_len, chunk_size=chunk_size, local_window=local_window, backend=backend, device=device
    )
    inv_freq = rope_frequencies(d, base, backend=backend, device=device)  # θ_i = base^(−2i/d), float64
    scores = rope_remapped_scores(q, k, positions, inv_freq, layout="half") * scale  # scale·⟨R(P_q) q, R(P_k) k⟩
    weights = softmax(mask_future(scores))  # one softmax over intra, successive and inter keys n ≤ m
    out = weights @ v
    return cast(out, dtype), cast(weights, dtype)
