"""RoPE: its defining property, its three equivalent forms, its two layouts, and its precision."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

head_dims = st.sampled_from([2, 4, 8, 16, 64])
positions = st.integers(min_value=-5000, max_value=5000)
bases = st.sampled_from([10.0, 10000.0, 500000.0])


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


@given(d=head_dims, m=positions, n=positions, shift=positions, base=bases, seed=st.integers(0, 2**16))
def test_scores_depend_only_on_relative_position(d, m, n, shift, base, seed):
    q, k = _rand((1, d), seed), _rand((1, d), seed + 1)
    f = P.rope_frequencies(d, base)
    s1 = (P.apply_rope(q, [m], f) * P.apply_rope(k, [n], f)).sum()
    s2 = (P.apply_rope(q, [m + shift], f) * P.apply_rope(k, [n + shift], f)).sum()
    assert s1 == pytest.approx(s2, abs=1e-9 * (1 + abs(s1)))


@given(d=head_dims, m=positions, n=positions, base=bases)
def test_rotation_matrices_compose_and_are_orthogonal(d, m, n, base):
    rm, rn = P.rope_matrix(m, d, base), P.rope_matrix(n, d, base)
    np.testing.assert_allclose(rm.T @ rn, P.rope_matrix(n - m, d, base), atol=1e-9)
    np.testing.assert_allclose(rm.T @ rm, np.eye(d), atol=1e-12)


@given(d=head_dims, m=positions, base=bases, seed=st.integers(0, 2**16))
def test_matrix_elementwise_and_complex_forms_agree(d, m, base, seed):
    x = _rand((1, d), seed)
    fast = P.apply_rope(x, [m], P.rope_frequencies(d, base))[0]
    matrix = P.rope_matrix(m, d, base) @ x[0]
    # complex form, written independently: pair (x_2i, x_2i+1) is x_2i + i·x_2i+1, times e^{i m θ_i}
    theta = base ** (-np.arange(0, d, 2) / d)
    z = (x[0, 0::2] + 1j * x[0, 1::2]) * np.exp(1j * m * theta)
    complex_form = np.stack([z.real, z.imag], axis=-1).reshape(-1)
    np.testing.assert_allclose(fast, matrix, atol=1e-9)
    np.testing.assert_allclose(fast, complex_form, atol=1e-9)


@given(d=head_dims, base=bases, seed=st.integers(0, 2**16), seq=st.integers(1, 12))
def test_half_layout_is_interleaved_up_to_a_fixed_permutation(d, base, seed, seq):
    x = _rand((2, seq, d), seed)
    pos = np.arange(seq) * 7 - 3
    f = P.rope_frequencies(d, base)
    perm = P.rope_layout_permutation(d)
    inter = P.apply_rope(x, pos, f, layout="interleaved")
    half = P.apply_rope(x[..., perm], pos, f, layout="half")
    np.testing.assert_allclose(half, inter[..., perm], atol=1e-12)


def test_half_layout_matches_the_rotate_half_formula():
    x = torch.randn(3, 5, 16, dtype=torch.float64)
    pos = torch.arange(5)
    f = torch.tensor(P.rope_frequencies(16))
    angles = pos[:, None].double() * f
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
    reference = x * cos + P.rotate_half(x) * sin
    torch.testing.assert_close(P.apply_rope(x, pos, f, layout="half"), reference, rtol=0, atol=1e-12)


def test_mixing_up_layouts_changes_scores():
    x = _rand((6, 8), 0)
    f = P.rope_frequencies(8)
    pos = np.arange(6)
    right = P.apply_rope(x, pos, f, layout="interleaved")
    wrong = P.apply_rope(x, pos, f, layout="half")
    assert np.abs(right @ right.T - wrong @ wrong.T).max() > 0.1


def test_hand_worked_case():
    # d = 2: θ_0 = 1, so position m rotates (1, 0) to (cos m, sin m); (0, 1) to (−sin m, cos m).
    f = P.rope_frequencies(2)
    out = P.apply_rope(np.array([[1.0, 0.0], [0.0, 1.0]]), [1.0, 2.0], f)
    np.testing.assert_allclose(out, [[math.cos(1), math.sin(1)], [-math.sin(2), math.cos(2)]], atol=1e-15)


def test_norms_preserved_and_inputs_untouched():
    x = torch.randn(2, 4, 9, 32)
    before = x.clone()
    y = P.apply_rope(x, torch.arange(9), torch.tensor(P.rope_frequencies(32)))
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1))
    assert torch.equal(x, before)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_non_contiguous_input(layout):
    x = torch.randn(2, 9, 4, 16).transpose(1, 2)  # (b, h, s, d) view of a (b, s, h, d) tensor
    f = torch.tensor(P.rope_frequencies(16))
    torch.testing.assert_close(
        P.apply_rope(x, torch.arange(9), f, layout=layout),
        P.apply_rope(x.contiguous(), torch.arange(9), f, layout=layout),
    )


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_stays_accurate_at_long_positions(dtype, layout):
    d = 128
    x64 = torch.randn(1, 64, d, dtype=torch.float64)
    pos = torch.linspace(0, 2**20, 64).round().long()
    f = torch.tensor(P.rope_frequencies(d, 500000.0))
    reference = P.apply_rope(x64, pos, f, layout=layout)
    low = P.apply_rope(x64.to(dtype), pos, f, layout=layout)  # f stays float64, as rope_inv_freq returns it
    assert low.dtype == dtype
    err = (low.double() - reference).abs().max() / x64.abs().max()
    assert err < 0.02
    # the bug this guards against: angles formed in the input's dtype are far off
    naive_angles = pos.to(dtype)[:, None] * f.to(dtype)[None, :]
    assert (naive_angles.double() - pos.double()[:, None] * f[None, :]).abs().max() > 1


def test_numpy_float32_and_float16_keep_dtype():
    x = _rand((3, 8), 1)
    f = P.rope_frequencies(8)
    for dtype in (np.float32, np.float16):
        y = P.apply_rope(x.astype(dtype), np.arange(3), f)
        assert y.dtype == dtype
        np.testing.assert_allclose(y, P.apply_rope(x, np.arange(3), f), atol=5e-3)


def test_attention_factor_scales_cos_and_sin():
    x = _rand((2, 8), 2)
    f = P.rope_frequencies(8)
    np.testing.assert_allclose(P.apply_rope(x, [3, 4], f, attention_factor=1.5), 1.5 * P.apply_rope(x, [3, 4], f))


def test_xpos_scores_depend_only_on_relative_position_and_decay():
    d = 16
    f = P.rope_frequencies(d)
    q, k = _rand((1, d), 3), _rand((1, d), 4)

    def score(n, m):
        return (P.apply_xpos(q, [n], f) * P.apply_xpos(k, [m], f, is_key=True)).sum()

    assert score(700, 600) == pytest.approx(score(100, 0), rel=1e-9)
    # with all-ones vectors the decay is visible as a shrinking upper bound
    ones = np.ones((1, d))
    bound = [np.abs(P.xpos_scale(np.array([t]), d)).sum() for t in (0, 512, 1024)]
    assert bound[0] > bound[1] > bound[2]
    assert P.apply_xpos(ones, [0], f).sum() == pytest.approx(P.apply_rope(ones, [0], f).sum())


def test_xpos_zeta_matches_paper():
    # ζ_i = (2i/d + γ)/(1 + γ): for d = 4, γ = 0.4 → (0.4/1.4, 0.9/1.4)
    np.testing.assert_allclose(P.xpos_zeta(4), [0.4 / 1.4, 0.9 / 1.4])


def _bound_by_hand(r, d, base):
    theta = base ** (-np.arange(0, d, 2) / d)
    s = np.cumsum(np.exp(1j * np.outer(r, theta)), axis=-1)  # S_1 … S_{d/2}
    return np.abs(s).mean(-1)


@pytest.mark.parametrize("d, base", [(2, 10000.0), (16, 100.0), (128, 10000.0), (64, 5e5)])
def test_decay_bound_matches_the_papers_definition(d, base):
    r = np.array([0, 1, 2, 7, 100, 2500, -13])
    np.testing.assert_allclose(P.rope_decay_bound(r, d, base), _bound_by_hand(r, d, base), rtol=1e-12)


def test_decay_bound_at_zero_and_symmetry():
    r = np.arange(-50, 51)
    b = P.rope_decay_bound(r, 128)
    assert b[50] == pytest.approx((128 / 2 + 1) / 2)  # S_j = j at r = 0
    np.testing.assert_allclose(b, b[::-1], rtol=1e-12)  # |S_j(−r)| = |conj S_j(r)|
    assert b[50] == b.max()


@given(seed=st.integers(0, 2**32 - 1), d=st.sampled_from([4, 16, 64]), base=st.sampled_from([50.0, 1e4, 1e6]))
def test_decay_bound_bounds_every_rope_score(seed, d, base):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, d))
    r = np.arange(0, 400)
    scores = P.apply_rope(np.tile(q, (len(r), 1)), r, P.rope_frequencies(d, base)) @ k
    h = (q[0::2] + 1j * q[1::2]) * np.conj(k[0::2] + 1j * k[1::2])
    step = np.abs(np.diff(np.append(h, 0))).max()
    assert np.all(np.abs(scores) <= step * (d / 2) * P.rope_decay_bound(r, d, base) + 1e-9)


def test_decay_bound_torch_keeps_kind_and_bad_input_is_named():
    out = P.rope_decay_bound(torch.arange(5), 8)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    with pytest.raises(ValueError, match="head_dim"):
        P.rope_decay_bound(np.arange(3), 7)
    with pytest.raises(ValueError, match="base"):
        P.rope_decay_bound(np.arange(3), 8, base=1.0)
    with pytest.raises(ValueError, match="base"):
        P.rope_decay_bound(np.arange(3), 8, base=True)
    with pytest.raises(TypeError, match="distances"):
        P.rope_decay_bound("far", 8)


def test_frequencies_start_at_one_and_fall():
    # The test a lost minus sign in θ_i = base^(−2i/d) fails (the relative-property test does not).
    for d, base in [(2, 10.0), (64, 10000.0), (128, 5e5)]:
        th = P.rope_frequencies(d, base)
        assert th[0] == 1.0 and np.all(np.diff(th) < 0) and th[-1] == pytest.approx(base ** (-(d - 2) / d))


# ---------- two steps: rope_cos_sin, then rope_rotate ----------
@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("rotary_dim", [None, 8])
@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_two_steps_equal_the_one_call_bit_for_bit(layout, rotary_dim, kind):
    rng = np.random.default_rng(3)
    x, pos = rng.standard_normal((2, 5, 12)).astype(np.float32), np.arange(5) * 1000
    inv_freq = P.rope_frequencies(rotary_dim or 12)
    if kind == "torch":
        x, pos, inv_freq = torch.tensor(x), torch.tensor(pos), torch.tensor(inv_freq)
    one = P.apply_rope(x, pos, inv_freq, layout=layout, rotary_dim=rotary_dim, attention_factor=1.25)
    cos, sin = P.rope_cos_sin(pos, inv_freq, attention_factor=1.25)
    two = P.rope_rotate(x, cos, sin, layout=layout, rotary_dim=rotary_dim)
    assert type(one) is type(two) and one.dtype == two.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(one), np.asarray(two))
    if rotary_dim:  # the features past rotary_dim pass through untouched
        np.testing.assert_array_equal(np.asarray(two[..., rotary_dim:]), np.asarray(x[..., rotary_dim:]))


def test_cos_sin_come_from_float64_angles_whatever_the_dtype_asked():
    pos, inv_freq = np.array([0, 1, 70_000, 1_000_003]), P.rope_frequencies(16)
    angles = pos[:, None].astype(np.float64) * inv_freq  # m·θ_i in float64, written out
    for dtype in (np.float16, np.float32, np.float64):
        cos, sin = P.rope_cos_sin(pos, inv_freq, dtype=dtype)
        assert cos.dtype == sin.dtype == dtype and cos.shape == (4, 8)
        np.testing.assert_array_equal(cos, np.cos(angles).astype(dtype))
        np.testing.assert_array_equal(sin, np.sin(angles).astype(dtype))
    cos_t, _ = P.rope_cos_sin(torch.tensor(pos), torch.tensor(inv_freq), attention_factor=2.0, dtype=torch.bfloat16)
    assert cos_t.dtype == torch.bfloat16
    np.testing.assert_array_equal(cos_t.float().numpy(), torch.tensor(2.0 * np.cos(angles)).bfloat16().float().numpy())


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: P.rope_rotate(np.ones((3, 8)), np.ones((3, 4)), np.ones((3, 3))), "cos and sin must have the same"),
        (lambda: P.rope_rotate(np.ones((3, 8)), np.ones((3, 3)), np.ones((3, 3))), "head_dim/2 = 4"),
        (lambda: P.rope_rotate(np.ones((3, 8)), np.ones((2, 4)), np.ones((2, 4))), "x.shape"),
        (lambda: P.rope_rotate(np.ones((3, 8)), np.ones((3, 2)), np.ones((3, 2)), rotary_dim=6), "rotary_dim/2 = 3"),
        (lambda: P.rope_rotate(np.ones((3, 8)), np.ones((3, 4)), np.ones((3, 4)), rotary_dim=10), "rotary_dim"),
        (lambda: P.rope_rotate(np.ones((3, 8)), np.ones((3, 4)), np.ones((3, 4)), layout="split"), "layout"),
        (lambda: P.rope_rotate(np.ones((3, 8), int), np.ones((3, 4)), np.ones((3, 4))), "floating"),
        (lambda: P.rope_rotate(np.ones((3, 8)), torch.ones(3, 4), np.ones((3, 4))), "mixed"),
    ],
)
def test_rope_rotate_names_what_is_wrong(call, words):
    with pytest.raises((ValueError, TypeError), match=words):
        call()
