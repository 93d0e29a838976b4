"""Rotations from generators (poslib.lie_rope): RoPE is exp(m·A), N-D RoPE is commuting generators, and the score
depends only on the offset exactly when the generators commute.

References read for the conventions (docstring of poslib/lie_rope.py): StanfordMIMI/LieRE ``models/rope_vit.py``
at b27b41ba0d27331ec0774de852939c6d407889aa (generators U − Uᵀ from triu(raw, 1), summed over axes with the
positions, one ``torch.matrix_exp``, R·x on blocks of ``generator_dim``) and Longin-Yu/ComRoPE ``model.py`` at
7aeef083f8af53479d0e86af562029bd89af6422 (R = exp(Σ A·x), block-diagonal; AP and LD variants commute). Their
outputs are compared in tests/test_reference_issue44.py. The matrix exponential below is checked against a
Taylor series written here (ComRoPE's ``naive_matrix_exp`` does the same).
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import poslib as P

seeds = st.integers(0, 2**16)


def skew(rng, n, d):
    u = rng.standard_normal((n, d, d))
    return u - np.swapaxes(u, -1, -2)


def taylor_expm(a, order=60):
    # Σ_k Aᵏ/k!, with A scaled down by 2^s and squared back up so the series converges fast
    s = max(0, int(np.ceil(np.log2(max(np.abs(a).sum(-1).max(), 1e-300)))) + 1)
    small = a / 2**s
    term, out = np.eye(a.shape[-1]), np.eye(a.shape[-1])
    for k in range(1, order):
        term = term @ small / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


@settings(max_examples=30, deadline=None)
@given(seed=seeds, pairs=st.integers(1, 8), base=st.floats(2.0, 1e6), layout=st.sampled_from(["interleaved", "half"]))
def test_rope_is_the_exponential_of_one_block_diagonal_generator(seed, pairs, base, layout):
    rng = np.random.default_rng(seed)
    f = P.rope_frequencies(2 * pairs, base)
    a = P.rope_generator(f, layout=layout)
    np.testing.assert_array_equal(a, -a.T)
    x = rng.standard_normal((2, 5, 2 * pairs))
    pos = rng.integers(-300, 300, 5).astype(float)
    np.testing.assert_allclose(P.lie_rope(x, pos, a), P.apply_rope(x, pos, f, layout=layout), rtol=1e-12, atol=1e-11)
    if layout == "interleaved":  # exp(m·A) is RoFormer's block matrix R_m
        np.testing.assert_allclose(P.generator_rotation(a, 7.0), P.rope_matrix(7.0, 2 * pairs, base), atol=1e-13)
    # torch: torch.linalg.matrix_exp instead of the eigendecomposition
    got = P.lie_rope(torch.from_numpy(x), torch.from_numpy(pos), P.rope_generator(torch.from_numpy(f), layout=layout))
    np.testing.assert_allclose(got.numpy(), P.apply_rope(x, pos, f, layout=layout), rtol=1e-12, atol=1e-11)


def test_2d_rope_is_two_commuting_generators():
    rng = np.random.default_rng(0)
    f = P.rope_frequencies(8, 100.0)
    for layout in ("interleaved", "half"):
        g = P.axial_rope_generators(f, 2, layout=layout)
        assert g.shape == (2, 16, 16) and P.commutator_norm(g) == 0.0
        x = rng.standard_normal((3, 7, 16))
        rows, cols = rng.integers(0, 14, 7), rng.integers(0, 14, 7)
        got = P.lie_rope(x, np.stack([rows, cols], -1), g)
        np.testing.assert_allclose(got, P.apply_rope_2d(x, rows, cols, f, layout=layout), rtol=1e-12, atol=1e-12)


def test_matrix_exponential_numpy_torch_and_taylor_agree():
    rng = np.random.default_rng(1)
    a = skew(rng, 3, 6)
    pos = rng.uniform(-4, 4, (5, 3))
    numpy_r = P.generator_rotation(a, pos)
    torch_r = P.generator_rotation(torch.from_numpy(a), torch.from_numpy(pos)).numpy()
    taylor = np.stack([taylor_expm(np.einsum("k,kij->ij", p, a)) for p in pos])
    np.testing.assert_allclose(numpy_r, taylor, atol=1e-11)
    np.testing.assert_allclose(torch_r, taylor, atol=1e-11)
    np.testing.assert_allclose(
        numpy_r @ np.swapaxes(numpy_r, -1, -2), np.broadcast_to(np.eye(6), (5, 6, 6)), atol=1e-12
    )


@settings(max_examples=30, deadline=None)
@given(seed=seeds, axes=st.integers(2, 3), blocks=st.integers(1, 4), kind=st.sampled_from(["shared", "disjoint"]))
def test_commuting_generators_give_scores_that_depend_only_on_the_offset(seed, axes, blocks, kind):
    rng = np.random.default_rng(seed)
    d = 2 * blocks * axes
    if kind == "shared":  # ComRoPE-LD: one skew matrix per block, scaled per axis
        one = skew(rng, 1, d)[0]
        g = rng.standard_normal((axes, 1, 1)) * one
    else:  # ComRoPE-AP / axial RoPE: each axis owns disjoint features, free skew blocks inside them
        g = np.zeros((axes, d, d))
        w = d // axes
        for k in range(axes):
            g[k, k * w : (k + 1) * w, k * w : (k + 1) * w] = skew(rng, 1, w)[0]
    assert P.commutator_norm(g) < 1e-12
    q, k = rng.standard_normal((2, d))
    p_q, p_k = rng.uniform(-10, 10, (2, axes))
    drift = P.relative_drift(q, k, g, p_q, p_k, rng.uniform(-50, 50, (10, axes)))
    assert drift < 1e-10 * (1 + np.abs(g).max() * 60), drift
    # and the score is qᵀ exp(A(p_k − p_q)) k
    rq, rk = P.generator_rotation(g, p_q) @ q, P.generator_rotation(g, p_k) @ k
    np.testing.assert_allclose(rq @ rk, q @ P.generator_rotation(g, p_k - p_q) @ k, rtol=1e-9, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(seed=seeds, d=st.integers(2, 8))
def test_one_generator_of_any_shape_is_exactly_relative(seed, d):
    # a single dense skew-symmetric A (not block-diagonal, LieRE in 1-D) always commutes with itself
    rng = np.random.default_rng(seed)
    a = skew(rng, 1, d)[0]
    q, k = rng.standard_normal((2, d))
    assert P.relative_drift(q, k, a, 1.5, -2.0, rng.uniform(-30, 30, 12)) < 1e-9 * (1 + np.abs(a).max() * 30)


@settings(max_examples=20, deadline=None)
@given(seed=seeds, axes=st.integers(2, 3), d=st.integers(3, 8))
def test_non_commuting_generators_drift_measurably(seed, axes, d):
    # LieRE with free generators on blocks wider than 2: the score moves when both positions shift alike
    rng = np.random.default_rng(seed)
    g = skew(rng, axes, d) / math.sqrt(d)
    comm = P.commutator_norm(g)
    q, k = rng.standard_normal((2, 4, d)) / math.sqrt(d)
    drift = P.relative_drift(q, k, g, np.zeros(axes), np.full(axes, 1.0), rng.uniform(-3, 3, (16, axes)))
    print(f"axes={axes} d={d}: ‖[A_k, A_l]‖ ≤ {comm:.3f}, score drift {drift:.3f}")
    assert comm > 1e-2 and drift > 1e-3


def test_drift_of_random_generators_as_a_number():
    # the number the notebook can quote: 2 axes, 8×8 generators of unit scale, q and k of unit norm
    rng = np.random.default_rng(0)
    g = skew(rng, 2, 8) / math.sqrt(8)
    q, k = (v / np.linalg.norm(v) for v in rng.standard_normal((2, 8)))
    drift = P.relative_drift(q, k, g, [0.0, 0.0], [1.0, 1.0], rng.uniform(-3, 3, (64, 2)))
    print(f"non-commuting 8×8 generators, unit q and k: the score moves by up to {drift:.3f} under a common shift")
    assert 0.05 < drift < 2.0
    axial = P.axial_rope_generators(P.rope_frequencies(4, 100.0), 2)
    assert P.relative_drift(q, k, axial, [0.0, 0.0], [1.0, 1.0], rng.uniform(-3, 3, (64, 2))) < 1e-13


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: P.generator_rotation(np.ones((3, 3)), 1.0), "skew-symmetric"),
        (lambda: P.generator_rotation(np.zeros((2, 3, 4)), np.zeros(2)), "generators must have shape"),
        (lambda: P.generator_rotation(np.zeros((2, 4, 4)), np.zeros((5, 3))), "one coordinate per generator"),
        (lambda: P.lie_rope(np.zeros((5, 6)), np.arange(5), np.zeros((4, 4))), "last dimension"),
        (lambda: P.lie_rope(np.zeros((5, 4)), np.arange(3), np.zeros((4, 4))), "one position per token"),
        (lambda: P.rope_generator(np.ones((2, 2))), "1-D"),
        (lambda: P.rope_generator(np.ones(2), layout="pairs"), "layout"),
        (lambda: P.axial_rope_generators(np.ones(2), 0), "n_axes"),
        (lambda: P.relative_drift(np.ones(4), np.ones(3), np.zeros((4, 4)), 0.0, 1.0, [1.0]), "dimension D"),
    ],
)
def test_bad_input_is_named(call, words):
    with pytest.raises(ValueError, match=words):
        call()


def test_the_measures_give_the_same_number_on_torch():
    rng = np.random.default_rng(3)
    g = skew(rng, 2, 6)
    q, k = rng.standard_normal((2, 6))
    shifts = rng.uniform(-2, 2, (5, 2))
    want = P.relative_drift(q, k, g, [0.5, 1.0], [2.0, -1.0], shifts)
    got = P.relative_drift(*(torch.from_numpy(a) for a in (q, k, g)), [0.5, 1.0], [2.0, -1.0], torch.from_numpy(shifts))
    assert got == pytest.approx(want, rel=1e-10)
    assert P.commutator_norm(torch.from_numpy(g)) == pytest.approx(P.commutator_norm(g), rel=1e-14)
