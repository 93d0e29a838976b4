"""Every exercise checker passes its own reference solution, says "not answered yet" for None, and names
the mistake in each typical wrong answer its exercise lists (at least two per exercise); every notebook
poses at least three exercises in cells tagged ``exercise``, written from poslib.exercises."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from poslib import exercises

ROOT = pathlib.Path(__file__).resolve().parent.parent
ALL = [(nb, ex) for nb in exercises.NOTEBOOKS for ex in exercises.exercises(nb)]
IDS = [f"nb{nb}-{ex.key}" for nb, ex in ALL]


def run_answer(ex: exercises.Exercise, code: str) -> object:
    """Run the exercise's setup and then ``code`` (as the notebook cell would) and return ``answer``."""
    nb = next(n for n in exercises.NOTEBOOKS if ex in exercises.exercises(n))
    namespace: dict[str, object] = {"np": np, f"nb{nb}": exercises.module(nb)}
    exec(ex.setup, namespace)
    exec(code, namespace)
    return namespace["answer"]


@pytest.mark.parametrize(("nb", "ex"), ALL, ids=IDS)
def test_reference_solution_passes(nb: str, ex: exercises.Exercise) -> None:
    feedback = ex.check(run_answer(ex, ex.solution))
    assert feedback.ok is True, feedback


@pytest.mark.parametrize(("nb", "ex"), ALL, ids=IDS)
def test_unanswered_is_not_an_error(nb: str, ex: exercises.Exercise) -> None:
    assert ex.stub.startswith("answer = None")
    feedback = ex.check(run_answer(ex, ex.stub))
    assert feedback.ok is None and repr(feedback).startswith("not answered yet"), feedback


@pytest.mark.parametrize(("nb", "ex"), ALL, ids=IDS)
def test_typical_mistakes_are_named(nb: str, ex: exercises.Exercise) -> None:
    assert len(ex.mistakes) >= 2, "each exercise lists at least two typical wrong answers"
    for mistake in ex.mistakes:
        feedback = ex.check(run_answer(ex, mistake.code))
        assert feedback.ok is False, (mistake.code, feedback)
        assert mistake.names in feedback.message, (mistake.code, feedback)


@pytest.mark.parametrize("nb", exercises.NOTEBOOKS)
def test_wrong_type_is_named(nb: str) -> None:
    for ex in exercises.exercises(nb):
        feedback = ex.check("forty-two")
        assert feedback.ok is False and feedback.message, feedback


def test_each_notebook_has_three_tagged_exercise_cells() -> None:
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert [p.name[:2] for p in paths] == list(exercises.NOTEBOOKS)
    for path in paths:
        cells = json.loads(path.read_text())["cells"]
        tagged = [c for c in cells if "exercise" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) >= 3, f"{path.name}: {len(tagged)} cells tagged exercise"
        assert len(tagged) == len(exercises.exercises(path.name[:2])), path.name
        for cell in tagged:
            assert cell["cell_type"] == "code" and "answer = None" in "".join(cell["source"]), path.name


def solved(nb: str, key: str) -> object:
    """The reference solution of one exercise, run."""
    ex = next(e for e in exercises.exercises(nb) if e.key == key)
    return run_answer(ex, ex.solution)


def test_checkers_agree_with_poslib() -> None:
    # The checkers compute their references with NumPy alone, from the papers' formulas; poslib, tested
    # elsewhere against its own references, must give the same numbers.
    import poslib as P

    np.testing.assert_allclose(solved("00", "logn-factor"), P.logn_scale(np.array([128, 512, 4096]), 512))
    np.testing.assert_allclose(solved("00", "rope-angles"), 100 * P.rope_frequencies(64))
    np.testing.assert_allclose(solved("04", "deberta-delta"), P.deberta_delta(np.arange(-6, 7), 4))
    np.testing.assert_allclose(solved("07", "slopes-8"), P.alibi_slopes(8))
    np.testing.assert_allclose(solved("07", "slopes-12"), P.alibi_slopes(12))
    unit_slope = P.alibi_bias(1, 5, causal=True)[0] / P.alibi_slopes(1)[0]  # −|i − j| below the diagonal, −inf above
    np.testing.assert_allclose(solved("07", "causal-bias"), 0.5 * unit_slope)
    np.testing.assert_allclose(solved("09", "inv-freq"), P.rope_inv_freq(128, 500_000.0)[0])
    np.testing.assert_allclose(solved("09", "yarn-factor"), P.yarn_attention_factor(4.0))
    np.testing.assert_allclose(solved("10", "fire-inputs"), P.fire_inputs(41, c=1.0, L=64.0)[40])
    to_half = solved("05", "to-half")
    v = np.arange(32.0).reshape(2, 16)
    np.testing.assert_array_equal(to_half(v), v[:, P.rope_layout_permutation(16)])  # type: ignore[operator]
    # T5: distances 0 … 7 each have their own bucket, 8 shares with 9 (32 buckets, bidirectional)
    before = P.t5_relative_bucket(-np.arange(12))
    assert solved("04", "exact-buckets") == len(set(before[:8].tolist())) == 8 and before[8] == before[9]
    # 06: the count of never-turning pairs is the one notebook 06 reads off P.rope_frequencies
    assert solved("06", "slow-pairs") == int(np.sum(2 * np.pi / P.rope_frequencies(128) > 2048))
    # 11: ReRoPE's row is poslib.remap's (clamped at w, as bojone/rerope); Self-Extend's G is the smallest whose
    # largest distance poslib.remap allows stays ≤ L_train − 1, and the group the lab's Self-Extend picks at 1024;
    # the NTK base is the one poslib.rope_inv_freq(rope_type="ntk") rotates with, at the lab's head size and factor
    np.testing.assert_array_equal(solved("11", "rerope-row"), P.rerope_relative_positions(8, window=3)[7])
    group = solved("11", "self-extend-group")
    assert isinstance(group, int)
    assert P.self_extend_max_distance(1024, group_size=group, neighbor_window=16) <= 63
    assert P.self_extend_max_distance(1024, group_size=group - 1, neighbor_window=16) > 63
    from poslib.lab.config import ModelConfig
    from poslib.lab.extend import ExtendConfig
    from poslib.lab.schemes import RemapSettings

    lab = ModelConfig()
    assert RemapSettings().group(1024, lab.train_len) == group and RemapSettings().neighbor_window(lab.train_len) == 16
    lab_sizes = (lab.d_model, lab.n_heads, lab.head_dim, lab.rope_base, ExtendConfig().finetune_multiple)
    assert lab_sizes == (64, 4, 16, 1e4, 4)  # the width, heads, base and factor s the exercise gives
    ntk = {"rope_type": "ntk", "factor": 4.0, "original_max_position_embeddings": lab.train_len}
    inv_freq, _ = P.rope_inv_freq(lab.head_dim, lab.rope_base, ntk)
    np.testing.assert_allclose(inv_freq, P.rope_frequencies(16, solved("11", "ntk-base")), rtol=1e-12)


@pytest.mark.parametrize("nb", exercises.NOTEBOOKS)
def test_numbers_stated_in_solutions_are_the_numbers_they_compute(nb: str) -> None:
    # A solution's "≈ value" comment is what a student compares their result with: it must be the value
    # the solution (and so the checker, by test_reference_solution_passes) gives, to the digits written.
    for key, stated, computed, tolerance in exercises.stated_numbers(nb):
        assert abs(stated - computed) <= tolerance, (
            f"nb{nb} {key}: the solution says ≈ {stated:g}, it computes {computed:g}"
        )


def test_a_stale_stated_number_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # The number Exercise 5.1's solution stated before issue 22 (1.3e7) against the value it computes (1.01e9).
    import dataclasses

    nb05 = exercises.module("05")
    stale = dataclasses.replace(nb05.EXERCISES[0], solution=nb05.EXERCISES[0].solution.replace("1.01e9", "1.3e7"))
    monkeypatch.setattr(nb05, "EXERCISES", (stale, *nb05.EXERCISES[1:]))
    ((key, stated, computed, tolerance),) = exercises.stated_numbers("05")
    assert (key, stated) == ("never-turn-base", 1.3e7) and abs(stated - computed) > tolerance
    assert abs(computed - (4095 / (2 * np.pi)) ** (128 / 40)) < 1.0  # the base, solved by hand: ≈ 1.0117e9


def test_never_turn_base_accepts_five_digits_and_still_names_the_off_by_one() -> None:
    # Exercise 5.1: b = (4095/2π)^(128/40) = 1.01166…e9, derived here by hand, not by the checker.
    nb05 = exercises.module("05")
    exact = (4095 / (2 * np.pi)) ** (128 / 40)
    assert nb05.check_never_turn_base(1.0117e9).ok is True  # 5 digits: relative error 1.6e-5
    assert nb05.check_never_turn_base(exact).ok is True
    off_by_one = nb05.check_never_turn_base((4096 / (2 * np.pi)) ** (128 / 40))  # a factor 1.00078 away
    assert off_by_one.ok is False and "4096" in off_by_one.message


def test_self_extend_group_names_every_group_by_hand() -> None:
    # Exercise 11.2: the largest Self-Extend distance ⌊1023/G⌋ + 16 − ⌊16/G⌋, written out for each G by a loop here,
    # not by the checker; only G = 22 is right, every smaller G is beyond 63 and every larger one is not the smallest.
    nb11 = exercises.module("11")
    worst = {G: 1023 // G + 16 - 16 // G for G in range(1, 41)}
    assert next(G for G in worst if worst[G] <= 63) == 22 and (worst[21], worst[22]) == (64, 62)
    for G, distance in worst.items():
        feedback = nb11.check_self_extend_group(G)
        assert feedback.ok is (G == 22), (G, feedback)
        if G < 22:
            assert f"{distance}" in feedback.message and "63" in feedback.message, (G, feedback)
        elif G > 22:
            assert feedback.message.startswith("not the smallest") and f"at {distance} ≤ 63" in feedback.message
    assert nb11.check_self_extend_group(16).message.startswith(
        "G = 16 is L'/L_train"
    )  # 1024/64, and the shift forgotten
    assert nb11.check_self_extend_group(21).message.startswith(
        "off by one"
    )  # distance 64 = L_train: LongLM's README rule
    assert nb11.check_self_extend_group(np.int64(22)).ok is True and nb11.check_self_extend_group(True).ok is False
