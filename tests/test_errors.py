"""Bad input raises ValueError/TypeError/IndexError whose message names the argument."""

import numpy as np
import pytest
import torch

import poslib as P

f8 = P.rope_frequencies(8)


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda: P.rope_inv_freq(7), ValueError, "head_dim"),
        (lambda: P.rope_frequencies(9), ValueError, "head_dim"),
        (lambda: P.rope_matrix(0, 5), ValueError, "head_dim"),
        (lambda: P.apply_rope(np.ones((3, 7)), np.arange(3), f8), ValueError, "head_dim"),
        (lambda: P.rope_inv_freq(8, base=0), ValueError, "base"),
        (lambda: P.rope_inv_freq(8, base=-1.0), ValueError, "base"),
        (lambda: P.sinusoidal_table(4, 8, base=0), ValueError, "base"),
        (lambda: P.rope_inv_freq(8, scaling={"rope_type": "linear", "factor": 0}), ValueError, "factor"),
        (lambda: P.rope_inv_freq(8, scaling={"rope_type": "linear", "factor": -2}), ValueError, "factor"),
        (lambda: P.rope_inv_freq(8, scaling={"rope_type": "linear"}), ValueError, "factor"),
        (
            lambda: P.rope_inv_freq(8, scaling={"rope_type": "yarn", "factor": 2}),
            ValueError,
            "original_max_position_embeddings",
        ),
        (
            lambda: P.rope_inv_freq(
                8, scaling={"rope_type": "llama3", "factor": 8, "original_max_position_embeddings": 64}
            ),
            ValueError,
            "low_freq_factor",
        ),
        (lambda: P.rope_inv_freq(8, scaling={"rope_type": "su", "factor": 2}), ValueError, "rope_type"),
        (lambda: P.rope_inv_freq(8, scaling={"factor": 2}), ValueError, "rope_type"),
        (lambda: P.alibi_slopes(0), ValueError, "n_heads"),
        (lambda: P.alibi_slopes(-3), ValueError, "n_heads"),
        (lambda: P.alibi_bias(4, 0, causal=True), ValueError, "q_len"),
        (lambda: P.learned_lookup(np.zeros((4, 2)), [5]), IndexError, "L_max"),
        (lambda: P.apply_rope(torch.ones(2, 8), np.arange(2), f8), TypeError, "positions is numpy"),
        (lambda: P.apply_rope(np.ones((2, 8)), torch.arange(2), f8), TypeError, "x is numpy"),
        (lambda: P.apply_rope(np.ones((3, 8)), np.arange(4), f8), ValueError, "positions"),
        (lambda: P.apply_rope(np.ones((3, 8)), np.arange(3), P.rope_frequencies(4)), ValueError, "inv_freq"),
        (lambda: P.apply_rope(np.ones(8), np.arange(1), f8), ValueError, "x must have shape"),
        (lambda: P.apply_rope(np.ones((2, 8), dtype=int), np.arange(2), f8), TypeError, "floating"),
        (lambda: P.apply_rope(np.ones((2, 8)), np.arange(2), f8, layout="neox"), ValueError, "layout"),
        (lambda: P.attention(np.ones((2, 4)), np.ones((2, 3)), np.ones((2, 3))), ValueError, "q and k"),
        (lambda: P.attention(np.ones((2, 4)), np.ones((3, 4)), np.ones((2, 4))), ValueError, "k and v"),
        (lambda: P.attention(torch.ones(2, 4), np.ones((2, 4)), np.ones((2, 4))), TypeError, "q is torch"),
        (lambda: P.kerple_bias(1.0, 3.0, q_len=3, k_len=3, kind="power")[0], ValueError, "r2"),
        (lambda: P.kerple_bias(-1.0, 1.0, q_len=3, k_len=3)[0], ValueError, "r1"),
        (lambda: P.kerple_bias(1.0, 1.0, q_len=3, k_len=3, kind="exp")[0], ValueError, "kind"),
        (lambda: P.t5_relative_bucket(np.arange(3), num_buckets=0), ValueError, "num_buckets"),
        (lambda: P.logn_scale(10, 1), ValueError, "train_len"),
        (lambda: P.sinusoidal_table(4, 8, backend="jax"), ValueError, "backend"),
        (
            lambda: P.transformer_xl_scores(np.ones((2, 4)), np.ones((2, 4)), np.ones((2, 4)), np.ones(4), np.ones(4)),
            ValueError,
            "r must have shape",
        ),
        (
            lambda: P.deberta_scores(np.ones((2, 4)), np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 4))),
            ValueError,
            "q_r and k_r",
        ),
    ],
)
def test_bad_input_is_named(call, exc, words):
    with pytest.raises(exc, match=words):
        call()
