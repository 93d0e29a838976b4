"""FIRE (poslib.fire): inputs, bias, exact constructions of other biases, the trainable module."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P


def _random_fire(n_heads=3, hidden=8, seed=0):
    r = np.random.default_rng(seed)
    return (
        r.standard_normal(hidden),
        r.standard_normal(hidden),
        r.standard_normal((n_heads, hidden)),
        r.standard_normal(n_heads),
    )


def _row(bias):
    """(n_heads, n, n) causal bias → (n_heads, n): the last query's bias at distance 0 … n − 1."""
    return bias[:, -1, ::-1]


# ---------- FIRE ----------
def test_fire_inputs_are_the_papers_formula():
    c, L, n = 0.7, 5.0, 9
    u = P.fire_inputs(n, c=c, L=L)
    for i in range(n):
        for j in range(i + 1):
            expected = math.log(c * (i - j) + 1) / math.log(c * max(L, i) + 1)
            assert abs(u[i, j] - expected) < 1e-14
    assert (u >= 0).all() and (u <= 1).all()  # progressive interpolation keeps the MLP's input in [0, 1]
    assert (np.triu(u, 1) == 0).all()


@given(n=st.integers(2, 24), extra=st.integers(0, 30), c=st.floats(0.05, 5.0), seed=st.integers(0, 50))
def test_fire_bias_depends_only_on_distance_while_L_covers_the_queries(n, extra, c, seed):
    L = n - 1 + extra  # every query i ≤ n − 1 ≤ L: the denominator is ψ(L) for all of them
    b = P.fire_bias(*_random_fire(seed=seed), q_len=n, k_len=n, c=c, L=L, causal=True)
    for d in range(n):
        diagonal = np.stack([b[:, i, i - d] for i in range(d, n)], axis=1)
        np.testing.assert_allclose(diagonal, diagonal[:, :1].repeat(diagonal.shape[1], 1), rtol=0, atol=1e-12)


def test_fire_bias_is_interpolated_beyond_L():
    # For queries past L the same distance maps to a smaller input: the bias is no longer a function of i − j.
    u = P.fire_inputs(40, c=1.0, L=10.0)
    assert u[20, 15] > u[30, 25] > u[39, 34]
    assert abs(u[5, 0] - u[10, 5]) < 1e-15  # both queries ≤ L


@pytest.mark.parametrize("kind", ["t5", "alibi", "kerple"])
@pytest.mark.parametrize("c", [0.3, 1.0, 4.0])
def test_fire_reproduces_t5_alibi_and_kerple(kind, c):
    n = 48
    if kind == "t5":
        table = np.random.default_rng(1).standard_normal((16, 4))
        target = P.t5_bias(table, n, n, bidirectional=False, max_distance=n)
    elif kind == "alibi":
        target = P.alibi_bias(4, n, n, causal=True)
    else:
        target = P.kerple_bias(
            np.array([0.5, 1.0, 2.0, 3.0]), np.array([0.1, 0.5, 1.0, 2.0]), q_len=n, k_len=n, causal=True
        )
    w = P.fire_weights_from_bias(_row(target), c=c)
    got = P.fire_bias(w["w1"], w["b1"], w["w2"], w["b2"], q_len=n, k_len=n, c=w["c"], L=w["L"], causal=True)
    seen = np.tril(np.ones((n, n), bool))
    assert np.abs(got[:, seen] - target[:, seen]).max() < 1e-10
    assert np.isneginf(got[:, ~seen]).all()


def test_kerple_log_is_a_linear_fire_bias():
    # With c = r₂, ψ(d) = log(1 + r₂ d): KERPLE's −r₁ log(1 + r₂ d) is −r₁ ψ(L) · u, one ReLU unit.
    n, r1, r2, L = 30, 1.5, 0.4, 29.0
    psi_L = math.log(r2 * L + 1)
    got = P.fire_bias(
        np.ones(1), np.zeros(1), np.array([[-r1 * psi_L]]), np.zeros(1), q_len=n, k_len=n, c=r2, L=L, causal=True
    )
    want = P.kerple_bias(r1, r2, q_len=n, k_len=n, causal=True).squeeze(0)
    seen = np.tril(np.ones((n, n), bool))
    assert np.abs(got[0][seen] - want[seen]).max() < 1e-12


def test_fire_module_learns_c_and_L_and_matches_the_function():
    torch.manual_seed(0)
    m = P.FireBias(4, hidden=16, c_init=2.0, L_init=12.0)
    c, L = m.c_L()
    assert abs(c.item() - 2.0) < 1e-5 and abs(L.item() - 12.0) < 1e-4
    out = m(20, causal=True)
    assert out.shape == (4, 20, 20) and torch.isneginf(out[:, torch.ones(20, 20).triu(1).bool()]).all()
    out[:, torch.ones(20, 20).tril().bool()].sum().backward()
    assert m.raw_c.grad is not None and m.raw_L.grad is not None and m.raw_L.grad != 0  # queries ≥ L reach L
    w = [p.detach().double() for p in (m.mlp_in.weight[:, 0], m.mlp_in.bias, m.mlp_out.weight, m.mlp_out.bias)]
    ref = P.fire_bias(*w, q_len=20, k_len=20, c=c.item(), L=L.item(), causal=True)
    seen = torch.ones(20, 20).tril().bool()
    assert (ref[:, seen] - out.detach().double()[:, seen]).abs().max() < 1e-5


def test_fire_threshold_L_follows_its_gradient_at_the_optimizers_rate():
    # Target: the same MLP with threshold 18, start at 12. Only L is trained; Adam moves a
    # parameter with a consistent gradient by about lr per step, so L must cover most of 50 · lr.
    torch.manual_seed(0)
    m = P.FireBias(2, hidden=8, c_init=1.0, L_init=12.0)
    w = [p.detach().double().numpy() for p in (m.mlp_in.weight[:, 0], m.mlp_in.bias, m.mlp_out.weight, m.mlp_out.bias)]
    target = torch.as_tensor(P.fire_bias(*w, q_len=24, k_len=24, c=1.0, L=18.0, causal=True)).float()
    seen = torch.ones(24, 24).tril().bool()
    opt = torch.optim.Adam([m.raw_L], lr=0.02)
    for _ in range(50):
        loss = ((m(24, causal=True)[:, seen] - target[:, seen]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    moved = m.c_L()[1].item() - 12.0
    assert 0.8 * 50 * 0.02 < moved <= 1.05 * 50 * 0.02  # toward 18, at nearly the full rate
