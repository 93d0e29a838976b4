"""Learned absolute position embeddings (poslib.learned)."""

import numpy as np
import pytest
import torch

import poslib as P


def test_learned_lookup_never_clamps():
    table = torch.zeros(4, 2)
    for bad in ([4], [0, 7], [-1]):
        try:
            P.learned_lookup(table, torch.tensor(bad))
        except IndexError:
            continue
        raise AssertionError(f"learned_lookup returned rows for positions {bad} outside a 4-row table")


def test_learned_lookup_and_bounds():
    table = np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(P.learned_lookup(table, [0, 3]), table[[0, 3]])
    with pytest.raises(IndexError, match="L_max = 4"):
        P.learned_lookup(table, [1, 4])
    with pytest.raises(IndexError, match="-1"):
        P.learned_lookup(table, [-1])
    with pytest.raises(TypeError, match="positions must be integers"):
        P.learned_lookup(table, [0.5])


def test_learned_module_gets_gradients_only_on_used_rows():
    emb = P.LearnedPositionalEmbedding(10, 4)
    emb(torch.arange(3)).sum().backward()
    assert emb.weight.grad[:3].abs().sum() > 0 and emb.weight.grad[3:].abs().sum() == 0
    with pytest.raises(IndexError, match="L_max = 10"):
        emb(torch.arange(11))
