"""Position-similarity matrices (poslib.teaching.similarity)."""

import numpy as np
import pytest
import torch

import poslib as P
from poslib.teaching import similarity


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_similarity_of_sinusoidal_table(backend):
    table = P.sinusoidal_table(40, 16, backend=backend)
    s = similarity.cosine_similarity_matrix(table)
    assert type(s) is type(table)
    s = np.asarray(s)
    np.testing.assert_allclose(np.diag(s), 1.0)
    np.testing.assert_allclose(s, s.T, atol=1e-12)
    assert similarity.toeplitz_gap(s) < 1e-12
    prof = np.asarray(similarity.offset_profile(torch.as_tensor(s) if backend == "torch" else s, 5))
    np.testing.assert_allclose(prof, [s[0, k] for k in range(6)], atol=1e-12)


def test_toeplitz_gap_and_profile_by_hand():
    s = np.array([[1.0, 0.5, 0.0], [0.2, 1.0, 0.5], [0.0, 0.2, 1.0]])
    assert similarity.toeplitz_gap(s) == 0.0
    s[0, 1] = 0.9
    assert similarity.toeplitz_gap(s) == pytest.approx(0.4)
    np.testing.assert_allclose(similarity.offset_profile(s), [1.0, 0.7, 0.0])


def test_similarity_errors():
    with pytest.raises(ValueError, match="all-zero row"):
        similarity.cosine_similarity_matrix(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="table must have shape"):
        similarity.cosine_similarity_matrix(np.zeros(3))
    with pytest.raises(ValueError, match="square"):
        similarity.toeplitz_gap(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="max_offset"):
        similarity.offset_profile(np.eye(3), 3)


# ---------- numerical_rank ----------
def test_numerical_rank_counts_singular_values_above_the_relative_tolerance():
    # U diag(s) Vᵀ with known singular values: 3, 1e-3, 1e-9 (above 1e-10 · 3) and 1e-12 (below), 0
    rng = np.random.default_rng(0)
    u, _ = np.linalg.qr(rng.standard_normal((7, 5)))
    v, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    m = u @ np.diag([3.0, 1e-3, 1e-9, 1e-12, 0.0]) @ v.T
    assert similarity.numerical_rank(m) == 3
    assert similarity.numerical_rank(m, rtol=1e-6) == 2
    assert similarity.numerical_rank(torch.as_tensor(m)) == 3
    assert similarity.numerical_rank(np.zeros((3, 2))) == 0


def test_sinusoidal_table_is_full_rank_only_once_it_is_well_conditioned():
    # 64 consecutive positions at d = 64 span R^64 in exact arithmetic (a Vandermonde matrix), yet to 1e-10 of
    # the largest singular value they resolve fewer than half the directions; 50 000 positions resolve all 64
    assert similarity.numerical_rank(P.sinusoidal_table(64, 64)) < 32
    assert similarity.numerical_rank(P.sinusoidal_table(50_000, 64)) == 64


def test_numerical_rank_errors():
    with pytest.raises(ValueError, match="2-D"):
        similarity.numerical_rank(np.zeros(3))
    with pytest.raises(ValueError, match="rtol"):
        similarity.numerical_rank(np.eye(2), rtol=0.0)
    with pytest.raises(ValueError, match="rtol"):
        similarity.numerical_rank(np.eye(2), rtol=1.0)
