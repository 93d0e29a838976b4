"""Every array function on every valid shape and memory layout gives the contiguous answer, on both backends.

A hypothesis strategy draws the shape (zero-length sequences, batch 0, > 1024 rows), the memory
layout of the input (Fortran order, transposed, reversed, expanded, sliced at an odd offset, every
other row) and the positions (int or float, one position broadcast over every row). The expected
value is the same function on a fresh contiguous float64 NumPy copy with one position per row.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import poslib as P

KINDS = ["contiguous", "fortran", "transposed", "reversed", "odd_offset", "every_other", "expanded"]


def numpy_view(c: np.ndarray, kind: str) -> np.ndarray:
    """An array equal to ``c`` whose memory is laid out as ``kind`` says (2 or more dims)."""
    if kind == "contiguous":
        return c.copy()
    if kind == "fortran":
        return np.asfortranarray(c)
    if kind == "transposed":
        return np.ascontiguousarray(np.swapaxes(c, -1, -2)).swapaxes(-1, -2)
    if kind == "reversed":  # negative strides on the two last axes
        return np.ascontiguousarray(c[..., ::-1, ::-1])[..., ::-1, ::-1]
    if kind == "odd_offset":
        buf = np.zeros(c.size + 1, c.dtype)
        buf[1:] = c.ravel()
        return buf[1:].reshape(c.shape)
    if kind == "every_other":
        buf = np.full((*c.shape[:-2], 2 * c.shape[-2], c.shape[-1]), np.nan if c.dtype.kind == "f" else -1, c.dtype)
        buf[..., ::2, :] = c
        return buf[..., ::2, :]
    if kind == "expanded":  # c is constant along axis 0 (see draw_array): stride 0 there
        return np.broadcast_to(c[:1], c.shape)
    raise AssertionError(kind)


def torch_view(c: np.ndarray, kind: str) -> torch.Tensor:
    """The torch counterpart (torch has no negative strides: "reversed" becomes a flipped copy's view)."""
    if kind == "contiguous":
        return torch.tensor(c)
    if kind == "fortran":
        dims = tuple(range(c.ndim))[::-1]
        return torch.tensor(np.ascontiguousarray(c.transpose(dims))).permute(dims)
    if kind == "transposed":
        return torch.tensor(np.ascontiguousarray(np.swapaxes(c, -1, -2))).transpose(-1, -2)
    if kind == "reversed":
        return torch.tensor(c[..., ::-1, ::-1].copy()).flip(-1, -2)
    if kind == "odd_offset":
        buf = torch.zeros(c.size + 1, dtype=torch.from_numpy(c[:0].copy()).dtype)
        buf[1:] = torch.tensor(c.ravel())
        return buf[1:].view(c.shape)
    if kind == "every_other":
        buf = torch.zeros((*c.shape[:-2], 2 * c.shape[-2], c.shape[-1]), dtype=torch.from_numpy(c[:0].copy()).dtype)
        buf[..., ::2, :] = torch.tensor(c)
        return buf[..., ::2, :]
    if kind == "expanded":
        return torch.tensor(c[:1]).expand(c.shape)
    raise AssertionError(kind)


@st.composite
def rope_inputs(draw):
    batch = draw(st.sampled_from([0, 1, 3]))
    seq = draw(st.sampled_from([0, 1, 2, 5, 17, 1030]))
    head_dim = draw(st.sampled_from([2, 4, 6, 16, 64]))
    kind = draw(st.sampled_from(KINDS))
    if kind == "expanded" and batch == 0:
        batch = 2
    c = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).standard_normal((batch, seq, head_dim))
    if kind == "expanded":
        c = np.broadcast_to(c[:1], c.shape).copy()
    start = draw(st.sampled_from([0, 1, 4093, 10**6]))
    broadcast = draw(st.booleans())
    pos = np.array([start]) if broadcast else np.arange(start, start + seq)
    dtype = draw(st.sampled_from([np.int64, np.int32, np.float64, np.float32]))
    return c, kind, pos.astype(dtype), np.broadcast_to(pos, (seq,)).astype(np.float64)


def rope_like(name, layout, centre):
    def f(x, pos, inv_freq):
        if name == "rope":
            return P.apply_rope(x, pos, inv_freq, layout=layout)
        return P.apply_xpos(x, pos, inv_freq, layout=layout, is_key=True, centre=centre)

    return f


FUNCTIONS = [(n, layout) for n in ("rope", "xpos") for layout in ("interleaved", "half")]


@settings(max_examples=40)
@given(rope_inputs())
def test_rope_and_xpos_on_every_shape_and_layout(case):
    c, kind, pos, full_pos = case
    inv_freq = P.rope_frequencies(c.shape[-1])
    for name, layout in FUNCTIONS:
        f = rope_like(name, layout, float(pos[0]) + 3 if pos.size else 0.0)
        want = f(c.copy(), full_pos.copy(), inv_freq)
        assert want.shape == c.shape
        got = f(numpy_view(c, kind), pos, inv_freq)
        np.testing.assert_array_equal(got, want, err_msg=f"numpy {name} {layout} {kind}")
        got = f(torch_view(c, kind), torch.from_numpy(pos.copy()), torch.from_numpy(inv_freq))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12, err_msg=f"torch {name} {layout} {kind}")


@st.composite
def relative_inputs(draw):
    q, k = draw(st.sampled_from([1, 2, 7, 40])), draw(st.sampled_from([1, 3, 40, 1100]))
    kind = draw(st.sampled_from([kd for kd in KINDS if kd != "expanded"]))
    rel = np.subtract.outer(np.arange(q), np.arange(k)) * draw(st.sampled_from([1, 3]))
    return rel.astype(draw(st.sampled_from([np.int64, np.int32]))), kind


@settings(max_examples=25)
@given(relative_inputs())
def test_bucket_functions_on_every_layout(case):
    rel, kind = case
    functions = [
        lambda r: P.t5_relative_bucket(r, bidirectional=True, num_buckets=32, max_distance=128),
        lambda r: P.t5_relative_bucket(r, bidirectional=False, num_buckets=16, max_distance=64),
        lambda r: P.deberta_log_bucket(r, 64, 512),
        lambda r: P.deberta_delta(r, 24),
        lambda r: P.sinusoidal_encode(r, 8),
    ]
    for i, f in enumerate(functions):
        want = np.asarray(f(rel.copy()))
        np.testing.assert_array_equal(f(numpy_view(rel, kind)), want, err_msg=f"numpy #{i} {kind}")
        got = f(torch_view(rel, kind))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12, err_msg=f"torch #{i} {kind}")


@pytest.mark.parametrize("kind", KINDS)
def test_views_really_have_the_layout_they_claim(kind):
    # the strategy is only as good as its views: check they are not silently contiguous copies
    c = np.arange(2 * 6 * 4, dtype=np.float64).reshape(2, 6, 4)
    if kind == "expanded":
        c = np.broadcast_to(c[:1], c.shape).copy()
    v, t = numpy_view(c, kind), torch_view(c, kind)
    np.testing.assert_array_equal(v, c)
    np.testing.assert_array_equal(t.numpy(), c)
    if kind == "contiguous":
        assert v.flags.c_contiguous and t.is_contiguous()
    elif kind == "odd_offset":  # contiguous, but one element into its buffer
        assert v.base.size == c.size + 1 and t.storage_offset() == 1
    else:
        assert not v.flags.c_contiguous
        if kind != "reversed":  # torch's flip copies: "reversed" is contiguous there
            assert not t.is_contiguous()
