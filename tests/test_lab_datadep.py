"""Notebook 12's lab readings (poslib.lab.report.combine_runs, datadep_readings), against the committed files
read here with the paired rule written out from its definition (docs/lab.md), never through poslib's."""

from __future__ import annotations

import copy
import json
import math

import pytest

from poslib import lab
from poslib.lab import report

FULL = json.loads((lab.RESULTS_DIR / "lab_full.json").read_text())
DATADEP = json.loads((lab.RESULTS_DIR / "lab_datadep.json").read_text())
SEEDS = ("0", "1", "2")


def _ppl(results: dict, scheme: str, length: int) -> list[float]:
    return [results["runs"][scheme][seed]["ppl"][str(length)] for seed in SEEDS]


def _verdict(a: list[float], b: list[float]) -> str:
    """The paired rule: a beats b when lower on no seed worse and the geometric-mean ratio passes ×1.03."""
    logs = [math.log(x / y) for x, y in zip(a, b, strict=True)]
    mean = sum(logs) / len(logs)
    if abs(mean) >= math.log(1.03):
        if all(d <= 0 for d in logs) and any(d < 0 for d in logs):
            return "a"
        if all(d >= 0 for d in logs) and any(d > 0 for d in logs):
            return "b"
    return "tie"


def test_combine_runs_adds_the_other_schemes_and_keeps_the_shared_ones():
    both = report.combine_runs(FULL, DATADEP)
    added = ["fox", "fox+rope", "stickbreaking", "rope_nope_hybrid", "rope+dca"]
    assert both["config"]["schemes"] == FULL["config"]["schemes"] + added
    assert both["runs"]["fox"] == DATADEP["runs"]["fox"] and both["runs"]["rope"] == FULL["runs"]["rope"]
    assert both["passkey"]["rope+dca"] == DATADEP["passkey"]["rope+dca"]


def test_combine_runs_refuses_two_different_models_under_one_name():
    other = copy.deepcopy(DATADEP)
    other["runs"]["rope"]["1"]["ppl"]["256"] *= 1.0001  # a retrained rope that is not the same model
    with pytest.raises(ValueError, match="not the same trained models"):
        report.combine_runs(FULL, other)


def test_combine_runs_refuses_another_configuration():
    other = copy.deepcopy(DATADEP)
    other["config"]["train"]["steps"] = 1000
    with pytest.raises(ValueError, match="different configurations"):
        report.combine_runs(FULL, other)


def test_readings_are_the_files_numbers():
    r = report.datadep_readings(FULL, DATADEP)
    for scheme in ("fox", "fox+rope", "stickbreaking"):
        want = [b / a for a, b in zip(_ppl(DATADEP, scheme, 64), _ppl(DATADEP, scheme, 1024), strict=True)]
        assert r["falls"][scheme] == pytest.approx(want, rel=1e-12)
        for k in (1, 4, 16):
            groups = r["against_base"][scheme][k]
            for other in FULL["config"]["schemes"]:
                mine, theirs = _ppl(DATADEP, scheme, 64 * k), _ppl(FULL, other, 64 * k)
                if None in theirs:
                    assert other in groups["not defined"]
                    continue
                word = {"a": "beats", "tie": "ties", "b": "loses to"}[_verdict(mine, theirs)]
                assert other in groups[word], (scheme, k, other, word)
    want_rope = [b / a for a, b in zip(_ppl(FULL, "rope", 64), _ppl(FULL, "rope", 1024), strict=True)]
    assert r["rope_growth"] == pytest.approx(want_rope, rel=1e-12)
    for scheme in DATADEP["config"]["schemes"]:
        rows = [DATADEP["runs"][scheme][seed]["passkey"]["64"] for seed in SEEDS]
        assert r["passkey"][scheme] == pytest.approx([sum(row.values()) / len(row) for row in rows])
    ends = [DATADEP["training"]["fox"][seed]["passkey_loss_curve"][-1] for seed in SEEDS]
    assert r["answer_loss"]["fox"] == ends
    for k in (1, 4, 16):
        got = r["hybrid"][k].verdict
        assert got == _verdict(_ppl(DATADEP, "rope_nope_hybrid", 64 * k), _ppl(DATADEP, "rope", 64 * k))
