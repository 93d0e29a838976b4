"""Notebook 12's exercises: the takeaways' numbers from an independent computation, and the slips the brief names."""

import math

import numpy as np

from poslib.exercises import nb12


def takeaway(key: str) -> str:
    return next(ex.takeaway() for ex in nb12.EXERCISES if ex.key == key)


def test_takeaway_numbers_agree_with_loops():
    log_f = [-0.1, -0.5, -0.2, -2.0, -0.3, -0.1]
    row = [sum(log_f[j + 1 :]) for j in range(6)]
    assert f"get −{-row[0]:.1f} … −{-row[2]:.1f}" in takeaway("fox-bias")
    assert f"only −{-row[3]:.1f}" in takeaway("fox-bias")
    spent = sum(0.3 * 0.7 ** (t - 1) for t in range(1, 7))
    assert f"take {100 * spent:.1f}% of the stick and {100 * 0.7**6:.1f}%" in takeaway("stick-weights")
    assert f"turn by 50° = {math.radians(50):.3f} rad" in takeaway("reflection-angle")


def test_each_named_slip_gets_its_message():
    t = np.arange(1, 7)
    cases = [
        (nb12.check_fox_bias, np.cumsum(nb12.LOG_F)[-1] - np.cumsum(nb12.LOG_F) + nb12.LOG_F, "from n"),
        (nb12.check_fox_bias, np.cumsum(nb12.LOG_F) - np.cumsum(nb12.LOG_F)[-1], "sign"),
        (nb12.check_stick_weights, 0.3 * 0.7**t, "one break too many"),
        (nb12.check_stick_weights, 0.3 * 0.7 ** (t - 1) / (0.3 * 0.7 ** (t - 1)).sum(), "normalised"),
        (nb12.check_reflection_angle, math.radians(25), "twice it"),
        (nb12.check_reflection_angle, 50.0, "degrees"),
        (nb12.check_reflection_angle, 25.0, "in degrees"),
        (nb12.check_reflection_angle, -math.radians(50), "sign"),
    ]
    for check, answer, name in cases:
        feedback = check(answer)
        assert feedback.ok is False and name in feedback.message, (name, feedback)
    assert nb12.check_reflection_angle(math.radians(50)).ok is True
    assert nb12.check_stick_weights(0.3 * 0.7 ** (t - 1)).ok is True
