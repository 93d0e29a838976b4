"""RoPE beyond its training length (poslib.rope_diagnostics): unseen angles, KV-cache drift."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

THETA = P.rope_frequencies(128)


# ---------- rope_cache_drift ----------
DYNAMIC = {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 32}


# ---------- rope_unseen_angle ----------
@given(train=st.integers(2, 5000), extra=st.integers(-2000, 20000))
def test_unseen_angle_is_the_new_arc(train, extra):
    infer = max(1, train + extra)
    unseen = P.rope_unseen_angle(THETA, train, infer)
    assert unseen.shape == THETA.shape and (unseen >= 0).all() and (unseen <= 2 * np.pi + 1e-12).all()
    if infer <= train:
        assert (unseen == 0).all()
    turned = (train - 1) * THETA >= 2 * np.pi  # these pairs saw the whole circle in training
    assert (unseen[turned] == 0).all()
    # brute force on the slowest pair: the arc between the last training angle and the last inference angle
    last = THETA[-1]
    expected = max(0.0, min(2 * np.pi, (infer - 1) * last) - min(2 * np.pi, (train - 1) * last))
    assert unseen[-1] == pytest.approx(expected, abs=1e-12)


def test_unseen_angle_hand_worked():
    # θ = 2π/100 rad per token: 10 tokens see 9·θ, 30 tokens reach 29·θ, 500 tokens wrap the circle
    theta = np.array([2 * np.pi / 100, 4.0])
    np.testing.assert_allclose(P.rope_unseen_angle(theta, 10, 30), [20 * 2 * np.pi / 100, 0], atol=1e-12)
    np.testing.assert_allclose(P.rope_unseen_angle(theta, 10, 500), [2 * np.pi * 91 / 100, 0], atol=1e-12)


def test_unseen_angle_with_scaled_inference_frequencies():
    L, s = 4096, 8.0
    pi, _ = P.rope_inv_freq(128, 10000.0, {"rope_type": "linear", "factor": s})
    # PI reads position m as m/s: the last position s·L − 1 lands at L − 1/s, under one token past L − 1
    unseen = P.rope_unseen_angle(THETA, L, int(s * L), infer_inv_freq=pi)
    np.testing.assert_allclose(unseen, np.where((L - 1) * THETA < 2 * np.pi, (1 - 1 / s) * THETA, 0), atol=1e-12)
    assert (P.rope_unseen_angle(THETA, L, L, infer_inv_freq=pi) == 0).all()  # slower frequencies, same length
    with pytest.raises(ValueError, match="infer_inv_freq"):
        P.rope_unseen_angle(THETA, L, L, infer_inv_freq=pi[:3])


def test_cache_drift_is_zero_for_static_scalings_and_short_sequences():
    assert P.rope_cache_drift(16, 10000.0, {"rope_type": "linear", "factor": 4.0}, 100).max() == 0
    assert P.rope_cache_drift(16, 10000.0, DYNAMIC, 32).max() == 0
    drift = P.rope_cache_drift(16, 10000.0, DYNAMIC, 96)
    assert drift.shape == (96, 8) and drift.max() > 0.1 and drift.max() <= np.pi
    assert (drift[0] == 0).all()  # position 0 is not rotated at all


def test_cache_drift_matches_a_real_cached_versus_fresh_key():
    n, j, d = 80, 50, 16
    rng = np.random.default_rng(1)
    k = rng.standard_normal((1, d))
    then, _ = P.rope_inv_freq(d, 10000.0, DYNAMIC, seq_len=j + 1)
    now, _ = P.rope_inv_freq(d, 10000.0, DYNAMIC, seq_len=n)
    cached, fresh = P.apply_rope(k, np.array([j]), then), P.apply_rope(k, np.array([j]), now)
    # the angle between the two rotated pairs, pair by pair
    c, f = cached.reshape(-1, 2), fresh.reshape(-1, 2)
    angle = np.arccos(np.clip((c * f).sum(-1) / np.linalg.norm(c, axis=-1) / np.linalg.norm(f, axis=-1), -1, 1))
    np.testing.assert_allclose(P.rope_cache_drift(d, 10000.0, DYNAMIC, n)[j], angle, atol=1e-6)


def test_cache_drift_is_the_angle_between_cached_and_fresh_keys_wrapped_to_half_a_turn():
    # LongRoPE's switch (notebook 09, issue 43 item 5): past L every pair changes its divisor, and j·|Δθ_i| passes π
    # on many keys; the drift is still the angle between the cached and the fresh rotated pair, in [0, π]
    longrope = {
        "rope_type": "longrope",
        "factor": 4.0,
        "original_max_position_embeddings": 32,
        "short_factor": [1.0, 1.5, 2.0, 3.0],
        "long_factor": [1.3, 2.0, 6.0, 8.0],
    }
    d, n = 8, 40
    drift = P.rope_cache_drift(d, 10000.0, longrope, n)
    now, _ = P.rope_inv_freq(d, 10000.0, longrope, seq_len=n)
    k = np.random.default_rng(2).standard_normal((n, d))
    unwrapped = []
    for j in range(n):
        then, _ = P.rope_inv_freq(d, 10000.0, longrope, seq_len=j + 1)
        c = P.apply_rope(k[j : j + 1], np.array([j]), then).reshape(-1, 2)
        f = P.apply_rope(k[j : j + 1], np.array([j]), now).reshape(-1, 2)
        cos = (c * f).sum(-1) / np.linalg.norm(c, axis=-1) / np.linalg.norm(f, axis=-1)
        np.testing.assert_allclose(drift[j], np.arccos(np.clip(cos, -1, 1)), atol=1e-6)
        unwrapped.append(j * np.abs(now - then))
    assert (np.array(unwrapped) > np.pi).sum() > 10, "the case must reach past half a turn, or the wrap goes untested"
    assert drift.max() <= np.pi
