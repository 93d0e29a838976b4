"""Planted bugs of issue 43 (truth pass 5): the checks repaired in that round must catch each of these.

09's LongRoPE cache drift computed without the wrap to [0, π] (the share of angles above 0.1 rad rises from
92.0 % to 93.9 %, which the old one-sided bound "> 90 %" let through); a ``path_scores`` that halves PaTH's
strength η (12's norm check used to run the figure helper, not the library); and the lab's stick-breaking layer
with its logit scale halved, the smallest layer bug 12's replay of the committed run has to see (it moves the
first 20 losses by 4.6e-5 against a bound of 1e-5). 02's six-seed control check is held by
``offset_copy_control_stopped_early`` (truth34.py): stopped at 100 of 300 steps, every seed falls 0.005 to 0.011
below the position-blind guess, 0.007 on average, past the bound of 0.004.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import poslib.lab.schemes as schemes
import poslib.path_attn as path_attn
import poslib.rope_diagnostics as rope_diagnostics
from poslib.rope_scaling import rope_inv_freq

from . import bug, swap


@bug(
    "rope_cache_drift_unwrapped",
    "rope_cache_drift returns j·|θ_i(N) − θ_i(j + 1)| as it is, not wrapped to [0, π] (an angle past half a turn "
    "counts as a larger error, though the rotation is nearer)",
    tests=(
        "tests/test_rope_diagnostics.py::"
        "test_cache_drift_is_the_angle_between_cached_and_fresh_keys_wrapped_to_half_a_turn",
    ),
    notebooks=("notebooks/09_rope_in_production.ipynb",),
    thread="issue 43 item 5 (09's share above 0.1 rad: 92.0 % wrapped, 93.9 % without the wrap; bound 90 % to 93 %)",
)
def _rope_cache_drift_unwrapped() -> None:
    def unwrapped(head_dim: int, base: float, scaling: Any, seq_len: int, *, backend: Any = "numpy") -> Any:
        now, _ = rope_inv_freq(head_dim, base, scaling, seq_len=seq_len)
        rows = [j * (now - rope_inv_freq(head_dim, base, scaling, seq_len=j + 1)[0]) for j in range(seq_len)]
        return np.abs(np.stack(rows))

    swap(rope_diagnostics.rope_cache_drift, unwrapped)


@bug(
    "path_scores_beta_halved",
    "path_scores multiplies each factor's w wᵀ by η/2 instead of η (PaTH's strength halved: η = 2 no longer reflects)",
    tests=("tests/test_path_attn.py",),
    notebooks=("notebooks/12_position_from_the_data.ipynb", "notebooks/13_position_in_late_2026_models.ipynb"),
    thread="issue 43 item 6 (12's 'η = 2, unit normals' check ran poslib.viz.datadep.reflection_path, not path_scores)",
)
def _path_scores_beta_halved() -> None:
    original = path_attn.path_scores

    def halved(q: Any, k: Any, w: Any, beta: Any, **kw: Any) -> Any:
        return original(q, k, w, beta * 0.5, **kw)

    swap(original, halved)


@bug(
    "lab_stickbreaking_logit_scale_halved",
    "the lab's stick-breaking layer computes its logits with scale 1/(2√d) instead of 1/√d",
    tests=(
        "tests/test_lab.py::test_stickbreaking_layer_is_poslib_stickbreaking_attention_with_the_rest_to_a_learned_vector",
    ),
    notebooks=("notebooks/12_position_from_the_data.ipynb",),
    thread="issue 43 item 6 (12's replay comment: the smallest planted layer bug moves it by 4.6e-5, not 1.4e-4)",
)
def _lab_stickbreaking_logit_scale_halved() -> None:
    original = schemes.stickbreaking_weights

    def halved(q: Any, k: Any, scale: float) -> Any:
        return original(q, k, scale / 2)

    swap(original, halved)
