"""DeepSeek-V4's rotated values (poslib.vo_rope_attention): its defining property and a loop written from the formula.

The property: every score and every value's contribution depends only on j − i, so shifting every position by
the same Δ changes nothing; without the output's turn back (or with its sign flipped) it does. The loop below is
written from the formula o_i = R_{−i} Σ_{j≤i} a_ij R_j v_j, one query and one key at a time, with the sink as a
term of the softmax's denominator only, not by calling poslib. The comparison with transformers'
DeepseekV4Attention itself is in tests/test_reference_issue44.py.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import poslib as P


def turn(v, angles):
    # interleaved pairs (2i, 2i+1) of v turned by angles[i]: RoFormer's [[cos, −sin], [sin, cos]] blocks
    out = v.copy()
    c, s = np.cos(angles), np.sin(angles)
    out[0::2], out[1::2] = c * v[0::2] - s * v[1::2], s * v[0::2] + c * v[1::2]
    return out


def naive(q, kv, inv_freq, rope_dim, sinks=None, scale=None, positions=None, turn_back=True):
    batch, heads, seq, dim = q.shape
    scale = 1 / math.sqrt(dim) if scale is None else scale
    pos = np.arange(seq, dtype=np.float64) if positions is None else np.asarray(positions, np.float64)

    def rotate(v, p):  # the trailing rope_dim features turned by position p
        w = v.copy()
        w[dim - rope_dim :] = turn(v[dim - rope_dim :], p * inv_freq)
        return w

    out, weights = np.zeros_like(q), np.zeros((batch, heads, seq, seq))
    for b in range(batch):
        for h in range(heads):
            for i in range(seq):
                qi = rotate(q[b, h, i], pos[i])
                logits = np.array([scale * qi @ rotate(kv[b, 0, j], pos[j]) for j in range(i + 1)])
                top = logits.max() if sinks is None else max(logits.max(), sinks[h])
                e = np.exp(logits - top)
                a = e / (e.sum() + (0.0 if sinks is None else np.exp(sinks[h] - top)))
                o = sum(a[j] * rotate(kv[b, 0, j], pos[j]) for j in range(i + 1))
                out[b, h, i] = rotate(o, -pos[i]) if turn_back else o
                weights[b, h, i, : i + 1] = a
    return out, weights


def case(seed, batch=2, heads=3, seq=6, dim=10, rope_dim=4):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((batch, heads, seq, dim))
    kv = rng.standard_normal((batch, 1, seq, dim))
    return q, kv, P.rope_frequencies(rope_dim, 100.0), rng.standard_normal(heads)


@pytest.mark.parametrize("with_sinks", [False, True])
def test_matches_the_loop_written_from_the_formula(with_sinks):
    q, kv, f, sinks = case(0)
    got, w = P.vo_rope_attention(q, kv, f, rope_dim=4, sinks=sinks if with_sinks else None)
    want, want_w = naive(q, kv, f, 4, sinks if with_sinks else None)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(w, want_w, rtol=1e-12, atol=1e-15)
    assert w.shape == (2, 3, 6, 6)  # the sink's column is dropped
    rows = w.sum(-1)
    assert (rows < 1).all() if with_sinks else np.allclose(rows, 1)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    shift=st.integers(-5000, 5000),
    seq=st.integers(1, 7),
    pairs=st.integers(1, 4),
    nope=st.integers(0, 3),
)
def test_shifting_every_position_changes_nothing(seed, shift, seq, pairs, nope):
    rope_dim = 2 * pairs
    q, kv, _, sinks = case(seed, batch=1, heads=2, seq=seq, dim=rope_dim + 2 * nope, rope_dim=rope_dim)
    f = P.rope_frequencies(rope_dim, 50.0)
    at0 = P.vo_rope_attention(q, kv, f, rope_dim=rope_dim, sinks=sinks)
    moved = P.vo_rope_attention(q, kv, f, rope_dim=rope_dim, sinks=sinks, positions=np.arange(seq) + shift)
    for a, b in zip(at0, moved, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-13 * (1 + abs(shift)))  # angles m·θ round at m·2⁻⁵³


def test_without_the_turn_back_the_output_carries_absolute_position():
    q, kv, f, sinks = case(1)
    at0, _ = naive(q, kv, f, 4, sinks, turn_back=False)
    moved, _ = naive(q, kv, f, 4, sinks, positions=np.arange(6) + 7, turn_back=False)
    gap = float(np.abs(moved - at0).max())
    print(f"without the turn back, a shift of 7 moves the output by up to {gap:.3f}")
    assert gap > 0.1
    with_turn, _ = P.vo_rope_attention(q, kv, f, rope_dim=4, sinks=sinks, positions=np.arange(6) + 7)
    np.testing.assert_allclose(with_turn, naive(q, kv, f, 4, sinks)[0], rtol=1e-10, atol=1e-12)


def test_only_the_trailing_rope_dim_features_turn():
    q, kv, f, _ = case(2)
    out, w = P.vo_rope_attention(q, kv, f, rope_dim=4)
    # the nope features of the output are a plain weighted sum of the values' nope features
    np.testing.assert_allclose(out[..., :6], w @ kv[..., :6], rtol=1e-12, atol=1e-13)
    # at one token the output is the value itself: turned to position 0 and back
    one, _ = P.vo_rope_attention(q[:, :, :1], kv[:, :, :1], f, rope_dim=4, positions=np.array([123.0]))
    np.testing.assert_allclose(one, np.broadcast_to(kv[:, :, :1], one.shape), rtol=1e-12, atol=1e-13)


def test_numpy_equals_torch_and_low_precision_is_computed_in_float64():
    q, kv, f, sinks = case(3)
    want = P.vo_rope_attention(q, kv, f, rope_dim=4, sinks=sinks, scale=0.3)
    tq, tkv, tf, ts = (torch.from_numpy(a) for a in (q, kv, f, sinks))
    got = P.vo_rope_attention(tq, tkv, tf, rope_dim=4, sinks=ts, scale=0.3)
    for a, b in zip(got, want, strict=True):
        assert isinstance(a, torch.Tensor) and a.dtype == torch.float64
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-13, atol=1e-14)
    low = P.vo_rope_attention(tq.float(), tkv.float(), tf, rope_dim=4, sinks=ts)
    assert low[0].dtype == torch.float32
    np.testing.assert_allclose(low[0].numpy(), P.vo_rope_attention(q, kv, f, rope_dim=4, sinks=sinks)[0], atol=1e-5)


def test_scale_defaults_to_one_over_root_of_the_whole_head():
    q, kv, f, _ = case(4)
    default, _ = P.vo_rope_attention(q, kv, f, rope_dim=4)
    explicit, _ = P.vo_rope_attention(q, kv, f, rope_dim=4, scale=1 / math.sqrt(10))
    np.testing.assert_array_equal(default, explicit)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda q, kv, f: (q, np.concatenate([kv, kv], 1), f, {}), "kv must have shape"),
        (lambda q, kv, f: (q, kv[:, :, :3], f, {}), "must agree"),
        (lambda q, kv, f: (q, kv, f, {"rope_dim": 3}), "rope_dim must be even"),
        (lambda q, kv, f: (q, kv, f, {"rope_dim": 12}), "rope_dim must be at most"),
        (lambda q, kv, f: (q, kv, f[:1], {}), "inv_freq must have"),
        (lambda q, kv, f: (q, kv, f, {"sinks": np.zeros(2)}), "sinks must"),
        (lambda q, kv, f: (q, kv, f, {"positions": np.arange(5)}), "positions must have shape"),
        (lambda q, kv, f: (q, kv, f, {"scale": float("nan")}), "scale must"),
        (lambda q, kv, f: (q[0, 0], kv[0, 0], f, {}), "q must have shape"),
    ],
)
def test_bad_input_is_named(change, words):
    q, kv, f, _ = case(5)
    q, kv, f, extra = change(q, kv, f)
    kwargs = {"rope_dim": 4, **extra}
    with pytest.raises(ValueError, match=words):
        P.vo_rope_attention(q, kv, f, **kwargs)


def test_mixed_numpy_and_torch_is_a_type_error():
    q, kv, f, _ = case(6)
    with pytest.raises(TypeError, match="mixed NumPy and torch"):
        P.vo_rope_attention(torch.from_numpy(q), kv, f, rope_dim=4)
