"""Randomized positional encodings (Ruoss et al., 2023, arXiv:2305.16843).

A model trained on sequences of length n only ever sees positions 0 … n − 1; at a
longer test length its positional scheme meets values it never trained on. Ruoss
et al. train instead on a random *ordered* subset of a larger range 0 … N − 1
(N ≥ the longest test length): for each training sequence, draw n distinct
positions uniformly without replacement and sort them. Order is kept (so relative
direction is meaningful), the gaps vary, and every position below N is seen in
training. The scheme on top (sinusoidal, RoPE, …) is unchanged: only the
positions fed to it differ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._backend import Array, Backend, asarray, check_positive_int, namespace

__all__ = ["randomized_positions"]


def randomized_positions(
    n: int,
    max_pos: int,
    *,
    seed: int | np.random.Generator = 0,
    backend: Backend = "numpy",
    device: Any = None,
) -> Array:
    """n distinct integer positions drawn uniformly from 0 … max_pos − 1, sorted ascending, shape ``(n,)``.

    ``seed`` is an integer or a ``numpy.random.Generator`` (pass the same generator on every
    training step to get a fresh, reproducible draw each time). The draw is made with NumPy
    whatever the backend, so one seed gives the same positions as NumPy int64 or as a torch
    tensor on ``device``.
    """
    check_positive_int("n", n)
    check_positive_int("max_pos", max_pos)
    if n > max_pos:
        raise ValueError(f"n ({n}) must be ≤ max_pos ({max_pos}): the positions are distinct")
    if isinstance(seed, (bool, float)) or not isinstance(seed, (int, np.integer, np.random.Generator)):
        raise TypeError(f"seed must be an integer or a numpy.random.Generator, got {type(seed).__name__}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    positions = np.sort(rng.choice(max_pos, size=n, replace=False)).astype(np.int64)
    xp = namespace(backend)
    if xp is np:
        return positions
    return asarray(positions, xp).to(device) if device is not None else asarray(positions, xp)
