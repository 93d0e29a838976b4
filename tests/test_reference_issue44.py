"""poslib against stored outputs of issue 44's reference code (tests/reference/issue44.npz).

Written by tests/reference/generate_issue44.py, which ran, in float64 (the published source recompiled with
its float32 casts replaced, as tests/reference/generate.py does): transformers 5.25.0's Gemma 4 rotary embedding
(``proportional`` full-attention layers, ``default`` sliding ones) and ``apply_rotary_pos_emb``; the
rotated-dims partial rotary of Qwen3-Next, GLM-4.5 (``glm4_moe``) and MiniMax-M2; ``DeepseekV4Attention.forward``
itself (sinks, trailing-slice interleaved RoPE, output turned back); LieRE's ``LierePositionEncoder`` and
``FlexibleAttention.apply_transforms`` (StanfordMIMI/LieRE) and ComRoPE's ``LieREAttention``,
``ComRoPEAPAttention`` and ``ComRoPELDAttention`` (Longin-Yu/ComRoPE), at the commits in ``VERSIONS``. Inputs are
rebuilt from stored seeds. Frequencies are compared to 1e-14 relative; rotations, attention outputs and weights
are computed from the reference's own frequencies and compared to 1e-12 relative (1e-12 absolute for entries
near zero). CI installs none of these packages.
"""

import json
import pathlib

import numpy as np
import pytest
import torch

import poslib as P

with np.load(pathlib.Path(__file__).parent / "reference" / "issue44.npz") as _npz:
    REF = dict(_npz)
VERSIONS = [
    "torch==2.13.0+cpu",
    "numpy==2.4.6",
    "transformers==5.25.0",
    "einops==0.8.2",
    "StanfordMIMI/LieRE@b27b41ba0d27331ec0774de852939c6d407889aa",
    "Longin-Yu/ComRoPE@7aeef083f8af53479d0e86af562029bd89af6422",
]


def close(got, want, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol)


def seeded(seed, shape):
    return np.random.default_rng(int(seed)).standard_normal(shape)


def chunks(flat, sizes):
    return np.split(flat, np.cumsum(sizes)[:-1])


def block_diag(blocks):
    n, b, _ = blocks.shape
    out = np.zeros((n * b, n * b))
    for i in range(n):
        out[i * b : (i + 1) * b, i * b : (i + 1) * b] = blocks[i]
    return out


def test_generated_with_the_documented_versions():
    assert REF["versions"].tolist() == VERSIONS
    assert (pathlib.Path(__file__).parent / "reference" / "issue44.npz").stat().st_size < 5e5


# ------------------------------------------------------------------ item 1: partial rotary, two conventions


def test_gemma4_full_and_sliding_layers_match_transformers():
    cfg = REF["gemma4_cfg"]
    full = chunks(REF["gemma4_inv_full"], cfg[:, 1] // 2)
    sliding = chunks(REF["gemma4_inv_sliding"], cfg[:, 0] // 2)
    rotated = chunks(REF["gemma4_rotated"], cfg[:, 1] * cfg[:, 2])
    for i, (head_dim, global_dim, seq, start, seed) in enumerate(cfg):
        forms = json.loads(str(REF["gemma4_config_json"][i]))
        for form in ("to_dict", "config_json"):  # transformers 5.25's serialisation, and the released config.json
            inv, factor, rotary_dim = P.rope_from_config(forms[form], layer_type="full_attention")
            assert (rotary_dim, factor, len(inv)) == (global_dim, 1.0, global_dim // 2), form
            close(inv, full[i], rtol=1e-14, atol=0)
            inv_s, _, rotary_s = P.rope_from_config(forms[form], layer_type="sliding_attention")
            assert rotary_s == head_dim
            close(inv_s, sliding[i], rtol=1e-14, atol=0)
        x = seeded(seed, (1, 1, seq, global_dim))
        got = P.apply_rope(x, np.arange(start, start + seq), full[i], layout="half", rotary_dim=int(global_dim))
        close(got.ravel(), rotated[i])


@pytest.mark.parametrize("model", ["qwen3_next", "glm4_moe", "minimax_m2"])
def test_rotated_dims_partial_rotary_matches_transformers(model):
    cfg = REF[f"{model}_cfg"]
    inv = chunks(REF[f"{model}_inv_freq"], cfg[:, 1] // 2)
    sizes = cfg[:, 0] * cfg[:, 2]
    q_rot, k_rot = chunks(REF[f"{model}_q_rot"], sizes), chunks(REF[f"{model}_k_rot"], sizes)
    for i, (head_dim, rotary_dim, seq, start, seed) in enumerate(cfg):
        got_inv, factor, got_dim = P.rope_from_config(json.loads(str(REF[f"{model}_config_json"][i])))
        assert (got_dim, factor) == (rotary_dim, 1.0)
        close(got_inv, inv[i], rtol=1e-14, atol=0)
        q, k = seeded(seed, (2, 1, 1, seq, head_dim))
        pos = np.arange(start, start + seq)
        for x, want in ((q, q_rot[i]), (k, k_rot[i])):
            close(P.apply_rope(x, pos, inv[i], layout="half", rotary_dim=int(rotary_dim)).ravel(), want)


# ------------------------------------------------------------------ item 2: DeepSeek-V4's rotated values


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_vo_rope_attention_matches_deepseek_v4_attention(backend):
    cfg = REF["dsv4_cfg"]
    inv = chunks(REF["dsv4_inv_freq"], cfg[:, 4] // 2)
    sinks = chunks(REF["dsv4_sinks"], cfg[:, 1])
    outs = chunks(REF["dsv4_out"], cfg[:, 0] * cfg[:, 1] * cfg[:, 2] * cfg[:, 3])
    weights = chunks(REF["dsv4_weights"], cfg[:, 0] * cfg[:, 1] * cfg[:, 2] ** 2)
    for i, (batch, heads, seq, head_dim, rope_dim, no_sink, seed) in enumerate(cfg):
        if rope_dim >= 4:  # DeepSeek's frequencies are the rotated-dims ones: base^(−2i/rope_dim)
            base = inv[i][1] ** (-rope_dim / 2)
            close(inv[i], P.rope_frequencies(int(rope_dim), base), rtol=1e-13, atol=0)
        qkv = seeded(seed, (batch, heads + 1, seq, head_dim))
        q, kv, freq, sink = qkv[:, :heads], qkv[:, heads:], inv[i], (None if no_sink else sinks[i])
        if backend == "torch":
            q, kv, freq = torch.from_numpy(q), torch.from_numpy(kv), torch.from_numpy(freq)
            sink = None if sink is None else torch.from_numpy(sink)
        out, w = P.vo_rope_attention(q, kv, freq, rope_dim=int(rope_dim), sinks=sink)
        close(np.asarray(out).ravel(), outs[i])
        close(np.asarray(w).ravel(), weights[i])


# ------------------------------------------------------------------ item 4: rotations from generators


def test_liere_rotations_and_transforms_match():
    cfg = REF["liere_cfg"]
    bases = chunks(REF["liere_bases"], cfg[:, 0] * 64 * cfg[:, 1])
    positions = chunks(REF["liere_positions"], cfg[:, 2] * cfg[:, 0])
    rotations = chunks(REF["liere_rotations"], cfg[:, 2] * 64 * cfg[:, 1])
    ys = chunks(REF["liere_y"], cfg[:, 2] * 64)
    for i, (axes, g, tokens, seed) in enumerate(cfg):
        blocks = bases[i].reshape(axes, 64 // g, g, g)
        generators = np.stack([block_diag(b) for b in blocks])  # (axes, 64, 64), one block per generator_dim
        pos = positions[i].reshape(tokens, axes)
        want = rotations[i].reshape(tokens, 64 // g, g, g)
        got = P.generator_rotation(generators, pos)
        for t in range(tokens):
            close(got[t], block_diag(want[t]))
        x = seeded(seed, (1, 1, tokens, 64))
        close(P.lie_rope(x[0, 0], pos, generators).ravel(), ys[i])
        # 2×2 skew blocks always commute (so(2) is abelian: LieRE is then RoPE with learned frequencies);
        # larger blocks learned freely do not
        assert (P.commutator_norm(generators) > 1e-3) == (g > 2)


def test_comrope_rotations_match_and_only_comrope_commutes():
    cfg = REF["comrope_cfg"]
    expo = chunks(REF["comrope_exponent"], 2 * cfg[:, 1] * cfg[:, 3] * cfg[:, 2])
    positions = chunks(REF["comrope_positions"], cfg[:, 4] * cfg[:, 1])
    rotations = chunks(REF["comrope_rotations"], cfg[:, 4] * 2 * cfg[:, 3] ** 2)
    rng = np.random.default_rng(0)
    for i, (kind, axes, block, head_dim, tokens) in enumerate(cfg):
        a = expo[i].reshape(2, axes, head_dim // block, block, block)
        pos = positions[i].reshape(tokens, axes)
        want = rotations[i].reshape(tokens, 2, head_dim, head_dim)
        for h in range(2):
            generators = np.stack([block_diag(a[h, k]) for k in range(axes)])
            close(P.generator_rotation(generators, pos), want[:, h])
            q, k = rng.standard_normal((2, head_dim))
            drift = P.relative_drift(q, k, generators, pos[0], pos[1], rng.uniform(-5, 5, (8, axes)))
            if kind == 0 and block > 2:  # ComRoPE's LieRE baseline: free generators (2×2 blocks always commute)
                assert P.commutator_norm(generators) > 1e-3 and drift > 1e-6, drift
            else:  # ComRoPE-AP (disjoint blocks per axis) and -LD (one block, scaled per axis) commute
                assert P.commutator_norm(generators) < 1e-12 and drift < 1e-12, drift
