"""poslib: positional encodings for Transformers, exact, in NumPy and PyTorch.

One module per family; everything public is re-exported here::

    sinusoidal      Vaswani et al. 2017            learned        BERT / GPT-2 tables
    rope            Su et al. 2021 (RoFormer)      rope_scaling   PI, NTK, dynamic NTK, YaRN, Llama-3
    mrope           2-D axial RoPE, M-RoPE         rope_configs   config.json → RoPE; base lower bound
    xpos            Sun et al. 2022                alibi          Press et al. 2022
    t5              Raffel et al. 2020             deberta        He et al. 2021
    transformer_xl  Dai et al. 2019 (and XLNet)    kerple         Chi et al. 2022
    sandwich        Chi et al. 2023                logn           log-n attention scaling
    nope            no positions at all            attn           reference attention, masks, distances
    fire            Li et al. 2024 (FIRE)          cope           Golovneva et al. 2024 (CoPE)
    randomized      Ruoss et al. 2023              rope_diagnostics  unseen RoPE angles, KV-cache drift
    remap           ReRoPE, Leaky ReRoPE, Self-Extend: training-free distance remapping
    dca             An et al. 2024 (Dual Chunk)    forgetting     Lin et al. 2025 (FoX)
    stickbreaking   Tan et al. 2025                path_attn      Yang et al. 2025 (PaTH)
    vo_rope         DeepSeek-V4's rotated values   lie_rope       RoPE as exp(m·A); LieRE, ComRoPE
    mm_rope         M-RoPE, VideoRoPE, HoPE: which pairs each axis turns, video position ids

Teaching helpers (toy models, similarity, the pretrained table) live in :mod:`poslib.teaching`,
figures in :mod:`poslib.viz`, the training lab in :mod:`poslib.lab`; this layer imports none of them.

Conventions shared by every family:

* Bias builders take ``(<scheme parameters>, q_len, k_len=None, *, causal=False, backend=None,
  device=None)`` and return ``(n_heads, q_len, k_len)``.
* When q_len < k_len the queries are the *last* q_len positions (query i at k_len − q_len + i),
  as when decoding with a KV cache (:mod:`poslib.attn`).
* Score-term functions (``*_score_terms``) return dicts keyed "<query side>-<key side>".

Functions that take arrays return the same kind (NumPy in, NumPy out; torch in,
torch out, same device). Functions that build from sizes take
``backend="numpy" | "torch"`` and return float64.
"""

from .alibi import alibi_bias, alibi_receptive_field, alibi_slopes
from .attn import attention, attention_entropy, causal_mask, mask_future, relative_distance, softmax
from .cope import CoPE, cope_bias, cope_positions
from .dca import dual_chunk_attention, dual_chunk_relative_positions
from .deberta import (
    DebertaRelativeScores,
    deberta_delta,
    deberta_log_bucket,
    deberta_relative_position,
    deberta_score_terms,
    deberta_scores,
)
from .fire import FireBias, fire_bias, fire_inputs, fire_weights_from_bias
from .forgetting import forgetting_attention
from .kerple import KerpleBias, kerple_bias
from .learned import LearnedPositionalEmbedding, learned_lookup
from .lie_rope import (
    axial_rope_generators,
    commutator_norm,
    generator_rotation,
    lie_rope,
    relative_drift,
    rope_generator,
)
from .logn import logn_scale
from .mm_rope import MM_ROPE_SCHEMES, apply_mm_rope, mm_rope_frequencies, mm_rope_pair_axes, video_position_ids
from .mrope import apply_mrope, apply_rope_2d, mrope_axis_of_pair
from .nope import apply_nope
from .path_attn import path_attention, path_deltanet_qk
from .randomized import randomized_positions
from .remap import (
    RemappedPositions,
    remapped_distances,
    rerope_positions,
    rerope_relative_positions,
    rope_remapped_scores,
    self_extend_max_distance,
    self_extend_positions,
    self_extend_relative_positions,
)
from .rope import (
    apply_rope,
    rope_angles,
    rope_cos_sin,
    rope_decay_bound,
    rope_frequencies,
    rope_layout_permutation,
    rope_matrix,
    rope_rotate,
    rotate_half,
)
from .rope_configs import rope_base_lower_bound, rope_base_safe_bound, rope_convention_gap, rope_from_config
from .rope_diagnostics import rope_cache_drift, rope_unseen_angle
from .rope_scaling import (
    COMMON_KEYS,
    ROPE_SCALING_KEYS,
    ROPE_SCALINGS,
    WHOLE_HEAD_SCALINGS,
    longrope_attention_factor,
    register_rope_scaling,
    rope_inv_freq,
    yarn_attention_factor,
    yarn_ramp,
)
from .sandwich import sandwich_bias
from .sinusoidal import (
    SinusoidalEmbedding,
    sinusoidal_encode,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
    sinusoidal_table,
)
from .stickbreaking import stickbreaking_attention
from .t5 import T5RelativeBias, t5_bias, t5_relative_bucket, t5_relative_positions
from .transformer_xl import (
    TransformerXLRelativeScores,
    absolute_score_terms,
    transformer_xl_encodings,
    transformer_xl_offsets,
    transformer_xl_score_terms,
    transformer_xl_scores,
)
from .vo_rope import vo_rope_attention
from .xpos import apply_xpos, xpos_scale, xpos_zeta

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # poslib.set_language is poslib.language.set_language, loaded on first use: `import poslib` loads no language
    # machinery and has no side effect beyond defining names (PEP 562 module __getattr__)
    if name == "set_language":
        from .language import set_language

        return set_language
    raise AttributeError(f"module 'poslib' has no attribute {name!r}")


# The public surface, listed once: docs/api.md is generated from it (python scripts/api_reference.py).
__all__ = [
    "COMMON_KEYS",
    "MM_ROPE_SCHEMES",
    "ROPE_SCALINGS",
    "ROPE_SCALING_KEYS",
    "WHOLE_HEAD_SCALINGS",
    "CoPE",
    "DebertaRelativeScores",
    "FireBias",
    "KerpleBias",
    "LearnedPositionalEmbedding",
    "RemappedPositions",
    "SinusoidalEmbedding",
    "T5RelativeBias",
    "TransformerXLRelativeScores",
    "absolute_score_terms",
    "alibi_bias",
    "alibi_receptive_field",
    "alibi_slopes",
    "apply_mm_rope",
    "apply_mrope",
    "apply_nope",
    "apply_rope",
    "apply_rope_2d",
    "apply_xpos",
    "attention",
    "attention_entropy",
    "axial_rope_generators",
    "causal_mask",
    "commutator_norm",
    "cope_bias",
    "cope_positions",
    "deberta_delta",
    "deberta_log_bucket",
    "deberta_relative_position",
    "deberta_score_terms",
    "deberta_scores",
    "dual_chunk_attention",
    "dual_chunk_relative_positions",
    "fire_bias",
    "fire_inputs",
    "fire_weights_from_bias",
    "forgetting_attention",
    "generator_rotation",
    "kerple_bias",
    "learned_lookup",
    "lie_rope",
    "logn_scale",
    "longrope_attention_factor",
    "mask_future",
    "mm_rope_frequencies",
    "mm_rope_pair_axes",
    "mrope_axis_of_pair",
    "path_attention",
    "path_deltanet_qk",
    "randomized_positions",
    "register_rope_scaling",
    "relative_distance",
    "relative_drift",
    "remapped_distances",
    "rerope_positions",
    "rerope_relative_positions",
    "rope_angles",
    "rope_base_lower_bound",
    "rope_base_safe_bound",
    "rope_cache_drift",
    "rope_convention_gap",
    "rope_cos_sin",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_from_config",
    "rope_generator",
    "rope_inv_freq",
    "rope_layout_permutation",
    "rope_matrix",
    "rope_remapped_scores",
    "rope_rotate",
    "rope_unseen_angle",
    "rotate_half",
    "sandwich_bias",
    "self_extend_max_distance",
    "self_extend_positions",
    "self_extend_relative_positions",
    "set_language",
    "sinusoidal_encode",
    "sinusoidal_frequencies",
    "sinusoidal_shift_matrix",
    "sinusoidal_table",
    "softmax",
    "stickbreaking_attention",
    "t5_bias",
    "t5_relative_bucket",
    "t5_relative_positions",
    "transformer_xl_encodings",
    "transformer_xl_offsets",
    "transformer_xl_score_terms",
    "transformer_xl_scores",
    "video_position_ids",
    "vo_rope_attention",
    "xpos_scale",
    "xpos_zeta",
    "yarn_attention_factor",
    "yarn_ramp",
]
