"""Checked exercises for the notebooks: one module per notebook (``nb05`` for ``05_rope.ipynb``).

Each module lists its exercises in ``EXERCISES``; every exercise has a checker that tells a wrong
answer what is wrong (shape, sign, layout, off by one, units …). ``scripts/course_map.py`` writes the
exercise cells of each notebook from these lists, so the text in the notebook and the checker agree.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ._base import Exercise, Feedback, Mistake

NOTEBOOKS = tuple(f"{n:02d}" for n in range(11))


def module(number: str) -> ModuleType:
    """The exercise module of notebook ``number`` ("00" … "10")."""
    if number not in NOTEBOOKS:
        raise ValueError(f"number must be one of {', '.join(NOTEBOOKS)}, got {number!r}")
    return importlib.import_module(f"{__name__}.nb{number}")


def exercises(number: str) -> tuple[Exercise, ...]:
    """The exercises of notebook ``number``, in the order the notebook poses them."""
    found: tuple[Exercise, ...] = module(number).EXERCISES
    return found


__all__ = ["NOTEBOOKS", "Exercise", "Feedback", "Mistake", "exercises", "module"]
