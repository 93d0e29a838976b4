"""Planted bugs of issue 45: the lab's verdicts as evidence.

Three mistakes the issue found or names: gradients summed across ranks instead of averaged (the classic DDP bug,
which a loss comparison after AdamW and a clip to norm 1 cannot see), a comparison rule that reads the mean
ratio alone (no test: equal schemes get a winner whenever the mean of 3 noisy seeds passes ×1.03), and a plateau
judged from two points (issue 35's rule: the last 2 held-out points against the 2 before, within 3 %).
"""

from __future__ import annotations

import importlib
import math
from dataclasses import replace
from typing import Any

import poslib.lab.distributed as distributed
import poslib.lab.seedstats as seedstats

from . import bug, swap

# poslib.lab binds the name `plateau` to seedstats.plateau (the old rule), so the module is taken from the import system
plateau_rule = importlib.import_module("poslib.lab.plateau")
stats = importlib.import_module("poslib.lab.stats")


@bug(
    "lab_ddp_grads_summed",
    "under torchrun the ranks' gradients are summed, not averaged: every gradient × the world size after backward()",
    tests=("tests/test_lab_ddp.py::test_two_ranks_reduce_the_first_gradients_to_what_one_process_computes",),
    notebooks=(),
    unit_only="no notebook starts torchrun: the two-rank gradient test is the only place the sum can show",
    thread="issue 45 item 6; DDP's default all-reduce divides by the world size (torch DistributedDataParallel docs)",
)
def _lab_ddp_grads_summed() -> None:
    import torch.distributed as dist

    original = distributed.wrap

    def summed(state, bucket):  # type: ignore[no-untyped-def]  # DDP refuses a hook annotated other than GradBucket
        # DDP's default hook all-reduces and divides by the world size; this one forgets the division
        return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(lambda fut: fut.value()[0])

    def wrap_summing(model: Any) -> Any:
        net = original(model)
        if net is not model:
            net.register_comm_hook(None, summed)
        return net

    swap(distributed.wrap, wrap_summing)


@bug(
    "lab_rule_reads_means",
    "the comparison rule names a winner from the mean paired ratio alone (×1.03), whatever the paired t-test says",
    tests=(
        "tests/test_lab_stats.py::test_identical_schemes_with_spread_010_are_declared_different_in_at_most_5_percent_of_draws",
        "tests/test_lab_stats.py::test_every_seed_agreeing_with_p_above_alpha_is_not_distinguished_and_says_3_of_3_favour_a",
        "tests/test_lab_verdicts.py::test_an_order_every_seed_agrees_on_is_not_distinguished_at_3_seeds_never_tied",
    ),
    # 12's lab check: the hybrid's ×1.071 at L_train (every seed, not distinguished at 3 seeds) becomes a win
    notebooks=("notebooks/12_position_from_the_data.ipynb",),
    thread="issue 45 item 1 (equal schemes named different 24 % of the time at 3 seeds)",
)
def _lab_rule_reads_means() -> None:
    def by_mean(mean_diff: float, p_adjusted: float, metric: Any, alpha: float = stats.ALPHA) -> Any:
        threshold = math.log(stats.PPL_THRESHOLD) if metric == "ppl" else stats.PASSKEY_THRESHOLD
        if abs(mean_diff) < threshold:
            return stats.Relation.NOT_DISTINGUISHED
        gain = -mean_diff if metric == "ppl" else mean_diff
        return stats.Relation.A_BEATS_B if gain > 0 else stats.Relation.B_BEATS_A

    swap(stats.decide, by_mean)


@bug(
    "lab_plateau_from_two_points",
    "the plateau rule compares the last 2 held-out points with the 2 before (within 3 %) instead of extrapolating "
    "a line through the last 30 %",
    tests=(
        "tests/test_lab_plateau.py::test_the_old_rule_passes_21_points_ending_at_step_300_and_the_new_one_fails_them",
        "tests/test_lab_plateau.py::test_pis_fine_tune_in_the_committed_run_has_not_plateaued",
    ),
    # 11's curves cell: the two-point rule passes every fine-tune, where the rule fails PI's on every seed
    notebooks=("notebooks/11_extending_a_trained_model.ipynb",),
    thread="issue 45 item 3 (issue 35's rule passes every fine-tune cut at step 300 of 1000)",
)
def _lab_plateau_from_two_points() -> None:
    original = plateau_rule.heldout_plateau

    def two_points(steps: Any, loss: Any, share: float = 0.3, horizon: float = 0.3, tolerance: float = 0.01) -> Any:
        verdict = original(steps, loss, share, horizon, tolerance)
        last, before = sum(loss[-2:]) / 2, sum(loss[-4:-2]) / 2
        return replace(verdict, plateaued=abs(before - last) / before <= 0.03)

    swap(plateau_rule.heldout_plateau, two_points)


@bug(
    "lab_combine_layout_lets_any_field_differ",
    "combine_runs, asked to pair two head layouts, lets any configuration field differ (a wider model, other steps)",
    tests=("tests/test_lab_datadep.py::test_combine_runs_pairs_another_head_layout_only_when_asked_and_says_so",),
    notebooks=(),
    unit_only="the committed regime files differ in the head count alone: no notebook holds a pair this lets through",
    thread="issue 45 item 4 (the regime's ALiBi in 4 heads paired by seed with RoPE and NoPE in one)",
)
def _lab_combine_layout_lets_any_field_differ() -> None:
    original = seedstats.combine_runs

    def permissive(base: Any, extra: Any, layout: Any = ()) -> dict[str, Any]:
        if not layout:
            return original(base, extra, layout)
        extra = {**extra, "config": {**base["config"], "schemes": extra["config"]["schemes"]}}  # every field agrees
        return original(base, extra)

    swap(seedstats.combine_runs, permissive)
