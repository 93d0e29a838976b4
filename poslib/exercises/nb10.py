"""Exercises of notebook 10 (learned and contextual): CoPE positions, FIRE's inputs, randomized positions."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array, not_answered

GATES = np.array([0.9, 0.1, 0.0, 1.0, 0.2, 0.7])


def check_cope_positions(answer: Any) -> Feedback:
    """p_n = Σ_{t=n}^{m} g_t for the last query m = 5."""
    return check_array(
        answer,
        np.cumsum(GATES[::-1])[::-1],
        what=_("6 positions, one per key"),
        diagnoses=[
            (
                _("direction: that counts from the first token forward; CoPE counts from the key n up to the query"),
                np.cumsum(GATES),
            ),
            (
                _("off by one: the sum includes key n itself, t = n … m"),
                np.append(np.cumsum(GATES[::-1])[::-1][1:], 0.0),
            ),
        ],
    )


def _fire(m: int, n: np.ndarray[Any, np.dtype[np.int64]], c: float, L: float, norm: str) -> Any:
    def psi(x: Any) -> Any:
        return np.log(c * x + 1)

    if norm == "none":
        return psi(m - n)
    return psi(m - n) / psi(max(L, m) if norm == "max" else m)


def check_fire_inputs(answer: Any) -> Feedback:
    """u_n = ψ(m − n) / ψ(max(L, m)), ψ(x) = log(c x + 1), for m = 40, n = 0 … 40, c = 1, L = 64."""
    n = np.arange(41)
    return check_array(
        answer,
        _fire(40, n, 1.0, 64.0, "max"),
        what=_("41 inputs, one per key"),
        diagnoses=[
            (_("not normalised: divide by ψ(max(L, m)) so inputs stay in [0, 1]"), _fire(40, n, 1.0, 64.0, "none")),
            (
                _("threshold: this query is short (m < L), so the divisor is ψ(L), not ψ(m)"),
                _fire(40, n, 1.0, 64.0, "m"),
            ),
        ],
    )


def check_random_positions(answer: Any) -> Feedback:
    """Any 8 distinct, sorted positions from range(64) that are not just 0 … 7."""
    if answer is None:
        return not_answered(_("8 sorted positions drawn from 0 … 63"))
    try:
        pos = np.asarray(answer)
    except (TypeError, ValueError):
        return Feedback(False, _("type: answer should be integers, got {type}").format(type=type(answer).__name__))
    if pos.shape != (8,):
        return Feedback(False, _("shape: one position per token, 8 in all; got shape {shape}").format(shape=pos.shape))
    if not np.issubdtype(pos.dtype, np.integer):
        return Feedback(False, _("type: positions are integers, got dtype {dtype}").format(dtype=pos.dtype))
    if pos.min() < 0 or pos.max() >= 64:
        return Feedback(False, _("off by one or range: positions must lie in 0 … 63 (N_max = 64 excluded)"))
    if len(np.unique(pos)) < 8:
        return Feedback(False, _("duplicates: two tokens share a position; sample without replacement"))
    if np.any(np.diff(pos) < 0):
        return Feedback(False, _("order: sort the sample, so positions still increase along the sequence"))
    if np.array_equal(pos, np.arange(8)):
        return Feedback(
            False, _("those are the ordinary positions 0 … 7; the point is to draw them from the longer range")
        )
    return Feedback(True, _("your answer is a valid randomized set of positions."))


# The numbers the takeaways quote, from the same formulas as the checkers.
_COPE = np.cumsum(GATES[::-1])[::-1]
_CLOSED = int(np.flatnonzero(GATES == 0)[0])  # a key whose gate is 0
_FIRE_FARTHEST = float(np.log(40 + 1) / np.log(64 + 1))  # u for the farthest key, n = 0, of query m = 40
N_TOKENS, N_MAX = 8, 64


EXERCISES = (
    Exercise(
        key="cope-positions",
        title="CoPE's positions for one query",
        prompt=(
            "The last query of a causal row ($m = 5$) has gates `g` on its six keys. CoPE's position of key "
            "$n$ is $p_n = \\sum_{t=n}^{m} g_t$. Compute all six; they never increase from the first key to "
            "the query (§2)."
        ),
        hint="A cumulative sum run backwards: reverse, `np.cumsum`, reverse.",
        setup="g = np.array([0.9, 0.1, 0.0, 1.0, 0.2, 0.7])",
        stub="answer = None  # 6 positions",
        solution="answer = np.cumsum(g[::-1])[::-1]",
        check=check_cope_positions,
        takeaway=(
            lambda: _(
                "So the keys sit at {positions}: key {closed} has gate 0, so it sits at the same position "
                "as key {next}; CoPE counts the tokens its gates let through, not all tokens."
            ).format(positions=_(", ").join(f"{p:.1f}" for p in _COPE), closed=_CLOSED, next=_CLOSED + 1)
        ),
        mistakes=(
            Mistake("answer = np.cumsum(g)", "direction"),
            Mistake("answer = np.append(np.cumsum(g[::-1])[::-1][1:], 0.0)", "off by one"),
        ),
    ),
    Exercise(
        key="fire-inputs",
        title="FIRE's normalised distances",
        prompt=(
            "FIRE feeds its MLP $u_{m,n} = \\psi(m - n) / \\psi(\\max(L, m))$ with $\\psi(x) = \\log(cx + 1)$. "
            "For the query $m = 40$, keys $n = 0, \\dots, 40$, $c = 1$ and $L = 64$, compute the inputs."
        ),
        hint="Here $m < L$: short queries are divided by $\\psi(L)$, which is the progressive interpolation of §1.",
        setup="m, n, c, L = 40, np.arange(41), 1.0, 64.0",
        stub="answer = None  # 41 inputs",
        solution="answer = np.log(c * (m - n) + 1) / np.log(c * max(L, m) + 1)",
        check=check_fire_inputs,
        takeaway=(
            lambda: _(
                "So the inputs fall from {fire_farthest:.3f} at the farthest key to 0 at n = m: below 1, "
                "since this query is shorter than L; from m = L on, the divisor is ψ(m) and the farthest "
                "key gets exactly 1, so the inputs stay in [0, 1] however long the sequence."
            ).format(fire_farthest=_FIRE_FARTHEST)
        ),
        mistakes=(
            Mistake("answer = np.log(c * (m - n) + 1)", "not normalised"),
            Mistake("answer = np.log(c * (m - n) + 1) / np.log(c * m + 1)", "threshold"),
        ),
    ),
    Exercise(
        key="random-positions",
        title="Randomized positions",
        prompt=(
            "Randomized positional encoding trains a sequence of $N = 8$ tokens with positions drawn from a "
            "larger range $0, \\dots, N_{\\max} - 1$, $N_{\\max} = 64$ (§3). Draw one valid set with the "
            "seeded generator `rng`."
        ),
        hint="`rng.choice(N_max, size=N, replace=False)`, then sort.",
        setup="rng, N, N_max = np.random.default_rng(0), 8, 64",
        stub="answer = None  # 8 positions",
        solution="answer = np.sort(rng.choice(N_max, size=N, replace=False))",
        check=check_random_positions,
        takeaway=(
            lambda: _(
                "So one sequence of {n_tokens} tokens carries positions spread over 0 … {last_position}, "
                "each position in a draw with probability {n_tokens}/{n_max}: over many training steps "
                "every position up to {last_position} is seen, so a test sequence of up to {n_max} tokens "
                "uses only trained positions, though no training sequence is longer than {n_tokens}."
            ).format(n_tokens=N_TOKENS, last_position=N_MAX - 1, n_max=N_MAX)
        ),
        mistakes=(
            Mistake("answer = rng.choice(N_max, size=N, replace=False)", "order"),
            Mistake("answer = np.arange(N)", "ordinary positions"),
            Mistake("answer = np.arange(N_max - N + 1, N_max + 1)  # the last N positions, counted from 1", "range"),
        ),
    ),
)
