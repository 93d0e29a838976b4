"""RoPE frequency scaling for longer contexts, one function per variant, registered by name.

The ``scaling`` dictionary follows Hugging Face's ``rope_scaling`` convention
(``transformers/modeling_rope_utils.py``): ``{"rope_type": …, "factor": …, …}``;
the legacy key ``"type"`` is accepted too (older configs use it). Every variant
returns ``(inv_freq, attention_factor)``; ``attention_factor`` multiplies cos
and sin (so scores by its square) and is 1 except for YaRN and LongRoPE.

Notation: d = head_dim, s = factor, L = original_max_position_embeddings,
θ_i = base^(−2i/d).

====================  ========================================================  =================================
rope_type             new frequencies                                           source
====================  ========================================================  =================================
``default``           θ_i                                                       Su et al. 2021
``linear`` (PI)       θ_i / s  (positions squeezed back into [0, L))            Chen et al. 2023, arXiv:2306.15595
``ntk``               base' = base · s^(d/(d−2))                                bloc97, 2023 ("NTK-aware" RoPE)
``dynamic``           ntk with s' = s·n/L − (s−1) for the current length n > L  emozilla, 2023; HF ``dynamic``
``yarn``              ramp between θ_i (fast pairs) and θ_i/s (slow pairs)      Peng et al. 2023, arXiv:2309.00071
``llama3``            θ_i for short wavelengths, θ_i/s for long, smooth between  Meta Llama 3.1 (2024)
``longrope``          θ_i / s_i, searched per-pair factors (short, long lists)  Ding et al. 2024, arXiv:2402.13753
====================  ========================================================  =================================

Against Hugging Face's RoPE init functions (tests/test_reference.py): the same formulas, but
Hugging Face evaluates θ_i in float32 (relative error ~10⁻⁷, i.e. 0.1 rad at position 10⁶) where
poslib stays in float64; the stored comparison is with Hugging Face's code run in float64. Its
``dynamic`` reads L from ``config.max_position_embeddings`` (poslib: the scaling key
``original_max_position_embeddings``); it has no static ``ntk``, which equals its ``dynamic`` at the
length n = L(2s − 1)/s. Hugging Face divides by d − 2 and fails for head_dim 2; poslib returns θ_0 = 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ._backend import Array, Backend, check_even, check_positive, namespace
from .rope import rope_frequencies

__all__ = [
    "COMMON_KEYS",
    "ROPE_SCALINGS",
    "ROPE_SCALING_KEYS",
    "WHOLE_HEAD_SCALINGS",
    "longrope_attention_factor",
    "register_rope_scaling",
    "rope_inv_freq",
    "yarn_attention_factor",
    "yarn_ramp",
]

ScalingFn = Callable[[int, float, Mapping[str, Any], "int | None", Backend], "tuple[Array, float]"]
ROPE_SCALINGS: dict[str, ScalingFn] = {}


# Keys a Hugging Face ``rope_parameters`` dict may carry whatever its type: ``rope_type``/``type`` pick
# the variant, ``rope_theta`` must agree with ``base``, ``partial_rotary_factor`` shortens the rotated
# part; ``mrope_section``/``mrope_interleaved`` (Qwen2-VL's split of the pairs over time, height and
# width) do not change inv_freq, so they are accepted and ignored.
COMMON_KEYS = frozenset(
    {"rope_type", "type", "rope_theta", "partial_rotary_factor", "mrope_section", "mrope_interleaved"}
)
ROPE_SCALING_KEYS: dict[str, frozenset[str]] = {}
# Variants that read partial_rotary_factor themselves and return head_dim/2 frequencies for the whole
# head (Gemma 4's proportional); every other variant is handed the rotated dims only.
WHOLE_HEAD_SCALINGS: set[str] = set()


def register_rope_scaling(
    name: str, keys: tuple[str, ...] = (), *, whole_head: bool = False
) -> Callable[[ScalingFn], ScalingFn]:
    """Decorator adding a variant to :data:`ROPE_SCALINGS` under ``name``; ``keys`` are the scaling keys it reads.

    :func:`rope_inv_freq` rejects a key that no variant reads (besides :data:`COMMON_KEYS`), so a
    misspelled key cannot be silently ignored. ``whole_head=True`` marks a variant that is given the
    whole head_dim and reads ``partial_rotary_factor`` itself (Gemma 4's ``proportional``); the others
    are given the rotated dims int(head_dim·p) (the rotated-dims convention).
    """

    def add(fn: ScalingFn) -> ScalingFn:
        ROPE_SCALINGS[name] = fn
        ROPE_SCALING_KEYS[name] = frozenset(keys)
        if whole_head:
            WHOLE_HEAD_SCALINGS.add(name)
        else:
            WHOLE_HEAD_SCALINGS.discard(name)
        return fn

    return add


def _get(cfg: Mapping[str, Any], key: str, default: Any = None, *, positive: bool = True) -> Any:
    """``cfg[key]`` (``default`` when absent or None), raising a ``ValueError`` naming the key when missing or bad.

    None means "the default", as in Hugging Face's code (``rope_parameters.get("beta_fast") or 32``).
    """
    value = cfg.get(key)
    if value is None:
        value = default
    if value is None:
        raise ValueError(f"rope_scaling of type {cfg.get('rope_type')!r} needs the key {key!r}")
    if positive:
        check_positive(f"rope_scaling[{key!r}]", value)
    return value


@register_rope_scaling("default")
def _default(
    head_dim: int, base: float, cfg: Mapping[str, Any], seq_len: int | None, backend: Backend
) -> tuple[Array, float]:
    """Plain RoPE: θ_i = base^(−2i/d)."""
    return rope_frequencies(head_dim, base, backend=backend), 1.0


@register_rope_scaling("linear", ("factor",))
def _linear(
    head_dim: int, base: float, cfg: Mapping[str, Any], seq_len: int | None, backend: Backend
) -> tuple[Array, float]:
    """Position interpolation (PI): θ_i / s, i.e. position m is read as m / s.

    Every position below s·L lands inside the trained range [0, L).
    """
    s = _get(cfg, "factor")
    return rope_frequencies(head_dim, base, backend=backend) / s, 1.0


def _ntk_base(base: float, factor: float, head_dim: int) -> float:
    # Choose base' so that the lowest frequency θ_{d/2−1} is divided by exactly s:
    # base'^(−(d−2)/d) = base^(−(d−2)/d) / s  ⇔  base' = base · s^(d/(d−2)).
    # With d = 2 the only pair has θ_0 = base^0 = 1 for every base: there is nothing to rescale, and
    # d/(d−2) would divide by zero (as it does in Hugging Face's dynamic code).
    if head_dim == 2:
        return base
    return base * factor ** (head_dim / (head_dim - 2))


@register_rope_scaling("ntk", ("factor",))
def _ntk(
    head_dim: int, base: float, cfg: Mapping[str, Any], seq_len: int | None, backend: Backend
) -> tuple[Array, float]:
    """Static NTK-aware scaling: base' = base · s^(d/(d−2)).

    The highest frequency (i = 0) is untouched (θ_0 = 1 for any base); the
    lowest is divided by s, like PI; frequencies in between are divided by less.
    """
    s = _get(cfg, "factor")
    return rope_frequencies(head_dim, _ntk_base(base, s, head_dim), backend=backend), 1.0


@register_rope_scaling("dynamic", ("factor", "original_max_position_embeddings"))
def _dynamic(
    head_dim: int, base: float, cfg: Mapping[str, Any], seq_len: int | None, backend: Backend
) -> tuple[Array, float]:
    """Dynamic NTK: the NTK base change with an effective factor that grows with the current length n.

    s' = s·n/L − (s − 1) for n > L (s' = 1 at n = L, s' = s at n = 2L… linear in n);
    for n ≤ L the frequencies are the plain ones. ``seq_len`` is n. The configured
    factor is not the target extension: with factor 1, s' = n/L and at n = s·L this is
    static NTK with factor s; with factor s it overshoots to s² − s + 1 there. With a KV
    cache, keys rotated at an earlier n used another base than new queries: the
    pitfall discussed in huggingface/transformers #25104. L is Hugging Face's
    ``config.max_position_embeddings`` (its dynamic code reads that, not a scaling key).
    """
    s = _get(cfg, "factor")
    original = _get(cfg, "original_max_position_embeddings")
    n = original if seq_len is None else max(int(seq_len), original)
    effective = s * n / original - (s - 1)
    return rope_frequencies(head_dim, _ntk_base(base, effective, head_dim), backend=backend), 1.0


def yarn_attention_factor(factor: float, mscale: float = 1.0) -> float:
    """YaRN's temperature term 0.1·mscale·ln s + 1 (1 when s ≤ 1)."""
    return 1.0 if factor <= 1 else 0.1 * mscale * math.log(factor) + 1.0


_YARN_RAMPS = ("code", "paper")


def yarn_ramp(
    head_dim: int,
    base: float,
    original_max_position_embeddings: int,
    beta_fast: float = 32.0,  # pairs turning more than beta_fast times over L keep θ_i
    beta_slow: float = 1.0,  # pairs turning fewer than beta_slow times are fully interpolated
    *,
    truncate: bool = True,
    ramp: str = "code",
    backend: Backend = "numpy",
) -> Array:
    """YaRN's per-pair weight γ_i ∈ [0, 1] of the *original* frequency (1 = untouched, 0 = fully interpolated).

    Pair i completes τ_i = L·θ_i/(2π) turns over the original context L. Pairs with more than
    β_fast turns keep θ_i; pairs with fewer than β_slow turns get θ_i/s. Between the two, the paper
    and the code that models run disagree, and ``ramp`` picks one:

    * ``"code"`` (default): linear in the **pair index** i, from ⌊i(β_fast)⌋ (γ = 1) to ⌈i(β_slow)⌉
      (γ = 0), where i(τ) = d·ln(L/(2πτ))/(2 ln base) is the (fractional) pair with τ turns. This is
      the reference implementation's ``_yarn_linear_ramp_mask`` (jquesnelle/yarn) and Hugging Face's
      ``_compute_yarn_parameters``, so it is what every YaRN checkpoint was fine-tuned and is served
      with; ``truncate=False`` drops the floor and ceil (Hugging Face's ``truncate`` key).
    * ``"paper"``: linear in the **number of turns**, γ = (τ_i − β_slow)/(β_fast − β_slow) clipped to
      [0, 1], as Peng et al. 2023 (arXiv:2309.00071, "NTK-by-parts") define γ(r) with r = L/λ.
      ``truncate`` does not apply. The two ramps agree on the kept and the fully divided pairs and
      differ inside the ramp (the question of jquesnelle/yarn issue #60, still open). One more
      difference: when even pair 0 turns fewer than β_fast times over L, the code clamps its ramp's
      start to pair 0 and keeps that pair, where the paper's ramp already lowers it.
    """
    if ramp not in _YARN_RAMPS:
        raise ValueError(f"ramp must be one of {_YARN_RAMPS}, got {ramp!r}")
    xp = namespace(backend)
    i = xp.arange(head_dim // 2, dtype=xp.float64)
    if ramp == "paper":
        if not beta_fast > beta_slow > 0:
            raise ValueError(f"the paper's ramp needs beta_fast > beta_slow > 0, got {beta_fast} and {beta_slow}")
        turns = original_max_position_embeddings * rope_frequencies(head_dim, base, backend=backend) / (2 * math.pi)
        return xp.clip((turns - beta_slow) / (beta_fast - beta_slow), 0, 1)

    def pair_index_with_turns(turns: float) -> float:
        return head_dim * math.log(original_max_position_embeddings / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = pair_index_with_turns(beta_fast), pair_index_with_turns(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)
    if low == high:
        high += 0.001  # avoid a division by zero, as the reference code does
    return 1 - xp.clip((i - low) / (high - low), 0, 1)


@register_rope_scaling(
    "yarn",
    (
        "factor",
        "original_max_position_embeddings",
        "attention_factor",
        "beta_fast",
        "beta_slow",
        "mscale",
        "mscale_all_dim",
        "truncate",
        "ramp",
    ),
)
def _yarn(
    head_dim: int, base: float, cfg: Mapping[str, Any], seq_len: int | None, backend: Backend
) -> tuple[Array, float]:
    """YaRN: θ_i' = γ_i·θ_i + (1 − γ_i)·θ_i/s with γ from :func:`yarn_ramp`, and attention factor 0.1·ln s + 1.

    Keys (Hugging Face defaults): beta_fast = 32, beta_slow = 1, attention_factor
    (overrides the formula), mscale / mscale_all_dim (DeepSeek's variant), truncate = True.
    ``ramp`` ("code" by default, or "paper") is poslib's own key, not Hugging Face's: it picks the
    ramp of :func:`yarn_ramp`.
    """
    s = _get(cfg, "factor")
    original = _get(cfg, "original_max_position_embeddings")
    gamma = yarn_ramp(
        head_dim,
        base,
        original,
        _get(cfg, "beta_fast", 32.0),
        _get(cfg, "beta_slow", 1.0),
        truncate=True if cfg.get("truncate") is None else bool(cfg["truncate"]),
        ramp="code" if cfg.get("ramp") is None else cfg["ramp"],
        backend=backend,
    )
    theta = rope_frequencies(head_dim, base, backend=backend)
    inv_freq = gamma * theta + (1 - gamma) * theta / s
    attention = cfg.get("attention_factor")
    if attention is None:
        mscale, mscale_all_dim = cfg.get("mscale"), cfg.get("mscale_all_dim")
        if mscale and mscale_all_dim:
            attention = yarn_attention_factor(s, mscale) / yarn_attention_factor(s, mscale_all_dim)
        else:
            attention = yarn_attention_factor(s)
    return inv_freq, float(attention)


@register_rope_scaling("llama3", ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"))
def _llama3(
    head_dim: int, base: float, cfg: Mapping[str, Any], seq_len: int | None, backend: Backend
) -> tuple[Array, float]:
    """Llama 3.1 scaling: by wavelength λ_i = 2π/θ_i against the original context L.

    λ_i < L/high_freq_factor: keep θ_i;  λ_i > L/low_freq_factor: θ_i/s;
    in between: (1 − t)·θ_i/s + t·θ_i with t = (L/λ_i − low_freq_factor)/(high_freq_factor − low_freq_factor).
    Meta's published settings: factor 8, low 1, high 4, L = 8192.
    """
    xp = namespace(backend)
    s = _get(cfg, "factor")
    low, high = _get(cfg, "low_freq_factor"), _get(cfg, "high_freq_factor")
    original = _get(cfg, "original_max_position_embeddings")
    if high <= low:
        raise ValueError(
            f"rope_scaling['high_freq_factor'] ({high}) must exceed rope_scaling['low_freq_factor'] ({low})"
        )
    theta = rope_frequencies(head_dim, base, backend=backend)
    wavelength = 2 * math.pi / theta
    t = xp.clip((original / wavelength - low) / (high - low), 0, 1)  # 0 for long waves, 1 for short ones
    return (1 - t) * theta / s + t * theta, 1.0


def _factor_list(cfg: Mapping[str, Any], key: str, n_pairs: int) -> list[float]:
    """``cfg[key]`` as n_pairs positive per-pair factors, with an error naming the key otherwise."""
    values = cfg.get(key)
    if values is None:
        raise ValueError(f"rope_scaling of type 'longrope' needs the key {key!r} (a list of {n_pairs} factors)")
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"rope_scaling[{key!r}] must be a list of {n_pairs} factors, got {type(values).__name__}")
    if len(values) != n_pairs:
        raise ValueError(f"rope_scaling[{key!r}] must hold one factor per rotated pair ({n_pairs}), got {len(values)}")
    out = []
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError(f"rope_scaling[{key!r}][{index}] must be a positive number, got {value!r}")
        out.append(float(value))
    return out


def longrope_attention_factor(factor: float, original_max_position_embeddings: int) -> float:
    """LongRoPE's default attention factor √(1 + ln s / ln L) (1 when s ≤ 1), as Phi-3 and Hugging Face use it."""
    if factor <= 1.0:
        return 1.0
    return math.sqrt(1.0 + math.log(factor) / math.log(original_max_position_embeddings))


@register_rope_scaling(
    "longrope", ("short_factor", "long_factor", "original_max_position_embeddings", "factor", "attention_factor")
)
def _longrope(
    head_dim: int, base: float, cfg: Mapping[str, Any], seq_len: int | None, backend: Backend
) -> tuple[Array, float]:
    """LongRoPE (Ding et al. 2024, arXiv:2402.13753; Phi-3/3.5, Phi-4-mini): θ_i / s_i, one searched factor per pair.

    Two lists of per-pair factors s_i (the paper's λ_i): ``short_factor`` for sequences up to the original length L,
    ``long_factor`` beyond it (``seq_len`` > L picks the long ones, as Hugging Face's
    ``_compute_longrope_parameters`` and its ``longrope_frequency_update`` do). The attention factor is
    ``attention_factor`` when given, else √(1 + ln s / ln L) with s = ``factor`` (1 when s ≤ 1); it applies
    at every length, short sequences included. Phi-3's configs carry no ``factor``: there s is
    max_position_embeddings / original_max_position_embeddings, which :func:`poslib.rope_from_config`
    fills in. Cos/sin cached before the switch at L were built with the short factors: a KV cache that
    crosses L holds keys rotated with other frequencies than the new queries.
    """
    original = _get(cfg, "original_max_position_embeddings")
    n_pairs = head_dim // 2
    short, long = _factor_list(cfg, "short_factor", n_pairs), _factor_list(cfg, "long_factor", n_pairs)
    attention = cfg.get("attention_factor")
    if attention is None:
        factor = cfg.get("factor")
        if factor is None:
            raise ValueError(
                "rope_scaling of type 'longrope' needs the key 'factor' (or 'attention_factor') to set the "
                "attention factor; Phi-3's factor is max_position_embeddings / original_max_position_embeddings"
            )
        check_positive("rope_scaling['factor']", factor)
        attention = longrope_attention_factor(factor, original)
    else:
        check_positive("rope_scaling['attention_factor']", attention)
    lam = long if seq_len is not None and seq_len > original else short
    xp = namespace(backend)
    ext = xp.asarray(lam, dtype=xp.float64)
    return rope_frequencies(head_dim, base, backend=backend) / ext, float(attention)


@register_rope_scaling("proportional", ("factor",), whole_head=True)
def _proportional(
    head_dim: int, base: float, cfg: Mapping[str, Any], seq_len: int | None, backend: Backend
) -> tuple[Array, float]:
    """Gemma 4's proportional RoPE: θ_i = base^(−2i/d)/s for i < ⌊p·d/2⌋, θ_i = 0 for the other pairs up to d/2.

    As transformers' ``modeling_rope_utils._compute_proportional_rope_parameters`` (5.25.0) and vLLM's
    ``gemma4_rope.Gemma4RotaryEmbedding`` compute it: the exponent runs over the *whole* head_dim d, not
    over the rotated dims; ⌊p·d/2⌋ is ``int(partial_rotary_factor * head_dim // 2)`` pairs that turn, and
    the remaining d/2 − ⌊p·d/2⌋ pairs get frequency 0 (cos 1, sin 0: passed through). The result has d/2
    entries and is applied to the whole head in the half layout, so pair i is features (i, i + d/2): with
    Gemma 4's d = 512, p = 0.25 the turning features are 0…63 and 256…319, not 0…127. s = ``factor``
    (default 1) divides every frequency, as the transformers function does (its config validation, oddly, warns
    that ``factor`` is an unrecognised key for this type). The attention factor is 1.
    """
    partial = cfg.get("partial_rotary_factor")
    partial = 1.0 if partial is None else partial
    n_turning = int(partial * head_dim // 2)  # transformers: int(rope_proportion * head_dim // 2)
    if n_turning < 1:
        raise ValueError(
            f"rope_scaling['partial_rotary_factor'] = {partial} leaves no rotated pair of head_dim = {head_dim}"
        )
    s = _get(cfg, "factor", 1.0)
    xp = namespace(backend)
    # the exponent 2i/d over the whole head: the first n_turning of head_dim's own frequencies
    turning = rope_frequencies(head_dim, base, backend=backend)[:n_turning]
    still = xp.zeros(head_dim // 2 - n_turning, dtype=xp.float64)
    return xp.concatenate([turning, still]) / s, 1.0


def rope_inv_freq(
    head_dim: int,
    base: float = 10000.0,
    scaling: Mapping[str, Any] | None = None,
    *,
    seq_len: int | None = None,
    backend: Backend = "numpy",
) -> tuple[Array, float]:
    """``(inv_freq, attention_factor)`` for RoPE, optionally scaled (float64, length head_dim/2).

    ``scaling=None`` is plain RoPE. Otherwise ``scaling["rope_type"]`` (or the
    legacy ``"type"``) picks an entry of :data:`ROPE_SCALINGS`; ``seq_len`` is the
    current sequence length, used by ``"dynamic"`` only.

    Keys follow Hugging Face's ``rope_parameters``: a key that no registered variant reads and that
    is not one of :data:`COMMON_KEYS` raises ``ValueError`` naming it (Hugging Face only warns); a key
    another variant reads is ignored, and a value of None means the key's default.
    ``rope_theta``, when given, must equal ``base``. ``partial_rotary_factor`` p rotates only the first
    int(head_dim·p) dims: inv_freq then has int(head_dim·p)/2 entries (apply RoPE to ``x[..., :rotary_dim]``),
    except for the whole-head variants (``proportional``), which return head_dim/2 entries, zeros included.
    """
    check_even("head_dim", head_dim)
    check_positive("base", base)
    namespace(backend)  # validates the name
    cfg = dict(scaling or {"rope_type": "default"})
    if cfg.get("rope_type") is None and cfg.get("type") is not None:
        cfg["rope_type"] = cfg["type"]
    rope_type = cfg.get("rope_type")
    if rope_type is None:
        raise ValueError(f"scaling needs a 'rope_type' key (one of {sorted(ROPE_SCALINGS)})")
    if rope_type not in ROPE_SCALINGS:
        raise ValueError(f"unknown rope_type {rope_type!r} in scaling; known: {sorted(ROPE_SCALINGS)}")
    # Known: what any registered variant reads, plus the common keys. One dict shared by several
    # variants (as notebook 00 and the lab build them) keeps working; a misspelling cannot pass.
    known = COMMON_KEYS.union(*ROPE_SCALING_KEYS.values())
    unknown = sorted(set(cfg) - known)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} in scaling; known keys: {sorted(known)}")
    theta = cfg.get("rope_theta")
    if theta is not None and theta != base:
        raise ValueError(f"scaling['rope_theta'] ({theta}) disagrees with base ({base}); pass base={theta}")
    if seq_len is not None and (isinstance(seq_len, bool) or int(seq_len) != seq_len or seq_len <= 0):
        raise ValueError(f"seq_len must be a positive integer, got {seq_len!r}")
    rotary_dim = head_dim
    partial = cfg.get("partial_rotary_factor")
    if partial is not None:
        if isinstance(partial, bool) or not isinstance(partial, (int, float)) or not 0 < partial <= 1:
            raise ValueError(f"scaling['partial_rotary_factor'] must be in (0, 1], got {partial!r}")
    if partial is not None and rope_type not in WHOLE_HEAD_SCALINGS:
        # Hugging Face: dim = int(head_dim * partial_rotary_factor); only those dims are rotated
        rotary_dim = int(head_dim * partial)
        if rotary_dim < 2 or rotary_dim % 2:
            raise ValueError(
                f"scaling['partial_rotary_factor'] = {partial} leaves int({head_dim}·{partial}) = {rotary_dim} "
                "rotated dims; it must be a positive even number"
            )
    return ROPE_SCALINGS[rope_type](rotary_dim, base, cfg, seq_len, backend)
