"""The shared grading of poslib/exercises/_base.py names the slip in plain words: an index shifted by one
before a constant factor, the factor as "0.866 × the expected value", and a right answer that ends with
the exercise's takeaway (the sentence answering the question it asked). The wrong answers are the ones
quoted in issue 24."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import types

import numpy as np

from poslib import exercises
from poslib.exercises import _base
from poslib.exercises._base import Exercise, Feedback, Mistake, check_array, check_int, plain_check

D, BASE = 16, 10_000.0


def wavelengths(pairs: np.ndarray) -> np.ndarray:
    return 2 * np.pi * BASE ** (2 * pairs / D)


def test_pairs_one_to_eight_is_an_off_by_one_not_a_factor() -> None:
    # Issue 24: Exercise 3.1 answered for pairs 1 … 8 instead of 0 … 7 was "scale: answer is the answer
    # times 3.16". It is the expected array moved one place; that it is also 10000^(1/8) × is said second.
    nb03 = exercises.module("03")
    feedback = nb03.check_wavelengths(wavelengths(np.arange(1, 9)))
    assert feedback.ok is False
    assert feedback.message.startswith("off by one:"), feedback
    assert "k + 1" in feedback.message and "start at 1 instead of 0" in feedback.message, feedback
    assert f"{BASE ** (1 / 8):.3g} × the expected value" in feedback.message, feedback  # 3.16, the geometric ratio
    assert "answer is the answer" not in feedback.message


def test_a_shift_the_other_way_and_along_an_axis() -> None:
    want = np.arange(12.0).reshape(3, 4) ** 2
    behind = np.roll(want, 1, axis=1)
    behind[:, 0] = -7.0  # the entry with nothing before it is whatever the learner's loop made
    feedback = check_array(behind, want, what="a 3 × 4 table")
    assert feedback.message.startswith("off by one:") and "along axis 1" in feedback.message, feedback
    assert "expected entry k − 1" in feedback.message, feedback
    assert "geometric" not in feedback.message  # squares are not a constant factor apart


def test_a_constant_array_is_not_called_shifted() -> None:
    # Along a constant row every answer equal on the overlap "looks shifted"; that must not be claimed.
    want = np.full(5, 2.0)
    got = want.copy()
    got[-1] = 3.0
    feedback = check_array(got, want, what="five numbers")
    assert feedback.message.startswith("values:") and "at entry 4" in feedback.message, feedback


def test_a_constant_factor_in_plain_words() -> None:
    # Issue 24 quoted "scale: answer is the answer times 0.865964 (a missing or extra constant factor)".
    want = wavelengths(np.arange(8))
    feedback = check_array(0.865964 * want, want, what="8 wavelengths")
    assert feedback.message == (
        "scale: your answer is 0.866 × the expected value (a missing or extra constant factor?)"
    ), feedback
    named = check_array(2 * want, want, what="8 wavelengths", name="lam")
    assert named.message.startswith("scale: `lam` is 2 × the expected value"), named


def test_no_message_calls_the_expected_value_the_answer() -> None:
    want = np.array([[1.0, 2.0], [3.0, 4.0]])
    for got in (-want, want.T, np.degrees(want), want + np.array([[0, 0], [0, 1e-3]]), 3 * want):
        message = check_array(got, want, what="a 2 × 2 matrix").message
        assert "the answer" not in message and message.split(": ", 1)[1].startswith("your answer"), message
    assert check_int(8, 7, what="a count").message == "off by one: your answer, 8, is one more than the expected count"
    assert check_int(6, 7, what="a count").message == "off by one: your answer, 6, is one fewer than the expected count"
    assert check_int(3, 7, what="a count").message == "values: your answer, 3, is not the expected count"


def make_module() -> types.ModuleType:
    """A throwaway exercise module, as an nbNN.py is: a checker defined by name, then EXERCISES."""
    module = types.ModuleType("poslib.exercises._nb_test_takeaway")

    def check_count(answer: object) -> Feedback:
        return check_int(answer, 7, what="a count")

    check_count.__module__ = module.__name__
    module.check_count = check_count  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    return module


def test_takeaway_ends_a_right_answer_and_reaches_the_cell_that_calls_the_checker_by_name() -> None:
    module = make_module()
    plain = module.check_count
    takeaway = "So 7 columns finish a cycle inside the 128 positions drawn."
    try:
        ex = Exercise(
            key="count",
            title="t",
            prompt="p",
            hint="h",
            setup="",
            stub="answer = None",
            solution="answer = 7",
            check=plain,
            mistakes=(Mistake("answer = 8", "off by one"), Mistake("answer = 3", "values")),
            takeaway=lambda: takeaway,
        )
        # The notebook cell runs `nbNN.check_count(answer)`: the module's name now grades with the takeaway.
        for check in (ex.check, module.check_count):
            right = check(7)
            assert right.ok is True and right.message == f"your answer is right. {takeaway}", right
            assert repr(right) == f"correct: your answer is right. {takeaway}"
            assert takeaway not in check(8).message and check(None).ok is None  # only a right answer gets it
        assert plain_check(module.check_count) is plain and module.check_count.__name__ == "check_count"
        # A copy (as tests make with dataclasses.replace) wraps the plain checker once, not twice.
        again = dataclasses.replace(ex, title="t2")
        assert again.check(7).message.count(takeaway) == 1 and module.check_count(7).message.count(takeaway) == 1
    finally:
        del sys.modules[module.__name__]


def test_without_a_takeaway_nothing_is_wrapped() -> None:
    module = make_module()
    plain = module.check_count
    try:
        ex = Exercise("count", "t", "p", "h", "", "answer = None", "answer = 7", plain, ())
        assert ex.takeaway is None and ex.check is plain and module.check_count is plain
        assert ex.check(7).message == "your answer is right."
    finally:
        del sys.modules[module.__name__]


def test_every_takeaway_is_a_sentence_shown_only_on_the_reference_solution() -> None:
    for nb in exercises.NOTEBOOKS:
        for ex in exercises.exercises(nb):
            if ex.takeaway is None:
                continue
            assert ex.takeaway().strip() == ex.takeaway() and ex.takeaway()[-1] in ".?!", (nb, ex.key, ex.takeaway())
            namespace: dict[str, object] = {"np": np, f"nb{nb}": exercises.module(nb)}
            exec(ex.setup, namespace)
            exec(ex.solution, namespace)
            assert ex.takeaway() in ex.check(namespace["answer"]).message, (nb, ex.key)
            # and the checker the notebook cell calls by name adds it too (compared by what it says: other tests
            # copy exercises with dataclasses.replace, which re-wraps the module's checker)
            by_name = getattr(exercises.module(nb), ex.check.__name__)
            assert ex.takeaway() in by_name(namespace["answer"]).message, (nb, ex.key)


def test_base_names_its_slips_in_order() -> None:
    # the index shift is tried before the constant factor (a shifted geometric sequence is both)
    source = _base._generic_slip.__code__.co_names
    assert source.index("_index_shift") < source.index("_constant_ratio"), source


def solved_feedback(nb: str, ex: Exercise) -> Feedback:
    """The verdict the notebook cell prints when the learner types the reference solution."""
    return ex.check(exercises.run_solution(nb, ex))


def test_every_exercise_ends_a_right_answer_with_its_takeaway() -> None:
    # Issue 24: "correct: answer is right." never answered the question the exercise asked.
    keys = [(nb, ex) for nb in exercises.NOTEBOOKS for ex in exercises.exercises(nb)]
    assert len(keys) >= 30 and {nb for nb, _ in keys} == set(exercises.NOTEBOOKS)
    for nb, ex in keys:
        assert ex.takeaway().startswith("So "), (nb, ex.key, ex.takeaway())
        feedback = solved_feedback(nb, ex)
        assert feedback.ok is True and feedback.message.endswith(" " + ex.takeaway()), (nb, ex.key, feedback)
        # the verdict before it speaks to the learner ("your answer is right."), never "answer is right."
        assert feedback.message.startswith("your "), (nb, ex.key, feedback)


# A number a takeaway prints must read the same on any machine: no rounding-level value (1.2e-16), no
# exponent with a padded zero (1e+09), no long tail of digits (0.8659640001), no nan (−inf is named as
# the mask's value in 07, so it is allowed).
_RAW = re.compile(r"e[-−]1\d|e[+\-−]?0\d|\d\.\d{4,}|\bnan\b")


def test_takeaways_print_rounded_numbers_with_true_minus_signs() -> None:
    for nb in exercises.NOTEBOOKS:
        for ex in exercises.exercises(nb):
            assert not _RAW.search(ex.takeaway()), (nb, ex.key, ex.takeaway())
            # a negative number is written with U+2212, as in the rest of the text ("−0.88", "−6 … −4")
            assert not re.search(r"(^|[\s(])-\d", ex.takeaway()), (nb, ex.key, ex.takeaway())


def takeaway(nb: str, key: str) -> str:
    return next(ex.takeaway() for ex in exercises.exercises(nb) if ex.key == key)


def test_takeaway_numbers_agree_with_an_independent_computation() -> None:
    # Each number derived here with plain Python (math, loops), not with the modules' constants or NumPy
    # expressions, then looked for in the sentence as the module formats it.
    assert f"reaches only {math.log(4096) / math.log(512):.3g} at N = 4096" in takeaway("00", "logn-factor")  # 12/9

    rows = takeaway("02", "untrained-rows")
    assert "rows 24 … 31, 8 of the 32" in rows and "beyond position 23" in rows

    lam = [2 * math.pi * 10_000 ** (2 * i / 16) for i in range(8)]
    waves = takeaway("03", "wavelengths")
    assert f"≈ {lam[1] / lam[0]:.2f} per pair" in waves and f"about {round(lam[7]):,} for pair 7" in waves

    dot = [sum(math.cos(10_000 ** (-2 * i / 16) * r) for i in range(8)) for r in range(21)]
    dip = min(range(21), key=lambda r: dot[r])
    back = max(range(dip, 21), key=lambda r: dot[r])
    rise = next(r for r in range(20) if dot[r + 1] > dot[r])
    top = next(r for r in range(rise, 20) if dot[r + 1] < dot[r])
    assert (rise, top, dip, back) == (3, 6, 10, 19)  # the first bump, the dip and the recovery, found by a scan
    dot_text = takeaway("03", "dot-by-offset")
    assert f"between offsets {rise} and {top} ({dot[rise]:.2f} → {dot[top]:.2f})" in dot_text
    assert f"{dot[dip]:.2f}, at offset {dip} and climbs back to {dot[back]:.2f} at offset {back}" in dot_text

    s16 = [2 ** (-h / 2) for h in range(1, 17)]  # ALiBi's 16-head slopes; the odd h are new to 12 heads
    assert f"get {', '.join(f'{mu:.3f}' for mu in s16[0:8:2])}, each geometrically halfway" in takeaway(
        "07", "slopes-12"
    )
    assert f"span {s16[0]:.3f} … 1/256" in takeaway("07", "slopes-12")

    rows_of = {r: min(max(r + 4, 0), 7) for r in range(-6, 7)}  # DeBERTa's δ, κ = 4, written out
    shared_first = [r for r, row in rows_of.items() if row == 0]
    shared_last = [r for r, row in rows_of.items() if row == 7]
    assert (shared_first, shared_last) == ([-6, -5, -4], [3, 4, 5, 6])
    assert "offsets −6 … −4 share row 0 and 3 … 6 share row 7; only −3 … 2" in takeaway("04", "deberta-delta")

    base = (4095 / (2 * math.pi)) ** (128 / 40)
    turns = 4095 * 10_000 ** (-40 / 128) / (2 * math.pi)
    never = takeaway("05", "never-turn-base")
    assert f"about {base / 1e9:.2f}e9" in never and f"turns {turns:.1f} times by position 4095" in never

    slow = [i for i in range(64) if 2 * math.pi * 10_000 ** (2 * i / 128) > 2048]
    assert f"So {len(slow)} of the 64 pairs, {slow[0]} … 63" in takeaway("06", "slow-pairs")
    assert f"to about {round(10_000 * 8 ** (128 / 126)):,}" in takeaway("06", "ntk-base")

    extra = ", ".join(f"{2 ** (-(2 * k + 1) / 2):.3f}" for k in range(4))  # 2^(−1/2), 2^(−3/2), …
    assert f"heads 9 … 12 get {extra}" in takeaway("07", "slopes-12")

    bits = [math.log(p, 2) for p in (3.3, 7.4, 33.1)]
    bpb = takeaway("08", "bits-per-byte")
    assert ", ".join(f"{b:.2f}" for b in bits) in bpb
    assert f"{(bits[2] - bits[0]) / (8 - bits[0]):.0%} of what it learned" in bpb
    z = [2.0, -1.0, 0.5, 1.5, 0.0]
    loss = math.log(sum(math.exp(v) for v in z)) - z[3]
    assert f"about {loss:.2f} nats" in takeaway("08", "cross-entropy")

    def never_turning(theta: float) -> int:
        return sum(2 * math.pi * theta ** (2 * i / 128) > 8192 for i in range(64))

    assert f"{never_turning(500_000)} of the 64 pairs (not {never_turning(10_000)})" in takeaway("09", "inv-freq")

    gates = [0.9, 0.1, 0.0, 1.0, 0.2, 0.7]
    cope = [sum(gates[n:]) for n in range(6)]  # p_n = Σ_{t=n}^{5} g_t
    assert ", ".join(f"{p:.1f}" for p in cope) in takeaway("10", "cope-positions")
    assert f"from {math.log(41) / math.log(65):.3f} at the farthest key" in takeaway("10", "fire-inputs")

    row = [min(7 - n, 3) for n in range(8)]  # ReRoPE, m = 7, w = 3: the clamp at w itself
    assert row == [3, 3, 3, 3, 3, 2, 1, 0]
    far = [n for n in range(8) if 7 - n >= 3]
    assert f"So keys {far[0]} … {far[-1]}, at true distances {7 - far[0]} … {7 - far[-1]}, all sit at distance 3" in (
        takeaway("11", "rerope-row")
    )
    assert "keys 5, 6, 7 keep 2, 1, 0" in takeaway("11", "rerope-row")

    def largest(G: int) -> int:  # Self-Extend, L' = 1024, W = 16: the last query against key 0
        return 1023 // G + 16 - 16 // G

    G = 1
    while largest(G) > 63:
        G += 1
    readme = 1
    while (64 - 16) * readme + 16 < 1024:  # LongLM's README: L' ≤ (L_train − W)·G + W
        readme += 1
    group = takeaway("11", "self-extend-group")
    assert (G, largest(G), readme, largest(readme)) == (22, 62, 21, 64)
    assert f"So G = {G}: the last query sees key 0 at distance ⌊1023/{G}⌋ + 16 − 0 = {largest(G)} ≤ 63" in group
    assert f"while G = {G - 1} gives {largest(G - 1)}, one past" in group
    assert f"admits G = {readme} too (48·{readme} + 16 = {48 * readme + 16})" in group
    assert f"a largest distance of {largest(readme)}" in group and f"{G} tokens in a row" in group

    b = 10_000 * 4 ** (16 / 14)  # NTK-aware base, head dimension 64/4 = 16, s = 4
    slower = [(b / 10_000) ** (2 * i / 16) for i in range(8)]  # θ_i / θ'_i: pair i turns this many times more slowly
    ntk = takeaway("11", "ntk-base")
    assert f"about {round(b):,}, {b / 10_000:.3g} times b" in ntk and f"d/(d − 2) = {16 / 14:.2f}" in ntk
    assert f"pair 7 turns exactly {slower[7]:.3g} times" in ntk and f"pair 3 only {slower[3]:.3g} times" in ntk
    assert (round(b), f"{slower[3]:.3g}") == (48761, "1.81")


def test_issue_24_wrong_answers_are_in_exercise_3_1_own_tuple() -> None:
    # test_exercises runs every Mistake of every exercise; these two are the issue's quotes.
    nb03 = exercises.module("03")
    (wavelengths_ex,) = [ex for ex in nb03.EXERCISES if ex.key == "wavelengths"]
    named = {m.code: m.names for m in wavelengths_ex.mistakes}
    assert named["answer = 2 * np.pi * base ** (2 * np.arange(1, d // 2 + 1) / d)"].startswith("off by one:")
    assert named["answer = np.pi * base ** (2 * np.arange(d // 2) / d)"] == (
        "scale: your answer is 0.5 × the expected value"
    )


def test_a_rounded_answer_is_called_rounding_not_a_factor_of_one():
    from poslib.exercises._base import check_array

    fb = check_array(48800.0, 48760.55, what="a number")
    assert fb.ok is False and fb.message.startswith("rounding:") and "0.081 %" in fb.message, fb.message
    assert "scale: your answer is 2 ×" in check_array(2.0, 1.0, what="a number").message


# Issue 34, item 21: answers whose slip the shared checks missed, each now named.


def test_exercise_0_1_accepts_the_value_its_takeaway_prints() -> None:
    # The takeaway answers "about 47,117 tokens"; typed back, that was "rounding: 0.00052 % off" at rtol 1e-6.
    nb00 = exercises.module("00")
    assert "about 47,117 tokens" in takeaway("00", "slowest-wavelength")
    for typed in (47117.0, 47117, 47116.8):
        assert nb00.check_slowest_wavelength(typed).ok is True, typed
    # a rounder number is still a rounding slip, and the diagnosed slips are still named
    assert nb00.check_slowest_wavelength(47000.0).message.startswith("rounding:")
    assert nb00.check_slowest_wavelength(2 * np.pi * 10_000.0).message.startswith("off by one:")


def test_right_values_in_the_wrong_order_are_named() -> None:
    nb07 = exercises.module("07")
    s8, s16 = 2.0 ** (-np.arange(1, 9)), 2.0 ** (-np.arange(1, 17) / 2)
    slopes = np.concatenate([s8, s16[0::2][:4]])
    assert nb07.check_slopes_12(slopes).ok is True
    said = {
        "reversed": nb07.check_slopes_12(slopes[::-1]).message,
        "descending": nb07.check_slopes_12(np.sort(slopes)[::-1]).message,
        "ascending": nb07.check_slopes_12(np.sort(slopes)).message,
        "shuffled": nb07.check_slopes_12(np.roll(slopes, 5)).message,
    }
    assert said["reversed"] == "order: your answer holds the expected values in reverse order", said
    assert said["descending"].startswith("order:") and "sorted from largest to smallest" in said["descending"], said
    assert said["ascending"].startswith("order:") and "sorted from smallest to largest" in said["ascending"], said
    assert said["shuffled"] == "order: your answer holds the expected values in a different order", said
    table = np.arange(12.0).reshape(3, 4) ** 2
    flipped = check_array(table[:, ::-1], table, what="a table").message
    assert flipped == "order: your answer holds the expected values in reverse order along axis 1", flipped
    # a list rolled by one place is still an index slip (the shift is tried before the order)
    rolled = check_array(np.roll(slopes, 1), slopes, what="12 slopes").message
    assert rolled.startswith("off by one:"), rolled


def test_the_identity_where_a_permutation_is_asked_is_named() -> None:
    # np.eye(3) against Π's rows e_1, e_2, e_0 was "off by one: … did the index start at −1?"
    nb01 = exercises.module("01")
    eye = nb01.check_permutation_matrix(np.eye(3)).message
    assert eye.startswith("identity: your answer is the identity matrix") and "off by one" not in eye, eye
    order = check_array(np.arange(4), [2, 0, 3, 1], what="an order").message
    assert order.startswith("identity: your answer is 0, 1, 2, … in order"), order
    # the other slips of Π keep their names
    assert nb01.check_permutation_matrix(np.eye(3)[[1, 2, 0]].T).message.startswith("transposed:")


def test_exercise_5_3_names_degrees_and_swapped_coordinates() -> None:
    nb05 = exercises.module("05")
    q, a = np.array([2.0, 1.0]), 1.5

    def rot(t: float, v: np.ndarray = q) -> np.ndarray:
        return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]) @ v

    assert nb05.check_rotated_pair(rot(a)).ok is True
    degrees = nb05.check_rotated_pair(rot(np.degrees(a))).message  # the angle in degrees, fed to np.cos
    assert degrees.startswith("units:") and "np.degrees turned mθ = 1.5 rad into 85.9" in degrees, degrees
    converted = nb05.check_rotated_pair(np.degrees(rot(a))).message  # the result × 180/π
    assert converted == "units: your answer looks like degrees, expected radians", converted
    swapped = nb05.check_rotated_pair(rot(a)[::-1]).message
    assert swapped.startswith("order:") and "x and y are swapped" in swapped, swapped
    swapped_q = nb05.check_rotated_pair(rot(a, q[::-1])).message
    assert swapped_q.startswith("order:") and "that rotates (1, 2)" in swapped_q, swapped_q


def test_exercise_9_3_names_the_factor_on_the_scores() -> None:
    # 1.2965 is (0.1 ln 4 + 1)², the factor on the scores; it was "scale: your answer is 1.14 × the expected value".
    nb09 = exercises.module("09")
    factor = 0.1 * np.log(4.0) + 1
    for typed in (factor**2, 1.2965):  # exact, and typed from a printout (1.8e-5 off)
        message = nb09.check_yarn_factor(typed).message
        assert message.startswith("square:") and "the factor on the scores" in message, (typed, message)
        assert "factor on cos and sin" in message and "scale" not in message, message


def test_the_square_or_square_root_of_the_expected_value_is_named() -> None:
    # the shared check, for any exercise without a diagnosis of its own
    factor = 0.1 * np.log(4.0) + 1
    assert check_array(1.2965, factor, what="x").message.startswith("square: your answer is the square")
    assert check_array(factor**2, factor, what="x").message.startswith("square: your answer is the square")
    assert check_array(np.sqrt([2.0, 3.0, 5.0]), [2.0, 3.0, 5.0], what="x").message.startswith("square root:")
    # never for a plain factor (4 for 2 is "2 ×") nor for a number within rounding of its square
    assert check_array(4.0, 2.0, what="x").message.startswith("scale: your answer is 2 ×")
    assert check_array(1.001, 1.0005, what="x").message.startswith("rounding:")


def test_a_wrong_length_is_a_length_unless_a_range_is_off_by_one() -> None:
    want = 1 / (np.arange(8) + 1)
    other = check_array(np.ones(7), want, what="8 weights").message  # was "off by one: … one entry too many or too few"
    assert other == "length: your answer has 7 entries, expected 8", other
    assert check_array(np.ones(3), want, what="8 weights").message == "length: your answer has 3 entries, expected 8"
    for got, why in (
        (want[:-1], "without the last one (did the range stop one short?)"),
        (want[1:], "without the first one (did the index start at 1 instead of 0?)"),
        (1 / (np.arange(9) + 1), "one more at the end (did the range include its end?)"),
        (np.concatenate([[2.0], want]), "one more at the start (did the index start at −1?)"),
    ):
        message = check_array(got, want, what="8 weights").message
        assert message.startswith(f"off by one: your answer has {len(got)} entries, expected 8: "), message
        assert message.endswith(why), message
    # a matrix one row short keeps its shape message: an off-by-one only when it is the expected one cut
    table = np.arange(12.0).reshape(3, 4)
    assert check_array(table[:2], table, what="x").message.startswith("off by one: your answer has shape (2, 4)")
    assert check_array(np.ones((2, 4)), table, what="x").message == (
        "shape: your answer has shape (2, 4), expected (3, 4)"
    )


def test_a_string_is_not_read_as_a_number() -> None:
    # np.asarray("47117.0", dtype=float) is 47117.0: the string was graded as a rounded number.
    nb00 = exercises.module("00")
    for text in ("47117.0", "47116.755"):
        message = nb00.check_slowest_wavelength(text).message
        assert message == "type: your answer is a string, not a number: write the number without quotes", message
    for held in (["1", "2"], np.array(["1.0", "2.0"]), [1.0, "2"]):
        message = check_array(held, [1.0, 2.0], what="x").message
        assert message.startswith("type: your answer holds strings, not numbers"), (held, message)
    assert check_array([1.0, 2.0], [1.0, 2.0], what="x").ok is True  # numbers stay numbers


def recorded_diagnoses() -> list[tuple[str, str, np.ndarray, list[tuple[str, np.ndarray]], float]]:
    """(notebook, exercise, expected value, diagnoses, rtol) of every check_array call a solution makes."""
    found = []
    for nb in exercises.NOTEBOOKS:
        module = exercises.module(nb)
        for ex in exercises.exercises(nb):
            if not hasattr(module, "check_array"):
                continue
            calls: list[tuple[object, dict[str, object]]] = []

            def recording(
                answer: object, expected: object, calls: list[tuple[object, dict[str, object]]] = calls, **kw: object
            ) -> Feedback:
                calls.append((expected, kw))
                return check_array(answer, expected, **kw)  # type: ignore[arg-type]

            module.check_array = recording  # type: ignore[attr-defined]
            try:
                ex.check(exercises.run_solution(nb, ex))
            finally:
                module.check_array = check_array  # type: ignore[attr-defined]
            for expected, kw in calls:
                slips = [(e, np.asarray(w, dtype=np.float64)) for e, w in kw.get("diagnoses", ())]  # type: ignore[attr-defined]
                found.append((nb, ex.key, np.asarray(expected, np.float64), slips, float(kw.get("rtol", 1e-6))))  # type: ignore[arg-type]
    return found


def test_diagnoses_lie_apart_so_a_typed_slip_is_never_confused() -> None:
    # A diagnosis matches within SLIP_RTOL (1e-4) so that a slip typed from a printout is named; that is safe
    # only while every diagnosis lies farther than both windows from the expected value and from the others.
    calls = recorded_diagnoses()
    assert len(calls) >= 25
    for nb, key, want, slips, rtol in calls:
        values = [("expected", want), *slips]
        for i, (name_a, a) in enumerate(values):
            for name_b, b in values[i + 1 :]:
                if name_a == name_b or a.shape != b.shape or not np.array_equal(np.isinf(a), np.isinf(b)):
                    continue
                finite = np.isfinite(a)
                gap = np.max(np.abs(a[finite] - b[finite]) / np.maximum(np.abs(b[finite]), 1e-12))
                assert gap > 2 * max(rtol, _base.SLIP_RTOL), (nb, key, name_a, name_b, gap)


def test_base_tries_the_new_slips_where_they_cannot_steal_a_better_name() -> None:
    names = _base._generic_slip.__code__.co_names
    # the identity before the shift (np.eye(3) looks shifted), the order after it (a roll is an index slip),
    # the square before the factor (a squared number is also that number × it)
    assert names.index("_identity") < names.index("_index_shift") < names.index("_order"), names
    assert names.index("_order") < names.index("_power") < names.index("_constant_ratio"), names
