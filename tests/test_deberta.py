"""DeBERTa's disentangled attention (poslib.deberta)."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P


# ---------- DeBERTa ----------
def _deberta_loop(qc, kc, qr, kr, k):
    lq, lk, d = qc.shape[0], kc.shape[0], qc.shape[1]
    out = np.zeros((lq, lk))
    for row in range(lq):
        i = row + lk - lq  # the queries are the last lq positions
        for j in range(lk):
            dij = min(max(i - j + k, 0), 2 * k - 1)
            dji = min(max(j - i + k, 0), 2 * k - 1)
            out[row, j] = qc[row] @ kc[j] + qc[row] @ kr[dij] + kc[j] @ qr[dji]
    return out / math.sqrt(3 * d)


@given(lq=st.integers(1, 9), lk=st.integers(1, 9), k=st.integers(1, 5), seed=st.integers(0, 1000))
def test_deberta_scores_match_the_papers_definition(lq, lk, k, seed):
    rng = np.random.default_rng(seed)
    d = 6
    qc, kc = rng.standard_normal((lq, d)), rng.standard_normal((lk, d))
    qr, kr = rng.standard_normal((2 * k, d)), rng.standard_normal((2 * k, d))
    np.testing.assert_allclose(P.deberta_scores(qc, kc, qr, kr), _deberta_loop(qc, kc, qr, kr, k), atol=1e-10)


def test_deberta_code_convention_reads_delta_i_j_for_p2c():
    rng = np.random.default_rng(5)
    lq, k, d = 7, 3, 4
    qc, kc, qr, kr = (
        rng.standard_normal((lq, d)),
        rng.standard_normal((lq, d)),
        rng.standard_normal((2 * k, d)),
        rng.standard_normal((2 * k, d)),
    )
    terms = P.deberta_score_terms(qc, kc, qr, kr, p2c_index="code")
    expected = np.array([[kc[j] @ qr[min(max(i - j + k, 0), 2 * k - 1)] for j in range(lq)] for i in range(lq)])
    np.testing.assert_allclose(terms["position-content"], expected, atol=1e-12)
    with pytest.raises(ValueError, match="p2c_index"):
        P.deberta_scores(qc, kc, qr, kr, p2c_index="hf")


def test_deberta_relative_position_sign_and_log_buckets():
    rel = P.deberta_relative_position(4, 4)
    assert rel[3, 0] == 3 and rel[0, 3] == -3  # query − key
    r = np.arange(-300, 301)
    b = P.deberta_log_bucket(r, 256, 512)
    np.testing.assert_array_equal(b[np.abs(r) <= 128], r[np.abs(r) <= 128])  # exact inside ±bucket_size/2
    assert np.abs(b).max() <= 255 and (np.diff(b) >= 0).all()


def test_deberta_module_gets_gradients():
    m = P.DebertaRelativeScores(8, att_span=4)
    m(torch.randn(5, 8), torch.randn(5, 8)).sum().backward()
    assert m.rel_embeddings.grad is not None and m.rel_embeddings.grad.abs().sum() > 0


def test_deberta_log_bucket_reaches_255_exactly_at_511():
    # DeBERTa-v2's make_log_bucket_position, written out: mid + ceil(log(|r|/mid) / log((max_pos − 1)/mid) · (mid − 1))
    mid, max_pos = 128, 512

    def ref(r: int) -> int:
        if abs(r) <= mid:
            return r
        return int(
            math.copysign(mid + math.ceil(math.log(abs(r) / mid) / math.log((max_pos - 1) / mid) * (mid - 1)), r)
        )

    r = np.array([129, 200, 300, 400, 511, 600, -129, -511])
    np.testing.assert_array_equal(P.deberta_log_bucket(r, 256, max_pos), [ref(int(x)) for x in r])
    assert P.deberta_log_bucket(np.array([511]), 256, max_pos)[0] == 255
