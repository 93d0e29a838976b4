"""KERPLE (poslib.kerple): the kernels, the trainable module, conditional positive definiteness."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P


def _quadratic_forms_on_sum_zero_vectors(bias, n_vectors=200, seed=0):
    # c·Bc for random c with Σc = 0 (each drawn, then its mean removed): CPD means none is negative
    rng = np.random.default_rng(seed)
    c = rng.standard_normal((n_vectors, bias.shape[-1]))
    c -= c.mean(axis=1, keepdims=True)
    return np.einsum("vi,ij,vj->v", c, bias, c) / np.einsum("vi,vi->v", c, c)


# ---------- KERPLE and Sandwich ----------
@given(q=st.integers(1, 16), r1=st.floats(0.1, 5), r2=st.floats(0.1, 2), kind=st.sampled_from(["power", "log"]))
def test_kerple_depends_only_on_distance(q, r1, r2, kind):
    b = P.kerple_bias(r1, r2, q_len=q, k_len=q, kind=kind).squeeze(0)
    d = np.abs(np.arange(q)[None] - np.arange(q)[:, None])
    expected = -r1 * d**r2 if kind == "power" else -r1 * np.log1p(r2 * d)
    np.testing.assert_allclose(b, expected, atol=1e-12)
    np.testing.assert_allclose(b, b.T)


def test_kerple_power_with_r2_one_is_alibi():
    np.testing.assert_allclose(
        P.kerple_bias(0.25, 1.0, q_len=5, k_len=5, kind="power", causal=True)[0], P.alibi_bias(4, 5, causal=True)[0]
    )  # head 1 of 4 has slope 2^(-8/4) = 1/4


def test_kerple_module_gets_gradients():
    m = P.KerpleBias(3, "log")
    m(6, causal=True).masked_fill(torch.isinf(m(6, causal=True)), 0).sum().backward()
    assert m.raw_r1.grad is not None and m.raw_r1.grad.abs().sum() > 0


@pytest.mark.parametrize(
    "name",
    ["alibi", "kerple_power_half", "kerple_power_two", "kerple_log", "sandwich"],
)
def test_distance_biases_are_conditionally_positive_definite(name):
    n = 40
    bias = {
        "alibi": lambda: P.alibi_bias(8, n, causal=False)[2],
        "kerple_power_half": lambda: P.kerple_bias(1.5, 0.5, q_len=n, k_len=n, kind="power")[0],
        "kerple_power_two": lambda: P.kerple_bias(0.1, 2.0, q_len=n, k_len=n, kind="power")[0],
        "kerple_log": lambda: P.kerple_bias(2.0, 0.7, q_len=n, k_len=n, kind="log")[0],
        "sandwich": lambda: P.sandwich_bias(8, 32, q_len=n, k_len=n)[0],
    }[name]()
    assert (bias <= 1e-12).all() and np.allclose(np.diag(bias), 0)  # a penalty: 0 on the diagonal, ≤ 0 off it
    assert _quadratic_forms_on_sum_zero_vectors(bias).min() > -1e-9 * np.abs(bias).max()


def test_a_positive_distance_is_not_conditionally_positive_definite():
    d = np.abs(np.subtract.outer(np.arange(40), np.arange(40))).astype(float)
    assert _quadratic_forms_on_sum_zero_vectors(d).max() < 0  # +|i − j| fails on every sum-zero vector tried
