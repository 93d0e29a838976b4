"""Reference attention, masks and the one convention for where queries sit (poslib.attn)."""

import math

import numpy as np
import pytest
import torch

import poslib as P


def test_attention_matches_torch_sdpa():
    q, k, v = (torch.randn(2, 3, 7, 8, dtype=torch.float64) for _ in range(3))
    bias = torch.tensor(P.alibi_bias(3, 7, causal=True))
    out, w = P.attention(q, k, v, bias=bias)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 7, dtype=torch.float64))


def test_attention_entropy():
    uniform = np.full((1, 4), 0.25)
    assert P.attention_entropy(uniform)[0] == pytest.approx(math.log(4))
    assert P.attention_entropy(np.array([[1.0, 0.0]]))[0] == 0.0


def test_every_bias_builder_puts_the_queries_last():
    # q_len < k_len: the rows of the square (k_len, k_len) bias for the last q_len positions (a KV cache)
    table, w = np.arange(64.0).reshape(32, 2), np.linspace(0.1, 0.9, 4)
    square_and_short = [
        lambda q: P.alibi_bias(3, q, 7),
        lambda q: P.kerple_bias(np.array([0.5, 2.0]), 1.0, q, 7, kind="power"),
        lambda q: P.sandwich_bias(3, 16, q, 7),
        lambda q: P.t5_bias(table, q, 7),
        lambda q: P.fire_bias(w, w, np.outer([1.0, -1.0], w), np.zeros(2), q, 7, L=3.0),
    ]
    for build in square_and_short:
        short, square = build(2), build(7)
        assert short.shape == (square.shape[0], 2, 7)
        np.testing.assert_array_equal(short, square[:, -2:])


def test_causal_mask_keeps_the_diagonal_and_hides_the_future():
    np.testing.assert_array_equal(P.causal_mask(3), [[True, False, False], [True, True, False], [True, True, True]])
    q, k, v = (torch.randn(2, 5, 4, dtype=torch.float64) for _ in range(3))
    out, _ = P.attention(q, k, v, causal=True)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, ref)


def test_without_positions_attention_is_permutation_equivariant_and_causal_mask_breaks_it():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 4))
    perm = np.array([3, 0, 4, 1, 2])
    out, _ = P.attention(x, x, x)
    out_p, _ = P.attention(x[perm], x[perm], x[perm])
    np.testing.assert_allclose(out_p, out[perm], atol=1e-12)
    c, _ = P.attention(x, x, x, causal=True)
    c_p, _ = P.attention(x[perm], x[perm], x[perm], causal=True)
    assert np.abs(c_p - c[perm]).max() > 1e-3


def test_bias_builders_follow_their_parameters_and_check_an_explicit_backend():
    r1 = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    bias = P.kerple_bias(r1, 1.0, 3)  # backend=None follows the tensor
    assert isinstance(bias, torch.Tensor) and bias.shape == (2, 3, 3) and bias.requires_grad
    assert isinstance(P.kerple_bias(0.5, 1.0, 3, backend="torch"), torch.Tensor)  # numbers go to torch
    assert isinstance(P.t5_bias(np.ones((32, 2)), 3, backend="torch"), torch.Tensor)
    assert isinstance(P.alibi_bias(2, 3), np.ndarray) and isinstance(P.sandwich_bias(2, 8, 3), np.ndarray)
    with pytest.raises(TypeError, match="backend='numpy' but r1 is a torch tensor"):
        P.kerple_bias(r1, 1.0, 3, backend="numpy")
    with pytest.raises(ValueError, match="device must be None"):
        P.alibi_bias(2, 3, device="cuda")
    with pytest.raises(ValueError, match="backend must be"):
        P.alibi_bias(2, 3, backend="jax")


def test_causal_builders_mask_exactly_the_future_keys():
    future = P.relative_distance(3, 5) > 0  # queries at positions 2, 3, 4
    table, w = np.ones((32, 2)), np.ones(3)
    for bias in (
        P.alibi_bias(2, 3, 5, causal=True),
        P.kerple_bias(1.0, 0.5, 3, 5, causal=True),
        P.sandwich_bias(2, 8, 3, 5, causal=True),
        P.t5_bias(table, 3, 5, causal=True),
        P.fire_bias(w, w, np.ones((2, 3)), np.ones(2), 3, 5, causal=True),
    ):
        assert np.isneginf(bias[:, future]).all() and np.isfinite(bias[:, ~future]).all()


# ---------------------------------------------------------------- learned attention sinks (gpt-oss)


def sink_weights_by_hand(scores, sinks):
    """Softmax over [scores | sink] per row, the sink column dropped, written out with exp and a sum."""
    rows = []
    for h in range(scores.shape[0]):
        for m in range(scores.shape[1]):
            z = np.append(scores[h, m], sinks[h])
            e = np.exp(z - z.max())
            rows.append(e[:-1] / e.sum())
    return np.array(rows).reshape(scores.shape)


def test_sinks_join_each_rows_softmax_and_are_dropped():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 7, 4)), rng.standard_normal((3, 7, 2))
    sinks = np.array([-1.0, 0.5, 3.0])
    out, w = P.attention(q, k, v, sinks=sinks)
    expected = sink_weights_by_hand(q @ k.transpose(0, 2, 1) / 2.0, sinks)
    np.testing.assert_allclose(w, expected, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out, expected @ v, rtol=1e-12, atol=1e-14)
    assert np.all(w.sum(-1) < 1)
    # the row total is 1 − (the sink's share): larger for the head with the larger sink logit
    assert np.all(w[2].sum(-1) < w[0].sum(-1))


def test_sink_at_minus_infinity_is_plain_attention_and_a_huge_sink_takes_everything():
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 6, 8)) for _ in range(3))
    _, plain_w = P.attention(q, k, v, causal=True)
    _, w = P.attention(q, k, v, causal=True, sinks=np.full(2, -np.inf))
    np.testing.assert_array_equal(w, plain_w)
    _, w_big = P.attention(q, k, v, causal=True, sinks=np.full(2, 60.0))
    assert w_big.sum(-1).max() < 1e-20


def test_the_sinks_share_falls_as_the_row_gets_longer():
    # equal scores on n keys: the sink's share is e^s / (n + e^s), so the row's weights sum to n / (n + e^s)
    s = 2.0
    for n in (1, 4, 64, 1024):
        q, k, v = np.zeros((1, 1, 4)), np.zeros((1, n, 4)), np.ones((1, n, 1))
        _, w = P.attention(q, k, v, sinks=np.array([s]))
        assert w.sum() == pytest.approx(n / (n + math.exp(s)), rel=1e-12)


def test_sinks_torch_matches_numpy_and_keeps_gradients():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)) for _ in range(3))
    sinks = rng.standard_normal(3)
    _, w_np = P.attention(q, k, v, causal=True, sinks=sinks)
    s_t = torch.tensor(sinks, requires_grad=True)
    _, w_t = P.attention(*(torch.tensor(a) for a in (q, k, v)), causal=True, sinks=s_t)
    np.testing.assert_allclose(w_t.detach().numpy(), w_np, rtol=1e-12, atol=1e-14)
    w_t.sum().backward()
    assert s_t.grad is not None and torch.all(s_t.grad < 0)  # a larger sink logit leaves less to the keys


@pytest.mark.parametrize("sinks", [np.zeros(2), np.zeros((3, 1)), np.zeros(4)])
def test_sinks_of_the_wrong_shape_are_refused_by_name(sinks):
    q, k, v = (np.zeros((3, 5, 4)) for _ in range(3))
    with pytest.raises(ValueError, match="sinks must be a scalar or hold one logit per head"):
        P.attention(q, k, v, sinks=sinks)
