"""Regression tests for issue 11's observed bugs: each one fails on the code the issue was filed against.

Expected values come from independent computations: exact rational arithmetic for the bucket
indices, the textbook rotate_half formula for RoPE, and hand-derived limits for XPOS.
"""

import math
import os
from fractions import Fraction

import numpy as np
import pytest
import torch

import poslib as P
from poslib.lab import deterministic

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


# ---- exact buckets -------------------------------------------------------------------------------------------------


def deberta_bucket_exact(a: int, mid: int, max_position: int) -> int:
    """mid + ⌈(mid − 1)·ln(a/mid)/ln((M − 1)/mid)⌉ for a > mid, by searching for the smallest k exactly."""
    target = Fraction(a, mid) ** (mid - 1)  # k ≥ v  ⇔  ((M − 1)/mid)^k ≥ target
    ratio = Fraction(max_position - 1, mid)
    k = max(0, math.floor((mid - 1) * math.log(a / mid) / math.log((max_position - 1) / mid)) - 2)
    while ratio**k < target:
        k += 1
    assert k == 0 or ratio ** (k - 1) < target  # the smallest such k
    return mid + k


def t5_bucket_exact(d: int, num_buckets: int, max_distance: int) -> int:
    """Unidirectional T5 bucket of distance d ≥ 0 (future keys excluded), by exact search."""
    max_exact = num_buckets // 2
    if d < max_exact:
        return d
    steps = num_buckets - max_exact
    target = Fraction(d, max_exact) ** steps  # k ≤ v  ⇔  (max_distance/max_exact)^k ≤ target
    ratio = Fraction(max_distance, max_exact)
    k = 0
    while k < steps and ratio ** (k + 1) <= target:
        k += 1
    return min(max_exact + k, num_buckets - 1)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_deberta_bucket_at_max_position_minus_one_is_the_exact_one(backend):
    # issue 11: the log ratio is exactly 1 there; NumPy gave 306, torch 305 (the reference's value)
    rel = P.deberta_relative_position(512, 512, bucket_size=306, max_position=512, backend=backend)
    assert int(rel[511, 0]) == 305 and int(rel[0, 511]) == -305


@pytest.mark.parametrize(("bucket_size", "max_position"), [(306, 512), (256, 512), (64, 129), (10, 7), (4, 4)])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_deberta_buckets_exact_at_every_integer_distance(bucket_size, max_position, backend):
    mid = bucket_size // 2
    a = np.arange(-2500, 2501)
    xp = P._backend.namespace(backend)
    got = P.deberta_log_bucket(xp.asarray(a), bucket_size, max_position)
    want = [
        int(r) if abs(r) <= mid else int(np.sign(r)) * deberta_bucket_exact(abs(int(r)), mid, max_position) for r in a
    ]
    assert np.asarray(got).tolist() == want


@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (32, 64), (8, 16), (16, 9), (6, 24)])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_t5_buckets_exact_at_every_integer_distance(num_buckets, max_distance, backend):
    # (8, 16): distances 8 and 16 make the log ratio exactly 1 and 2 (4·log(d/4)/log 4)
    d = np.arange(0, 3000)
    xp = P._backend.namespace(backend)
    got = P.t5_relative_bucket(xp.asarray(-d), bidirectional=False, num_buckets=num_buckets, max_distance=max_distance)
    assert np.asarray(got).tolist() == [t5_bucket_exact(int(v), num_buckets, max_distance) for v in d]


def test_bucket_size_one_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="bucket_size"):
        P.deberta_relative_position(8, 8, bucket_size=1, max_position=16)
    with pytest.raises(ValueError, match="max_position"):
        P.deberta_log_bucket(np.arange(4), 8, 5)


# ---- RoPE kernels on unusual but valid inputs -------------------------------------------------------------------


def rope_half_textbook(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """x·cos + rotate_half(x)·sin, Hugging Face's formula, with the angles in float64."""
    angles = np.asarray(positions, np.float64)[..., None] * inv_freq
    cos, sin = np.cos(np.concatenate([angles, angles], -1)), np.sin(np.concatenate([angles, angles], -1))
    h = x.shape[-1] // 2
    return x * cos + np.concatenate([-x[..., h:], x[..., :h]], -1) * sin


def test_numpy_half_layout_blocked_kernel_on_long_inputs():
    # seq·head_dim > 65,536 runs the row-blocked kernel: every block must read its own rows
    rng = np.random.default_rng(1)
    x, f = rng.standard_normal((2, 1100, 64)), P.rope_frequencies(64)
    pos = np.arange(1100) * 3 + 5
    assert 1100 * 64 > 1 << 16
    np.testing.assert_allclose(
        P.apply_rope(x, pos, f, layout="half"), rope_half_textbook(x, pos, f), rtol=0, atol=1e-12
    )


def test_numpy_half_layout_one_position_broadcast_over_many_rows():
    rng = np.random.default_rng(2)
    x, f = rng.standard_normal((3, 2000, 64)), P.rope_frequencies(64)
    got = P.apply_rope(x, np.array([7.0]), f, layout="half")
    np.testing.assert_allclose(got, rope_half_textbook(x, np.full(2000, 7.0), f), rtol=0, atol=1e-12)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("shape", [(0, 8), (3, 0, 8), (0, 5, 8)])
def test_zero_length_inputs(layout, shape):
    f = P.rope_frequencies(8)
    for x, pos in ((np.ones(shape), np.arange(shape[-2])), (torch.ones(shape), torch.arange(shape[-2]))):
        out = P.apply_rope(x, pos, f if isinstance(x, np.ndarray) else torch.tensor(f), layout=layout)
        assert tuple(out.shape) == shape


def test_torch_interleaved_on_a_view_at_an_odd_storage_offset():
    base = torch.randn(81, dtype=torch.float64)
    x = base[1:].view(10, 8)
    assert x.storage_offset() % 2 == 1
    f = torch.tensor(P.rope_frequencies(8))
    want = P.apply_rope(x.numpy().copy(), np.arange(10), f.numpy())
    np.testing.assert_allclose(P.apply_rope(x, torch.arange(10), f).numpy(), want, rtol=0, atol=1e-14)


# ---- scaling dictionaries ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("rope_type", ["ntk", "dynamic"])
def test_ntk_with_head_dim_two_is_the_single_unit_frequency(rope_type):
    # d = 2 has one pair with θ_0 = base^0 = 1 whatever the base: nothing to rescale
    cfg = {"rope_type": rope_type, "factor": 4.0, "original_max_position_embeddings": 16}
    inv_freq, attention = P.rope_inv_freq(2, 10000.0, cfg, seq_len=100)
    assert inv_freq.tolist() == [1.0] and attention == 1.0


def test_misspelled_scaling_key_is_named():
    cfg = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "beta_fats": 8}
    with pytest.raises(ValueError, match=r"'beta_fats'.*known keys: \[.*'beta_fast'"):
        P.rope_inv_freq(16, 10000.0, cfg)


def test_none_means_the_default():
    cfg = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
    explicit = P.rope_inv_freq(64, 10000.0, {**cfg, "beta_fast": 32, "beta_slow": 1, "truncate": True})
    none = P.rope_inv_freq(64, 10000.0, {**cfg, "beta_fast": None, "beta_slow": None, "truncate": None})
    assert none[0].tolist() == explicit[0].tolist() and none[1] == explicit[1]
    # and the defaults matter: other betas give other frequencies
    for other in ({"beta_fast": 8}, {"beta_slow": 2}, {"truncate": False}):
        assert P.rope_inv_freq(64, 10000.0, {**cfg, **other})[0].tolist() != none[0].tolist()


def test_hugging_face_common_keys():
    cfg = {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0, "mrope_section": [2, 1, 1]}
    assert P.rope_inv_freq(8, 10000.0, cfg)[0].tolist() == (P.rope_frequencies(8) / 2).tolist()
    with pytest.raises(ValueError, match="rope_theta"):
        P.rope_inv_freq(8, 500000.0, cfg)
    partial, _ = P.rope_inv_freq(64, 10000.0, {"rope_type": "default", "partial_rotary_factor": 0.25})
    np.testing.assert_allclose(partial, 10000.0 ** (-np.arange(0, 16, 2) / 16), rtol=1e-15, atol=0)
    with pytest.raises(ValueError, match="partial_rotary_factor"):
        P.rope_inv_freq(8, 10000.0, {"rope_type": "default", "partial_rotary_factor": 0.1})


# ---- XPOS range --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "reach"),
    # −ln(finfo.tiny) / −ln(0.4/1.4) · 512, derived by hand: the largest |n − centre| kept finite
    [
        (torch.float32, 87.336 / 1.25276 * 512),
        (torch.float16, 9.7041 / 1.25276 * 512),
        (torch.float64, 708.40 / 1.25276 * 512),
    ],
)
def test_xpos_stays_finite_or_raises(dtype, reach):
    f = torch.tensor(P.rope_frequencies(8))
    x = torch.ones(2, 8, dtype=dtype)
    inside = torch.tensor([0.0, 0.999 * reach])
    q, k = P.apply_xpos(x, inside, f), P.apply_xpos(x, inside, f, is_key=True)
    assert bool(torch.isfinite(q).all() and torch.isfinite(k).all() and (q[1].abs() > 0).any())
    with pytest.raises(ValueError, match="centre"):
        P.apply_xpos(x, torch.tensor([0.0, 1.001 * reach]), f, is_key=True)


def test_xpos_scores_do_not_depend_on_a_shared_centre():
    f = torch.tensor(P.rope_frequencies(8))
    x = torch.randn(3, 8, dtype=torch.float64)
    pos = torch.tensor([10.0, 200.0, 3000.0])
    base = P.apply_xpos(x, pos, f) @ P.apply_xpos(x, pos, f, is_key=True).T
    moved = P.apply_xpos(x, pos, f, centre=1500.0) @ P.apply_xpos(x, pos, f, is_key=True, centre=1500.0).T
    torch.testing.assert_close(moved, base, rtol=1e-12, atol=0)
    # but the centre does change each side: it is really applied
    assert not torch.allclose(P.apply_xpos(x, pos, f, centre=1500.0), P.apply_xpos(x, pos, f))


# ---- devices -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", DEVICES)
def test_kerple_follows_the_device_of_its_parameters(device):
    r1 = torch.tensor([1.0, 2.0], device=device)
    bias = P.kerple_bias(r1, 0.5, q_len=4, k_len=4, kind="log").squeeze(0)
    assert bias.device.type == device
    want = -np.array([1.0, 2.0])[:, None, None] * np.log(1 + 0.5 * np.abs(np.arange(4)[None] - np.arange(4)[:, None]))
    np.testing.assert_allclose(bias.cpu().numpy(), want, rtol=1e-12)


def test_deterministic_mode_sets_the_cublas_workspace_and_restores_it(monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    with deterministic(1):
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        if torch.cuda.is_available():  # cuBLAS raises here without the variable
            a = torch.randn(8, 8, device="cuda")
            (a @ a).sum().item()
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    with deterministic(1):
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"  # a user's choice is kept


@pytest.mark.parametrize("device", DEVICES)
def test_every_torch_function_keeps_its_inputs_device(device):
    # run unchanged on a GPU machine: every output must sit where its inputs were
    f = torch.tensor(P.rope_frequencies(8), device=device)
    x = torch.randn(2, 5, 8, dtype=torch.float64, device=device)
    pos = torch.arange(5, device=device)
    rel = torch.arange(-600, 600, device=device)
    c, r = torch.randn(4, 8, device=device), torch.randn(6, 8, device=device)
    outputs = {
        "apply_rope interleaved": P.apply_rope(x, pos, f),
        "apply_rope half": P.apply_rope(x, pos, f, layout="half"),
        "apply_xpos": P.apply_xpos(x, pos, f, layout="half"),
        "rope_angles": P.rope_angles(pos, f),
        "xpos_scale": P.xpos_scale(pos, 8),
        "rope_decay_bound": P.rope_decay_bound(rel.double(), 8),
        "sinusoidal_encode": P.sinusoidal_encode(pos, 8),
        "rope_frequencies": P.rope_frequencies(8, backend="torch", device=device),
        "t5_relative_bucket": P.t5_relative_bucket(rel),
        "t5_bias": P.t5_bias(torch.randn(32, 2, device=device), 5, 7),
        "deberta_log_bucket": P.deberta_log_bucket(rel, 306, 512),  # hits the exact re-decision at ±511
        "deberta_delta": P.deberta_delta(rel, 24),
        "deberta_scores": P.deberta_scores(c, c, r, r),
        "kerple_bias": P.kerple_bias(torch.tensor(1.0, device=device), 0.5, q_len=4, k_len=6, kind="power"),
        "alibi_bias": P.alibi_bias(4, 5, backend="torch", device=device, causal=True),
        "sandwich_bias": P.sandwich_bias(2, 8, q_len=5, k_len=5, backend="torch", device=device),
        "forgetting_attention": P.forgetting_attention(x[:, 2:], x, x, -x[..., 0].abs())[0],
        "stickbreaking_attention": P.stickbreaking_attention(x[:, 2:], x, x)[0],
        "path_attention": P.path_attention(x[:, 2:], x, x, x, x[..., 0].abs(), log_f=-x[..., 1].abs())[0],
        "dual_chunk_attention": P.dual_chunk_attention(x[:, 2:], x, x, chunk_size=3, local_window=1)[0],
        "dual_chunk_relative_positions": P.dual_chunk_relative_positions(
            3, 5, chunk_size=3, local_window=1, backend="torch", device=device
        ),
    }
    wrong = {name: str(out.device) for name, out in outputs.items() if out.device.type != device}
    assert not wrong
    assert int(outputs["deberta_log_bucket"][600 + 511]) == 305
