"""Forgetting attention: FoX, the Forgetting Transformer (Lin et al., ICLR 2025, arXiv:2503.02130).

No position vectors: a forget gate f_t = σ(w_fᵀ x_t + b_f) ∈ (0, 1), one scalar per token and head, and
every score is down-weighted by the gates of the tokens that came *after* the key, up to the query::

    s_ij = scale · q_i·k_j + Σ_{l=j+1..i} log f_l  =  scale · q_i·k_j + Λ_i − Λ_j,   Λ_i = Σ_{l≤i} log f_l
    a_ij = softmax_j(s_ij) over the keys j ≤ i,      o_i = Σ_j a_ij v_j

The gate's own token j is not counted (the sum starts at j + 1), so the diagonal keeps s_ii = scale·q_i·k_i.
With every log f_l = 0 (gates open) FoX is causal softmax attention with no positions (NoPE); with a
constant log f = −μ the bias is −μ·(i − j), ALiBi's with slope μ: FoX is a data-dependent ALiBi.

Conventions of the reference code (compared in float64 by a port kept outside the repository):

* flash-linear-attention ``fla/ops/forgetting_attn/naive.py`` (``naive_forgetting_attn``) and the authors'
  zhixuan-lin/forgetting-transformer (``src/forgetting_transformer/ops/forgetting_attention.py``) add the
  gate term *unscaled*: ``q·k·scale + Λ_i − Λ_j`` (unlike fla's PaTH, :mod:`poslib.path_attn`, which
  multiplies the gate by ``scale`` too). ``log_f`` is what they call ``g`` / ``log_fgate``, the output of
  ``logsigmoid``, one entry per *key* position.
* With q_len < k_len the queries are the last q_len keys, as in the authors' test reference
  (``log_lambda[..., -M:, None] − log_lambda[..., None, :]``) and in every poslib bias builder.
"""

from __future__ import annotations

import math

from ._backend import Array, cast
from ._causal_checks import check_log_gate, check_per_key, check_qkv, check_scale, f64, out_dtype
from .attn import mask_future, softmax

__all__ = ["forgetting_attention"]


def forgetting_attention(
    q: Array, k: Array, v: Array, log_f: Array, *, scale: float | None = None
) -> tuple[Array, Array]:
    """``(output, weights)`` of FoX's forgetting attention, causal: softmax(scale·q kᵀ + Λ_i − Λ_j) v.

    q ``(..., q_len, d)``, k ``(..., k_len, d)``, v ``(..., k_len, d_v)``, e.g. (B, H, T, D); ``log_f``
    ``(..., k_len)``, e.g. (B, H, T): log f_t = log σ(·) ≤ 0 of each key position's forget gate (finite).
    ``scale`` multiplies q·k only (default 1/√d), never the gate term, as both reference codes do.
    Queries are the last q_len of the k_len positions. Λ (a cumulative sum), the scores and the softmax
    are float64; output ``(..., q_len, d_v)`` and weights ``(..., q_len, k_len)`` come back in q's dtype.
    """
    xp, q_len, k_len = check_qkv(q, k, v, log_f=log_f)
    check_per_key("log_f", log_f, k)
    check_log_gate("log_f", log_f)
    check_scale(scale)
    dtype = out_dtype(q)
    q, k, v, log_f = f64(q, k, v, log_f)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)

    lam = log_f.cumsum(-1)  # Λ_t = Σ_{l≤t} log f_l, over the k_len key positions
    lam_q = lam[..., k_len - q_len :]  # Λ_i at the queries' positions (the last q_len)
    scores = (q @ xp.swapaxes(k, -1, -2)) * scale  # scale · q_i·k_j
    scores = scores + lam_q[..., :, None] - lam[..., None, :]  # + Σ_{l=j+1..i} log f_l
    weights = softmax(mask_future(scores))  # a_ij over j ≤ i (the diagonal is never masked)
    out = weights @ v  # o_i = Σ_j a_ij v_j
    return cast(out, dtype), cast(weights, dtype)
