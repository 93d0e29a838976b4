"""NoPE (poslib.nope): no positions at all."""

import numpy as np

import poslib as P


def test_nope_is_identity():
    x = np.ones((2, 3))
    assert P.apply_nope(x, np.arange(2)) is x
