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
