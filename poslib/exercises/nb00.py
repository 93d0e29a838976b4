"""Exercises of notebook 00 (the tour): a wavelength, the RoPE angles at one position, the log-n factor."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array, wavelength_slips

D, BASE = 64, 10_000.0

# What the two questions after the numbers ask, answered from the same formulas (the takeaways below).
_LAMBDA = 2 * np.pi * BASE ** (2 * np.arange(D // 2) / D)  # wavelength of each pair, tokens
_CYCLING = np.flatnonzero(_LAMBDA <= 127)  # pairs that turn once within positions 0 … 127
_ANGLES_100 = 100 * BASE ** (-np.arange(0, D, 2) / D)  # RoPE's angles at m = 100
_UNDER_ONE = np.flatnonzero(_ANGLES_100 < 1)  # pairs that have turned less than one radian


def check_slowest_wavelength(answer: Any) -> Feedback:
    """λ of the slowest sinusoidal pair (d = 64, base 10 000), in tokens per full cycle."""
    i = D // 2 - 1
    return check_array(
        answer,
        2 * np.pi * BASE ** (2 * i / D),
        what=_("the wavelength of pair 31 in tokens (a float)"),
        diagnoses=[
            (
                _("off by one: the pairs are i = 0 … d/2 − 1, so the slowest is i = 31 (exponent 62/64)"),
                2 * np.pi * BASE,
            ),
            *wavelength_slips(i, D, BASE),
        ],
        # 1e-4: the question asks how many tokens, and the takeaway answers "about 47,117" (whole tokens, 5
        # significant digits, 5.2e-6 off); at the default 1e-6 that, its own value, was called a rounding slip.
        # The nearest diagnosed slip, 2π·base = 62,832, is 33 % away.
        rtol=1e-4,
    )


def check_rope_angles(answer: Any) -> Feedback:
    """The 32 RoPE angles m·θ_i at position m = 100 (d = 64, base 10 000), in radians."""
    theta = BASE ** (-np.arange(0, D, 2) / D)
    return check_array(
        answer,
        100 * theta,
        what=_("an array of 32 angles in radians"),
        diagnoses=[
            (
                _("exponent: θ_i = base^(−2i/d) uses the even indices 0, 2, …, 62 over d"),
                100 * BASE ** (-np.arange(32) / D),
            ),
            (
                _("off by one: the pairs start at i = 0 (θ_0 = 1), not i = 1"),
                100 * BASE ** (-np.arange(2, D + 2, 2) / D),
            ),
            (_("shape: one angle per *pair*: d/2 = 32 entries, not d = 64"), 100 * BASE ** (-np.arange(D) / D)),
        ],
    )


def check_logn(answer: Any) -> Feedback:
    """max(1, log N / log L_train) for N = 128, 512, 4096 keys and L_train = 512."""
    N = np.array([128.0, 512.0, 4096.0])
    return check_array(
        answer,
        np.maximum(1.0, np.log(N) / np.log(512.0)),
        what=_("an array of three factors"),
        diagnoses=[
            (
                _("clamp: below the training length the factor stays 1 (max(1, …)); 7/9 would flatten attention"),
                np.log(N) / np.log(512.0),
            ),
            (
                _("inverted: the factor is log N / log L_train, which grows with N"),
                np.minimum(1.0, np.log(512.0) / np.log(N)),
            ),
            (
                _("that is the ratio of lengths N / L_train; the factor is the ratio of their logarithms"),
                np.maximum(1.0, N / 512.0),
            ),
        ],
    )


_N_LOGN = np.array([128.0, 512.0, 4096.0])
_LOGN = np.maximum(1.0, np.log(_N_LOGN) / np.log(512.0))  # the log-n factor at those key counts


EXERCISES = (
    Exercise(
        key="slowest-wavelength",
        title="The slowest sinusoidal pair",
        prompt=(
            "The sinusoidal heatmap above has $d = 64$ and base $10\\,000$. Pair $i$ turns at $\\omega_i = "
            "\\text{base}^{-2i/d}$ radians per token. How many tokens does the **slowest** pair need for one "
            "full cycle (its wavelength $\\lambda$)? Compare with the 128 positions drawn: does any column of "
            "the heatmap finish a cycle?"
        ),
        hint=(
            "The pairs are $i = 0, \\dots, d/2 - 1$; a full cycle is $2\\pi$ radians, "
            "so $\\lambda_i = 2\\pi/\\omega_i$."
        ),
        setup="d, base = 64, 10_000.0",
        stub="answer = None  # the wavelength of pair 31, in tokens",
        solution="answer = 2 * np.pi * base ** (2 * 31 / d)  # ≈ 4.7e4 tokens, far beyond 128",
        check=check_slowest_wavelength,
        takeaway=(
            lambda: _(
                "So the slowest pair needs about {slowest:,.0f} tokens per cycle and its columns barely "
                "change over the 128 positions drawn; only pairs 0 … {last_cycling} (λ up to "
                "{longest_cycling:.0f} tokens), the first {columns} of the {d} columns, finish a cycle "
                "there."
            ).format(
                slowest=_LAMBDA[-1],
                last_cycling=_CYCLING[-1],
                longest_cycling=_LAMBDA[_CYCLING[-1]],
                columns=2 * len(_CYCLING),
                d=D,
            )
        ),
        mistakes=(
            Mistake("answer = base ** (2 * 31 / d)", "2π radians"),
            Mistake("answer = 2 * np.pi * base", "off by one"),
            Mistake('answer = "47117"', "a string, not a number"),
        ),
    ),
    Exercise(
        key="rope-angles",
        title="RoPE's angles at one position",
        prompt=(
            "RoPE rotates pair $i$ of a query at position $m$ by the angle $m\\,\\theta_i$, "
            "$\\theta_i = \\text{base}^{-2i/d}$. With $d = 64$ and base $10\\,000$, compute all the angles at "
            "$m = 100$, in radians, pair 0 first. Which pairs have turned less than one radian?"
        ),
        hint="`np.arange(0, d, 2)` gives the even indices $2i$.",
        setup="d, base, m = 64, 10_000.0, 100",
        stub="answer = None  # an array of d/2 angles, radians",
        solution="answer = m * base ** (-np.arange(0, d, 2) / d)",
        check=check_rope_angles,
        takeaway=(
            lambda: _(
                "So pairs {first} … {last} ({count} of the {pairs}) have turned less than one radian at m "
                "= 100; pair {pair} sits at {angle:.0f} rad exactly, since its θ is base^(−1/2) = 1/100."
            ).format(
                first=_UNDER_ONE[0],
                last=_UNDER_ONE[-1],
                count=len(_UNDER_ONE),
                pairs=D // 2,
                pair=_UNDER_ONE[0] - 1,
                angle=_ANGLES_100[_UNDER_ONE[0] - 1],
            )
        ),
        mistakes=(
            Mistake("answer = m * base ** (-np.arange(d) / d)", "one angle per *pair*"),
            Mistake("answer = np.degrees(m * base ** (-np.arange(0, d, 2) / d))", "units"),
            Mistake("answer = m * base ** (-np.arange(2, d + 2, 2) / d)", "off by one"),
        ),
    ),
    Exercise(
        key="logn-factor",
        title="The log-n factor",
        prompt=(
            "The last figure scales the scores over $N$ keys by $\\max(1, \\log N / \\log L_{train})$. For a model "
            "trained at $L_{train} = 512$, compute the factor at $N = 128, 512, 4096$."
        ),
        hint="Any logarithm base works for the ratio; the clamp matters below $L_{train}$.",
        setup="L_train, N = 512, np.array([128, 512, 4096])",
        stub="answer = None  # three factors",
        solution="answer = np.maximum(1.0, np.log(N) / np.log(L_train))",
        check=check_logn,
        takeaway=(
            lambda: _(
                "So the factor stays {short:g} up to the training length and reaches only {long:.3g} at N "
                "= {n:.0f}, {times:.0f} times L_train: it sharpens attention only past the length the "
                "model was trained at, and grows with the logarithm of N, not with N."
            ).format(short=_LOGN[0], long=_LOGN[-1], n=_N_LOGN[-1], times=_N_LOGN[-1] / 512)
        ),
        mistakes=(
            Mistake("answer = np.log(N) / np.log(L_train)", "clamp"),
            Mistake("answer = np.maximum(1.0, N / L_train)", "ratio of lengths"),
        ),
    ),
)
