"""RoPE scaling variants checked against the properties their papers state."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

D, BASE, L = 128, 10000.0, 4096
theta = BASE ** (-np.arange(0, D, 2) / D)  # written out here, independent of poslib


def inv(scaling, **kw):
    return P.rope_inv_freq(D, BASE, scaling, **kw)


def test_default_is_plain_rope():
    f, a = inv(None)
    np.testing.assert_allclose(f, theta, rtol=1e-14)
    assert a == 1.0


@given(s=st.floats(1.0, 64.0))
def test_pi_maps_every_position_back_inside_the_trained_range(s):
    f, _ = inv({"rope_type": "linear", "factor": s})
    m = np.arange(0, int(s * L), max(1, int(s * L) // 997))
    angles = m[:, None] * f
    assert (angles < L * theta).all()  # m/s < L: every angle is one a position in [0, L) produces
    np.testing.assert_allclose(angles, (m / s)[:, None] * theta, rtol=1e-12)


@given(s=st.floats(1.0, 64.0))
def test_ntk_keeps_highest_and_divides_lowest_by_s(s):
    f, _ = inv({"rope_type": "ntk", "factor": s})
    assert f[0] == theta[0] == 1.0
    assert f[-1] == pytest.approx(theta[-1] / s, rel=1e-10)
    assert (f <= theta * (1 + 1e-12)).all() and (f >= theta / s * (1 - 1e-12)).all()


def test_dynamic_is_plain_up_to_the_original_length_then_grows():
    cfg = {"rope_type": "dynamic", "factor": 4.0, "original_max_position_embeddings": L}
    np.testing.assert_allclose(inv(cfg, seq_len=L // 2)[0], theta)
    np.testing.assert_allclose(inv(cfg)[0], theta)
    # at n = 2L the effective factor is 4·2 − 3 = 5, i.e. the static NTK base change with s = 5
    np.testing.assert_allclose(inv(cfg, seq_len=2 * L)[0], inv({"rope_type": "ntk", "factor": 5.0})[0])


def test_yarn_keeps_fast_pairs_and_interpolates_slow_pairs():
    s = 16.0
    f, attn = inv({"rope_type": "yarn", "factor": s, "original_max_position_embeddings": L})
    turns = L * theta / (2 * math.pi)  # full turns each pair completes over the original context
    np.testing.assert_allclose(f[turns > 32 * 1.5], theta[turns > 32 * 1.5])  # β_fast = 32 (margin for rounding)
    np.testing.assert_allclose(f[turns < 1 / 1.5], theta[turns < 1 / 1.5] / s)  # β_slow = 1
    assert attn == pytest.approx(0.1 * math.log(s) + 1)
    mid = (turns < 32) & (turns > 1)
    assert ((f[mid] < theta[mid]) & (f[mid] > theta[mid] / s)).any()


def test_yarn_attention_factor_overrides():
    _, a = inv({"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": L, "attention_factor": 1.0})
    assert a == 1.0
    _, b = inv(
        {"rope_type": "yarn", "factor": 40, "original_max_position_embeddings": L, "mscale": 1.0, "mscale_all_dim": 1.0}
    )
    assert b == pytest.approx(1.0)


def test_llama3_by_wavelength_with_metas_settings():
    cfg = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    base = 500000.0
    th = base ** (-np.arange(0, D, 2) / D)
    f, _ = P.rope_inv_freq(D, base, cfg)
    wavelength = 2 * math.pi / th
    np.testing.assert_allclose(f[wavelength < 8192 / 4], th[wavelength < 8192 / 4])
    np.testing.assert_allclose(f[wavelength > 8192], th[wavelength > 8192] / 8)
    mid = (wavelength >= 2048) & (wavelength <= 8192)
    assert ((f[mid] <= th[mid]) & (f[mid] >= th[mid] / 8)).all()


def test_legacy_type_key_is_accepted():
    np.testing.assert_allclose(inv({"type": "linear", "factor": 2.0})[0], theta / 2)


def test_registry_lists_every_variant():
    assert set(P.ROPE_SCALINGS) == {"default", "linear", "ntk", "dynamic", "yarn", "llama3"}
