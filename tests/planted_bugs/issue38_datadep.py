"""Planted bugs of issue 38's lab readings: notebook 12's schemes paired with notebook 08's run.

Two mistakes the readings invite: pairing rows of two runs whose shared model differs (then "seed by seed"
compares different models), and a verdict from the mean paired difference alone (the unpaired reading the
paired rule replaced: a scheme lower on two seeds of three then "beats" the other).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import poslib.lab.seedstats as seedstats

from . import bug, swap


@bug(
    "lab_combine_mixes_models",
    "combine_runs pairs two runs without checking that the model they share is the same one",
    tests=("tests/test_lab_datadep.py::test_combine_runs_refuses_two_different_models_under_one_name",),
    notebooks=("notebooks/08_extrapolation_lab.ipynb",),
    thread="issue 38 (the lab's new schemes placed in 08's tables with the paired rule)",
)
def _lab_combine_mixes_models() -> None:
    original = seedstats.combine_runs

    def unchecked(base: Any, extra: Any, layout: Any = ()) -> dict[str, Any]:
        extra = copy.deepcopy(dict(extra))
        for scheme in extra["runs"]:
            if scheme in base["runs"]:
                extra["runs"][scheme] = base["runs"][scheme]  # what the check compares: made to agree
        return original(base, extra, layout)

    swap(seedstats.combine_runs, unchecked)


@bug(
    "lab_datadep_paired_by_mean",
    "the paired comparison counts every seed on the side of the mean paired difference, whatever each seed says",
    tests=("tests/test_lab_datadep.py::test_readings_are_the_files_numbers",),
    notebooks=(),
    unit_only="since issue 45's t-test the mutant changes only the printed seed counts, which no check of notebook 12 "
    "raises on (strict nbval sees the changed output); the unit test holds the counts to each seed's sign",
    thread="issue 38 (the paired rule: worse on no seed)",
)
def _lab_datadep_paired_by_mean() -> None:
    original = seedstats.paired

    def by_mean(results: Any, a: str, b: str, multiple: int = 8, metric: str = "ppl") -> Any:
        comparison = original(results, a, b, multiple, metric)
        if comparison is None:
            return None
        n, lower = comparison.n, comparison.mean < 0
        better_sign = lower if metric == "ppl" else not lower
        better, worse = (n, 0) if better_sign else (0, n)
        return replace(comparison, better=better, worse=worse)

    swap(seedstats.paired, by_mean)


@bug(
    "lab_fox_gate_from_key",
    "the lab's FoX layer counts the key's own gate: Λ_m − Λ_{n−1} instead of Λ_m − Λ_n",
    tests=("tests/test_lab.py::test_fox_layer_is_poslib_forgetting_attention_with_the_layers_own_gates",),
    notebooks=("notebooks/12_position_from_the_data.ipynb",),
    thread="issue 38 (notebook 12's replay of the committed lab run)",
)
def _lab_fox_gate_from_key() -> None:
    import poslib.lab.schemes as schemes
    from poslib.attn import mask_future

    def from_key(log_f: Any) -> Any:
        lam = log_f.double().cumsum(-1)
        return mask_future((lam[..., :, None] - (lam - log_f.double())[..., None, :]).float())

    swap(schemes.forgetting_bias, from_key)


@bug(
    "lab_stickbreaking_renormalised",
    "the lab's stick-breaking layer renormalises its weights to sum to 1 (a softmax's habit), leaving no rest",
    tests=(
        "tests/test_lab.py::test_stickbreaking_layer_is_poslib_stickbreaking_attention_with_the_rest_to_a_learned_vector",
    ),
    notebooks=("notebooks/12_position_from_the_data.ipynb",),
    thread="issue 38 (notebook 12's replay of the committed lab run)",
)
def _lab_stickbreaking_renormalised() -> None:
    import poslib.lab.schemes as schemes

    original = schemes.stickbreaking_weights

    def renormalised(q: Any, k: Any, scale: float) -> Any:
        A, rest = original(q, k, scale)
        total = A.sum(-1, keepdim=True)
        return A / total.clamp(min=1e-30), rest * 0.0

    swap(schemes.stickbreaking_weights, renormalised)
