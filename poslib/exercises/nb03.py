"""Exercises of notebook 03 (sinusoidal): wavelengths, the shift matrix of one pair, the dot product by offset."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array, wavelength_slips

D, BASE = 16, 10_000.0


def check_wavelengths(answer: Any) -> Feedback:
    """λ_i = 2π · base^(2i/d) for d = 16."""
    i = np.arange(D // 2)
    return check_array(
        answer,
        2 * np.pi * BASE ** (2 * i / D),
        what=_("an array of 8 wavelengths, in tokens"),
        diagnoses=wavelength_slips(i, D, BASE),
    )


def check_shift_matrix(answer: Any) -> Feedback:
    """M_Δ with (sin ω(p+Δ), cos ω(p+Δ)) = M_Δ (sin ωp, cos ωp), ω = 0.3, Δ = 5."""
    a = 0.3 * 5
    c, s = np.cos(a), np.sin(a)
    return check_array(
        answer,
        [[c, s], [-s, c]],
        what=_("a 2 × 2 matrix"),
        diagnoses=[
            (
                _("sign: that matrix rotates the other way (it shifts by −Δ); expand sin(a + b) and cos(a + b)"),
                [[c, -s], [s, c]],
            ),
            (
                _("units: np.cos and np.sin take radians; ωΔ = 1.5 rad is not 1.5°"),
                [[np.cos(np.radians(a)), np.sin(np.radians(a))], [-np.sin(np.radians(a)), np.cos(np.radians(a))]],
            ),
        ],
    )


def check_dot_by_offset(answer: Any) -> Feedback:
    """PE(m)·PE(n) = Σ_i cos(ω_i (m − n)) for offsets 0 … 20, d = 16."""
    w = BASE ** (-np.arange(0, D, 2) / D)
    offset = np.arange(21)  # m − n
    return check_array(
        answer,
        np.cos(np.outer(offset, w)).sum(axis=1),
        what=_("an array of 21 dot products"),
        diagnoses=[
            (
                _("sin(a)sin(b) + cos(a)cos(b) = cos(a − b): the sines cancel into the cosine, they do not stay"),
                np.sin(np.outer(offset, w)).sum(axis=1),
            ),
            (
                _("off by one: the offsets are 0 … 20 (21 values, the first one is 0)"),
                np.cos(np.outer(offset + 1, w)).sum(axis=1),
            ),
        ],
    )


# The numbers the takeaways quote, from the same formulas as the checkers.
_LAMBDA = 2 * np.pi * BASE ** (2 * np.arange(D // 2) / D)  # wavelength of pairs 0 … 7, tokens
_OMEGA, _DELTA = 0.3, 5
_DOT = np.cos(np.outer(np.arange(21), BASE ** (-np.arange(0, D, 2) / D))).sum(axis=1)  # offsets 0 … 20
_DIP = int(np.argmin(_DOT))  # the offset where the dot product is smallest
_LATER_MAX = _DIP + int(np.argmax(_DOT[_DIP:]))  # and the largest value after that dip
_FIRST_RISE = int(np.flatnonzero(np.diff(_DOT) > 0)[0])  # the first offset after which it grows again
_BUMP = _FIRST_RISE + int(np.flatnonzero(np.diff(_DOT[_FIRST_RISE:]) < 0)[0])  # where that first rise ends


EXERCISES = (
    Exercise(
        key="wavelengths",
        title="Every pair's wavelength",
        prompt=(
            "For $d = 16$ and base $10\\,000$, compute the wavelength $\\lambda_i$ (tokens per full cycle) of "
            "every pair $i = 0, \\dots, 7$. The wave slider above shows them one at a time."
        ),
        hint="$\\omega_i = \\text{base}^{-2i/d}$ radians per token; a cycle is $2\\pi$ radians.",
        setup="d, base = 16, 10_000.0",
        stub="answer = None  # 8 wavelengths",
        solution="answer = 2 * np.pi * base ** (2 * np.arange(d // 2) / d)",
        check=check_wavelengths,
        takeaway=(
            lambda: _(
                "So the wavelengths grow by a factor base^(2/d) ≈ {factor:.2f} per pair, from "
                "{fastest:.2f} tokens for pair 0 to about {slowest:,.0f} for pair {last_pair}: fast pairs "
                "tell neighbours apart, slow ones tell far positions apart."
            ).format(factor=BASE ** (2 / D), fastest=_LAMBDA[0], slowest=_LAMBDA[-1], last_pair=D // 2 - 1)
        ),
        mistakes=(
            Mistake("answer = base ** (2 * np.arange(d // 2) / d)", "units"),
            Mistake("answer = 2 * np.pi * base ** (np.arange(d // 2) / d)", "exponent"),
            Mistake("answer = 2 * np.pi * base ** (2 * np.arange(d) / d)", "length: your answer has 16 entries"),
            # issue 24: pairs 1 … 8 for 0 … 7 is named as the shift it is, before the factor 3.16 it also is
            Mistake(
                "answer = 2 * np.pi * base ** (2 * np.arange(1, d // 2 + 1) / d)",
                "off by one: your answer is the expected values shifted by one place",
            ),
            Mistake(
                "answer = np.pi * base ** (2 * np.arange(d // 2) / d)", "scale: your answer is 0.5 × the expected value"
            ),
        ),
    ),
    Exercise(
        key="shift-matrix",
        title="The shift matrix of one pair",
        prompt=(
            "One pair holds $(\\sin\\omega p, \\cos\\omega p)$. Write the $2\\times 2$ matrix $M_\\Delta$ that "
            "maps it to $(\\sin\\omega(p+\\Delta), \\cos\\omega(p+\\Delta))$ for every $p$, with $\\omega = 0.3$ "
            "and $\\Delta = 5$. It must not depend on $p$: that is the claim of the section on $M_\\Delta$."
        ),
        hint="$\\sin(a+b) = \\sin a\\cos b + \\cos a \\sin b$ and $\\cos(a+b) = \\cos a\\cos b - \\sin a\\sin b$.",
        setup="omega, delta = 0.3, 5",
        stub="answer = None  # a 2 × 2 matrix",
        solution=("c, s = np.cos(omega * delta), np.sin(omega * delta)\nanswer = np.array([[c, s], [-s, c]])"),
        check=check_shift_matrix,
        takeaway=(
            lambda: _(
                "So M_Δ holds only cos ωΔ and sin ωΔ, with ωΔ = {angle:g} rad: p appears nowhere, so one "
                "fixed matrix shifts every position by Δ, which is what lets a linear layer read off "
                "offsets."
            ).format(angle=_OMEGA * _DELTA)
        ),
        mistakes=(
            Mistake(
                "c, s = np.cos(omega * delta), np.sin(omega * delta)\nanswer = np.array([[c, -s], [s, c]])", "sign"
            ),
            Mistake(
                "a = np.radians(omega * delta)\nanswer = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])",
                "units",
            ),
        ),
    ),
    Exercise(
        key="dot-by-offset",
        title="The dot product as a function of the offset",
        prompt=(
            "Show that $\\mathrm{PE}(m)\\cdot\\mathrm{PE}(n)$ depends only on the offset $m - n$ by writing it as a "
            "sum over pairs, then compute it for $m - n = 0, \\dots, 20$ with $d = 16$, base $10\\,000$. "
            "At $m = n$ you should get $d/2$."
        ),
        hint="Each pair contributes $\\sin(\\omega_i m)\\sin(\\omega_i n) + \\cos(\\omega_i m)\\cos(\\omega_i n)$.",
        setup="d, base, offset = 16, 10_000.0, np.arange(21)  # offset = m − n",
        stub="answer = None  # 21 dot products",
        solution="w = base ** (-np.arange(0, d, 2) / d)\nanswer = np.cos(np.outer(offset, w)).sum(axis=1)",
        check=check_dot_by_offset,
        takeaway=(
            lambda: _(
                "So the dot product is Σ_i cos(ω_i (m − n)), a function of m − n alone; from {start:g} at "
                "m = n it already rises again between offsets {first_rise} and {bump} ({low:.2f} → "
                "{bump2:.2f}), reaches its smallest value, {dip:.2f}, at offset {dip2} and climbs back to "
                "{later:.2f} at offset {later_max}: with d = {d} it is not a monotone measure of distance."
            ).format(
                start=_DOT[0],
                first_rise=_FIRST_RISE,
                bump=_BUMP,
                low=_DOT[_FIRST_RISE],
                bump2=_DOT[_BUMP],
                dip=_DOT[_DIP],
                dip2=_DIP,
                later=_DOT[_LATER_MAX],
                later_max=_LATER_MAX,
                d=D,
            )
        ),
        mistakes=(
            Mistake(
                "w = base ** (-np.arange(0, d, 2) / d)\nanswer = np.sin(np.outer(offset, w)).sum(axis=1)",
                "sines cancel",
            ),
            Mistake(
                "w = base ** (-np.arange(0, d, 2) / d)\nanswer = 2 * np.cos(np.outer(offset, w)).sum(axis=1)",
                "scale: your answer is 2 × the expected value",
            ),
        ),
    ),
)
