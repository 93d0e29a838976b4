"""Dual Chunk Attention (poslib.dca): the paper's Figure 2, distances by loop, scores by explicit rotation pair by
pair, plain RoPE inside one chunk.

Expected values are computed here: position lists written out as the paper prints them, the three-region rule
applied one pair at a time, and rotate-half RoPE built as explicit 2×2 rotations, never by the function under test.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P
from poslib.dca import dual_chunk_positions

rng = np.random.default_rng(38)


def distance_by_loop(m, n, chunk_size, local_window):
    """The distance the reference codes score query m and key n ≤ m at (ChunkLlama's tables, written out)."""
    s = chunk_size - local_window  # ChunkLlama's chunk_len
    k_pos = n % s  # k_t = arange(…) % chunk_len
    back = m // s - n // s
    if back == 0:
        return m % s - k_pos  # q_t[m % chunk_len]
    if back == 1:
        return min(m % s + s, chunk_size) - k_pos  # qc_t = (arange(chunk_len) + chunk_len).clamp(max=chunk_size)
    return min((s - 1) + s, chunk_size) - k_pos  # qc_t[chunk_len - 1]


def test_the_papers_figure_2():
    # An et al. 2024, Figure 2 and Eqs. 2, 5, 7: s = 6, c = 10, w = 4, a sequence of 12 tokens:
    # P_k = P_intra = [0 … 5, 0 … 5], P_succ = [6, 7, 8, 9, 9, 9] per chunk, P_inter = [9] * 12.
    # In the code's parameters: chunk_size = c − 1 = 9, local_window = w − 1 = 3 (chunk_size − local_window = s).
    p_k = [0, 1, 2, 3, 4, 5] * 2
    p_succ = [6, 7, 8, 9, 9, 9] * 2
    want = np.zeros((12, 12), dtype=np.int64)
    for i in range(12):
        for j in range(12):
            if j > i:
                want[i, j] = i - j  # future keys: plain m − n, as poslib.remap
            elif i // 6 == j // 6:
                want[i, j] = p_k[i] - p_k[j]
            elif i // 6 - j // 6 == 1:
                want[i, j] = p_succ[i] - p_k[j]
            else:
                want[i, j] = 9 - p_k[j]
    got = P.dual_chunk_relative_positions(12, chunk_size=9, local_window=3)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    # row 10 by hand: the query is 4th-from-first of chunk 1, so it sits at c − 1 = 9 for chunk 0 (9 − n) and at 4
    # inside its own chunk (4 − (n − 6))
    np.testing.assert_array_equal(got[10], [9, 8, 7, 6, 5, 4, 4, 3, 2, 1, 0, -1])


def test_three_chunks_by_hand():
    # chunk_size = 5, local_window = 2: chunks of s = 3. Query m = 9 (chunk 3, position 0 inside it):
    # intra key 9 → 0; successive keys 6, 7, 8 → min(0 + 3, 5) − (0, 1, 2) = 3, 2, 1; inter keys 0 … 5 at
    # min(2·3 − 1, 5) = 5 − (n mod 3) = 5, 4, 3, 5, 4, 3. Query m = 11 (position 2): successive 3 + 2 = 5 − (0, 1, 2).
    got = P.dual_chunk_relative_positions(12, chunk_size=5, local_window=2)
    np.testing.assert_array_equal(got[9], [5, 4, 3, 5, 4, 3, 3, 2, 1, 0, -1, -2])
    np.testing.assert_array_equal(got[11], [5, 4, 3, 5, 4, 3, 5, 4, 3, 2, 1, 0])


@given(
    q_len=st.integers(1, 30),
    extra=st.integers(0, 12),
    chunk_size=st.integers(1, 12),
    local_frac=st.floats(0, 0.99),
)
def test_distances_match_the_reference_tables_pair_by_pair(q_len, extra, chunk_size, local_frac):
    local_window = int(local_frac * chunk_size)
    k_len = q_len + extra
    got = P.dual_chunk_relative_positions(q_len, k_len, chunk_size=chunk_size, local_window=local_window)
    for i in range(q_len):
        m = k_len - q_len + i
        for n in range(k_len):
            want = distance_by_loop(m, n, chunk_size, local_window) if n <= m else m - n
            assert got[i, n] == want, (m, n)
    causal = got[np.tril(np.ones((q_len, k_len), bool), k_len - q_len)]
    assert causal.min() >= 0 and causal.max() <= chunk_size  # never a distance beyond chunk_size


def test_the_inter_position_is_the_codes_when_the_window_exceeds_the_chunk():
    # chunk_size = 7, local_window = 5: chunks of s = 2; ChunkLlama's qc_t[chunk_len − 1] = min(2·2 − 1, 7) = 3,
    # not the paper's c − 1 = 7 (the two agree only when local_window < s)
    positions = dual_chunk_positions(8, chunk_size=7, local_window=5)
    assert positions.q_positions[2].tolist() == [3] * 8
    np.testing.assert_array_equal(positions.q_positions[1], [2, 3, 2, 3, 2, 3, 2, 3])
    assert P.dual_chunk_relative_positions(8, chunk_size=7, local_window=5)[7, 0] == 3


def half_rotation(position, d, base):
    """Rotate-half RoPE as an explicit matrix: pair (i, i + d/2) turned by position·base^(−2i/d)."""
    r = np.zeros((d, d))
    h = d // 2
    for i in range(h):
        a = position * base ** (-2 * i / d)
        r[i, i], r[i, i + h] = math.cos(a), -math.sin(a)
        r[i + h, i], r[i + h, i + h] = math.sin(a), math.cos(a)
    return r


@pytest.mark.parametrize("q_len", [10, 4, 1])
def test_attention_is_rope_at_the_remapped_positions_pair_by_pair(q_len):
    chunk_size, local_window, base, d = 4, 1, 100.0, 6
    q = rng.standard_normal((2, q_len, d))
    k, v = rng.standard_normal((2, 10, d)), rng.standard_normal((2, 10, 3))
    out, weights = P.dual_chunk_attention(q, k, v, chunk_size=chunk_size, local_window=local_window, base=base)
    s = chunk_size - local_window
    d_prime = P.dual_chunk_relative_positions(q_len, 10, chunk_size=chunk_size, local_window=local_window)
    for b in range(2):
        for i in range(q_len):
            m = 10 - q_len + i
            scores = []
            for n in range(m + 1):
                back = m // s - n // s
                q_pos = m % s if back == 0 else min(m % s + s, chunk_size) if back == 1 else min(2 * s - 1, chunk_size)
                qr, kr = half_rotation(q_pos, d, base) @ q[b, i], half_rotation(n % s, d, base) @ k[b, n]
                scores.append(qr @ kr / math.sqrt(d))
                # RoPE depends on the distance only: the same score from the query turned by d' alone
                assert (
                    abs((half_rotation(d_prime[i, n], d, base) @ q[b, i]) @ k[b, n] / math.sqrt(d) - scores[-1]) < 1e-12
                )
            e = np.exp(np.array(scores) - max(scores))
            want = e / e.sum()
            np.testing.assert_allclose(weights[b, i, : m + 1], want, rtol=1e-12, atol=1e-15)
            assert (weights[b, i, m + 1 :] == 0).all()
            np.testing.assert_allclose(out[b, i], want @ v[b, : m + 1], rtol=1e-12, atol=1e-14)


@given(
    q_len=st.integers(1, 8),
    extra=st.integers(0, 6),
    local_window=st.integers(0, 4),
    half_d=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_inside_one_chunk_it_is_plain_rope_attention(q_len, extra, local_window, half_d, seed):
    # k_len ≤ chunk_size − local_window: one chunk, every pair intra, positions m and n themselves
    r = np.random.default_rng(seed)
    k_len, d = q_len + extra, 2 * half_d
    chunk_size = k_len + local_window
    q, k, v = (
        r.standard_normal((2, 2, q_len, d)),
        r.standard_normal((2, 2, k_len, d)),
        r.standard_normal((2, 2, k_len, d)),
    )
    out, weights = P.dual_chunk_attention(q, k, v, chunk_size=chunk_size, local_window=local_window)
    f = P.rope_frequencies(d)
    qr = P.apply_rope(q, np.arange(k_len - q_len, k_len), f, layout="half")
    kr = P.apply_rope(k, np.arange(k_len), f, layout="half")
    want_out, want_w = P.attention(qr, kr, v, causal=True)
    np.testing.assert_allclose(weights, want_w, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(out, want_out, rtol=1e-11, atol=1e-14)


def test_beyond_one_chunk_it_differs_from_plain_rope():
    q, k, v = (rng.standard_normal((1, 9, 4)) for _ in range(3))
    _, dca = P.dual_chunk_attention(q, k, v, chunk_size=4, local_window=1)
    f = P.rope_frequencies(4)
    _, plain = P.attention(
        P.apply_rope(q, np.arange(9), f, layout="half"), P.apply_rope(k, np.arange(9), f, layout="half"), v, causal=True
    )
    np.testing.assert_allclose(dca[0, :3], plain[0, :3], rtol=1e-12, atol=1e-15)  # the first chunk is untouched
    assert np.abs(dca - plain).max() > 1e-3


def test_short_queries_are_the_last_rows_of_the_square():
    q, k, v = (rng.standard_normal((2, 11, 4)) for _ in range(3))
    out, w = P.dual_chunk_attention(q, k, v, chunk_size=5, local_window=2)
    out3, w3 = P.dual_chunk_attention(q[:, -3:], k, v, chunk_size=5, local_window=2)
    np.testing.assert_allclose(w3, w[:, -3:], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out3, out[:, -3:], rtol=1e-13, atol=1e-15)
    square = P.dual_chunk_relative_positions(11, chunk_size=5, local_window=2)
    np.testing.assert_array_equal(P.dual_chunk_relative_positions(3, 11, chunk_size=5, local_window=2), square[-3:])


def test_numpy_equals_torch_in_float64_and_float32_and_keeps_dtype_and_device():
    q, k, v = (rng.standard_normal((2, 2, 9, 4)) for _ in range(3))
    kw = dict(chunk_size=4, local_window=1, base=500.0)
    a = P.dual_chunk_attention(q, k, v, **kw)[0]
    b = P.dual_chunk_attention(*(torch.tensor(x) for x in (q, k, v)), **kw)[0]
    np.testing.assert_allclose(b.numpy(), a, rtol=1e-12, atol=1e-14)
    a32 = P.dual_chunk_attention(*(x.astype(np.float32) for x in (q, k, v)), **kw)[0]
    t32 = [torch.tensor(x, dtype=torch.float32, requires_grad=True) for x in (q, k, v)]
    b32 = P.dual_chunk_attention(*t32, **kw)[0]
    assert a32.dtype == np.float32 and b32.dtype == torch.float32
    np.testing.assert_allclose(b32.detach().numpy(), a32, rtol=1e-5, atol=1e-6)
    b32.sum().backward()
    assert all(t.grad is not None and torch.isfinite(t.grad).all() for t in t32)
    t = P.dual_chunk_relative_positions(4, 9, chunk_size=4, local_window=1, backend="torch")
    assert t.dtype == torch.int64
    np.testing.assert_array_equal(t.numpy(), P.dual_chunk_relative_positions(4, 9, chunk_size=4, local_window=1))


@pytest.mark.parametrize(
    "kw, words",
    [
        (dict(chunk_size=4, local_window=4), "chunk_size must be larger than local_window"),
        (dict(chunk_size=4, local_window=6), "chunk_size must be larger than local_window"),
        (dict(chunk_size=4, local_window=-1), "local_window must be a non-negative integer"),
        (dict(chunk_size=0, local_window=0), "chunk_size must be a positive integer"),
        (dict(chunk_size=4.0, local_window=1), "chunk_size must be a positive integer"),
    ],
)
def test_bad_chunks_are_named(kw, words):
    with pytest.raises(ValueError, match=words):
        P.dual_chunk_relative_positions(5, **kw)
    q = np.ones((1, 5, 4))
    with pytest.raises(ValueError, match=words):
        P.dual_chunk_attention(q, q, q, **kw)
