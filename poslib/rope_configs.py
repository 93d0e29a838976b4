"""RoPE as real models configure it: read a Hugging Face-style ``config.json``; bound the base from below.

:func:`rope_from_config` turns the fields a model's ``config.json`` carries into
what the rotation needs, ``(inv_freq, attention_factor, rotary_dim)``, the way
Hugging Face's ``transformers/modeling_rope_utils.py`` does:

* base θ: ``rope_parameters["rope_theta"]`` (transformers ≥ 4.56 style), else
  ``rope_theta``, else GPT-NeoX's ``rotary_emb_base``, else 10 000 (the RoFormer default);
* scaling: ``rope_parameters`` or ``rope_scaling`` (``rope_type`` or the legacy
  ``type``), computed by :func:`poslib.rope_inv_freq` from its registry;
  ``"mrope"`` (Qwen2-VL) only sections the pairs, so its frequencies are the plain ones;
* per layer type (Gemma 4, DeepSeek-V4): ``rope_parameters`` may hold one dictionary per layer type
  (``{"full_attention": {...}, "sliding_attention": {...}}``); ``layer_type`` picks one, and that layer
  type's head dimension comes from ``per_layer_config`` (transformers ≥ 5.25 serialises Gemma 4's
  ``global_head_dim`` there, keyed by layer index) or, for ``"full_attention"``, ``global_head_dim``;
* head dimension: ``head_dim``, else ``qk_rope_head_dim`` (DeepSeek's MLA, whose
  rotary part is a separate 64-dim key), else ``hidden_size / num_attention_heads``;
* partial rotary, two conventions. The rotated-dims one (Phi, GPT-NeoX, Qwen3-Next / Qwen3.5,
  GLM-4.5, MiniMax-M2): ``rotary_dim`` (GPT-J), else ``partial_rotary_factor`` (transformers'
  rotary_dim = int(head_dim × factor)), else ``rotary_pct`` (GPT-NeoX); frequencies are then over
  rotary_dim, θ_i = base^(−2i/rotary_dim), i < rotary_dim/2, and pairs lie inside the first rotary_dim
  features. The proportional one (``rope_type: "proportional"``, Gemma 4's full-attention layers):
  θ_i = base^(−2i/head_dim) for i < ⌊factor·head_dim/2⌋ and 0 for the rest, over the whole head, so the
  returned rotary_dim is head_dim and pairs are (i, i + head_dim/2) (:func:`poslib.rope_inv_freq`'s
  ``proportional``). Reading one convention's config with the other's rule is a real porting bug;
  :func:`rope_convention_gap` measures it;
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

from ._backend import Array, Backend, check_choice, check_even, check_positive, check_positive_int, xp_of
from .rope import LAYOUTS, apply_rope
from .rope_scaling import WHOLE_HEAD_SCALINGS, rope_inv_freq

__all__ = ["rope_base_lower_bound", "rope_base_safe_bound", "rope_convention_gap", "rope_from_config"]

_SCALING_KEYS = ("rope_parameters", "rope_scaling")
_PLAIN_TYPES = (None, "default", "mrope")  # mrope sections the pairs; its frequencies are the plain ones


def _number(config: Mapping[str, Any], key: str) -> Any:
    value = config.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise TypeError(f"config[{key!r}] must be a number, got {type(value).__name__}")
    return value


def _layer_type_head_dim(config: Mapping[str, Any], layer_type: str) -> int | None:
    # The head dimension of layers of this type when it differs from head_dim (Gemma 4's 512-wide
    # full-attention heads beside 256-wide sliding ones), else None.
    per_layer, types = config.get("per_layer_config"), config.get("layer_types")
    if isinstance(per_layer, Mapping) and isinstance(types, (list, tuple)):
        # transformers ≥ 5.25: a sparse {layer index: overrides} map (keys are strings after a JSON round trip)
        indices = [i for i, t in enumerate(types) if t == layer_type]
        dims = {per_layer.get(str(i), per_layer.get(i, {})).get("head_dim") for i in indices}
        if dims - {None}:
            if len(dims) > 1:
                raise ValueError(
                    f"config['per_layer_config'] gives the {layer_type!r} layers different head dims "
                    f"{sorted(dims, key=str)}"
                )
            dim = dims.pop()
            check_positive_int(f"config['per_layer_config'][…]['head_dim'] of {layer_type!r} layers", dim)
            return int(dim)
    if layer_type == "full_attention" and config.get("global_head_dim") is not None:
        # Gemma 4's config.json: full-attention layers use global_head_dim (transformers' Gemma4TextConfig)
        check_positive_int("config['global_head_dim']", config["global_head_dim"])
        return int(config["global_head_dim"])
    return None


def _head_dim(config: Mapping[str, Any], layer_type: str | None = None) -> int:
    if layer_type is not None:
        dim = _layer_type_head_dim(config, layer_type)
        if dim is not None:
            return dim
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


def _partial_factor(config: Mapping[str, Any], scaling: Mapping[str, Any]) -> tuple[float, str]:
    # the partial rotary factor and the key it came from: the scaling dict's, the top level's, GPT-NeoX's rotary_pct
    for key, where in (
        ("partial_rotary_factor", scaling),
        ("partial_rotary_factor", config),
        ("rotary_pct", config),
    ):
        factor = _number(where, key)
        if factor is not None:
            break
    else:
        return 1.0, "partial_rotary_factor"
    if not 0 < factor <= 1:
        raise ValueError(f"config[{key!r}] must be in (0, 1], got {factor!r}")
    return float(factor), key


def _rotary_dim(config: Mapping[str, Any], scaling: Mapping[str, Any], head_dim: int) -> int:
    if config.get("rotary_dim") is not None:
        check_positive_int("config['rotary_dim']", config["rotary_dim"])
        dim, source = int(config["rotary_dim"]), "config['rotary_dim']"
    else:
        factor, _ = _partial_factor(config, scaling)
        dim, source = int(head_dim * factor), f"head_dim × {factor} = {head_dim * factor}"
    if dim > head_dim or dim % 2 or dim == 0:
        raise ValueError(f"rotary_dim ({source}) must be a positive even number ≤ head_dim = {head_dim}, got {dim}")
    return dim


def _scaling(config: Mapping[str, Any], layer_type: str | None) -> dict[str, Any]:
    # the RoPE parameters of this layer type: rope_parameters (transformers ≥ 4.56) or rope_scaling, flat or per type
    for key in _SCALING_KEYS:
        raw = config.get(key)
        if raw is None:
            continue
        if not isinstance(raw, Mapping):
            raise TypeError(f"config[{key!r}] must be a dictionary, got {type(raw).__name__}")
        # Per layer type: every dictionary value is one type's parameters (DeepSeek-V4 may keep a flat
        # leftover such as a top-level 'rope_type' beside them, which transformers ignores too).
        per_type = {name: value for name, value in raw.items() if isinstance(value, Mapping)}
        if not per_type:
            if layer_type is not None:
                raise ValueError(
                    f"layer_type={layer_type!r} was given, but config[{key!r}] is not per layer type; "
                    "pass layer_type=None"
                )
            return dict(raw)
        if layer_type is None:
            raise ValueError(
                f"config[{key!r}] holds one dictionary per layer type: pass layer_type, one of {sorted(per_type)}"
            )
        if layer_type not in per_type:
            raise ValueError(
                f"layer_type must be one of {sorted(per_type)} (the keys of config[{key!r}]), got {layer_type!r}"
            )
        return dict(per_type[layer_type])
    if layer_type is not None:
        raise ValueError(f"layer_type={layer_type!r} was given, but config has no per-layer-type rope_parameters")
    return {}


def rope_from_config(
    config: Mapping[str, Any],
    *,
    layer_type: str | None = None,
    seq_len: int | None = None,
    backend: Backend = "numpy",
) -> tuple[Array, float, int]:
    """``(inv_freq, attention_factor, rotary_dim)`` from a Hugging Face-style ``config.json`` dictionary.

    inv_freq has rotary_dim/2 float64 entries (scaled as the config says);
    attention_factor multiplies cos and sin (so scores by its square; YaRN's
    0.1·ln s + 1, or DeepSeek's ratio mscale(s, mscale)/mscale(s, mscale_all_dim));
    rotary_dim is how many leading features of each head are rotated (pass it
    to :func:`poslib.apply_rope`). ``seq_len`` is the current length, used by
    ``dynamic`` scaling only. Nested configurations (``text_config``) are read
    from their text part.

    ``layer_type`` (e.g. ``"full_attention"`` or ``"sliding_attention"`` for Gemma 4) picks one entry of a
    per-layer-type ``rope_parameters``, and that type's head dimension (``per_layer_config``, else
    ``global_head_dim`` for full attention). For Gemma 4's full-attention layers (``proportional``,
    partial_rotary_factor 0.25, θ = 10⁶, head dim 512) it returns 256 frequencies, 64 of them non-zero,
    and rotary_dim = 512, so that ``apply_rope(x, positions, inv_freq, layout="half",
    attention_factor=attention_factor, rotary_dim=rotary_dim)`` rotates exactly as transformers'
    ``Gemma4TextRotaryEmbedding`` and ``apply_rotary_pos_emb`` do (pairs (i, i + 256), the zero-frequency
    pairs passed through bit for bit). A per-layer-type config without ``layer_type``, or a
    ``layer_type`` that the config does not list, is a ``ValueError``.

    Sources of the rules: transformers' ``modeling_rope_utils.py``
    (``_compute_*_parameters``, ``rope_config_validation``; ``_compute_proportional_rope_parameters``
    and ``models/gemma4/configuration_gemma4.py`` as of 5.25.0); Su et al. 2021 (RoFormer) for the
    default base.
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping (a parsed config.json), got {type(config).__name__}")
    if isinstance(config.get("text_config"), Mapping):
        config = config["text_config"]
    if layer_type is not None and not isinstance(layer_type, str):
        raise ValueError(f"layer_type must be None or a layer type name (a string), got {layer_type!r}")
    scaling = _scaling(config, layer_type)
    candidates = (_number(scaling, "rope_theta"), _number(config, "rope_theta"), _number(config, "rotary_emb_base"))
    base = next((v for v in candidates if v is not None), 10000.0)
    check_positive("config['rope_theta']", base)
    head_dim = _head_dim(config, layer_type)
    rope_type = scaling.get("rope_type", scaling.get("type"))
    if rope_type == "su":  # Phi-3's first configs; Hugging Face's Phi3Config reads it as longrope
        rope_type = "longrope"
    if rope_type in WHOLE_HEAD_SCALINGS:
        # The proportional convention: the variant reads the partial factor itself and returns head_dim/2
        # frequencies (zeros for the pairs that do not turn); the whole head is "rotated".
        check_even("head_dim", head_dim)
        factor, _ = _partial_factor(config, scaling)
        scaling["rope_type"] = rope_type
        scaling["partial_rotary_factor"] = factor
        inv_freq, attention = rope_inv_freq(head_dim, float(base), scaling, seq_len=seq_len, backend=backend)
        return inv_freq, float(attention), head_dim
    rotary_dim = _rotary_dim(config, scaling, head_dim)
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


def rope_convention_gap(
    q: Array,
    k: Array,
    positions: Array,
    reading: tuple[Array, float, int],
    other: tuple[Array, float, int],
    *,
    layout: str = "half",
) -> float:
    """The largest |difference| between the scores q_m·k_n of two readings of one RoPE config, over all (m, n).

    ``reading`` and ``other`` are ``(inv_freq, attention_factor, rotary_dim)`` triples as
    :func:`rope_from_config` returns them; each rotates ``q`` and ``k`` (``(..., seq, head_dim)``) to
    ``positions`` with :func:`poslib.apply_rope` in ``layout``, and the scores are every query against every
    key, ``q_m · k_n`` unscaled. The answer is max |s − s'| over all of them (float64): 0 when the two
    readings rotate alike, and of the order of the scores themselves when they do not.

    This is the partial-rotary mix-up that ports of Gemma 4 made (NVIDIA-NeMo/Megatron-Bridge #4195 and
    #4916, apple/coreai-models #66: Gemma 4's frequencies, but paired inside the first rotary_dim
    features; pie-project/pie #602 the other way: a Qwen3.5 head read with Gemma 4's rule). For Gemma 4's
    full-attention head (512 wide, partial_rotary_factor 0.25, θ = 10⁶), reading its ``proportional``
    config with the rotated-dims rule turns pair 1 at 1e6^(−1/64) = 0.80584 rad per token instead of
    1e6^(−1/256) = 0.94746 (0.142 rad per token apart, half a turn by distance 23). For a token against
    itself (q = k, a unit-norm random vector from ``np.random.default_rng(0)``, score 1 at distance 0) at
    positions 0…1023 the scores move by up to 0.230 under the rotated-dims reading, and by up to 0.098
    with Gemma 4's own frequencies paired inside the first 128 features; the correct reading gives 0
    (tests/test_partial_rotary.py computes and prints these).
    """
    check_choice("layout", layout, LAYOUTS)
    xp = xp_of(q=q, k=k, positions=positions)
    scores = []
    for name, triple in (("reading", reading), ("other", other)):
        if not (isinstance(triple, tuple) and len(triple) == 3):
            raise ValueError(f"{name} must be an (inv_freq, attention_factor, rotary_dim) triple, got {triple!r}")
        inv_freq, factor, rotary_dim = triple
        rq = apply_rope(q, positions, inv_freq, layout=layout, attention_factor=factor, rotary_dim=rotary_dim)
        rk = apply_rope(k, positions, inv_freq, layout=layout, attention_factor=factor, rotary_dim=rotary_dim)
        scores.append(rq @ xp.swapaxes(rk, -1, -2))
    return float(abs(scores[0] - scores[1]).max())


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
