"""Transformer-XL / XLNet relative scores and the four absolute terms (poslib.transformer_xl)."""

import math

import numpy as np
import pytest
import torch

import poslib as P


def test_transformer_xl_encodings_are_r_of_i_minus_j():
    # offsets run from −(q_len − 1) to k_len − 1; row 0 is R at offset i − j = −(q_len − 1): its sine half is negative
    enc = P.transformer_xl_encodings(3, 3, 4)
    np.testing.assert_allclose(enc[0], [math.sin(-2), math.sin(-0.02), math.cos(2), math.cos(0.02)], atol=1e-12)
    np.testing.assert_allclose(enc[4], [math.sin(2), math.sin(0.02), math.cos(2), math.cos(0.02)], atol=1e-12)


def test_absolute_terms_sum_to_full_score():
    rng = np.random.default_rng(0)
    x, p = rng.standard_normal((6, 8)), P.sinusoidal_table(6, 8)
    wq, wk = rng.standard_normal((8, 4)), rng.standard_normal((8, 4))
    terms = P.absolute_score_terms(x, p, wq, wk)
    full = ((x + p) @ wq) @ ((x + p) @ wk).T
    np.testing.assert_allclose(sum(terms.values()), full, atol=1e-10)


@pytest.mark.parametrize("q_len, k_len", [(5, 5), (3, 7)])
def test_transformer_xl_scores_match_the_papers_formula(q_len, k_len):
    rng = np.random.default_rng(1)
    d = 8
    q, k = rng.standard_normal((q_len, d)), rng.standard_normal((k_len, d))
    u, v = rng.standard_normal(d), rng.standard_normal(d)
    w_kr = rng.standard_normal((d, d))
    offsets = P.transformer_xl_offsets(q_len, k_len)
    r = P.transformer_xl_encodings(q_len, k_len, d) @ w_kr
    scores, terms = P.transformer_xl_scores(q, k, r, u, v), P.transformer_xl_score_terms(q, k, r, u, v)
    expected = np.zeros((q_len, k_len))
    for i in range(q_len):
        ia = i + k_len - q_len
        for j in range(k_len):
            rij = P.sinusoidal_encode(np.array([ia - j]), d, layout="concat")[0] @ w_kr
            expected[i, j] = q[i] @ k[j] + q[i] @ rij + u @ k[j] + v @ rij
    np.testing.assert_allclose(scores, expected, atol=1e-10)
    np.testing.assert_allclose(sum(terms.values()), scores)
    assert offsets[0] == -(q_len - 1) and offsets[-1] == k_len - 1


def test_transformer_xl_module_gets_gradients_and_matches_function():
    m = P.TransformerXLRelativeScores(8)
    torch.nn.init.normal_(m.u)
    q, k = torch.randn(2, 4, 8, dtype=torch.float64), torch.randn(2, 6, 8, dtype=torch.float64)
    m = m.double()
    scores = m(q, k)
    r = m.w_k_r(torch.tensor(P.transformer_xl_encodings(4, 6, 8)))
    torch.testing.assert_close(scores, P.transformer_xl_scores(q, k, r, m.u, m.v))
    scores.sum().backward()
    assert m.u.grad is not None and m.v.grad.abs().sum() > 0 and m.w_k_r.weight.grad.abs().sum() > 0
