"""Exercises of notebook 07 (ALiBi): slopes for 8 and 12 heads, the causal bias matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array


def _power_of_two(n: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)


def check_slopes_8(answer: Any) -> Feedback:
    """ALiBi slopes for 8 heads: μ_h = 2^(−8h/8), h = 1 … 8."""
    want = _power_of_two(8)
    return check_array(
        answer,
        want,
        what=_("8 slopes, head 1 first"),
        diagnoses=[
            (_("off by one: h runs 1 … n_h, so the first slope is 1/2, not 1"), 2.0 ** (-np.arange(8))),
            (_("order: head 1 has the steepest slope, 1/2; the list falls from there"), want[::-1]),
        ],
    )


def check_slopes_12(answer: Any) -> Feedback:
    """The paper's slopes for 12 heads: the 8-head slopes, then every other 16-head slope."""
    want = np.concatenate([_power_of_two(8), _power_of_two(16)[0::2][:4]])
    return check_array(
        answer,
        want,
        what=_("12 slopes"),
        diagnoses=[
            (_("that is 2^(−8h/n_h) with n_h = 12; the paper uses it only for powers of two"), _power_of_two(12)),
            (
                _("those extra slopes repeat the first 8 (2^−1, 2^−2, …); take the *other* half of the 16-head list"),
                np.concatenate([_power_of_two(8), _power_of_two(16)[1::2][:4]]),
            ),
            (
                _("that is the first 12 of the 16-head list; the paper keeps all 8 power-of-two slopes first"),
                _power_of_two(16)[:12],
            ),
        ],
    )


def check_causal_bias(answer: Any) -> Feedback:
    """−μ·(m − n) on and below the diagonal (key n ≤ query m), −inf above, for N = 5 and μ = 0.5."""
    m, n = np.arange(5)[:, None], np.arange(5)[None, :]
    bias = -0.5 * np.abs(m - n)
    causal = np.where(n <= m, bias, -np.inf)
    return check_array(
        answer,
        causal,
        what=_("a 5 × 5 matrix with -np.inf above the diagonal"),
        diagnoses=[
            (
                _("no mask: that is the symmetric (bidirectional) bias; a causal query must not see later keys (−inf)"),
                bias,
            ),
            (
                _("mask: future keys get −inf, not 0 (0 is a bias that still lets them be attended)"),
                np.where(n <= m, bias, 0.0),
            ),
            (_("sign: a farther key gets a *smaller* score, −μ·(m − n) ≤ 0"), np.where(n <= m, -bias, -np.inf)),
            (_("transposed: the mask is above the diagonal (keys n > m), with rows = queries"), causal.T),
        ],
    )


# The numbers the takeaways quote, from the same formulas as the checkers.
_SLOPES_8 = _power_of_two(8)
_EXTRA_12 = _power_of_two(16)[0::2][:4]  # the four 12-head slopes that are not 8-head ones
_MU, _LAST_QUERY = 0.5, 4


EXERCISES = (
    Exercise(
        key="slopes-8",
        title="Slopes for eight heads",
        prompt="Write ALiBi's slopes $\\mu_h$ for $n_h = 8$ heads, head 1 first, from the formula of §2.",
        hint="$\\mu_h = 2^{-8h/n_h}$ for $h = 1, \\dots, n_h$.",
        setup="n_heads = 8",
        stub="answer = None  # 8 slopes",
        solution="answer = 2.0 ** (-8 * np.arange(1, n_heads + 1) / n_heads)",
        check=check_slopes_8,
        takeaway=(
            lambda: _(
                "So the slopes halve from head to head, {first:g} down to 1/{last_inverse:.0f}: head 1 "
                "loses one unit of score per {first_inverse:.0f} tokens of distance and attends locally, "
                "head 8 only per {last_inverse:.0f} tokens and looks far back."
            ).format(first=_SLOPES_8[0], last_inverse=1 / _SLOPES_8[-1], first_inverse=1 / _SLOPES_8[0])
        ),
        mistakes=(
            Mistake("answer = 2.0 ** (-8 * np.arange(n_heads) / n_heads)", "off by one"),
            Mistake("answer = -(2.0 ** (-8 * np.arange(1, n_heads + 1) / n_heads))", "sign"),
            Mistake("answer = 2.0 ** (-8 * np.arange(1, n_heads + 1) / n_heads)[::-1]", "order"),
        ),
    ),
    Exercise(
        key="slopes-12",
        title="Slopes for twelve heads",
        prompt=(
            "12 is not a power of two. Following the paper's rule (§2), write the 12 slopes: the 8-head slopes, "
            "then the first 4 slopes of the 16-head list that are not among them."
        ),
        hint=(
            "The 16-head list is $2^{-h/2}$, $h = 1, \\dots, 16$; its entries at even Python indices "
            "(odd $h$), $2^{-1/2}, 2^{-3/2}, \\dots$, are new."
        ),
        setup="",
        stub="answer = None  # 12 slopes",
        solution=(
            "s8 = 2.0 ** (-8 * np.arange(1, 9) / 8)\n"
            "s16 = 2.0 ** (-8 * np.arange(1, 17) / 16)\n"
            "answer = np.concatenate([s8, s16[0::2][:4]])"
        ),
        check=check_slopes_12,
        takeaway=(
            lambda: _(
                "So heads 9 … 12 get {extra}, each geometrically halfway between two neighbours of the "
                "list 1, {first:g}, …, 1/{last_inverse:.0f} ({first_extra:.3f} between 1 and {first:g}): "
                "the 12 heads span {first_extra:.3f} … 1/{last_inverse:.0f} without repeating a slope."
            ).format(
                extra=_(", ").join(f"{mu:.3f}" for mu in _EXTRA_12),
                first=_SLOPES_8[0],
                last_inverse=1 / _SLOPES_8[-1],
                first_extra=_EXTRA_12[0],
            )
        ),
        mistakes=(
            Mistake("answer = 2.0 ** (-8 * np.arange(1, 13) / 12)", "powers of two"),
            Mistake(
                "s8 = 2.0 ** (-8 * np.arange(1, 9) / 8)\n"
                "s16 = 2.0 ** (-8 * np.arange(1, 17) / 16)\n"
                "answer = np.concatenate([s8, s16[1::2][:4]])",
                "repeat the first 8",
            ),
            Mistake(
                "s8 = 2.0 ** (-8 * np.arange(1, 9) / 8)\n"
                "s16 = 2.0 ** (-8 * np.arange(1, 17) / 16)\n"
                "answer = np.sort(np.concatenate([s8, s16[0::2][:4]]))[::-1]",
                "sorted from largest to smallest",
            ),
        ),
    ),
    Exercise(
        key="causal-bias",
        title="A causal bias matrix by hand",
        prompt=(
            "Write the causal ALiBi bias of one head with slope $\\mu = 0.5$ for $N = 5$ tokens: rows are "
            "queries $m$, columns keys $n$, `-np.inf` where the key is in the future. Compare with the bias "
            "slider of §2.3."
        ),
        hint="`np.arange(N)[:, None] - np.arange(N)[None, :]` is $m - n$.",
        setup="N, mu = 5, 0.5",
        stub="answer = None  # a 5 × 5 matrix",
        solution=(
            "m, n = np.arange(N)[:, None], np.arange(N)[None, :]\nanswer = np.where(n <= m, -mu * (m - n), -np.inf)"
        ),
        check=check_causal_bias,
        takeaway=(
            lambda: _(
                "So the last query (m = {last_query}) adds −{bias:g} to its score on key 0 and 0 on "
                "itself: the penalty grows linearly with distance, and −inf gives future keys weight "
                "exactly 0 after the softmax."
            ).format(last_query=_LAST_QUERY, bias=_MU * _LAST_QUERY)
        ),
        mistakes=(
            Mistake("m, n = np.arange(N)[:, None], np.arange(N)[None, :]\nanswer = -mu * np.abs(m - n)", "no mask"),
            Mistake(
                "m, n = np.arange(N)[:, None], np.arange(N)[None, :]\nanswer = np.where(n <= m, mu * (m - n), -np.inf)",
                "sign",
            ),
            Mistake(
                "m, n = np.arange(N)[:, None], np.arange(N)[None, :]\n"
                "answer = np.where(n >= m, -mu * (n - m), -np.inf)",
                "transposed",
            ),
        ),
    ),
)
