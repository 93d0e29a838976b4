"""Transformer-XL terms, the absolute four-term expansion, learned tables and NoPE."""

import numpy as np
import pytest
import torch

import poslib as P


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


def test_learned_lookup_and_bounds():
    table = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(P.learned_lookup(table, [0, 3]), table[[0, 3]])
    with pytest.raises(IndexError, match="L_max = 4"):
        P.learned_lookup(table, [1, 4])
    with pytest.raises(IndexError, match="-1"):
        P.learned_lookup(table, [-1])
    with pytest.raises(TypeError, match="positions must be integers"):
        P.learned_lookup(table, [0.5])


def test_learned_module_gets_gradients_only_on_used_rows():
    emb = P.LearnedPositionalEmbedding(10, 4)
    emb(torch.arange(3)).sum().backward()
    assert emb.weight.grad[:3].abs().sum() > 0 and emb.weight.grad[3:].abs().sum() == 0
    with pytest.raises(IndexError, match="L_max = 10"):
        emb(torch.arange(11))


def test_nope_is_identity():
    x = np.ones((2, 3))
    assert P.apply_nope(x, np.arange(2)) is x


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
