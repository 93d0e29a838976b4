"""PaTH attention (Yang et al., NeurIPS 2025, "PaTH Attention: Position Encoding via Accumulating Householder
Transformations", arXiv:2505.16381).

RoPE turns the query by a fixed rotation per token of distance, R^(i−j); PaTH turns it by a
*data-dependent* Householder-like matrix per token passed, one for each token between key and query::

    H_t = I − β_t w_t w_tᵀ                          (w_t, β_t computed from token t)
    s_ij = scale · (q_iᵀ H_i H_{i−1} ⋯ H_{j+1} k_j + Λ_i − Λ_j),     Λ_t = Σ_{l≤t} log f_l (optional gate)
    a_ij = softmax_j(s_ij) over j ≤ i,           o_i = Σ_j a_ij v_j

The product is empty for j = i (s_ii = scale·q_i·k_i). With β_t = 0 every H_t = I and PaTH is causal
softmax attention with no positions (NoPE). With ‖w_t‖ = 1 and β_t = 2, H_t is the reflection across
the hyperplane ⊥ w_t, so the product is orthogonal and q_iᵀ H_i ⋯ H_{j+1} keeps the norm of q_i, like
RoPE's rotations; β_t ∈ (0, 2) (the reference layer's 2·σ(·)) scales the component along a unit w_t by
1 − β_t ∈ (−1, 1).

**Cost.** Never a d×d matrix: each query is carried backwards through the reflections one key at a time,
u ← H_j u = u − β_j (w_jᵀ u) w_j, an O(d) update, so all scores cost O(q_len · k_len · d) (k_len vector
steps over all queries at once). **Decoding** gives the same scores the other way round, as
flash-linear-attention's ``PaTHAttention`` does with its cache: when token t arrives every cached key is
updated, k_j ← H_t k_j = k_j − β_t (w_tᵀ k_j) w_t, then k_t is appended, and the query scores plain
q_t·k_j against the cache.

Reference: flash-linear-attention ``fla/ops/path_attn/naive.py`` (``naive_path_attn``: chunked UT
transform of the same product, in float32; poslib matches its float64 port to ~1e-14). What it settles:

* **The gate is scaled.** ``A = A + g_cumsum[..., None] − g_cumsum[..., None, :]`` comes *before*
  ``(A * scale).softmax(-1)``, and the Triton kernel (``parallel_path_fwd.py``) also adds the gate
  difference before multiplying by ``scale``: PaTH's logits are scale·(q·Hk + Λ_i − Λ_j), whereas fla's
  forgetting attention (:mod:`poslib.forgetting`) adds Λ_i − Λ_j unscaled. poslib follows each reference:
  here the gate term is multiplied by ``scale``.
* **w is not normalised by the op.** ``naive_path_attn`` uses w as given; the layer
  (``fla/layers/path_attn.py``) L2-normalises it (``l2_norm(w)``) and sets β = 2·σ(·) before calling the
  op, and the op's tests pass ``F.normalize(w)``. poslib takes w as given, like the op: normalise it
  yourself (w / ‖w‖) to reproduce the layer.
* ``log_f`` (fla's ``g``) is a log forget gate per key position, ≤ 0; ``g = 0`` (or ``log_f=None``) is no gate.
"""

from __future__ import annotations

import math

from ._backend import Array, arange, cast, select
from ._causal_checks import check_log_gate, check_per_key, check_qkv, check_scale, f64, out_dtype
from .attn import mask_future, softmax

# path_scores is a building block of path_attention, imported from poslib.path_attn (not re-exported by poslib)
__all__ = ["path_attention"]


def path_scores(
    q: Array, k: Array, w: Array, beta: Array, *, log_f: Array | None = None, scale: float | None = None
) -> Array:
    """PaTH's attention logits scale·(q_iᵀ H_i ⋯ H_{j+1} k_j + Λ_i − Λ_j), −inf on future keys: ``(..., q_len, k_len)``.

    q ``(..., q_len, d)``, k and w ``(..., k_len, d)``, beta and log_f ``(..., k_len)``; queries are the last
    q_len keys. Float64, returned in q's dtype.
    """
    xp, q_len, k_len = check_qkv(q, k, k, w=w, beta=beta, log_f=log_f)
    check_per_key("w", w, k, extra=(k.shape[-1],))
    check_per_key("beta", beta, k)
    if log_f is not None:
        check_per_key("log_f", log_f, k)
        check_log_gate("log_f", log_f)
    check_scale(scale)
    _, device = select(None, None, q=q)
    dtype = out_dtype(q)
    q, k, w, beta = f64(q, k, w, beta)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)

    position = arange(q_len, xp, device=device) + (k_len - q_len)  # query i sits at k_len − q_len + i
    u = q  # u = H_{j+1} ⋯ H_i q_i, carried from j = i down to 0 (empty product at j = i)
    columns: list[Array] = [None] * k_len
    for j in range(k_len - 1, -1, -1):
        columns[j] = (u * k[..., j, None, :]).sum(-1)  # q_iᵀ H_i ⋯ H_{j+1} k_j = uᵀ k_j, for every query
        if j == 0:
            break
        reach = position >= j  # H_j joins the product of query i only once j ≤ i
        along = xp.where(reach, beta[..., j, None] * (u * w[..., j, None, :]).sum(-1), 0.0)  # β_j (w_jᵀ u)
        u = u - along[..., None] * w[..., j, None, :]  # u ← H_j u = u − β_j (w_jᵀ u) w_j
    raw = xp.stack(columns, -1)  # (..., q_len, k_len)
    if log_f is not None:
        lam = f64(log_f)[0].cumsum(-1)  # Λ_t = Σ_{l≤t} log f_l
        raw = raw + lam[..., k_len - q_len :, None] - lam[..., None, :]  # + Λ_i − Λ_j, inside the scale
    return cast(mask_future(raw * scale), dtype)  # scale · (…), −inf where j > i


def path_attention(
    q: Array,
    k: Array,
    v: Array,
    w: Array,
    beta: Array,
    *,
    log_f: Array | None = None,
    scale: float | None = None,
) -> tuple[Array, Array]:
    """``(output, weights)`` of PaTH attention: softmax_j(scale·(q_iᵀ H_i ⋯ H_{j+1} k_j + Λ_i − Λ_j)) v, causal.

    H_t = I − β_t w_t w_tᵀ. q ``(..., q_len, d)``, k ``(..., k_len, d)``, v ``(..., k_len, d_v)``, w
    ``(..., k_len, d)`` (used as given: normalise it for a true reflection), beta ``(..., k_len)``, log_f
    ``(..., k_len)`` optional (log forget gate ≤ 0, multiplied by ``scale`` as in flash-linear-attention's
    PaTH), e.g. (B, H, T, D) and (B, H, T). ``scale`` defaults to 1/√d. Queries are the last q_len keys.
    O(q_len·k_len·d) in float64 (:func:`poslib.path_attn.path_scores`); results in q's dtype.
    """
    check_qkv(q, k, v, w=w, beta=beta, log_f=log_f)
    dtype = out_dtype(q)
    scores = path_scores(*f64(q, k, w, beta), log_f=log_f, scale=scale)
    weights = softmax(scores)
    out = weights @ f64(v)[0]
    return cast(out, dtype), cast(weights, dtype)
