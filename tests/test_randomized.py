"""Randomized positions (poslib.randomized)."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import poslib as P
from poslib.randomized import uniformity_z


# ---------- randomized positions ----------
@given(n=st.integers(1, 64), extra=st.integers(0, 500), seed=st.integers(0, 2**32 - 1))
def test_randomized_positions_are_sorted_distinct_and_in_range(n, extra, seed):
    p = P.randomized_positions(n, n + extra, seed=seed)
    assert p.shape == (n,) and p.dtype == np.int64
    assert (np.diff(p) > 0).all() and p[0] >= 0 and p[-1] < n + extra


def test_randomized_positions_are_seeded_and_fresh_per_draw():
    a, b = P.randomized_positions(16, 1024, seed=3), P.randomized_positions(16, 1024, seed=3)
    np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(3)
    first, second = P.randomized_positions(16, 1024, seed=g), P.randomized_positions(16, 1024, seed=g)
    np.testing.assert_array_equal(first, a)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(P.randomized_positions(8, 8, seed=0), np.arange(8))  # the whole range
    # over many draws every position of the range is used (unlike training at 0 … n − 1)
    seen = np.unique(np.concatenate([P.randomized_positions(16, 256, seed=g) for _ in range(200)]))
    assert len(seen) == 256


def _lab_draws(seed, steps=600, n=64, max_pos=2048, sampler=None):
    g = np.random.default_rng(seed)
    draw = sampler or (lambda: P.randomized_positions(n, max_pos, seed=g))
    return np.stack([draw() for _ in range(steps)])


def test_uniformity_z_passes_the_uniform_sampler_over_seeds():
    # The lab's setting (64 of 2048, 600 steps), 20 seeds: z is about N(0, 1) (a little narrower,
    # positions within a draw are distinct), never near the notebook's bound of 4.
    zs = np.array([uniformity_z(_lab_draws(seed), 2048) for seed in range(20)])
    assert np.abs(zs).max() < 4 and abs(zs.mean()) < 1 and 0.3 < zs.std() < 1.5


def test_uniformity_z_flags_biased_samplers():
    g = np.random.default_rng(0)
    always_zero = lambda: np.sort(np.append(0, g.choice(np.arange(1, 2048), 63, replace=False)))  # noqa: E731
    low_half = lambda: np.sort(g.choice(1024, 64, replace=False))  # noqa: E731
    ramp = np.linspace(1.5, 0.5, 2048)
    tilted = lambda: np.sort(g.choice(2048, 64, replace=False, p=ramp / ramp.sum()))  # noqa: E731
    for sampler in (always_zero, low_half, tilted):
        assert uniformity_z(_lab_draws(0, sampler=sampler), 2048) > 8


def test_uniformity_z_rejects_bad_input():
    import pytest

    with pytest.raises(ValueError, match="draws must lie"):
        uniformity_z(np.array([0, 64]), 64)
    with pytest.raises(ValueError, match="bins"):
        uniformity_z(np.array([0, 1]), 64, bins=1)
    with pytest.raises(ValueError, match="integer"):
        uniformity_z(np.array([0.5]), 64)


def test_lab_evaluate_feeds_rope_random_fresh_random_positions(monkeypatch):
    # what notebook 10's spacing table reads: the positions lab.evaluate passes to the model itself
    import torch

    from poslib import lab

    fed = []
    forward = lab.LabModel.forward

    def spy(self, idx, modifier=None, positions=None):
        fed.append((idx.shape[1], positions))
        return forward(self, idx, modifier, positions)

    monkeypatch.setattr(lab.LabModel, "forward", spy)
    model = lab.LabModel("rope+random", lab.ModelConfig(train_len=16, d_model=16, n_layers=1, n_heads=2))
    N = model.random_max_pos()
    spans = torch.as_tensor(np.random.default_rng(0).integers(0, 256, (4, 257)))
    lab.evaluate(model, spans, (16, 256), batch_tokens=256)
    assert len(fed) == 8 and {T for T, _ in fed} == {16, 256}
    for T, p in fed:
        p = p.numpy()
        assert p.shape == (T,) and (np.diff(p) > 0).all() and 0 <= p[0] and p[-1] < N
        assert p[-1] > T  # spread over 0 … N − 1, not 0 … T − 1
    assert len({p.numpy().tobytes() for _, p in fed}) == 8  # a fresh draw per forward pass
    gaps = np.diff(np.stack([p.numpy() for T, p in fed if T == 256]), axis=1)
    assert abs(gaps.mean() / (N / 257) - 1) < 0.05  # mean gap ≈ N_max/(L' + 1): denser than training's
