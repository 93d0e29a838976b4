"""Sinusoidal encoding: hand-worked values, the relative-shift matrix, and the m − n dependence."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import poslib as P


def test_hand_worked_values():
    pe = P.sinusoidal_table(2, 4)
    # ω_0 = 1, ω_1 = 10000^(−2/4) = 0.01
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1])
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)])
    concat = P.sinusoidal_table(2, 4, layout="concat")
    np.testing.assert_allclose(concat[1], [math.sin(1), math.sin(0.01), math.cos(1), math.cos(0.01)])


@given(
    p=st.integers(0, 3000),
    k=st.integers(-500, 500),
    dim=st.sampled_from([2, 8, 64]),
    layout=st.sampled_from(["interleaved", "concat"]),
)
def test_shift_is_a_fixed_linear_map(p, k, dim, layout):
    m = P.sinusoidal_shift_matrix(k, dim, layout=layout)
    pe = P.sinusoidal_encode(np.array([p, p + k]), dim, layout=layout)
    np.testing.assert_allclose(m @ pe[0], pe[1], atol=1e-9)


@given(m=st.integers(0, 2000), n=st.integers(0, 2000), shift=st.integers(0, 2000))
def test_dot_product_depends_only_on_offset(m, n, shift):
    pe = P.sinusoidal_encode(np.array([m, n, m + shift, n + shift]), 32)
    assert pe[0] @ pe[1] == pytest.approx(pe[2] @ pe[3], abs=1e-9)


def test_wavelengths():
    # pair i has wavelength 2π·base^(2i/d): PE repeats after that many positions
    d, base = 8, 100.0
    w = P.sinusoidal_frequencies(d, base)
    np.testing.assert_allclose(2 * np.pi / w, 2 * np.pi * base ** (np.arange(0, d, 2) / d))


def test_module_matches_function():
    import torch

    emb = P.SinusoidalEmbedding(16)
    out = emb(torch.arange(5))
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), P.sinusoidal_table(5, 16), atol=1e-6)
