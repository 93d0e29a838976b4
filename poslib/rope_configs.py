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
* ``original_max_position_embeddings``: from the scaling dictionary, else the top
  level, else ``max_position_embeddings`` (transformers' fallback).

:func:`rope_base_lower_bound` is the bound of Men et al. 2024, "Base of RoPE
Bounds Context Length" (arXiv:2405.14591): for a model to tell similar tokens
from random ones at every distance m up to the context length L, the sum
B(m) = Σ_{i<d/2} cos(m·θ_i) must stay ≥ 0 for 0 ≤ m < L; it returns the
smallest base for which it does.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._backend import Array, Backend, check_even, check_positive, check_positive_int
from .rope_scaling import rope_inv_freq

__all__ = ["rope_base_lower_bound", "rope_from_config"]

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
    if rope_type in _PLAIN_TYPES:
        inv_freq, attention = rope_inv_freq(rotary_dim, float(base), None, backend=backend)
        return inv_freq, attention, rotary_dim
    scaling["rope_type"] = rope_type
    if scaling.get("original_max_position_embeddings") is None:
        original = config.get("original_max_position_embeddings") or config.get("max_position_embeddings")
        if original is not None:
            scaling["original_max_position_embeddings"] = original
    inv_freq, attention = rope_inv_freq(rotary_dim, float(base), scaling, seq_len=seq_len, backend=backend)
    return inv_freq, float(attention), rotary_dim


def rope_base_lower_bound(
    context_len: int, head_dim: int, *, low: float = 2.0, high: float = 1e12, iterations: int = 24
) -> float:
    """The RoPE base at which min_{0 ≤ m < context_len} B(m), B(m) = Σ_{i<d/2} cos(m·b^(−2i/d)), crosses zero.

    Men et al. 2024, "Base of RoPE Bounds Context Length" (arXiv:2405.14591), §4:
    the expected score gap between a similar key and a random one at distance m
    is proportional to B(m); if it turns negative the model cannot prefer the
    similar token at that distance, so the base must be large enough that
    B(m) ≥ 0 for every m up to the context length. Found by bisection on ln b in
    [low, high] (``iterations`` halvings: relative precision (ln high − ln low)/2^iterations);
    B(m) is evaluated in float64 at every integer m. B ≥ 0 holds at the returned
    base and fails just below it. The condition is not monotone in b: narrow
    windows of smaller bases pass again (at context_len 4096, d = 128: around 0.98×
    and 0.63× the returned value), so this is a lower bound up to such windows,
    not the smallest base in the strict sense, and another bracket [low, high]
    can land on another crossing (a few per cent apart at d = 128; more at small d). Returns a Python float; raises
    ``ValueError`` if even ``high`` fails.
    """
    check_positive_int("context_len", context_len)
    check_even("head_dim", head_dim)
    check_positive("low", low)
    check_positive("high", high)
    check_positive_int("iterations", iterations)
    if not 1.0 < low < high:
        raise ValueError(f"need 1 < low < high, got low={low!r}, high={high!r}")
    exponents = np.arange(head_dim // 2) * (2.0 / head_dim)

    def holds(base: float) -> bool:
        theta = base**-exponents
        for start in range(0, context_len, 8192):  # blocks keep memory small and let a failure stop early
            m = np.arange(start, min(start + 8192, context_len), dtype=np.float64)
            if np.cos(m[:, None] * theta).sum(axis=1).min() < 0:
                return False
        return True

    if not holds(high):
        raise ValueError(f"no base up to high={high:g} keeps B(m) ≥ 0 up to context_len={context_len}")
    if holds(low):
        return float(low)
    lo, hi = math.log(low), math.log(high)  # invariant: fails at e^lo, holds at e^hi
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if holds(math.exp(mid)) else (mid, hi)
    return float(math.exp(hi))
