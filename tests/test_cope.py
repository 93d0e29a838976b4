"""CoPE (poslib.cope): counted positions and their interpolated logits."""

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P
from poslib.cope import cope_gate_logits

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


def test_cope_gate_logits_are_the_scaled_attention_logits_masked():
    # The paper's Appendix B code (and facebookresearch/RAM's context_position.py) gate on q·k/√d.
    q, k = rng.standard_normal((2, 3, 5, 8)), rng.standard_normal((2, 3, 5, 8))
    got = cope_gate_logits(q, k)
    by_hand = np.einsum("bhmd,bhnd->bhmn", q, k) / np.sqrt(8)
    m, n = np.indices((5, 5))
    np.testing.assert_allclose(got[..., n <= m], by_hand[..., n <= m], rtol=1e-12, atol=1e-12)
    assert np.isneginf(got[..., n > m]).all()
    np.testing.assert_allclose(cope_gate_logits(q, k, causal=False), by_hand, rtol=1e-12, atol=1e-12)
    t = cope_gate_logits(torch.as_tensor(q), torch.as_tensor(k))
    np.testing.assert_allclose(t.numpy(), got, rtol=1e-12, atol=1e-12)


def test_cope_gates_have_unit_temperature_on_the_scaled_logits():
    # Moderate logits (not ±∞), so a gate at the wrong temperature (σ(2x), σ(x/√d) twice, no √d) shows.
    q, k = rng.standard_normal((4, 6, 16)), rng.standard_normal((4, 6, 16))
    logits = cope_gate_logits(q, k)
    gates = 1 / (1 + np.exp(-(q @ k.transpose(0, 2, 1)) / 4.0))  # √16 = 4, written out independently
    by_hand = np.zeros((4, 6, 6))
    for b in range(4):
        for m in range(6):
            for n in range(m + 1):
                by_hand[b, m, n] = sum(gates[b, m, ell] for ell in range(n, m + 1))
    np.testing.assert_allclose(P.cope_positions(logits), by_hand, rtol=1e-12, atol=1e-12)


def test_cope_gate_logits_reject_mismatched_shapes():
    import pytest

    with pytest.raises(ValueError, match="same d"):
        cope_gate_logits(np.ones((3, 4)), np.ones((3, 5)))
