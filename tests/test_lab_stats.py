"""The lab's comparison rule (poslib.lab.stats, issue 45): Student's t from its tables, Holm by hand, the rule's
error rate on constructed results, and the committed verdicts it no longer supports."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import pathlib
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from poslib.lab.stats import (
    Relation,
    compare,
    compare_results,
    holm,
    holm_adjust,
    log_ratio_spreads,
    simulate_rule,
    student_t_cdf,
    t_quantile,
    two_sided_p,
)

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _seeds(values):
    return {str(i): v for i, v in enumerate(values)}


# ---- Student's t ----------------------------------------------------------------------------------------------------

# two-sided critical values of Student's t as printed in the usual tables (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2,
# three decimals): P(|T_ν| ≥ t) = p. Rounding t to 0.0005 moves p by less than 1e-4 at these ν.
TABLE = [
    (12.706, 1, 0.05),
    (4.303, 2, 0.05),
    (3.182, 3, 0.05),
    (2.776, 4, 0.05),
    (2.571, 5, 0.05),
    (2.365, 7, 0.05),
    (2.306, 8, 0.05),
    (2.228, 10, 0.05),
    (2.131, 15, 0.05),
    (2.086, 20, 0.05),
    (9.925, 2, 0.01),
    (3.499, 7, 0.01),
    (2.920, 2, 0.10),
    (1.860, 8, 0.10),
]


@pytest.mark.parametrize(("t", "df", "p"), TABLE)
def test_two_sided_p_matches_the_printed_t_table(t, df, p):
    assert abs(two_sided_p(t, df) - p) < 1e-4, two_sided_p(t, df)
    assert abs(two_sided_p(-t, df) - p) < 1e-4
    assert abs(t_quantile(1 - p / 2, df) - t) < 5e-4, t_quantile(1 - p / 2, df)


@given(st.floats(-50, 50), st.integers(1, 40))
def test_t_cdf_is_symmetric_and_has_the_closed_forms_of_one_and_two_degrees_of_freedom(t, df):
    assert student_t_cdf(-t, df) == pytest.approx(1 - student_t_cdf(t, df), abs=1e-12)
    assert student_t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-12)  # Cauchy
    assert student_t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-12)
    # a CDF, with heavier tails at fewer degrees of freedom (up to the last bits of a sum that reaches 1)
    assert student_t_cdf(t, df) <= student_t_cdf(t + 0.1, df) + 1e-15
    if t > 0:
        assert student_t_cdf(t, df) <= student_t_cdf(t, df + 1) + 1e-15


@given(st.floats(-6, 6))
def test_t_cdf_tends_to_the_normal_at_many_degrees_of_freedom(t):
    normal = 0.5 * (1 + math.erf(t / math.sqrt(2)))
    assert abs(student_t_cdf(t, 2000) - normal) < 2e-4


def test_t_functions_refuse_what_is_not_a_distribution():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="df must be an integer"):
            two_sided_p(1.0, bad)
    with pytest.raises(ValueError, match="q must lie strictly between 0 and 1"):
        t_quantile(1.0, 3)
    with pytest.raises(ValueError, match="t must be a number"):
        student_t_cdf(math.nan, 3)


# ---- the rule on constructed results ------------------------------------------------------------------------------

# A rule whose true false-winner rate were 5 % would exceed 5 % + 3 binomial standard errors (√(0.05·0.95/4000)
# = 0.34 points) in 4000 draws with probability 0.13 %; the draws are seeded, so the test is deterministic.
DRAWS = 4000
MARGIN = 3 * math.sqrt(0.05 * 0.95 / DRAWS)


@pytest.mark.parametrize("n", [3, 8])
def test_identical_schemes_with_spread_010_are_declared_different_in_at_most_5_percent_of_draws(n):
    rate = simulate_rule(0.10, 1.0, n, DRAWS, np.random.default_rng((45, n)))
    assert rate <= 0.05 + MARGIN, f"n = {n}: equal schemes named a winner in {100 * rate:.1f} % of {DRAWS} draws"


def test_a_real_x12_effect_at_spread_002_with_8_seeds_is_found():
    assert simulate_rule(0.02, 1.2, 8, 200, np.random.default_rng(12)) == 1.0
    rng = np.random.default_rng(3)
    b = _seeds(np.exp(rng.normal(2.0, 0.3, 8)).tolist())
    a = {k: v * math.exp(rng.normal(math.log(1.2), 0.02)) for k, v in b.items()}  # a worse on every seed by ×1.2
    c = compare("a", "b", a, b, length=512)
    assert c.relation is Relation.B_BEATS_A and c.favour_b == 8 and c.p < 1e-6
    assert c.low < 1.2 < c.high and c.effect == pytest.approx(1.2, rel=0.02)


def test_every_seed_agreeing_with_p_above_alpha_is_not_distinguished_and_says_3_of_3_favour_a():
    # log ratios −0.01, −0.20, −0.40: a lower on every seed, mean ×0.82 (beyond ×1.03), but t = −1.80 at 2 df
    b = _seeds([10.0, 12.0, 9.0])
    a = {k: v * math.exp(d) for (k, v), d in zip(b.items(), (-0.01, -0.20, -0.40), strict=True)}
    c = compare("a", "b", a, b, length=64)
    assert c.relation is Relation.NOT_DISTINGUISHED, c
    assert (c.favour_a, c.favour_b, c.n) == (3, 0, 3) and c.unanimous
    assert c.p > 0.05 and abs(c.t) == pytest.approx(1.80, abs=0.01)
    assert c.effect < 1 / 1.03 and c.low < 1 < c.high  # the effect is large; its interval still holds 1


def test_a_distinguished_effect_below_the_threshold_is_its_own_relation():
    b = _seeds([5.0, 6.0, 7.0, 8.0, 9.0])
    a = {k: v * 1.01 * (1 + 0.001 * i) for i, (k, v) in enumerate(b.items())}  # ×1.01 … ×1.014, all a higher
    c = compare("a", "b", a, b, length=64)
    assert c.p < 1e-4 and c.relation is Relation.BELOW_THRESHOLD and c.favour_b == 5


def test_passkey_differences_are_read_in_points_with_a_10_point_threshold():
    ones, zeros = _seeds([1.0, 1.0, 1.0]), _seeds([0.0, 0.0, 0.0])
    win = compare("a", "b", ones, zeros, metric="passkey", length=64)
    assert win.relation is Relation.A_BEATS_B and win.effect == 1.0 and win.p == 0.0  # every seed 100 points
    same = compare("a", "b", ones, ones, metric="passkey", length=64)
    assert same.relation is Relation.NOT_DISTINGUISHED and same.p == 1.0 and (same.favour_a, same.favour_b) == (0, 0)
    small = compare("a", "b", _seeds([0.95, 0.96, 0.94, 0.95]), _seeds([0.90, 0.90, 0.89, 0.91]), metric="passkey",
                    length=64)  # fmt: skip
    assert small.p < 0.05 and small.relation is Relation.BELOW_THRESHOLD and small.effect == pytest.approx(0.05)


positive = st.floats(0.5, 50, allow_nan=False)


@given(st.lists(st.tuples(positive, positive), min_size=2, max_size=10))
def test_b_against_a_is_a_against_b_mirrored(pairs):
    va, vb = _seeds([x for x, _ in pairs]), _seeds([y for _, y in pairs])
    ab, ba = compare("a", "b", va, vb, length=8), compare("b", "a", vb, va, length=8)
    mirror = {Relation.A_BEATS_B: Relation.B_BEATS_A, Relation.B_BEATS_A: Relation.A_BEATS_B}
    assert ba.relation is mirror.get(ab.relation, ab.relation)
    assert ba.p == pytest.approx(ab.p, abs=1e-12) and ba.t == -ab.t
    assert ba.effect * ab.effect == pytest.approx(1.0) and (ba.favour_a, ba.favour_b) == (ab.favour_b, ab.favour_a)


@given(st.lists(st.tuples(positive, positive), min_size=2, max_size=8), st.randoms(use_true_random=False))
def test_seeds_are_paired_by_id_not_by_the_order_they_are_stored_in(pairs, random):
    va, vb = _seeds([x for x, _ in pairs]), _seeds([y for _, y in pairs])
    keys = list(vb)
    random.shuffle(keys)
    shuffled = {k: vb[k] for k in keys}
    assert compare("a", "b", va, shuffled, length=8) == compare("a", "b", va, vb, length=8)


def test_bad_input_raises_a_value_error_naming_the_argument():
    good = _seeds([2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"values_a and values_b must hold the same seed ids.*\['0', '1', '3'\]"):
        compare("a", "b", good, {"0": 2.0, "1": 3.0, "3": 4.0}, length=64)
    with pytest.raises(ValueError, match="values_a holds 1 seed; a paired test needs at least 2"):
        compare("a", "b", {"0": 2.0}, {"0": 3.0}, length=64)
    with pytest.raises(
        ValueError, match=re.escape("values_b: seed '1' has perplexity 0.0; perplexities must be positive")
    ):
        compare("a", "b", good, {"0": 2.0, "1": 0.0, "2": 4.0}, length=64)
    with pytest.raises(ValueError, match=re.escape("values_a: seed '2' has perplexity -4.0")):
        compare("a", "b", {**good, "2": -4.0}, good, length=64)
    with pytest.raises(ValueError, match="values_a: seed '0' has nan, not a finite number"):
        compare("a", "b", {**good, "0": math.nan}, good, length=64)
    with pytest.raises(ValueError, match=re.escape("values_b: seed '0' has passkey accuracy 1.5")):
        compare("a", "b", _seeds([0.5, 0.5]), _seeds([1.5, 0.5]), metric="passkey", length=64)
    with pytest.raises(ValueError, match="metric must be 'ppl' or 'passkey'"):
        compare("a", "b", good, good, metric="bpb", length=64)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="length must be a positive integer"):
        compare("a", "b", good, good, length=0)
    with pytest.raises(ValueError, match="values_a must map seed ids to values"):
        compare("a", "b", [2.0, 3.0], good, length=64)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_seeds must be at least 2"):
        simulate_rule(0.1, 1.0, 1, 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="spread must be a finite number"):
        simulate_rule(-0.1, 1.0, 3, 10, np.random.default_rng(0))


# ---- Holm -----------------------------------------------------------------------------------------------------------


def test_holm_orders_and_adjusts_a_hand_worked_family():
    # sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → raised to 0.06 (step-down: monotone)
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjust([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm_adjust([]) == []

    b = _seeds([10.0, 11.0, 12.0])
    strong = compare("a", "b", {k: 0.8 * v for k, v in b.items()}, b, length=64)  # ×0.8 on every seed: p = 0
    family = [dataclasses.replace(strong, a=f"s{i}", p=p) for i, p in enumerate([0.01, 0.04, 0.03, 0.005])]
    out = holm(family)
    assert [c.a for c in out] == ["s0", "s1", "s2", "s3"]  # the input's order
    assert [c.p_holm for c in out] == pytest.approx([0.03, 0.06, 0.06, 0.02]) and {c.family for c in out} == {4}
    assert [c.relation for c in out] == [
        Relation.A_BEATS_B,
        Relation.NOT_DISTINGUISHED,  # raw p 0.04 ≤ 0.05, but not after Holm
        Relation.NOT_DISTINGUISHED,
        Relation.A_BEATS_B,
    ]
    assert [c.p for c in out] == [0.01, 0.04, 0.03, 0.005]  # the raw p values are kept


@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_never_lowers_a_p_value_and_keeps_their_order(ps):
    adjusted = holm_adjust(ps)
    assert all(p <= q <= 1 for p, q in zip(ps, adjusted, strict=True))
    order = sorted(range(len(ps)), key=ps.__getitem__)
    assert all(adjusted[i] <= adjusted[j] for i, j in itertools.pairwise(order))
    assert holm_adjust(ps[:1]) == ps[:1]  # a family of one is unadjusted


# ---- the committed runs ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lab():
    return json.loads((ROOT / "results" / "lab.json").read_text())


def test_issue_45s_beats_with_a_small_t_are_not_distinguished_at_3_seeds(lab):
    # issue 45 lists these "beats" of notebook 08 with a paired t below 4.30, the 5 % cut at 2 degrees of freedom,
    # read on the file's first three seeds (the ones the issue had; results/lab.json now holds eight)
    first3 = {**lab, "runs": {s: {k: r[k] for k in "012"} for s, r in lab["runs"].items()}}
    small_t = [("sinusoidal", "rope", 2.1), ("t5", "nope", 2.5), ("alibi", "t5", 2.8), ("rope+ntk", "rope+yarn", 2.4)]
    for a, b, t in small_t:
        c = compare_results(first3, a, b, 8)
        assert c is not None and c.relation is Relation.NOT_DISTINGUISHED, c
        assert abs(c.t) == pytest.approx(t, abs=0.05) and (c.favour_a, c.n) == (3, 3) and c.length == 512
    alibi_rope = compare_results(first3, "alibi", "rope", 1)  # ×1.18 at L_train, t = 21: still decided
    assert alibi_rope is not None and alibi_rope.relation is Relation.B_BEATS_A and alibi_rope.p < 0.01


def test_measured_spreads_are_the_ones_docs_lab_md_states(lab):
    doc = (ROOT / "docs" / "lab.md").read_text(encoding="utf-8")
    runs = [lab] + [
        json.loads((ROOT / "results" / f).read_text()) for f in ("lab_full.json", "lab_extend_plateau.json")
    ]
    by_file = [log_ratio_spreads(r) for r in runs]
    for m in (1, 2, 4, 8, 16):
        pooled = [s for spreads in by_file for s in spreads[m]]
        cells = [f"{np.median(spreads[m]):.3f}" for spreads in by_file] + [f"{np.median(pooled):.3f} ({len(pooled)})"]
        assert f"| {m} × | " + " | ".join(cells) + " |" in doc, cells
    spreads = by_file[0]
    # every pair of 18 schemes but the 16 read twice the same way: at L_train rope's five inference variants (PI,
    # NTK, … at factor 1) are the rope model itself (15 pairs), and alibi+logn is alibi (log-n scales nothing there)
    at_1 = {s: [r["ppl"]["64"] for r in seeds.values()] for s, seeds in lab["runs"].items()}
    same = sum(at_1[x] == at_1[y] for x, y in itertools.combinations(at_1, 2))
    assert same == 16 and len(spreads[1]) == 18 * 17 // 2 - same
    assert lab["ppl"]["learned"]["512"] is None  # no row of its table past L_train: 17 schemes at 8 ×
    assert len(spreads[8]) == 17 * 16 // 2 and all(s > 0 for v in spreads.values() for s in v)
