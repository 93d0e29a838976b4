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
    namespace: dict[str, object] = {"np": np}
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


def test_checkers_agree_with_poslib() -> None:
    # The checkers compute their references with NumPy alone; poslib must give the same numbers.
    import poslib as P

    def solved(nb: str, key: str) -> object:
        ex = next(e for e in exercises.exercises(nb) if e.key == key)
        return run_answer(ex, ex.solution)

    np.testing.assert_allclose(solved("00", "logn-factor"), P.logn_scale(np.array([128, 512, 4096]), 512))
    np.testing.assert_allclose(solved("00", "rope-angles"), 100 * P.rope_frequencies(64))
