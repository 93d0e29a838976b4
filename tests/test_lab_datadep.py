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


def _p(a: list[float], b: list[float]) -> float:
    """The two-sided paired t-test's p on the per-seed log ratios, written out again."""
    from poslib.lab.stats import two_sided_p

    logs = [math.log(x / y) for x, y in zip(a, b, strict=True)]
    n, mean = len(logs), sum(logs) / len(logs)
    sd = math.sqrt(sum((d - mean) ** 2 for d in logs) / (n - 1))
    return (0.0 if mean else 1.0) if sd == 0 else two_sided_p(mean / (sd / math.sqrt(n)), n - 1)


def _holm(ps: dict) -> dict:
    """Holm's step-down adjustment, written out again: the i-th smallest p times (m − i), never below the one before."""
    out, running = {}, 0.0
    for i, (key, p) in enumerate(sorted(ps.items(), key=lambda kv: kv[1])):
        running = max(running, min(1.0, (len(ps) - i) * p))
        out[key] = running
    return out


def _verdict(a: list[float], b: list[float], p: float) -> str:
    """The paired rule at an adjusted p: α = 0.05 and the geometric-mean ratio beyond ×1.03; "neither" otherwise."""
    mean = sum(math.log(x / y) for x, y in zip(a, b, strict=True)) / len(a)
    if p <= 0.05 and abs(mean) >= math.log(1.03):
        return "a" if mean < 0 else "b"
    return "neither"


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


def test_combine_runs_pairs_another_head_layout_only_when_asked_and_says_so():
    other = copy.deepcopy(DATADEP)
    other["config"]["model"]["n_heads"] = FULL["config"]["model"]["n_heads"] * 2  # same data, another head split
    with pytest.raises(ValueError, match="n_heads"):
        report.combine_runs(FULL, other)
    both = report.combine_runs(FULL, other, layout=("n_heads",))
    added = [s for s in other["config"]["schemes"] if s not in FULL["config"]["schemes"]]
    assert both["layouts"] == {s: {"n_heads": other["config"]["model"]["n_heads"]} for s in added}
    assert "layouts" not in report.combine_runs(FULL, DATADEP, layout=("n_heads",))  # nothing differed
    for bad in (("d_model",), "n_heads"):  # only the head split may differ, named as a sequence
        with pytest.raises(ValueError, match="layout must name fields among"):
            report.combine_runs(FULL, other, layout=bad)
    other["config"]["model"]["d_model"] = 2 * FULL["config"]["model"]["d_model"]
    with pytest.raises(ValueError, match="d_model"):
        report.combine_runs(FULL, other, layout=("n_heads",))


def test_readings_are_the_files_numbers():
    r = report.datadep_readings(FULL, DATADEP)
    for scheme in ("fox", "fox+rope", "stickbreaking"):
        want = [b / a for a, b in zip(_ppl(DATADEP, scheme, 64), _ppl(DATADEP, scheme, 1024), strict=True)]
        assert r["falls"][scheme] == pytest.approx(want, rel=1e-12)
    # notebook 12's family: each data-dependent scheme against every scheme of 08 at 1×, 4×, 16×, the three among
    # themselves at 16×, the hybrid against rope at 1×, 4×, 16×; Holm over all of them
    stated = {
        (s, o, k) for s in ("fox", "fox+rope", "stickbreaking") for o in FULL["config"]["schemes"] for k in (1, 4, 16)
    }
    stated |= {("fox", "fox+rope", 16), ("fox", "stickbreaking", 16), ("fox+rope", "stickbreaking", 16)}
    stated |= {("rope_nope_hybrid", "rope", k) for k in (1, 4, 16)}
    values = {
        s: {k: _ppl(DATADEP, s, 64 * k) if s in DATADEP["ppl"] else _ppl(FULL, s, 64 * k) for k in (1, 4, 16)}
        for s in {x for t in stated for x in t[:2]}
    }
    defined = {t for t in stated if None not in values[t[0]][t[2]] and None not in values[t[1]][t[2]]}
    holm = _holm({t: _p(values[t[0]][t[2]], values[t[1]][t[2]]) for t in defined})
    assert r["hybrid"][1].family == len(defined) == 162
    for scheme in ("fox", "fox+rope", "stickbreaking"):
        for k in (1, 4, 16):
            groups = r["against_base"][scheme][k]
            for other in FULL["config"]["schemes"]:
                mine, theirs = values[scheme][k], values[other][k]
                if None in theirs:
                    assert other in groups["not defined"]
                    continue
                verdict = _verdict(mine, theirs, holm[scheme, other, k])
                word = {"a": "beats", "neither": "neither", "b": "loses to"}[verdict]
                assert other in groups[word], (scheme, k, other, word)
    want_rope = [b / a for a, b in zip(_ppl(FULL, "rope", 64), _ppl(FULL, "rope", 1024), strict=True)]
    assert r["rope_growth"] == pytest.approx(want_rope, rel=1e-12)
    for scheme in DATADEP["config"]["schemes"]:
        rows = [DATADEP["runs"][scheme][seed]["passkey"]["64"] for seed in SEEDS]
        assert r["passkey"][scheme] == pytest.approx([sum(row.values()) / len(row) for row in rows])
    ends = [DATADEP["training"]["fox"][seed]["passkey_loss_curve"][-1] for seed in SEEDS]
    assert r["answer_loss"]["fox"] == ends
    for k in (1, 4, 16):
        # the evidence's seed counts are the seeds' own signs, not the mean's (notebook 12 prints "lower on k of n")
        hybrid, rope = values["rope_nope_hybrid"][k], values["rope"][k]
        assert (r["hybrid"][k].better, r["hybrid"][k].worse) == (
            sum(h < o for h, o in zip(hybrid, rope, strict=True)),
            sum(h > o for h, o in zip(hybrid, rope, strict=True)),
        ), k
        got = r["hybrid"][k].verdict
        want = _verdict(values["rope_nope_hybrid"][k], values["rope"][k], holm["rope_nope_hybrid", "rope", k])
        assert (got if got.decided else "neither") == want
