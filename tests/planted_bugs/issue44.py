"""Planted bugs of issue 44's library parts: Gemma 4's proportional partial rotary and DeepSeek-V4's rotated values.

Each is a mistake a port of the reference code makes: the proportional exponent taken over the rotated dims (the
rotated-dims rule of Qwen3-Next / GLM-4.5 applied to Gemma 4), the attention output's turn back left out or turned
the wrong way, and the sink's column kept after the softmax. Notebook 13 shows each: its check of Gemma 4's
frequencies against 1e6^(−2i/512) and of the convention gap (§2), and its checks of the shift by Δ and of the
weights' columns (§3).
"""

from __future__ import annotations

from typing import Any

import poslib.rope_scaling as scaling
import poslib.vo_rope as vo_rope
from poslib.attn import softmax

from . import bug, swap

NOTEBOOK_13 = ("notebooks/13_position_in_late_2026_models.ipynb",)
VO_TESTS = (
    "tests/test_vo_rope.py",
    "tests/test_reference_issue44.py::test_vo_rope_attention_matches_deepseek_v4_attention",
)


@bug(
    "proportional_exponent_over_rotated_dims",
    "Gemma 4's proportional RoPE with the exponent over the rotated dims, base^(−2i/d_r), instead of the whole head",
    tests=(
        "tests/test_partial_rotary.py",
        "tests/test_reference_issue44.py::test_gemma4_full_and_sliding_layers_match_transformers",
    ),
    notebooks=NOTEBOOK_13,
    thread="pie-project/pie #602; transformers' _compute_proportional_rope_parameters divides by head_dim",
)
def _proportional_exponent_over_rotated_dims() -> None:
    original = scaling.ROPE_SCALINGS["proportional"]

    def wrong(head_dim: int, base: float, cfg: Any, seq_len: Any, backend: Any) -> Any:
        inv_freq, attention = original(head_dim, base, cfg, seq_len, backend)
        turning = int((inv_freq > 0).sum())
        # the first `turning` frequencies recomputed over the 2·turning rotated dims: base^(−2i/(2·turning))
        inv_freq[:turning] = scaling.rope_frequencies(2 * turning, base, backend=backend) / (cfg.get("factor") or 1.0)
        return inv_freq, attention

    swap(original, wrong)


@bug(
    "vo_rope_turn_back_omitted",
    "DeepSeek-V4's attention output left rotated: the turn back by the query's position (−i) is skipped",
    tests=VO_TESTS,
    notebooks=NOTEBOOK_13,
    thread="transformers DeepseekV4Attention: apply_rotary_pos_emb(attn_output, cos, -sin) after the attention",
)
def _vo_rope_turn_back_omitted() -> None:
    swap(vo_rope._turn_back, lambda out, cos, sin, rope_dim: out)


@bug(
    "vo_rope_turn_back_sign_flipped",
    "DeepSeek-V4's attention output turned by +i instead of −i (sin not negated): R_{i+j} instead of R_{j−i}",
    tests=VO_TESTS,
    notebooks=NOTEBOOK_13,
    thread="DeepSeek's inference code: apply_rotary_emb(o[..., -rd:], freqs_cis, True), the conjugate",
)
def _vo_rope_turn_back_sign_flipped() -> None:
    swap(vo_rope._turn_back, lambda out, cos, sin, rope_dim: vo_rope._rotate_trailing(out, cos, sin, rope_dim))


@bug(
    "vo_rope_sink_column_kept",
    "the sink's column kept after the softmax over [scores | sink]: the weights get one column more than the keys",
    tests=VO_TESTS,
    notebooks=NOTEBOOK_13,
    thread="gpt-oss / DeepSeek-V4 eager_attention_forward: `scores = probs[..., :-1]  # we drop the sink here`",
)
def _vo_rope_sink_column_kept() -> None:
    def kept(scores: Any, sinks: Any) -> Any:
        if sinks is None:
            return softmax(scores)
        xp = vo_rope.xp_of(scores=scores)
        sink = xp.broadcast_to(xp.asarray(sinks, dtype=scores.dtype).reshape(-1, 1, 1), (*scores.shape[:-1], 1))
        return softmax(xp.concatenate([scores, sink], -1))  # the sink's share stays as a last column

    swap(vo_rope._sink_softmax, kept)
