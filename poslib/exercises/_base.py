"""What every exercise checker shares: the verdict it returns and the comparisons that name a mistake.

A checker never just says "wrong". It compares the answer with the reference and, when they differ,
with the typical wrong answers the exercise lists (each with the sentence that explains it), then
with generic slips: text for a number, a wrong length or shape, a flipped sign, a transpose, degrees for
radians, the identity for a permutation, an index shifted by one (pairs 1 … 8 for 0 … 7), the right values in
the wrong order, the square or square root, a constant factor. A right answer can carry the exercise's
``takeaway``, the sentence that answers the question the exercise asked.

Every message is written where it is made, in poslib's language (:mod:`poslib.language`): its English template
(with named fields) is looked up in the ``exercises`` catalogue, ``_(template).format(**fields)``, and a field that
holds a phrase of its own ("your answer", a slip's explanation) gets that phrase already looked up.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from poslib.language import translator

Floats = NDArray[np.float64]
_ = translator("exercises")


@dataclass(frozen=True)
class Feedback:
    """A checker's verdict: ``ok`` is True (right), False (wrong) or None (not answered yet)."""

    ok: bool | None
    message: str

    def __repr__(self) -> str:
        mark = {True: _("correct"), False: _("not yet"), None: _("not answered yet")}[self.ok]
        return _("{mark}: {message}").format(mark=mark, message=self.message)


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

    ``takeaway`` (optional) writes the sentence a right answer ends with: what the number means for the
    question the prompt asked ("does any column finish a cycle?"), not a repeat of "right". It is a function
    of no argument, so that the sentence is written in the language current when the answer is checked. When it is
    set, ``check`` is wrapped so that a correct verdict ends with it, and the wrapped checker replaces
    the plain one under its name in its module: the notebook cell calls the checker by that name
    (``nb03.check_wavelengths(answer)``), so it gets the sentence without its code changing.
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
    takeaway: Callable[[], str] | None = None

    def __post_init__(self) -> None:
        if not self.takeaway:
            return
        plain = plain_check(self.check)  # dataclasses.replace passes a wrapped one
        wrapped = with_takeaway(plain, self.takeaway)
        object.__setattr__(self, "check", wrapped)
        # Rebind only the module's own name for this very checker (plain, or wrapped by an earlier copy).
        module = sys.modules.get(getattr(plain, "__module__", ""))
        name = getattr(plain, "__name__", "")
        bound = getattr(module, name, None)
        if module is not None and bound is not None and plain_check(bound) is plain:
            setattr(module, name, wrapped)


def with_takeaway(check: Callable[[Any], Feedback], takeaway: Callable[[], str]) -> Callable[[Any], Feedback]:
    """``check`` whose correct verdicts end with the sentence ``takeaway()`` writes; wrong and unanswered verdicts
    are unchanged."""

    @functools.wraps(check)
    def graded(answer: Any) -> Feedback:
        feedback = check(answer)
        if feedback.ok is not True:
            return feedback
        said = takeaway()
        if said in feedback.message:
            return feedback
        return Feedback(True, _("{message} {takeaway}").format(message=feedback.message, takeaway=said))

    # said outright, not recovered through functools' __wrapped__: Exercise rewraps the plain checker (plain_check)
    graded.plain_check = check  # type: ignore[attr-defined]
    return graded


def plain_check(check: Callable[[Any], Feedback]) -> Callable[[Any], Feedback]:
    """The checker :func:`with_takeaway` wrapped (``check`` itself when it wraps none): what a copy of an
    :class:`Exercise` wraps again, once."""
    plain: Callable[[Any], Feedback] = getattr(check, "plain_check", check)
    return plain


def not_answered(what: str) -> Feedback:
    """The verdict for ``answer = None``: the stored notebooks run with every exercise open."""
    return Feedback(None, _("replace `answer = None` with {what}.").format(what=what))


Diagnosis = tuple[str, Any]

# How close an answer must be to a *wrong* value (an exercise's diagnosis, the square of the expected value) to be
# named as that slip: a value typed from a printout to 5 significant digits (1.2965 for 1.296477…, 1.8e-5 off)
# is still the slip. Every diagnosis of every exercise lies at least 7.8e-4 from its expected value and from
# the other diagnoses (tests/test_exercise_feedback.py), so at 1e-4 no two slips are confused.
SLIP_RTOL = 1e-4
# A slip is named only when it is not itself within rounding of the expected value (the "rounding" message's
# 0.5 %): for an expected value of 1.0005 its square, 1.001, is a rounding slip, not a square.
_DISTINCT = 5e-3


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


def _is_text(answer: Any) -> bool:
    """True when ``answer`` is a string or holds one: NumPy would read "47117.0" as the number 47117."""
    if isinstance(answer, str | bytes):
        return True
    if isinstance(answer, np.ndarray):
        return answer.dtype.kind in "USO" and any(isinstance(x, str | bytes) for x in answer.ravel())
    if isinstance(answer, list | tuple):
        return any(_is_text(x) for x in answer)
    return False


def _subject(name: str) -> str:
    """How a message names the learner's value: "your answer", or the variable the exercise asks for."""
    return _("your answer") if name == "answer" else f"`{name}`"


def _end_slip(got: Floats, want: Floats) -> str | None:
    """How ``got`` is ``want`` with one entry dropped or added at an end of the axis whose length differs by one
    (the off-by-one of a range's bounds), or None when it is not."""
    axis = next(a for a in range(want.ndim) if got.shape[a] != want.shape[a])

    def part(a: Floats, start: int | None, stop: int | None) -> Floats:
        return a[(slice(None),) * axis + (slice(start, stop),)]

    if got.shape[axis] < want.shape[axis]:
        if _close(got, part(want, None, -1), 1e-6, 1e-9):
            return _("the expected values without the last one (did the range stop one short?)")
        if _close(got, part(want, 1, None), 1e-6, 1e-9):
            return _("the expected values without the first one (did the index start at 1 instead of 0?)")
    else:
        if _close(part(got, None, -1), want, 1e-6, 1e-9):
            return _("the expected values and one more at the end (did the range include its end?)")
        if _close(part(got, 1, None), want, 1e-6, 1e-9):
            return _("the expected values and one more at the start (did the index start at −1?)")
    return None


def _shape_message(got_values: Floats, want_values: Floats, name: str) -> str:
    """The slip of an answer of the wrong shape: a length (1-D), an axis order, an entry too many or too few
    at an end of a range (an off-by-one only when the rest of the values agree), a layout."""
    got, want = got_values.shape, want_values.shape
    shapes = {"who": _subject(name), "got": str(got), "want": str(want)}
    one_off = len(got) == len(want) and sum(abs(g - w) for g, w in zip(got, want, strict=True)) == 1
    end = _end_slip(got_values, want_values) if one_off else None
    if len(got) == len(want) == 1:
        # A list of the wrong length is called off by one only when it is the expected list cut or extended at
        # an end; otherwise "off by one" would name a slip the answer does not show.
        counts = {"who": _subject(name), "got": str(got[0]), "want": str(want[0])}
        if end is not None:
            return _("off by one: {who} has {got} entries, expected {want}: {why}").format(why=end, **counts)
        return _("length: {who} has {got} entries, expected {want}").format(**counts)
    if len(got) == len(want) and sorted(got) == sorted(want):
        return _("shape: {who} has shape {got}, expected {want} (axes in the wrong order?)").format(**shapes)
    if end is not None:
        return _("off by one: {who} has shape {got}, expected {want} (one entry too many or too few)").format(**shapes)
    if int(np.prod(got)) == int(np.prod(want)):
        return _(
            "shape: {who} has shape {got}, expected {want} (the right number of entries, arranged differently)"
        ).format(
            **shapes,
        )
    return _("shape: {who} has shape {got}, expected {want}").format(**shapes)


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
    exercise's own explanation of the slip; a wrong value matches within ``SLIP_RTOL`` (or ``rtol``, if
    looser), so one typed from a printout is still named. Generic slips follow.
    """
    if answer is None:
        return not_answered(what)
    want = np.asarray(expected, dtype=np.float64)
    who = _subject(name)
    if _is_text(answer):  # before the conversion, which reads "47117.0" as a number and calls it rounding
        if isinstance(answer, str | bytes):
            return Feedback(
                False, _("type: {who} is a string, not a number: write the number without quotes").format(who=who)
            )
        return Feedback(
            False, _("type: {who} holds strings, not numbers: write the numbers without quotes").format(who=who)
        )
    got = _as_floats(answer)
    if got is None:
        return Feedback(
            False, _("type: {who} should be numbers, got {type}").format(who=who, type=type(answer).__name__)
        )
    slip_rtol = max(rtol, SLIP_RTOL)
    for explanation, wrong in diagnoses:
        if _close(got, np.asarray(wrong, dtype=np.float64), slip_rtol, atol) and not _close(got, want, rtol, atol):
            return Feedback(False, explanation)
    if got.shape != want.shape:
        return Feedback(False, _shape_message(got, want, name))
    if _close(got, want, rtol, atol):
        return Feedback(True, _("{who} is right.").format(who=who))
    if not np.all(np.isfinite(got) | np.isinf(want)):
        return Feedback(
            False,
            _(
                "{who} contains inf or nan where the expected value is finite (a division by zero or log of ≤ 0?)"
            ).format(
                who=who,
            ),
        )
    return Feedback(False, _generic_slip(got, want, name))


def _constant_ratio(got: Floats, want: Floats) -> float | None:
    """r when ``got`` = r · ``want`` entry by entry (zeros where ``want`` is zero), else None."""
    finite = np.isfinite(want)
    g, w = got[finite], want[finite]
    nonzero = np.abs(w) > 1e-12
    if not np.any(nonzero):
        return None
    ratio = g[nonzero] / w[nonzero]
    if np.allclose(ratio, ratio[0], rtol=1e-6) and np.allclose(g[~nonzero], 0, atol=1e-9):
        return float(ratio[0])
    return None


def _index_shift(got: Floats, want: Floats, name: str) -> str | None:
    """The off-by-one of an index: ``got`` is ``want`` moved by one place along an axis (the end entry aside).

    Pairs 1 … 8 for 0 … 7 give got[k] = want[k + 1]. Only axes of 3 or more entries along which ``want``
    is not constant are tried (a constant row looks shifted whatever the answer). For a geometric sequence
    a shift is also a constant factor; the message says both, the shift first, since it names the slip.
    """
    who = _subject(name)
    for axis in range(want.ndim):
        n = want.shape[axis]
        if n < 3:
            continue

        def part(a: Floats, start: int, stop: int, axis: int = axis) -> Floats:
            return a[(slice(None),) * axis + (slice(start, stop),)]

        if _close(part(want, 0, n - 1), part(want, 1, n), 1e-6, 1e-9):
            continue
        along = _(" along axis {axis}").format(axis=str(axis)) if want.ndim > 1 else ""
        for got_part, want_part, later in (
            (part(got, 0, n - 1), part(want, 1, n), True),
            (part(got, 1, n), part(want, 0, n - 1), False),
        ):
            if not _close(got_part, want_part, 1e-6, 1e-9):
                continue
            if later:
                why = _("your entry k is the expected entry k + 1: did the index start at 1 instead of 0?")
            else:
                why = _("your entry k is the expected entry k − 1: did the index start at −1, one step behind?")
            ratio = _constant_ratio(got, want)
            also = ""
            if ratio is not None:
                also = _("; in this geometric sequence that is also {ratio} × the expected value").format(
                    ratio=f"{ratio:.3g}"
                )
            return _("off by one: {who} is the expected values shifted by one place{along} ({why}){also}").format(
                who=who,
                along=along,
                why=why,
                also=also,
            )
    return None


def _identity(got: Floats, want: Floats, name: str) -> str | None:
    """The identity where a permutation was asked: np.eye(n) for a permutation matrix, 0 … n − 1 for an order.

    The answer that moves nothing is not an index shifted by one, though np.eye(3) against the rows e_1, e_2, e_0
    looks like one; it is tried first."""
    who = _subject(name)
    n = want.shape[0] if want.ndim else 0
    if n < 2 or _close(got, want, 1e-6, 1e-9):
        return None
    if want.ndim == 2 and want.shape == (n, n):
        is_permutation = bool(
            np.all((want == 0) | (want == 1)) and np.all(want.sum(axis=0) == 1) and np.all(want.sum(axis=1) == 1)
        )
        if is_permutation and _close(got, np.eye(n), 1e-6, 1e-9):
            return _(
                "identity: {who} is the identity matrix, the permutation that leaves every row in place; "
                "the expected one reorders them"
            ).format(
                who=who,
            )
    in_order = np.arange(n, dtype=np.float64)
    if want.ndim == 1 and np.array_equal(np.sort(want), in_order) and _close(got, in_order, 1e-6, 1e-9):
        return _(
            "identity: {who} is 0, 1, 2, … in order, the permutation that leaves every entry in place; "
            "the expected one reorders them"
        ).format(
            who=who,
        )
    return None


def _order(got: Floats, want: Floats, name: str) -> str | None:
    """The right values in the wrong order: reversed (along an axis), sorted the other way, or shuffled."""
    who = _subject(name)
    if got.size < 2 or not _close(np.sort(got, axis=None), np.sort(want, axis=None), 1e-6, 1e-9):
        return None
    for axis in range(want.ndim):
        if _close(got, np.flip(want, axis=axis), 1e-6, 1e-9):
            along = _(" along axis {axis}").format(axis=str(axis)) if want.ndim > 1 else ""
            return _("order: {who} holds the expected values in reverse order{along}").format(who=who, along=along)
    if got.ndim == 1:
        steps = np.diff(got)
        if np.all(steps <= 0):
            return _(
                "order: {who} holds the expected values sorted from largest to smallest, which is not their order"
            ).format(
                who=who,
            )
        if np.all(steps >= 0):
            return _(
                "order: {who} holds the expected values sorted from smallest to largest, which is not their order"
            ).format(
                who=who,
            )
    return _("order: {who} holds the expected values in a different order").format(who=who)


def _whole_or_reciprocal(x: float) -> bool:
    """2, 3, 1/2, 1/4 …: a factor that reads as a plain constant rather than as the expected value itself."""
    return any(abs(v - round(v)) < 1e-6 and round(v) != 0 for v in (x, 1 / x) if np.isfinite(v))


def _power(got: Floats, want: Floats, name: str) -> str | None:
    """The square of the expected value (a factor applied twice), or its square root (applied once too few).

    Matched within SLIP_RTOL (a square typed from a printout). A square that is a plain factor of a number
    (4 for 2: "2 × the expected value") is left to the factor's message, which names it as well."""
    who = _subject(name)
    finite = np.isfinite(want)
    w = want[finite]
    candidates: list[tuple[Floats, str]] = [
        (
            want**2,
            _("square: {who} is the square of the expected value (the factor applied twice, where it acts once?)"),
        )
    ]
    if np.all(w >= 0):  # a square root only of an expected value with no negative entry (−inf entries aside)
        candidates.append(
            (
                np.sqrt(np.abs(want)) * np.sign(want),  # −inf stays −inf (a masked entry), without a warning
                _(
                    "square root: {who} is the square root of the expected value (the factor applied once, "
                    "where it acts twice?)"
                ),
            )
        )
    for power, template in candidates:
        p = power[finite]
        nonzero = np.abs(w) > 1e-12
        if not np.any(np.abs(p[nonzero] - w[nonzero]) > _DISTINCT * np.abs(w[nonzero])):
            continue  # the square of 0, 1 or a number near 1 is no slip of its own
        if not _close(got, power, SLIP_RTOL, 1e-9):
            continue
        ratio = _constant_ratio(got, want)
        if ratio is not None and _whole_or_reciprocal(ratio):
            continue
        return template.format(who=who)
    return None


def _generic_slip(got: Floats, want: Floats, name: str) -> str:
    who = _subject(name)
    finite = np.isfinite(want)
    g, w = got[finite], want[finite]
    if _close(-got, want, 1e-6, 1e-9):
        return _("sign: {who} is the negative of the expected value").format(who=who)
    if got.ndim == 2 and got.shape[0] == got.shape[1] and _close(got.T, want, 1e-6, 1e-9):
        return _("transposed: {who} has rows and columns swapped").format(who=who)
    for factor, units in ((180 / np.pi, _("degrees, expected radians")), (np.pi / 180, _("radians, expected degrees"))):
        if np.allclose(g, w * factor, rtol=1e-6, atol=1e-9) and np.any(w != 0):
            return _("units: {who} looks like {units}").format(who=who, units=units)
    identity = _identity(got, want, name)  # before the shift: np.eye(3) looks like a shifted Π
    if identity is not None:
        return identity
    shifted = _index_shift(got, want, name)  # before the factor: a shifted geometric sequence is also one
    if shifted is not None:
        return shifted
    ordered = _order(got, want, name)  # after the shift: a list rolled by one place is an index slip
    if ordered is not None:
        return ordered
    power = _power(got, want, name)  # before the factor: the square of a number is also that number × it
    if power is not None:
        return power
    ratio = _constant_ratio(got, want)
    if ratio is not None and abs(ratio - 1) < 5e-3:  # "1 × the expected value" would explain nothing
        return _(
            "rounding: {who} is {percent} % off the expected value, outside the tolerance; "
            "compute it rather than typing a rounded number"
        ).format(
            who=who,
            percent=f"{100 * abs(ratio - 1):.2g}",
        )
    if ratio is not None:
        return _("scale: {who} is {ratio} × the expected value (a missing or extra constant factor?)").format(
            who=who,
            ratio=f"{ratio:.3g}",
        )
    err = np.abs(got - want)
    err[~finite] = 0.0
    where = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
    at = _(" at entry {entry}").format(entry=", ".join(str(int(i)) for i in where)) if where else ""
    return _("values: {who} differs from the expected value by up to {err}{at}").format(
        who=who, err=_plain(float(err.max())), at=at
    )


def _plain(x: float) -> str:
    """A number as a reader writes it: 0.0123, 1.99e4 (not 1.99e+04)."""
    text = f"{x:.3g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}".replace("e-", "e−")
    return text


def check_int(
    answer: Any, expected: int, *, what: str, name: str = "answer", diagnoses: Sequence[tuple[str, int]] = ()
) -> Feedback:
    """Grade a whole-number answer (a count); ±1 is reported as an off-by-one."""
    if answer is None:
        return not_answered(what)
    who = _subject(name)
    if isinstance(answer, bool) or not isinstance(answer, int | np.integer):
        return Feedback(
            False, _("type: {who} should be a whole number, got {type}").format(who=who, type=type(answer).__name__)
        )
    if int(answer) == expected:
        return Feedback(True, _("{who} is right.").format(who=who))
    for explanation, wrong in diagnoses:
        if int(answer) == wrong:
            return Feedback(False, explanation)
    if abs(int(answer) - expected) == 1:
        more = _("one more") if int(answer) > expected else _("one fewer")
        return Feedback(
            False,
            _("off by one: {who}, {value}, is {more} than the expected count").format(
                who=who,
                value=str(int(answer)),
                more=more,
            ),
        )
    return Feedback(
        False, _("values: {who}, {value}, is not the expected count").format(who=who, value=str(int(answer)))
    )


def _pow10(v: Any) -> Any:
    return np.power(10.0, v)


# Each logarithm, its inverse, and the unit an information measure gets from it.
LOGS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any], str]] = {
    "natural log": (np.log, np.exp, "nats"),
    "log₂": (np.log2, np.exp2, "bits"),
    "log₁₀": (np.log10, _pow10, "decimal digits"),
}


def _log_words() -> dict[str, str]:
    """The logarithms' and units' names of :data:`LOGS`, in the current language."""
    return {
        "natural log": _("natural log"),
        "log₂": _("log₂"),
        "log₁₀": _("log₁₀"),
        "nats": _("nats"),
        "bits": _("bits"),
        "decimal digits": _("decimal digits"),
    }


def log_slips(x: Any, right: str, unit: str, *, inverse: bool = False) -> list[Diagnosis]:
    """The answers computed with the wrong logarithm (or, ``inverse``, the wrong exponential) of ``x``.

    ``right`` names the intended one ("natural log", "log₂" or "log₁₀", a key of :data:`LOGS`); ``unit`` says what
    it measures, already in the current language.
    """
    words = _log_words()
    slips = []
    for name, (log, exp, gives) in LOGS.items():
        if name != right:
            wrong = exp(x) if inverse else log(x)
            slips.append(
                (
                    _("units: that uses the {log} ({gives}); {unit} need the {right}").format(
                        log=words[name],
                        gives=words[gives],
                        unit=unit,
                        right=words[right],
                    ),
                    wrong,
                )
            )
    return slips


def wavelength_slips(i: Any, d: int, base: float) -> list[Diagnosis]:
    """Typical slips when computing λ_i = 2π · base^(2i/d): radians for turns, ω for λ, i for 2i."""
    return [
        (_("units: that is base^(2i/d), tokens per *radian*; a full cycle is 2π radians"), base ** (2 * i / d)),
        (_("that is the frequency ω_i (radians per token); the wavelength is 2π/ω_i"), base ** (-2 * i / d)),
        (_("exponent: the frequency is base^(−2i/d), with 2i, not i"), 2 * np.pi * base ** (i / d)),
    ]


def arrays_from(rng_seed: int, *shapes: tuple[int, ...]) -> list[Floats]:
    """Seeded standard-normal arrays, the given data of an exercise (the same in every run)."""
    rng = np.random.default_rng(rng_seed)
    return [rng.standard_normal(shape) for shape in shapes]
