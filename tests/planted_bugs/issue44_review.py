"""Planted bugs from the independent review of notebook 13 (issue 44 review, items 3 and 4).

Each passed notebook 13's earlier checks: DeepSeek-V4's rotation left out, laid out in halves instead of
interleaved pairs, or put on the leading slice instead of the trailing one (cell 11's shift check cannot see
them: the output is still shift-invariant); the sink ignored (rows summing to 1, caught before by one ulp);
VideoRoPE's alternation starting with w instead of h; and the frame centre taken at n // 2 instead of
⌊(n − 1)/2⌋ (the same on an odd grid). Notebook 13 now checks the output against Σⱼ aᵢⱼ R_(j−i) vⱼ built by
hand, the weights against a hand-built softmax with the sink, the sink's share with a margin, VideoRoPE's
alternation, and an even grid against VideoRoPE's own code's output.
"""

from __future__ import annotations

import inspect
from typing import Any

import poslib.mm_rope as mm_rope
import poslib.vo_rope as vo_rope
from poslib.attn import softmax

from . import bug, swap

NOTEBOOK_13 = ("notebooks/13_position_in_late_2026_models.ipynb",)
VO_TESTS = (
    "tests/test_vo_rope.py",
    "tests/test_reference_issue44.py::test_vo_rope_attention_matches_deepseek_v4_attention",
)
THREAD = "issue 44 review (independent reader of notebook 13), item {}"


@bug(
    "vo_rope_rotation_left_out",
    "vo_rope_attention turns nothing: queries, keys, values and output all unrotated (still shift-invariant)",
    tests=VO_TESTS,
    notebooks=NOTEBOOK_13,
    thread=THREAD.format(3),
)
def _vo_rope_rotation_left_out() -> None:
    swap(vo_rope._rotate_trailing, lambda x, cos, sin, rope_dim: x)


@bug(
    "vo_rope_half_layout",
    "vo_rope_attention pairs the trailing slice in halves (i, i + rope_dim/2) instead of interleaved (2i, 2i + 1)",
    tests=VO_TESTS,
    notebooks=NOTEBOOK_13,
    thread=THREAD.format(3),
)
def _vo_rope_half_layout() -> None:
    def half(x: Any, cos: Any, sin: Any, rope_dim: int) -> Any:
        xp = vo_rope.xp_of(x=x)
        cut = x.shape[-1] - rope_dim
        return xp.concatenate([x[..., :cut], vo_rope._rotate_pairs(x[..., cut:], cos, sin, "half")], axis=-1)

    swap(vo_rope._rotate_trailing, half)


@bug(
    "vo_rope_leading_slice",
    "vo_rope_attention rotates the leading rope_dim features instead of the trailing ones",
    tests=VO_TESTS,
    notebooks=NOTEBOOK_13,
    thread=THREAD.format(3),
)
def _vo_rope_leading_slice() -> None:
    def leading(x: Any, cos: Any, sin: Any, rope_dim: int) -> Any:
        xp = vo_rope.xp_of(x=x)
        return xp.concatenate(
            [vo_rope._rotate_pairs(x[..., :rope_dim], cos, sin, "interleaved"), x[..., rope_dim:]], -1
        )

    swap(vo_rope._rotate_trailing, leading)


@bug(
    "vo_rope_sink_ignored",
    "vo_rope_attention ignores the sink logits: a plain softmax, every row of weights sums to 1",
    tests=VO_TESTS,
    notebooks=NOTEBOOK_13,
    thread=THREAD.format(3),
)
def _vo_rope_sink_ignored() -> None:
    swap(vo_rope._sink_softmax, lambda scores, sinks: softmax(scores))


@bug(
    "videorope_w_before_h",
    "mm_rope_pair_axes alternates VideoRoPE's (and HoPE's) spatial pairs w, h, … instead of h, w, …",
    tests=("tests/test_mm_rope.py",),
    notebooks=NOTEBOOK_13,
    thread=THREAD.format(4) + "; VideoRoPE's loop: row = 1 if j % 2 == 0 else 2",
)
def _videorope_w_before_h() -> None:
    original = mm_rope.mm_rope_pair_axes

    def w_first(mrope_section: Any, scheme: str) -> Any:
        axes = original(mrope_section, scheme).copy()
        if scheme in ("videorope", "hope"):
            spatial = axes != 0
            axes[spatial] = 3 - axes[spatial]
        return axes

    swap(original, w_first)


@bug(
    "videorope_centre_n_half",
    "video_position_ids' diagonal layout centres each frame at n // 2 instead of ⌊(n − 1)/2⌋ (differs on even grids)",
    tests=("tests/test_mm_rope.py",),
    notebooks=NOTEBOOK_13,
    thread=THREAD.format(4) + "; VideoRoPE get_t_scale_rope_index: (llm_grid_h - 1) // 2",
)
def _videorope_centre_n_half() -> None:
    original = mm_rope.video_position_ids
    source = inspect.getsource(original)
    wrong = source.replace("t + y - (n_h - 1) // 2, t + x - (n_w - 1) // 2", "t + y - n_h // 2, t + x - n_w // 2")
    if wrong == source:
        raise RuntimeError("planting failed: the centring expression was not found in video_position_ids")
    space = dict(vars(mm_rope))
    exec(compile(wrong, mm_rope.__file__, "exec"), space)  # the library's own function with the one slip
    swap(original, space["video_position_ids"])


@bug(
    "drope_recalibrates_without_passkey_rows",
    "DroPE recalibrates on text alone in a run pretrained with passkey rows (its first version): not pretraining's mix",
    tests=("tests/test_lab_drope.py::test_recalibration_trains_on_pretrainings_mix_with_its_passkey_rows",),
    notebooks=(),
    unit_only="no notebook trains DroPE: notebook 13 reads its committed results file",
    thread="issue 44 item 3, found while reading results/lab_drope.json (passkey 0 % even at L_train)",
)
def _drope_recalibrates_without_passkey_rows() -> None:
    import poslib.lab.extend as extend

    original = extend._continue_training

    def text_only(model: Any, cfg: Any, ext: Any, corpus: Any, **kw: Any) -> Any:
        if kw["stream"] == extend.DROPE_STREAM:
            cfg = cfg.replace(passkey=False)
        return original(model, cfg, ext, corpus, **kw)

    swap(extend._continue_training, text_only)
