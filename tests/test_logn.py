"""log-n attention scaling (poslib.logn)."""

import numpy as np
import pytest

import poslib as P


# ---------- log-n, attention ----------
def test_logn_scale():
    assert P.logn_scale(512, 512) == 1.0 and P.logn_scale(100, 512) == 1.0
    assert P.logn_scale(512**2, 512) == pytest.approx(2.0)
    np.testing.assert_allclose(P.logn_scale(np.array([64, 4096]), 64), [1.0, 2.0])
