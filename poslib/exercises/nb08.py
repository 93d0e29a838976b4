"""Exercises of notebook 08 (the lab): perplexity, one prediction's cross-entropy, bits per byte."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array, log_slips

CE = np.array([1.2, 2.0, 3.5])
LOGITS, TARGET = np.array([2.0, -1.0, 0.5, 1.5, 0.0]), 3
PPL = np.array([3.3, 7.4, 33.1])


def check_perplexity(answer: Any) -> Feedback:
    """Perplexity = exp(mean cross-entropy in nats)."""
    return check_array(
        answer,
        np.exp(CE),
        what=_("three perplexities"),
        diagnoses=log_slips(CE, "natural log", _("the lab's losses (nats)"), inverse=True),
    )


def check_bits_per_byte(answer: Any) -> Feedback:
    """Bits per byte = log₂(perplexity per byte)."""
    return check_array(
        answer,
        np.log2(PPL),
        what=_("three values in bits per byte"),
        diagnoses=log_slips(PPL, "log₂", _("bits")),
    )


def check_cross_entropy(answer: Any) -> Feedback:
    """−log softmax(z)[t] in nats."""
    log_softmax = LOGITS - np.log(np.exp(LOGITS).sum())
    return check_array(
        answer,
        -log_softmax[TARGET],
        what=_("one number, in nats"),
        diagnoses=[
            (_("not normalised: −z[t] skips the softmax; subtract log Σ exp(z) first"), -LOGITS[TARGET]),
            (_("sign: that is log p(t) ≤ 0; the loss is its negative"), log_softmax[TARGET]),
            (_("units: that is in bits (log₂); the lab's loss is in nats"), -log_softmax[TARGET] / np.log(2)),
            (_("that is p(t) itself; the loss is −log p(t)"), np.exp(log_softmax[TARGET])),
        ],
    )


# The numbers the takeaways quote, from the same formulas as the checkers.
_PPL_OF_CE = np.exp(CE)
_LOSS = float(np.log(np.exp(LOGITS).sum()) - LOGITS[TARGET])
_BPB = np.log2(PPL)


EXERCISES = (
    Exercise(
        key="perplexity",
        title="Perplexity from the loss",
        prompt=(
            "The lab reports perplexity, the exponential of the mean cross-entropy. Three runs end with a "
            "mean cross-entropy of 1.2, 2.0 and 3.5 nats per byte; what are their perplexities?"
        ),
        hint="PyTorch's `cross_entropy` uses the natural log.",
        setup="ce = np.array([1.2, 2.0, 3.5])",
        stub="answer = None  # three perplexities",
        solution="answer = np.exp(ce)",
        check=check_perplexity,
        takeaway=(
            lambda: _(
                "So the perplexities are about {perplexities}: each run is as unsure as a uniform choice "
                "among that many bytes, and {more:g} nats more loss multiplies the perplexity by "
                "e^{more:g} ≈ {factor:.1f}."
            ).format(
                perplexities=_(", ").join(f"{p:.1f}" for p in _PPL_OF_CE),
                more=CE[2] - CE[1],
                factor=np.exp(CE[2] - CE[1]),
            )
        ),
        mistakes=(
            Mistake("answer = 2.0**ce", "units"),
            Mistake("answer = np.exp(ce[:2])", "off by one"),
        ),
    ),
    Exercise(
        key="cross-entropy",
        title="The loss of one prediction",
        prompt=(
            "A model outputs logits `z` over 5 possible next bytes and the true byte is `t`. Compute the "
            "cross-entropy of this one prediction in nats, the quantity averaged over every byte of an "
            "evaluation window."
        ),
        hint="$-\\log \\mathrm{softmax}(z)_t = -z_t + \\log\\sum_j e^{z_j}$.",
        setup="z, t = np.array([2.0, -1.0, 0.5, 1.5, 0.0]), 3",
        stub="answer = None  # one number",
        solution="answer = -(z[t] - np.log(np.exp(z).sum()))",
        check=check_cross_entropy,
        takeaway=(
            lambda: _(
                "So this prediction costs about {loss:.2f} nats (p(t) = {p:.2f}), below the ln {vocab} ≈ "
                "{uniform:.2f} of a uniform guess and above the 0 of a certain one."
            ).format(loss=_LOSS, p=np.exp(-_LOSS), vocab=len(LOGITS), uniform=np.log(len(LOGITS)))
        ),
        mistakes=(
            Mistake("answer = -z[t]", "not normalised"),
            Mistake("answer = z[t] - np.log(np.exp(z).sum())", "sign"),
            Mistake("answer = -(z[t] - np.log(np.exp(z).sum())) / np.log(2)", "bits"),
        ),
    ),
    Exercise(
        key="bits-per-byte",
        title="Bits per byte",
        prompt=(
            "Suppose a byte-level model scores perplexities of 3.3, 7.4 and 33.1 at three evaluation lengths. "
            "How many bits per byte is that? A plain byte costs 8 bits, so this says how much the model "
            "compresses, and how much of that it loses at length."
        ),
        hint="Perplexity $= 2^{\\text{bits}}$.",
        setup="ppl = np.array([3.3, 7.4, 33.1])",
        stub="answer = None  # three values, bits per byte",
        solution="answer = np.log2(ppl)",
        check=check_bits_per_byte,
        takeaway=(
            lambda: _(
                "So that is {bpb} bits per byte: against the 8 bits of a plain byte the model saves "
                "{saved_best:.2f} bits at the best length but only {saved_worst:.2f} at the worst, so "
                "{lost:.0%} of what it learned to compress is lost at length."
            ).format(
                bpb=_(", ").join(f"{b:.2f}" for b in _BPB),
                saved_best=8 - _BPB[0],
                saved_worst=8 - _BPB[-1],
                lost=(_BPB[-1] - _BPB[0]) / (8 - _BPB[0]),
            )
        ),
        mistakes=(
            Mistake("answer = np.log(ppl)", "nats"),
            Mistake("answer = np.log10(ppl)", "log₁₀"),
        ),
    ),
)
