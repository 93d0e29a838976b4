"""Exercises of notebook 13 (position in late-2026 models): Gemma 4's proportional frequencies, a rotated value's
turn, and which pairs VideoRoPE gives to time."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array

# 13.1: a small proportional head: 16 features, a quarter of them turning, base 10⁴
HEAD, PARTIAL, BASE = 16, 0.25, 1e4
# 13.2: query and value positions and one pair's frequency
QUERY, VALUE, THETA = 7, 3, 0.5
# 13.3: VideoRoPE's sections for a 32-wide head: [n_t, n_h, n_w]
SECTION = (4, 6, 6)


def _proportional(head: int, partial: float, base: float) -> np.ndarray:
    n = int(partial * head // 2)
    i = np.arange(head // 2)
    return np.where(i < n, base ** (-2.0 * i / head), 0.0)


def check_proportional_freq(answer: Any) -> Feedback:
    """Gemma 4's proportional inv_freq for head_dim 16, partial_rotary_factor 0.25, base 10⁴: 8 entries, 2 non-zero."""
    want = _proportional(HEAD, PARTIAL, BASE)
    rotated = int(HEAD * PARTIAL)
    over_rotated = np.zeros(HEAD // 2)
    over_rotated[: rotated // 2] = BASE ** (-2.0 * np.arange(rotated // 2) / rotated)
    got = np.asarray(answer, dtype=np.float64) if _numbers(answer) else None
    turning = int(np.count_nonzero(got)) if got is not None and got.shape == want.shape else None
    if turning is not None and turning not in (int(np.count_nonzero(want)), HEAD // 2):
        # a count of turning pairs other than 2 (or all 8, diagnosed below) is the slip, whatever the values
        return Feedback(
            False,
            _(
                "too many or too few turning pairs: {got} of your 8 frequencies are non-zero; "
                "⌊0.25·16/2⌋ = {want} pairs turn (a quarter of 16 features is 4 features, 2 pairs)"
            ).format(got=turning, want=int(np.count_nonzero(want))),
        )
    return check_array(
        answer,
        want,
        what=_("8 frequencies, pair 0 first"),
        diagnoses=[
            (
                _(
                    "the exponent runs over the rotated features (the Qwen3.5 rule): Gemma 4's proportional rule "
                    "counts it over the whole head, base^(−2i/16)"
                ),
                over_rotated,
            ),
            (
                _("every pair turns: only the first ⌊0.25·16/2⌋ = 2 pairs do, the other 6 get frequency 0"),
                BASE ** (-2.0 * np.arange(HEAD // 2) / HEAD),
            ),
            (_("only the turning pairs: the head has 8 pairs, the 6 slowest at frequency 0"), want[:2]),
        ],
    )


def check_value_turn(answer: Any) -> Feedback:
    """The angle by which value n = 3's rotated pair reaches query m = 7's output: (n − m)·θ = −2 rad."""
    want = (VALUE - QUERY) * THETA
    if _numbers(answer) and np.ndim(answer) == 0:
        turns = round((float(answer) - want) / (2 * np.pi))
        if turns != 0 and abs(float(answer) - 2 * np.pi * turns - want) < 1e-6:
            # an angle a whole number of turns away rotates the pair the same way: right, and said so
            return Feedback(
                True,
                _("right: {answer} rad is (n − m)·θ = {want} rad plus {turns} × 2π, the same rotation.").format(
                    answer=f"{float(answer):.4g}".replace("-", "\u2212"),
                    want=f"{want:.1f}".replace("-", "\u2212"),
                    turns=f"{turns}".replace("-", "\u2212"),
                ),
            )
    return check_array(
        answer,
        want,
        what=_("one angle in radians"),
        diagnoses=[
            (_("sign: the output turns back by −m, so the value's R_n becomes R_(n−m): (n − m)·θ"), -want),
            (_("that is R_n alone: the turn back by the query's position (−m) is missing"), VALUE * THETA),
            (_("the turn back went the wrong way (+m): R_(m+n); it turns by −m"), (VALUE + QUERY) * THETA),
        ],
    )


def _numbers(answer: Any) -> bool:
    # a real number or an array of them (strings, None and ragged lists are left to check_array's messages)
    try:
        return bool(np.isfinite(np.asarray(answer, dtype=np.float64)).all()) and not isinstance(answer, str | bytes)
    except (TypeError, ValueError):
        return False


def _videorope_t_pairs(section: tuple[int, int, int]) -> np.ndarray:
    n_t, n_h, n_w = section
    return np.arange(n_h + n_w, n_t + n_h + n_w)


def check_videorope_time(answer: Any) -> Feedback:
    """The pairs (fastest = 0) that follow t under VideoRoPE with mrope_section [4, 6, 6]: the 4 slowest, 12 … 15."""
    want = _videorope_t_pairs(SECTION)
    return check_array(
        np.sort(np.asarray(answer, dtype=np.float64)) if answer is not None and np.ndim(answer) == 1 else answer,
        want,
        what=_("the 4 pair indices, 0 = the fastest"),
        diagnoses=[
            (
                _("that is Qwen2-VL's M-RoPE: time on the fastest pairs; VideoRoPE gives time the slowest"),
                np.arange(SECTION[0]),
            ),
            (_("off by one: there are 16 pairs, 0 … 15, and time takes the last 4"), want + 1),
        ],
    )


EXERCISES = (
    Exercise(
        key="proportional-freq",
        title="Gemma 4's proportional frequencies",
        prompt=(
            'A head of $16$ features with `rope_type: "proportional"`, `partial_rotary_factor` $0.25$ and base '
            "$10^4$. Write its `inv_freq` as Gemma 4 does: one frequency per pair $i = 0, \\dots, 7$, the exponent "
            "over the whole head, zero for the pairs that do not turn."
        ),
        hint="$\\lfloor 0.25 \\cdot 16 / 2 \\rfloor = 2$ pairs turn at $\\theta_i = b^{-2i/16}$; the rest get 0.",
        setup="head_dim, partial, base = 16, 0.25, 1e4",
        stub="answer = None  # 8 frequencies, pair 0 first",
        solution=(
            "i = np.arange(head_dim // 2)\n"
            "n = int(partial * head_dim // 2)\n"
            "answer = np.where(i < n, base ** (-2.0 * i / head_dim), 0.0)"
        ),
        check=check_proportional_freq,
        takeaway=(
            lambda: _(
                "So pair 1 turns at {slow:.3f} rad per token, not {fast:.3f} as the rotated-dims rule would make "
                "it, and 6 of the 8 pairs carry no position at all."
            ).format(slow=BASE ** (-2 / HEAD), fast=BASE ** (-2 / (HEAD * PARTIAL)))
        ),
        mistakes=(
            Mistake(
                "i = np.arange(head_dim // 2)\nanswer = np.where(i < 2, base ** (-2.0 * i / 4), 0.0)",
                "rotated features",
            ),
            Mistake("answer = base ** (-2.0 * np.arange(8) / 16)", "every pair"),
            Mistake("answer = base ** (-2.0 * np.arange(2) / 16)", "only the turning"),
            Mistake(
                "i = np.arange(head_dim // 2)\n"
                "answer = np.where(i < int(partial * head_dim), base ** (-2.0 * i / head_dim), 0.0)",
                "too many or too few",
            ),
        ),
    ),
    Exercise(
        key="value-turn",
        title="A rotated value, turned back",
        prompt=(
            "In DeepSeek-V4's attention the value of token $n = 3$ is rotated by $R_{\\Theta,n}$ with the keys, "
            "and the output of query $m = 7$ is turned back by $R_{\\Theta,m}^\\top$. One pair has "
            "frequency $\\theta = 0.5$: by what angle, in radians, is that pair of value 3 turned when it reaches "
            "query 7's output?"
        ),
        hint="$R_{\\Theta,m}^\\top R_{\\Theta,n} = R_{\\Theta,n-m}$: the angle is $(n - m)\\,\\theta$.",
        setup="m, n, theta = 7, 3, 0.5",
        stub="answer = None  # one angle in radians",
        solution="answer = (n - m) * theta  # ≈ -2.0",
        check=check_value_turn,
        takeaway=(
            lambda: _(
                "So the value 4 tokens back is turned by {angle} rad, whatever m and n are, as long as n − m = −4: "
                "its contribution depends on distance only."
            ).format(angle=f"{(VALUE - QUERY) * THETA:.1f}".replace("-", "\u2212"))
        ),
        mistakes=(
            Mistake("answer = (m - n) * theta", "sign"),
            Mistake("answer = n * theta", "turn back"),
            Mistake("answer = (m + n) * theta", "wrong way"),
        ),
    ),
    Exercise(
        key="videorope-time",
        title="Which pairs does VideoRoPE give to time?",
        prompt=(
            "A 32-wide head has $16$ frequency pairs, pair $0$ the fastest. VideoRoPE with `mrope_section` "
            "$[4, 6, 6]$ alternates $h$ and $w$ over the fastest pairs and gives time the rest. Which 4 pairs "
            'follow $t$? (Check with `P.mm_rope_pair_axes([4, 6, 6], "videorope")`.)'
        ),
        hint="$h$ and $w$ take the first $6 + 6 = 12$ pairs; $t$ the last 4.",
        setup="section = [4, 6, 6]",
        stub="answer = None  # 4 pair indices",
        solution="answer = np.arange(12, 16)",
        check=check_videorope_time,
        takeaway=(
            lambda: _(
                "So time turns only at the 4 slowest frequencies: a frame index in the thousands barely turns them, "
                "where Qwen2-VL's time pairs (0 … 3) wrap within a few frames."
            )
        ),
        mistakes=(
            Mistake("answer = np.arange(4)", "Qwen2-VL"),
            Mistake("answer = np.arange(13, 17)", "off by one"),
        ),
    ),
)
