"""Planted bugs behind the checks repaired in notebooks 00–03 (issue 22, items 4–6).

Each is a mistake the repaired check exists to catch: the log-n experiment run without its factor or with the
wrong training length (00), the position-blind baseline counted over the whole batch (02), and the numerical
rank counted without its tolerance, which makes the old claim "the table spans once the slowest pair has
turned" look like a measurement of exact rank (03).
"""

from __future__ import annotations

from typing import Any

import torch

import poslib.teaching.entropy as entropy
import poslib.teaching.similarity as similarity
import poslib.teaching.toy as toy

from . import bug, swap

NB00, NB02, NB03 = "notebooks/00_tour.ipynb", "notebooks/02_learned_absolute.ipynb", "notebooks/03_sinusoidal.ipynb"


@bug(
    "logn_rise_factor_dropped",
    "notebook 00's log-n experiment over seeds forgets the factor: the 'scaled' rows are the plain ones",
    tests=("tests/test_teaching_entropy.py",),
    notebooks=(NB00,),
    thread="issue 22 item 4 (a claim read off one draw)",
)
def _logn_rise_factor_dropped() -> None:
    original = entropy.logn_entropy_rise_over_seeds

    def wrong(*args: Any, **kwargs: Any) -> Any:
        right = original(*args, **kwargs)
        return entropy.LognEntropyRise(right.lengths, right.train_len, right.plain, right.plain.copy())

    swap(original, wrong)


@bug(
    "logn_rise_wrong_train_len",
    "notebook 00's log-n experiment scales by log N / log 512 (the sources' L) while the model's L is 64",
    tests=("tests/test_teaching_entropy.py",),
    notebooks=(NB00,),
    thread="Su 2021, kexue.fm/archives/8823 (log_512 n, with 512 the training length there)",
)
def _logn_rise_wrong_train_len() -> None:
    original = entropy.logn_entropy_rise_over_seeds

    def wrong(lengths: Any = (64, 256, 1024, 4096), train_len: int = 64, **kwargs: Any) -> Any:
        right = original(lengths, 512, **kwargs)
        return entropy.LognEntropyRise(right.lengths, train_len, right.plain, right.scaled)

    swap(original, wrong)


def _logn_rise_with_train_len(wrong_len: int) -> None:
    original = entropy.logn_entropy_rise_over_seeds

    def wrong(lengths: Any = (64, 256, 1024, 4096), train_len: int = 64, **kwargs: Any) -> Any:
        right = original(lengths, wrong_len, **kwargs)
        return entropy.LognEntropyRise(right.lengths, train_len, right.plain, right.scaled)

    swap(original, wrong)


@bug(
    "logn_rise_train_len_128",
    "notebook 00's log-n experiment scales by log N / log 128 (twice the model's L = 64)",
    tests=("tests/test_teaching_entropy.py",),
    notebooks=(NB00,),
    thread="issue 22 review of 00 (a wrong L passed the old 5-95 % bounds: median 0.72)",
)
def _logn_rise_train_len_128() -> None:
    _logn_rise_with_train_len(128)


@bug(
    "logn_rise_train_len_32",
    "notebook 00's log-n experiment scales by log N / log 32 (half the model's L = 64)",
    tests=("tests/test_teaching_entropy.py",),
    notebooks=(NB00,),
    thread="issue 22 review of 00 (a wrong L passed the old 5-95 % bounds: median 0.47)",
)
def _logn_rise_train_len_32() -> None:
    _logn_rise_with_train_len(32)


@bug(
    "position_blind_pooled_mode",
    "the position-blind baseline guesses the most frequent token of the whole batch, not of each sequence",
    tests=("tests/test_teaching_toy.py",),
    notebooks=(NB02,),
    thread="issue 22 item 5 (the control compared with chance instead of the best position-blind guess)",
)
def _position_blind_pooled_mode() -> None:
    original = toy.position_blind_accuracy

    @torch.no_grad()
    def wrong(length: int, *, offset: int, vocab: int, batch: int = 256, seed: int = 123) -> torch.Tensor:
        gen = torch.Generator().manual_seed(seed)
        tokens, targets = toy.offset_copy_batch(batch, length, vocab, offset, generator=gen)
        guess = torch.bincount(tokens.flatten(), minlength=vocab).argmax()  # one guess for every sequence
        hits = (targets == guess).float().mean(0)
        hits[:offset] = float("nan")
        return hits

    swap(original, wrong)


@bug(
    "numerical_rank_no_tolerance",
    "numerical rank counts every nonzero singular value (the exact rank, which rounding makes full)",
    tests=("tests/test_teaching_similarity.py",),
    notebooks=(NB03,),
    thread="issue 22 item 6 ('PE_p span R^d once the slowest pair has turned')",
)
def _numerical_rank_no_tolerance() -> None:
    import numpy as np

    original = similarity.numerical_rank

    def wrong(table: Any, rtol: float = 1e-10) -> int:
        t = np.asarray(table, dtype=np.float64)
        return int((np.linalg.svd(t, compute_uv=False) > 0).sum())

    swap(original, wrong)
