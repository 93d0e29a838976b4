"""The lab's verdicts as data (poslib.lab.seedstats, poslib.lab.verdicts) and their wording (poslib.lab.wording).

Constructed runs of three seeds, small enough to check by hand: each verdict carries its relation or status as an
enum, the metric, the multiple, the per-seed values and a paired t statistic; the English sentences are exact; in
Chinese (poslib.language.set_language("zh")) the same verdicts read as Chinese with every number kept.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterator

import pytest

from poslib.lab import seedstats, verdicts, wording
from poslib.lab.seedstats import Outcome
from poslib.lab.stats import two_sided_p
from poslib.lab.verdicts import Agreement, Category, PairChange, Place, Relation, Status
from poslib.language import set_language

LENS = (64, 128, 256, 512, 1024)  # 1×, 2×, 4×, 8×, 16× of L_train = 64
CJK = re.compile(r"[\u4e00-\u9fff]")
NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def run(ppl_by_seed: dict[str, list[list[float | None]]]) -> dict:
    """Results of a run over len(rows) seeds: one row of perplexities at LENS per seed, and their means."""
    seeds = tuple(range(len(next(iter(ppl_by_seed.values())))))
    runs = {
        s: {str(k): {"ppl": {str(L): v for L, v in zip(LENS, row, strict=True)}} for k, row in enumerate(rows)}
        for s, rows in ppl_by_seed.items()
    }
    means = {
        s: {
            str(L): None if None in (column := [row[j] for row in rows]) else statistics.fmean(column)
            for j, L in enumerate(LENS)
        }
        for s, rows in ppl_by_seed.items()
    }
    return {
        "config": {"model": {"train_len": 64}, "eval": {"eval_lens": LENS}, "train": {"seeds": seeds}},
        "ppl": means,
        "runs": runs,
        "training": {"rope": {str(k): {"n_params": 116_000} for k in seeds}},
    }


def at_8x(values: list[float], at_1x: float = 6.0) -> list[list[float | None]]:
    return [[at_1x, 6.0, 6.0, v, 6.0] for v in values]


RUN = run(
    {
        "alibi": at_8x([6.0, 6.1, 6.2]),
        "t5": at_8x([7.0, 7.3, 7.1]),
        "rope": at_8x([9.0, 12.0, 10.0]),
        "sinusoidal": at_8x([6.9, 7.5, 7.0]),  # against t5: lower on two seeds, higher on one
    }
)


@pytest.fixture
def chinese() -> Iterator[None]:
    set_language("zh")
    try:
        yield
    finally:
        set_language(None)


def test_a_paired_comparison_carries_the_per_seed_values_its_outcome_and_a_paired_t() -> None:
    c = seedstats.paired(RUN, "alibi", "t5", 8)
    assert c is not None
    assert (c.metric, c.multiple, c.length, c.seeds) == ("ppl", 8, 512, ("0", "1", "2"))
    assert c.values_a == (6.0, 6.1, 6.2) and c.values_b == (7.0, 7.3, 7.1)
    logs = [math.log(a) - math.log(b) for a, b in zip(c.values_a, c.values_b, strict=True)]
    assert c.diffs == pytest.approx(logs) and (c.better, c.worse) == (3, 0)
    assert c.outcome is Outcome.A_BEATS_B and c.verdict == "a"  # the notebooks' letter reads the enum
    t = statistics.fmean(logs) / (statistics.stdev(logs) / math.sqrt(3))
    assert c.t == pytest.approx(t) and c.p == pytest.approx(two_sided_p(t, 2))
    # the seeds disagree in sign (lower on two, higher on one) and the mean is near 0: the t-test does not distinguish
    # them (issue 45's rule), and the statistic, interval and seed counts are still there
    split = seedstats.paired(RUN, "sinusoidal", "t5", 8)
    assert split is not None and split.outcome is Outcome.NOT_DISTINGUISHED and (split.better, split.worse) == (2, 1)
    assert split.interval is not None and split.interval[0] < 1 < split.interval[1]
    assert split.t is not None and split.p is not None and split.p > 0.05
    assert verdicts.relation(RUN, "alibi", "t5", 8) is Relation.BEATS
    assert verdicts.relation(RUN, "t5", "alibi", 8) is Relation.BEATEN
    assert verdicts.relation(RUN, "sinusoidal", "t5", 8) is Relation.NOT_DISTINGUISHED
    assert verdicts.relation(RUN, "rope", "t5", 8) is Relation.BEATEN  # rope's seeds span 9–12: within ×1.5


def test_claims_and_standings_are_dataclasses_with_enums_and_per_seed_values() -> None:
    claims = verdicts.claims(RUN, 8)
    alibi, rope = claims["alibi"], claims["rope"]
    assert isinstance(alibi, verdicts.GrowthClaim) and isinstance(rope, verdicts.GrowthClaim)
    assert alibi.status is Status.HOLDS and alibi.category is Category.EXTRAPOLATES
    assert rope.status is Status.DOES_NOT_HOLD and rope.category is Category.FAILS
    assert (alibi.metric, alibi.multiple) == ("ppl", 8)
    assert rope.per_seed == pytest.approx((1.5, 2.0, 10.0 / 6))
    logs = [math.log(g) for g in rope.per_seed or ()]
    assert rope.t == pytest.approx(statistics.fmean(logs) / (statistics.stdev(logs) / math.sqrt(3)))
    assert alibi.scale == verdicts.Scale(116, 116, 64, 3)
    where = verdicts.standing(RUN, "t5", 8, ["alibi", "t5", "sinusoidal"])
    assert where.place is Place.BEATEN and where.winner == "alibi" and where.evidence is not None
    assert where.evidence.a == "alibi" and where.evidence.values_b == (7.0, 7.3, 7.1)


def test_scale_agreement_compares_the_enums_of_two_runs() -> None:
    # at the other scale alibi grows by ×1.5 and t5 beats it on every seed: a claim and a pair that change
    other = run(
        {
            "alibi": at_8x([9.0, 9.1, 9.2]),
            "t5": at_8x([7.0, 7.3, 7.1]),
            "rope": at_8x([9.0, 12.0, 10.0]),
            "sinusoidal": at_8x([6.9, 7.5, 7.0]),
        }
    )
    out = verdicts.scale_agreement(RUN, other, 8)
    claims = {c["claim"]: c for c in out["claims"]}
    assert claims["alibi"]["here"] is Status.HOLDS and claims["alibi"]["there"] is Status.DOES_NOT_HOLD
    assert claims["alibi"]["verdict"] is Agreement.DIFFERS and claims["rope"]["verdict"] is Agreement.SAME
    pairs = {(p["a"], p["b"]): p for p in out["pairs"]}
    assert pairs[("alibi", "t5")]["verdict"] is PairChange.FLIPS


def test_the_english_wording_is_exact() -> None:
    c = seedstats.paired(RUN, "alibi", "t5", 8)
    assert c is not None
    assert wording.paired_text(c) == (
        "lower on 3 of 3 seeds, paired ratio ×0.855 (×0.836 to ×0.873); t = −12.3, p = 0.0066"
    )
    assert c.text() == wording.paired_text(c)
    split = seedstats.paired(RUN, "sinusoidal", "t5", 8)
    assert split is not None
    assert split.text() == (
        "lower on 2 of 3 seeds, paired ratio ×0.999 (×0.986 to ×1.027); not distinguished at 3 seeds (t = 0.0, "
        "p = 0.97; 95 % interval ×0.942 to ×1.061)"
    )
    sentences = wording.claim_verdicts(RUN, 8)
    assert sentences["alibi"] == (
        "000 §7.3: ALiBi extrapolates well → holds at this scale (≈116k parameters, L_train = 64 bytes, 3 seeds), "
        "pretraining not checked for a plateau (no held-out curve): at 8× L_train the model extrapolates (growth "
        "×1.02, 1.00–1.03 over seeds)."
    )
    assert sentences["rope"] == (
        "000 §5.3 / 001 §4: RoPE extrapolates well → does not hold at this scale (≈116k parameters, L_train = 64 "
        "bytes, 3 seeds), pretraining not checked for a plateau (no held-out curve): at 8× L_train the model does "
        "not extrapolate (growth ×1.72, 1.50–2.00 over seeds) (the seeds disagree on the category: read it as "
        "borderline)."
    )
    assert wording.seeds_text(RUN, "rope", 8) == "seeds 0, 1, 2: 9.00, 12.00, 10.00"


def test_the_same_verdicts_read_in_chinese_with_every_number_kept(chinese: None) -> None:
    set_language("en")
    c = seedstats.paired(RUN, "sinusoidal", "t5", 8)
    assert c is not None
    english = {**wording.claim_verdicts(RUN, 8), "evidence": c.text(), "seeds": wording.seeds_text(RUN, "rope", 8)}
    set_language("zh")
    zh = {**wording.claim_verdicts(RUN, 8), "evidence": c.text(), "seeds": wording.seeds_text(RUN, "rope", 8)}
    assert zh.keys() == english.keys()
    for key, line in zh.items():
        assert CJK.search(line) and line != english[key], line
        assert sorted(NUMBER.findall(line)) == sorted(NUMBER.findall(english[key])), (line, english[key])
    assert (
        zh["evidence"] == "3 个种子中有 2 个更低，配对比值 ×0.999（×0.986 至 ×1.027）；用 3 个种子区分不开（"
        "t = 0.0，p = 0.97；95 % 区间 ×0.942 至 ×1.061）"
    )
    assert zh["seeds"] == "种子 0、1、2 分别为 9.00、12.00、10.00"
    # a status word is translated too, never pasted in English; the enum itself stays what code compares
    assert "成立" in zh["alibi"] and "holds" not in zh["alibi"]
    assert verdicts.claims(RUN, 8)["alibi"].status is Status.HOLDS


def test_an_order_every_seed_agrees_on_is_not_distinguished_at_3_seeds_never_tied() -> None:
    # rope against t5 at 1×: higher on every seed, but the paired t-test at 2 degrees of freedom cannot tell
    agreeing = run({"a": at_8x([6.0, 6.0, 6.0], 6.0), "b": [[6.3, 6, 6, 6, 6], [6.5, 6, 6, 6, 6], [6.2, 6, 6, 6, 6]]})
    c = seedstats.paired(agreeing, "a", "b", 1)
    assert c is not None and c.better == 3 and c.p is not None and c.p > 0.05
    assert c.outcome is Outcome.NOT_DISTINGUISHED and not c.outcome.decided
    assert verdicts.relation(agreeing, "a", "b", 1) is Relation.NOT_DISTINGUISHED
    assert "not distinguished at 3 seeds" in c.text() and "tie" not in c.text()


def test_holm_over_a_notebooks_family_can_undo_a_win_the_comparison_alone_would_give() -> None:
    # alibi beats t5 alone (p = 0.0066); in a family of 12 comparisons whose other p values are large, Holm
    # multiplies the smallest p by 12 (0.079 > 0.05): not distinguished
    many = run({"alibi": at_8x([6.0, 6.1, 6.2]), "t5": at_8x([7.0, 7.3, 7.1]), "x": at_8x([6.9, 7.5, 7.0])})
    alone = seedstats.paired(many, "alibi", "t5", 8)
    assert alone is not None and alone.outcome is Outcome.A_BEATS_B and alone.family == 1

    def statements(r: dict) -> None:
        for k in (1, 2, 4, 16):
            seedstats.paired(r, "alibi", "x", k)
            seedstats.paired(r, "t5", "x", k)
        for k in (1, 2, 4):
            seedstats.paired(r, "alibi", "t5", k)
        seedstats.paired(r, "alibi", "t5", 8)

    family = seedstats.with_family(many, statements)
    held = seedstats.paired(family, "t5", "alibi", 8)  # either order reads the same member
    assert held is not None and held.family == len(family[seedstats.FAMILY])
    assert held.p_holm is not None and held.p_holm >= held.p
    assert (held.family, held.outcome) == (12, Outcome.NOT_DISTINGUISHED), (held.family, held.p_holm)
    assert "(Holm, 12 comparisons)" in held.text() and held.p_holm == pytest.approx(12 * held.p)


def test_every_bare_verdict_value_has_a_word_in_each_language(chinese: None) -> None:
    from poslib.lab.verdicts import Cost, FinetuneRelation, Holds

    members = [
        m for enum in (Relation, PairChange, Agreement, Holds, Category, Status, FinetuneRelation, Cost) for m in enum
    ]
    cjk = re.compile(r"[\u4e00-\u9fff]")
    zh = {m: wording.word(m) for m in members}
    assert all(cjk.search(w) for w in zh.values()), {m: w for m, w in zh.items() if not cjk.search(w)}
    set_language("en")
    en = {m: wording.word(m) for m in members}
    # English: the value itself, except a Category or a Status, whose words are the notebook's sentences' words
    assert en[Relation.NOT_DISTINGUISHED] == "not distinguished" and en[PairChange.SOFTENS] == "softens"
    assert zh[Relation.BEATS] != zh[Relation.BEATEN] and zh[Holds.HOLDS] != zh[Holds.FAILS]
    with pytest.raises(ValueError, match="verdict enum member"):
        wording.word(Place.BEST)  # type: ignore[arg-type]


def test_the_seed_count_reads_every_none_or_some_in_chinese_and_the_same_in_english(chinese: None) -> None:
    from dataclasses import replace as swap

    c = seedstats.PairedComparison("a", "b", "ppl", 8, (-0.1,) * 3, 3, 0, ("0", "1", "2"), (1.0,) * 3, (1.1,) * 3, 512)
    assert wording.seed_count_text(c) == "3 个种子中 3 个都更低"
    assert wording.seed_count_text(swap(c, better=0, worse=3)) == "3 个种子中 0 个更低"
    assert wording.seed_count_text(swap(c, better=2, worse=1)) == "3 个种子中有 2 个更低"
    set_language("en")
    assert [wording.seed_count_text(swap(c, better=k, worse=3 - k)) for k in (3, 0, 2)] == [
        "lower on 3 of 3 seeds",
        "lower on 0 of 3 seeds",
        "lower on 2 of 3 seeds",
    ]
