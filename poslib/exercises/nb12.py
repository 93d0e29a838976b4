"""Exercises of notebook 12 (position from the data): FoX's bias row, stick-breaking weights, two reflections."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array

# 12.1: the log forget gates of six tokens; token 3 closes its gate (a "reset")
LOG_F = np.array([-0.1, -0.5, -0.2, -2.0, -0.3, -0.1])
# 12.2: a constant β and the number of keys before the query
BETA, N_KEYS = 0.3, 6
# 12.3: the directions of the two normals, in degrees
ANGLE_A, ANGLE_B = 15.0, 40.0


def _fox_row(log_f: np.ndarray) -> np.ndarray:
    lam = np.cumsum(log_f)
    return np.asarray(lam[-1] - lam, dtype=np.float64)  # Σ_{t=n+1..m} log f_t, m the last token


def check_fox_bias(answer: Any) -> Feedback:
    """FoX's bias of the last query m = 5 over the keys n = 0 … 5: Σ_{t=n+1..m} log f_t."""
    want = _fox_row(LOG_F)
    lam = np.cumsum(LOG_F)
    return check_array(
        answer,
        want,
        what=_("6 numbers, key n = 0 first"),
        diagnoses=[
            (
                _("from n: the sum starts at t = n + 1, the key's own gate is not counted (the diagonal keeps bias 0)"),
                want + LOG_F,
            ),
            (_("sign: the log gates are ≤ 0, so the bias is ≤ 0: Λ_m − Λ_n, not Λ_n − Λ_m"), -want),
            (
                _("that is Λ_n, the sum of the gates up to the key; the bias is what comes after it, Λ_m − Λ_n"),
                lam,
            ),
        ],
    )


def _stick(beta: float, n: int) -> np.ndarray:
    t = np.arange(1, n + 1)
    return np.asarray(beta * (1 - beta) ** (t - 1.0), dtype=np.float64)


def check_stick_weights(answer: Any) -> Feedback:
    """Stick-breaking weights at distances Δ = 1 … 6 for a constant β = 0.3: β(1 − β)^(Δ − 1)."""
    want = _stick(BETA, N_KEYS)
    t = np.arange(1, N_KEYS + 1)
    return check_array(
        answer,
        want,
        what=_("6 weights, the nearest key (Δ = 1) first"),
        diagnoses=[
            (
                _(
                    "one break too many: the nearest key takes β of a whole stick, β(1 − β)^(Δ − 1); with exponent Δ "
                    "the query's own token took its piece first (attend_current, which these weights leave out)"
                ),
                BETA * (1 - BETA) ** t,
            ),
            (
                _(
                    "normalised: that is ALiBi's softmax; the stick is not renormalised, the rest (1 − β)^6 stays "
                    "unspent"
                ),
                want / want.sum(),
            ),
            (
                _("swapped: key n takes the fraction β of what is left and passes 1 − β on"),
                (1 - BETA) * BETA ** (t - 1.0),
            ),
            (_("a factor β is missing: each key takes β of the stick left, (1 − β)^(Δ − 1)"), (1 - BETA) ** (t - 1.0)),
        ],
    )


def _turn() -> float:
    a, b = math.radians(ANGLE_A), math.radians(ANGLE_B)
    return 2.0 * (b - a)


def check_reflection_angle(answer: Any) -> Feedback:
    """The angle, in radians, of ℋ_b ℋ_a (reflect across ⊥ w_a first, then ⊥ w_b): 2(ϑ_b − ϑ_a), counterclockwise."""
    want = _turn()
    phi = math.radians(ANGLE_B - ANGLE_A)
    return check_array(
        answer,
        want,
        what=_("one angle in radians"),
        diagnoses=[
            (_("that is the angle between the normals, φ; two reflections turn by twice it, 2φ"), phi),
            (_("degrees: the angle is asked in radians (np.radians, or arctan2 of the matrix)"), math.degrees(want)),
            (
                _("the angle between the normals, and in degrees: two reflections turn by 2φ, in radians"),
                ANGLE_B - ANGLE_A,
            ),
            (
                _("sign: reflecting across ⊥ w_a first, then ⊥ w_b, turns from w_a towards w_b: counterclockwise, +"),
                -want,
            ),
        ],
    )


# The numbers the takeaways quote, from the same formulas as the checkers.
_ROW = _fox_row(LOG_F)
_STICK_SUM = float(_stick(BETA, N_KEYS).sum())
_REST = (1 - BETA) ** N_KEYS


def _signed(x: float) -> str:
    """x to one decimal with a true minus sign (U+2212), as the text writes it."""
    return f"{x:.1f}".replace("-", "\u2212")


EXERCISES = (
    Exercise(
        key="fox-bias",
        title="FoX's bias row",
        prompt=(
            "Six tokens have the log forget gates `log_f` (token 3 closes its gate: a reset). Write FoX's bias "
            "$\\Lambda_m - \\Lambda_n = \\sum_{t=n+1}^{m} \\log f_t$ of the last query $m = 5$ over the keys "
            "$n = 0, \\dots, 5$. Which keys does the reset push down?"
        ),
        hint="`lam = np.cumsum(log_f)` is $\\Lambda$; the row is $\\Lambda_5 - \\Lambda_n$.",
        setup="log_f = np.array([-0.1, -0.5, -0.2, -2.0, -0.3, -0.1])  # token 3: a reset",
        stub="answer = None  # 6 numbers, key 0 first",
        solution="lam = np.cumsum(log_f)\nanswer = lam[-1] - lam",
        check=check_fox_bias,
        takeaway=(
            lambda: _(
                "So keys 0 … 2, before the reset token, get {first} … {third}, the reset token itself only "
                "{reset}: a closed gate at p pushes down the keys before p, not p itself."
            ).format(first=_signed(_ROW[0]), third=_signed(_ROW[2]), reset=_signed(_ROW[3]))
        ),
        mistakes=(
            Mistake("lam = np.cumsum(log_f)\nanswer = lam[-1] - lam + log_f", "from n"),
            Mistake("lam = np.cumsum(log_f)\nanswer = lam - lam[-1]", "sign"),
            Mistake("answer = np.cumsum(log_f)", "Λ_n"),
        ),
    ),
    Exercise(
        key="stick-weights",
        title="Stick-breaking weights at a constant β",
        prompt=(
            "Every key takes the fraction $\\beta = 0.3$ of the stick the nearer keys left. Write the weights "
            "of the $6$ keys before the query, the nearest ($\\Delta = 1$) first, without the query's own token. "
            "How much of the stick is left for the query's own value?"
        ),
        hint=(
            "The key at distance $\\Delta$ finds $(1 - \\beta)^{\\Delta-1}$ of the stick left and takes $\\beta$ of it."
        ),
        setup="beta, n_keys = 0.3, 6",
        stub="answer = None  # 6 weights, Δ = 1 first",
        solution="dist = np.arange(1, n_keys + 1)  # Δ\nanswer = beta * (1 - beta) ** (dist - 1)",
        check=check_stick_weights,
        takeaway=(
            lambda: _(
                "So the six keys take {stick_sum:.1%} of the stick and {rest:.1%} = (1 − β)^6 is left for "
                "the query's own value: no softmax renormalises it, and a key's weight never depends on "
                "how many keys lie further back."
            ).format(stick_sum=_STICK_SUM, rest=_REST)
        ),
        mistakes=(
            Mistake("dist = np.arange(1, n_keys + 1)\nanswer = beta * (1 - beta) ** dist", "one break too many"),
            Mistake(
                "dist = np.arange(1, n_keys + 1)\nw = beta * (1 - beta) ** (dist - 1)\nanswer = w / w.sum()",
                "normalised",
            ),
            Mistake("dist = np.arange(1, n_keys + 1)\nanswer = (1 - beta) * beta ** (dist - 1)", "swapped"),
        ),
    ),
    Exercise(
        key="reflection-angle",
        title="Two reflections make a rotation",
        prompt=(
            "In a plane, $\\mathcal{H}_a$ reflects across the line perpendicular to the unit normal $w_a$ at "
            "$15^\\circ$, $\\mathcal{H}_b$ across the line perpendicular to $w_b$ at $40^\\circ$ "
            "($\\mathcal{H} = I - 2ww^\\top$). $\\mathcal{H}_b \\mathcal{H}_a$ (first $\\mathcal{H}_a$, then "
            "$\\mathcal{H}_b$) is a rotation: by what angle, in radians, counterclockwise?"
        ),
        hint=(
            "Build both matrices and read the angle of $R = \\mathcal{H}_b \\mathcal{H}_a$ with "
            "`np.arctan2(R[1, 0], R[0, 0])`, or reason: a mirror at angle $\\vartheta_a$ sends a vector at angle "
            "$\\vartheta$ to $2\\vartheta_a - \\vartheta$."
        ),
        setup="angle_a, angle_b = np.radians(15.0), np.radians(40.0)",
        stub="answer = None  # one angle in radians",
        solution=(
            "w_a = np.array([np.cos(angle_a), np.sin(angle_a)])\n"
            "w_b = np.array([np.cos(angle_b), np.sin(angle_b)])\n"
            "R = (np.eye(2) - 2 * np.outer(w_b, w_b)) @ (np.eye(2) - 2 * np.outer(w_a, w_a))\n"
            "answer = np.arctan2(R[1, 0], R[0, 0])  # ≈ 0.873"
        ),
        check=check_reflection_angle,
        takeaway=(
            lambda: _(
                "So normals {apart:.0f}° apart turn by {turn:.0f}° = {radians:.3f} rad, wherever the pair "
                "points: RoPE's rotation by θ is two reflections θ/2 apart, and PaTH, one data-chosen "
                "reflection per token, can make it."
            ).format(apart=ANGLE_B - ANGLE_A, turn=2 * (ANGLE_B - ANGLE_A), radians=_turn())
        ),
        mistakes=(
            Mistake("answer = angle_b - angle_a", "twice it"),
            Mistake("answer = np.degrees(2 * (angle_b - angle_a))", "degrees"),
            Mistake("answer = 2 * (angle_a - angle_b)", "sign"),
        ),
    ),
)
