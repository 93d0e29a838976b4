"""poslib against stored outputs of the published implementations (tests/reference/reference.npz).

The file is written by tests/reference/generate.py (Hugging Face transformers, rotary-embedding-torch,
x-transformers; versions below); CI needs none of them. Floats are compared with the references'
formulas evaluated in float64 to 1e-12 relative, integers exactly. Convention differences are
bridged here, each documented in the poslib docstring named next to it.
"""

import pathlib

import numpy as np
import pytest
import torch

import poslib as P

# read every array once: NpzFile decompresses the array again on each item access
with np.load(pathlib.Path(__file__).parent / "reference" / "reference.npz") as _npz:
    REF = dict(_npz)
VERSIONS = [
    "torch==2.13.0+cpu",
    "numpy==2.4.6",
    "transformers==5.24.0",
    "rotary-embedding-torch==0.9.1",
    "x-transformers==2.31.10",
    "einops==0.8.2",
]
RTOL = 1e-12


def close(got, want, rtol=RTOL, atol=0.0):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # Hundreds of small tensor ops: on a busy 2-core machine torch's thread pool spends ~30× the
    # work waiting for its second thread, so these run single-threaded (restored afterwards).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def normal(seed, shape):
    return np.random.default_rng(int(seed)).standard_normal(shape)


def split_freqs(name):
    """The float64 inv_freq each configuration used (the same formula as rope_frequencies, to the ulp)."""
    dims = REF[f"{name}_cfg"][:, 2] // 2
    freqs = np.split(REF[f"{name}_inv_freq"], np.cumsum(dims)[:-1])
    for f, (*_, dim, _seed, _start), base in zip(freqs, REF[f"{name}_cfg"], REF[f"{name}_base"], strict=True):
        close(f, P.rope_frequencies(int(dim), base), rtol=1e-14)
    return freqs


def test_generated_with_the_documented_versions():
    assert REF["versions"].tolist() == VERSIONS
    assert (pathlib.Path(__file__).parent / "reference" / "reference.npz").stat().st_size < 3e6


# ---- RoPE ------------------------------------------------------------------------------------------------------------


def _scaling(i):
    kind = str(REF["rope_kinds"][REF["rope_kind"][i]])
    cfg = {"rope_type": kind, "rope_theta": float(REF["rope_base"][i])}
    if REF["rope_partial"][i] != 1.0:
        cfg["partial_rotary_factor"] = float(REF["rope_partial"][i])
    if kind != "default":
        cfg["factor"] = float(REF["rope_factor"][i])
    if kind in ("dynamic", "yarn", "llama3"):
        cfg["original_max_position_embeddings"] = int(REF["rope_original"][i])
    for key, value in zip(REF["rope_extra_keys"].tolist(), REF["rope_extra"][i].tolist(), strict=True):
        if not np.isnan(value):
            cfg[key] = bool(value) if key == "truncate" else value
    return kind, cfg


def test_rope_inv_freq_matches_hugging_face_for_every_rope_type():
    offsets, seen = REF["rope_offsets"], set()
    for i in range(len(REF["rope_kind"])):
        kind, cfg = _scaling(i)
        seen.add(kind)
        seq_len = int(REF["rope_seq_len"][i]) if kind == "dynamic" else None
        inv_freq, attention = P.rope_inv_freq(int(REF["rope_head_dim"][i]), cfg["rope_theta"], cfg, seq_len=seq_len)
        want = REF["rope_inv_freq64"][offsets[i] : offsets[i + 1]]
        close(inv_freq, want)
        close(attention, REF["rope_attention"][i])
        # the float64 evaluation is the published float32 code's formula: they agree to float32 accuracy
        close(want, REF["rope_inv_freq32"][offsets[i] : offsets[i + 1]], rtol=2e-5)
    assert seen == {"default", "linear", "dynamic", "ntk", "yarn", "llama3"}
    assert (REF["rope_head_dim"] == 2).sum() >= 16 and (REF["rope_factor"] == 1.0).sum() >= 100
    assert (REF["rope_partial"] != 1.0).sum() >= 100


def check_rope_reference(name, layout, backend):
    """apply_rope on every stored case of reference ``name`` equals the reference library's outputs."""
    outs, at, freqs = REF[f"{name}_out"], 0, split_freqs(name)
    for (heads, seq, dim, seed, start), f in zip(REF[f"{name}_cfg"], freqs, strict=True):
        q, pos = normal(seed, (1, heads, seq, dim)), np.arange(start, start + seq)
        if backend == "torch":
            q, pos, f = torch.tensor(q), torch.tensor(pos), torch.tensor(f)
        got = np.asarray(P.apply_rope(q, pos, f, layout=layout)).ravel()
        close(got, outs[at : at + got.size], atol=1e-12)
        at += got.size
    assert at == outs.size


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_apply_rope_half_matches_hugging_face_apply_rotary_pos_emb(backend):
    check_rope_reference("llama", "half", backend)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_apply_rope_interleaved_matches_rotary_embedding_torch(backend):
    check_rope_reference("rotary", "interleaved", backend)


def test_apply_xpos_matches_rotary_embedding_torch_with_its_centre():
    # rotary-embedding-torch scales by ζ^((n − seq_len // 2)/scale_base): poslib's centre = seq_len // 2
    outs, at = REF["xpos_out"], 0
    rows = zip(REF["xpos_cfg"], split_freqs("xpos"), REF["xpos_scale_base"], strict=True)
    for (heads, seq, dim, seed, _start), f, sb in rows:
        pos = np.arange(seq)
        for is_key, x in ((False, normal(seed, (1, heads, seq, dim))), (True, normal(seed + 1, (1, heads, seq, dim)))):
            got = P.apply_xpos(x, pos, f, scale_base=sb, is_key=is_key, centre=seq // 2).ravel()
            close(got, outs[at : at + got.size], atol=1e-12)
            at += got.size
    assert at == outs.size


# ---- ALiBi -----------------------------------------------------------------------------------------------------------


def test_alibi_matches_bloom():
    # Bloom adds m_h·j (key position) where the paper adds −m_h·(i − j): they differ by the per-row
    # constant −m_h·i, which softmax ignores. So poslib's causal bias + m_h·i must equal Bloom's row.
    slopes64, slopes32, alibi64 = REF["bloom_slopes64"], REF["bloom_slopes32"], REF["bloom_alibi64"]
    s_at = a_at = 0
    for h, seq in zip(REF["bloom_heads"].tolist(), REF["bloom_seq"].tolist(), strict=True):
        want = slopes64[s_at : s_at + h]
        close(P.alibi_slopes(h), want)
        close(want, slopes32[s_at : s_at + h], rtol=1e-4)  # Bloom: a float32 base raised to powers up to 1024
        s_at += h
        if h <= 40:
            row = alibi64[a_at : a_at + h * seq].reshape(h, seq)
            a_at += h * seq
            bias = P.alibi_bias(h, seq, seq, causal=False) + want[:, None, None] * np.arange(seq)[None, :, None]
            lower = np.tril(np.ones((seq, seq), bool))
            close(np.where(lower, bias, 0), np.where(lower, row[:, None, :], 0), atol=1e-12)
    assert s_at == slopes64.size and a_at == alibi64.size


def test_alibi_matches_x_transformers():
    outs, at = REF["xalibi_out"], 0
    for h, i, j in REF["xalibi_cfg"].tolist():
        got = P.alibi_bias(h, i, j, causal=False).ravel()
        close(got, outs[at : at + got.size], atol=0)
        at += got.size
    assert at == outs.size


# ---- buckets ---------------------------------------------------------------------------------------------------------

R = np.arange(-3000, 3001)


def _with_diffs(exact, diff):
    ref = exact.copy()
    ref[diff[:, 0], diff[:, 1]] = diff[:, 2]
    return ref


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_t5_buckets_at_every_distance_match_the_exact_and_the_reference(backend):
    exact = np.cumsum(REF["t5_exact_steps"], axis=1)
    ref = _with_diffs(exact, REF["t5_ref_diff"])
    rel = torch.tensor(R) if backend == "torch" else R
    for (nb, md, bidirectional), want in zip(REF["t5_cfg"].tolist(), exact, strict=True):
        got = P.t5_relative_bucket(rel, bidirectional=bool(bidirectional), num_buckets=nb, max_distance=md)
        np.testing.assert_array_equal(np.asarray(got), want)
    # Hugging Face's float32 logarithms agree with the exact buckets on every stored distance
    np.testing.assert_array_equal(ref, exact)


def test_t5_bias_matches_compute_bias():
    outs, at = REF["t5bias_out"], 0
    for nb, md, bidirectional, q, k in REF["t5bias_cfg"].tolist():
        table = np.arange(nb, dtype=np.float64)[:, None]  # bias = bucket index
        # compute_bias(q, k) puts the queries at 0 … q − 1: the first q rows and k columns of the square of max(q, k)
        n = max(q, k)
        got = P.t5_bias(table, n, n, bidirectional=bool(bidirectional), max_distance=md)[:, :q, :k].ravel()
        np.testing.assert_array_equal(got, outs[at : at + got.size])
        at += got.size
    assert at == outs.size


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_deberta_log_buckets_at_every_distance_are_exact(backend):
    exact = np.cumsum(REF["deberta_exact_steps"], axis=1)
    rel = torch.tensor(R) if backend == "torch" else R
    for (bs, mp), want in zip(REF["deberta_cfg"].tolist(), exact, strict=True):
        np.testing.assert_array_equal(np.asarray(P.deberta_log_bucket(rel, bs, mp)), want)
    # make_log_bucket_position in float32 misses the exact ceiling at a few distances (documented in
    # deberta_log_bucket); the same code in float64 does not miss any stored one
    assert 0 < len(REF["deberta_ref_diff"]) < 1e-3 * exact.size
    assert len(REF["deberta_ref64_diff"]) == 0


def test_deberta_relative_position_matches_build_relative_position():
    outs, at = REF["debrel_out"], 0
    for q, k, bs, mp in REF["debrel_cfg"].tolist():
        # build_relative_position(q, k) puts the queries at 0 … q − 1: the top-left block of the square of max(q, k)
        n = max(q, k)
        got = P.deberta_relative_position(n, n, bucket_size=bs, max_position=mp)[:q, :k].ravel()
        np.testing.assert_array_equal(got, outs[at : at + got.size])
        at += got.size
    assert at == outs.size


# ---- 2025's variants: LongRoPE (Phi-3), interleaved M-RoPE (Qwen3-VL), learned sinks (gpt-oss) -----------------------


def test_longrope_matches_hugging_face_below_at_and_above_the_original_length():
    offsets = REF["longrope_offsets"]
    for i, (head_dim, base, partial, original, max_position, seq_len) in enumerate(REF["longrope_cfg"]):
        factor, attention = REF["longrope_given"][i]
        scaling = {
            "rope_type": "longrope",
            "short_factor": REF["longrope_short"][offsets[i] : offsets[i + 1]].tolist(),
            "long_factor": REF["longrope_long"][offsets[i] : offsets[i + 1]].tolist(),
        }
        if partial != 1.0:
            scaling["partial_rotary_factor"] = float(partial)
        if not np.isnan(factor):
            scaling["factor"] = float(factor)
        if not np.isnan(attention):
            scaling["attention_factor"] = float(attention)
        # Phi-3's config.json form: the two lengths at the top level, the scaling dict beside them
        config = {
            "hidden_size": int(head_dim) * 2,
            "num_attention_heads": 2,
            "rope_theta": float(base),
            "max_position_embeddings": int(max_position),
            "original_max_position_embeddings": int(original),
            "rope_scaling": scaling,
        }
        got, att, rotary_dim = P.rope_from_config(config, seq_len=None if seq_len < 0 else int(seq_len))
        assert rotary_dim == int(int(head_dim) * partial)
        want64 = REF["longrope_inv_freq64"][offsets[i] : offsets[i + 1]]
        close(got, want64)
        # Hugging Face builds base**(2i/d) and the product in float32: a relative error of a few float32 ulps
        close(got, REF["longrope_inv_freq32"][offsets[i] : offsets[i + 1]], rtol=8 * 2.0**-23)
        assert att == pytest.approx(REF["longrope_attention"][i], rel=1e-15)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_interleaved_mrope_matches_qwen3_vl(backend):
    out, at = REF["qwen3vl_out32"], 0
    for half, n_t, n_h, n_w, seq, seed, base in REF["qwen3vl_cfg"]:
        half, seq, seed = int(half), int(seq), int(seed)
        positions = np.random.default_rng(seed).integers(0, 4096, (3, 1, seq))
        q = normal(seed, (1, 2, seq, 2 * half)).astype(np.float32).astype(np.float64)
        inv_freq = P.rope_frequencies(2 * half, float(base))
        args = (q, positions, inv_freq)
        if backend == "torch":
            args = tuple(torch.tensor(a) for a in args)
        got = P.apply_mrope(*args, [int(n_t), int(n_h), int(n_w)], layout="half", interleaved=True)
        want = out[at : at + q.size].reshape(q.shape)
        at += q.size
        # HF forms the angles p·θ in float32: at p < 4096 rad their error is below 4096·2⁻²³ ≈ 5e-4 rad, and with
        # cos/sin and the products in float32 the output moves by at most ~1e-3·|q|. A pair on the wrong axis moves
        # it by O(|q|).
        close(got.numpy() if backend == "torch" else got, want, rtol=0, atol=2e-3 * np.abs(q).max())
    assert at == out.size


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_attention_with_sinks_matches_gpt_oss_eager_attention(backend):
    w_at = o_at = 0
    for heads, q_len, k_len, dim, seed in REF["sinks_cfg"]:
        g = np.random.default_rng(int(seed))
        q, k, v = (g.standard_normal((1, heads, n, dim)) for n in (q_len, k_len, k_len))
        sinks = g.standard_normal(heads) * 3
        args = (q, k, v, sinks)
        if backend == "torch":
            args = tuple(torch.tensor(a) for a in args)
        out, w = P.attention(*args[:3], causal=True, sinks=args[3])
        out, w = (np.asarray(a) for a in (out, w))
        close(w, REF["sinks_weights"][w_at : w_at + w.size].reshape(w.shape), atol=1e-15)
        close(out, REF["sinks_out"][o_at : o_at + out.size].reshape(out.shape), atol=1e-14)
        w_at, o_at = w_at + w.size, o_at + out.size
    assert (w_at, o_at) == (REF["sinks_weights"].size, REF["sinks_out"].size)
