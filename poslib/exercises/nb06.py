"""Exercises of notebook 06 (length extrapolation): pairs that never turn, the NTK base, entropy in nats."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array, check_int, log_slips

D, BASE, L = 128, 10_000.0, 2048


def _slow_pairs(n_features: int, exponent_scale: float) -> int:
    i = np.arange(n_features)
    wavelength = 2 * np.pi * BASE ** (exponent_scale * i / D)
    return int(np.sum(wavelength > L))


def check_slow_pairs(answer: Any) -> Feedback:
    """How many of the 64 pairs (d = 128, base 10⁴) have a wavelength longer than L = 2048."""
    expected = _slow_pairs(D // 2, 2.0)
    return check_int(
        answer,
        expected,
        what=_("a whole number of pairs"),
        diagnoses=[
            (
                _("that counts the pairs that *do* complete a turn; the question asks for the other {expected}").format(
                    expected=expected
                ),
                D // 2 - expected,
            ),
            (_("that counts features, not pairs: d/2 = 64 pairs, each with two features"), 2 * expected),
        ],
    )


def check_ntk_base(answer: Any) -> Feedback:
    """NTK-aware base: base · s^(d/(d−2)) for base 10⁴, s = 8, d = 128."""
    s = 8.0
    return check_array(
        answer,
        BASE * s ** (D / (D - 2)),
        what=_("the new base, a float"),
        diagnoses=[
            (
                _(
                    "exponent: base · s alone leaves the slowest pair slightly faster than PI; the exponent is d/(d − "
                    "2)"
                ),
                BASE * s,
            ),
            (_("exponent: inverted; it is d/(d − 2) (slightly above 1), not (d − 2)/d"), BASE * s ** ((D - 2) / D)),
            (_("that is the base divided by the factor; NTK-aware scaling *raises* the base"), BASE / s),
        ],
    )


def check_uniform_entropy(answer: Any) -> Feedback:
    """Entropy of uniform attention over N = 64, 512, 4096 keys, in nats."""
    N = np.array([64.0, 512.0, 4096.0])
    return check_array(
        answer,
        np.log(N),
        what=_("three entropies, in nats"),
        diagnoses=log_slips(N, "natural log", _("entropies in nats")),
    )


# The numbers the takeaways quote, from the same formulas as the checkers.
_LAMBDA = 2 * np.pi * BASE ** (2 * np.arange(D // 2) / D)
_SLOW = np.flatnonzero(_LAMBDA > L)  # pairs that never complete a turn within L
_S = 8.0
_NTK = BASE * _S ** (D / (D - 2))
_SLOWEST_RATIO = BASE ** (-(D - 2) / D) / _NTK ** (-(D - 2) / D)  # how much the slowest pair slows down: s
_N_UNIFORM = np.array([64.0, 512.0, 4096.0])
_H_UNIFORM = np.log(_N_UNIFORM)


EXERCISES = (
    Exercise(
        key="slow-pairs",
        title="Pairs that never complete a turn in training",
        prompt=(
            "LLaMA-1: $d = 128$, base $10^4$, $L = 2048$. How many of the 64 pairs have a wavelength longer "
            "than $L$, so that in training they never complete a turn and every angle past $L$ is new? Compare "
            "with the unseen-angle figure of §2."
        ),
        hint="$\\lambda_i = 2\\pi\\,\\text{base}^{2i/d}$ for $i = 0, \\dots, 63$; count those above $L$.",
        setup="d, base, L = 128, 10_000.0, 2048",
        stub="answer = None  # a whole number",
        solution="wavelength = 2 * np.pi * base ** (2 * np.arange(d // 2) / d)\nanswer = int(np.sum(wavelength > L))",
        check=check_slow_pairs,
        takeaway=(
            lambda: _(
                "So {count} of the {pairs} pairs, {first} … {last} (wavelengths from {wavelength:,.0f} "
                "tokens up), never complete a turn in training: past L = {l} their angles are ones the "
                "model never saw, the gap PI, NTK-aware scaling and YaRN each close in their own way."
            ).format(count=len(_SLOW), pairs=D // 2, first=_SLOW[0], last=_SLOW[-1], wavelength=_LAMBDA[_SLOW[0]], l=L)
        ),
        mistakes=(
            Mistake(
                "wavelength = 2 * np.pi * base ** (2 * np.arange(d // 2) / d)\nanswer = int(np.sum(wavelength <= L))",
                "*do* complete",
            ),
            Mistake(
                "wavelength = 2 * np.pi * base ** (2 * np.arange(d // 2) / d)\n"
                "answer = 2 * int(np.sum(wavelength > L))",
                "features, not pairs",
            ),
            Mistake(
                "wavelength = 2 * np.pi * base ** (2 * np.arange(d // 2) / d)\nanswer = float(np.sum(wavelength > L))",
                "type",
            ),
        ),
    ),
    Exercise(
        key="ntk-base",
        title="The NTK-aware base",
        prompt=(
            "NTK-aware scaling keeps pair 0 and slows the slowest pair $i = d/2 - 1$ exactly like PI with "
            "factor $s$. Derive the new base from that condition and compute it for base $10^4$, $s = 8$, $d = 128$."
        ),
        hint="Solve $\\text{base}'^{-(d-2)/d} = \\text{base}^{-(d-2)/d} / s$.",
        setup="d, base, s = 128, 10_000.0, 8",
        stub="answer = None  # the new base",
        solution="answer = base * s ** (d / (d - 2))",
        check=check_ntk_base,
        takeaway=(
            lambda: _(
                "So the base rises from {base:,.0f} to about {ntk:,.0f}, {times:.3g} times, a little more "
                "than s = {s:g}: pair 0 keeps its frequency, the slowest pair is slowed "
                "{slowest_ratio:.3g} times like PI, and the pairs between are slowed by less."
            ).format(base=BASE, ntk=_NTK, times=_NTK / BASE, s=_S, slowest_ratio=_SLOWEST_RATIO)
        ),
        mistakes=(
            Mistake("answer = base * s", "exponent"),
            Mistake("answer = base * s ** ((d - 2) / d)", "inverted"),
            Mistake("answer = base / s", "raises"),
        ),
    ),
    Exercise(
        key="uniform-entropy",
        title="Entropy of uniform attention",
        prompt=(
            "Scores that carry no information give uniform attention over the $N$ keys. Compute its entropy "
            "for $N = 64, 512, 4096$ in nats: the ceiling the entropy curves of §3 approach."
        ),
        hint="$H = -\\sum_n a_{m,n} \\ln a_{m,n}$ with every weight $a_{m,n} = 1/N$.",
        setup="N = np.array([64, 512, 4096])",
        stub="answer = None  # three entropies, nats",
        solution="answer = np.log(N)",
        check=check_uniform_entropy,
        takeaway=(
            lambda: _(
                "So the ceiling is {ceilings} nats, ln 8 ≈ {gain:.2f} more for each 8 times more keys: a "
                "longer sequence lets attention spread wider, the dilution that log-n scaling counters."
            ).format(ceilings=_(", ").join(f"{h:.2f}" for h in _H_UNIFORM), gain=np.log(8))
        ),
        mistakes=(
            Mistake("answer = np.log2(N)", "bits"),
            Mistake("answer = np.log10(N)", "log₁₀"),
            Mistake("answer = np.log(N) / 2", "scale: your answer is 0.5 × the expected value"),
        ),
    ),
)
