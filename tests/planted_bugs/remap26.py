"""Planted bugs of issue 26: training-free distance remapping (poslib.remap) and the lab's context extension.

Every bug here is caught by unit tests (tests/test_remap.py, tests/test_lab_extend.py) and by a check of
notebook 11 ("Extending a trained model"): the formula checks of its §2, the two-pass score check, the
group-size check, and the live replay of the committed run in §3.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import poslib.lab.extend as extend
import poslib.lab.schemes as schemes
import poslib.remap as remap

from . import bug, swap

NOTEBOOK = "notebooks/11_extending_a_trained_model.ipynb"


def _bug(
    name: str, what: str, *, tests: tuple[str, ...], thread: str
) -> Callable[[Callable[[], None]], Callable[[], None]]:
    return bug(name, what, tests=tests, notebooks=(NOTEBOOK,), thread=thread)


@_bug(
    "rerope_clamps_at_w_minus_1",
    "ReRoPE's distance clamped at w − 1 (the mask is m − n < w, so the clamp looks like it should be too)",
    tests=("tests/test_remap.py",),
    thread="bojone/rerope rerope_patch.py: .clip(max=window), and the query rotated to exactly `window`",
)
def _rerope_clamps_at_w_minus_1() -> None:
    original = remap.rerope_relative_positions

    def wrong(q_len: int, k_len: int | None = None, *, window: int, leak: float | None = None, **kw: Any) -> Any:
        d = original(q_len, k_len, window=window, leak=leak, **kw)
        if leak is not None:
            return d
        return d.clamp(max=window - 1) if isinstance(d, torch.Tensor) else np.minimum(d, window - 1)

    swap(original, wrong)


@_bug(
    "self_extend_without_shift",
    "Self-Extend's grouped query position ⌊m/G⌋ without the W − ⌊W/G⌋ shift: distances drop below W past the window",
    tests=("tests/test_remap.py", "tests/test_lab_extend.py"),
    thread="datamllab/LongLM self_extend_patch/Llama_4_40.py: group_query_position",
)
def _self_extend_without_shift() -> None:
    original = remap.self_extend_positions

    def wrong(q_len: int, k_len: int | None = None, *, group_size: int, neighbor_window: int, **kw: Any) -> Any:
        pos = original(q_len, k_len, group_size=group_size, neighbor_window=neighbor_window, **kw)
        shift = neighbor_window - neighbor_window // group_size
        qp = pos.q_positions.clone() if isinstance(pos.q_positions, torch.Tensor) else pos.q_positions.copy()
        qp[1] = qp[1] - shift
        return remap.RemappedPositions(qp, pos.k_positions, pos.region)

    swap(original, wrong)


@_bug(
    "remap_scores_query_at_key_positions",
    "rope_remapped_scores rotates the queries with the keys' positions of each region (the last q_len of them)",
    tests=("tests/test_remap.py",),
    thread="bojone/rerope: query_states2 rotated to `window`, the keys left at position 0",
)
def _remap_scores_query_at_key_positions() -> None:
    original = remap.rope_remapped_scores

    def wrong(q: Any, k: Any, positions: Any, inv_freq: Any, **kw: Any) -> Any:
        q_len = q.shape[-2]
        kp = positions.k_positions
        swapped = remap.RemappedPositions(kp[:, kp.shape[1] - q_len :], kp, positions.region)
        return original(q, k, swapped, inv_freq, **kw)

    swap(original, wrong)


@_bug(
    "leaky_rerope_offset_w",
    "Leaky ReRoPE's far query at m/leak + w, not (m + w(leak − 1))/leak: past the window the distance jumps by w/leak",
    tests=("tests/test_remap.py",),
    thread="bojone/rerope leaky_rerope_patch.py: offset = window * (scaling_factor - 1)",
)
def _leaky_rerope_offset_w() -> None:
    original = remap.rerope_positions

    def wrong(q_len: int, k_len: int | None = None, *, window: int, leak: float | None = None, **kw: Any) -> Any:
        pos = original(q_len, k_len, window=window, leak=leak, **kw)
        if leak is None:
            return pos
        qp = pos.q_positions.clone() if isinstance(pos.q_positions, torch.Tensor) else pos.q_positions.copy()
        qp[1] = qp[1] + window / leak  # (m + w(leak − 1))/leak + w/leak = m/leak + w
        return remap.RemappedPositions(qp, pos.k_positions, pos.region)

    swap(original, wrong)


@_bug(
    "lab_remap_logits_unscaled",
    "the lab's remapped logits miss the 1/√d that SDPA applies to every other scheme's q·kᵀ",
    tests=("tests/test_lab_extend.py::test_the_lab_scores_each_pair_at_its_remapped_distance",),
    thread="issue 26 (the lab passes remapped logits to SDPA as its mask, with q = 0)",
)
def _lab_remap_logits_unscaled() -> None:
    original = schemes.Rope.remapped_scores

    def wrong(self: Any, model: Any, T: int, modifier: str, device: Any) -> Any:
        scaled = original(self, model, T, modifier, device)
        factor = float(np.sqrt(model.cfg.head_dim))
        return lambda q, k: scaled(q, k) * factor

    schemes.Rope.remapped_scores = wrong  # type: ignore[method-assign]


@_bug(
    "lab_finetune_in_place",
    "fine-tuning trains the trained rope model itself, not a copy: every method after the first starts fine-tuned",
    tests=("tests/test_lab_extend.py",),
    thread="issue 26 item 2 (each method starts from the seed's trained model)",
)
def _lab_finetune_in_place() -> None:
    extend.copy = types.SimpleNamespace(deepcopy=lambda x: x)  # type: ignore[assignment]


@_bug(
    "self_extend_group_one_too_small",
    "the lab's Self-Extend group size one smaller than the smallest that keeps distances below L_train",
    tests=("tests/test_lab_extend.py",),
    thread="datamllab/LongLM README: the input may be up to (L_train − W)·G + W tokens (one distance too generous)",
)
def _self_extend_group_one_too_small() -> None:
    original = schemes.RemapSettings.group

    def wrong(self: Any, T: int, train_len: int) -> int:
        return max(1, original(self, T, train_len) - 1)

    schemes.RemapSettings.group = wrong  # type: ignore[method-assign]
