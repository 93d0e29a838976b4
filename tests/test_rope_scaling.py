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


def test_yarn_ramps_code_and_paper_at_independent_values():
    # d = 128, L = 4096, base 10⁴: the pair with τ turns is i(τ) = 64·ln(4096/(2πτ))/ln 10⁴,
    # i(32) = 20.95… and i(1) = 45.03…, so the code's ramp runs over the pair index from 20 to 46.
    code, paper = P.yarn_ramp(D, BASE, L), P.yarn_ramp(D, BASE, L, ramp="paper")
    assert code[30] == pytest.approx(1 - (30 - 20) / (46 - 20), rel=1e-12)  # 0.615…
    turns_30 = L * BASE ** (-60 / 128) / (2 * math.pi)  # 8.693… turns
    assert paper[30] == pytest.approx((turns_30 - 1) / (32 - 1), rel=1e-12)  # 0.248…
    assert round(code[30], 3) == 0.615 and round(paper[30], 3) == 0.248  # the numbers notebook 06 prints
    # kept (γ = 1) for pairs 0…20 and fully divided (γ = 0) for pairs 46…63 under both ramps
    for gamma in (code, paper):
        assert (gamma[:21] == 1).all() and (gamma[21:46] < 1).all() and (gamma[21:46] > 0).all()
        assert (gamma[46:] == 0).all()
    # inside the ramp the frequencies differ: by more than 2× at the worst pair (2.30×, pair 36)
    s = 8.0
    f_code = inv({"rope_type": "yarn", "factor": s, "original_max_position_embeddings": L})[0]
    f_paper = inv({"rope_type": "yarn", "factor": s, "original_max_position_embeddings": L, "ramp": "paper"})[0]
    np.testing.assert_allclose(f_paper, paper * theta + (1 - paper) * theta / s, rtol=1e-12)
    ratio = np.maximum(f_code / f_paper, f_paper / f_code)
    assert 2.2 < ratio.max() < 2.4 and ratio.argmax() == 36


def test_yarn_rule_uses_the_truncated_code_ramp_written_out():
    # The `yarn` rule's frequencies against θ' built here from the code's ramp (linear in the pair index
    # from ⌊i(32)⌋ = 20 to ⌈i(1)⌉ = 46, written out, not P.yarn_ramp): a rule that used the paper's ramp, or
    # dropped the floor and ceil by default, gives the same kept and divided pairs and passes the tests above.
    s = 8.0
    i = np.arange(D // 2)
    gamma = 1 - np.clip((i - 20) / (46 - 20), 0, 1)
    f = inv({"rope_type": "yarn", "factor": s, "original_max_position_embeddings": L})[0]
    np.testing.assert_allclose(f, gamma * theta + (1 - gamma) * theta / s, rtol=1e-12)
    # truncate=False (Hugging Face's key) runs the ramp between the fractional ends i(32), i(1) instead
    lo, hi = (D * math.log(L / (2 * math.pi * tau)) / (2 * math.log(BASE)) for tau in (32.0, 1.0))
    gamma_u = 1 - np.clip((i - lo) / (hi - lo), 0, 1)
    f_u = inv({"rope_type": "yarn", "factor": s, "original_max_position_embeddings": L, "truncate": False})[0]
    np.testing.assert_allclose(f_u, gamma_u * theta + (1 - gamma_u) * theta / s, rtol=1e-12)
    assert np.abs(f_u / f - 1).max() > 0.2  # 0.26: the two differ visibly inside the ramp


@given(
    log2_len=st.integers(12, 20),  # pair 0 turns L/2π ≥ 652 > β_fast times (else the code's start clamps to 0)
    log10_base=st.floats(3.0, 7.0),
    d=st.sampled_from([16, 64, 128, 256]),
    beta_fast=st.sampled_from([16.0, 32.0, 64.0]),
)
def test_yarn_ramps_agree_on_the_kept_and_the_fully_divided_pairs(log2_len, log10_base, d, beta_fast):
    # The code ramp rounds its ends outwards to whole pair indices; a pair with more than β_fast turns
    # (fewer than β_slow) is then kept (fully divided) by both, so only the pairs strictly inside differ.
    length, base = 2**log2_len, 10.0**log10_base
    code = P.yarn_ramp(d, base, length, beta_fast, 1.0)
    paper = P.yarn_ramp(d, base, length, beta_fast, 1.0, ramp="paper")
    np.testing.assert_array_equal(code == 1, paper == 1)
    np.testing.assert_array_equal(code == 0, paper == 0)


def test_yarn_ramp_rejects_an_unknown_ramp():
    with pytest.raises(ValueError, match="ramp must be one of"):
        P.yarn_ramp(D, BASE, L, ramp="turns")
    with pytest.raises(ValueError, match="ramp must be one of"):
        inv({"rope_type": "yarn", "factor": 8, "original_max_position_embeddings": L, "ramp": "Paper"})
    with pytest.raises(ValueError, match="beta_fast > beta_slow"):
        P.yarn_ramp(D, BASE, L, 1.0, 32.0, ramp="paper")


def test_yarn_paper_ramp_numpy_and_torch_agree():
    torch = pytest.importorskip("torch")
    a = P.yarn_ramp(D, BASE, L, ramp="paper")
    b = P.yarn_ramp(D, BASE, L, ramp="paper", backend="torch")
    assert isinstance(b, torch.Tensor) and b.dtype == torch.float64
    np.testing.assert_allclose(b.numpy(), a, rtol=1e-14)


@pytest.mark.parametrize("rope_type", ["linear", "yarn"])
@pytest.mark.parametrize("s", [2, 7, 8, 16])
def test_pi_and_yarn_leave_at_most_one_token_step_of_new_angle_at_sL(rope_type, s):
    # Run at L' = sL, pair i reaches (sL − 1)·θ'_i against the trained (L − 1)·θ_i. For PI θ' = θ/s,
    # so the new arc is (sL − 1)θ/s − (L − 1)θ = (1 − 1/s)·θ_i: less than one token's step. YaRN divides
    # every unturned pair by s too. A wrong factor (7 at s = 8) leaves (8L − 1)/7 − (L − 1) ≈ L/7 steps.
    f = inv({"rope_type": rope_type, "factor": float(s), "original_max_position_embeddings": L})[0]
    reach = np.minimum(2 * np.pi, (s * L - 1) * f)
    new_arc = np.clip(reach - (L - 1) * theta, 0, None)
    new_arc[(L - 1) * theta >= 2 * np.pi] = 0  # a pair that turned in training has seen every angle
    assert (new_arc <= (1 - 1 / s) * theta * (1 + 1e-9)).all()
    np.testing.assert_allclose(P.rope_unseen_angle(theta, L, s * L, infer_inv_freq=f), new_arc, atol=1e-12)


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
    assert set(P.ROPE_SCALINGS) == {"default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional"}
    assert P.WHOLE_HEAD_SCALINGS == {"proportional"}  # the one variant that reads partial_rotary_factor itself
