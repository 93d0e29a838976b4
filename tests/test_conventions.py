"""Conventions the planted bugs in tests/planted_bugs/absolute.py attack and no other unit test pinned down.

Each test states one convention against a value written out by hand (not by calling another poslib function
that could carry the same mistake): the sign of T5's relative position, DeBERTa-v2's log buckets at their
boundary, the causal mask's diagonal, and Transformer-XL's R_{i−j}.
"""

import math

import numpy as np
import torch

import poslib as P


def test_t5_relative_position_is_key_minus_query():
    rel = P.t5_relative_positions(3, 4)  # the 3 queries are the last 3 of 4 positions: 1, 2, 3
    assert rel[0, 3] == 2 and rel[2, 0] == -3  # key − query: a key after the query is positive
    # and the bias reads the bucket of key − query: query 0 (position 1), key 3 uses upper-half bucket 16 + 2
    table = np.arange(32.0)[:, None]
    assert P.t5_bias(table, 3, 4)[0, 0, 3] == 18.0 and P.t5_bias(table, 3, 4)[0, 2, 0] == 3.0


def test_every_bias_builder_puts_the_queries_last():
    # q_len < k_len: the rows of the square (k_len, k_len) bias for the last q_len positions (a KV cache)
    table, w = np.arange(64.0).reshape(32, 2), np.linspace(0.1, 0.9, 4)
    square_and_short = [
        lambda q: P.alibi_bias(3, q, 7),
        lambda q: P.kerple_bias(np.array([0.5, 2.0]), 1.0, q, 7, kind="power"),
        lambda q: P.sandwich_bias(3, 16, q, 7),
        lambda q: P.t5_bias(table, q, 7),
        lambda q: P.fire_bias(w, w, np.outer([1.0, -1.0], w), np.zeros(2), q, 7, L=3.0),
    ]
    for build in square_and_short:
        short, square = build(2), build(7)
        assert short.shape == (square.shape[0], 2, 7)
        np.testing.assert_array_equal(short, square[:, -2:])


def test_deberta_log_bucket_reaches_255_exactly_at_511():
    # DeBERTa-v2's make_log_bucket_position, written out: mid + ceil(log(|r|/mid) / log((max_pos − 1)/mid) · (mid − 1))
    mid, max_pos = 128, 512

    def ref(r: int) -> int:
        if abs(r) <= mid:
            return r
        return int(
            math.copysign(mid + math.ceil(math.log(abs(r) / mid) / math.log((max_pos - 1) / mid) * (mid - 1)), r)
        )

    r = np.array([129, 200, 300, 400, 511, 600, -129, -511])
    np.testing.assert_array_equal(P.deberta_log_bucket(r, 256, max_pos), [ref(int(x)) for x in r])
    assert P.deberta_log_bucket(np.array([511]), 256, max_pos)[0] == 255


def test_causal_mask_keeps_the_diagonal_and_hides_the_future():
    np.testing.assert_array_equal(P.causal_mask(3), [[True, False, False], [True, True, False], [True, True, True]])
    q, k, v = (torch.randn(2, 5, 4, dtype=torch.float64) for _ in range(3))
    out, _ = P.attention(q, k, v, causal=True)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, ref)


def test_transformer_xl_encodings_are_r_of_i_minus_j():
    # offsets run from −(q_len − 1) to k_len − 1; row 0 is R at offset i − j = −(q_len − 1): its sine half is negative
    enc = P.transformer_xl_encodings(3, 3, 4)
    np.testing.assert_allclose(enc[0], [math.sin(-2), math.sin(-0.02), math.cos(2), math.cos(0.02)], atol=1e-12)
    np.testing.assert_allclose(enc[4], [math.sin(2), math.sin(0.02), math.cos(2), math.cos(0.02)], atol=1e-12)


def test_learned_lookup_never_clamps():
    table = torch.zeros(4, 2)
    for bad in ([4], [0, 7], [-1]):
        try:
            P.learned_lookup(table, torch.tensor(bad))
        except IndexError:
            continue
        raise AssertionError(f"learned_lookup returned rows for positions {bad} outside a 4-row table")
