"""Planted bug of issue 35, item 4: notebook 11's verdicts compared across two scales.

The mistake a second-scale table invites: reading one run's claims for both columns, so that every verdict
"holds at both scales" whatever the second run says.
"""

from __future__ import annotations

from typing import Any

import poslib.lab.wording as wording

from . import bug, swap


@bug(
    "lab_second_scale_reads_one_run",
    "notebook 11's second-scale table measures the practitioner's claims in the first run for both columns",
    tests=(
        "tests/test_lab_extend.py::"
        "test_practitioner_claims_hold_in_the_committed_run_and_each_fails_when_its_numbers_change",
    ),
    notebooks=("notebooks/11_extending_a_trained_model.ipynb",),
    thread="issue 35 item 4 (a verdict that flips is reported as scale-dependent, not hidden)",
)
def _lab_second_scale_reads_one_run() -> None:
    original = wording.extension_scale_agreement

    def one_run(base: Any, other: Any, multiples: Any = (4, 16)) -> list[dict[str, str]]:
        return original(base, base, multiples)

    swap(wording.extension_scale_agreement, one_run)
