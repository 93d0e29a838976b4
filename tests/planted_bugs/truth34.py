"""Planted bugs of issue 34 (truth pass 4) and the paired rule of issue 35.

Each is a mistake a check repaired in this round must catch: the lab's verdicts tied by unpaired seed
ranges or decided on the mean alone, a YaRN reading scored without its scaling (11's live check skipped
it), a position-free control stopped before its plateau (02), DeepSeek's mscale ignored (09), and
StreamingLLM's cache scored at text positions (09).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import poslib.lab.schemes as schemes
import poslib.lab.seedstats as seedstats
import poslib.rope_scaling as rope_scaling
import poslib.teaching.sinks as sinks
import poslib.teaching.toy as toy

from . import bug, swap

LAB_NOTEBOOKS = ("notebooks/10_learned_and_contextual_positions.ipynb", "notebooks/11_extending_a_trained_model.ipynb")


@bug(
    "lab_ties_from_unpaired_ranges",
    "two schemes tied whenever their means differ by no more than the larger seed range (the rule before issue 34): "
    "a method lower on every seed ties with the best",
    tests=("tests/test_lab.py::test_paired_rule_decides_by_per_seed_differences_not_by_unpaired_ranges",),
    notebooks=LAB_NOTEBOOKS,
    thread="issue 34 item 6 (11's rope+ft_yarn 'ties with' rope+self_extend, lower on 0 of 3 seeds)",
)
def _lab_ties_from_unpaired_ranges() -> None:
    def range_tied(results: Any, a: str, b: str, multiple: int = 8) -> bool:
        pa, pb = seedstats._ppl(results, a, multiple), seedstats._ppl(results, b, multiple)
        if pa is None or pb is None:
            return False
        if seedstats.seeds_disagree(results, a, multiple) or seedstats.seeds_disagree(results, b, multiple):
            return False
        if seedstats.n_seeds(results) > 1:
            return abs(pa - pb) <= max(
                seedstats.spread(results, a, multiple) or 0.0, seedstats.spread(results, b, multiple) or 0.0
            )
        return abs(pa - pb) <= seedstats.TIE * min(pa, pb)

    def range_beats(results: Any, a: str, b: str, multiple: int = 8, metric: str = "ppl") -> bool:
        if metric != "ppl":
            va, vb = seedstats.passkey_values(results, a, multiple), seedstats.passkey_values(results, b, multiple)
            if va is None or vb is None:
                return False
            gap = sum(va) / len(va) - sum(vb) / len(vb)
            return gap > max(max(va) - min(va), max(vb) - min(vb), seedstats.PASSKEY_TIE if len(va) == 1 else 0.0)
        pa, pb = seedstats._ppl(results, a, multiple), seedstats._ppl(results, b, multiple)
        return pa is not None and pb is not None and pa < pb and not range_tied(results, a, b, multiple)

    swap(seedstats.tied, range_tied)
    swap(seedstats.beats, range_beats)


@bug(
    "lab_beats_on_the_mean_alone",
    "a scheme 'beats' another when the mean paired ratio passes ×1.03, whether or not it is lower on every seed",
    tests=("tests/test_lab.py::test_paired_rule_decides_by_per_seed_differences_not_by_unpaired_ranges",),
    notebooks=LAB_NOTEBOOKS,
    thread="issue 35 item 3 (a tie only when the seeds disagree in sign or the paired difference is below a threshold)",
)
def _lab_beats_on_the_mean_alone() -> None:
    def outcome(self: Any) -> seedstats.Outcome:
        if abs(self.mean) < self.threshold:
            return seedstats.Outcome.TIED
        better = self.mean < 0 if self.metric == "ppl" else self.mean > 0
        return seedstats.Outcome.A_BEATS_B if better else seedstats.Outcome.B_BEATS_A

    # the rule is PairedComparison.outcome (its verdict property reads it): every verdict follows the mean alone
    seedstats.PairedComparison.outcome = property(outcome)  # type: ignore[method-assign,assignment]


@bug(
    "lab_yarn_reading_unscaled",
    "the lab's rope+yarn reading scores the trained model without any scaling (plain RoPE under YaRN's name)",
    tests=("tests/test_lab_extend.py::test_every_frequency_scaling_reading_changes_the_rotation_beyond_l_train",),
    notebooks=("notebooks/11_extending_a_trained_model.ipynb",),
    thread="issue 34 item 2 (11's live check scored every training-free reading but rope+yarn)",
)
def _lab_yarn_reading_unscaled() -> None:
    original = schemes.Rope.inv_freq

    def unscaled(self: Any, cfg: Any, T: int, modifier: str | None) -> Any:
        return original(self, cfg, T, None if modifier == "yarn" else modifier)

    schemes.Rope.inv_freq = unscaled  # type: ignore[method-assign]


@bug(
    "offset_copy_control_stopped_early",
    "the position-free control of 02 trains a third of the steps it is given (stopped before its plateau)",
    tests=("tests/test_teaching_toy.py::test_the_position_free_control_trains_every_step_it_is_given",),
    notebooks=("notebooks/02_learned_absolute.ipynb",),
    thread="issue 34 item 4 (0.157 at 100 steps, 0.168 at 300, against the position-blind 0.168)",
)
def _offset_copy_control_stopped_early() -> None:
    original = toy._train

    def early(
        scheme: str, max_len: int, train_len: int, vocab: int, dim: int, offset: int, steps: int, *rest: Any
    ) -> Any:
        return original(
            scheme, max_len, train_len, vocab, dim, offset, steps // 3 if scheme == "none" else steps, *rest
        )

    swap(original, early)


@bug(
    "deepseek_mscale_ignored",
    "YaRN's attention factor ignores mscale / mscale_all_dim (DeepSeek's ratio read as plain 0.1·ln s + 1)",
    tests=("tests/test_rope_production.py",),
    notebooks=("notebooks/09_rope_in_production.ipynb",),
    thread="issue 34 item 13 (09's hand value was ms(40, 1)/ms(40, 1) = 1 by construction)",
)
def _deepseek_mscale_ignored() -> None:
    original = rope_scaling.yarn_attention_factor

    def no_mscale(s: Any, mscale: float = 1.0, *args: Any, **kw: Any) -> Any:
        return original(s, *args, **kw)

    swap(original, no_mscale)


@bug(
    "streaming_cache_text_positions",
    "StreamingLLM's cache rotates its keys at their text positions, not at their slots in the cache",
    tests=("tests/test_teaching_sinks.py",),
    notebooks=("notebooks/09_rope_in_production.ipynb",),
    thread="issue 34 item 15 (09 cell 45 restated that RoPE is relative; Xiao et al. 2023 §3.2 re-index the cache)",
)
def _streaming_cache_text_positions() -> None:
    original = sinks.streaming_cache

    def text_positions(n_tokens: int, **kw: Any) -> tuple[np.ndarray, np.ndarray]:
        kept, _ = original(n_tokens, **kw)
        return kept, kept.copy()

    swap(original, text_positions)


assert math  # the module's imports are the patched modules' own
