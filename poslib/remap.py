"""Training-free distance remapping for RoPE: ReRoPE, Leaky ReRoPE and Self-Extend.

A RoPE model trained at length L has only seen query − key distances 0 … L − 1 (notebook 06's
unseen angles). These methods keep every distance the model meets inside that range by changing
the distance a pair of tokens is scored at, with no training:

* **ReRoPE** (Su 2023, "Transformer upgrade road 12", kexue.fm/archives/9708; code:
  bojone/rerope ``rerope_patch.py``): plain distances inside a window w, the constant w beyond it,
  d' = min(m − n, w).
* **Leaky ReRoPE** (same post; ``leaky_rerope_patch.py``): beyond the window the distance keeps
  growing, ``leak`` times more slowly, d' = w + (m − n − w)/leak (leak > 1: Su's k, the code's
  ``scaling_factor``; written out here because k is only ever a key vector in poslib).
* **Self-Extend** (Jin et al. 2024, arXiv 2401.01325; code: datamllab/LongLM; llama.cpp's
  ``--grp-attn-n`` G / ``--grp-attn-w`` W): plain distances inside a neighbour window W, and
  beyond it the floor-divided positions of "grouped attention", shifted so that the two regions meet:
  d' = (⌊m/G⌋ + W − ⌊W/G⌋) − ⌊n/G⌋.

Here m is the query's position and n the key's (queries are the last q_len of k_len positions, as
in every bias builder: :mod:`poslib.attn`), and the distance is **m − n**, the query minus the key,
positive for past keys: the opposite sign of :func:`poslib.relative_distance` (n − m, T5's r).

**Each map is RoPE at remapped positions, per region.** In every one of them the pair (m, n) is
scored as if the query sat at a position p_r(m) and the key at p'_r(n), where r is the pair's
region (0: inside the window, 1: beyond it): ReRoPE's region 1 puts the query at w and the key at 0;
Leaky ReRoPE's puts the query at (m + w(leak − 1))/leak and the key at n/leak; Self-Extend's at
⌊m/G⌋ + W − ⌊W/G⌋ and ⌊n/G⌋. :class:`RemappedPositions` holds those positions and the region of every
pair; :func:`rope_remapped_scores` turns them into the exact RoPE attention scores the way the
reference codes do, one ordinary RoPE pass per region and a selection per pair, never a rotation per
pair. (Dual Chunk Attention, An et al. 2024, is a three-region map of the same kind: :mod:`poslib.dca`.)
"""

from __future__ import annotations

import inspect
import math
import numbers
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec

import numpy as np
import torch

from ._backend import Array, Backend, arange, cast, check_choice, check_positive_int, select, xp_of
from .rope import LAYOUTS, rope_cos_sin, rope_rotate

__all__ = [
    "RemappedPositions",
    "remapped_distances",
    "rerope_positions",
    "rerope_relative_positions",
    "rope_remapped_scores",
    "self_extend_max_distance",
    "self_extend_positions",
    "self_extend_relative_positions",
]


@dataclass(frozen=True)
class RemappedPositions:
    """Where each region puts the queries and the keys, and which region scores each pair.

    ``q_positions`` ``(n_regions, q_len)`` and ``k_positions`` ``(n_regions, k_len)``: the positions
    RoPE rotates query m and key n to in region r; ``region`` ``(q_len, k_len)``, int64: the region of
    each (query, key) pair. The distance of a pair is q_positions[r, m] − k_positions[r, n].
    """

    q_positions: Array
    k_positions: Array
    region: Array


def _positions(q_len: int, k_len: int | None, xp: Any, device: Any, dtype: Any) -> tuple[Array, Array, int]:
    # absolute positions of the queries (the last q_len of k_len) and of the keys, and k_len
    check_positive_int("q_len", q_len)
    k_len = q_len if k_len is None else k_len
    check_positive_int("k_len", k_len)
    if q_len > k_len:
        raise ValueError(f"q_len must be at most k_len (the queries are the last q_len keys), got {q_len} > {k_len}")
    m = arange(q_len, xp, dtype=dtype, device=device) + (k_len - q_len)
    n = arange(k_len, xp, dtype=dtype, device=device)
    return m, n, k_len


def _int64(xp: Any) -> Any:
    return torch.int64 if xp is torch else np.int64


def _check_leak(leak: Any) -> None:
    if leak is not None and (
        isinstance(leak, bool) or not isinstance(leak, numbers.Real) or not math.isfinite(leak) or leak <= 1
    ):
        raise ValueError(f"leak must be None (ReRoPE) or a number > 1 (Leaky ReRoPE's factor, Su's k), got {leak!r}")


def rerope_positions(
    q_len: int,
    k_len: int | None = None,
    *,
    window: int,
    leak: float | None = None,
    backend: Backend = "numpy",
    device: Any = None,
) -> RemappedPositions:
    """ReRoPE's (``leak=None``) or Leaky ReRoPE's (``leak`` > 1) two regions (module docstring).

    Region 0, the pairs with m − n < w (future keys included): query at m, key at n. Region 1, the
    pairs with m − n ≥ w: ReRoPE puts the query at w and the key at 0 (bojone/rerope
    ``rerope_patch.py``: ``apply_rotary_pos_emb(query_states, None, …, position_ids * 0 + window)``
    against the unrotated keys); Leaky ReRoPE puts the query at m + w(leak − 1) and the key at n, both
    with PI's factor leak, i.e. at (m + w(leak − 1))/leak and n/leak (``leaky_rerope_patch.py``: a
    linear-scaling rotary embedding with ``scaling_factor`` = leak, and the queries shifted by
    ``offset = window * (scaling_factor - 1)``).
    Positions are int64 for ReRoPE, float64 for Leaky ReRoPE.
    """
    check_positive_int("window", window)
    _check_leak(leak)
    xp, device = select(backend, device)
    dtype = _int64(xp) if leak is None else xp.float64
    m, n, _ = _positions(q_len, k_len, xp, device, dtype)
    beyond = (m[:, None] - n[None, :]) >= window
    region = xp.where(beyond, 1, 0)
    region = region.to(torch.int64) if xp is torch else region.astype(np.int64)
    if leak is None:
        q_far, k_far = xp.full_like(m, window), xp.zeros_like(n)
    else:
        q_far, k_far = (m + window * (leak - 1)) / leak, n / leak
    return RemappedPositions(xp.stack([m, q_far]), xp.stack([n, k_far]), region)


def self_extend_positions(
    q_len: int,
    k_len: int | None = None,
    *,
    group_size: int,
    neighbor_window: int,
    backend: Backend = "numpy",
    device: Any = None,
) -> RemappedPositions:
    """Self-Extend's two regions, int64 (module docstring): neighbour attention and grouped attention.

    Region 0, the pairs with m − n < W (future keys included): query at m, key at n. Region 1, the
    pairs with m − n ≥ W: query at ⌊m/G⌋ + W − ⌊W/G⌋, key at ⌊n/G⌋. The floored shift W − ⌊W/G⌋ is
    datamllab/LongLM's (``self_extend_patch/``): the eager forward of ``Llama_4_40.py``
    (``_re_group_size_2 - _re_group_size_2 // group_size_1``, fixed in commit 715c1e3: "we
    accidentally use '/'"), every decoding path (``group_key_position`` in Llama, Mistral, Qwen2, Phi,
    Gemma) and Phi's prefill; the prefill paths of ``Llama.py`` and ``Gemma.py`` still divide with
    '/', i.e. W − W/G, the form the issue quotes from the paper (not confirmed here). The two agree
    when G divides W, as llama.cpp requires (``grp_attn_w`` a multiple of ``grp_attn_n``). The
    neighbour mask is the code's (``torch.tril`` minus the grouped part below the W-th diagonal):
    neighbour exactly when m − n < W.
    """
    check_positive_int("group_size", group_size)
    check_positive_int("neighbor_window", neighbor_window)
    xp, device = select(backend, device)
    m, n, _ = _positions(q_len, k_len, xp, device, _int64(xp))
    beyond = (m[:, None] - n[None, :]) >= neighbor_window
    region = xp.where(beyond, 1, 0)
    region = region.to(torch.int64) if xp is torch else region.astype(np.int64)
    q_group = m // group_size + (neighbor_window - neighbor_window // group_size)
    return RemappedPositions(xp.stack([m, q_group]), xp.stack([n, n // group_size]), region)


def remapped_distances(positions: RemappedPositions) -> Array:
    """The distance of every pair, q_positions[r, m] − k_positions[r, n] with r = region[m, n]: ``(q_len, k_len)``."""
    qp, kp, region = positions.q_positions, positions.k_positions, positions.region
    xp = xp_of(q_positions=qp, k_positions=kp, region=region)
    every = qp[:, :, None] - kp[:, None, :]  # (n_regions, q_len, k_len)
    if xp is torch:
        return torch.gather(every, 0, region[None]).squeeze(0)
    return np.take_along_axis(every, region[None], axis=0)[0]


_P = ParamSpec("_P")


def _distances_of(
    positions_of: Callable[_P, RemappedPositions],
) -> Callable[[Callable[..., Array]], Callable[_P, Array]]:
    """Decorator: a remap's distance function, taking exactly the parameters of its positions function.

    One parameter list serves a map's two public functions (``rerope_positions`` for the scores,
    ``rerope_relative_positions`` for the distances; the same for Self-Extend and :mod:`poslib.dca`). The
    decorated body is called as ``body(positions, d, **arguments)``: what ``positions_of`` returns for the same
    call, the plain distances d = m − n ``(q_len, k_len)``, int64 (queries the last q_len of k_len positions), and
    every argument by name (``window``, ``leak``, …). ``positions_of`` is looked up by name at each call, as a
    plain call would be. ``help()`` and the API page show its parameters (``__signature__``), type checkers too.
    """
    signature = inspect.signature(positions_of)

    def decorate(body: Callable[..., Array]) -> Callable[_P, Array]:
        def distances(*args: _P.args, **kwargs: _P.kwargs) -> Array:
            positions = getattr(sys.modules[positions_of.__module__], positions_of.__name__)(*args, **kwargs)
            call = signature.bind(*args, **kwargs)
            call.apply_defaults()
            arguments = call.arguments
            xp, device = select(arguments["backend"], arguments["device"])
            m, n, _ = _positions(arguments["q_len"], arguments["k_len"], xp, device, _int64(xp))
            return body(positions, m[:, None] - n[None, :], **arguments)

        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(distances, name, getattr(body, name))
        setattr(distances, "__signature__", signature.replace(return_annotation="Array"))  # noqa: B010 (for mypy)
        return distances

    return decorate


@_distances_of(rerope_positions)
def rerope_relative_positions(
    positions: RemappedPositions, d: Array, *, window: int, leak: float | None, **_: Any
) -> Array:
    """The query − key distance ReRoPE scores each pair at, ``(q_len, k_len)``.

    ReRoPE (``leak=None``), int64::

        d'(m, n) = min(m − n, w)

    Leaky ReRoPE (``leak`` > 1, Su's k), float64::

        d'(m, n) = m − n                  for m − n < w
                   w + (m − n − w)/leak   for m − n ≥ w

    (Su 2023, kexue.fm/archives/9708; bojone/rerope.) The clamp is at w itself, not w − 1: the code
    keeps plain RoPE where |m − n| < w and rotates the query to exactly w elsewhere, and its decoding
    path writes ``(position_ids[:, -1:] - position_ids).clip(max=window)``; the two regions agree at
    m − n = w, so every row is continuous. Largest value: w (ReRoPE), w + (k_len − 1 − w)/leak (Leaky).
    Queries are the last q_len of k_len positions. **Future keys** (n > m) get their plain m − n < 0
    here, as the decoding path's clip gives (it clips from above only); bojone's prefill path selects
    with |m − n| < w and gives w to future keys w or more ahead. The causal mask removes them either way.
    Computed from the formula; the float positions of :func:`rerope_positions`, which
    :func:`rope_remapped_scores` rotates to, give the same Leaky distances up to rounding (~1e-15).
    """
    xp = xp_of(d=d)
    if leak is None:
        return xp.clip(d, None, window) if xp is np else d.clamp(max=window)
    d = cast(d, xp.float64)
    # w + (d − w)/leak from the integer d − w: exactly w at d = w, and rounded once, so never below w beyond it
    return xp.where(d < window, d, window + (d - window) / leak)


@_distances_of(self_extend_positions)
def self_extend_relative_positions(positions: RemappedPositions, d: Array, **_: Any) -> Array:
    """The query − key distance Self-Extend scores each pair at, int64 ``(q_len, k_len)``::

        d'(m, n) = m − n                                   for m − n < W
                   (⌊m/G⌋ + W − ⌊W/G⌋) − ⌊n/G⌋              for m − n ≥ W

    G = ``group_size``, W = ``neighbor_window`` (Jin et al. 2024, arXiv 2401.01325, "LLM Maybe LongLM").
    The shift floors W/G as datamllab/LongLM's fixed code does (see :func:`self_extend_positions`; its
    older paths and, as the issue quotes it, the paper write W − W/G, equal when G divides W).
    With that floor every row is non-decreasing in the true distance (at the boundary
    ⌊m/G⌋ − ⌊(m − W)/G⌋ ≥ ⌊W/G⌋, so d' ≥ W), and the largest distance at k_len keys is
    :func:`self_extend_max_distance`. Queries are the last q_len of k_len
    positions; **future keys** (n > m) are in the neighbour region and get their plain m − n < 0
    (LongLM scores them with the grouped positions; the causal mask removes them either way).
    """
    return remapped_distances(positions)


def self_extend_max_distance(length: int, *, group_size: int, neighbor_window: int) -> int:
    """The largest distance Self-Extend gives in an input of ``length`` tokens (query length − 1, key 0).

    length − 1 when length − 1 < W (no pair leaves the window), else ⌊(length − 1)/G⌋ + W − ⌊W/G⌋.
    A model trained at L has seen this distance when it is at most L − 1; LongLM's README states the
    rule as length ≤ (L − W)·G + W.
    """
    check_positive_int("length", length)
    check_positive_int("group_size", group_size)
    check_positive_int("neighbor_window", neighbor_window)
    last = length - 1
    if last < neighbor_window:
        return last
    return last // group_size + neighbor_window - neighbor_window // group_size


def rope_remapped_scores(
    q: Array, k: Array, positions: RemappedPositions, inv_freq: Array, *, layout: str = "interleaved"
) -> Array:
    """RoPE attention scores ⟨R(p_r(m)) q_m, R(p'_r(n)) k_n⟩ with r = region[m, n]: ``(..., q_len, k_len)``.

    ``q`` ``(..., q_len, head_dim)`` and ``k`` ``(..., k_len, head_dim)`` are *unrotated*; ``positions``
    comes from :func:`rerope_positions` or :func:`self_extend_positions` (or any per-region map). Because
    ⟨R(a) q, R(b) k⟩ = qᵀ R(b − a) k, each score is RoPE's at the remapped distance
    d' = p_r(m) − p'_r(n) (:func:`remapped_distances`): exactly (R(d') q_m)ᵀ k_n.

    Computed as the reference codes do, one pass per region: rotate every query and every key to the
    region's positions (:func:`poslib.rope_cos_sin` in float64, then :func:`poslib.rope_rotate`), take
    all q·k products, keep the region's entries. Cost, for R regions: R·(q_len + k_len) rotations and
    R·q_len·k_len·head_dim multiply-adds (R times plain attention's), one extra (..., q_len, k_len)
    array; never a rotation or a cos/sin per pair. No 1/√d and no mask: add them as for any score.
    Returns q's kind, dtype and device.
    """
    check_choice("layout", layout, LAYOUTS)
    qp, kp, region = positions.q_positions, positions.k_positions, positions.region
    xp = xp_of(q=q, k=k, q_positions=qp, k_positions=kp, region=region, inv_freq=inv_freq)
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have shapes (..., q_len, head_dim) and (..., k_len, head_dim), got "
            f"{tuple(q.shape)} and {tuple(k.shape)}"
        )
    q_len, k_len = q.shape[-2], k.shape[-2]
    if qp.ndim != 2 or kp.ndim != 2 or qp.shape[0] != kp.shape[0]:
        raise ValueError(
            f"positions must hold q_positions (n_regions, q_len) and k_positions (n_regions, k_len), got "
            f"{tuple(qp.shape)} and {tuple(kp.shape)}"
        )
    if qp.shape[1] != q_len or kp.shape[1] != k_len or tuple(region.shape) != (q_len, k_len):
        raise ValueError(
            f"positions are for {qp.shape[1]} queries and {kp.shape[1]} keys (region {tuple(region.shape)}); "
            f"q and k have {q_len} and {k_len}"
        )
    out = None
    for r in range(qp.shape[0]):
        q_rot = rope_rotate(q, *rope_cos_sin(qp[r], inv_freq), layout=layout)
        k_rot = rope_rotate(k, *rope_cos_sin(kp[r], inv_freq), layout=layout)
        scores = q_rot @ xp.swapaxes(k_rot, -1, -2) if xp is np else q_rot @ k_rot.transpose(-1, -2)
        out = scores if out is None else xp.where(region == r, scores, out)
    return out
