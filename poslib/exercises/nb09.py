"""Exercises of notebook 09 (RoPE in production): inv_freq from a config, partial rotary, YaRN's factor."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Exercise, Feedback, Mistake, _, check_array, check_int

HEAD_DIM, THETA = 128, 500_000.0


def check_inv_freq(answer: Any) -> Feedback:
    """inv_freq = rope_theta^(−2i/d) for head_dim 128, rope_theta 500 000 (Llama 3)."""
    even = np.arange(0, HEAD_DIM, 2)
    return check_array(
        answer,
        THETA ** (-even / HEAD_DIM),
        what=_("64 inverse frequencies"),
        diagnoses=[
            (
                _("that uses the default base 10 000; this config sets rope_theta = 500 000"),
                10_000.0 ** (-even / HEAD_DIM),
            ),
            (
                _("sign: inv_freq is base^(−2i/d), below 1; base^(+2i/d) is the wavelength over 2π"),
                THETA ** (even / HEAD_DIM),
            ),
            (
                _("shape: one frequency per pair, head_dim/2 = 64, with exponents 2i/d"),
                THETA ** (-np.arange(HEAD_DIM) / HEAD_DIM),
            ),
        ],
    )


def check_rotated_features(answer: Any) -> Feedback:
    """Phi-2: head_dim 80, partial_rotary_factor 0.4 → rotated features per head."""
    return check_int(
        answer,
        32,
        what=_("a whole number of features"),
        diagnoses=[
            (_("that counts pairs; the factor applies to features (each pair has two)"), 16),
            (_("that is the pass-through part; 0.4 of the features are rotated"), 48),
            (_("that is 0.4 × hidden_size; the factor applies per head, to head_dim"), 1024),
        ],
    )


def check_yarn_factor(answer: Any) -> Feedback:
    """YaRN's attention factor 0.1·ln s + 1 for s = 4."""
    s = 4.0
    return check_array(
        answer,
        0.1 * np.log(s) + 1,
        what=_("one float"),
        diagnoses=[
            (_("units: the formula uses the natural log; that is log₂"), 0.1 * np.log2(s) + 1),
            (_("units: the formula uses the natural log; that is log₁₀"), 0.1 * np.log10(s) + 1),
            (_("missing the + 1: at s = 1 the factor must be 1 (no change)"), 0.1 * np.log(s)),
            (
                _(
                    "square: that is the factor on the scores, (0.1 ln s + 1)²: cos and sin, and so the rotated q "
                    "and k, are each multiplied by 0.1 ln s + 1, their dot product by its square; the exercise "
                    "asks for the factor on cos and sin"
                ),
                (0.1 * np.log(s) + 1) ** 2,
            ),
        ],
    )


# The numbers the takeaways quote, from the same formulas as the checkers.
_WAVE_500K = 2 * np.pi * THETA ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
_WAVE_10K = 2 * np.pi * 10_000.0 ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
_CONTEXT = 8192  # Llama 3's pre-training context
_PHI2_HEAD_DIM, _PHI2_ROTATED = 2560 // 32, int(2560 // 32 * 0.4)


def _sci(x: float) -> str:
    """2.5e-6, not 2.5e-06."""
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}".replace("-", "−")


_YARN = 0.1 * np.log(4.0) + 1


EXERCISES = (
    Exercise(
        key="inv-freq",
        title="inv_freq from a config",
        prompt=(
            "A config says `head_dim: 128`, `rope_theta: 500000.0` and no `rope_scaling`. Compute the "
            "`inv_freq` vector a Hugging Face model builds from it, as §2 does for each model."
        ),
        hint="`1 / theta ** (arange(0, d, 2) / d)`.",
        setup='config = {"head_dim": 128, "rope_theta": 500000.0}',
        stub="answer = None  # 64 inverse frequencies",
        solution='d = config["head_dim"]\nanswer = 1.0 / config["rope_theta"] ** (np.arange(0, d, 2) / d)',
        check=check_inv_freq,
        takeaway=(
            lambda: _(
                "So inv_freq falls from 1 to about {slowest_freq}; the slowest wavelength is about "
                "{slowest_wave} tokens, against {slowest_wave_before} at base 10 000, and {never} of the {pairs} "
                "pairs (not {never_before}) never complete a turn in an {context}-token context."
            ).format(
                slowest_freq=_sci(1 / THETA ** ((HEAD_DIM - 2) / HEAD_DIM)),
                slowest_wave=_sci(_WAVE_500K[-1]),
                slowest_wave_before=_sci(_WAVE_10K[-1]),
                never=int(np.sum(_WAVE_500K > _CONTEXT)),
                pairs=HEAD_DIM // 2,
                never_before=int(np.sum(_WAVE_10K > _CONTEXT)),
                context=_CONTEXT,
            )
        ),
        mistakes=(
            Mistake('d = config["head_dim"]\nanswer = 1.0 / 10_000.0 ** (np.arange(0, d, 2) / d)', "default base"),
            Mistake('d = config["head_dim"]\nanswer = 1.0 / config["rope_theta"] ** (np.arange(d) / d)', "shape"),
            Mistake(
                'd = config["head_dim"]\nanswer = 1.0 / config["rope_theta"] ** (np.arange(2, d + 2, 2) / d)',
                "off by one: your answer is the expected values shifted by one place",
            ),
        ),
    ),
    Exercise(
        key="rotated-features",
        title="Partial rotary: how many features turn",
        prompt=(
            "Phi-2 has `hidden_size: 2560`, 32 heads (so `head_dim` 80) and `partial_rotary_factor: 0.4`. "
            "How many features of each head are rotated (§3)?"
        ),
        hint="The factor multiplies the head dimension.",
        setup='config = {"hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4}',
        stub="answer = None  # a whole number",
        solution=(
            'head_dim = config["hidden_size"] // config["num_attention_heads"]\n'
            'answer = int(head_dim * config["partial_rotary_factor"])'
        ),
        check=check_rotated_features,
        takeaway=(
            lambda: _(
                "So {phi2_rotated} of the {phi2_head_dim} features ({rotated_pairs} pairs) turn with "
                "position and the other {passed} pass through unrotated; inv_freq then has {rotated_pairs} "
                "entries, computed with d = {phi2_rotated}, not {phi2_head_dim}."
            ).format(
                phi2_rotated=_PHI2_ROTATED,
                phi2_head_dim=_PHI2_HEAD_DIM,
                rotated_pairs=_PHI2_ROTATED // 2,
                passed=_PHI2_HEAD_DIM - _PHI2_ROTATED,
            )
        ),
        mistakes=(
            Mistake('answer = int(config["hidden_size"] * config["partial_rotary_factor"])', "hidden_size"),
            Mistake("answer = 80 - 32", "pass-through"),
            Mistake("answer = 32 / 2", "type"),
        ),
    ),
    Exercise(
        key="yarn-factor",
        title="YaRN's attention factor",
        prompt=(
            "YaRN multiplies cos and sin (so the scores by its square) by $0.1\\ln s + 1$. Compute it for a "
            "factor $s = 4$."
        ),
        hint="`np.log` is the natural log.",
        setup="s = 4.0",
        stub="answer = None  # one float",
        solution="answer = 0.1 * np.log(s) + 1",
        check=check_yarn_factor,
        takeaway=(
            lambda: _(
                "So cos and sin grow by {yarn:.3f} and the scores by its square, {yarn_squared:.3f}: a "
                "slight sharpening that offsets the flatter attention over 4 times more keys."
            ).format(yarn=_YARN, yarn_squared=_YARN**2)
        ),
        mistakes=(
            Mistake("answer = 0.1 * np.log2(s) + 1", "log₂"),
            Mistake("answer = 0.1 * np.log(s)", "+ 1"),
            Mistake("answer = (0.1 * np.log(s) + 1) ** 2", "the factor on the scores"),
            Mistake("answer = 1.2965", "the factor on the scores"),
        ),
    ),
)
