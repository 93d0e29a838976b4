"""Two conventions for partial rotary: Gemma 4's ``proportional`` (exponent over the whole head, zero frequencies,
pairs (i, i + d/2)) and the rotated-dims one (Qwen3-Next / Qwen3.5, GLM-4.5, MiniMax-M2), and the bug that mixing
them makes, measured.

The forms below are written from transformers 5.25.0's code
(``modeling_rope_utils._compute_proportional_rope_parameters``, ``Gemma4TextRotaryEmbedding.forward``,
``apply_rotary_pos_emb``; read at the source, compared with stored outputs in tests/test_reference_issue44.py),
not by calling poslib.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import poslib as P

GEMMA4 = {  # the text part of Gemma 4's config.json, as released (global_head_dim) and as transformers 5.25 writes it
    "head_dim": 256,
    "global_head_dim": 512,
    "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
    "rope_parameters": {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0},
    },
}
GEMMA4_525 = {k: v for k, v in GEMMA4.items() if k != "global_head_dim"} | {
    "per_layer_config": {"5": {"head_dim": 512}}
}


def hf_proportional(head_dim, partial, base, factor=1.0):
    # _compute_proportional_rope_parameters: int(p·d // 2) frequencies base^(−2i/d), then zeros up to d/2
    n = int(partial * head_dim // 2)
    f = 1.0 / base ** (np.arange(0, 2 * n, 2) / head_dim)
    return np.concatenate([f, np.zeros(head_dim // 2 - n)]) / factor


def hf_half(x, pos, inv_freq):
    # cat(freqs, freqs) and x·cos + rotate_half(x)·sin over the whole head (Gemma 4's apply_rotary_pos_emb)
    freqs = np.outer(pos, inv_freq)
    emb = np.concatenate([freqs, freqs], -1)
    h = x.shape[-1] // 2
    return x * np.cos(emb) + np.concatenate([-x[..., h:], x[..., :h]], -1) * np.sin(emb)


@pytest.mark.parametrize("config", [GEMMA4, GEMMA4_525, {"text_config": GEMMA4}])
def test_gemma4_full_attention_reads_as_proportional(config):
    inv, factor, rotary_dim = P.rope_from_config(config, layer_type="full_attention")
    assert (len(inv), factor, rotary_dim) == (256, 1.0, 512)
    np.testing.assert_allclose(inv, hf_proportional(512, 0.25, 1e6), rtol=1e-14, atol=0)
    assert (inv[:64] > 0).all() and (inv[64:] == 0).all()
    assert inv[1] == pytest.approx(1e6 ** (-2 / 512))  # the exponent runs over all 512 features
    sliding, _, rotary_s = P.rope_from_config(config, layer_type="sliding_attention")
    assert rotary_s == 256
    np.testing.assert_allclose(sliding, P.rope_frequencies(256, 1e4), rtol=1e-15)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    half=st.integers(1, 32),
    partial=st.sampled_from([0.125, 0.25, 0.5, 0.75, 1.0]),
    base=st.floats(10.0, 1e7),
    start=st.integers(0, 100_000),
)
def test_proportional_rotation_matches_transformers_and_passes_the_rest_through(seed, half, partial, base, start):
    d = 2 * half
    if int(partial * d // 2) < 1:
        return
    config = {
        "head_dim": d,
        "rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": partial, "rope_theta": base},
    }
    inv, factor, rotary_dim = P.rope_from_config(config)
    x = np.random.default_rng(seed).standard_normal((2, 5, d))
    pos = np.arange(start, start + 5)
    got = P.apply_rope(x, pos, inv, layout="half", attention_factor=factor, rotary_dim=rotary_dim)
    np.testing.assert_allclose(got, hf_half(x, pos, hf_proportional(d, partial, base)), rtol=1e-9, atol=1e-9)
    n = int(partial * d // 2)
    still = np.r_[n : d // 2, d // 2 + n : d]  # the pairs at frequency 0: features (i, i + d/2) for i ≥ n
    np.testing.assert_array_equal(got[..., still], x[..., still])
    # scores depend only on the offset: shifting q's and k's positions alike changes nothing
    k = np.random.default_rng(seed + 1).standard_normal((2, 5, d))

    def scores(p):
        rq = P.apply_rope(x, p, inv, layout="half", rotary_dim=rotary_dim)
        return rq @ np.swapaxes(P.apply_rope(k, p, inv, layout="half", rotary_dim=rotary_dim), -1, -2)

    np.testing.assert_allclose(scores(pos + 977), scores(pos), rtol=1e-8, atol=1e-8)


def test_proportional_factor_divides_every_frequency_and_torch_agrees():
    params = {"rope_type": "proportional", "partial_rotary_factor": 0.5, "rope_theta": 5e5, "factor": 4.0}
    inv, _, _ = P.rope_from_config({"head_dim": 64, "rope_parameters": params})
    np.testing.assert_allclose(inv, hf_proportional(64, 0.5, 5e5, 4.0), rtol=1e-14)
    t, _, _ = P.rope_from_config({"head_dim": 64, "rope_parameters": params}, backend="torch")
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float64
    np.testing.assert_allclose(t.numpy(), inv, rtol=1e-15, atol=0)  # torch's pow may round the last bit apart
    f, a = P.rope_inv_freq(64, 5e5, params)  # the registry entry directly: whole head, not the rotated dims
    assert len(f) == 32 and a == 1.0 and "proportional" in P.WHOLE_HEAD_SCALINGS


def test_rotated_dims_convention_is_unchanged():
    # Qwen3.5-style: head 256, factor 0.25 → 64 rotated features, exponent over them, pairs inside them
    config = {
        "head_dim": 256,
        "rope_parameters": {"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25},
    }
    inv, factor, rotary_dim = P.rope_from_config(config)
    assert (rotary_dim, factor) == (64, 1.0)
    np.testing.assert_allclose(inv, P.rope_frequencies(64, 1e7), rtol=1e-15)


def gemma4_readings():
    right = P.rope_from_config(GEMMA4, layer_type="full_attention")
    rotated = (P.rope_frequencies(128, 1e6), 1.0, 128)  # the rotated-dims rule applied to Gemma 4's config
    paired_inside = (right[0][:64], 1.0, 128)  # Gemma 4's frequencies, paired inside the first 128 features
    return right, rotated, paired_inside


def test_mixing_the_conventions_is_a_measurable_bug():
    right, rotated, paired_inside = gemma4_readings()
    # angle per token of distance, pair 1: 1e6^(−1/64) under the rotated-dims rule, 1e6^(−1/256) under Gemma 4's
    per_token = rotated[0][1] - right[0][1]
    q = np.random.default_rng(0).standard_normal(512)
    q /= np.linalg.norm(q)
    x = np.broadcast_to(q, (1024, 512)).copy()
    pos = np.arange(1024)
    gap_rotated = P.rope_convention_gap(x, x, pos, right, rotated)
    gap_pairs = P.rope_convention_gap(x, x, pos, right, paired_inside)
    print(
        f"pair 1 turns {rotated[0][1]:.5f} rad/token instead of {right[0][1]:.5f} ({abs(per_token):.3f} apart); "
        f"a unit query against itself at positions 0…1023: scores move by up to {gap_rotated:.3f} "
        f"(exponent over the rotated dims) and {gap_pairs:.3f} (pairs inside the first 128 features)"
    )
    assert round(rotated[0][1], 5) == 0.80584 and round(right[0][1], 5) == 0.94746
    assert round(gap_rotated, 3) == 0.230 and round(gap_pairs, 3) == 0.098  # the numbers in the docstring
    assert P.rope_convention_gap(x, x, pos, right, right) == 0.0
    # the two readings agree at distance 0 only
    assert P.rope_convention_gap(x[:1], x[:1], pos[:1] + 100, right, rotated) < 1e-12
    # and torch measures the same gap
    t = [tuple(torch.from_numpy(v) if isinstance(v, np.ndarray) else v for v in r) for r in (right, rotated)]
    small = P.rope_convention_gap(torch.from_numpy(x[:64]), torch.from_numpy(x[:64]), torch.arange(64), *t)
    assert small == pytest.approx(P.rope_convention_gap(x[:64], x[:64], pos[:64], right, rotated), rel=1e-12)


def test_per_layer_type_configs_need_a_layer_type():
    with pytest.raises(ValueError, match="pass layer_type, one of"):
        P.rope_from_config(GEMMA4)
    with pytest.raises(ValueError, match="layer_type must be one of"):
        P.rope_from_config(GEMMA4, layer_type="global")
    with pytest.raises(ValueError, match="no per-layer-type rope_parameters"):
        P.rope_from_config({"head_dim": 64, "rope_theta": 1e4}, layer_type="full_attention")
    with pytest.raises(ValueError, match="not per layer type"):
        P.rope_from_config({"head_dim": 64, "rope_parameters": {"rope_theta": 1e4}}, layer_type="full_attention")
    bad = GEMMA4_525 | {
        "layer_types": ["full_attention"] * 6,
        "per_layer_config": {"5": {"head_dim": 512}, "4": {"head_dim": 128}},
    }
    with pytest.raises(ValueError, match="different head dims"):
        P.rope_from_config(bad, layer_type="full_attention")
    with pytest.raises(ValueError, match="leaves no rotated pair"):
        P.rope_inv_freq(8, 1e4, {"rope_type": "proportional", "partial_rotary_factor": 0.1})
    with pytest.raises(ValueError, match="reading must be"):
        P.rope_convention_gap(np.ones((2, 4)), np.ones((2, 4)), np.arange(2), (np.ones(2),), (np.ones(2), 1.0, 4))


def test_deepseek_v4_style_per_type_parameters_with_a_flat_leftover():
    config = {
        "head_dim": 512,
        "partial_rotary_factor": 0.125,
        "rope_parameters": {
            "rope_type": "default",  # a flat leftover beside the per-type dictionaries; transformers skips it too
            "main": {"rope_type": "default", "rope_theta": 10000.0},
            "compress": {"rope_type": "default", "rope_theta": 160000.0},
        },
    }
    inv, _, rotary_dim = P.rope_from_config(config, layer_type="compress")
    assert rotary_dim == 64
    np.testing.assert_allclose(inv, P.rope_frequencies(64, 160000.0), rtol=1e-15)
