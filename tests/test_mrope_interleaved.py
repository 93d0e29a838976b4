"""Interleaved M-RoPE (Qwen3-VL's mrope_interleaved): the frequency pairs dealt to t, h, w in turn."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

QWEN3_VL = [24, 20, 20]  # Qwen3-VL's text config: head_dim 128, mrope_section [24, 20, 20], mrope_interleaved


def test_qwen3_vl_deal_by_hand():
    axis = P.mrope_axis_of_pair(QWEN3_VL, interleaved=True)
    by_hand = [j % 3 if j < 60 else 0 for j in range(64)]  # t h w t h w … for 60 pairs, then t for the 4 slowest
    np.testing.assert_array_equal(axis, by_hand)
    assert np.bincount(axis).tolist() == QWEN3_VL


def test_sectioned_default_is_three_blocks():
    np.testing.assert_array_equal(P.mrope_axis_of_pair([2, 3, 1]), [0, 0, 1, 1, 1, 2])
    np.testing.assert_array_equal(P.mrope_axis_of_pair([2, 3, 1], interleaved=False), [0, 0, 1, 1, 1, 2])


def test_every_axis_gets_both_ends_of_the_spectrum_only_when_interleaved():
    # with θ_j = b^(−2j/d), pair j's wavelength grows with j: an axis's fastest pair is its smallest j
    # (of 64 pairs: one of the three fastest and one of the six slowest)
    for interleaved in (True, False):
        axis = P.mrope_axis_of_pair(QWEN3_VL, interleaved=interleaved)
        for k in range(3):
            pairs = np.flatnonzero(axis == k)
            covers = pairs.min() <= 2 and pairs.max() >= 58
            assert covers == interleaved, (interleaved, k, pairs.min(), pairs.max())


@given(
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 40),
    st.integers(0, 40),
)
def test_scores_depend_only_on_the_offset_per_axis(t, h, w, dt, dh, dw):
    rng = np.random.default_rng(t + 41 * h + 1681 * w)
    q, k = rng.standard_normal(128), rng.standard_normal(128)
    inv_freq = P.rope_frequencies(128, 5e6)

    def score(pq, pk):
        rq = P.apply_mrope(q[None], np.array(pq)[:, None], inv_freq, QWEN3_VL, interleaved=True)
        rk = P.apply_mrope(k[None], np.array(pk)[:, None], inv_freq, QWEN3_VL, interleaved=True)
        return float(rq[0] @ rk[0])

    base = score((0, 0, 0), (dt, dh, dw))
    assert score((t, h, w), (t + dt, h + dh, w + dw)) == pytest.approx(base, rel=1e-9, abs=1e-9)


def test_text_tokens_reduce_to_plain_rope_in_either_arrangement():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 128))
    p = np.arange(5) * 7
    inv_freq = P.rope_frequencies(128, 5e6)
    plain = P.apply_rope(x, p, inv_freq, layout="half")
    for interleaved in (False, True):
        got = P.apply_mrope(x, np.stack([p, p, p]), inv_freq, QWEN3_VL, interleaved=interleaved)
        np.testing.assert_allclose(got, plain, rtol=1e-13, atol=1e-13)


def test_the_two_arrangements_differ_for_image_tokens():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 128))
    pos = np.array([[3], [5], [11]])
    inv_freq = P.rope_frequencies(128, 5e6)
    a = P.apply_mrope(x, pos, inv_freq, QWEN3_VL)
    b = P.apply_mrope(x, pos, inv_freq, QWEN3_VL, interleaved=True)
    assert np.abs(a - b).max() > 0.1


def test_a_section_too_large_to_interleave_is_refused_by_name():
    with pytest.raises(ValueError, match=r"mrope_section \[4, 30, 30\] cannot be interleaved"):
        P.mrope_axis_of_pair([4, 30, 30], interleaved=True)
    with pytest.raises(ValueError, match="mrope_section"):
        P.apply_mrope(np.zeros((1, 128)), np.zeros((3, 1)), P.rope_frequencies(128), [4, 30, 30], interleaved=True)
