"""Planted bugs behind the checks repaired in notebooks 04, 05 and 07 for issue 22 (items 1, 8, 9, 11, 14).

Each is a mistake the repaired check exists to catch: a stale number in an exercise's solution, a wrong
RoPE score, a mis-sized decay bound, T5's bias read with 001's query − key sign, T5 with too few exact
buckets, GPT-NeoX's ``rotary_pct`` not read, and ALiBi's receptive field computed for an endless row.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

import poslib.alibi as alibi
import poslib.exercises.nb05 as nb05
import poslib.rope as rope
import poslib.rope_configs as rope_configs
import poslib.t5 as t5

from . import bug, swap

NB04, NB05, NB07 = "notebooks/04_relative.ipynb", "notebooks/05_rope.ipynb", "notebooks/07_alibi.ipynb"


@bug(
    "ex51_solution_number_stale",
    "Exercise 5.1's solution states ≈ 1.3e7 while its code (and the checker) give (4095/2π)^(128/40) ≈ 1.01e9",
    tests=("tests/test_exercises.py::test_numbers_stated_in_solutions_are_the_numbers_they_compute",),
    notebooks=(NB05,),
    thread="issue 22 item 1",
)
def _ex51_stale() -> None:
    first, *rest = nb05.EXERCISES
    stale = dataclasses.replace(first, solution=first.solution.replace("≈ 1.01e9", "≈ 1.3e7"))
    if stale.solution == first.solution:
        raise RuntimeError("planting failed: Exercise 5.1's solution no longer states ≈ 1.01e9")
    nb05.EXERCISES = (stale, *rest)


@bug(
    "rope_angle_tripled_reversed",
    "RoPE rotating by −3mθ_i (frequency × 3, sign flipped): a wrong score that RoFormer's bound still admits",
    tests=("tests/test_rope.py",),
    notebooks=(NB05,),
    thread="issue 22 item 11",
)
def _rope_tripled() -> None:
    original = rope.apply_rope

    def wrong(x: Any, positions: Any, inv_freq: Any, **kw: Any) -> Any:
        pos = positions if hasattr(positions, "dtype") else np.asarray(positions)
        return original(x, -3 * pos, inv_freq, **kw)

    swap(original, wrong)


@bug(
    "rope_decay_bound_shifted",
    "RoFormer's decay bound summed over C_0 … C_(d/2−1) instead of C_1 … C_(d/2): the partial sums off by one",
    tests=("tests/test_rope.py",),
    notebooks=(NB05,),
    thread="RoFormer (arXiv:2104.09864) §3.4.3",
)
def _decay_shifted() -> None:
    original = rope.rope_decay_bound

    def wrong(distances: Any, head_dim: int, base: float = 10000.0) -> Any:
        theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
        r = np.asarray(distances, dtype=np.float64)
        s = np.cumsum(np.exp(1j * r[..., None] * theta), axis=-1)
        s = np.concatenate([np.zeros_like(s[..., :1]), s[..., :-1]], axis=-1)  # C_0 … C_(d/2−1)
        out = np.abs(s).mean(-1)
        if hasattr(distances, "dtype") and not isinstance(distances, np.ndarray):  # a torch tensor in
            import torch

            return torch.as_tensor(out)
        return out

    swap(original, wrong)


@bug(
    "t5_bias_query_minus_key",
    "T5's bias read at the bucket of query − key, 001's r_b(i−j), instead of key − query",
    tests=("tests/test_t5.py",),
    notebooks=(NB04,),
    thread="memory_position − context_position in transformers' T5Attention.compute_bias",
)
def _t5_bias_sign() -> None:
    original = t5.t5_bias

    def wrong(
        bias_table: Any,
        q_len: int,
        k_len: int | None = None,
        *,
        bidirectional: bool = True,
        max_distance: int = 128,
        causal: bool = False,
        backend: Any = None,
        device: Any = None,
    ) -> Any:
        xp, device = t5.select(backend, device, bias_table=bias_table)
        rel = -t5._relative_distance(q_len, k_len, xp, device, dtype=xp.int64)  # query − key
        buckets = t5.t5_relative_bucket(
            rel, bidirectional=bidirectional, num_buckets=bias_table.shape[0], max_distance=max_distance
        )
        bias = xp.moveaxis(t5.asarray(bias_table, xp, device=device)[buckets], -1, 0)
        return t5.mask_future(bias) if causal else bias

    swap(original, wrong)


@bug(
    "t5_exact_quarter",
    "T5 keeps only num_buckets/4 exact distances per direction (max_exact halved): near distances share buckets",
    tests=("tests/test_t5.py",),
    notebooks=(NB04,),
    thread="transformers' T5 _relative_position_bucket: max_exact = num_buckets // 2 after halving",
)
def _t5_quarter() -> None:
    original = t5.t5_relative_bucket

    def wrong(
        relative_position: Any, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
    ) -> Any:
        right = original(
            relative_position, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        per_direction = num_buckets // 2 if bidirectional else num_buckets
        exact = per_direction // 2
        offset = (right // per_direction) * per_direction  # 0, or the upper half when bidirectional
        within = right - offset
        # distances exact/2 … exact − 1 fall into bucket exact/2 (a shared bucket where each had its own);
        # arithmetic, not item assignment, so NumPy scalars and torch tensors both work
        shared = (within >= exact // 2) & (within < exact)
        return offset + within - shared * (within - exact // 2)

    swap(original, wrong)


@bug(
    "rope_config_rotary_pct_ignored",
    "rope_from_config reads partial_rotary_factor only: GPT-NeoX's rotary_pct ignored, the whole head rotated",
    tests=("tests/test_rope_production.py",),
    notebooks=(NB05,),
    thread="GPT-NeoX config.json: rotary_pct 0.25",
)
def _rotary_pct() -> None:
    original = rope_configs._rotary_dim

    def wrong(config: Any, scaling: Any, head_dim: int) -> int:
        return int(original({k: v for k, v in config.items() if k != "rotary_pct"}, scaling, head_dim))

    swap(original, wrong)


@bug(
    "alibi_reach_endless_row",
    "ALiBi's receptive field computed for an endless row whatever the length (the 1 − e^(−μN) factor dropped)",
    tests=("tests/test_alibi.py",),
    notebooks=(NB07,),
    thread="issue 22 item 9",
)
def _alibi_endless() -> None:
    original = alibi.alibi_receptive_field

    def wrong(slopes: Any, mass: float = 0.9, *, length: int | None = None) -> Any:
        reach = original(slopes, mass)
        return reach if length is None else reach.clip(0, length - 1)

    swap(original, wrong)


@bug(
    "rope_decay_bound_angle_tripled",
    "RoFormer's decay bound built from e^(3j(m−n)θ_i): right size at distance 0, wrong everywhere else",
    tests=("tests/test_rope.py",),
    notebooks=(NB05,),
    thread="issue 22 review of item 11 (05 cell a09f157b)",
)
def _decay_tripled() -> None:
    original = rope.rope_decay_bound

    def wrong(distances: Any, head_dim: int, base: float = 10000.0) -> Any:
        d = distances if hasattr(distances, "dtype") else np.asarray(distances)
        return original(3 * d, head_dim, base)

    swap(original, wrong)
