"""Checked exercises for the notebooks: one module per notebook (``nb05`` for ``05_rope.ipynb``).

Each module lists its exercises in ``EXERCISES``; every exercise has a checker that tells a wrong
answer what is wrong (shape, sign, layout, off by one, units …). ``scripts/course_map.py`` writes the
exercise cells of each notebook from these lists, so the text in the notebook and the checker agree.
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake

NOTEBOOKS = tuple(f"{n:02d}" for n in range(14))


def module(number: str) -> ModuleType:
    """The exercise module of notebook ``number`` ("00" … "12")."""
    if number not in NOTEBOOKS:
        raise ValueError(f"number must be one of {', '.join(NOTEBOOKS)}, got {number!r}")
    return importlib.import_module(f"{__name__}.nb{number}")


def exercises(number: str) -> tuple[Exercise, ...]:
    """The exercises of notebook ``number``, in the order the notebook poses them."""
    found: tuple[Exercise, ...] = module(number).EXERCISES
    return found


# "≈ 1.01e9" or "≈ 4.7e4 tokens" in a solution's comment: a number the text promises the solution computes
_STATED = re.compile(r"≈\s*([-+]?\d+(?:\.(\d+))?(?:e([-+]?\d+))?)")


def run_solution(number: str, ex: Exercise) -> Any:
    """Run exercise ``ex`` of notebook ``number`` as its cell would with the solution typed in; return ``answer``."""
    namespace: dict[str, Any] = {"np": np, f"nb{number}": module(number)}
    exec(ex.setup, namespace)
    exec(ex.solution, namespace)
    return namespace["answer"]


def stated_numbers(number: str) -> list[tuple[str, float, float, float]]:
    """Every "≈ value" a solution of notebook ``number`` states: ``(key, stated, computed, tolerance)``.

    ``computed`` is the solution's ``answer`` (a scalar), ``tolerance`` half a unit of the last digit
    written (≈ 1.01e9 allows 5e6), so a stale number in the text is told from a rounded one.
    """
    found = []
    for ex in exercises(number):
        for match in _STATED.finditer(ex.solution):
            decimals, exponent = len(match.group(2) or ""), int(match.group(3) or 0)
            computed = float(np.asarray(run_solution(number, ex), dtype=np.float64))
            found.append((ex.key, float(match.group(1)), computed, 0.5 * 10.0 ** (exponent - decimals)))
    return found


__all__ = ["NOTEBOOKS", "Exercise", "Feedback", "Mistake", "exercises", "module", "run_solution", "stated_numbers"]
