"""Notebook 13's checkers on the review's two cases (issue 44 review item 10): an angle 2π away is right, and a
count of turning pairs other than 2 is named as such."""

import numpy as np
import pytest

from poslib.exercises import nb13


@pytest.mark.parametrize("turns", [1, -1, 2, -3])
def test_an_angle_whole_turns_away_is_right(turns):
    feedback = nb13.check_value_turn(-2.0 + 2 * np.pi * turns)
    assert feedback.ok, feedback.message


def test_an_angle_off_by_less_than_a_turn_is_still_wrong():
    assert not nb13.check_value_turn(-2.0 + np.pi).ok


@pytest.mark.parametrize("n_turning", [1, 3, 4, 7])
def test_a_wrong_count_of_turning_pairs_is_named(n_turning):
    i = np.arange(8)
    feedback = nb13.check_proportional_freq(np.where(i < n_turning, 1e4 ** (-2.0 * i / 16), 0.0))
    assert not feedback.ok
    assert "too many or too few turning pairs" in feedback.message
