"""Exercises of notebook 05 (RoPE): the base that stops a pair turning, the half layout, one rotation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array, not_answered

D, PAIR, LAST = 128, 20, 4095


def _base_for(pair: int, last: int, full_turn: float = 2 * np.pi) -> float:
    # last · b^(−2·pair/d) = 2π  ⇔  b = (last / 2π)^(d / (2·pair)); for pair 20, d = 128: ≈ 1.01e9
    return float((last / full_turn) ** (D / (2 * pair)))


def check_never_turn_base(answer: Any) -> Feedback:
    """The smallest base at which pair 20 (d = 128) stays under one full turn up to position 4095."""
    return check_array(
        answer,
        _base_for(PAIR, LAST),
        what=_("the smallest base, a float"),
        diagnoses=[
            (
                _("off by one: positions run 0 … 4095, so the largest angle is 4095·θ_20, not 4096·θ_20"),
                _base_for(PAIR, LAST + 1),
            ),
            (
                _("exponent: θ_i = b^(−2i/d), with 2i; solving it gives b = (4095/2π)^(d/(2i))"),
                _base_for(PAIR // 2, LAST),
            ),
            (_("units: a full turn is 2π radians, not 1"), _base_for(PAIR, LAST, 1.0)),
            (
                _("off by one: that is the base for pair 19 or 21; the pairs are numbered from 0"),
                _base_for(PAIR - 1, LAST),
            ),
            (
                _("off by one: that is the base for pair 19 or 21; the pairs are numbered from 0"),
                _base_for(PAIR + 1, LAST),
            ),
        ],
        # 1e-4: an answer typed to 5 significant digits (rel. error up to 5e-5) is right, while the
        # nearest diagnosed slip (4096 for 4095) differs by a factor 1.00078 and stays distinguishable
        rtol=1e-4,
    )


def _perm(d: int) -> np.ndarray[Any, np.dtype[np.int64]]:
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def check_to_half(answer: Any) -> Feedback:
    """A function that turns interleaved-layout features (…, d) into the half layout."""
    if answer is None:
        return not_answered(_("a function `to_half(v)`"))
    if not callable(answer):
        return Feedback(
            False, _("type: answer should be a function of v, got {type}").format(type=type(answer).__name__)
        )
    to_half: Callable[[Any], Any] = answer
    rng = np.random.default_rng(5)
    for shape in [(3, 16), (2, 4, 8)]:
        v = rng.standard_normal(shape)
        d = shape[-1]
        perm = _perm(d)
        try:
            got = np.asarray(to_half(v.copy()), dtype=np.float64)
        except Exception as err:  # the learner's function may fail in any way; say how
            return Feedback(
                False,
                _("your function raised {type}: {err} (on an input of shape {shape})").format(
                    type=type(err).__name__, err=err, shape=shape
                ),
            )
        if got.shape != v.shape:
            return Feedback(
                False, _("shape: to_half must keep the shape {shape}, got {got}").format(shape=shape, got=got.shape)
            )
        if np.array_equal(got, v[..., perm]):
            continue
        if np.array_equal(got, v):
            return Feedback(
                False, _("layout: the features came back unchanged; the pairs (0,1), (2,3), … must be split")
            )
        if np.array_equal(got, v[..., np.argsort(perm)]):
            return Feedback(
                False, _("layout: that is the inverse, half → interleaved; the first half holds 0, 2, 4, …")
            )
        if np.array_equal(got, v[..., np.concatenate([np.arange(1, d, 2), np.arange(0, d, 2)])]):
            return Feedback(
                False, _("layout: the halves are swapped; the first half holds the first element of each pair")
            )
        if sorted(got.ravel().tolist()) == sorted(v.ravel().tolist()):
            return Feedback(
                False, _("layout: the features are moved along the wrong axis; the layout is the last axis")
            )
        return Feedback(
            False, _("values: to_half(v) is not a reordering of v's features (input shape {shape})").format(shape=shape)
        )
    return Feedback(True, _("your to_half is right."))


def check_rotated_pair(answer: Any) -> Feedback:
    """R(mθ) q for q = (2, 1), θ = 0.25, m = 6."""
    q, a = np.array([2.0, 1.0]), 6 * 0.25

    def rot(t: float, v: np.ndarray[Any, np.dtype[np.float64]] = q) -> np.ndarray[Any, np.dtype[np.float64]]:
        return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]) @ v

    return check_array(
        answer,
        rot(a),
        what=_("the rotated pair, 2 numbers"),
        diagnoses=[
            (_("sign: that rotates clockwise, by −mθ; RoPE's R(mθ) turns counter-clockwise"), rot(-a)),
            (_("units: np.cos and np.sin take radians; mθ = 1.5 rad, not 1.5°"), rot(np.radians(a))),
            (
                _(
                    "units: np.cos and np.sin take radians; np.degrees turned mθ = {a:g} rad into "
                    "{degrees:.1f}, which they read as {degrees:.1f} radians"
                ).format(a=a, degrees=np.degrees(a)),
                rot(np.degrees(a)),
            ),
            (_("off by one: the position is m = 6, the angle 6θ"), rot(a + 0.25)),
            (_("order: your x and y are swapped; the pair is (x, y), x first"), rot(a)[::-1]),
            (_("order: that rotates (1, 2); q = (2, 1) has x = 2 and y = 1, in that order"), rot(a, q[::-1])),
        ],
    )


# The numbers the takeaways quote, from the same formulas as the checkers.
_NEVER_TURN = _base_for(PAIR, LAST)
_TURNS_AT_10K = LAST * 10_000.0 ** (-2 * PAIR / D) / (2 * np.pi)  # pair 20's full turns by 4095 at base 10 000


def _sci(x: float) -> str:
    """1.01e9, not 1.01e+09."""
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{mantissa}e{int(exponent)}"


_HALF_ORDER = _perm(8)  # where the half layout takes its features from, d = 8
_Q, _ANGLE = np.array([2.0, 1.0]), 6 * 0.25
_ROTATED = np.array([[np.cos(_ANGLE), -np.sin(_ANGLE)], [np.sin(_ANGLE), np.cos(_ANGLE)]]) @ _Q
_ROTATED_TEXT = f"({_ROTATED[0]:.3f}, {_ROTATED[1]:.3f})".replace("-", "−")


EXERCISES = (
    Exercise(
        key="never-turn-base",
        title="A base at which pair 20 never completes a turn",
        prompt=(
            "In the wavelength figure of §7, pairs to the right of the $L_{train}$ line never complete a turn "
            "during training. With $d = 128$, what is the smallest base for which pair $i = 20$ stays below one "
            "full turn at every position $0, \\dots, 4095$? (Base $b = 10\\,000$ is far below it.)"
        ),
        hint="Solve $4095\\,\\theta_{20} = 2\\pi$ for the base $b$, with $\\theta_i = b^{-2i/d}$.",
        setup="d, pair, last = 128, 20, 4095",
        stub="answer = None  # the smallest base, a float",
        solution="answer = (last / (2 * np.pi)) ** (d / (2 * pair))  # ≈ 1.01e9",
        check=check_never_turn_base,
        takeaway=(
            lambda: _(
                "So the base must be about {base}, {times} times 10 000; at base 10 000 pair {pair} turns "
                "{turns:.1f} times by position {last}. Which pairs never complete a turn is set by "
                "the base, the knob that NTK-aware scaling and Llama 3's base 500 000 turn."
            ).format(
                base=_sci(_NEVER_TURN),
                times=_sci(_NEVER_TURN / 10_000),
                pair=PAIR,
                turns=_TURNS_AT_10K,
                last=LAST,
            )
        ),
        mistakes=(
            Mistake("answer = (4096 / (2 * np.pi)) ** (d / (2 * pair))", "off by one"),
            Mistake("answer = (last / (2 * np.pi)) ** (d / pair)", "exponent"),
            Mistake("answer = last ** (d / (2 * pair))", "2π radians"),
        ),
    ),
    Exercise(
        key="to-half",
        title="The half layout from the interleaved one",
        prompt=(
            "Write `to_half(v)`: given features in the interleaved layout (pairs $(0,1), (2,3), \\dots$ on the "
            "last axis), return them in the half layout of §8 (pairs $(i, i + d/2)$), so that rotating in one "
            "layout equals rotating in the other up to this reordering."
        ),
        hint=(
            "The first half takes the first element of every pair: indices $0, 2, 4, \\dots$; "
            "the second half $1, 3, 5, \\dots$"
        ),
        setup="",
        stub="answer = None  # a function: to_half(v) -> v reordered",
        solution=(
            "def to_half(v):\n    return np.concatenate([v[..., 0::2], v[..., 1::2]], axis=-1)\n\n\nanswer = to_half"
        ),
        check=check_to_half,
        takeaway=(
            lambda: _(
                "So the half layout is one fixed reordering of the features ({order} for d = 8): a model "
                "stored in one layout runs in the other, with the same scores, once the output features of "
                "W_q and W_k are permuted the same way."
            ).format(order=_(", ").join(map(str, _HALF_ORDER)))
        ),
        mistakes=(
            Mistake("answer = lambda v: np.concatenate([v[..., 1::2], v[..., 0::2]], axis=-1)", "halves are swapped"),
            Mistake("answer = lambda v: np.concatenate([v[..., 0::2], v[..., 1::2]], axis=0)", "shape"),
            Mistake(
                "def answer(v):\n    d = v.shape[-1]\n    out = np.empty_like(v)\n"
                "    out[..., 0::2], out[..., 1::2] = v[..., : d // 2], v[..., d // 2 :]\n    return out",
                "inverse",
            ),
        ),
    ),
    Exercise(
        key="rotated-pair",
        title="Rotate one pair by hand",
        prompt=(
            "Pair $i$ of a query at position $m$ is rotated by $m\\theta_i$. Rotate $q = (2, 1)$ with "
            "$\\theta = 0.25$ at $m = 6$, as the clock of §5 does."
        ),
        hint=(
            "$R(m\\theta) = \\begin{pmatrix}\\cos m\\theta & -\\sin m\\theta\\\\ "
            "\\sin m\\theta & \\cos m\\theta\\end{pmatrix}$, in radians."
        ),
        setup="q, theta, m = np.array([2.0, 1.0]), 0.25, 6",
        stub="answer = None  # the rotated pair",
        solution=("a = m * theta\nanswer = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ q"),
        check=check_rotated_pair,
        takeaway=(
            lambda: _(
                "So q turns to {rotated_text}: its length stays {length:.3f} (√5) and its direction moves "
                "counter-clockwise by mθ = {angle:g} rad, about {degrees:.0f}°."
            ).format(rotated_text=_ROTATED_TEXT, length=np.linalg.norm(_Q), angle=_ANGLE, degrees=np.degrees(_ANGLE))
        ),
        mistakes=(
            Mistake("a = m * theta\nanswer = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]) @ q", "sign"),
            Mistake(
                "a = np.radians(m * theta)\nanswer = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ q",
                "units",
            ),
            Mistake(
                "a = (m + 1) * theta\nanswer = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ q",
                "off by one",
            ),
            Mistake(
                "a = np.degrees(m * theta)\nanswer = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ q",
                "np.degrees turned",
            ),
            Mistake(
                "a = m * theta\nanswer = (np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]) @ q)[::-1]",
                "x and y are swapped",
            ),
        ),
    ),
)
