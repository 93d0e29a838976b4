"""Generate tests/reference/reference.npz from the published implementations (not run by CI).

Run, from the repository root, in a separate virtual environment (never the project's):

    python3 -m venv /tmp/refenv
    /tmp/refenv/bin/pip install torch==2.13.0 numpy==2.4.6 transformers==5.24.0 \\
        rotary-embedding-torch==0.9.1 x-transformers==2.31.10 einops==0.8.2
    /tmp/refenv/bin/python tests/reference/generate.py [--keep-existing]

The versions actually used are stored in the file (key ``versions``) and checked by
tests/test_reference.py against the list above. Every function gets ≥ 300 seeded random
configurations plus the boundaries named in issue 11. Inputs are either stored or rebuilt by the
test from a stored seed (``np.random.default_rng(seed).standard_normal(shape)``, stable across
NumPy versions), so the file stays small.

Where the reference computes in float32 (Hugging Face's RoPE init functions, Bloom's slopes, T5's
and DeBERTa's bucket logarithms, rotary-embedding-torch's frequencies) the file also holds the same
published code evaluated in float64: its source with the float32 dtypes replaced by float64 (RoPE
init, Bloom), the float64 default dtype (DeBERTa, x-transformers) or the module's float32 buffers
replaced by their float64 formula (rotary-embedding-torch). For the bucket functions it holds the
exact mathematical bucket (rational arithmetic wherever float64 lies within 10⁻⁶ of an integer).
"""

from __future__ import annotations

import importlib.metadata as md
import inspect
import math
import pathlib
import sys
import textwrap
from fractions import Fraction

import numpy as np
import torch
import transformers.modeling_rope_utils as hf_rope
from transformers import LlamaConfig
from transformers.models.bloom import modeling_bloom
from transformers.models.deberta_v2.modeling_deberta_v2 import build_relative_position, make_log_bucket_position
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
from transformers.models.t5.configuration_t5 import T5Config
from transformers.models.t5.modeling_t5 import T5Attention

OUT = pathlib.Path(__file__).with_name("reference.npz")
N = 300  # random configurations per function, boundaries come on top
DIST = 3000  # every integer distance in [−DIST, DIST] for the bucket functions
rng = np.random.default_rng(20261130)


def float64_copy(module, names):
    """The module's functions ``names`` recompiled with every float32 dtype replaced by float64."""
    namespace = dict(vars(module))
    for name in names:
        src = textwrap.dedent(inspect.getsource(getattr(module, name)))
        src = src.replace("dtype=torch.float)", "dtype=torch.float64)").replace("torch.float32", "torch.float64")
        src = src.replace(".float()", ".double()")
        exec(compile(src, f"<float64 {name}>", "exec"), namespace)  # the pinned package's own source
    return namespace


ROPE64 = float64_copy(
    hf_rope,
    [
        "_compute_linear_scaling_rope_parameters",
        "_compute_dynamic_ntk_parameters",
        "_compute_yarn_parameters",
        "_compute_llama3_parameters",
    ],
)
BLOOM64 = float64_copy(modeling_bloom, ["_get_alibi_slopes"])


def hf_config(head_dim, params, max_position):
    return LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_position,
        rope_parameters=params,
    )


def default64(config):
    # LlamaRotaryEmbedding.compute_default_rope_parameters, float64: 1/(base^(arange(0, d, 2)/d))
    base, dim = config.rope_parameters["rope_theta"], config.head_dim
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)), 1.0


def rope_init(out):
    """Hugging Face RoPE init functions; poslib's ``ntk`` is HF's dynamic formula at the length giving factor s."""
    rows = []
    kinds = ["default", "linear", "dynamic", "ntk", "yarn", "llama3"]
    for kind in kinds:
        for n in range(N + 12):
            head_dim = int(rng.integers(1, 65)) * 2
            if n < 4:
                head_dim = 2
            if kind in ("dynamic", "ntk"):
                head_dim = max(head_dim, 4)  # HF divides by d − 2: poslib's d = 2 answer is tested apart
            partial = 1.0
            if kind != "default" and rng.random() < 0.3:
                partial = float(rng.choice([0.25, 0.5, 0.75]))
                if int(head_dim * partial) % 2 or int(head_dim * partial) < 2 + 2 * (kind in ("dynamic", "ntk")):
                    partial = 1.0
            base = float(np.exp(rng.uniform(np.log(100), np.log(1e6))))
            factor = 1.0 if n % 10 == 1 else float(rng.uniform(1, 32))
            original = int(rng.integers(16, 8193))
            seq_len = [original - 1, original, original + 1][n % 3] if n < 30 else int(rng.integers(1, 4 * original))
            params = {"rope_type": kind, "rope_theta": base}
            if partial != 1.0:
                params["partial_rotary_factor"] = partial
            extra = {}
            if kind in ("linear", "dynamic", "ntk", "yarn", "llama3"):
                params["factor"] = factor
            if kind in ("yarn", "llama3"):
                params["original_max_position_embeddings"] = original
            if kind == "yarn":
                for key, draw in (
                    ("beta_fast", lambda: float(rng.uniform(4, 64))),
                    ("beta_slow", lambda: float(rng.uniform(0.5, 2))),
                    ("truncate", lambda: bool(rng.random() < 0.5)),
                    ("mscale", lambda: float(rng.uniform(0.5, 2))),
                    ("mscale_all_dim", lambda: float(rng.uniform(0.5, 2))),
                    ("attention_factor", lambda: float(rng.uniform(0.5, 2))),
                ):
                    if rng.random() < 0.3:
                        extra[key] = draw()
                params.update(extra)
            if kind == "llama3":
                low = float(rng.uniform(0.5, 4))
                params.update(low_freq_factor=low, high_freq_factor=low + float(rng.uniform(0.5, 8)))
            # HF's dynamic reads L from max_position_embeddings; yarn and llama3 expect it above L
            max_position = original if kind in ("dynamic", "ntk") else int(original * factor) + 1
            config = hf_config(head_dim, dict(params, rope_type="dynamic" if kind == "ntk" else kind), max_position)
            if kind == "default":
                f32, _ = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
                f64, att64 = default64(config)
            else:
                fn = (
                    "_compute_"
                    + {
                        "linear": "linear_scaling_rope",
                        "dynamic": "dynamic_ntk",
                        "ntk": "dynamic_ntk",
                        "yarn": "yarn",
                        "llama3": "llama3",
                    }[kind]
                )
                fn += "_parameters"
                # ntk with factor s is dynamic at the length n where s·n/L − (s − 1) = s, n = L(2s − 1)/s
                sl = original * (2 * factor - 1) / factor if kind == "ntk" else seq_len
                f32, _ = getattr(hf_rope, fn)(config, "cpu", seq_len=sl)
                f64, att64 = ROPE64[fn](config, "cpu", seq_len=sl)
            rows.append((kind, head_dim, base, partial, factor, original, seq_len, params, f32, f64, float(att64)))
    out["rope_kind"] = np.array([kinds.index(r[0]) for r in rows], np.int8)
    out["rope_kinds"] = np.array(kinds)
    out["rope_head_dim"] = np.array([r[1] for r in rows], np.int32)
    out["rope_base"] = np.array([r[2] for r in rows])
    out["rope_partial"] = np.array([r[3] for r in rows])
    out["rope_factor"] = np.array([r[4] for r in rows])
    out["rope_original"] = np.array([r[5] for r in rows], np.int32)
    out["rope_seq_len"] = np.array([r[6] for r in rows], np.int32)
    keys = ["beta_fast", "beta_slow", "truncate", "mscale", "mscale_all_dim", "attention_factor"]
    keys += ["low_freq_factor", "high_freq_factor"]
    out["rope_extra_keys"] = np.array(keys)
    out["rope_extra"] = np.array([[float(r[7].get(k, np.nan)) for k in keys] for r in rows])
    out["rope_offsets"] = np.cumsum([0] + [len(r[8]) for r in rows])
    out["rope_inv_freq32"] = np.concatenate([r[8].numpy() for r in rows]).astype(np.float32)
    out["rope_inv_freq64"] = np.concatenate([r[9].numpy() for r in rows])
    out["rope_attention"] = np.array([r[10] for r in rows])


def shapes(n, max_seq=10, max_dim=12):
    """(heads, seq, head_dim, seed, first position) per configuration, boundaries first."""
    rows = []
    for i in range(n):
        heads, seq = int(rng.integers(1, 3)), int(rng.integers(1, max_seq + 1))
        dim = 2 if i < 5 else int(rng.integers(1, max_dim + 1)) * 2
        start = [0, 1, 10**5, 10**6 - 7][i % 4] if i < 20 else int(rng.integers(0, 10**5))
        rows.append((heads, seq, dim, int(rng.integers(0, 2**31)), start))
    return np.array(rows, np.int64)


def normal(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


def llama_rotary(out):
    """Hugging Face's Llama/NeoX apply_rotary_pos_emb (half layout), cos/sin from float64 angles."""
    cfg = shapes(N)
    bases = np.exp(rng.uniform(np.log(100), np.log(1e6), N))
    outs, freqs_used = [], []
    for (heads, seq, dim, seed, start), base in zip(cfg, bases, strict=True):
        q = torch.tensor(normal(seed, (1, heads, seq, dim)))
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
        freqs_used.append(inv_freq.numpy())
        freqs = torch.arange(start, start + seq, dtype=torch.float64)[:, None] * inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)[None]
        rq, _ = apply_rotary_pos_emb(q, q, emb.cos(), emb.sin())
        outs.append(rq.numpy().ravel())
    out["llama_cfg"], out["llama_base"] = cfg, bases
    # the frequencies themselves are compared in rope_init; stored so that the rotation is compared
    # alone (at position 10⁶ one ulp of θ is 10⁻¹⁰ rad)
    out["llama_inv_freq"] = np.concatenate(freqs_used)
    out["llama_out"] = np.concatenate(outs)


def rotary_torch(out):
    """rotary-embedding-torch: interleaved RoPE (rotate_queries_or_keys) and XPOS (rotate_queries_and_keys)."""
    from rotary_embedding_torch import RotaryEmbedding

    for name, xpos in (("rotary", False), ("xpos", True)):
        cfg = shapes(N, max_seq=6 if xpos else 10, max_dim=8 if xpos else 12)
        bases = np.exp(rng.uniform(np.log(100), np.log(1e6), N))
        scale_base = rng.uniform(16, 1024, N)
        outs, freqs_used = [], []
        for (heads, seq, dim, seed, start), base, sb in zip(cfg, bases, scale_base, strict=True):
            rot = RotaryEmbedding(
                dim, theta=float(base), use_xpos=xpos, xpos_scale_base=float(sb), cache_if_possible=False
            )
            # its float32 buffers, replaced by the same formulas in float64
            rot.freqs.data = 1.0 / (float(base) ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
            freqs_used.append(rot.freqs.data.numpy().copy())
            q = torch.tensor(normal(seed, (1, heads, seq, dim)))
            if xpos:
                rot.scale = (torch.arange(0, dim, 2, dtype=torch.float64) + 0.4 * dim) / (1.4 * dim)
                k = torch.tensor(normal(seed + 1, (1, heads, seq, dim)))
                rq, rk = rot.rotate_queries_and_keys(q, k)
                outs += [rq.numpy().ravel(), rk.numpy().ravel()]
            else:
                outs.append(rot.rotate_queries_or_keys(q, offset=int(start)).numpy().ravel())
        out[f"{name}_cfg"], out[f"{name}_base"] = cfg, bases
        out[f"{name}_inv_freq"] = np.concatenate(freqs_used)
        if xpos:
            out["xpos_scale_base"] = scale_base
        out[f"{name}_out"] = np.concatenate(outs)


def alibi(out):
    """Bloom's build_alibi_tensor (float32 slopes, and float64) and x-transformers' AlibiPositionalBias."""
    from x_transformers.x_transformers import AlibiPositionalBias

    heads = np.concatenate([np.arange(1, 41), rng.integers(41, 1025, N - 40)])
    seqs = rng.integers(1, 9, N)
    slopes32, slopes64, bloom = [], [], []
    for h, s in zip(heads, seqs, strict=True):
        mask = torch.ones(1, int(s), dtype=torch.long)
        slopes32.append(modeling_bloom._get_alibi_slopes(int(h), "cpu").numpy())
        slopes64.append(BLOOM64["_get_alibi_slopes"](int(h), "cpu").numpy())
        if h <= 40:  # the whole tensor for the small ones; the slopes carry the rest
            alibi64 = slopes64[-1][:, None] * ((mask.cumsum(-1) - 1) * mask)[0].double().numpy()[None]
            full = modeling_bloom.build_alibi_tensor(mask, int(h), torch.float64).numpy()
            assert np.allclose(full[:, 0], alibi64, rtol=1e-6)  # the float32 slopes, up to float32 rounding
            bloom.append(alibi64.ravel())
    out["bloom_heads"], out["bloom_seq"] = heads, seqs
    out["bloom_slopes32"] = np.concatenate(slopes32).astype(np.float32)
    out["bloom_slopes64"] = np.concatenate(slopes64)
    out["bloom_alibi64"] = np.concatenate(bloom)
    torch.set_default_dtype(torch.float64)  # x-transformers builds its slopes with the default dtype
    try:
        xh = np.concatenate([np.arange(1, 41), rng.integers(41, 97, N - 40)])
        xi = rng.integers(1, 7, N)
        xj = xi + rng.integers(0, 5, N)
        biases = []
        for h, i, j in zip(xh, xi, xj, strict=True):
            biases.append(AlibiPositionalBias(int(h)).forward(int(i), int(j)).numpy().ravel())
        out["xalibi_cfg"] = np.stack([xh, xi, xj], 1)
        out["xalibi_out"] = np.concatenate(biases)
    finally:
        torch.set_default_dtype(torch.float32)


def exact_floor_or_ceil(v64, a, small, large, steps, rounding):
    """v64 rounded as ``rounding``, re-decided exactly where float64 is within 1e-6 of an integer."""
    out = np.floor(v64) if rounding == "floor" else np.ceil(v64)
    k = np.round(v64)
    for idx in np.flatnonzero(np.abs(v64 - k) < 1e-6):
        kk, aa = int(k[idx]), int(a[idx])
        lhs, rhs = Fraction(aa, small) ** steps, Fraction(large, small) ** kk  # v ≥ k ⇔ lhs ≥ rhs
        if rounding == "floor":
            out[idx] = kk if lhs >= rhs else kk - 1
        else:
            out[idx] = kk if lhs <= rhs else kk + 1
    return out


def sparse_diff(ref, exact):
    """(config, distance index, reference value) wherever the reference differs from the exact bucket."""
    rows, cols = np.nonzero(ref != exact)
    return np.stack([rows, cols, ref[rows, cols]], 1).astype(np.int32)


def buckets(out):
    """T5: _relative_position_bucket, compute_bias. DeBERTa-v2: make_log_bucket_position, build_relative_position."""
    r = np.arange(-DIST, DIST + 1)
    t5_cfg, t5_ref, t5_exact = [], [], []
    for n in range(N + 4):
        bidirectional = bool(n % 2)
        nb = int(rng.integers(2 if not bidirectional else 4, 129)) if n >= 4 else [32, 32, 8, 8][n]
        half = nb // 2 if bidirectional else nb
        me = half // 2
        md = int(rng.integers(me + 1, 2 * DIST // 3)) if n >= 4 else [128, 128, 16, 16][n]
        ref = T5Attention._relative_position_bucket(torch.tensor(r), bidirectional, nb, md).numpy()
        d = np.abs(r) if bidirectional else np.maximum(-r, 0)
        v = np.log(np.maximum(d, 1) / me) / math.log(md / me) * (half - me)
        large = np.minimum(me + exact_floor_or_ceil(v, np.maximum(d, 1), me, md, half - me, "floor"), half - 1)
        exact = np.where(d < me, d, large) + (half * (r > 0) if bidirectional else 0)
        t5_cfg.append((nb, md, bidirectional))
        t5_ref.append(ref)
        t5_exact.append(exact)
    out["t5_cfg"] = np.array(t5_cfg, np.int32)
    exact = np.array(t5_exact, np.int16)
    out["t5_exact_steps"] = np.diff(exact, axis=1, prepend=0)  # runs of 0s and 1s: compresses ~20×
    out["t5_ref_diff"] = sparse_diff(np.array(t5_ref), exact)
    bias_cfg, bias_out = [], []
    for n in range(N):
        nb, bidirectional = int(rng.integers(4, 65)), bool(n % 2)
        md = int(rng.integers((nb // (2 if bidirectional else 1)) // 2 + 1, 200))
        q, k = int(rng.integers(1, 17)), int(rng.integers(1, 17))
        attn = T5Attention(
            T5Config(
                relative_attention_num_buckets=nb,
                relative_attention_max_distance=md,
                is_decoder=not bidirectional,
                num_heads=1,
                d_model=8,
                d_kv=8,
            ),
            has_relative_attention_bias=True,
        )
        attn.relative_attention_bias.weight.data = torch.arange(nb, dtype=torch.float32)[:, None]  # bias = bucket
        bias_cfg.append((nb, md, bidirectional, q, k))
        bias_out.append(attn.compute_bias(q, k).detach().numpy().ravel())
    out["t5bias_cfg"] = np.array(bias_cfg, np.int32)
    out["t5bias_out"] = np.concatenate(bias_out).astype(np.int16)

    deb_cfg, deb_ref, deb_ref64, deb_exact = [], [], [], []
    for n in range(N + 3):
        bs = int(rng.integers(2, 600)) if n >= 3 else [306, 256, 4][n]
        mid = bs // 2
        mp = int(rng.integers(mid + 2, 2 * DIST // 3 + mid)) if n >= 3 else [512, 512, 4][n]
        rel = torch.tensor(r)
        deb_ref.append(make_log_bucket_position(rel, bs, mp).numpy())
        torch.set_default_dtype(torch.float64)
        try:
            deb_ref64.append(make_log_bucket_position(rel, bs, mp).numpy())
        finally:
            torch.set_default_dtype(torch.float32)
        a = np.where((r < mid) & (r > -mid), mid, np.abs(r))
        v = np.log(a / mid) / math.log((mp - 1) / mid) * (mid - 1)
        log_pos = exact_floor_or_ceil(v, a, mid, mp - 1, mid - 1, "ceil") + mid
        deb_exact.append(np.where(a <= mid, r, log_pos * np.sign(r)))
        deb_cfg.append((bs, mp))
    out["deberta_cfg"] = np.array(deb_cfg, np.int32)
    exact = np.array(deb_exact, np.int16)
    out["deberta_exact_steps"] = np.diff(exact, axis=1, prepend=0)
    out["deberta_ref_diff"] = sparse_diff(np.array(deb_ref), exact)
    out["deberta_ref64_diff"] = sparse_diff(np.array(deb_ref64), exact)
    rp_cfg, rp_out = [], []
    for _ in range(N):
        q, k = int(rng.integers(1, 41)), int(rng.integers(1, 41))
        bs = int(rng.integers(2, 40)) if rng.random() < 0.8 else -1
        mp = int(rng.integers(bs // 2 + 2, 60)) if bs > 0 else -1
        rp = build_relative_position(torch.zeros(q, 1), torch.zeros(k, 1), bs, mp)[0].numpy()
        rp_cfg.append((q, k, bs, mp))
        rp_out.append(rp.ravel())
    out["debrel_cfg"] = np.array(rp_cfg, np.int32)
    out["debrel_out"] = np.concatenate(rp_out).astype(np.int16)


# ---------------------------------------------------------------- 2025's RoPE variants and sinks (issue 27)
# Their own generator, so the arrays above stay exactly as they were.
rng27 = np.random.default_rng(20261201)
LONGROPE64 = float64_copy(hf_rope, ["_compute_longrope_parameters"])


def longrope(out):
    """Hugging Face's _compute_longrope_parameters on Phi-3-style configs: seq_len below, at and above L."""
    from transformers import Phi3Config

    rows = []
    for n in range(N):
        head_dim = int(rng27.integers(2, 33)) * 2
        partial = 1.0
        if rng27.random() < 0.3 and (head_dim // 2) % 2 == 0:
            partial = 0.5
        rotary = int(head_dim * partial)
        original = int(rng27.integers(64, 8193))
        max_position = original * int(rng27.integers(1, 33))
        base = float(np.exp(rng27.uniform(np.log(100), np.log(1e6))))
        short = [float(v) for v in np.exp(rng27.uniform(0, np.log(4), rotary // 2))]
        long = [float(v) for v in np.exp(rng27.uniform(0, np.log(64), rotary // 2))]
        params = {"rope_type": "longrope", "rope_theta": base, "short_factor": short, "long_factor": long}
        if partial != 1.0:
            params["partial_rotary_factor"] = partial
        if n % 4 == 1:
            params["factor"] = float(rng27.uniform(1, 32))  # given: wins over the ratio of the two lengths
        if n % 4 == 2:
            params["attention_factor"] = float(rng27.uniform(0.5, 2))
        seq_len = (
            [None, original - 1, original, original + 1][n % 4] if n < 40 else int(rng27.integers(1, 2 * max_position))
        )
        config = Phi3Config(
            hidden_size=head_dim * 2,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=max_position,
            original_max_position_embeddings=original,
            rope_parameters=dict(params),
            partial_rotary_factor=partial,
        )
        f32, att32 = hf_rope._compute_longrope_parameters(config, "cpu", seq_len=seq_len)
        f64, att64 = LONGROPE64["_compute_longrope_parameters"](config, "cpu", seq_len=seq_len)
        assert att32 == att64
        rows.append(
            (
                head_dim,
                base,
                partial,
                original,
                max_position,
                -1 if seq_len is None else seq_len,
                params.get("factor", np.nan),
                params.get("attention_factor", np.nan),
                short,
                long,
                f32,
                f64,
                att64,
            )
        )
    out["longrope_cfg"] = np.array([r[:6] for r in rows])
    out["longrope_given"] = np.array([r[6:8] for r in rows])
    out["longrope_offsets"] = np.cumsum([0] + [len(r[8]) for r in rows])
    out["longrope_short"] = np.concatenate([r[8] for r in rows])
    out["longrope_long"] = np.concatenate([r[9] for r in rows])
    out["longrope_inv_freq32"] = np.concatenate([r[10].numpy() for r in rows]).astype(np.float32)
    out["longrope_inv_freq64"] = np.concatenate([r[11].numpy() for r in rows])
    out["longrope_attention"] = np.array([r[12] for r in rows])


def qwen3_vl(out):
    """Qwen3-VL's text rotary embedding (interleaved M-RoPE) and apply_rotary_pos_emb, float32 as HF runs it."""
    from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding
    from transformers.models.qwen3_vl.modeling_qwen3_vl import apply_rotary_pos_emb as qwen3_apply

    rows, outs = [], []
    for n in range(N):
        half = int(rng27.integers(3, 33))
        n_h = int(rng27.integers(0, half // 3 + 1))
        n_w = int(rng27.integers(0, half // 3 + 1))
        if n == 0:
            half, n_h, n_w = 64, 20, 20  # Qwen3-VL's own [24, 20, 20]
        section = [half - n_h - n_w, n_h, n_w]
        base = float(np.exp(rng27.uniform(np.log(100), np.log(5e6))))
        seq, seed = int(rng27.integers(1, 9)), int(rng27.integers(0, 2**31))
        config = Qwen3VLTextConfig(
            hidden_size=4 * half,
            num_attention_heads=2,
            num_key_value_heads=2,
            head_dim=2 * half,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": base,
                "mrope_section": section,
                "mrope_interleaved": True,
            },
        )
        rotary = Qwen3VLTextRotaryEmbedding(config)
        positions = np.random.default_rng(seed).integers(0, 4096, (3, 1, seq))
        q = torch.tensor(normal(seed, (1, 2, seq, 2 * half)), dtype=torch.float32)
        cos, sin = rotary(q, torch.tensor(positions))
        rq, _ = qwen3_apply(q, q, cos, sin)
        rows.append((half, *section, seq, seed, base))
        outs.append(rq.numpy().ravel())
    out["qwen3vl_cfg"] = np.array(rows)
    out["qwen3vl_out32"] = np.concatenate(outs).astype(np.float32)


def gpt_oss_sinks(out):
    """gpt-oss's eager_attention_forward with learned sinks, float64, causal mask as an additive −inf."""
    from transformers.models.gpt_oss.modeling_gpt_oss import eager_attention_forward

    rows, weights, outputs = [], [], []
    for _ in range(N):
        heads, q_len, dim = int(rng27.integers(1, 5)), int(rng27.integers(1, 9)), int(rng27.integers(1, 9))
        k_len = q_len + int(rng27.integers(0, 4))
        seed = int(rng27.integers(0, 2**31))
        g = np.random.default_rng(seed)
        q, k, v = (torch.tensor(g.standard_normal((1, heads, ln, dim))) for ln in (q_len, k_len, k_len))
        sinks = torch.tensor(g.standard_normal(heads) * 3)
        module = torch.nn.Module()
        module.sinks, module.num_key_value_groups, module.training = sinks, 1, False
        # queries are the last q_len of k_len positions (a KV cache), as in poslib's convention
        future = torch.arange(k_len)[None, :] > (k_len - q_len + torch.arange(q_len))[:, None]
        mask = torch.zeros(q_len, k_len, dtype=torch.float64).masked_fill(future, -math.inf)[None, None]
        scaling = 1.0 / math.sqrt(dim)
        o, w = eager_attention_forward(module, q, k, v, mask, scaling)
        rows.append((heads, q_len, k_len, dim, seed))
        weights.append(w.numpy().ravel())
        outputs.append(o.transpose(1, 2).numpy().ravel())  # back to (1, heads, q_len, dim)
    out["sinks_cfg"] = np.array(rows, np.int64)
    out["sinks_weights"] = np.concatenate(weights)
    out["sinks_out"] = np.concatenate(outputs)


def main():
    out = {}
    rope_init(out)
    llama_rotary(out)
    rotary_torch(out)
    alibi(out)
    buckets(out)
    longrope(out)
    qwen3_vl(out)
    gpt_oss_sinks(out)
    packages = ["torch", "numpy", "transformers", "rotary-embedding-torch", "x-transformers", "einops"]
    out["versions"] = np.array([f"{p}=={md.version(p)}" for p in packages])
    if "--keep-existing" in sys.argv[1:] and OUT.exists():
        # libm's exp/log differ by an ulp between CPUs, so a regeneration elsewhere moves stored floats at the
        # 1e-16 level; --keep-existing adds only the arrays the file lacks (issue 27's were added this way).
        stored = dict(np.load(OUT))
        if stored["versions"].tolist() != out["versions"].tolist():
            raise SystemExit(f"--keep-existing needs the stored versions {stored['versions'].tolist()}")
        out = {**out, **stored}
    np.savez_compressed(OUT, **out)
    print(f"{OUT}: {OUT.stat().st_size / 1e6:.2f} MB;", ", ".join(out["versions"]))


if __name__ == "__main__":
    main()
