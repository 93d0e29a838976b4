"""Planted bugs in the extrapolation lab (poslib.lab)."""

from __future__ import annotations

import poslib.lab.schemes as schemes

from . import bug, swap


@bug(
    "lab_unscaled_sinusoidal",
    "the lab adds the sinusoidal table unscaled (entries ±1) to std-0.02 token embeddings",
    tests=("tests/test_lab.py::test_sinusoidal_table_is_scaled_to_the_token_embeddings",),
    notebooks=("notebooks/08_extrapolation_lab.ipynb",),
    thread="Vaswani et al. 2017 §3.4 scale the embeddings by √d_model for this reason",
)
def _lab_unscaled_sinusoidal() -> None:
    swap(schemes.SINUSOIDAL_SCALE, 1.0)
