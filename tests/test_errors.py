"""Bad input raises ValueError/TypeError/IndexError whose message names the argument."""

import numpy as np
import pytest
import torch

import poslib as P
from poslib import teaching

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


THETA = P.rope_frequencies(128)


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: P.rope_unseen_angle(THETA, 0, 10), "train_len"),
        (lambda: P.rope_unseen_angle(THETA, 10, 2.5), "infer_len"),
        (lambda: P.rope_unseen_angle(-THETA, 10, 20), "inv_freq"),
        (lambda: teaching.attention_entropy_vs_length([], 8), "lengths"),
        (lambda: teaching.attention_entropy_vs_length([8, 0]), "lengths"),
        (lambda: teaching.attention_entropy_vs_length([8], score_std=0), "score_std"),
        (lambda: teaching.attention_entropy_vs_length([8], 0), "train_len"),
        (
            lambda: P.rope_cache_drift(
                8, 10000.0, {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4}, 0
            ),
            "seq_len",
        ),
        (lambda: P.alibi_receptive_field(P.alibi_slopes(4), 1.0), "mass"),
        (lambda: P.alibi_receptive_field(P.alibi_slopes(4), 0.9, length=0), "length"),
        (lambda: P.alibi_receptive_field(np.array([0.5, -1.0])), "slopes"),
    ],
)
def test_bad_input_is_named_in_rope_diagnostics_entropy_and_alibi_reach(call, word):
    with pytest.raises(ValueError, match=word):
        call()


# ---------- named errors ----------
@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda: P.fire_inputs(4, c=0.0), ValueError, "c must be"),
        (lambda: P.fire_inputs(4, L=-1.0), ValueError, "L must be"),
        (lambda: P.fire_inputs(4, c=torch.tensor(1.0), L=np.array([3.0])), TypeError, "mixed"),
        (
            lambda: P.fire_bias(np.ones(3), np.ones(2), np.ones((1, 3)), np.ones(1), q_len=4, k_len=4, causal=True),
            ValueError,
            "w1 and b1",
        ),
        (
            lambda: P.fire_bias(np.ones(3), np.ones(3), np.ones((1, 2)), np.ones(1), q_len=4, k_len=4, causal=True),
            ValueError,
            "w2",
        ),
        (
            lambda: P.fire_bias(np.ones(3), torch.ones(3), np.ones((1, 3)), np.ones(1), q_len=4, k_len=4, causal=True),
            TypeError,
            "mixed",
        ),
        (lambda: P.fire_weights_from_bias(np.ones(5)), ValueError, "values"),
        (lambda: P.fire_weights_from_bias(np.ones((2, 5)), L=2.0), ValueError, "L must be ≥"),
        (lambda: P.FireBias(2, c_init=0.0), ValueError, "c_init"),
        (lambda: P.cope_positions(np.ones(3)), ValueError, "gate_logits"),
        (lambda: P.cope_positions(np.ones((3, 3)), max_pos=0), ValueError, "max_pos"),
        (lambda: P.cope_bias(np.ones((3, 4)), np.ones((3, 3)), np.ones((5, 3))), ValueError, "pos_emb"),
        (lambda: P.cope_bias(np.ones((3, 4)), np.ones((2, 3)), np.ones((5, 4))), ValueError, "gate_logits"),
        (lambda: P.cope_bias(np.ones((3, 4)), torch.ones(3, 3), np.ones((5, 4))), TypeError, "mixed"),
        (lambda: P.CoPE(0, 4), ValueError, "max_pos"),
        (lambda: P.randomized_positions(0, 4), ValueError, "n must be"),
        (lambda: P.randomized_positions(5, 4), ValueError, "max_pos"),
        (lambda: P.randomized_positions(2, 4, seed=1.5), TypeError, "seed"),
    ],
)
def test_bad_input_is_named_in_fire_cope_and_randomized(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


# ---------- issue 38: FoX, stick-breaking, PaTH, Dual Chunk Attention ----------
Q4 = np.ones((2, 3, 4, 8))


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (
            lambda: P.forgetting_attention(Q4, Q4, Q4, np.full((2, 3, 4), 0.5)),
            ValueError,
            "log_f must be finite and ≤ 0",
        ),
        (
            lambda: P.forgetting_attention(Q4, Q4, Q4, np.zeros((2, 3, 5))),
            ValueError,
            r"log_f must have shape \(2, 3, 4\)",
        ),
        (lambda: P.forgetting_attention(Q4, Q4, Q4, torch.zeros(2, 3, 4)), TypeError, "mixed"),
        (lambda: P.forgetting_attention(Q4, Q4[..., :4], Q4, np.zeros((2, 3, 4))), ValueError, "q and k"),
        (
            lambda: P.stickbreaking_attention(Q4, Q4[:, :, :3], Q4[:, :, :3]),
            ValueError,
            "q must have at most k_len = 3",
        ),
        (lambda: P.stickbreaking_attention(Q4, Q4, Q4[:, :, :3]), ValueError, "k and v"),
        (lambda: P.stickbreaking_attention(Q4, Q4[0], Q4[0]), ValueError, "leading axes"),
        (lambda: P.stickbreaking_attention(Q4[0, 0, 0], Q4, Q4), ValueError, "q must have shape"),
        (lambda: P.stickbreaking_attention(Q4, Q4, Q4, scale="1/8"), ValueError, "scale"),
        (lambda: P.path_attention(Q4, Q4, Q4, Q4[..., :4], np.ones((2, 3, 4))), ValueError, "w must have shape"),
        (lambda: P.path_attention(Q4, Q4, Q4, Q4, np.ones((2, 3))), ValueError, r"beta must have shape \(2, 3, 4\)"),
        (lambda: P.path_attention(Q4, Q4, Q4, Q4, np.ones((2, 3, 4)), log_f=np.ones((2, 3, 4))), ValueError, "log_f"),
        (
            lambda: P.dual_chunk_attention(Q4, Q4, Q4, chunk_size=2, local_window=2),
            ValueError,
            "chunk_size must be larger",
        ),
        (lambda: P.dual_chunk_attention(Q4, Q4, Q4, chunk_size=3, local_window=-1), ValueError, "local_window"),
        (
            lambda: P.dual_chunk_attention(Q4[..., :7], Q4[..., :7], Q4, chunk_size=3, local_window=1),
            ValueError,
            "head_dim",
        ),
        (lambda: P.dual_chunk_attention(Q4, Q4, Q4, chunk_size=3, local_window=1, base=0), ValueError, "base"),
        (lambda: P.dual_chunk_relative_positions(5, 3, chunk_size=3, local_window=1), ValueError, "q_len"),
        (lambda: P.dual_chunk_relative_positions(4, chunk_size=0, local_window=0), ValueError, "chunk_size"),
    ],
)
def test_bad_input_is_named_in_the_attention_variants(call, exc, words):
    with pytest.raises(exc, match=words):
        call()
