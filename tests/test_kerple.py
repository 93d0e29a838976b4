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
    b = m(6, causal=True)
    b.masked_fill(torch.isinf(b), 0).sum().backward()
    assert m.r1.grad is not None and m.r1.grad.abs().sum() > 0 and m.r2.grad.abs().sum() > 0


@pytest.mark.parametrize("kind", ["log", "power"])
def test_kerple_starts_like_the_papers_code(kind):
    # chijames/KERPLE, megatron/mpu/layers.py: ParallelKerpleLog draws bias_p ~ 2·U(0, 1) (our r1, the factor)
    # and bias_a ~ U(0, 1) (our r2); ParallelKerplePower draws the exponent bias_p ~ 2·U (our r2) and the
    # scale bias_a ~ U (our r1). Pooled over 40 seeds × 4 heads = 160 draws per parameter, independently
    # of the module: the mean of U(0, s) is s/2 (sample std of the mean s/√(12·160) ≈ 0.023·s) and a
    # quarter of the draws fall below s/4 (sample std ≈ 3.4 points).
    scale1, scale2 = (2.0, 1.0) if kind == "log" else (1.0, 2.0)
    draws = []
    for seed in range(40):
        torch.manual_seed(seed)
        m = P.KerpleBias(4, kind)
        draws.append(torch.stack([m.r1.detach(), m.r2.detach()]))
        assert len(set(m.r1.tolist())) == 4, "one draw per head, not one value for every head"
    r1, r2 = torch.cat([d[0] for d in draws]), torch.cat([d[1] for d in draws])
    for r, scale in ((r1, scale1), (r2, scale2)):
        assert float(r.min()) >= np.float32(0.01) and float(r.max()) <= scale  # float32 parameters
        assert abs(float(r.mean()) - scale / 2) < 5 * 0.023 * scale, float(r.mean())
        assert 0.25 - 0.14 < float((r < scale / 4).double().mean()) < 0.25 + 0.14
    g = torch.Generator().manual_seed(0)
    assert torch.equal(P.KerpleBias(4, kind, generator=g).r1, P.KerpleBias(4, kind, generator=g.manual_seed(0)).r1)


def test_kerple_projects_onto_the_valid_set_in_every_forward_pass():
    # The paper's clamp: a step that moves r below 0.01 (or the power exponent above 2) is undone before use.
    m = P.KerpleBias(2, "power", r1_init=0.5, r2_init=1.5)
    with torch.no_grad():
        m.r1[0], m.r2[1] = -3.0, 7.0
    assert m.r1_r2()[0][0].item() == np.float32(0.01) and m.r1[0].item() == -3.0  # reading does not write
    b = m(5)
    assert m.r1.tolist()[0] == pytest.approx(0.01) and m.r2.tolist()[1] == 2.0
    expected = -0.01 * np.abs(np.subtract.outer(np.arange(5), np.arange(5))) ** 1.5
    np.testing.assert_allclose(b[0].detach().numpy(), expected, rtol=1e-6)
    with pytest.raises(ValueError, match="n_heads must be a positive integer"):
        P.KerpleBias(0)
    with pytest.raises(ValueError, match="finite"):
        P.KerpleBias(2, r1_init=float("nan"))


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
