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
