"""Multimodal RoPE's frequency allocation and position ids (poslib.mm_rope, issue 44 item 6).

Against the reference code's outputs (tests/reference/issue44_mm.npz, made by generate_issue44_mm.py from
Wiselnn570/VideoRoPE and hrlics/HoPE at the commits it stores), and properties: every scheme keeps the relative
property per axis; text tokens get plain RoPE except under HoPE, whose temporal pairs never turn.
"""

import pathlib

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P
from poslib.mm_rope import MM_ROPE_SCHEMES, apply_mm_rope, mm_rope_frequencies, mm_rope_pair_axes, video_position_ids

with np.load(pathlib.Path(__file__).parent / "reference" / "issue44_mm.npz") as _npz:
    REF = dict(_npz)

sections = st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)).filter(lambda s: sum(s) > 0)


def test_reference_commits_are_the_ones_read():
    assert list(REF["commits"]) == [
        "Wiselnn570/VideoRoPE 7712ca3f52b795284e0453badc6cf1642c1368c4",
        "hrlics/HoPE 85b76c03abcf9624b6efd27d1af1bc11ce9899c4",
    ]


def test_position_ids_match_qwen2vl_and_videorope_get_rope_index():
    grid = dict(text_before=3, text_after=4)
    assert np.array_equal(video_position_ids((3, 3, 5), **grid), REF["qwen2vl_position_ids"][:, 0])
    for delta in (1.0, 2.0, 0.75):
        got = video_position_ids((3, 3, 5), layout="diagonal", temporal_scale=delta, **grid)
        assert np.array_equal(got, REF[f"videorope_position_ids_{delta}"][:, 0])


def test_even_grid_position_ids_centre_each_frame_at_floor_of_n_minus_1_over_2():
    # an even llm grid (4, 4, 6): VideoRoPE's centre ⌊(n − 1)/2⌋ and n // 2 differ on both spatial axes
    grid = dict(text_before=3, text_after=4)
    assert np.array_equal(video_position_ids((4, 4, 6), **grid), REF["qwen2vl_position_ids_even"][:, 0])
    got = video_position_ids((4, 4, 6), layout="diagonal", temporal_scale=2.0, **grid)
    assert np.array_equal(got, REF["videorope_position_ids_2.0_even"][:, 0])


@pytest.mark.parametrize("scheme", ["videorope", "hope"])
def test_even_grid_rotation_matches_the_reference(scheme):
    pos = REF["videorope_position_ids_2.0_even"][:, 0]
    got = apply_mm_rope(REF["q_even"], pos, REF["inv_freq"], list(REF["mrope_section"]), scheme=scheme)
    assert np.abs(got - REF[f"{scheme}_q_even"]).max() < 1e-13


def test_videorope_alternates_h_first_then_w():
    # the reference's loop: row = 1 if j % 2 == 0 else 2 over the n_h + n_w fastest pairs
    axes = mm_rope_pair_axes([16, 24, 24], "videorope")
    assert (axes[0:48:2] == 1).all() and (axes[1:48:2] == 2).all() and (axes[48:] == 0).all()


@pytest.mark.parametrize("scheme", ["videorope", "hope"])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_rotation_matches_the_reference_allocation(scheme, backend):
    q, pos, inv_freq = REF["q"], REF["videorope_position_ids_2.0"][:, 0], REF["inv_freq"]
    if backend == "torch":
        q, pos, inv_freq = (torch.tensor(a) for a in (q, pos, inv_freq))
    got = apply_mm_rope(q, pos, inv_freq, list(REF["mrope_section"]), scheme=scheme)
    got = got.numpy() if backend == "torch" else got
    assert np.abs(got - REF[f"{scheme}_q"]).max() < 1e-13


@given(section=sections, scheme=st.sampled_from(MM_ROPE_SCHEMES))
def test_each_axis_gets_its_share_of_pairs(section, scheme):
    n_t, n_h, n_w = section
    if scheme == "mrope_interleaved" and (3 * n_h - 2 >= sum(section) or 3 * n_w - 1 >= sum(section)):
        with pytest.raises(ValueError, match="cannot be interleaved"):
            mm_rope_pair_axes(section, scheme)
        return
    axes = mm_rope_pair_axes(section, scheme)
    counts = np.bincount(axes, minlength=3)
    if scheme in ("videorope", "hope"):
        # h and w alternate over their n_h + n_w pairs together; t takes the slowest n_t
        assert list(counts) == [n_t, (n_h + n_w + 1) // 2, (n_h + n_w) // 2]
        assert (axes[len(axes) - n_t :] == 0).all()
    else:
        assert list(counts) == list(section)


def test_qwen_schemes_are_apply_mrope():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 7, 24))
    pos = rng.integers(0, 50, (3, 7))
    inv_freq = P.rope_frequencies(24)
    for scheme, interleaved in (("mrope", False), ("mrope_interleaved", True)):
        want = P.apply_mrope(x, pos, inv_freq, [4, 4, 4], interleaved=interleaved)
        assert np.abs(apply_mm_rope(x, pos, inv_freq, [4, 4, 4], scheme=scheme) - want).max() < 1e-14


@given(scheme=st.sampled_from(MM_ROPE_SCHEMES), seed=st.integers(0, 2**16))
def test_text_tokens_get_plain_rope_except_under_hope(scheme, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((9, 32))
    m = rng.integers(0, 1000, 9)
    inv_freq = P.rope_frequencies(32)
    got = apply_mm_rope(x, np.stack([m, m, m]), inv_freq, [6, 5, 5], scheme=scheme)
    _, freq = mm_rope_frequencies(inv_freq, [6, 5, 5], scheme)
    assert np.abs(got - P.apply_rope(x, m, freq, layout="half")).max() < 1e-12
    gap = np.abs(got - P.apply_rope(x, m, inv_freq, layout="half")).max()
    assert (gap > 1e-3) == (scheme == "hope")  # HoPE's 6 slowest pairs stay put


@given(scheme=st.sampled_from(MM_ROPE_SCHEMES), seed=st.integers(0, 2**16))
def test_scores_depend_only_on_the_offsets_per_axis(scheme, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 1, 32))
    pq, pk = rng.integers(0, 100, (2, 3, 1)).astype(float)
    shift = rng.normal(0, 50, (3, 1))
    inv_freq = P.rope_frequencies(32)

    def score(a, b):
        return float(
            (
                apply_mm_rope(q, a, inv_freq, [6, 5, 5], scheme=scheme)
                * apply_mm_rope(k, b, inv_freq, [6, 5, 5], scheme=scheme)
            ).sum()
        )

    assert abs(score(pq + shift, pk + shift) - score(pq, pk)) < 1e-9


def test_hope_time_is_invisible_and_videorope_time_turns_the_slowest_pairs():
    inv_freq = P.rope_frequencies(128)
    axes, freq = mm_rope_frequencies(inv_freq, [16, 24, 24], "hope")
    assert (freq[axes == 0] == 0).all() and (freq[axes != 0] > 0).all()
    axes_v, freq_v = mm_rope_frequencies(inv_freq, [16, 24, 24], "videorope")
    assert freq_v[axes_v == 0].max() < freq_v[axes_v != 0].min()  # time: the 16 slowest frequencies
    axes_q = mm_rope_pair_axes([16, 24, 24], "mrope")
    assert inv_freq[axes_q == 0].min() > inv_freq[axes_q != 0].max()  # Qwen2-VL: time the 16 fastest


@given(
    grid=st.tuples(st.integers(1, 4), st.integers(1, 6), st.integers(1, 6)),
    before=st.integers(0, 5),
    after=st.integers(0, 5),
    delta=st.sampled_from([0.5, 1.0, 2.0]),
)
def test_diagonal_layout_puts_each_frame_centre_on_the_text_diagonal(grid, before, after, delta):
    n_t, n_h, n_w = grid
    pos = video_position_ids(grid, text_before=before, text_after=after, layout="diagonal", temporal_scale=delta)
    assert pos.shape == (3, before + n_t * n_h * n_w + after)
    video = pos[:, before : before + n_t * n_h * n_w].reshape(3, n_t, n_h, n_w)
    centre = video[:, :, (n_h - 1) // 2, (n_w - 1) // 2]
    assert np.array_equal(centre[0], centre[1]) and np.array_equal(centre[0], centre[2])
    assert np.allclose(np.diff(centre[0]), delta)
    assert np.array_equal(pos[:, :before], np.broadcast_to(np.arange(before), (3, before)))
    tail = pos[:, before + n_t * n_h * n_w :]
    assert np.array_equal(tail[0], before + (n_t - 1) * delta + 1 + np.arange(after))
    plain = video_position_ids(grid, text_before=before, text_after=after)
    assert plain[:, before + n_t * n_h * n_w :].min(initial=np.inf) >= plain[:, : before + n_t * n_h * n_w].max() + 1


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="scheme"):
        mm_rope_pair_axes([1, 1, 1], "vrope")
    with pytest.raises(ValueError, match="inv_freq"):
        mm_rope_frequencies(np.ones(5), [1, 1, 1], "hope")
    with pytest.raises(ValueError, match="grid_thw"):
        video_position_ids((2, 0, 3))
    with pytest.raises(ValueError, match="temporal_scale"):
        video_position_ids((2, 2, 3), temporal_scale=2.0)
    with pytest.raises(ValueError, match="text_after"):
        video_position_ids((2, 2, 3), text_after=-1)
    with pytest.raises(ValueError, match="mrope_section"):
        apply_mm_rope(np.ones((3, 8)), np.zeros((3, 3)), np.ones(4), [1, 1, 1], scheme="hope")
