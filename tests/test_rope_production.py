"""RoPE as production models use it: partial rotary, M-RoPE, 2-D axial RoPE, config.json reading, the base bound.

Reference implementations below are written independently from the published code they
name (Hugging Face's rotate_half form, GPT-J's rotate_every_two, Qwen2-VL's section split),
not by calling poslib.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import poslib as P

seeds = st.integers(0, 2**16)
offsets = st.integers(-3000, 3000)


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


# ---------------------------------------------------------------- partial rotary


def _hf_partial_half(x, pos, inv_freq, rotary_dim):
    # Hugging Face Phi / GPT-NeoX: split off the rotary part, rotate it with cat(freqs, freqs)
    # and rotate_half, concatenate the pass-through part back.
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    freqs = np.outer(pos, inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    h = rotary_dim // 2
    rotated_half = np.concatenate([-x_rot[..., h:], x_rot[..., :h]], axis=-1)
    return np.concatenate([x_rot * np.cos(emb) + rotated_half * np.sin(emb), x_pass], axis=-1)


def _gptj_partial(x, pos, inv_freq, rotary_dim):
    # GPT-J: rotate_every_two on the first rotary_dim features, sin/cos repeated per pair.
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    freqs = np.outer(pos, inv_freq)
    cos, sin = np.repeat(np.cos(freqs), 2, axis=-1), np.repeat(np.sin(freqs), 2, axis=-1)
    every_two = np.stack([-x_rot[..., 1::2], x_rot[..., 0::2]], axis=-1).reshape(x_rot.shape)
    return np.concatenate([x_rot * cos + every_two * sin, x_pass], axis=-1)


@given(
    head_dim=st.sampled_from([8, 16, 64]),
    frac=st.sampled_from([0.25, 0.5, 0.75, 1.0]),
    layout=st.sampled_from(["half", "interleaved"]),
    seed=seeds,
    start=offsets,
)
def test_partial_rotary_matches_published_forms_and_passes_the_rest_through(head_dim, frac, layout, seed, start):
    rd = int(head_dim * frac) // 2 * 2
    x = _rand((2, 6, head_dim), seed)
    pos = np.arange(6) + start
    f = P.rope_frequencies(rd, 10000.0)
    out = P.apply_rope(x, pos, f, layout=layout, rotary_dim=rd)
    ref = (_hf_partial_half if layout == "half" else _gptj_partial)(x, pos, f, rd)
    np.testing.assert_allclose(out, ref, atol=1e-9)
    assert np.array_equal(out[..., rd:], x[..., rd:])  # bit-identical pass-through


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_partial_rotary_pass_through_is_bit_identical_in_every_dtype(dtype, layout):
    x = torch.randn(3, 4, 7, 32, generator=torch.Generator().manual_seed(0)).to(dtype)
    out = P.apply_rope(x, torch.arange(7) * 100000, torch.tensor(P.rope_frequencies(8)), layout=layout, rotary_dim=8)
    assert out.dtype == dtype and torch.equal(out[..., 8:], x[..., 8:])


def test_full_rotary_dim_is_plain_rope():
    x = _rand((3, 16), 1)
    f = P.rope_frequencies(16)
    for layout in ["half", "interleaved"]:
        np.testing.assert_array_equal(
            P.apply_rope(x, np.arange(3), f, layout=layout, rotary_dim=16),
            P.apply_rope(x, np.arange(3), f, layout=layout),
        )


# ---------------------------------------------------------------- M-RoPE


def _hf_mrope(q, cos, sin, mrope_section):
    # transformers' apply_multimodal_rotary_pos_emb: cos/sin (3, seq, d) split at mrope_section * 2,
    # chunk i taken from axis i % 3, then q*cos + rotate_half(q)*sin.
    sections = list(mrope_section) * 2
    cos = torch.cat([m[i % 3] for i, m in enumerate(cos.split(sections, dim=-1))], dim=-1)
    sin = torch.cat([m[i % 3] for i, m in enumerate(sin.split(sections, dim=-1))], dim=-1)
    h = q.shape[-1] // 2
    return q * cos + torch.cat([-q[..., h:], q[..., :h]], dim=-1) * sin


def test_mrope_matches_qwen2_vl_reference():
    section = [16, 24, 24]
    d = 128
    inv_freq = P.rope_frequencies(d, 1e6)
    rng = np.random.default_rng(0)
    pos = np.stack([np.repeat(np.arange(3), 8), np.tile(np.repeat(np.arange(4), 2), 3), np.tile(np.arange(2), 12)])
    pos = pos + rng.integers(0, 50, size=(3, 1))  # a text prefix moves every axis
    q = torch.tensor(rng.standard_normal((2, 24, d)))
    freqs = torch.tensor(pos, dtype=torch.float64)[..., None] * torch.tensor(inv_freq)  # (3, seq, d/2)
    emb = torch.cat([freqs, freqs], dim=-1)
    ref = _hf_mrope(q, emb.cos(), emb.sin(), section)
    out = P.apply_mrope(q, torch.tensor(pos), torch.tensor(inv_freq), section)
    torch.testing.assert_close(out, ref, atol=1e-10, rtol=0)


@settings(max_examples=40)
@given(
    seed=seeds,
    shift=st.tuples(offsets, offsets, offsets),
    layout=st.sampled_from(["half", "interleaved"]),
    section=st.sampled_from([(8, 12, 12), (8, 0, 24), (2, 3, 27)]),
)
def test_mrope_scores_depend_only_on_the_offset_per_axis(seed, shift, layout, section):
    d = 64
    inv_freq = P.rope_frequencies(d, 1e6)
    q, k = _rand((1, d), seed), _rand((1, d), seed + 1)
    rng = np.random.default_rng(seed)
    pq, pk = rng.integers(-500, 500, size=(3, 1)), rng.integers(-500, 500, size=(3, 1))
    s = np.array(shift)[:, None]

    def score(a, b):
        return (
            P.apply_mrope(q, a, inv_freq, section, layout=layout)
            * P.apply_mrope(k, b, inv_freq, section, layout=layout)
        ).sum()

    s1, s2 = score(pq, pk), score(pq + s, pk + s)
    assert s1 == pytest.approx(s2, abs=1e-9 * (1 + abs(s1)))


def test_mrope_with_equal_axes_is_plain_rope():
    x = _rand((2, 9, 32), 3)
    f = P.rope_frequencies(32)
    pos = np.arange(9) + 40
    for layout in ["half", "interleaved"]:
        np.testing.assert_allclose(
            P.apply_mrope(x, np.stack([pos] * 3), f, [4, 6, 6], layout=layout),
            P.apply_rope(x, pos, f, layout=layout),
            atol=1e-12,
        )


def test_mrope_axis_of_pair():
    axis = P.mrope_axis_of_pair([16, 24, 24])
    assert axis.shape == (64,) and (axis[:16] == 0).all() and (axis[16:40] == 1).all() and (axis[40:] == 2).all()


def test_mrope_batched_positions_broadcast_over_heads():
    x = torch.randn(2, 4, 5, 16, dtype=torch.float64)
    pos = torch.randint(0, 100, (3, 2, 1, 5))
    out = P.apply_mrope(x, pos, torch.tensor(P.rope_frequencies(16)), [2, 3, 3])
    for b in range(2):
        one = P.apply_mrope(x[b], pos[:, b, 0], torch.tensor(P.rope_frequencies(16)), [2, 3, 3])
        torch.testing.assert_close(out[b], one)


# ---------------------------------------------------------------- 2-D axial RoPE


@settings(max_examples=40)
@given(seed=seeds, dr=offsets, dc=offsets, layout=st.sampled_from(["half", "interleaved"]))
def test_rope_2d_scores_depend_only_on_row_and_column_offsets(seed, dr, dc, layout):
    d = 32
    f = P.rope_frequencies(d // 2, 100.0)
    q, k = _rand((1, d), seed), _rand((1, d), seed + 1)
    rng = np.random.default_rng(seed)
    (rq, cq), (rk, ck) = rng.integers(0, 64, size=(2, 2))

    def score(r1, c1, r2, c2):
        a = P.apply_rope_2d(q, [r1], [c1], f, layout=layout)
        b = P.apply_rope_2d(k, [r2], [c2], f, layout=layout)
        return (a * b).sum()

    s1, s2 = score(rq, cq, rk, ck), score(rq + dr, cq + dc, rk + dr, ck + dc)
    assert s1 == pytest.approx(s2, abs=1e-9 * (1 + abs(s1)))


def test_rope_2d_halves_are_plain_rope_on_each_axis():
    x = _rand((6, 16), 4)
    f = P.rope_frequencies(8)
    rows, cols = np.arange(6) // 3, np.arange(6) % 3
    out = P.apply_rope_2d(x, rows, cols, f)
    np.testing.assert_array_equal(out[:, :8], P.apply_rope(x[:, :8], rows, f))
    np.testing.assert_array_equal(out[:, 8:], P.apply_rope(x[:, 8:], cols, f))


# ---------------------------------------------------------------- config.json


LLAMA31 = {
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "rope_theta": 500000.0,
    "max_position_embeddings": 131072,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
}
DEEPSEEK_V3 = {
    "hidden_size": 7168,
    "num_attention_heads": 128,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "max_position_embeddings": 163840,
    "rope_theta": 10000,
    "rope_scaling": {
        "beta_fast": 32,
        "beta_slow": 1,
        "factor": 40,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
        "original_max_position_embeddings": 4096,
        "type": "yarn",
    },
}


def test_config_plain_and_scaled_match_rope_inv_freq():
    f, a, rd = P.rope_from_config(LLAMA31)
    ref, _ = P.rope_inv_freq(128, 500000.0, LLAMA31["rope_scaling"])
    assert rd == 128 and a == 1.0 and np.array_equal(f, ref)
    f, a, rd = P.rope_from_config({"head_dim": 64, "rope_theta": 1e4})
    assert rd == 64 and a == 1.0 and np.array_equal(f, P.rope_frequencies(64))


def test_config_new_style_rope_parameters_and_text_config():
    new = {
        "text_config": {
            **LLAMA31,
            "rope_scaling": None,
            "rope_parameters": {**LLAMA31["rope_scaling"], "rope_theta": 5e5},
        }
    }
    assert np.array_equal(P.rope_from_config(new)[0], P.rope_from_config(LLAMA31)[0])


def test_config_partial_rotary_keys():
    neox = {"hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25, "rotary_emb_base": 10000}
    phi2 = {"hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4, "rope_theta": 10000.0}
    gptj = {"n_embd": 4096, "hidden_size": 4096, "num_attention_heads": 16, "rotary_dim": 64}
    for cfg, rd in [(neox, 24), (phi2, 32), (gptj, 64)]:
        f, _, got = P.rope_from_config(cfg)
        assert got == rd and len(f) == rd // 2
        np.testing.assert_allclose(f, 10000.0 ** (-np.arange(0, rd, 2) / rd), rtol=1e-14)


def test_config_deepseek_v3_yarn_with_mscale():
    f, a, rd = P.rope_from_config(DEEPSEEK_V3)
    assert rd == 64 and a == 1.0  # mscale / mscale_all_dim = 1 on cos/sin; the softmax scale takes mscale²
    # ramp bounds written from YaRN's formula: pair index with r turns over L is d·ln(L/(2πr)) / (2 ln b)
    low = math.floor(64 * math.log(4096 / (2 * math.pi * 32)) / (2 * math.log(10000)))
    high = math.ceil(64 * math.log(4096 / (2 * math.pi * 1)) / (2 * math.log(10000)))
    theta = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    np.testing.assert_allclose(f[:low], theta[:low], rtol=1e-14)
    np.testing.assert_allclose(f[high:], theta[high:] / 40, rtol=1e-14)
    assert P.rope_from_config({**DEEPSEEK_V3, "rope_scaling": {**DEEPSEEK_V3["rope_scaling"], "mscale": 0.707}})[1] < 1


def test_config_mrope_type_has_plain_frequencies():
    qwen2vl = {"hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1e6}
    qwen2vl["rope_scaling"] = {"type": "mrope", "mrope_section": [16, 24, 24]}
    f, _, rd = P.rope_from_config(qwen2vl)
    assert rd == 128 and np.array_equal(f, P.rope_frequencies(128, 1e6))


def test_config_falls_back_to_max_position_embeddings_for_the_original_length():
    cfg = {"head_dim": 128, "rope_theta": 1e6, "max_position_embeddings": 32768}
    cfg["rope_scaling"] = {"type": "yarn", "factor": 4.0}
    ref = P.rope_inv_freq(128, 1e6, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    f, a, _ = P.rope_from_config(cfg)
    assert np.array_equal(f, ref[0]) and a == ref[1]


# ---------------------------------------------------------------- base bound


def _b_min(context_len, d, bases):
    # min over 0 ≤ m < L of Σ_i cos(m·b^(−2i/d)), for each base: written here from the paper's formula
    m = np.arange(context_len, dtype=np.float64)
    theta = np.asarray(bases, dtype=np.float64)[:, None] ** (-np.arange(0, d, 2) / d)
    return np.cos(m[None, :, None] * theta[:, None, :]).sum(axis=2).min(axis=1)


def _grid(lo, hi, ratio=1e-3):
    # an independent geometric grid (its own phase: it starts at lo, not at the library's low)
    return np.exp(np.arange(np.log(lo), np.log(hi), np.log1p(ratio)))


BOUND_CASES = [(256, 16), (300, 32), (200, 8)]


@pytest.mark.parametrize("context_len, d", BOUND_CASES)
def test_base_lower_bound_is_the_smallest_passing_base_of_a_brute_force_scan(context_len, d):
    # Men et al.'s definition: no base below the bound passes, the bound itself does
    lower = P.rope_base_lower_bound(context_len, d)
    below = _grid(lower / 2, lower * (1 - 1e-6))
    assert (_b_min(context_len, d, below) < 0).all()
    assert _b_min(context_len, d, [lower])[0] >= 0 > _b_min(context_len, d, [lower * (1 - 1e-8)])[0]


@pytest.mark.parametrize("context_len, d", BOUND_CASES)
def test_base_safe_bound_is_the_largest_failing_base_of_a_brute_force_scan(context_len, d):
    safe = P.rope_base_safe_bound(context_len, d)
    above = _grid(safe * (1 + 1e-6), safe * 3)
    assert (_b_min(context_len, d, above) >= 0).all()
    assert _b_min(context_len, d, [safe])[0] < 0 <= _b_min(context_len, d, [safe * (1 + 1e-8)])[0]


@pytest.mark.parametrize("context_len, d", BOUND_CASES)
def test_the_passing_bases_are_not_an_interval(context_len, d):
    # between the two bounds some bases fail again: why the paper's bound is not a safe threshold
    lower, safe = P.rope_base_lower_bound(context_len, d), P.rope_base_safe_bound(context_len, d)
    assert lower < safe
    inside = _b_min(context_len, d, _grid(lower, safe))
    assert (inside < 0).any() and (inside >= 0).any()


def test_base_lower_bound_grows_with_context():
    bounds = [P.rope_base_lower_bound(n, 16) for n in (64, 128, 256)]
    assert bounds[0] < bounds[1] < bounds[2]


def test_tiny_contexts_pass_at_every_base():
    # B(0) = d/2 and B(1) > 0 for any base > 1: nothing to bound
    assert P.rope_base_lower_bound(2, 64, low=3.0) == 3.0
    assert P.rope_base_safe_bound(2, 64) == 1.0


# ---------------------------------------------------------------- p-RoPE and Llama 4's NoPE temperature


@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.75])
def test_p_rope_keeps_the_highest_frequencies(fraction):
    # Barbero et al. 2024: keep the top fraction of θ_i (the fastest pairs), zero the slowest
    from poslib.viz.production import p_rope_freq

    theta = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    kept = round(fraction * 32)
    expected = np.concatenate([theta[:kept], np.zeros(32 - kept)])
    got = p_rope_freq(64, fraction)
    assert np.array_equal(got == 0, expected == 0) and np.allclose(got, expected, rtol=1e-14, atol=0)


def test_llama4_temperature_steps_one_token_before_each_chunk_ends():
    # transformers' modeling_llama4: 1 + 0.1·ln(floor((p + 1)/8192) + 1); written here from that formula
    from poslib.rope_configs import llama4_attention_temperature

    p = np.arange(3 * 8192)
    tau = llama4_attention_temperature(p)
    assert (tau[:8191] == 1.0).all() and np.flatnonzero(tau > 1)[0] == 8191
    assert tau[8191] == pytest.approx(1 + 0.1 * math.log(2), abs=1e-15)
    assert tau[2 * 8192 - 1] == pytest.approx(1 + 0.1 * math.log(3), abs=1e-15)
    # every step, not only the first: T changes exactly at p = 8192·k − 1 (catches a step every 8191, a cap)
    K = 6
    steps = np.flatnonzero(np.diff(llama4_attention_temperature(np.arange(K * 8192)))) + 1
    assert steps.tolist() == (8192 * np.arange(1, K + 1) - 1).tolist()  # the last, K·8192 − 1, is in range
    with pytest.raises(ValueError, match="positions"):
        llama4_attention_temperature(np.array([-1]))


# ---------------------------------------------------------------- errors


f8 = P.rope_frequencies(8)


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda: P.apply_rope(np.ones((2, 16)), np.arange(2), f8, rotary_dim=7), ValueError, "rotary_dim"),
        (lambda: P.apply_rope(np.ones((2, 16)), np.arange(2), f8, rotary_dim=32), ValueError, "rotary_dim"),
        (lambda: P.apply_rope(np.ones((2, 16)), np.arange(2), f8, rotary_dim=4), ValueError, "rotary_dim/2"),
        (lambda: P.apply_mrope(np.ones((2, 8)), np.zeros((3, 2)), f8, [2, 1, 2]), ValueError, "mrope_section"),
        (lambda: P.apply_mrope(np.ones((2, 8)), np.zeros((3, 2)), f8, [2, 2]), ValueError, "mrope_section"),
        (lambda: P.apply_mrope(np.ones((2, 8)), np.zeros((3, 2)), f8, "448"), TypeError, "mrope_section"),
        (lambda: P.apply_mrope(np.ones((2, 8)), np.zeros((2, 2)), f8, [2, 1, 1]), ValueError, "positions_thw"),
        (lambda: P.apply_mrope(np.ones((2, 8)), np.zeros((3, 5)), f8, [2, 1, 1]), ValueError, "positions_thw"),
        (lambda: P.apply_mrope(np.ones((2, 8)), np.zeros((3, 2)), f8[:3], [1, 1, 1]), ValueError, "inv_freq"),
        (lambda: P.apply_mrope(torch.ones(2, 8), np.zeros((3, 2)), f8, [2, 1, 1]), TypeError, "positions_thw"),
        (lambda: P.apply_mrope(np.ones((2, 8), dtype=int), np.zeros((3, 2)), f8, [2, 1, 1]), TypeError, "floating"),
        (lambda: P.apply_mrope(np.ones((2, 8)), np.zeros((3, 2)), f8, [2, 1, 1], layout="x"), ValueError, "layout"),
        (lambda: P.apply_rope_2d(np.ones((2, 14)), [0, 1], [0, 1], f8), ValueError, "divisible by 4"),
        (lambda: P.apply_rope_2d(np.ones((2, 16)), [0, 1], torch.tensor([0, 1]), f8), TypeError, "cols is torch"),
        (lambda: P.apply_rope_2d(np.ones((2, 16)), [0, 1], [0, 1], f8[:2]), ValueError, "inv_freq"),
        (lambda: P.rope_from_config([1, 2]), TypeError, "config"),
        (lambda: P.rope_from_config({"rope_theta": 1e4}), ValueError, "head_dim"),
        (lambda: P.rope_from_config({"head_dim": 64, "rope_theta": "1e4"}), TypeError, "rope_theta"),
        (lambda: P.rope_from_config({"head_dim": 64, "rope_theta": -1.0}), ValueError, "rope_theta"),
        (
            lambda: P.rope_from_config({"head_dim": 64, "partial_rotary_factor": 1.5}),
            ValueError,
            "partial_rotary_factor",
        ),
        (lambda: P.rope_from_config({"head_dim": 64, "rotary_dim": 65}), ValueError, "rotary_dim"),
        (lambda: P.rope_from_config({"head_dim": 10, "rotary_pct": 0.5}), ValueError, "rotary_dim"),
        (lambda: P.rope_from_config({"head_dim": 64, "rope_scaling": 8}), TypeError, "rope_scaling"),
        (lambda: P.rope_from_config({"head_dim": 64, "rope_scaling": {"type": "su2"}}), ValueError, "rope_type"),
        (
            lambda: P.rope_from_config({"head_dim": 64, "rope_scaling": {"type": "yarn", "factor": 2}}),
            ValueError,
            "original",
        ),
        (lambda: P.rope_base_lower_bound(0, 64), ValueError, "context_len"),
        (lambda: P.rope_base_lower_bound(100, 63), ValueError, "head_dim"),
        (lambda: P.rope_base_lower_bound(10**5, 8, high=100.0), ValueError, "high"),
        (lambda: P.rope_base_lower_bound(100, 64, low=1e9), ValueError, "low"),
        (lambda: P.rope_base_lower_bound(100, 64, low=1.0), ValueError, "low"),
        (lambda: P.rope_base_lower_bound(100, 64, rtol=0.5), ValueError, "rtol"),
        (lambda: P.rope_base_safe_bound(100, 4), ValueError, "head_dim"),
        (lambda: P.rope_base_safe_bound(4096, 64, high=1e3), ValueError, "high"),
        (lambda: P.rope_base_safe_bound(0, 64), ValueError, "context_len"),
        (lambda: P.rope_base_safe_bound(100, 64, rtol=-1.0), ValueError, "rtol"),
    ],
)
def test_bad_input_is_named(call, exc, words):
    with pytest.raises(exc, match=words):
        call()
