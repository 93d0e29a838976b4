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

**PaTH as softmax over DeltaNet-corrected queries and keys** (:func:`path_deltanet_qk`). Write
P_t = H_t H_{t−1} ⋯ H_1 (P_0 = I). Then H_i ⋯ H_{j+1} = P_i P_j⁻¹, so, when every H_t is invertible,

    q_iᵀ H_i ⋯ H_{j+1} k_j = (P_iᵀ q_i)ᵀ (P_j⁻¹ k_j) =: q̂_iᵀ k̂_j ,

PaTH's logits are plain causal softmax logits of q̂ and k̂, and the gate term Λ_i − Λ_j stays as it is. Each H_t
is symmetric, so P_iᵀ = H_1 H_2 ⋯ H_i = S_i, the state of a DeltaNet (the delta rule
S_t = S_{t−1} (I − β_t w_t w_tᵀ) + β_t v_t w_tᵀ) run with keys w, strengths β, values 0 and the start S_0 = I:
q̂_i = S_i q_i is that DeltaNet's read-out of q_i. k̂_j = H_1⁻¹ ⋯ H_j⁻¹ k_j is the read-out of the same DeltaNet
with the inverse factors, (I − β w wᵀ)⁻¹ = I − β' w wᵀ with β' = β / (β‖w‖² − 1) (Sherman–Morrison). Exact
conditions: β_t ‖w_t‖² ≠ 1 for every t that enters a k̂ (H_t singular otherwise: β = 1 with a unit w projects
w out, and no k̂ exists); and the factorisation is exact in exact arithmetic only: P_j⁻¹ has norm up to
∏ max(1, 1/|1 − β_t‖w_t‖²|), so near β‖w‖² = 1 the rounding grows with it. For reflections (‖w‖ = 1, β = 2)
β' = 2: H_t⁻¹ = H_t, k̂_j = S_j k_j with the orthogonal S_j, so q̂ and k̂ are read-outs of the *same*
DeltaNet and the rounding stays at float64's (measured: 7e-15 at T = 12; 5e-9 at β = 1.1 and 5e2 at β = 1.01).
This is the relation Su (2026) is said to state between PaTH and DeltaNet; his text could not be read here
(not confirmed): the statement above is derived and checked, not quoted (tests/test_path_attn.py).
"""

from __future__ import annotations

import math

from ._backend import Array, arange, cast, is_torch, select
from ._causal_checks import check_log_gate, check_per_key, check_qkv, check_scale, f64, out_dtype
from .attn import mask_future, softmax

# path_scores is a building block of path_attention, imported from poslib.path_attn (not re-exported by poslib)
__all__ = ["path_attention", "path_deltanet_qk"]


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


def path_deltanet_qk(q: Array, k: Array, w: Array, beta: Array) -> tuple[Array, Array]:
    """``(q̂, k̂)`` with q̂_iᵀ k̂_j = q_iᵀ H_i ⋯ H_{j+1} k_j for j ≤ i: PaTH as softmax over corrected q and k.

    q̂_i = H_1 ⋯ H_i q_i and k̂_j = H_1⁻¹ ⋯ H_j⁻¹ k_j (H_t = I − β_t w_t w_tᵀ; see the module docstring), computed
    by carrying the d×d DeltaNet state S_t = S_{t−1} H_t (values 0, S_0 = I) and its inverse-factor twin along
    the sequence, O(T·d²). q ``(..., T, d)`` (one query per key: q_len = k_len = T), k and w ``(..., T, d)``,
    beta ``(..., T)``. ``softmax(scale · q̂ k̂ᵀ)`` (causal) is then :func:`path_attention`'s weights. Every
    H_t must be invertible: ``ValueError`` naming beta when some β_t‖w_t‖² = 1 (to 1e-12). Float64, returned in
    q's dtype; NumPy or torch.
    """
    xp, q_len, k_len = check_qkv(q, k, k, w=w, beta=beta)
    if q_len != k_len:
        raise ValueError(f"q must have one query per key (q_len = k_len = {k_len}), got q_len {q_len}")
    check_per_key("w", w, k, extra=(k.shape[-1],))
    check_per_key("beta", beta, k)
    dtype = out_dtype(q)
    q, k, w, beta = f64(q, k, w, beta)
    strength = beta * (w * w).sum(-1)  # β_t ‖w_t‖²: H_t is singular where this is 1
    if bool((abs(strength - 1.0) < 1e-12).any()):
        raise ValueError("beta: some H_t = I − β_t w_t w_tᵀ is singular (β_t‖w_t‖² = 1): no k̂ exists")
    inverse_beta = beta / (strength - 1.0)  # (I − β w wᵀ)⁻¹ = I − β' w wᵀ, β' = β / (β‖w‖² − 1)
    eye = xp.eye(q.shape[-1], dtype=q.dtype, **({"device": q.device} if is_torch(q) else {}))
    state = xp.broadcast_to(eye, (*q.shape[:-2], *eye.shape)) + 0.0  # S_t = H_1 ⋯ H_t
    inverse = state + 0.0  # S'_t = H_1⁻¹ ⋯ H_t⁻¹
    q_hat, k_hat = [], []
    for t in range(k_len):
        wt = w[..., t, :]
        # S ← S (I − β w wᵀ) = S − β (S w) wᵀ: the delta rule with value 0, one rank-one update per token
        state = state - beta[..., t, None, None] * (state @ wt[..., :, None]) * wt[..., None, :]
        inverse = inverse - inverse_beta[..., t, None, None] * (inverse @ wt[..., :, None]) * wt[..., None, :]
        q_hat.append((state @ q[..., t, :, None])[..., 0])
        k_hat.append((inverse @ k[..., t, :, None])[..., 0])
    return cast(xp.stack(q_hat, -2), dtype), cast(xp.stack(k_hat, -2), dtype)
