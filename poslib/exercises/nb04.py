"""Exercises of notebook 04 (relative): one term of the expansion, T5's exact buckets, DeBERTa's δ."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Floats, Mistake, _, arrays_from, check_array, check_int


def expansion_problem() -> tuple[Floats, Floats, Floats, Floats]:
    """Content x (6 × 8), positions p (6 × 8), projections W_q and W_k (4 × 8)."""
    x, p, w_q, w_k = arrays_from(4, (6, 8), (6, 8), (4, 8), (4, 8))
    return x, p, w_q, w_k


def check_content_position(answer: Any) -> Feedback:
    """The content→position term (W_q x_m)ᵀ (W_k p_n), as a matrix over (m, n)."""
    x, p, w_q, w_k = expansion_problem()
    return check_array(
        answer,
        (x @ w_q.T) @ (p @ w_k.T).T,
        what=_("the 6 × 6 content→position term"),
        diagnoses=[
            (
                _("swapped: that is position→content, (W_q p_m)ᵀ (W_k x_n); the *query* side carries the content here"),
                (p @ w_q.T) @ (x @ w_k.T).T,
            ),
            (
                _("that is the full score (all four terms); keep content on the query side, position on the key side"),
                ((x + p) @ w_q.T) @ ((x + p) @ w_k.T).T,
            ),
        ],
    )


def check_exact_buckets(answer: Any) -> Feedback:
    """How many distances per direction T5 keeps exact with 32 bidirectional buckets."""
    return check_int(
        answer,
        8,
        what=_("a whole number"),
        diagnoses=[
            (
                _(
                    "that is the number of buckets per direction; only half of those are exact, the rest are "
                    "logarithmic"
                ),
                16,
            ),
            (_("that is all the buckets; bidirectional splits them by direction first, then exact/log"), 32),
        ],
    )


def check_deberta_delta(answer: Any) -> Feedback:
    """δ = clip((m − n) + κ, 0, 2κ − 1) for m − n = −6 … 6, κ = 4."""
    m_minus_n, k = np.arange(-6, 7), 4
    return check_array(
        answer,
        np.clip(m_minus_n + k, 0, 2 * k - 1),
        what=_("13 table rows, one per m − n"),
        diagnoses=[
            (_("no clipping: the table has only 2κ rows, 0 … 2κ − 1"), m_minus_n + k),
            (_("off by one: the last row is 2κ − 1 = 7, not 2κ"), np.clip(m_minus_n + k, 0, 2 * k)),
            (
                _("sign: DeBERTa's offset is query − key, m − n; the row is (m − n) + κ, not κ − (m − n)"),
                np.clip(k - m_minus_n, 0, 2 * k - 1),
            ),
        ],
    )


# The numbers the takeaways quote, from the same formulas as the checkers.
_PER_DIRECTION = 32 // 2
_EXACT = _PER_DIRECTION // 2  # T5 spends half of each direction's buckets on single distances
_M_MINUS_N, _KAPPA = np.arange(-6, 7), 4
_DELTA = np.clip(_M_MINUS_N + _KAPPA, 0, 2 * _KAPPA - 1)
_FIRST_ROW = _M_MINUS_N[_DELTA == 0]  # the offsets that share row 0
_LAST_ROW = _M_MINUS_N[_DELTA == 2 * _KAPPA - 1]  # the offsets that share row 2κ − 1


def _span(offsets: np.ndarray[Any, np.dtype[np.int64]]) -> str:
    """The first and last of a run of offsets ("−6 … −4"), written with true minus signs."""
    return f"{offsets[0]} … {offsets[-1]}".replace("-", "−")


_OWN = _M_MINUS_N[(_DELTA > 0) & (_DELTA < 2 * _KAPPA - 1)]  # the offsets with a row of their own


EXERCISES = (
    Exercise(
        key="content-position",
        title="One term of the four-term expansion",
        prompt=(
            "Given content vectors `x`, position vectors `p` and projections `W_q`, `W_k` (rows are the "
            "projected features), compute the content→position term $(W_q x_m)^\\top (W_k p_n)$ for every "
            "query $m$ and key $n$, the second of the four heatmaps of §1."
        ),
        hint="Project first: `x @ W_q.T` holds the rows $W_q x_m$.",
        setup="x, p, W_q, W_k = nb04.expansion_problem()",
        stub="answer = None  # a 6 × 6 matrix, rows = queries",
        solution="answer = (x @ W_q.T) @ (p @ W_k.T).T",
        check=check_content_position,
        takeaway=(
            lambda: _(
                "So row m of this term depends only on the content x_m and column n only on the position p_n: it "
                "is how much query m's *word* cares where key n sits, one of the four terms the score of x + p splits "
                "into, and the one relative schemes rewrite with m − n in place of p_n."
            )
        ),
        mistakes=(
            Mistake("answer = (p @ W_q.T) @ (x @ W_k.T).T", "swapped"),
            Mistake("answer = ((x @ W_q.T) @ (p @ W_k.T).T).T", "transposed"),
        ),
    ),
    Exercise(
        key="exact-buckets",
        title="How many distances T5 keeps exact",
        prompt=(
            "T5 with `num_buckets = 32`, bidirectional: how many distances per direction get a bucket of "
            "their own (one distance per bucket) before the logarithmic buckets start? Read it off the "
            "bucket figure, then from the code of `t5_relative_bucket`."
        ),
        hint="Bidirectional halves the buckets; T5 then spends half of each direction's buckets on exact distances.",
        setup="num_buckets = 32",
        stub="answer = None  # a whole number",
        solution="answer = num_buckets // 2 // 2",
        check=check_exact_buckets,
        takeaway=(
            lambda: _(
                "So keys 0 … {last_exact} tokens before the query get a bucket each, and so do keys 1 … "
                "{last_exact} after it (that side's first bucket stays empty: distance 0 counts as "
                "before); the other {logarithmic} of the {per_direction} buckets per direction cover all "
                "larger distances on a log scale: near keys are told apart exactly, far ones only roughly."
            ).format(last_exact=_EXACT - 1, logarithmic=_PER_DIRECTION - _EXACT, per_direction=_PER_DIRECTION)
        ),
        mistakes=(
            Mistake("answer = num_buckets // 2", "per direction"),
            Mistake("answer = num_buckets // 4 + 1", "off by one"),
        ),
    ),
    Exercise(
        key="deberta-delta",
        title="DeBERTa's clipped relative position",
        prompt=(
            "DeBERTa maps the relative position query − key, $m - n$ ($= -r$ in T5's sign), to a row "
            "$\\delta(m, n)$ of its table of $2\\kappa$ rows. For $\\kappa = 4$, compute $\\delta$ for "
            "$m - n = -6, \\dots, 6$ (the clipping slider of §4.2 moves $\\kappa$)."
        ),
        hint=(
            "$\\delta = 0$ for $m - n \\le -\\kappa$, $2\\kappa - 1$ for $m - n \\ge \\kappa$, "
            "$(m - n) + \\kappa$ between."
        ),
        setup="m_minus_n, kappa = np.arange(-6, 7), 4",
        stub="answer = None  # 13 row indices",
        solution="answer = np.clip(m_minus_n + kappa, 0, 2 * kappa - 1)",
        check=check_deberta_delta,
        takeaway=(
            lambda: _(
                "So offsets {first_row} share row 0 and {last_row} share row {last}; only {own} get a row "
                "of their own: beyond κ = {kappa} DeBERTa knows the direction of a key, not its distance."
            ).format(
                first_row=_span(_FIRST_ROW),
                last_row=_span(_LAST_ROW),
                last=2 * _KAPPA - 1,
                own=_span(_OWN),
                kappa=_KAPPA,
            )
        ),
        mistakes=(
            Mistake("answer = m_minus_n + kappa", "no clipping"),
            Mistake("answer = np.clip(m_minus_n + kappa, 0, 2 * kappa)", "off by one"),
            Mistake("answer = np.clip(kappa - m_minus_n, 0, 2 * kappa - 1)", "sign"),
        ),
    ),
)
