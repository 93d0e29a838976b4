"""NoPE (poslib.nope): no positions at all."""

import numpy as np
import pytest
import torch

import poslib as P
from poslib.nope import bos_logit_advantage


def test_nope_is_identity():
    x = np.ones((2, 3))
    assert P.apply_nope(x, np.arange(2)) is x


def test_bos_logit_advantage_inverts_the_bos_weight():
    m = np.arange(40)
    for delta in (-1.0, 0.0, 1.5):
        w = np.exp(delta) / (np.exp(delta) + m)  # BOS Δ above m equal keys
        np.testing.assert_allclose(bos_logit_advantage(w), np.full(39, delta), atol=1e-12)
    np.testing.assert_allclose(bos_logit_advantage(1 / (m + 1)), np.zeros(39), atol=1e-12)  # uniform


def test_bos_logit_advantage_rejects_bad_weights():
    with pytest.raises(ValueError, match="one weight per query"):
        bos_logit_advantage(np.ones((2, 2)))
    with pytest.raises(ValueError, match="strictly between"):
        bos_logit_advantage(np.array([1.0, 1.0]))


def _probe_delta(probe, T):
    with torch.no_grad():
        x = torch.as_tensor(np.random.default_rng(1).integers(0, 16, (200, T)))
        x[:, 0] = 16  # BOS
        _, w = probe.forward_with_weights(x)
    return bos_logit_advantage(w[:, :, 0].mean(0).numpy())


def test_position_probe_learns_a_bos_advantage_an_untrained_one_lacks():
    # Notebook 10 §4: what training learns is Δ; the 1/(1 + m e^(−Δ)) shape holds for any probe.
    from poslib.teaching.toy_contextual import PositionProbe, train_position_probe

    untrained = []
    for seed in range(20):
        torch.manual_seed(seed)
        untrained.append(np.abs(_probe_delta(PositionProbe().eval(), 32)).max())
    assert max(untrained) < 0.5
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny model: one thread is fastest on a shared machine
    try:
        for seed in (0, 1):  # a short training (100 steps) already gives Δ ≥ 1.2 at every m < 32
            probe, _ = train_position_probe(train_len=32, steps=100, seed=seed)
            assert _probe_delta(probe, 32).min() > 1.0
    finally:
        torch.set_num_threads(threads)
