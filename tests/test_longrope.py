"""LongRoPE (poslib.rope_scaling "longrope", Phi-3/3.5, Phi-4-mini): per-pair factors, the short/long switch, errors."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

D, BASE, L_ORIG = 16, 10000.0, 4096
SHORT = [1.0 + 0.05 * i for i in range(D // 2)]
LONG = [1.0 + 0.5 * i * i for i in range(D // 2)]


def longrope(**extra):
    return {
        "rope_type": "longrope",
        "short_factor": SHORT,
        "long_factor": LONG,
        "original_max_position_embeddings": L_ORIG,
        **extra,
    }


def plain(d=D, base=BASE):
    # θ_i = base^(−2i/d), written out here rather than taken from poslib
    return np.array([base ** (-2.0 * i / d) for i in range(d // 2)])


def test_short_factors_up_to_the_original_length_long_ones_beyond():
    for seq_len, factors in ((None, SHORT), (1, SHORT), (L_ORIG, SHORT), (L_ORIG + 1, LONG), (8 * L_ORIG, LONG)):
        inv_freq, _ = P.rope_inv_freq(D, BASE, longrope(factor=8.0), seq_len=seq_len)
        np.testing.assert_allclose(inv_freq, plain() / np.array(factors), rtol=1e-14)


def test_default_attention_factor_is_sqrt_of_one_plus_ln_s_over_ln_L_at_every_length():
    expected = math.sqrt(1 + math.log(8.0) / math.log(4096))  # ln 8 / ln 4096 = 3/12, so √1.25
    assert expected == pytest.approx(math.sqrt(1.25), rel=1e-15)
    for seq_len in (None, 10, L_ORIG + 1):
        assert P.rope_inv_freq(D, BASE, longrope(factor=8.0), seq_len=seq_len)[1] == pytest.approx(expected, rel=1e-15)
    assert P.rope_inv_freq(D, BASE, longrope(factor=1.0))[1] == 1.0
    assert P.rope_inv_freq(D, BASE, longrope(factor=8.0, attention_factor=1.25))[1] == 1.25
    assert P.longrope_attention_factor(32.0, 4096) == pytest.approx(math.sqrt(1 + 5 / 12), rel=1e-15)


@given(st.lists(st.floats(0.5, 64.0), min_size=D // 2, max_size=D // 2))
def test_each_pair_divided_by_its_own_factor(factors):
    inv_freq, _ = P.rope_inv_freq(D, BASE, {**longrope(factor=4.0), "short_factor": factors})
    np.testing.assert_allclose(inv_freq * np.array(factors), plain(), rtol=1e-14)


def test_all_factors_s_is_position_interpolation():
    s = 4.0
    scaling = {**longrope(factor=s), "long_factor": [s] * (D // 2)}
    lr, _ = P.rope_inv_freq(D, BASE, scaling, seq_len=2 * L_ORIG)
    pi, _ = P.rope_inv_freq(D, BASE, {"rope_type": "linear", "factor": s})
    np.testing.assert_array_equal(lr, pi)


def test_partial_rotary_takes_factors_for_the_rotated_pairs_only():
    scaling = {**longrope(factor=2.0), "partial_rotary_factor": 0.5, "short_factor": SHORT[:4], "long_factor": LONG[:4]}
    inv_freq, _ = P.rope_inv_freq(D, BASE, scaling)
    np.testing.assert_allclose(inv_freq, plain(D // 2) / np.array(SHORT[:4]), rtol=1e-14)


def test_phi3_style_config_takes_the_factor_from_the_two_lengths():
    # Phi-3-mini-128k's form: no 'factor'; max_position_embeddings 131072 over the original 4096 gives s = 32
    config = {
        "hidden_size": 3072,
        "num_attention_heads": 32,
        "rope_theta": 10000.0,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48},
    }
    inv_freq, attention, rotary_dim = P.rope_from_config(config, seq_len=5000)
    assert rotary_dim == 96
    np.testing.assert_allclose(inv_freq, plain(96) / 2.0, rtol=1e-14)
    assert attention == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)), rel=1e-15)
    short, _, _ = P.rope_from_config(config, seq_len=4096)
    np.testing.assert_allclose(short, plain(96), rtol=1e-14)


@pytest.mark.parametrize(
    "change, named",
    [
        ({"short_factor": SHORT[:-1]}, "'short_factor'"),
        ({"long_factor": [*LONG, 1.0]}, "'long_factor'"),
        ({"long_factor": [*LONG[:-1], 0.0]}, "'long_factor'][7]"),
        ({"short_factor": [*SHORT[:-1], -1.0]}, "'short_factor'][7]"),
        ({"short_factor": "1,2"}, "'short_factor'"),
        ({"short_factor": None}, "'short_factor'"),
        ({"original_max_position_embeddings": None}, "'original_max_position_embeddings'"),
        ({"factor": None}, "'factor'"),
        ({"factor": -2.0}, "'factor'"),
        ({"factor": 2.0, "attention_factor": 0.0}, "'attention_factor'"),
    ],
)
def test_errors_name_the_key(change, named):
    scaling = {**longrope(factor=8.0), **change}
    with pytest.raises(ValueError, match=named.replace("[", r"\[").replace("]", r"\]")):
        P.rope_inv_freq(D, BASE, scaling)


@pytest.mark.parametrize("rope_type", ["yarn", "longrope"])
def test_a_partial_factor_inside_the_scaling_dict_is_applied_once(rope_type):
    # transformers ≥ 5 keeps partial_rotary_factor inside rope_parameters; rotary_dim = int(16 · 0.5) = 8, 4 pairs
    scaling = {
        "rope_type": rope_type,
        "factor": 4.0,
        "original_max_position_embeddings": 32,
        "partial_rotary_factor": 0.5,
        "short_factor": [1.0] * 4,
        "long_factor": [2.0] * 4,
    }
    if rope_type == "yarn":
        del scaling["short_factor"], scaling["long_factor"]
    inv_freq, _, rotary_dim = P.rope_from_config({"head_dim": 16, "rope_parameters": scaling})
    assert rotary_dim == 8 and len(inv_freq) == 4


PHI3_LIKE = {
    "hidden_size": 64,
    "num_attention_heads": 4,
    "rope_theta": 10000.0,
    "max_position_embeddings": 131072,
    "original_max_position_embeddings": 4096,
}


def test_a_given_factor_wins_over_the_ratio_of_the_two_lengths():
    # transformers 5.24: the ratio (here 32) only when 'factor' is absent; factor 8 gives √(1 + ln 8 / ln 4096) = √1.25
    scaling = {"rope_type": "longrope", "factor": 8.0, "short_factor": [1.0] * 8, "long_factor": [2.0] * 8}
    _, attention, _ = P.rope_from_config({**PHI3_LIKE, "rope_scaling": scaling})
    assert attention == pytest.approx(math.sqrt(1.25), rel=1e-15)


def test_the_top_level_original_length_wins_as_in_hugging_face():
    # the dict says 2048, the top level 4096: HF's standardize_rope_params keeps 4096, so 3000 tokens are still short
    scaling = {"type": "longrope", "original_max_position_embeddings": 2048, "short_factor": [1.0] * 8}
    scaling["long_factor"] = [2.0] * 8
    inv_freq, attention, _ = P.rope_from_config({**PHI3_LIKE, "rope_scaling": scaling}, seq_len=3000)
    np.testing.assert_allclose(inv_freq, plain(16), rtol=1e-14)
    assert attention == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)), rel=1e-15)


def test_phi3s_first_type_name_su_reads_as_longrope():
    scaling = {"type": "su", "short_factor": [1.0] * 8, "long_factor": [2.0] * 8}
    inv_freq, _, _ = P.rope_from_config({**PHI3_LIKE, "rope_scaling": scaling}, seq_len=5000)
    np.testing.assert_allclose(inv_freq, plain(16) / 2.0, rtol=1e-14)
