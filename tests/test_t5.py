"""T5 relative buckets and bias (poslib.t5)."""

import numpy as np
import pytest
import torch
from hypothesis import assume, given
from hypothesis import strategies as st

import poslib as P


# ---------- T5 ----------
@pytest.mark.parametrize(
    "rel, bucket",
    # bidirectional, 32 buckets, max_distance 128: 16 per side, 8 exact, then 8 + ⌊log(|r|/8)/log(16)·8⌋
    [
        (0, 0),
        (-1, 1),
        (-7, 7),
        (-8, 8),
        (-16, 10),
        (-32, 12),
        (-64, 14),
        (-127, 15),
        (-128, 15),
        (-1000, 15),
        (1, 17),
        (7, 23),
        (16, 26),
        (1000, 31),
    ],
)
def test_t5_buckets_hand_worked(rel, bucket):
    assert int(P.t5_relative_bucket(np.array(rel))) == bucket


@given(nb=st.sampled_from([8, 16, 32, 64]), md=st.sampled_from([20, 64, 128, 512]), bidi=st.booleans())
def test_t5_buckets_in_range_exact_then_monotone(nb, md, bidi):
    assume(md > (nb // 4 if bidi else nb // 2))  # otherwise there is no log range (rejected, tested elsewhere)
    rel = np.arange(-2 * md, 2 * md + 1)
    b = P.t5_relative_bucket(rel, bidirectional=bidi, num_buckets=nb, max_distance=md)
    assert b.min() >= 0 and b.max() < nb
    exact = nb // 4 if bidi else nb // 2
    past = rel[rel <= 0]  # keys before the query, distance −rel
    np.testing.assert_array_equal(b[(rel <= 0) & (rel > -exact)], -rel[(rel <= 0) & (rel > -exact)])
    assert (np.diff(b[rel <= 0][::-1]) >= 0).all()  # non-decreasing with distance into the past
    if bidi:
        future = b[rel > 0]
        assert (np.diff(future) >= 0).all() and future.min() >= nb // 2
    else:
        assert (b[rel > 0] == 0).all()
    assert len(past) > 0


def test_t5_bias_module_reads_the_table_and_gets_gradients():
    m = P.T5RelativeBias(4, num_buckets=32, max_distance=128)
    bias = m(5, 7)
    assert bias.shape == (4, 5, 7)
    buckets = P.t5_relative_bucket(P.t5_relative_positions(5, 7, backend="torch"))
    torch.testing.assert_close(bias[2], m.bias.weight[buckets, 2])
    bias.sum().backward()
    assert m.bias.weight.grad is not None


def test_t5_relative_position_is_key_minus_query():
    rel = P.t5_relative_positions(3, 4)  # the 3 queries are the last 3 of 4 positions: 1, 2, 3
    assert rel[0, 3] == 2 and rel[2, 0] == -3  # key − query: a key after the query is positive
    # and the bias reads the bucket of key − query: query 0 (position 1), key 3 uses upper-half bucket 16 + 2
    table = np.arange(32.0)[:, None]
    assert P.t5_bias(table, 3, 4)[0, 0, 3] == 18.0 and P.t5_bias(table, 3, 4)[0, 2, 0] == 3.0
