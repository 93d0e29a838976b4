"""Exercises of notebook 02 (learned absolute): injection by addition, cosine similarity, untrained rows."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Floats, Mistake, _, arrays_from, check_array


def injection_problem() -> tuple[Floats, Floats, np.ndarray[Any, np.dtype[np.int64]]]:
    """Token vectors x (5 × 8), a table P (16 × 8), and the positions 3 … 7 of the window."""
    x, table = arrays_from(2, (5, 8), (16, 8))
    return x, table, np.arange(3, 8, dtype=np.int64)


def check_injection(answer: Any) -> Feedback:
    """h = x + P[positions]."""
    x, table, pos = injection_problem()
    return check_array(
        answer,
        x + table[pos],
        what=_("the 5 × 8 inputs with positions added"),
        diagnoses=[
            (
                _("off by one … or five: rows 0 … 4 are positions 0 … 4, but this window starts at position 3"),
                x + table[:5],
            ),
            (_("off by one: row p of the table is position p (no +1)"), x + table[pos + 1]),
            (
                _("shape: injection is addition (same width d), not concatenation"),
                np.concatenate([x, table[pos]], axis=1),
            ),
        ],
    )


def table_problem() -> Floats:
    """A seeded 6 × 4 position table."""
    (table,) = arrays_from(3, (6, 4))
    return table


def check_similarity(answer: Any) -> Feedback:
    """S_mn = cos∠(p_m, p_n)."""
    t = table_problem()
    rows = t / np.linalg.norm(t, axis=1, keepdims=True)
    cols = t / np.linalg.norm(t, axis=0, keepdims=True)
    return check_array(
        answer,
        rows @ rows.T,
        what=_("the 6 × 6 cosine-similarity matrix"),
        diagnoses=[
            (_("not normalised: those are the dot products p_m · p_n; divide each row by its length first"), t @ t.T),
            (_("normalised the columns (axis 0); each *row* is a position vector"), cols @ cols.T),
        ],
    )


def check_untrained_rows(answer: Any) -> Feedback:
    """The rows of a 32-row table never trained at length 24."""
    return check_array(
        answer,
        np.arange(24, 32),
        what=_("the indices of the untrained rows"),
        diagnoses=[
            (
                _("off by one: training at length 24 uses rows 0 … 23, so row 24 is the first untrained one"),
                np.arange(25, 32),
            ),
            (_("off by one: the table has rows 0 … 31; row 32 does not exist"), np.arange(24, 33)),
            (_("those are the *trained* rows"), np.arange(24)),
        ],
    )


# The numbers the takeaways quote, from the same problems as the checkers.
_POSITIONS = injection_problem()[2]
_T = table_problem()
_UNIT = _T / np.linalg.norm(_T, axis=1, keepdims=True)
_OFF = (_UNIT @ _UNIT.T)[~np.eye(len(_T), dtype=bool)]  # cosine similarity of two different positions
MAX_LEN, TRAIN_LEN = 32, 24


def _minus(x: float) -> str:
    return f"{x:.2f}".replace("-", "−")


_UNTRAINED = np.arange(TRAIN_LEN, MAX_LEN)


EXERCISES = (
    Exercise(
        key="injection",
        title="Add the positions of a window",
        prompt=(
            "A window of 5 tokens starts at position 3 of a longer text. Given the token vectors `x` and the "
            "learned table `P`, write the vectors that enter the first layer."
        ),
        hint="$x'_m = x_m + p_m$, with $m$ the *position*, not the slot in the window.",
        setup="x, P_table, positions = nb02.injection_problem()",
        stub="answer = None  # the 5 × 8 inputs",
        solution="answer = x + P_table[positions]",
        check=check_injection,
        takeaway=(
            lambda: _(
                "So the window's first token gets row {first} of P and its last row {last}: the same word "
                "gets a different input at every position, and what counts is the position in the text, "
                "not the slot in the window."
            ).format(first=_POSITIONS[0], last=_POSITIONS[-1])
        ),
        mistakes=(
            Mistake("answer = x + P_table[:5]", "starts at position 3"),
            Mistake("answer = np.concatenate([x, P_table[positions]], axis=1)", "not concatenation"),
            Mistake("answer = x + P_table[positions + 1]", "off by one"),
        ),
    ),
    Exercise(
        key="similarity",
        title="The similarity matrix",
        prompt=(
            "Compute $S_{mn} = \\cos\\angle(p_m, p_n)$ for the table `T` (one row per position), the matrix "
            "the similarity heatmaps show."
        ),
        hint="$\\cos\\angle(a, b) = a\\cdot b / (\\lVert a\\rVert\\,\\lVert b\\rVert)$.",
        setup="T = nb02.table_problem()",
        stub="answer = None  # a 6 × 6 matrix",
        solution="unit = T / np.linalg.norm(T, axis=1, keepdims=True)\nanswer = unit @ unit.T",
        check=check_similarity,
        takeaway=(
            lambda: _(
                "So S is 1 on the diagonal, and in this random table two different positions have "
                "similarities from {low} to {high:.2f}, with nothing making neighbours alike: where a "
                "table's neighbouring rows are alike, as in the pretrained MiniLM table, training on text "
                "made them so."
            ).format(low=_minus(_OFF.min()), high=_OFF.max())
        ),
        mistakes=(
            Mistake("answer = T @ T.T", "not normalised"),
            Mistake("unit = T / np.linalg.norm(T, axis=0, keepdims=True)\nanswer = unit @ unit.T", "columns"),
        ),
    ),
    Exercise(
        key="untrained-rows",
        title="Which rows never learned anything",
        prompt=(
            "The toy model above has a table of 32 rows and was trained on sequences of length 24 only. "
            "Which rows are still exactly their random initialisation? Give their indices in increasing order."
        ),
        hint="Positions count from 0.",
        setup="max_len, train_len = 32, 24",
        stub="answer = None  # an array of row indices",
        solution="answer = np.arange(train_len, max_len)",
        check=check_untrained_rows,
        takeaway=(
            lambda: _(
                "So rows {first} … {last}, {count} of the {max_len}, are still random: a learned table "
                "knows nothing about positions it never saw, so the model has no trained input for a token "
                "beyond position {last_trained}."
            ).format(
                first=_UNTRAINED[0],
                last=_UNTRAINED[-1],
                count=len(_UNTRAINED),
                max_len=MAX_LEN,
                last_trained=TRAIN_LEN - 1,
            )
        ),
        mistakes=(
            Mistake("answer = np.arange(train_len + 1, max_len)", "off by one"),
            Mistake("answer = np.arange(train_len)", "trained"),
        ),
    ),
)
