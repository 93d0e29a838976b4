"""Exercises of notebook 07 (ALiBi): slopes for 8 and 12 heads, the causal bias matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, check_array


def _power_of_two(n: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)


def check_slopes_8(answer: Any) -> Feedback:
    """ALiBi slopes for 8 heads: 2^(−8k/8), k = 1 … 8."""
    want = _power_of_two(8)
    return check_array(
        answer,
        want,
        what="8 slopes, head 1 first",
        diagnoses=[
            ("off by one: k runs 1 … n, so the first slope is 1/2, not 1", 2.0 ** (-np.arange(8))),
            ("order: head 1 has the steepest slope, 1/2; the list falls from there", want[::-1]),
        ],
    )


def check_slopes_12(answer: Any) -> Feedback:
    """The paper's slopes for 12 heads: the 8-head slopes, then every other 16-head slope."""
    want = np.concatenate([_power_of_two(8), _power_of_two(16)[0::2][:4]])
    return check_array(
        answer,
        want,
        what="12 slopes",
        diagnoses=[
            ("that is 2^(−8k/n) with n = 12; the paper uses it only for powers of two", _power_of_two(12)),
            (
                "those extra slopes repeat the first 8 (2^−1, 2^−2, …); take the *other* half of the 16-head list",
                np.concatenate([_power_of_two(8), _power_of_two(16)[1::2][:4]]),
            ),
            (
                "that is the first 12 of the 16-head list; the paper keeps all 8 power-of-two slopes first",
                _power_of_two(16)[:12],
            ),
        ],
    )


def check_causal_bias(answer: Any) -> Feedback:
    """−m·(i − j) on and below the diagonal, −inf above, for T = 5 and m = 0.5."""
    i, j = np.arange(5)[:, None], np.arange(5)[None, :]
    bias = -0.5 * np.abs(i - j)
    causal = np.where(j <= i, bias, -np.inf)
    return check_array(
        answer,
        causal,
        what="a 5 × 5 matrix with -np.inf above the diagonal",
        diagnoses=[
            (
                "no mask: that is the symmetric (bidirectional) bias; a causal query must not see later keys (−inf)",
                bias,
            ),
            (
                "mask: future keys get −inf, not 0 (0 is a bias that still lets them be attended)",
                np.where(j <= i, bias, 0.0),
            ),
            ("sign: a farther key gets a *smaller* score, −m·(i − j) ≤ 0", np.where(j <= i, -bias, -np.inf)),
            ("transposed: the mask is above the diagonal (keys j > i), with rows = queries", causal.T),
        ],
    )


EXERCISES = (
    Exercise(
        key="slopes-8",
        title="Slopes for eight heads",
        prompt="Write ALiBi's slopes $m_h$ for 8 heads, head 1 first, from the formula of §2.",
        hint="$m_k = 2^{-8k/n}$ for $k = 1, \\dots, n$.",
        setup="n_heads = 8",
        stub="answer = None  # 8 slopes",
        solution="answer = 2.0 ** (-8 * np.arange(1, n_heads + 1) / n_heads)",
        check=check_slopes_8,
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
            "then 4 slopes taken from the 16-head list that fall *between* them."
        ),
        hint="The 16-head list is $2^{-k/2}$; its even-indexed entries $2^{-1/2}, 2^{-3/2}, \\dots$ are new.",
        setup="",
        stub="answer = None  # 12 slopes",
        solution=(
            "s8 = 2.0 ** (-8 * np.arange(1, 9) / 8)\n"
            "s16 = 2.0 ** (-8 * np.arange(1, 17) / 16)\n"
            "answer = np.concatenate([s8, s16[0::2][:4]])"
        ),
        check=check_slopes_12,
        mistakes=(
            Mistake("answer = 2.0 ** (-8 * np.arange(1, 13) / 12)", "powers of two"),
            Mistake(
                "s8 = 2.0 ** (-8 * np.arange(1, 9) / 8)\n"
                "s16 = 2.0 ** (-8 * np.arange(1, 17) / 16)\n"
                "answer = np.concatenate([s8, s16[1::2][:4]])",
                "repeat the first 8",
            ),
        ),
    ),
    Exercise(
        key="causal-bias",
        title="A causal bias matrix by hand",
        prompt=(
            "Write the causal ALiBi bias of one head with slope $m = 0.5$ for $T = 5$ tokens: rows are "
            "queries $i$, columns keys $j$, `-np.inf` where the key is in the future. Compare with the bias "
            "slider of §2.3."
        ),
        hint="`np.arange(T)[:, None] - np.arange(T)[None, :]` is $i - j$.",
        setup="T, m = 5, 0.5",
        stub="answer = None  # a 5 × 5 matrix",
        solution=(
            "i, j = np.arange(T)[:, None], np.arange(T)[None, :]\nanswer = np.where(j <= i, -m * (i - j), -np.inf)"
        ),
        check=check_causal_bias,
        mistakes=(
            Mistake("i, j = np.arange(T)[:, None], np.arange(T)[None, :]\nanswer = -m * np.abs(i - j)", "no mask"),
            Mistake(
                "i, j = np.arange(T)[:, None], np.arange(T)[None, :]\nanswer = np.where(j <= i, m * (i - j), -np.inf)",
                "sign",
            ),
            Mistake(
                "i, j = np.arange(T)[:, None], np.arange(T)[None, :]\nanswer = np.where(j >= i, -m * (j - i), -np.inf)",
                "transposed",
            ),
        ),
    ),
)
