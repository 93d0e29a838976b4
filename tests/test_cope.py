"""CoPE (poslib.cope): counted positions and their interpolated logits."""

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

rng = np.random.default_rng(0)


# ---------- CoPE ----------
def test_cope_positions_count_open_gates_from_the_key_to_the_query():
    # Gates fully open (logit +∞ → σ = 1) on keys 1 and 3 only: positions count them, j … i inclusive.
    logits = np.full((5, 5), -np.inf)
    logits[4, [1, 3]] = np.inf
    p = P.cope_positions(logits)
    np.testing.assert_array_equal(p[4], [2, 2, 1, 1, 0])
    # all gates open in a causal row: p_ij = i − j + 1, a token count
    p = P.cope_positions(P.mask_future(np.full((6, 6), np.inf)))
    i, j = np.indices((6, 6))
    np.testing.assert_array_equal(p, np.where(j <= i, i - j + 1, 0))
    assert P.cope_positions(P.mask_future(np.full((6, 6), np.inf)), max_pos=3).max() == 2


@given(n=st.integers(1, 16), seed=st.integers(0, 10_000), scale=st.floats(0.1, 20.0))
def test_cope_positions_never_decrease_toward_the_start_in_a_causal_row(n, seed, scale):
    logits = P.mask_future(scale * np.random.default_rng(seed).standard_normal((2, n, n)))
    p = P.cope_positions(logits)
    assert (p[..., :-1] >= p[..., 1:]).all()  # p_ij ≥ p_i,j+1
    assert (p >= 0).all() and (p <= np.arange(1, n + 1)[:, None]).all()  # at most one per token j … i


def test_cope_bias_interpolates_between_integer_positions():
    d, max_pos = 4, 6
    q = rng.standard_normal((1, 3, d))
    e = rng.standard_normal((max_pos, d))
    logits = P.mask_future(rng.standard_normal((1, 3, 3)))
    got = P.cope_bias(q, logits, e)
    p = P.cope_positions(logits, max_pos=max_pos)
    for i in range(3):
        for j in range(3):
            lo, frac = int(np.floor(p[0, i, j])), p[0, i, j] - np.floor(p[0, i, j])
            emb = (1 - frac) * e[lo] + frac * e[min(lo + 1, max_pos - 1)]
            assert abs(got[0, i, j] - q[0, i] @ emb) < 1e-12


def test_cope_module_starts_at_zero_and_trains():
    m = P.CoPE(8, 4)
    q = torch.randn(2, 2, 5, 4)
    logits = P.mask_future(q @ torch.randn(2, 2, 5, 4).transpose(-1, -2))
    assert torch.equal(m(q, logits), torch.zeros(2, 2, 5, 5))
    m(q, logits).sum().backward()
    assert m.pos_emb.grad is not None and m.pos_emb.grad.abs().sum() > 0
