"""Sandwich (poslib.sandwich): the sinusoidal inner product as a bias."""

import numpy as np

import poslib as P


def test_sandwich_is_the_sinusoidal_inner_product_minus_its_peak():
    pe = P.sinusoidal_table(7, 16)
    np.testing.assert_allclose(P.sandwich_bias(8, 16, q_len=7, k_len=7)[0], pe @ pe.T - 8, atol=1e-12)
    np.testing.assert_allclose(
        P.sandwich_bias(8, 16, q_len=3, k_len=7)[0], pe[4:] @ pe.T - 8, atol=1e-12
    )  # queries are the last 3
    per_head = P.sandwich_bias(4, 16, q_len=7, k_len=7)
    np.testing.assert_allclose(per_head[1], (pe @ pe.T - 8) / (8 * 2 / 4), atol=1e-12)
