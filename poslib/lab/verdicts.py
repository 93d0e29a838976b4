"""The verdicts notebooks 08, 11 and 12 state about a lab run, as data: what is decided, never how it is said.

Every verdict is computed from a results dictionary of :func:`poslib.lab.run_lab` (or
:func:`poslib.lab.run_extension`) by the paired rule of :mod:`poslib.lab.seedstats`, with fixed, documented
thresholds, so that a notebook never states a conclusion its own numbers contradict, and every verdict says at
which scale it was measured (:class:`Scale`). Each verdict is a small frozen dataclass that carries its relation
or status as an enum, the metric, the multiples of L_train it was measured at, the per-seed values and the paired
evidence (:class:`~poslib.lab.seedstats.PairedComparison`, with its t statistic) it rests on;
:mod:`poslib.lab.wording` turns them into sentences, in poslib's language, at the very end. Code that needs a
verdict's status reads the enum, never a sentence.

Thresholds on the growth, ppl(k·L_train) / ppl(L_train) (means over seeds; printed "growth ×1.55"):

* growth ≤ 1.05 → the scheme **extrapolates** (a perfect extrapolator even gains: longer windows give the average
  byte more context);
* 1.05 < growth ≤ 1.5 → it **degrades gracefully**;
* growth > 1.5 → it **does not extrapolate**.

A scheme whose seeds disagree at a length (:func:`~poslib.lab.seedstats.seeds_disagree`) is left out of the
rankings that verdicts are drawn from, and named separately with its per-seed values (:class:`SeedValues`).

The enums are :class:`enum.StrEnum` whose values are the English identifiers the notebooks have always compared
against ("beats", "holds"): a cell's ``relation(...) == "beats"`` reads the enum unchanged.

**Which comparisons form a family** (Holm's correction, :func:`~poslib.lab.seedstats.with_family`): the comparisons
the verdicts one notebook states from one results file draw on; a notebook builds it where it loads the file
(:func:`stated_family`), so "a beats b" in a notebook keeps the chance of any false winner among its statements
from that file at or below 5 %. A comparison outside the family (an ad hoc cell) is tested alone and says so.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .config import LabConfig
from .plateau import heldout_plateau
from .seedstats import (
    EXTRAPOLATES,
    FAILS,
    GRACEFUL,
    RETRIEVES,
    Outcome,
    PairedComparison,
    SeedValues,
    _length,
    _ppl,
    beats,
    growth,
    n_seeds,
    paired,
    passkey_ranking,
    passkey_values,
    per_seed_growth,
    ranking,
    seed_record,
    seed_values,
    seeds_disagree,
    tied,
    with_family,
)

__all__ = [
    "DATA_DEPENDENT",
    "DEPLOYED_REMAPS",
    "DISTANCE_BIASES",
    "DISTANCE_REMAPS",
    "FINETUNED",
    "FREQUENCY_SCALINGS",
    "KNOWS_TEST_LENGTH",
    "PUBLISHED",
    "ROPE_VARIANTS",
    "SECTION_6_2",
    "TUNED_SCALINGS",
    "Agreement",
    "AgreementRow",
    "AtTrain",
    "Category",
    "ClaimAgreement",
    "Cost",
    "CostVerdict",
    "DeployedClaim",
    "DeployedVerdicts",
    "Disagreement",
    "ExtensionVerdicts",
    "FinetuneRelation",
    "FinetuneVerdict",
    "GrowthClaim",
    "Holds",
    "Join",
    "Mismatch",
    "NtkClaim",
    "OrderStep",
    "Ordering",
    "PairAgreement",
    "PairChange",
    "PasskeyBest",
    "PasskeyPlace",
    "PasskeyVerdict",
    "Place",
    "PractitionerClaim",
    "Relation",
    "Rescaling",
    "Retrieval",
    "Scale",
    "Standing",
    "Status",
    "Takeaways",
    "category",
    "claims",
    "datadep_readings",
    "deployed",
    "deployed_statuses",
    "disagreement_verdicts",
    "extension",
    "extension_agreement",
    "finetune_plateaus",
    "orderings",
    "passkey_best_group",
    "practitioner_verdicts",
    "relation",
    "retrieval",
    "scale_agreement",
    "scale_of",
    "standing",
    "stated_family",
    "takeaway_verdicts",
    "unbeaten",
]

ROPE_VARIANTS = ("rope+pi", "rope+ntk", "rope+dynamic", "rope+yarn", "rope+logn")
# 000 §6.2 lists these as remedies for unseen positions; NTK-RoPE is called the strongest without fine-tuning.
SECTION_6_2 = ("alibi", "kerple", "sandwich", "xpos", "rope+pi", "rope+ntk")
DISTANCE_BIASES = ("alibi", "kerple", "sandwich")
# notebook 11's groups (poslib.lab.extend runs them; listed here so the verdicts do not import torch's side)
FREQUENCY_SCALINGS = ("rope+pi", "rope+ntk", "rope+yarn", "rope+dynamic")
DISTANCE_REMAPS = ("rope+rerope", "rope+leaky_rerope", "rope+self_extend")
FINETUNED = ("rope+ft", "rope+ft_pi", "rope+ft_ntk", "rope+ft_yarn")
# readings that use only the longest target length (chosen once per deployment), never the length being scored
TUNED_SCALINGS = ("rope+pi_tuned", "rope+ntk_tuned", "rope+yarn_tuned", "rope+dynamic_tuned")
DEPLOYED_REMAPS = ("rope+self_extend_fixed", "rope+leaky_rerope_fit", "rope+rerope_logn")
# ReRoPE (w = 16) and Leaky ReRoPE (leak 16) use no length at all; the matched factors s = L'/L_train and the
# per-length group size use the length being scored
KNOWS_TEST_LENGTH = ("rope+pi", "rope+ntk", "rope+yarn", "rope+dynamic", "rope+self_extend")
DATA_DEPENDENT = ("fox", "fox+rope", "stickbreaking")


def _(text: str) -> str:
    """Mark ``text`` for the ``lab`` catalogue without translating it: the extractor (``scripts/catalogues.py``)
    reads ``_("…")`` calls, and :data:`PUBLISHED` is English data, translated where it is worded
    (:func:`poslib.lab.wording.comparison_table`)."""
    return text


# Published orderings, best first, as the sources state them (arXiv ids; "≈": reported close or tied).
PUBLISHED: tuple[dict[str, Any], ...] = (
    {
        "source": _("ALiBi (Press et al., ICLR 2022, arXiv 2108.12409), Fig. 1"),
        "setting": _("word-level LMs on WikiText-103, trained at L = 512 and 1024 tokens, perplexity at longer inputs"),
        "schemes": ("alibi", "t5", "rope", "sinusoidal"),
        "ordering": _("alibi stays flat; t5, rope and sinusoidal all degrade"),
        "confirmed": _(
            "the caption (sinusoidal, rotary and T5 degrade, ALiBi does not); the order among the three "
            "degrading ones is read from the figure, not confirmed here"
        ),
    },
    {
        "source": _("KERPLE (Chi et al., NeurIPS 2022, arXiv 2205.09921)"),
        "setting": _(
            "small GPT-NeoX configuration on OpenWebText2, GitHub and ArXiv, trained at 512 tokens, "
            "tested at longer lengths"
        ),
        "schemes": ("kerple", "alibi", "t5", "rope", "sinusoidal"),
        "ordering": _("kerple (log) best at long lengths"),
        "confirmed": _(
            "the abstract (the logarithmic variant extrapolates best on three datasets); datasets and "
            "training length from a reproducibility summary of the paper; the order of the baselines could not be "
            "confirmed here"
        ),
    },
    {
        "source": _("FIRE (Li et al., ICLR 2024, arXiv 2310.04418)"),
        "setting": _("decoder LMs, zero-shot language modeling and long-text benchmarks at lengths beyond training"),
        "schemes": ("fire", "kerple", "alibi", "t5", "rope", "nope"),
        "ordering": _("fire best at lengths beyond training"),
        "confirmed": _(
            "the abstract (FIRE generalizes better to longer contexts than the encodings it compares "
            "with); data set, lengths and the order of the others could not be confirmed here"
        ),
    },
    {
        "source": _("NoPE (Kazemnejad et al., NeurIPS 2023, arXiv 2305.19466)"),
        "setting": _(
            "decoder-only models on reasoning and mathematical tasks, exact match (about 107M parameters, "
            "trained at up to 20 tokens and tested up to 40, per a secondary summary)"
        ),
        "schemes": ("nope", "t5", "alibi", "rope", "sinusoidal"),
        "ordering": _("nope ≈ t5 best, alibi in the middle, rope and sinusoidal (APE) worst"),
        "confirmed": _(
            "the abstract (NoPE outperforms the explicit encodings; ALiBi, Rotary and APE are not well "
            "suited) and a quoted sentence (NoPE on par with or better than T5's bias); the middle of the order "
            "comes from a secondary summary"
        ),
    },
)


# ---- words as enums -------------------------------------------------------------------------------------------------


class Category(enum.StrEnum):
    """What a growth says about extrapolation (module docstring)."""

    EXTRAPOLATES = "extrapolates"
    GRACEFUL = "degrades gracefully"
    FAILS = "does not extrapolate"
    NOT_DEFINED = "not defined"


class Retrieval(enum.StrEnum):
    """What a mean passkey accuracy says: ≥ 0.9 retrieves, ≤ 0.1 fails, partly retrieves between."""

    RETRIEVES = "retrieves"
    PARTLY = "partly retrieves"
    FAILS = "fails"
    NOT_DEFINED = "not defined"


class Status(enum.StrEnum):
    """Whether a source's claim holds in this run."""

    HOLDS = "holds"
    PARTLY = "partly holds"
    DOES_NOT_HOLD = "does not hold"
    # only distance remaps that 000 does not list beat NTK (000 ranked the remedies it lists)
    NOT_AGAINST_UNLISTED = "does not hold against the distance remaps 000 does not list"
    UNDETERMINED = "undetermined"


class Relation(enum.StrEnum):
    """``a`` against ``b`` by the paired rule, from ``a``'s side (:func:`relation`): BEATS or BEATEN, or neither,
    because the test does not distinguish them at the run's seeds (NOT_DISTINGUISHED) or their paired ratio is
    within the threshold (WITHIN_THRESHOLD); NOT_COMPARED where a scheme's seeds disagree."""

    BEATS = "beats"
    BEATEN = "beaten"
    NOT_DISTINGUISHED = "not distinguished"
    WITHIN_THRESHOLD = "within the threshold"
    NOT_COMPARED = "not compared"


class Place(enum.StrEnum):
    """Where one scheme stands in a pool (:class:`Standing`)."""

    BEST = "best"
    UNBEATEN = "not beaten"  # nothing beats it, though another has the lower mean
    BEATEN = "beaten"


class Join(enum.StrEnum):
    """How a scheme joins an ordering (:class:`OrderStep`): its sign in "a < b ≈ c ≲ d (not distinguished from b)"."""

    FIRST = "first"
    SAME_GROUP = "≈"  # distinguished from no member of the group, and beaten by nothing placed before it
    NOT_DISTINGUISHED_FROM = "≲"  # beaten by none of the schemes named, a set the chain alone could not show
    AFTER = "<"  # beaten by a scheme placed before it


class Mismatch(enum.StrEnum):
    """Where perplexity and passkey retrieval tell different stories (:class:`Disagreement`)."""

    SEEDS_SPLIT = "seeds disagree"
    FLAT_BUT_FAILS = "flat but fails"
    GROWS_BUT_RETRIEVES = "grows but retrieves"


class Agreement(enum.StrEnum):
    """Whether a verdict is the same at two scales."""

    SAME = "same at both scales"
    DIFFERS = "scale-dependent"
    AT_THRESHOLD = "scale-dependent, at the threshold"
    UNDETERMINED = "undetermined"


class PairChange(enum.StrEnum):
    """How a pair's relation changes from one scale to another."""

    SAME = "same"
    FLIPS = "flips"  # one beats the other at one scale and is beaten at the other
    SOFTENS = "softens"  # a win at one scale is no win (not distinguished, within the threshold) at the other


class FinetuneRelation(enum.StrEnum):
    """The best fine-tune against the best training-free reading."""

    BEATS = "beats"
    NEITHER = "neither beats"  # not distinguished at the run's seeds, or within the threshold
    LOSES = "loses to"


class Cost(enum.StrEnum):
    """A fine-tune at L_train against the model it started from."""

    GAINS = "gains"
    NEITHER = "neither"  # not distinguished at the run's seeds, or within the threshold
    COSTS = "costs"


class Holds(enum.StrEnum):
    """Whether one of notebook 11's practitioner claims holds in a run."""

    HOLDS = "holds"
    FAILS = "fails"


_FINETUNE = {Outcome.A_BEATS_B: FinetuneRelation.BEATS, Outcome.B_BEATS_A: FinetuneRelation.LOSES}
_COST = {Outcome.A_BEATS_B: Cost.GAINS, Outcome.B_BEATS_A: Cost.COSTS}
_STATUS_OF_PLACE = {Place.BEST: Status.HOLDS, Place.UNBEATEN: Status.PARTLY, Place.BEATEN: Status.DOES_NOT_HOLD}


def category(g: float | None) -> Category:
    """:class:`Category` of a growth ``g`` (module docstring); NOT_DEFINED for None."""
    if g is None:
        return Category.NOT_DEFINED
    return Category.EXTRAPOLATES if g <= EXTRAPOLATES else Category.GRACEFUL if g <= GRACEFUL else Category.FAILS


def retrieval(accuracy: float | None) -> Retrieval:
    """:class:`Retrieval` of a mean passkey accuracy (≥ 0.9 retrieves, ≤ 0.1 fails)."""
    if accuracy is None:
        return Retrieval.NOT_DEFINED
    if accuracy >= RETRIEVES:
        return Retrieval.RETRIEVES
    return Retrieval.FAILS if accuracy <= FAILS else Retrieval.PARTLY


def _log_t(ratios: Sequence[float] | None) -> float | None:
    """The one-sample t statistic of ln(ratio) against 0 over seeds (None with fewer than two)."""
    if ratios is None or len(ratios) < 2:
        return None
    logs = [math.log(r) for r in ratios]
    mean = sum(logs) / len(logs)
    s = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    if s == 0:
        return 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean / (s / math.sqrt(len(logs)))


# ---- the setting a verdict is about ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scale:
    """The setting every verdict of a run is about: model size (thousands of parameters, the range over the
    run's models, None without training records), L_train in bytes, the number of seeds, and whether pretraining
    reached a plateau by :func:`poslib.lab.plateau.heldout_plateau` (True: every pretraining held-out curve passes;
    False: one fails; None: the run recorded no pretraining held-out curve, so nothing shows it converged)."""

    params_low: int | None
    params_high: int | None
    train_len: int
    seeds: int
    pretraining_plateau: bool | None = None


def scale_of(results: Mapping[str, Any]) -> Scale:
    """:class:`Scale` of ``results`` (the parameter count is the range over the run's models: the schemes differ by
    their position parameters)."""
    params = [record["n_params"] for per_seed in results.get("training", {}).values() for record in per_seed.values()]
    lo, hi = (round(f(params) / 1000) for f in (min, max)) if params else (None, None)
    curves = [
        record["heldout"]
        for model, per_seed in results.get("training", {}).items()
        if model not in FINETUNED
        for record in per_seed.values()
        if "heldout" in record
    ]
    plateaued = all(heldout_plateau(c["steps"], c["loss"]).plateaued for c in curves) if curves else None
    return Scale(lo, hi, LabConfig.from_dict(results["config"]).train_len, n_seeds(results), plateaued)


# ---- orderings by the paired rule ---------------------------------------------------------------------------------


def unbeaten(results: Mapping[str, Any], multiple: int, schemes: Sequence[str], metric: str = "ppl") -> list[str]:
    """The schemes of ``schemes`` that no other one beats by the paired rule, best mean first.

    Schemes whose seeds disagree (:func:`~poslib.lab.seedstats.seeds_disagree`) and schemes not defined there are
    left out (compared with nothing). Never empty while one scheme remains: "beats" cannot run in a circle (the
    mean paired differences add up, and each win needs one beyond the threshold), so the lowest mean is unbeaten.
    """
    if metric == "ppl":
        pool = [s for s, _v in ranking(results, multiple, schemes) if not seeds_disagree(results, s, multiple)]
    else:
        pool = [
            s
            for s, _v in passkey_ranking(results, multiple, schemes)
            if not seeds_disagree(results, s, multiple, "passkey")
        ]
    return [s for s in pool if not any(beats(results, t, s, multiple, metric) for t in pool if t != s)]


def _best(results: Mapping[str, Any], multiple: int, schemes: Sequence[str]) -> tuple[str, list[str]]:
    """The best scheme (lowest mean among those nothing beats, by the paired rule) and the others nothing beats.

    Schemes whose seeds disagree are left out. "X is the best (not distinguished from Y)" never names a scheme
    that another one beats; a scheme outside the group is beaten by some scheme of the pool (not necessarily one of
    the group: a t-test's "beats" is not transitive).
    """
    group = unbeaten(results, multiple, schemes)
    return group[0], group[1:]


def relation(results: Mapping[str, Any], a: str, b: str, multiple: int = 8) -> Relation:
    """``a`` against ``b`` by the paired rule (:class:`Relation`): NOT_COMPARED where either's seeds disagree."""
    if seeds_disagree(results, a, multiple) or seeds_disagree(results, b, multiple):
        return Relation.NOT_COMPARED
    comparison = paired(results, a, b, multiple)
    if comparison is None:
        return Relation.NOT_COMPARED
    return {
        Outcome.A_BEATS_B: Relation.BEATS,
        Outcome.B_BEATS_A: Relation.BEATEN,
        Outcome.NOT_DISTINGUISHED: Relation.NOT_DISTINGUISHED,
        Outcome.BELOW_THRESHOLD: Relation.WITHIN_THRESHOLD,
    }[comparison.outcome]


@dataclass(frozen=True)
class Standing:
    """Where ``scheme`` stands in a pool at ``multiple`` × L_train, by the paired rule (perplexity).

    ``place`` BEST: it is the best (``ties``: the others nothing beats); TIED: nothing beats it but ``best`` has
    the lower mean (``evidence``: ``scheme`` against ``best``); BEATEN: ``winner`` (``best`` or one of its ties)
    beats it (``evidence``: ``winner`` against ``scheme``; ``ppl`` and ``winner_ppl`` the two means).
    """

    scheme: str
    metric: str
    multiple: int
    place: Place
    best: str
    ties: tuple[str, ...]
    winner: str | None = None
    evidence: PairedComparison | None = None
    ppl: float | None = None
    winner_ppl: float | None = None


def standing(results: Mapping[str, Any], scheme: str, multiple: int, pool: Sequence[str]) -> Standing:
    """:class:`Standing` of ``scheme`` in ``pool`` (the winner named is the first of the group, else of the pool by
    mean, that beats it)."""
    best, ties = _best(results, multiple, pool)
    if best == scheme:
        return Standing(scheme, "ppl", multiple, Place.BEST, best, tuple(ties))
    if scheme in ties:
        evidence = paired(results, scheme, best, multiple)
        assert evidence is not None
        return Standing(scheme, "ppl", multiple, Place.UNBEATEN, best, tuple(ties), evidence=evidence)
    # a t-test's "beats" is not transitive: the scheme that beats this one may itself be beaten by the best, so
    # the winner named is the first one, best mean first, that the rule lets beat it
    candidates = [best, *ties, *(s for s, _v in ranking(results, multiple, pool) if s not in (best, *ties))]
    winner = next(s for s in candidates if s != scheme and beats(results, s, scheme, multiple))
    evidence = paired(results, winner, scheme, multiple)
    assert evidence is not None
    return Standing(
        scheme,
        "ppl",
        multiple,
        Place.BEATEN,
        best,
        tuple(ties),
        winner,
        evidence,
        _ppl(results, scheme, multiple),
        _ppl(results, winner, multiple),
    )


# ---- notebook 08: the sources' claims ----------------------------------------------------------------------------


@dataclass(frozen=True)
class GrowthClaim:
    """A source's claim that ``scheme`` extrapolates, judged at ``multiple`` × L_train by its growth.

    ``status`` from ``category`` (extrapolates: holds; degrades gracefully: partly holds; else does not hold), or
    UNDETERMINED where the seeds disagree at 1× or ``multiple`` × (``split``: their perplexities there; no mean is
    read). ``per_seed``: each seed's growth; ``mixed``: they fall in different categories; ``t``: the t statistic
    of their logs against no growth.
    """

    scheme: str
    status: Status
    metric: str
    multiple: int
    scale: Scale
    growth: float | None
    per_seed: tuple[float, ...] | None
    category: Category
    mixed: bool
    split: tuple[SeedValues, ...]

    @property
    def t(self) -> float | None:
        """The t statistic of ln growth over seeds against 0 (None with one seed or none defined)."""
        return _log_t(self.per_seed)


@dataclass(frozen=True)
class NtkClaim:
    """000 §6.2's "NTK-RoPE is the strongest without fine-tuning", judged at ``multiple`` × L_train.

    ``variants``: where NTK stands among the RoPE variants; ``listed``: among the methods 000 §6.2 lists;
    ``unranked``: the schemes of either pool whose seeds disagree (perplexities shown, not ranked).
    """

    status: Status
    metric: str
    multiple: int
    scale: Scale
    variants: Standing
    listed: Standing
    unranked: tuple[SeedValues, ...]


_SOURCES = ("rope", "sinusoidal", "alibi")  # the schemes whose extrapolation a source claims (wording names them)


def claims(results: Mapping[str, Any], multiple: int = 8) -> dict[str, GrowthClaim | NtkClaim]:
    """One verdict per claim of the sources that the run tests (keys: the scheme or claim).

    Claims: RoPE extrapolates (000 §5.3, 001 §4); sinusoidal encodings extrapolate (001 §2.4); ALiBi extrapolates
    (000 §7.3); NTK-RoPE is the strongest method without fine-tuning (000 §6.2). That a learned table cannot go
    beyond its length (000 §3.1.4) is true by construction, a definition rather than something to test.
    """
    have = set(results["ppl"])
    scale = scale_of(results)
    out: dict[str, GrowthClaim | NtkClaim] = {}
    for scheme in _SOURCES:
        if scheme not in have:
            continue
        g, ratios = growth(results, scheme, multiple), per_seed_growth(results, scheme, multiple)
        split = tuple(seed_record(results, scheme, k) for k in (1, multiple) if seeds_disagree(results, scheme, k))
        cat = category(g)
        if split:
            out[scheme] = GrowthClaim(scheme, Status.UNDETERMINED, "ppl", multiple, scale, g, ratios, cat, False, split)
            continue
        status = {Category.EXTRAPOLATES: Status.HOLDS, Category.GRACEFUL: Status.PARTLY}.get(cat, Status.DOES_NOT_HOLD)
        mixed = ratios is not None and category(min(ratios)) != category(max(ratios))
        out[scheme] = GrowthClaim(scheme, status, "ppl", multiple, scale, g, ratios, cat, mixed, ())
    variants = [s for s in ROPE_VARIANTS if s in have]
    if "rope+ntk" in have and len(variants) > 1:
        pool = [s for s in SECTION_6_2 if s in have]
        among, listed = _pool_standing(results, multiple, variants), _pool_standing(results, multiple, pool)
        if listed.best == "rope+ntk" and not listed.ties:
            status = Status.HOLDS
        elif listed.best == "rope+ntk" or "rope+ntk" in listed.ties:
            status = Status.PARTLY
        elif among.best == "rope+ntk" or "rope+ntk" in among.ties:
            status = Status.PARTLY
        else:
            status = Status.DOES_NOT_HOLD
        unranked = tuple(
            seed_record(results, x, multiple)
            for x in dict.fromkeys(variants + pool)
            if seeds_disagree(results, x, multiple)
        )
        out["rope+ntk"] = NtkClaim(status, "ppl", multiple, scale, among, listed, unranked)
    return out


def _pool_standing(results: Mapping[str, Any], multiple: int, pool: Sequence[str]) -> Standing:
    """NTK's :class:`Standing` in ``pool``, without the evidence a sentence about the best alone does not need
    when NTK is not among those nothing beats (notebook 08 names the best, not what beats NTK)."""
    best, ties = _best(results, multiple, pool)
    if best == "rope+ntk":
        return Standing("rope+ntk", "ppl", multiple, Place.BEST, best, tuple(ties))
    if "rope+ntk" in ties:
        evidence = paired(results, "rope+ntk", best, multiple)
        return Standing("rope+ntk", "ppl", multiple, Place.UNBEATEN, best, tuple(ties), evidence=evidence)
    return Standing("rope+ntk", "ppl", multiple, Place.BEATEN, best, tuple(ties))


# ---- notebook 08: takeaways ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AtTrain:
    """ALiBi against RoPE at L_train: ``behind`` when RoPE beats ALiBi by the paired rule."""

    behind: bool
    alibi_ppl: float
    rope_ppl: float
    evidence: PairedComparison | None


@dataclass(frozen=True)
class Rescaling:
    """RoPE's inference-time scalings against plain RoPE at ``multiple`` × (paired rule; ``split``: seeds disagree)."""

    multiple: int
    helped: tuple[str, ...]
    hurt: tuple[str, ...]
    split: tuple[str, ...]
    evidence: tuple[PairedComparison, ...]


@dataclass(frozen=True)
class Takeaways:
    """The facts notebook 08's concluding bullets state, each derived from the run.

    ``failing``: rope and sinusoidal where defined but not extrapolating, with their mean growths; ``biases``:
    the distance-bias schemes present, ``flat`` those that extrapolate; ``at_train``: ALiBi against RoPE at
    L_train; ``rescaling``: the RoPE scalings against plain RoPE.
    """

    metric: str
    multiple: int
    scale: Scale
    failing: tuple[str, ...]
    failing_growth: tuple[float | None, ...]
    biases: tuple[str, ...]
    flat: tuple[str, ...]
    at_train: AtTrain | None
    rescaling: Rescaling | None


def takeaway_verdicts(results: Mapping[str, Any], multiple: int = 8) -> Takeaways:
    """:class:`Takeaways` of ``results`` at ``multiple`` × L_train."""
    have = set(results["ppl"])
    failing = tuple(
        s for s in ("rope", "sinusoidal") if s in have and category(growth(results, s, multiple)) != "extrapolates"
    )
    growths = tuple(growth(results, s, multiple) for s in failing)
    biases = tuple(s for s in DISTANCE_BIASES if s in have)
    flat = tuple(s for s in biases if category(growth(results, s, multiple)) == "extrapolates")
    at_train = None
    if biases and "rope" in have and "alibi" in have:
        r1, a1 = _ppl(results, "rope", 1), _ppl(results, "alibi", 1)
        if r1 is not None and a1 is not None:
            behind = a1 > r1 and not tied(results, "rope", "alibi", 1)
            at_train = AtTrain(behind, a1, r1, paired(results, "alibi", "rope", 1))
    rescaling = None
    variants = [s for s in ("rope+ntk", "rope+yarn", "rope+dynamic", "rope+pi") if s in have]
    if "rope" in have and variants:
        base = _ppl(results, "rope", multiple)
        assert base is not None
        helped = [
            s
            for s in variants
            if (v := _ppl(results, s, multiple)) is not None and v < base and not tied(results, s, "rope", multiple)
        ]
        hurt = [
            s
            for s in variants
            if (v := _ppl(results, s, multiple)) is not None and v > base and not tied(results, s, "rope", multiple)
        ]
        split = tuple(s for s in ["rope", *variants] if seeds_disagree(results, s, multiple))
        evidence = tuple(c for s in variants if (c := paired(results, s, "rope", multiple)) is not None)
        rescaling = Rescaling(
            multiple,
            tuple(s for s in helped if s not in split),
            tuple(s for s in hurt if s not in split),
            split,
            evidence,
        )
    return Takeaways("ppl", multiple, scale_of(results), failing, growths, biases, flat, at_train, rescaling)


# ---- a second scale -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimAgreement:
    """One claim of :func:`claims` in two runs: its status in each and whether they agree."""

    claim: str
    here: Status
    there: Status
    verdict: Agreement


@dataclass(frozen=True)
class PairAgreement:
    """One pair a published ordering ranks: its paired relation in two runs and how it changes."""

    a: str
    b: str
    multiple: int
    here: Relation
    there: Relation
    verdict: PairChange


def scale_agreement(
    base: Mapping[str, Any], other: Mapping[str, Any], multiple: int = 8
) -> dict[str, list[dict[str, Any]]]:
    """Whether this run's verdicts hold at a second scale: the same lab run with another model or length.

    ``"claims"``: for every claim of :func:`claims` in both runs, its status in each (:class:`Status`) and
    SAME (whether the claim holds or not), DIFFERS when the statuses differ, or UNDETERMINED when either run cannot
    decide. ``"pairs"``: for every pair of schemes that a published ordering (:data:`PUBLISHED`) ranks and both
    runs hold, the paired relation in each (:func:`relation`) and SAME, FLIPS or SOFTENS (:class:`PairChange`).
    Rows are dicts of :class:`ClaimAgreement` and :class:`PairAgreement` fields (what notebook 08 indexes).
    """
    claim_rows = []
    mine, theirs = claims(base, multiple), claims(other, multiple)
    for key in mine:
        if key not in theirs:
            continue
        a, b = mine[key].status, theirs[key].status
        if Status.UNDETERMINED in (a, b):
            verdict = Agreement.UNDETERMINED
        else:
            verdict = Agreement.SAME if a == b else Agreement.DIFFERS
        claim_rows.append(vars(ClaimAgreement(key, a, b, verdict)))
    pairs = []
    seen: set[frozenset[str]] = set()  # one entry per pair, whichever order a published row lists it in
    for pub in PUBLISHED:
        names = [s for s in pub["schemes"] if s in base["ppl"] and s in other["ppl"]]
        for i, x in enumerate(names):
            for y in names[i + 1 :]:
                if frozenset((x, y)) in seen:
                    continue
                seen.add(frozenset((x, y)))
                here, there = relation(base, x, y, multiple), relation(other, x, y, multiple)
                if here == there:
                    kind = PairChange.SAME
                elif {here, there} == {Relation.BEATS, Relation.BEATEN}:
                    kind = PairChange.FLIPS
                else:
                    kind = PairChange.SOFTENS
                row = vars(PairAgreement(x, y, multiple, here, there, kind))
                pairs.append({k: v for k, v in row.items() if k != "multiple"})
    return {"claims": claim_rows, "pairs": pairs}


# ---- passkey retrieval --------------------------------------------------------------------------------------------


def passkey_best_group(results: Mapping[str, Any], multiple: int = 1) -> tuple[str, float, list[str], list[str]]:
    """(best, its mean accuracy, the others nothing beats, the schemes left out because their seeds disagree) at
    ``multiple`` × L_train, by passkey accuracy and the paired rule."""
    ranked = passkey_ranking(results, multiple)
    split = [s for s, _v in ranked if seeds_disagree(results, s, multiple, "passkey")]
    if len(split) == len(ranked):
        raise ValueError(f"the seeds of every scheme disagree at {multiple}× L_train: no best scheme")
    group = unbeaten(results, multiple, [s for s, _v in ranked], "passkey")
    return group[0], dict(ranked)[group[0]], group[1:], split


@dataclass(frozen=True)
class Disagreement:
    """Where perplexity and passkey retrieval tell different stories for ``scheme`` at ``multiple`` × L_train.

    SEEDS_SPLIT: the seeds disagree (``split``: their values) and no verdict is read; FLAT_BUT_FAILS: perplexity
    extrapolates but retrieval does not (``retrieval``); GROWS_BUT_RETRIEVES: the opposite.
    """

    scheme: str
    multiple: int
    kind: Mismatch
    split: tuple[SeedValues, ...] = ()
    growth: float | None = None
    accuracy: float | None = None
    retrieval: Retrieval | None = None


def disagreement_verdicts(results: Mapping[str, Any], multiple: int = 8) -> list[Disagreement]:
    """Every :class:`Disagreement` at ``multiple`` × L_train, in the order of ``results["passkey"]``.

    Flat perplexity (growth ≤ 1.05) with failed retrieval: the model predicts the next byte as well as before while
    ignoring what lies far back. The opposite (perplexity grows, retrieval holds) says the long context is read but
    the byte statistics still suffer. A scheme whose seeds disagree (on perplexity at 1× or ``multiple`` ×, or on
    retrieval at ``multiple`` ×) gets its per-seed values and no verdict.
    """
    out = []
    for scheme in results["passkey"]:
        split = tuple(
            seed_record(results, scheme, k, metric)
            for metric, ks in (("ppl", (1, multiple)), ("passkey", (multiple,)))
            for k in dict.fromkeys(ks)
            if seeds_disagree(results, scheme, k, metric)
        )
        if split:
            out.append(Disagreement(scheme, multiple, Mismatch.SEEDS_SPLIT, split))
            continue
        g = growth(results, scheme, multiple)
        acc = results["passkey"][scheme][_length(results, scheme, multiple)]
        ppl_says, key_says = category(g), retrieval(acc)
        if ppl_says == Category.EXTRAPOLATES and key_says != Retrieval.RETRIEVES:
            out.append(Disagreement(scheme, multiple, Mismatch.FLAT_BUT_FAILS, (), g, acc, key_says))
        elif ppl_says == Category.FAILS and key_says == Retrieval.RETRIEVES:
            out.append(Disagreement(scheme, multiple, Mismatch.GROWS_BUT_RETRIEVES, (), g, acc, key_says))
    return out


# ---- notebook 08: this run beside the published orderings -----------------------------------------------------------


@dataclass(frozen=True)
class OrderStep:
    """One scheme placed in an ordering: how it joins (``join``), the placed schemes that do not beat it (``ties``,
    for NOT_DISTINGUISHED_FROM: not distinguished from it, or within the threshold), and
    its paired evidence against the scheme placed just before it (None for the first)."""

    scheme: str
    join: Join
    ties: tuple[str, ...] = ()
    evidence: PairedComparison | None = None


@dataclass(frozen=True)
class PasskeyPlace:
    """A scheme's mean passkey accuracy in an ordering, or, where its seeds disagree, their values (``split``)."""

    scheme: str
    accuracy: float
    split: SeedValues | None


@dataclass(frozen=True)
class Ordering:
    """This run's ordering of one published row's schemes at ``multiple`` × L_train (perplexity, and passkey
    accuracy where the run has it); ``split``: schemes not placed, their seeds disagree."""

    published: Mapping[str, Any]
    metric: str
    multiple: int
    steps: tuple[OrderStep, ...]
    split: tuple[SeedValues, ...]
    passkey: tuple[PasskeyPlace, ...] | None


def orderings(results: Mapping[str, Any], multiple: int = 8) -> list[Ordering]:
    """Each published ordering of :data:`PUBLISHED` beside this run's :class:`Ordering` of the same schemes.

    By mean perplexity at ``multiple`` × L_train: "≈" only joins a scheme that no member of its group beats and
    that every scheme placed before the group beats, so a ≈ b ≈ c never hides a < c; "≲ s (not distinguished from
    …)" names the schemes placed before it that do not beat it, a set the chain cannot show; "<" joins a scheme
    that every scheme placed before it beats.
    """
    rows = []
    for pub in PUBLISHED:
        names = [s for s in pub["schemes"] if s in results["ppl"]]
        split = [s for s in names if seeds_disagree(results, s, multiple)]
        ranked = [s for s, _v in ranking(results, multiple, names) if s not in split]
        steps = [OrderStep(ranked[0], Join.FIRST)] if ranked else []
        group, placed = ranked[:1], ranked[:1]
        for s in ranked[1:]:
            ties = [p for p in placed if tied(results, p, s, multiple)]
            evidence = paired(results, s, placed[-1], multiple)
            if set(group) <= set(ties) and set(ties) <= set(group):
                steps.append(OrderStep(s, Join.SAME_GROUP, evidence=evidence))
                group = [*group, s]
            elif ties:
                steps.append(OrderStep(s, Join.NOT_DISTINGUISHED_FROM, tuple(ties), evidence))
                group = [s]
            else:
                steps.append(OrderStep(s, Join.AFTER, evidence=evidence))
                group = [s]
            placed.append(s)
        keys = None
        if results.get("passkey") is not None:
            keys = tuple(
                PasskeyPlace(
                    s,
                    v,
                    seed_record(results, s, multiple, "passkey")
                    if seeds_disagree(results, s, multiple, "passkey")
                    else None,
                )
                for s, v in passkey_ranking(results, multiple, names)
            )
        split_values = tuple(seed_record(results, s, multiple) for s in split)
        rows.append(Ordering(pub, "ppl", multiple, tuple(steps), split_values, keys))
    return rows


# ---- notebook 11: extending a trained model -------------------------------------------------------------------------


@dataclass(frozen=True)
class FinetuneVerdict:
    """The best fine-tuned model against the best training-free reading at ``multiple`` × L_train (paired rule)."""

    multiple: int
    steps: int | None
    finetune_len: int | None
    tuned: str
    tuned_ties: tuple[str, ...]
    tuned_ppl: float | None
    free: str
    free_ties: tuple[str, ...]
    free_ppl: float | None
    relation: FinetuneRelation
    evidence: PairedComparison
    not_plateaued: tuple[tuple[str, str, float], ...] = ()  # (method, seed, change) failing heldout_plateau


@dataclass(frozen=True)
class PasskeyBest:
    """The best of one kind of method (training-free or fine-tuned) by passkey accuracy; ``fails`` when even it
    retrieves at most 10 % of keys (``partial``: some methods of the pool were left out, their seeds disagree)."""

    kind: str
    scheme: str
    accuracy: float
    ties: tuple[str, ...]
    fails: bool
    partial: bool


@dataclass(frozen=True)
class PasskeyVerdict:
    """Notebook 11's passkey verdict at ``multiple`` × L_train: the best of each kind and training-free NTK's mean."""

    multiple: int
    free: PasskeyBest
    tuned: PasskeyBest
    ntk: float
    split: tuple[SeedValues, ...]


@dataclass(frozen=True)
class ExtensionVerdicts:
    """Notebook 11's verdicts at ``multiple`` × L_train (:func:`extension`).

    ``status`` of 000 §6.2's claim (``among_free``: NTK's standing among every training-free method;
    ``among_scalings``: among the frequency scalings alone, notebook 08's reading; ``unranked``: seeds disagree);
    ``finetune`` and ``passkey`` (None where the run scored no passkey).
    """

    metric: str
    multiple: int
    scale: Scale
    status: Status
    among_free: Standing
    among_scalings: Standing
    unranked: tuple[SeedValues, ...]
    finetune: FinetuneVerdict
    passkey: PasskeyVerdict | None


def _finetune(results: Mapping[str, Any], multiple: int, free: Sequence[str], tuned: Sequence[str]) -> FinetuneVerdict:
    best_free, free_ties = _best(results, multiple, free)
    best_tuned, tuned_ties = _best(results, multiple, tuned)
    ext = results.get("extension", {})
    evidence = paired(results, best_tuned, best_free, multiple)
    assert evidence is not None
    return FinetuneVerdict(
        multiple,
        ext.get("settings", {}).get("finetune_steps"),
        ext.get("finetune_len"),
        best_tuned,
        tuple(tuned_ties),
        _ppl(results, best_tuned, multiple),
        best_free,
        tuple(free_ties),
        _ppl(results, best_free, multiple),
        _FINETUNE.get(evidence.outcome, FinetuneRelation.NEITHER),
        evidence,
        _not_plateaued(results, [best_tuned, *tuned_ties]),
    )


def extension(results: Mapping[str, Any], multiple: int = 4) -> ExtensionVerdicts:
    """Notebook 11's verdicts at ``multiple`` × L_train, from a :func:`poslib.lab.run_extension` result.

    000 §6.2, NTK-RoPE is the strongest method without fine-tuning, judged against every training-free method of
    the run (frequency scalings and distance remaps): holds when NTK is the only method nothing beats, partly
    holds when nothing beats it but it is not alone, does not hold when a method beats it (NOT_AGAINST_UNLISTED
    when only remaps do: 000 ranked the remedies it lists). The finetune verdict: the best fine-tuned model against
    the best training-free method, paired; the passkey verdict: the same by passkey accuracy, where the run scored
    it (a best at or below :data:`~poslib.lab.seedstats.FAILS` is every method failing).
    """
    have = set(results["ppl"])
    free = [s for s in ("rope", *FREQUENCY_SCALINGS, *DISTANCE_REMAPS) if s in have]
    scalings = [s for s in ("rope", *FREQUENCY_SCALINGS) if s in have]
    tuned = [s for s in FINETUNED if s in have]
    if "rope+ntk" not in have or not tuned:
        raise ValueError("results must come from run_extension: rope+ntk and the fine-tuned models are missing")
    unranked = tuple(seed_record(results, s, multiple) for s in free + tuned if seeds_disagree(results, s, multiple))
    among_free = standing(results, "rope+ntk", multiple, free)
    status = _STATUS_OF_PLACE[among_free.place]
    if among_free.place == Place.BEST and among_free.ties:
        status = Status.PARTLY  # the lowest mean, but another method is not beaten by it (paired rule)
    beaten_by = [
        s for s in free if beats(results, s, "rope+ntk", multiple) and not seeds_disagree(results, s, multiple)
    ]
    if among_free.place == Place.BEATEN and all(s in DISTANCE_REMAPS for s in beaten_by):
        status = Status.NOT_AGAINST_UNLISTED
    keys = None
    if results.get("passkey"):
        split = {s for s in free + tuned if seeds_disagree(results, s, multiple, "passkey")}
        L = _length(results, "rope", multiple)

        def best_by_passkey(kind: str, pool: Sequence[str]) -> PasskeyBest:
            group = unbeaten(results, multiple, [s for s in pool if s not in split], "passkey")
            acc = results["passkey"][group[0]][L]
            return PasskeyBest(kind, group[0], acc, tuple(group[1:]), acc <= FAILS, bool(split & set(pool)))

        keys = PasskeyVerdict(
            multiple,
            best_by_passkey("training-free", free),
            best_by_passkey("fine-tuned", tuned),
            results["passkey"]["rope+ntk"][L],
            tuple(seed_record(results, s, multiple, "passkey") for s in sorted(split)),
        )
    return ExtensionVerdicts(
        "ppl",
        multiple,
        scale_of(results),
        status,
        among_free,
        standing(results, "rope+ntk", multiple, scalings),
        unranked,
        _finetune(results, multiple, free, tuned),
        keys,
    )


# ---- notebook 11's practitioner protocol (issue 35): plateaued fine-tunes, deployed baselines ---------------------


def finetune_plateaus(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per fine-tuned method and seed, its held-out loss curve judged by :func:`poslib.lab.plateau.heldout_plateau`.

    ``{"reached": bool, "change": the fitted loss's relative change over another 30 % of the steps (negative:
    still falling), "window": the first and last step fitted}``.
    """
    out: dict[str, dict[str, Any]] = {}
    for method in FINETUNED:
        records = results.get("training", {}).get(method, {})
        out[method] = {}
        for seed, r in records.items():
            if "heldout" in r:
                p = heldout_plateau(r["heldout"]["steps"], r["heldout"]["loss"])
                out[method][seed] = {"reached": p.plateaued, "change": p.change, "window": p.window}
    return out


def _not_plateaued(results: Mapping[str, Any], methods: Sequence[str]) -> tuple[tuple[str, str, float], ...]:
    """(method, seed, change) of every fine-tune among ``methods`` whose held-out curve fails the plateau rule."""
    found = finetune_plateaus(results)
    return tuple((m, seed, p["change"]) for m in methods for seed, p in found.get(m, {}).items() if not p["reached"])


@dataclass(frozen=True)
class DeployedClaim:
    """000 §6.2 with NTK as deployed (``matched`` False: one factor chosen on held-out bytes) or given the test
    length (``matched`` True), at ``multiple`` × L_train."""

    matched: bool
    status: Status
    standing: Standing


@dataclass(frozen=True)
class CostVerdict:
    """What a fine-tune costs at L_train against the model it started from (paired rule), perplexity and passkey
    (mean accuracy before and after; None where the run scored no passkey)."""

    method: str
    cost: Cost
    evidence: PairedComparison
    passkey_before: float | None
    passkey_after: float | None


@dataclass(frozen=True)
class DeployedVerdicts:
    """Notebook 11's verdicts as a practitioner would run them, at ``multiple`` × L_train (:func:`deployed`).

    ``judged_len``: the length the fine-tunes are judged at (``multiple`` × ``train_len``), against their own
    ``finetune_len``; ``apart``: fine-tunes whose seeds disagree there.
    """

    metric: str
    multiple: int
    scale: Scale
    claim: DeployedClaim
    matched: DeployedClaim
    finetune: FinetuneVerdict
    judged_len: int
    apart: tuple[SeedValues, ...]
    costs: tuple[CostVerdict, ...]

    def statuses(self) -> dict[str, enum.StrEnum]:
        """Each verdict's status: ``"claim"``, ``"matched"`` (:class:`Status`), ``"finetune"``
        (:class:`FinetuneRelation`), ``"cost <method>"`` (:class:`Cost`)."""
        out: dict[str, enum.StrEnum] = {
            "claim": self.claim.status,
            "matched": self.matched.status,
            "finetune": self.finetune.relation,
        }
        out.update({f"cost {c.method}": c.cost for c in self.costs})
        return out


def _pools(results: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """The readings :func:`deployed` compares: (as deployed, given the test length, fine-tuned)."""
    have = set(results["ppl"])
    deployed = [s for s in ("rope", *TUNED_SCALINGS, "rope+rerope", "rope+leaky_rerope", *DEPLOYED_REMAPS) if s in have]
    matched = [s for s in ("rope", *KNOWS_TEST_LENGTH, "rope+rerope", "rope+leaky_rerope") if s in have]
    return deployed, matched, [s for s in FINETUNED if s in have]


def deployed(results: Mapping[str, Any], multiple: int) -> DeployedVerdicts:
    """:class:`DeployedVerdicts` at ``multiple`` × L_train (paired rule).

    The claim: 000 §6.2 with every baseline as deployed, NTK at the factor chosen on held-out bytes
    (``rope+ntk_tuned``) among the readings that need no knowledge of the test length; the matched claim: the same
    among the readings given the test length; the fine-tune: the best fine-tuned model against the best deployed
    reading; the costs: each fine-tune at L_train against the model it started from, perplexity and passkey.
    """
    have = set(results["ppl"])
    if not all(name in have for name in TUNED_SCALINGS):
        raise ValueError("these results have no tuned readings: run --extend with --factor-grid")
    pools, matched_pool, tuned = _pools(results)
    found = []
    for is_matched, pool, ntk in ((False, pools, "rope+ntk_tuned"), (True, matched_pool, "rope+ntk")):
        where = standing(results, ntk, multiple, pool)
        status = _STATUS_OF_PLACE[where.place]
        if where.place == Place.BEST and where.ties:
            status = Status.PARTLY
        found.append(DeployedClaim(is_matched, status, where))
    train_len = LabConfig.from_dict(results["config"]).train_len
    finetune = _finetune(results, multiple, pools, tuned)
    costs = []
    for method in tuned:
        cost = paired(results, method, "rope", 1)
        assert cost is not None
        before = after = None
        if results.get("passkey"):
            pk_before, pk_after = passkey_values(results, "rope", 1), passkey_values(results, method, 1)
            if pk_before is not None and pk_after is not None:
                before, after = sum(pk_before) / len(pk_before), sum(pk_after) / len(pk_after)
        costs.append(CostVerdict(method, _COST.get(cost.outcome, Cost.NEITHER), cost, before, after))
    apart = tuple(seed_record(results, s, multiple) for s in tuned if seeds_disagree(results, s, multiple))
    return DeployedVerdicts(
        "ppl",
        multiple,
        scale_of(results),
        found[0],
        found[1],
        finetune,
        multiple * train_len,
        apart,
        tuple(costs),
    )


def deployed_statuses(results: Mapping[str, Any], multiple: int) -> dict[str, enum.StrEnum]:
    """The status of each of :func:`deployed`'s verdicts, to compare two runs (:meth:`DeployedVerdicts.statuses`).

    ``"claim"`` and ``"matched"``: "holds", "partly holds" or "does not hold"; ``"finetune"``: "beats",
    "neither beats" or "loses to" (the best fine-tune against the best deployed reading); ``"cost <method>"``
    per fine-tune: "gains", "neither" or "costs" at L_train against the model it started from (paired rule).
    """
    return deployed(results, multiple).statuses()


@dataclass(frozen=True)
class PractitionerClaim:
    """One claim notebook 11 reads off its practitioner run (§5), measured in a run by the paired rule.

    ``holds``: whether it holds there; ``near_threshold``: whether a paired comparison it rests on lies within a
    tenth of the rule's threshold; ``rests_on``: those comparisons; ``measured``: the numbers the claim is read
    from, by name (comparisons, counts, per-seed values), for the wording layer to state.
    """

    key: str
    holds: bool
    near_threshold: bool
    rests_on: tuple[PairedComparison, ...]
    measured: Mapping[str, Any]


def _paired(results: Mapping[str, Any], a: str, b: str, multiple: int) -> PairedComparison:
    comparison = paired(results, a, b, multiple)
    if comparison is None:
        raise ValueError(f"{a} or {b} has no perplexity at {multiple}× L_train")
    return comparison


def practitioner_verdicts(results: Mapping[str, Any]) -> dict[str, PractitionerClaim]:
    """The claims of notebook 11's §5 (:class:`PractitionerClaim`, keyed), measured in ``results``.

    Fine-tunes are judged at 4× (their own length) and 16× (beyond it), costs at L_train, so that the same claims
    can be checked in another run (:func:`extension_agreement`) instead of being assumed to carry over.
    """
    if not all(name in results["ppl"] for name in (*TUNED_SCALINGS, *FINETUNED)):
        raise ValueError("these results have no practitioner readings: run --extend with --factor-grid")
    seeds = list(results["runs"]["rope"])
    free = [s for s in results["ppl"] if s not in FINETUNED]  # every training-free reading, matched or deployed
    out: dict[str, PractitionerClaim] = {}

    def claim(key: str, holds: bool, rests_on: Sequence[PairedComparison], **measured: Any) -> None:
        near = any(c.near_threshold for c in rests_on)
        out[key] = PractitionerClaim(key, bool(holds), near, tuple(rests_on), measured)

    yarn4 = {s: _paired(results, "rope+ft_yarn", s, 4) for s in free}
    wins = [s for s, c in yarn4.items() if c.outcome is Outcome.A_BEATS_B]
    closest = max(free, key=lambda s: yarn4[s].mean)
    claim(
        "yarn_ft_beats_free_at_4x",
        len(wins) == len(free),
        list(yarn4.values()),
        wins=len(wins),
        of=len(free),
        closest=closest,
        evidence=yarn4[closest],
    )
    best16 = unbeaten(results, 16, free)[0]
    against = {m: _paired(results, m, best16, 16) for m in FINETUNED}
    claim(
        "finetunes_lose_at_16x",
        all(c.outcome is Outcome.B_BEATS_A for c in against.values()),
        list(against.values()),
        best=best16,
        against=against,
    )
    plain = _paired(results, "rope+ft", "rope", 16)
    claim("plain_ft_helps_at_16x", plain.outcome is Outcome.A_BEATS_B, [plain], evidence=plain)
    costs = {m: _paired(results, m, "rope", 1) for m in FINETUNED}
    gains = [m for m in FINETUNED if costs[m].outcome is Outcome.A_BEATS_B]
    claim("only_yarn_gains_at_train", gains == ["rope+ft_yarn"], list(costs.values()), costs=costs)
    kept = ("rope+ft", "rope+ft_ntk", "rope+ft_yarn")
    keys = {m: passkey_values(results, m, 1) or [0.0] for m in (*FINETUNED, "rope")}
    claim(
        "kept_fine_tunes_cost_nothing",
        all(costs[m].outcome is not Outcome.B_BEATS_A and min(keys[m]) >= RETRIEVES for m in kept),
        [costs[m] for m in kept],
        costs={m: costs[m] for m in kept},
        passkey={m: tuple(keys[m]) for m in kept},
    )
    pi_keys = paired(results, "rope+ft_pi", "rope", 1, "passkey") if results.get("passkey") else None
    claim(
        "pi_ft_costs_at_train",
        costs["rope+ft_pi"].outcome is Outcome.B_BEATS_A
        and pi_keys is not None
        and pi_keys.outcome is Outcome.B_BEATS_A,
        [costs["rope+ft_pi"], *([pi_keys] if pi_keys is not None else [])],
        evidence=costs["rope+ft_pi"],
        passkey=pi_keys,
    )
    logn = {k: _paired(results, "rope+rerope_logn", "rope+ntk_tuned", k) for k in (4, 16)}
    claim(
        "rerope_logn_beats_ntk",
        all(c.outcome is Outcome.A_BEATS_B for c in logn.values()),
        list(logn.values()),
        by_multiple=logn,
    )
    short = _paired(results, "rope+ntk_tuned", "rope", 1)
    claim("ntk_tuned_costs_short", short.outcome is Outcome.B_BEATS_A, [short], evidence=short)
    grid = [str(f) for f in results["extension"]["settings"]["factor_grid"]]
    chosen = [str(results["extension"]["deployed"]["rope+ntk_tuned"][k]) for k in seeds]
    search = [
        results["training"]["rope"][k]["factor_search"]["rope+ntk_tuned"]["heldout_ppl_at_longest"] for k in seeds
    ]
    claim(
        "ntk_at_grid_edge",
        chosen == [grid[-1]] * len(seeds),
        [],
        largest=grid[-1],
        next_largest=grid[-2],
        chosen=tuple(chosen),
        heldout=tuple((g[grid[-2]], g[grid[-1]]) for g in search),
    )
    return out


@dataclass(frozen=True)
class AgreementRow:
    """One of notebook 11's verdicts in two runs of the extension protocol (:func:`extension_agreement`).

    ``key``: a status of :meth:`DeployedVerdicts.statuses` (at ``multiple`` ×, or at L_train for ``"cost …"``,
    ``multiple`` None) or a :class:`PractitionerClaim` key (``claim`` True); ``here`` and ``there`` its value in each
    run; ``near``: a comparison behind it lies within a tenth of the threshold in either run; ``best_here`` and
    ``best_there``: the best reading of a ranking in each run (the same status word can hide a new winner).
    """

    key: str
    multiple: int | None
    claim: bool
    here: enum.StrEnum
    there: enum.StrEnum
    near: bool
    agreement: Agreement
    best_here: str | None = None
    best_there: str | None = None


def extension_agreement(
    base: Mapping[str, Any], other: Mapping[str, Any], multiples: Sequence[int] = (4, 16)
) -> list[AgreementRow]:
    """Whether notebook 11's practitioner verdicts hold at a second scale: two runs of the same extension protocol.

    One row per verdict: each status of :func:`deployed_statuses` at every multiple (the costs at L_train once),
    then each claim of :func:`practitioner_verdicts` (HOLDS / FAILS), with ``agreement`` SAME, DIFFERS, or
    AT_THRESHOLD when the statuses differ and a comparison behind them lies within a tenth of the paired rule's
    threshold in either run (the threshold, not the direction, changed). Raises ValueError when the two runs do not
    hold the same verdicts.
    """
    rows: list[AgreementRow] = []
    pools = {"claim": 0, "matched": 1, "finetune": 2}

    def row(key: str, multiple: int | None, claim: bool, here: Any, there: Any, near: bool, **best: Any) -> None:
        agreement = Agreement.SAME if here == there else Agreement.AT_THRESHOLD if near else Agreement.DIFFERS
        rows.append(AgreementRow(key, multiple, claim, here, there, near, agreement, **best))

    for i, k in enumerate(multiples):
        mine, theirs = deployed_statuses(base, k), deployed_statuses(other, k)
        if set(mine) != set(theirs):
            raise ValueError(f"the two runs hold different verdicts at {k}×: {sorted(set(mine) ^ set(theirs))}")
        for key in mine:
            if key.startswith("cost "):  # measured at L_train: the same whatever the multiple
                if i == 0:
                    method = key.removeprefix("cost ")
                    near = any(_paired(r, method, "rope", 1).near_threshold for r in (base, other))
                    row(key, None, False, mine[key], theirs[key], near)
                continue
            best_here, best_there = (unbeaten(r, k, _pools(r)[pools[key]])[0] for r in (base, other))
            row(key, k, False, mine[key], theirs[key], False, best_here=best_here, best_there=best_there)
    here, there = practitioner_verdicts(base), practitioner_verdicts(other)
    if set(here) != set(there):
        raise ValueError(f"the two runs hold different claims: {sorted(set(here) ^ set(there))}")
    word = {True: Holds.HOLDS, False: Holds.FAILS}
    for key, c in here.items():
        near = c.near_threshold or there[key].near_threshold
        row(key, None, True, word[c.holds], word[there[key].holds], near)
    return rows


# ---- notebook 12: the schemes whose position comes from the data ----------------------------------------------------


def datadep_readings(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """What notebook 12's lab section states, from the 08 run (``base``) and the notebook-12 run (``extra``).

    Every comparison is the paired rule (:func:`~poslib.lab.seedstats.paired`) on
    :func:`~poslib.lab.seedstats.combine_runs`, with Holm's correction over all of them (the family notebook 12
    states: each data-dependent scheme against every scheme of ``base`` at 1×, 4× and 16×, the three among
    themselves at 16×, the hybrid against ``rope`` at 1×, 4× and 16×). Keys:

    * ``falls``: per data-dependent scheme, the per-seed ratios ppl(16×) / ppl(1×) (below 1: perplexity falls
      with length on that seed);
    * ``against_base``: per data-dependent scheme and multiple (1, 4, 16), the schemes of ``base`` it beats,
      neither beats nor loses to ("neither": not distinguished, or within the threshold) and loses to, and those
      with no perplexity at that length ("not defined");
    * ``among``: the verdicts among the three (at 16×), as :class:`~poslib.lab.seedstats.PairedComparison`;
    * ``rope_growth``: `rope`'s per-seed ratios ppl(16×) / ppl(1×);
    * ``passkey``: per scheme of ``extra``, the per-seed accuracies at 1× (mean over depths);
    * ``answer_loss``: per trained scheme of ``extra``, the per-seed passkey answer loss at the end of training
      (the last point of ``passkey_loss_curve``, nats per digit; guessing among ten digits is ln 10 = 2.303);
    * ``hybrid``: ``rope_nope_hybrid`` against ``rope`` at 1×, 4× and 16×.
    """
    from .seedstats import combine_runs

    base_schemes = list(LabConfig.from_dict(base["config"]).schemes)
    multiples = (1, 4, 16)

    def statements(r: Mapping[str, Any]) -> None:  # every comparison notebook 12 states: one Holm family
        for scheme in DATA_DEPENDENT:
            for k in multiples:
                for other in base_schemes:
                    paired(r, scheme, other, k)
        for i, a in enumerate(DATA_DEPENDENT):
            for b in DATA_DEPENDENT[i + 1 :]:
                paired(r, a, b, 16)
        for k in multiples:
            paired(r, "rope_nope_hybrid", "rope", k)

    results = with_family(combine_runs(base, extra), statements)

    def ratios(scheme: str) -> list[float]:
        low, high = seed_values(results, scheme, 1), seed_values(results, scheme, 16)
        assert low is not None and high is not None
        return [h / lo for lo, h in zip(low, high, strict=True)]

    against: dict[str, dict[int, dict[str, list[str]]]] = {}
    word = {
        Outcome.A_BEATS_B: "beats",
        Outcome.NOT_DISTINGUISHED: "neither",
        Outcome.BELOW_THRESHOLD: "neither",
        Outcome.B_BEATS_A: "loses to",
    }
    for scheme in DATA_DEPENDENT:
        against[scheme] = {}
        for k in multiples:
            groups: dict[str, list[str]] = {"beats": [], "neither": [], "loses to": [], "not defined": []}
            for other in base_schemes:
                comparison = paired(results, scheme, other, k)
                if comparison is None:
                    groups["not defined"].append(other)  # a learned table has no row beyond its length
                    continue
                groups[word[comparison.outcome]].append(other)
            against[scheme][k] = groups
    among = {(a, b): paired(results, a, b, 16) for i, a in enumerate(DATA_DEPENDENT) for b in DATA_DEPENDENT[i + 1 :]}
    extra_schemes = list(LabConfig.from_dict(extra["config"]).schemes)
    answer_loss: dict[str, list[float]] = {}
    for scheme, by_seed in extra.get("training", {}).items():
        curves = [rec.get("passkey_loss_curve") or [] for rec in by_seed.values()]
        if all(curves):
            answer_loss[scheme] = [float(curve[-1]) for curve in curves]
    return {
        "falls": {s: ratios(s) for s in DATA_DEPENDENT},
        "against_base": against,
        "among": among,
        "rope_growth": ratios("rope"),
        "passkey": {s: passkey_values(results, s, 1) for s in extra_schemes},
        "answer_loss": answer_loss,
        "hybrid": {k: paired(results, "rope_nope_hybrid", "rope", k) for k in multiples},
    }


# ---- the family a notebook states -----------------------------------------------------------------------------------


def stated_family(
    results: Mapping[str, Any],
    pairs: Sequence[tuple[str, str, int]] = (),
    passkey_pairs: Sequence[tuple[str, str, int]] = (),
) -> Any:
    """``results`` with the Holm family of the comparisons a notebook states from it (:func:`with_family`).

    The family is every paired comparison drawn on by the verdict functions that apply to the run, at the lengths
    the notebooks state them: for a run of the 18 schemes, :func:`claims`, :func:`takeaway_verdicts`,
    :func:`orderings` and the published pairs of :func:`scale_agreement` at 8 × L_train (and
    :func:`disagreement_verdicts` where the run scored passkey retrieval); for an extension run, :func:`extension`
    at 4 ×, :func:`deployed` at 4 × and 16 × and :func:`practitioner_verdicts` where it has their readings; plus
    ``pairs`` (perplexity) and ``passkey_pairs`` ((a, b, multiple) each), the notebook's own statements. Returns
    the same kind of object it is given (a :class:`~poslib.lab.results.LabResults` stays one).
    """
    schemes = set(results["ppl"])

    def statements(r: Mapping[str, Any]) -> None:
        if "extension" in r:
            extension(r, 4)
            if set(TUNED_SCALINGS) <= schemes:
                deployed(r, 4)
                deployed(r, 16)
                practitioner_verdicts(r)
        else:
            claims(r, 8)
            takeaway_verdicts(r, 8)
            orderings(r, 8)
            scale_agreement(r, r, 8)
            if r.get("passkey") is not None:
                disagreement_verdicts(r, 8)
        for a, b, k in pairs:
            paired(r, a, b, k)
        for a, b, k in passkey_pairs:
            paired(r, a, b, k, "passkey")

    family = with_family(results, statements)
    from .results import LabResults  # results imports the run machinery: loaded on first use

    return LabResults.from_dict(family) if isinstance(results, LabResults) else family
