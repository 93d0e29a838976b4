"""RoPE as real models configure it: read a Hugging Face-style ``config.json``; bound the base from below.

:func:`rope_from_config` turns the fields a model's ``config.json`` carries into
what the rotation needs, ``(inv_freq, attention_factor, rotary_dim)``, the way
Hugging Face's ``transformers/modeling_rope_utils.py`` does:

* base θ: ``rope_parameters["rope_theta"]`` (transformers ≥ 4.56 style), else
  ``rope_theta``, else GPT-NeoX's ``rotary_emb_base``, else 10 000 (the RoFormer default);
* scaling: ``rope_parameters`` or ``rope_scaling`` (``rope_type`` or the legacy
  ``type``), computed by :func:`poslib.rope_inv_freq` from its registry;
  ``"mrope"`` (Qwen2-VL) only sections the pairs, so its frequencies are the plain ones;
* head dimension: ``head_dim``, else ``qk_rope_head_dim`` (DeepSeek's MLA, whose
  rotary part is a separate 64-dim key), else ``hidden_size / num_attention_heads``;
* partial rotary: ``rotary_dim`` (GPT-J), else ``partial_rotary_factor`` (Phi,
  transformers' convention: rotary_dim = int(head_dim × factor)), else
  ``rotary_pct`` (GPT-NeoX); frequencies are then over rotary_dim:
  θ_i = base^(−2i/rotary_dim), i < rotary_dim/2;
* ``original_max_position_embeddings``: for ``llama3``, ``yarn`` and ``longrope`` the top level
  wins when present (transformers' ``standardize_rope_params``); otherwise the scaling dictionary,
  else the top level, else ``max_position_embeddings`` (transformers' fallback);
* ``longrope`` (Phi-3; ``"su"`` in its first configs): without a ``factor``, s = max_position_embeddings /
  original_max_position_embeddings sets the default attention factor.

:func:`rope_base_lower_bound` is the bound of Men et al. 2024, "Base of RoPE
Bounds Context Length" (arXiv:2405.14591): for a model to tell similar tokens
from random ones at every distance m up to the context length L, the sum
B(m) = Σ_{i<d/2} cos(m·θ_i) must stay ≥ 0 for 0 ≤ m < L; it returns the
smallest base for which it does. The condition is not monotone in the base
(bases above that one can fail again), so :func:`rope_base_safe_bound` returns
the base above which every base satisfies it.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._backend import Array, Backend, check_even, check_positive, check_positive_int
from .rope_scaling import rope_inv_freq

__all__ = ["rope_base_lower_bound", "rope_base_safe_bound", "rope_from_config"]

_SCALING_KEYS = ("rope_parameters", "rope_scaling")
_PLAIN_TYPES = (None, "default", "mrope")  # mrope sections the pairs; its frequencies are the plain ones


def _number(config: Mapping[str, Any], key: str) -> Any:
    value = config.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise TypeError(f"config[{key!r}] must be a number, got {type(value).__name__}")
    return value


def _head_dim(config: Mapping[str, Any]) -> int:
    for key in ("head_dim", "qk_rope_head_dim"):
        if config.get(key) is not None:
            check_positive_int(f"config[{key!r}]", config[key])
            return int(config[key])
    hidden, heads = config.get("hidden_size"), config.get("num_attention_heads")
    if hidden is None or heads is None:
        raise ValueError(
            "config needs 'head_dim' (or 'qk_rope_head_dim'), or both 'hidden_size' and 'num_attention_heads'"
        )
    check_positive_int("config['hidden_size']", hidden)
    check_positive_int("config['num_attention_heads']", heads)
    return hidden // heads


def _rotary_dim(config: Mapping[str, Any], scaling: Mapping[str, Any], head_dim: int) -> int:
    if config.get("rotary_dim") is not None:
        check_positive_int("config['rotary_dim']", config["rotary_dim"])
        dim, source = int(config["rotary_dim"]), "config['rotary_dim']"
    else:
        for key, where in (
            ("partial_rotary_factor", scaling),
            ("partial_rotary_factor", config),
            ("rotary_pct", config),
        ):
            factor = _number(where, key)
            if factor is not None:
                break
        else:
            factor = 1.0
        if not 0 < factor <= 1:
            raise ValueError(f"config[{key!r}] must be in (0, 1], got {factor!r}")
        dim, source = int(head_dim * factor), f"head_dim × {factor} = {head_dim * factor}"
    if dim > head_dim or dim % 2 or dim == 0:
        raise ValueError(f"rotary_dim ({source}) must be a positive even number ≤ head_dim = {head_dim}, got {dim}")
    return dim


def rope_from_config(
    config: Mapping[str, Any], *, seq_len: int | None = None, backend: Backend = "numpy"
) -> tuple[Array, float, int]:
    """``(inv_freq, attention_factor, rotary_dim)`` from a Hugging Face-style ``config.json`` dictionary.

    inv_freq has rotary_dim/2 float64 entries (scaled as the config says);
    attention_factor multiplies cos and sin (so scores by its square; YaRN's
    0.1·ln s + 1, or DeepSeek's ratio mscale(s, mscale)/mscale(s, mscale_all_dim));
    rotary_dim is how many leading features of each head are rotated (pass it
    to :func:`poslib.apply_rope`). ``seq_len`` is the current length, used by
    ``dynamic`` scaling only. Nested configurations (``text_config``) are read
    from their text part.

    Sources of the rules: transformers' ``modeling_rope_utils.py``
    (``_compute_*_parameters``, ``rope_config_validation``); Su et al. 2021
    (RoFormer) for the default base.
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping (a parsed config.json), got {type(config).__name__}")
    if isinstance(config.get("text_config"), Mapping):
        config = config["text_config"]
    scaling: dict[str, Any] = {}
    for key in _SCALING_KEYS:
        if config.get(key) is not None:
            if not isinstance(config[key], Mapping):
                raise TypeError(f"config[{key!r}] must be a dictionary, got {type(config[key]).__name__}")
            scaling = dict(config[key])
            break
    candidates = (_number(scaling, "rope_theta"), _number(config, "rope_theta"), _number(config, "rotary_emb_base"))
    base = next((v for v in candidates if v is not None), 10000.0)
    check_positive("config['rope_theta']", base)
    head_dim = _head_dim(config)
    rotary_dim = _rotary_dim(config, scaling, head_dim)
    rope_type = scaling.get("rope_type", scaling.get("type"))
    if rope_type == "su":  # Phi-3's first configs; Hugging Face's Phi3Config reads it as longrope
        rope_type = "longrope"
    if rope_type in _PLAIN_TYPES:
        inv_freq, attention = rope_inv_freq(rotary_dim, float(base), None, backend=backend)
        return inv_freq, attention, rotary_dim
    scaling["rope_type"] = rope_type
    # rotary_dim already holds the partial factor (from the scaling dict or the top level): applying the
    # dict's partial_rotary_factor again inside rope_inv_freq would shorten the rotated part twice.
    scaling.pop("partial_rotary_factor", None)
    top_original = config.get("original_max_position_embeddings")
    if rope_type in ("llama3", "yarn", "longrope") and top_original is not None:
        # Hugging Face's standardize_rope_params (transformers 5.24): for these types a top-level value wins over
        # the scaling dict's (Phi-3 keeps it outside the dict)
        scaling["original_max_position_embeddings"] = top_original
    elif scaling.get("original_max_position_embeddings") is None:
        original = top_original or config.get("max_position_embeddings")
        if original is not None:
            scaling["original_max_position_embeddings"] = original
    if rope_type == "longrope" and scaling.get("factor") is None and config.get("max_position_embeddings") is not None:
        # Phi-3's form carries no 'factor': Hugging Face's _compute_longrope_parameters (transformers 5.24) then
        # takes s = max_position_embeddings / original_max_position_embeddings for the default attention factor.
        scaling["factor"] = config["max_position_embeddings"] / scaling["original_max_position_embeddings"]
    inv_freq, attention = rope_inv_freq(rotary_dim, float(base), scaling, seq_len=seq_len, backend=backend)
    return inv_freq, float(attention), rotary_dim


class _BaseCondition:
    """Men et al.'s condition at one base: B(m) = Σ_{i<d/2} cos(m·θ_i) ≥ 0 for every integer 0 ≤ m < L.

    Bases are handled as x = ln b (θ_i = e^{−x·2i/d}). :meth:`probe` answers pass/fail and a half-width w
    in x over which that answer provably holds: |∂B(m)/∂x| = |Σ_i (2i/d)·mθ_i·sin(mθ_i)| ≤
    m·Σ_i (2i/d)·θ_i(x − cap) =: K_m on |x' − x| ≤ cap (θ_i falls as x grows), so a failing
    B(m) < 0 keeps failing for |x' − x| < −B(m)/K_m, and a passing base keeps passing for
    |x' − x| < min_{m ≥ 1} B(m)/K_m (B(0) = d/2 does not depend on x).
    """

    _CHUNK = 4096  # rows of m per block: keeps memory small and lets a failure stop early

    def __init__(self, context_len: int, head_dim: int) -> None:
        self.context_len = context_len
        self.exponents = np.arange(0, head_dim, 2) / head_dim  # 2i/d
        self.m = np.arange(context_len, dtype=np.float64)
        self.hint = np.zeros(0)  # distances that failed last time: usually they fail at the next base too

    def probe(self, x: float, cap: float) -> tuple[bool, float]:
        theta = np.exp(-self.exponents * x)
        slope = float((self.exponents * np.exp(-self.exponents * (x - cap))).sum())  # K_m / m
        if self.hint.size:
            b = np.cos(self.hint[:, None] * theta).sum(axis=1)
            if b.min() < 0:
                return False, min(cap, float((-b[b < 0] / (slope * self.hint[b < 0])).max()))
        width = cap
        for start in range(0, self.context_len, self._CHUNK):
            m = self.m[start : start + self._CHUNK]
            b = np.cos(m[:, None] * theta).sum(axis=1)
            bad = b < 0
            if bad.any():
                widths = -b[bad] / (slope * m[bad])
                self.hint = m[bad][np.argsort(-widths)[:8]]
                return False, min(cap, float(widths.max()))
            inner = m > 0
            if inner.any():
                width = min(width, float((b[inner] / (slope * m[inner])).min()))
        return True, width


def _crossing(condition: _BaseCondition, fail_x: float, pass_x: float) -> tuple[float, float]:
    # bisection between a failing and a passing ln b, to a relative 1e-10 in the base
    while abs(pass_x - fail_x) > 1e-10:
        mid = 0.5 * (fail_x + pass_x)
        if condition.probe(mid, 0.0)[0]:
            pass_x = mid
        else:
            fail_x = mid
    return fail_x, pass_x


def _check_bound_args(context_len: int, head_dim: int, rtol: float) -> None:
    check_positive_int("context_len", context_len)
    check_even("head_dim", head_dim)
    check_positive("rtol", rtol)
    if rtol > 0.1:
        raise ValueError(f"rtol is the relative grid step of the scan and must be ≤ 0.1, got {rtol!r}")


def _always_passes_above(context_len: int, head_dim: int) -> float:
    # ln of a base above which B(m) ≥ 0 for every m < L, by a proof: if (L − 1)·θ_1 ≤ arccos(1/(d/2 − 1)),
    # every pair i ≥ 1 has cos(mθ_i) ≥ 1/(d/2 − 1), so Σ_{i≥1} ≥ 1 ≥ −cos(m·θ_0). Needs d ≥ 6.
    if head_dim < 6:
        raise ValueError(f"head_dim must be ≥ 6 for a base above which every base passes, got {head_dim}")
    if context_len <= 2:
        return 0.0  # B(0) = d/2 and B(1) ≥ cos 1 + (d/2 − 1)·cos 1 > 0 for every base ≥ 1
    return (head_dim / 2) * math.log((context_len - 1) / math.acos(1 / (head_dim / 2 - 1)))


def rope_base_lower_bound(
    context_len: int, head_dim: int, *, low: float = 2.0, high: float | None = None, rtol: float = 1e-4
) -> float:
    """The smallest RoPE base b with B(m) = Σ_{i<d/2} cos(m·b^(−2i/d)) ≥ 0 for every integer 0 ≤ m < context_len.

    This is the bound of Men et al. 2024, "Base of RoPE Bounds Context Length" (arXiv:2405.14591), §4
    (their definition: the infimum of the bases that satisfy the condition at every distance up to
    the context length). The expected score gap between a similar key and a random one at distance m
    is proportional to B(m); where it is negative, the model cannot prefer the similar token.

    The condition is **not monotone** in b: bases above the returned one can fail again (see
    :func:`rope_base_safe_bound` for the base above which every base passes).

    Search: upward in x = ln b from ``low``, on a grid of ratio 1 + ``rtol``, except where a
    derivative bound proves a whole stretch fails (then it jumps over it: no passing base is skipped
    there); the first passing grid base is refined by bisection against the failing one before it to
    a relative 1e-10. Resolution: a passing window narrower than one grid step (relative ``rtol``)
    that lies where the derivative bound does not cover it can be missed; the windows get narrow near
    the bound (at d = 128, L = 4096 the first one is [26 952.339, 26 973.083], 7.7e-4 wide in relative
    terms).
    B(m) is evaluated in float64 at every integer m.

    ``high`` (default: a base above which every base passes, by the proof in
    :func:`rope_base_safe_bound`) limits the search; ``ValueError`` if no base up to it passes, or if
    ``low`` already passes (then the bound lies below ``low``: pass a smaller one).
    """
    _check_bound_args(context_len, head_dim, rtol)
    check_positive("low", low)
    if high is not None:
        check_positive("high", high)
    if low <= 1.0:
        raise ValueError(f"low must be > 1 (a RoPE base), got {low!r}")
    if context_len <= 2:
        return float(low)  # B(0) = d/2, B(1) ≥ cos 1 + (d/2 − 1)·cos 1 > 0: every base passes
    top = (
        math.log(high)
        if high is not None
        else (_always_passes_above(context_len, head_dim) if head_dim >= 6 else math.log(1e12))
    )
    x = math.log(low)
    if not x < top:
        raise ValueError(f"need low < high, got low={low!r}, high={math.exp(top):g}")
    condition = _BaseCondition(context_len, head_dim)
    ok, width = condition.probe(x, 1.0)
    if ok:
        raise ValueError(f"low={low!r} already satisfies B(m) ≥ 0 up to context_len={context_len}: pass a smaller low")
    step = math.log1p(rtol)
    while True:
        nxt = x + max(step, width)
        if nxt > top:
            raise ValueError(f"no base up to high={math.exp(top):g} keeps B(m) ≥ 0 up to context_len={context_len}")
        ok, width = condition.probe(nxt, min(1.0, 2 * max(step, width)))
        if ok:
            break
        x = nxt
    return float(math.exp(_crossing(condition, x, nxt)[1]))


def rope_base_safe_bound(context_len: int, head_dim: int, *, high: float | None = None, rtol: float = 1e-4) -> float:
    """The RoPE base above which every base b keeps B(m) = Σ_{i<d/2} cos(m·b^(−2i/d)) ≥ 0 for all 0 ≤ m < context_len.

    The largest failing base: every base above it passes (up to the resolution below), unlike the
    bases just above :func:`rope_base_lower_bound` (Men et al. 2024's bound), which can fail again.

    Search: downward in x = ln b from ``high``, default a base above which every base passes by a
    proof (for d ≥ 6: if (L − 1)·θ_1 ≤ arccos(1/(d/2 − 1)), every pair i ≥ 1 has
    cos(mθ_i) ≥ 1/(d/2 − 1), their sum is ≥ 1 and B(m) ≥ 0). Each step jumps as far as a derivative
    bound proves every base in between passes, and at least one grid step of ratio 1 + ``rtol``; the
    first failing base is refined by bisection to a relative 1e-10 and returned. Resolution: a failing
    window narrower than one grid step, where the derivative bound does not cover it, can be missed.
    Cost: about a thousand evaluations of B over every m < L (seconds at L = 2048, minutes at 32k).
    ``ValueError`` if ``high`` itself fails, or if head_dim < 6 and no ``high`` is given.
    """
    _check_bound_args(context_len, head_dim, rtol)
    if high is not None:
        check_positive("high", high)
        if high <= 1.0:
            raise ValueError(f"high must be > 1 (a RoPE base), got {high!r}")
    top = math.log(high) if high is not None else _always_passes_above(context_len, head_dim)
    condition = _BaseCondition(context_len, head_dim)
    x, cap, above = top, 1.0, None
    while x > 0:
        ok, width = condition.probe(x, cap)
        if not ok:
            if above is None:
                raise ValueError(
                    f"high={math.exp(top):g} fails B(m) ≥ 0 up to context_len={context_len}: pass a larger high"
                )
            return float(math.exp(_crossing(condition, x, above)[0]))
        above = x
        jump = max(math.log1p(rtol), width)
        x, cap = x - jump, 2 * jump
    return 1.0  # every base > 1 passes (context_len ≤ 2)


def llama4_attention_temperature(positions: Any, *, floor_scale: int = 8192, attn_scale: float = 0.1) -> np.ndarray:
    """Llama 4's query temperature on its NoPE layers: T(p) = 1 + attn_scale·ln(⌊(p + 1)/floor_scale⌋ + 1).

    As transformers' ``modeling_llama4.py`` computes it (``attn_temperature_tuning``; the idea of
    Nakanishi 2025, Scalable-Softmax, arXiv:2501.19399, which that code cites). The ``p + 1`` makes the
    first step at p = floor_scale − 1, one token before the first chunk ends. float64 NumPy.
    """
    check_positive_int("floor_scale", floor_scale)
    check_positive("attn_scale", attn_scale)
    p = np.asarray(positions)
    if p.dtype.kind not in "iu" or (p < 0).any():
        raise ValueError("positions must be non-negative integers (0-based token positions)")
    return 1.0 + attn_scale * np.log(np.floor((p + 1) / floor_scale) + 1.0)
