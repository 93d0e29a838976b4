"""What every exercise checker shares: the verdict it returns and the comparisons that name a mistake.

A checker never just says "wrong". It compares the answer with the reference and, when they differ,
with the typical wrong answers the exercise lists (each with the sentence that explains it), then
with generic slips: a wrong shape, a flipped sign, a transpose, degrees for radians, a constant factor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Feedback:
    """A checker's verdict: ``ok`` is True (right), False (wrong) or None (not answered yet)."""

    ok: bool | None
    message: str

    def __repr__(self) -> str:
        mark = {True: "correct", False: "not yet", None: "not answered yet"}[self.ok]
        return f"{mark}: {self.message}"


@dataclass(frozen=True)
class Mistake:
    """A typical wrong answer (Python that sets ``answer`` after the setup) and a phrase its feedback contains."""

    code: str
    names: str


@dataclass(frozen=True)
class Exercise:
    """One exercise: what the notebook shows (prompt, hint, solution) and the checker that grades it.

    ``setup`` runs in the exercise cell before the learner's line ``stub``; ``solution`` is shown
    collapsed and is run by the tests, which also run every ``mistakes`` entry and require the checker
    to name it.
    """

    key: str
    title: str
    prompt: str
    hint: str
    setup: str
    stub: str
    solution: str
    check: Callable[[Any], Feedback]
    mistakes: tuple[Mistake, ...]


def not_answered(what: str) -> Feedback:
    """The verdict for ``answer = None``: the stored notebooks run with every exercise open."""
    return Feedback(None, f"replace `answer = None` with {what}.")


Diagnosis = tuple[str, Any]


def _as_floats(value: Any) -> Floats | None:
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _close(a: Floats, b: Floats, rtol: float, atol: float) -> bool:
    """Equal shapes, the same ±inf entries, and the finite entries within tolerance."""
    if a.shape != b.shape:
        return False
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    if not np.array_equal(inf_a, inf_b) or not np.array_equal(a[inf_a], b[inf_b]):
        return False
    fa, fb = a[~inf_a], b[~inf_b]
    return bool(np.all(np.isfinite(fa)) and np.allclose(fa, fb, rtol=rtol, atol=atol))


def _shape_message(got: tuple[int, ...], want: tuple[int, ...], name: str) -> str:
    if len(got) == len(want) and sorted(got) == sorted(want):
        return f"shape: {name} has shape {got}, expected {want} (axes in the wrong order?)"
    if len(got) == len(want) and sum(abs(g - w) for g, w in zip(got, want, strict=True)) == 1:
        return f"off by one: {name} has shape {got}, expected {want} (one entry too many or too few)"
    if int(np.prod(got)) == int(np.prod(want)):
        return f"shape: {name} has shape {got}, expected {want} (the right number of entries, arranged differently)"
    return f"shape: {name} has shape {got}, expected {want}"


def check_array(
    answer: Any,
    expected: Any,
    *,
    what: str,
    name: str = "answer",
    diagnoses: Sequence[Diagnosis] = (),
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> Feedback:
    """Grade a numeric answer (a number or an array) against ``expected``.

    ``diagnoses`` lists (explanation, wrong value) pairs, tried first, so the learner reads the
    exercise's own explanation of the slip; generic slips follow.
    """
    if answer is None:
        return not_answered(what)
    want = np.asarray(expected, dtype=np.float64)
    got = _as_floats(answer)
    if got is None:
        return Feedback(False, f"type: {name} should be numbers, got {type(answer).__name__}")
    for explanation, wrong in diagnoses:
        if _close(got, np.asarray(wrong, dtype=np.float64), rtol, atol) and not _close(got, want, rtol, atol):
            return Feedback(False, explanation)
    if got.shape != want.shape:
        return Feedback(False, _shape_message(got.shape, want.shape, name))
    if _close(got, want, rtol, atol):
        return Feedback(True, f"{name} is right.")
    if not np.all(np.isfinite(got) | np.isinf(want)):
        return Feedback(
            False, f"{name} contains inf or nan where the answer is finite (a division by zero or log of ≤ 0?)"
        )
    return Feedback(False, _generic_slip(got, want, name))


def _generic_slip(got: Floats, want: Floats, name: str) -> str:
    finite = np.isfinite(want)
    g, w = got[finite], want[finite]
    if _close(-got, want, 1e-6, 1e-9):
        return f"sign: {name} is the negative of the answer"
    if got.ndim == 2 and got.shape[0] == got.shape[1] and _close(got.T, want, 1e-6, 1e-9):
        return f"transposed: {name} has rows and columns swapped"
    for factor, units in ((180 / np.pi, "degrees, expected radians"), (np.pi / 180, "radians, expected degrees")):
        if np.allclose(g, w * factor, rtol=1e-6, atol=1e-9) and np.any(w != 0):
            return f"units: {name} looks like {units}"
    nonzero = np.abs(w) > 1e-12
    if np.any(nonzero):
        ratio = g[nonzero] / w[nonzero]
        if np.allclose(ratio, ratio[0], rtol=1e-6) and np.allclose(g[~nonzero], 0, atol=1e-9):
            return f"scale: {name} is the answer times {ratio[0]:.6g} (a missing or extra constant factor)"
    err = np.abs(got - want)
    err[~finite] = 0.0
    where = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
    at = f" at index {tuple(int(i) for i in where)}" if where else ""
    return f"values: {name} differs from the answer by up to {err.max():.3g}{at}"


def check_int(
    answer: Any, expected: int, *, what: str, name: str = "answer", diagnoses: Sequence[tuple[str, int]] = ()
) -> Feedback:
    """Grade a whole-number answer (a count); ±1 is reported as an off-by-one."""
    if answer is None:
        return not_answered(what)
    if isinstance(answer, bool) or not isinstance(answer, int | np.integer):
        return Feedback(False, f"type: {name} should be a whole number, got {type(answer).__name__}")
    if int(answer) == expected:
        return Feedback(True, f"{name} is right.")
    for explanation, wrong in diagnoses:
        if int(answer) == wrong:
            return Feedback(False, explanation)
    if abs(int(answer) - expected) == 1:
        return Feedback(False, f"off by one: {name} = {int(answer)} is one away from the answer")
    return Feedback(False, f"values: {name} = {int(answer)} is not the answer")


def _pow10(v: Any) -> Any:
    return np.power(10.0, v)


# Each logarithm, its inverse, and the unit an information measure gets from it.
LOGS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any], str]] = {
    "natural log": (np.log, np.exp, "nats"),
    "log₂": (np.log2, np.exp2, "bits"),
    "log₁₀": (np.log10, _pow10, "decimal digits"),
}


def log_slips(x: Any, right: str, unit: str, *, inverse: bool = False) -> list[Diagnosis]:
    """The answers computed with the wrong logarithm (or, ``inverse``, the wrong exponential) of ``x``.

    ``right`` names the intended one ("natural log", "log₂" or "log₁₀"); ``unit`` says what it measures.
    """
    slips = []
    for name, (log, exp, gives) in LOGS.items():
        if name != right:
            wrong = exp(x) if inverse else log(x)
            slips.append((f"units: that uses the {name} ({gives}); {unit} need the {right}", wrong))
    return slips


def wavelength_slips(i: Any, d: int, base: float) -> list[Diagnosis]:
    """Typical slips when computing λ_i = 2π · base^(2i/d): radians for turns, ω for λ, i for 2i."""
    return [
        ("units: that is base^(2i/d), tokens per *radian*; a full cycle is 2π radians", base ** (2 * i / d)),
        ("that is the frequency ω_i (radians per token); the wavelength is 2π/ω_i", base ** (-2 * i / d)),
        ("exponent: the frequency is base^(−2i/d), with 2i, not i", 2 * np.pi * base ** (i / d)),
    ]


def arrays_from(rng_seed: int, *shapes: tuple[int, ...]) -> list[Floats]:
    """Seeded standard-normal arrays, the given data of an exercise (the same in every run)."""
    rng = np.random.default_rng(rng_seed)
    return [rng.standard_normal(shape) for shape in shapes]
