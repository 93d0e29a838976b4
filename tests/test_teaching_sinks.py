"""poslib.teaching.sinks: the weight a learned sink leaves to a row's keys, measured and predicted."""

import math

import numpy as np
import pytest

from poslib.teaching import sinks


def test_prediction_is_the_formula():
    got = sinks.key_mass_predicted([1, 100], [0.0, 3.0], score_std=0.5)
    n = np.array([1.0, 100.0]) * math.exp(0.125)
    np.testing.assert_allclose(got, [n / (n + 1.0), n / (n + math.exp(3.0))], rtol=1e-14)


def test_measured_mass_matches_the_large_n_prediction_on_two_seed_sets():
    # the median over seeds (one row's Σ e^z spreads by √((e − 1)/N), so single rows may stray by ~0.06)
    lengths, logits = [256, 2048], [0.0, 4.0, 6.0]
    predicted = sinks.key_mass_predicted(lengths, logits)
    for seeds in (range(20), range(100, 120)):
        mass = sinks.key_mass_with_sink(lengths, logits, seeds)
        assert mass.shape == (20, 3, 2)
        assert np.median(np.abs(mass - predicted), axis=0).max() < 0.03


def test_short_rows_give_most_of_the_row_to_a_large_sink():
    mass = sinks.key_mass_with_sink([4], [4.0], range(200))
    assert np.median(1 - mass) > 0.8
    assert np.all((mass > 0) & (mass < 1))


def test_streaming_cache_keeps_the_sinks_and_the_window_and_counts_positions_inside_it():
    kept, pos = sinks.streaming_cache(10_000, n_sink=4, window=248)
    np.testing.assert_array_equal(kept, np.r_[0:4, 9752:10_000])
    np.testing.assert_array_equal(pos, np.arange(252))
    kept, pos = sinks.streaming_cache(100, n_sink=4, window=248)  # not full yet: every token, positions = text
    np.testing.assert_array_equal(kept, np.arange(100))
    np.testing.assert_array_equal(pos, kept)
    kept, _ = sinks.streaming_cache(253, n_sink=4, window=248)  # the first eviction: token 4
    assert 4 not in kept and len(kept) == 252 and kept[-1] == 252
    kept, pos = sinks.streaming_cache(3, n_sink=4, window=248)
    np.testing.assert_array_equal(kept, [0, 1, 2])


def test_streaming_cache_gives_rope_the_same_positions_at_every_step_once_full():
    steps = [sinks.streaming_cache(t, n_sink=2, window=30)[1] for t in (32, 500, 10**6)]
    assert all(np.array_equal(steps[0], p) for p in steps) and steps[0].max() == 31


def test_streaming_cache_rejects_empty_arguments():
    with pytest.raises(ValueError, match="n_tokens"):
        sinks.streaming_cache(0)
