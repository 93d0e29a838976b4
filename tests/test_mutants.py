"""Tests written against mutants that survived the mutation run (tests/reference/MUTANTS.md lists the rest).

Each test pins a behaviour the earlier tests let change: argument names in error messages,
boundaries of the validity checks, the NumPy half-layout path for batched positions, and the
Sandwich bias against its formula.
"""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
import torch

import poslib as P
from poslib._buckets import _decide, exact_log_steps


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: P.deberta_log_bucket(np.arange(3), 0, 10), "^bucket_size must"),
        (lambda: P.deberta_log_bucket(np.arange(3), 8, 0), "^max_position must"),
        (lambda: P.sandwich_bias(0, 8, q_len=3, k_len=3), "^n_heads must"),
        (lambda: P.sinusoidal_encode(np.arange(3), 8, layout="x"), "^layout must"),
        (lambda: P.sinusoidal_table(0, 8), "^n_positions must"),
        (lambda: P.SinusoidalEmbedding(7), "^dim must"),
        (lambda: P.SinusoidalEmbedding(8, base=-1.0), "^base must"),
        (lambda: P.DebertaRelativeScores(8, 0), "^att_span must"),
        (lambda: P.apply_xpos(np.ones((2, 4)), np.arange(2), P.rope_frequencies(4), gamma=0), "^gamma must"),
        (lambda: P.kerple_bias(1.0, -1.0, q_len=3, k_len=3)[0], "^r1 and r2 must be positive$"),
        (lambda: P.alibi_receptive_field(np.array([0.5]), 0.0), "^mass must"),
        (lambda: P.t5_bias(np.ones(4), 3), r"got \(4,\)"),
        (lambda: P.t5_relative_bucket(np.arange(3), num_buckets=2), "at least 4, got 2"),
        (lambda: P.rope_inv_freq(8, 10000.0, {"rope_type": "default", "partial_rotary_factor": 1.5}), "must be in"),
        (lambda: P.rope_inv_freq(6, 10000.0, {"rope_type": "default", "partial_rotary_factor": 0.5}), "rotated dims"),
        (lambda: P.rope_inv_freq(8, 10000.0, {"rope_type": "yarn", "factor": 2.0}), "'yarn' needs the key"),
    ],
)
def test_errors_name_their_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_validity_boundaries():
    # r2 = 2 is the largest valid power; partial factor 1 is the whole head; max_distance = max_exact is refused
    assert np.isfinite(P.kerple_bias(1.0, 2.0, q_len=3, k_len=3, kind="power")[0]).all()
    assert len(P.rope_inv_freq(8, 10000.0, {"rope_type": "default", "partial_rotary_factor": 1})[0]) == 4
    with pytest.raises(ValueError, match="max_distance"):
        P.t5_relative_bucket(np.arange(3), bidirectional=False, num_buckets=8, max_distance=4)
    # rope_type wins over the legacy "type" when both are present
    both = {"rope_type": "linear", "type": "default", "factor": 2.0}
    np.testing.assert_allclose(P.rope_inv_freq(8, 10000.0, both)[0], P.rope_frequencies(8) / 2, rtol=1e-15)


def test_t5_bias_defaults_to_bidirectional_buckets():
    table = np.arange(32, dtype=np.float64)[:, None]
    got = P.t5_bias(table, 3, 3)[0]
    # key − query = ±1: bidirectional puts +1 in the upper half (bucket 16 + 1), −1 in bucket 1
    assert got[0, 1] == 17 and got[1, 0] == 1


def test_t5_relative_bucket_accepts_lists():
    assert np.asarray(P.t5_relative_bucket([0, -1, 1])).tolist() == [0, 1, 17]


def test_decide_takes_the_exact_side():
    # v = log2(3) = 1.58…: floor 1, ceil 2, whichever integer neighbour k is offered
    for k in (1, 2):
        assert _decide(3, k, 1, 2, 1, "floor") == 1
        assert _decide(3, k, 1, 2, 1, "ceil") == 2
    assert _decide(4, 2, 1, 2, 1, "floor") == 2 and _decide(4, 2, 1, 2, 1, "ceil") == 2  # exactly 2


def test_exact_log_steps_on_a_value_within_tolerance_of_an_integer():
    # steps·log2(a) for a large steps lands within 1e-9 relative of an integer without being one:
    # floor and ceil must still differ by one, as 60-digit decimal arithmetic says
    steps, small, large = 4000, 1, 2
    a = np.arange(3, 200000)
    v = steps * np.log2(a)
    frac = np.abs(v - np.round(v))
    a0 = int(a[np.argmax((frac <= 1e-9 * v) & (frac > 0))])
    assert frac[a0 - 3] <= 1e-9 * v[a0 - 3] and frac[a0 - 3] > 0
    getcontext().prec = 60
    exact = Decimal(steps) * Decimal(a0).ln() / Decimal(2).ln()
    for rounding, want in (("floor", math.floor(exact)), ("ceil", math.ceil(exact))):
        for x in (np.array([float(a0)]), torch.tensor([float(a0)], dtype=torch.float64)):
            assert float(exact_log_steps(x, small, large, steps, rounding)[0]) == want


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_batched_positions_take_the_general_numpy_path(layout):
    # positions (batch, seq) give cos of ndim 3: NumPy's non-blocked half path, against the textbook formula
    rng = np.random.default_rng(5)
    x, f = rng.standard_normal((2, 7, 8)), P.rope_frequencies(8)
    pos = np.array([np.arange(7), np.arange(7) * 5 + 3])
    a = pos[..., None] * f
    if layout == "half":
        cos, sin = np.cos(np.concatenate([a, a], -1)), np.sin(np.concatenate([a, a], -1))
        want = x * cos + np.concatenate([-x[..., 4:], x[..., :4]], -1) * sin
    else:
        z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * a)
        want = np.stack([z.real, z.imag], -1).reshape(x.shape)
    np.testing.assert_allclose(P.apply_rope(x, pos, f, layout=layout), want, rtol=0, atol=1e-13)
    np.testing.assert_allclose(
        P.apply_rope(torch.tensor(x), torch.tensor(pos), torch.tensor(f), layout=layout).numpy(), want, atol=1e-13
    )


def sandwich_formula(q_len, k_len, dim, n_heads, causal):
    """Σ_k cos((j − i)·10000^(−2k/d)) − 1 per head / (8h/H), queries at the end of the keys, element by element."""
    out = np.zeros((n_heads, q_len, k_len))
    for h in range(1, n_heads + 1):
        for i in range(q_len):
            for j in range(k_len):
                r = j - (i + k_len - q_len)
                if causal and r > 0:
                    out[h - 1, i, j] = -math.inf
                else:
                    s = sum(math.cos(r * 10000.0 ** (-2 * k / dim)) - 1 for k in range(dim // 2))
                    out[h - 1, i, j] = s / (8 * h / n_heads)
    return out


@pytest.mark.parametrize(("q_len", "k_len", "causal"), [(5, None, False), (4, 9, True), (6, 6, True)])
def test_sandwich_bias_is_its_formula(q_len, k_len, causal):
    want = sandwich_formula(q_len, k_len or q_len, 16, 3, causal)
    np.testing.assert_allclose(
        P.sandwich_bias(3, 16, q_len=q_len, k_len=k_len, causal=causal), want, rtol=1e-12, atol=1e-12
    )
    plain = P.sandwich_bias(8, 16, q_len=q_len, k_len=k_len)[0]
    unmasked = sandwich_formula(q_len, k_len or q_len, 16, 1, False)[0] * 8  # no n_heads: no division, no mask
    np.testing.assert_allclose(plain, unmasked, rtol=1e-12, atol=1e-12)


def test_kerple_with_a_numpy_and_a_torch_parameter():
    r1, r2 = np.array([1.0, 2.0]), torch.tensor([0.5, 1.5], dtype=torch.float64)
    got = P.kerple_bias(torch.tensor(r1), r2, q_len=3, k_len=4, kind="log")
    d = np.abs(np.arange(4)[None] - np.arange(3)[:, None] - 1)
    want = -r1[:, None, None] * np.log(1 + r2.numpy()[:, None, None] * d)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(
        P.kerple_bias(1.0, r2, q_len=3, k_len=4, kind="log").squeeze(0).numpy(), want / r1[:, None, None], rtol=1e-12
    )


def test_xpos_range_error_states_the_reach():
    # −ln(finfo(float32).tiny) / −ln(0.4/1.4) · 512 = 35694.2…
    x, f = torch.ones(1, 4), torch.tensor(P.rope_frequencies(4))
    with pytest.raises(ValueError, match=r"\|n − centre\| = 40000, beyond the 35694\.\d that torch.float32"):
        P.apply_xpos(x, torch.tensor([40000.0]), f)


def test_type_checks_cover_every_argument():
    t = torch.ones(3, 4, dtype=torch.float64)
    with pytest.raises(TypeError, match="q_c is numpy"):
        P.deberta_scores(t.numpy(), t, torch.ones(4, 4, dtype=torch.float64), torch.ones(4, 4, dtype=torch.float64))
    with pytest.raises(TypeError, match="relative_position is numpy"):
        r = torch.ones(4, 4, dtype=torch.float64)
        P.deberta_scores(t, t, r, r, relative_position=np.zeros((3, 3), np.int64))
    with pytest.raises(TypeError, match="mixed"):
        P.kerple_bias(np.array([1.0]), torch.tensor([1.0]), q_len=3, k_len=3)
    with pytest.raises(TypeError, match="positions is numpy"):
        P.rope_angles(np.arange(3), torch.ones(2, dtype=torch.float64))


def test_small_contracts():
    assert P.alibi_slopes(3, backend="torch", device="cpu").dtype == torch.float64
    r = np.ones((4, 4))
    terms = P.deberta_score_terms(np.ones((3, 4)), np.ones((3, 4)), r, r)
    assert set(terms) == {"content-content", "content-position", "position-content"}
    module = P.DebertaRelativeScores(8, 2)
    assert module.w_q_r.bias is None and module.w_k_r.bias is None  # projections without bias, as DeBERTa's
    kerple = P.KerpleBias(2, kind="power", r2_init=5.0)
    assert float(kerple.r1_r2()[1].max().detach()) == 2.0  # clamped into the valid range
    assert bool(torch.isinf(kerple(4, causal=True)[:, 0, 1]).all()) and not bool(torch.isinf(kerple(4)).any())
    assert not np.allclose(
        P.sandwich_bias(8, 8, q_len=4, k_len=4, base=100.0)[0], P.sandwich_bias(8, 8, q_len=4, k_len=4)[0]
    )
    with pytest.raises(ValueError, match="at least 2, got 1"):
        P.t5_relative_bucket(np.arange(3), bidirectional=False, num_buckets=1)
