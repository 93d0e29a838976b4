"""Planted bugs behind notebook 06's repaired checks (issue 22): PI/YaRN at the wrong factor, the YaRN ramps swapped,
and a claim "over seeds" that draws one seed only.

XPOS's exponent sign (the factor ζ_i^((n−m)/B_ζ), growing with distance) is ``xpos_sides_swapped`` in
``rope.py``: flipping the exponent's sign and swapping the query and key sides are the same mistake.
"""

from __future__ import annotations

from typing import Any

import poslib.rope_scaling as scaling
import poslib.teaching.entropy as entropy

from . import bug, swap


@bug(
    "pi_yarn_factor_seven",
    "PI and YaRN built with factor s − 1 (7 where the target is 8): positions past 7L land outside the trained range",
    tests=("tests/test_rope_scaling.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="issue 22 item 12: notebook 06's old bound max_i (1 − 1/s)θ_i = 50.1° let factor 7 pass (44.8° new arc)",
)
def _pi_yarn_factor_seven() -> None:
    for name in ("linear", "yarn"):
        original = scaling.ROPE_SCALINGS[name]

        def wrong(head_dim: int, base: float, cfg: Any, seq_len: Any, backend: Any, _original: Any = original) -> Any:
            return _original(head_dim, base, {**cfg, "factor": cfg["factor"] - 1}, seq_len, backend)

        swap(original, wrong)


@bug(
    "yarn_ramps_swapped",
    "YaRN's ramps exchanged: the default gives the paper's ramp (linear in turns), ramp='paper' the code's",
    tests=("tests/test_rope_scaling.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="jquesnelle/yarn#60 (_yarn_linear_ramp_mask is linear in the pair index, the paper's γ(r) in the turns)",
)
def _yarn_ramps_swapped() -> None:
    original = scaling.yarn_ramp

    def wrong(*args: Any, ramp: str = "code", **kw: Any) -> Any:
        return original(*args, ramp={"code": "paper", "paper": "code"}.get(ramp, ramp), **kw)

    swap(original, wrong)


@bug(
    "entropy_seed_ignored",
    "attention_entropy_vs_length ignores its seed: '20 seeds' are one draw repeated, so a claim over seeds is one draw",
    tests=("tests/test_teaching_entropy.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="issue 22 item 13: claim (g) held on one draw and failed on 2 of 6 seeds",
)
def _entropy_seed_ignored() -> None:
    original = entropy.attention_entropy_vs_length

    def wrong(*args: Any, seed: int = 0, **kw: Any) -> Any:
        return original(*args, seed=0, **kw)

    swap(original, wrong)


def _yarn_rule_with(**forced: Any) -> None:
    # the `yarn` entry of ROPE_SCALINGS called with some keys forced; yarn_ramp itself is left untouched
    original = scaling.ROPE_SCALINGS["yarn"]

    def wrong(head_dim: int, base: float, cfg: Any, seq_len: Any, backend: Any) -> Any:
        return original(head_dim, base, {**cfg, **forced}, seq_len, backend)

    swap(original, wrong)


@bug(
    "yarn_rule_paper_ramp",
    "the `yarn` rule of rope_inv_freq builds θ' from the paper's ramp (yarn_ramp's default untouched): same kept and"
    " divided pairs, same attention factor, different frequencies inside the ramp",
    tests=("tests/test_rope_scaling.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="fix06 review of issue 22: notebook 06 checked P.yarn_ramp but never the ramp the frequencies use",
)
def _yarn_rule_paper_ramp() -> None:
    _yarn_rule_with(ramp="paper")


@bug(
    "yarn_rule_untruncated",
    "the `yarn` rule ignores the default truncate=True: the code's ramp runs between the fractional ends i(β_fast),"
    " i(β_slow) instead of ⌊i(β_fast)⌋, ⌈i(β_slow)⌉",
    tests=("tests/test_rope_scaling.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="Hugging Face's `truncate` key of _compute_yarn_parameters (default True, as jquesnelle/yarn)",
)
def _yarn_rule_untruncated() -> None:
    _yarn_rule_with(truncate=False)
