"""CoPE: contextual position encoding (Golovneva et al., 2024, arXiv:2405.18719).

A token position counts *every* token; CoPE counts only the tokens a gate lets
through, so "position" can mean "the 3rd sentence back" as well as "the 40th
byte back". For query m and key n ≤ m (the paper writes i, j; its Appendix B code)::

    g_mt = sigmoid(q_m · k_t / √d)            a gate in (0, 1) per context token t
    p_mn = Σ_{t=n..m} g_mt                    a fractional count from n up to the query
    e[p] = (1 − (p − ⌊p⌋))·e[⌊p⌋] + (p − ⌊p⌋)·e[⌈p⌉]   interpolated between integer embeddings
    score_mn = q_m · k_n / √d + q_m · e[p_mn]

With all gates 1, p_mn = m − n + 1 and CoPE is a learned relative encoding; with gates that
open only on, say, newline tokens, p_mn counts lines. The paper's equation writes the gate as
sigmoid(q_m · k_t); its Appendix B code (and the authors' repository, facebookresearch/RAM,
``projects/cope/src/cope/context_position.py``) takes the sigmoid of the attention logits
*after* the division by √d, which is what :func:`cope_gate_logits` returns (−inf on masked
keys). The score above, q_m · e[p_mn] added to q_m · k_n / √d, follows Appendix B; the repository by
default (``--cope-nodiv False``) adds q_m · e[p_mn] to q_m · k_n and then divides the sum by √d, so
there the position term is scaled by 1/√d as well. Positions are clamped to ``npos_max − 1``; the
position embeddings start at zero.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from ._backend import Array, check_positive_int, is_torch, xp_of
from .attn import mask_future

# cope_gate_logits is a building block of cope_bias, imported from poslib.cope (not re-exported by poslib)
__all__ = ["CoPE", "cope_bias", "cope_positions"]


def _sigmoid(x: Array) -> Array:
    # σ(x) = (1 + tanh(x/2))/2: the same formula on both backends, exactly 0 at −inf (no overflow warning)
    xp = xp_of(x=x)
    return 0.5 * (1.0 + xp.tanh(0.5 * x))


def cope_gate_logits(q: Array, k: Array, *, causal: bool = True) -> Array:
    """CoPE's gate logits q_m · k_t / √d, shape ``(…, q_len, k_len)``; −inf on future keys when ``causal``.

    ``q`` is ``(…, q_len, d)`` and ``k`` ``(…, k_len, d)``. These are the attention logits of the
    paper's Appendix B code, scaled by 1/√d *before* the sigmoid (the paper's equation omits the
    scale); :func:`cope_positions` turns them into gates and counts.
    """
    xp = xp_of(q=q, k=k)
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have shapes (..., q_len, d) and (..., k_len, d) with the same d, "
            f"got {tuple(q.shape)} and {tuple(k.shape)}"
        )
    d = q.shape[-1]
    kt = k.transpose(-1, -2) if xp is torch else xp.swapaxes(k, -1, -2)
    logits = (q @ kt) / math.sqrt(d)
    return mask_future(logits) if causal else logits


def cope_positions(gate_logits: Array, *, max_pos: int | None = None) -> Array:
    """CoPE positions p_mn = Σ_{t=n..m} sigmoid(gate_logits_mt), shape ``(…, q_len, k_len)``.

    The sum runs from key n to the last key (the paper's reversed cumulative sum); entries
    masked with −inf have sigmoid = 0, so in a causal row it stops at the query. With ``max_pos``
    the positions are clamped to max_pos − 1 (the last embedding). Because every gate is ≥ 0,
    p_mn ≥ p_m,n+1: positions never decrease from the query back toward the first token.
    """
    xp = xp_of(gate_logits=gate_logits)
    if max_pos is not None:
        check_positive_int("max_pos", max_pos)
    if gate_logits.ndim < 2:
        raise ValueError(f"gate_logits must have shape (..., q_len, k_len), got {tuple(gate_logits.shape)}")
    gates = _sigmoid(gate_logits)
    if xp is torch:
        pos = gates.flip(-1).cumsum(-1).flip(-1)
    else:
        pos = gates[..., ::-1].cumsum(-1)[..., ::-1]
    if max_pos is not None:
        pos = pos.clamp(max=max_pos - 1) if xp is torch else xp.minimum(pos, max_pos - 1)
    return pos


def cope_bias(q: Array, gate_logits: Array, pos_emb: Array) -> Array:
    """CoPE's positional logits q_m · e[p_mn], shape ``(…, q_len, k_len)``, to add to the attention scores.

    ``q`` is ``(…, q_len, d)``, ``gate_logits`` ``(…, q_len, k_len)`` (−inf where masked),
    ``pos_emb`` ``(max_pos, d)``: one embedding per integer position 0 … max_pos − 1.
    Positions come from :func:`cope_positions` with max_pos = len(pos_emb); the logit at a
    fractional position is interpolated linearly between the logits at its floor and ceiling
    (as the paper's code does: q·e is computed once per integer position, then gathered).
    """
    xp = xp_of(q=q, gate_logits=gate_logits, pos_emb=pos_emb)
    if pos_emb.ndim != 2 or pos_emb.shape[1] != q.shape[-1]:
        raise ValueError(f"pos_emb must have shape (max_pos, d={q.shape[-1]}), got {tuple(pos_emb.shape)}")
    if gate_logits.shape[-2] != q.shape[-2]:
        raise ValueError(
            f"gate_logits must have q_len={q.shape[-2]} rows (one per query), got shape {tuple(gate_logits.shape)}"
        )
    pos = cope_positions(gate_logits, max_pos=pos_emb.shape[0])
    logits_int = q @ pos_emb.T  # (…, q_len, max_pos)
    floor = xp.floor(pos)
    weight = pos - floor  # 0 at integer positions
    if xp is torch:
        lead = tuple(np.broadcast_shapes(tuple(logits_int.shape[:-1]), tuple(pos.shape[:-1])))
        table = logits_int.expand(*lead, logits_int.shape[-1])
        lo = floor.long().expand(*lead, pos.shape[-1])
        hi = torch.ceil(pos).long().expand(*lead, pos.shape[-1])
        at_floor, at_ceil = table.gather(-1, lo), table.gather(-1, hi)
        weight = weight.expand(*lead, pos.shape[-1]).to(table.dtype)
    else:
        lo, hi = floor.astype(int), xp.ceil(pos).astype(int)
        at_floor = xp.take_along_axis(logits_int, lo, axis=-1)
        at_ceil = xp.take_along_axis(logits_int, hi, axis=-1)
    return at_ceil * weight + at_floor * (1 - weight)


class CoPE(nn.Module):
    """Trainable CoPE: ``forward(q, gate_logits)`` → the positional logits of :func:`cope_bias`.

    One table of ``max_pos`` embeddings of size ``head_dim``, shared by the heads of a layer
    (as in the paper's code), initialised to zero: training starts from no position at all.
    """

    def __init__(self, max_pos: int, head_dim: int) -> None:
        super().__init__()
        check_positive_int("max_pos", max_pos)
        check_positive_int("head_dim", head_dim)
        self.pos_emb = nn.Parameter(torch.zeros(max_pos, head_dim))

    def forward(self, q: torch.Tensor, gate_logits: torch.Tensor) -> Any:
        if not is_torch(q):
            raise TypeError(f"q must be a torch tensor, got {type(q).__name__}")
        return cope_bias(q, gate_logits, self.pos_emb.to(q.dtype))
