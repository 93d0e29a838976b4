"""Bit-for-bit repeatable runs: a fixed thread count and deterministic kernels, restored afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

__all__ = ["deterministic"]

# torch's stubs do not declare this module's switch; reached through Any.
_DETERMINISTIC: Any = torch.utils.deterministic


@contextmanager
def deterministic(threads: int) -> Iterator[None]:
    """Fixed thread count and deterministic kernels for the duration of a run (restored afterwards).

    Training is then bit-deterministic on CPU for a fixed thread count: the same seed gives the same
    losses and perplexities, which is what lets a notebook check a committed results file.
    """
    old_threads, old_det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    old_fill = _DETERMINISTIC.fill_uninitialized_memory
    # On CUDA, deterministic mode makes cuBLAS raise unless its workspace is pinned this way
    # (PyTorch's "Reproducibility" notes); the variable is ignored on the CPU.
    old_cublas = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    if old_cublas is None:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    # Deterministic mode also fills every new tensor with NaN (a debugging aid, ~10% of a
    # training step here); results do not depend on it because nothing reads unwritten memory.
    _DETERMINISTIC.fill_uninitialized_memory = False
    try:
        yield
    finally:
        torch.set_num_threads(old_threads)
        torch.use_deterministic_algorithms(old_det)
        _DETERMINISTIC.fill_uninitialized_memory = old_fill
        if old_cublas is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
