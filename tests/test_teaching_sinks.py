"""poslib.teaching.sinks: the weight a learned sink leaves to a row's keys, measured and predicted."""

import math

import numpy as np

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
