"""Exercises of notebook 01 (why position): permute a weight matrix, build Π, NoPE's 1/(m+1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Floats, Mistake, _, arrays_from, check_array

ORDER = (1, 2, 0)


def permutation_problem() -> tuple[Floats, tuple[int, ...]]:
    """A seeded 3 × 3 attention-weight matrix (rows sum to 1) for 我 爱 你, and the new order."""
    (scores,) = arrays_from(1, (3, 3))
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    return weights, ORDER


def check_permuted_weights(answer: Any) -> Feedback:
    """The weight matrix of the reordered sentence: rows and columns both permuted."""
    weights, order = permutation_problem()
    idx = list(order)
    inverse = list(np.argsort(idx))
    return check_array(
        answer,
        weights[idx][:, idx],
        what=_("the 3 × 3 weight matrix of the reordered words"),
        diagnoses=[
            (
                _("only the rows moved: each query now also reads its keys in the new order, so permute columns too"),
                weights[idx],
            ),
            (_("only the columns moved: the queries (rows) are reordered as well"), weights[:, idx]),
            (
                _("layout: that is the inverse permutation; slot m of the new sentence holds old word order[m]"),
                weights[inverse][:, inverse],
            ),
        ],
    )


def check_permutation_matrix(answer: Any) -> Feedback:
    """Π with (Π X)[m] = X[order[m]]."""
    eye = np.eye(3)
    return check_array(
        answer,
        eye[list(ORDER)],
        what=_("a 3 × 3 matrix of zeros and ones"),
        diagnoses=[
            (_("transposed: Πᵀ = Π⁻¹ moves row m to slot order[m]; Π must *pick* row order[m]"), eye[list(ORDER)].T)
        ],
    )


def check_bos_weight(answer: Any) -> Feedback:
    """The weight a uniform causal head puts on the first token, for queries m = 0 … 7."""
    m = np.arange(8)
    return check_array(
        answer,
        1 / (m + 1),
        what=_("an array of 8 weights"),
        diagnoses=[
            (_("off by one: query m sees m + 1 keys (positions 0 … m), not m + 2"), 1 / (m + 2)),
            (_("that is the weight on all the *other* keys together, 1 − 1/(m + 1)"), 1 - 1 / (m + 1)),
        ],
    )


# The numbers the takeaways quote, from the same problem and formulas as the checkers.
_A, _order = permutation_problem()
_BOS = 1 / (np.arange(8) + 1)  # a uniform causal head's weight on token 0, queries m = 0 … 7


EXERCISES = (
    Exercise(
        key="permute-weights",
        title="Reorder the words, reorder the weights",
        prompt=(
            "`A` holds the attention weights of 我 爱 你 (row = query, column = key), computed without "
            "positions. The words are reordered so that slot $m$ of the new sentence holds old word "
            "`order[m]`, here 爱 你 我. Without running the layer, write the weight matrix of the new sentence."
        ),
        hint="Equivariance: $A' = \\Pi A \\Pi^\\top$. In NumPy: rows, then columns, same index list.",
        setup="A, order = nb01.permutation_problem()",
        stub="answer = None  # a 3 × 3 matrix",
        solution="idx = list(order)\nanswer = A[idx][:, idx]",
        check=check_permuted_weights,
        takeaway=(
            lambda: _(
                "So the new matrix holds the same weights, moved: 爱 still puts {weight:.3f} on 你 (row 0, "
                "column 1 now). Without positions attention sees a set of words, and reordering them only "
                "relabels its output."
            ).format(weight=_A[1, 2])
        ),
        mistakes=(
            Mistake("answer = A[list(order)]", "only the rows moved"),
            Mistake("answer = A[:, list(order)]", "only the columns moved"),
            Mistake("inv = list(np.argsort(order))\nanswer = A[inv][:, inv]", "inverse permutation"),
        ),
    ),
    Exercise(
        key="permutation-matrix",
        title="The permutation matrix",
        prompt=(
            "Write the $3\\times 3$ matrix $\\Pi$ with $(\\Pi X)_m = X_{\\text{order}[m]}$ for order $= (1, 2, 0)$, "
            "the $\\Pi$ of the derivation."
        ),
        hint="Row $m$ of $\\Pi$ is the unit vector $e_{\\text{order}[m]}$.",
        setup="order = (1, 2, 0)",
        stub="answer = None  # a 3 × 3 matrix",
        solution="answer = np.eye(3)[list(order)]",
        check=check_permutation_matrix,
        takeaway=(
            lambda: _(
                "So Π has one 1 in each row and column: row m is the unit vector e_order[m] (here {rows}), "
                "and Πᵀ = Π⁻¹ undoes the reordering, so A' = Π A Πᵀ."
            ).format(rows=_(", ").join(f"e_{k}" for k in ORDER))
        ),
        mistakes=(
            Mistake("answer = np.eye(3)[list(order)].T", "transposed"),
            Mistake("answer = np.eye(3)[list(order)][:2]", "shape"),
            Mistake("answer = np.eye(3)", "identity matrix"),
        ),
    ),
    Exercise(
        key="bos-weight",
        title="What a causal head reads off for free",
        prompt=(
            "A causal head whose scores are all equal spreads its weight uniformly over the keys it may see. "
            "For queries $m = 0, \\dots, 7$, what weight does it put on the first token? This is the signal "
            "the NoPE section uses to recover position."
        ),
        hint="Count the keys query $m$ sees, positions counted from 0.",
        setup="m = np.arange(8)",
        stub="answer = None  # 8 weights, one per query",
        solution="answer = 1 / (m + 1)",
        check=check_bos_weight,
        takeaway=(
            lambda: _(
                "So the weight on the first token falls from {first:g} at m = 0 to 1/{keys} = {last:.3f} "
                "at m = {m}: it is 1/(m + 1), a function of the position alone, so a causal head can "
                "recover m without any positional encoding."
            ).format(first=_BOS[0], keys=round(1 / _BOS[-1]), last=_BOS[-1], m=len(_BOS) - 1)
        ),
        mistakes=(
            Mistake("answer = 1 / (m + 2)", "off by one"),
            Mistake("answer = 1 - 1 / (m + 1)", "other* keys"),
            Mistake("answer = 1 / (m + 1.0)[:7]", "off by one"),
        ),
    ),
)
