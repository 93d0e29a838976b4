"""The numbers of a lab run over seeds, and the paired comparison that notebooks 08, 11 and 12 decide by.

Every seed of a run is one trained model (and in an extension run every method of a seed starts from the same
one), scored on the same validation bytes and passkey keys, so two schemes are compared seed by seed, never by
their unpaired ranges (:func:`paired`). For perplexity the per-seed difference is the log ratio

    d_i = ln ppl_a,i − ln ppl_b,i         (a log, so that a against b is exactly b against a reversed)

reported as the *paired ratio* exp(d̄), the geometric mean of ppl_a / ppl_b over seeds; for passkey accuracy it is
the difference in points, d_i = acc_a,i − acc_b,i.

**The rule these notebooks use** (:attr:`PairedComparison.outcome`, issue 45; :mod:`poslib.lab.stats`): a **beats**
b when a two-sided paired t-test over seeds on the per-seed differences gives p ≤ α = 0.05 after Holm's correction
over the family of comparisons the notebook states (:func:`with_family`; a comparison outside any family is tested
alone) *and* the mean paired difference reaches the threshold, a paired ratio beyond ×1.03 either way (:data:`TIE`,
3 %) or 10 points of accuracy (:data:`PASSKEY_TIE`). A difference the test finds but below the threshold is
"distinguished, below the threshold"; everything else is **not distinguished at n seeds**, never "tied": the
comparison keeps its effect, 95 % interval and how many seeds favour each side. With one seed nothing is
distinguished (no spread to test against). "Beats" cannot run in a circle (a beating b and b beating c give a
mean paired difference of a against c beyond twice the threshold, so c cannot beat a), so the schemes that nothing
beats always exist.

**When the seeds disagree, no mean is read.** A scheme's seeds **disagree** at a length when their perplexities
differ by more than a factor :data:`PPL_DISAGREE` (max / min > 1.5), or their passkey accuracies span more than
:data:`PASSKEY_DISAGREE` (max − min > 0.5): a mean over such seeds describes none of them (:func:`seeds_disagree`).

This module returns numbers and dataclasses only; :mod:`poslib.lab.verdicts` decides the notebooks' verdicts
from them and :mod:`poslib.lab.wording` writes the sentences.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .config import LabConfig
from .stats import ALPHA, Relation, decide, holm_adjust, t_quantile, two_sided_p

__all__ = [
    "CPU_NOISE",
    "EXTRAPOLATES",
    "FAILS",
    "FAMILY",
    "GRACEFUL",
    "PASSKEY_DISAGREE",
    "PASSKEY_TIE",
    "PLATEAU_SHARE",
    "PLATEAU_TOLERANCE",
    "PPL_DISAGREE",
    "RETRIEVES",
    "TIE",
    "Outcome",
    "PairedComparison",
    "SeedValues",
    "beats",
    "combine_runs",
    "family_key",
    "growth",
    "growth_range",
    "n_seeds",
    "paired",
    "passkey_ranking",
    "passkey_spread",
    "passkey_tied",
    "passkey_values",
    "per_seed_growth",
    "plateau",
    "ranking",
    "retrieval_reach",
    "seed_record",
    "seed_values",
    "seeds_disagree",
    "spread",
    "tied",
    "with_family",
]

EXTRAPOLATES, GRACEFUL, TIE = 1.05, 1.5, 0.03
# the notebooks' replays allow a retrain on another CPU to move a perplexity by 0.1 % (their bound, not a
# measurement): a per-seed sign smaller than that is flagged in the paired evidence
CPU_NOISE = 0.001
PPL_DISAGREE, PASSKEY_DISAGREE = 1.5, 0.5  # seeds disagree: ppl max/min above, or passkey max − min above
RETRIEVES, FAILS, PASSKEY_TIE = 0.9, 0.1, 0.1  # passkey: retrieves at or above, fails at or below; paired tie
PLATEAU_SHARE, PLATEAU_TOLERANCE = 0.1, 0.03  # the last 10 % of a curve within 3 % of the 10 % before


def _check_metric(metric: str) -> None:
    if metric not in ("ppl", "passkey"):
        raise ValueError(f"metric must be 'ppl' or 'passkey', got {metric!r}")


def _length(results: Mapping[str, Any], scheme: str, multiple: int) -> str:
    if scheme not in results["ppl"]:
        raise ValueError(f"scheme {scheme!r} is not in these results; they have {list(results['ppl'])}")
    cfg = LabConfig.from_dict(results["config"])
    L = multiple * cfg.train_len
    if L not in cfg.eval_lens:
        raise ValueError(
            f"multiple {multiple} × train_len = {L} was not evaluated; eval_lens are {list(cfg.eval_lens)}"
        )
    return str(L)


def _ppl(results: Mapping[str, Any], scheme: str, multiple: int) -> float | None:
    L = _length(results, scheme, multiple)
    value: float | None = results["ppl"][scheme][L]
    return value


def n_seeds(results: Mapping[str, Any]) -> int:
    """How many seeds the run averaged over."""
    return len(LabConfig.from_dict(results["config"]).train.seeds)


def seed_values(results: Mapping[str, Any], scheme: str, multiple: int = 8) -> list[float] | None:
    """The per-seed perplexities of ``scheme`` at ``multiple`` × L_train (None where not defined).

    Results without per-seed records (``runs``) count as one seed: the mean itself.
    """
    L = _length(results, scheme, multiple)
    runs = results.get("runs", {}).get(scheme)
    if runs and all("ppl" in run for run in runs.values()):
        values = [run["ppl"][L] for run in runs.values()]
    else:
        values = [results["ppl"][scheme][L]]
    return None if any(v is None for v in values) else values


def passkey_values(results: Mapping[str, Any], scheme: str, multiple: int = 1) -> list[float] | None:
    """Per-seed passkey accuracy (mean over depths) of ``scheme`` at ``multiple`` × L_train; None where not defined."""
    if results.get("passkey") is None:
        raise ValueError("these results have no passkey retrieval (run with --passkey)")
    L = _length(results, scheme, multiple)
    rows = [run["passkey"][L] for run in results["runs"][scheme].values()]
    return None if None in rows else [sum(row.values()) / len(row) for row in rows]


def _seed_ids(results: Mapping[str, Any], scheme: str, n: int) -> list[str]:
    """The seed ids of ``scheme``'s per-seed values, in the order :func:`seed_values` returns them."""
    runs = results.get("runs", {}).get(scheme) or {}
    return list(runs) if len(runs) == n else [str(k) for k in range(n)]


@dataclass(frozen=True)
class SeedValues:
    """The per-seed values of one scheme at one length: ``values[i]`` is seed ``seeds[i]``'s.

    ``metric`` is "ppl" (perplexities) or "passkey" (accuracies, mean over depths); ``values`` is None where the
    scheme is not defined at that length (a learned table beyond its rows).
    """

    scheme: str
    metric: str
    multiple: int
    seeds: tuple[str, ...]
    values: tuple[float, ...] | None


def seed_record(results: Mapping[str, Any], scheme: str, multiple: int = 8, metric: str = "ppl") -> SeedValues:
    """:class:`SeedValues` of ``scheme`` at ``multiple`` × L_train: what a verdict shows instead of a mean."""
    _check_metric(metric)
    values = seed_values(results, scheme, multiple) if metric == "ppl" else passkey_values(results, scheme, multiple)
    seeds = tuple(_seed_ids(results, scheme, len(values))) if values is not None else ()
    return SeedValues(scheme, metric, multiple, seeds, None if values is None else tuple(values))


def spread(results: Mapping[str, Any], scheme: str, multiple: int = 8) -> float | None:
    """Range (max − min) over seeds of the perplexity at ``multiple`` × L_train; 0 for one seed."""
    values = seed_values(results, scheme, multiple)
    return None if values is None else max(values) - min(values)


def passkey_spread(results: Mapping[str, Any], scheme: str, multiple: int = 1) -> float | None:
    """Range (max − min) over seeds of the passkey accuracy at ``multiple`` × L_train; 0 for one seed."""
    values = passkey_values(results, scheme, multiple)
    return None if values is None else max(values) - min(values)


def seeds_disagree(results: Mapping[str, Any], scheme: str, multiple: int = 8, metric: str = "ppl") -> bool:
    """Whether the seeds of ``scheme`` disagree at ``multiple`` × L_train (module docstring).

    ``metric="ppl"``: the per-seed perplexities differ by more than a factor :data:`PPL_DISAGREE`;
    ``metric="passkey"``: the per-seed passkey accuracies span more than :data:`PASSKEY_DISAGREE`.
    False where the value is not defined, and always with one seed (nothing to disagree with).
    """
    _check_metric(metric)
    if metric == "ppl":
        values = seed_values(results, scheme, multiple)
        return values is not None and len(values) > 1 and max(values) > PPL_DISAGREE * min(values)
    accs = passkey_values(results, scheme, multiple)
    return accs is not None and len(accs) > 1 and max(accs) - min(accs) > PASSKEY_DISAGREE


def growth(results: Mapping[str, Any], scheme: str, multiple: int = 8) -> float | None:
    """Mean ppl at ``multiple`` × L_train divided by mean ppl at L_train (None where either is not defined)."""
    hi, lo = _ppl(results, scheme, multiple), _ppl(results, scheme, 1)
    return None if hi is None or lo is None else hi / lo


def per_seed_growth(results: Mapping[str, Any], scheme: str, multiple: int = 8) -> tuple[float, ...] | None:
    """Each seed's growth ppl(multiple × L) / ppl(L), in seed order (None where either is not defined)."""
    hi, lo = seed_values(results, scheme, multiple), seed_values(results, scheme, 1)
    if hi is None or lo is None:
        return None
    return tuple(h / low for h, low in zip(hi, lo, strict=True))


def growth_range(results: Mapping[str, Any], scheme: str, multiple: int = 8) -> tuple[float, float] | None:
    """The smallest and largest per-seed growth ppl(multiple × L) / ppl(L)."""
    ratios = per_seed_growth(results, scheme, multiple)
    return None if ratios is None else (min(ratios), max(ratios))


def ranking(
    results: Mapping[str, Any], multiple: int = 8, schemes: Sequence[str] | None = None
) -> list[tuple[str, float]]:
    """``(scheme, mean ppl)`` at ``multiple`` × L_train, best (lowest) first; schemes not defined there are left out."""
    names = list(schemes) if schemes is not None else list(results["ppl"])
    values = [(s, _ppl(results, s, multiple)) for s in names]
    return sorted(((s, v) for s, v in values if v is not None), key=lambda sv: sv[1])


def passkey_ranking(
    results: Mapping[str, Any], multiple: int = 1, schemes: Sequence[str] | None = None
) -> list[tuple[str, float]]:
    """``(scheme, mean accuracy)`` at ``multiple`` × L_train, best (highest) first; undefined ones left out."""
    names = list(schemes) if schemes is not None else list(results["passkey"])
    L = _length(results, names[0], multiple) if names else "0"
    values = [(s, results["passkey"][s][L]) for s in names]
    return sorted(((s, v) for s, v in values if v is not None), key=lambda sv: -sv[1])


def retrieval_reach(results: Mapping[str, Any], scheme: str) -> int:
    """The largest multiple of L_train up to which the mean accuracy stays ≥ :data:`RETRIEVES` (0: not even at 1×)."""
    cfg = LabConfig.from_dict(results["config"])
    reach = 0
    for L in cfg.eval_lens:
        acc = results["passkey"][scheme][str(L)]
        if acc is None or acc < RETRIEVES:
            break
        reach = L // cfg.train_len
    return reach


# ---- the paired comparison ------------------------------------------------------------------------------------------


class Outcome(enum.StrEnum):
    """What the paired rule concludes about a against b (module docstring). A and B keep the letters the rule has
    always answered with ("a", "b"); neither side wins in the other two."""

    A_BEATS_B = "a"
    B_BEATS_A = "b"
    BELOW_THRESHOLD = "below_threshold"  # the test distinguishes them, the effect is under the threshold
    NOT_DISTINGUISHED = "not_distinguished"  # the test does not distinguish them at these seeds

    @property
    def decided(self) -> bool:
        """Whether one side beats the other."""
        return self in (Outcome.A_BEATS_B, Outcome.B_BEATS_A)


_OUTCOME_OF = {
    Relation.A_BEATS_B: Outcome.A_BEATS_B,
    Relation.B_BEATS_A: Outcome.B_BEATS_A,
    Relation.BELOW_THRESHOLD: Outcome.BELOW_THRESHOLD,
    Relation.NOT_DISTINGUISHED: Outcome.NOT_DISTINGUISHED,
}


@dataclass(frozen=True)
class PairedComparison:
    """Scheme ``a`` against scheme ``b`` seed by seed (module docstring): the paired rule's evidence and outcome.

    ``values_a`` and ``values_b`` are the per-seed perplexities (or passkey accuracies) of ``seeds``, paired by seed
    id, at ``multiple`` × L_train = ``length`` tokens. ``diffs`` holds one paired difference per seed, in that
    order: ln ppl_a − ln ppl_b for perplexity, acc_a − acc_b for passkey accuracy. ``better`` counts the seeds on
    which ``a`` is better (lower perplexity, higher accuracy), ``worse`` those on which it is worse. ``p_holm`` is
    the test's p after Holm's correction over the ``family`` of comparisons it was stated with (None: tested alone,
    a family of one).
    """

    a: str
    b: str
    metric: str
    multiple: int
    diffs: tuple[float, ...]
    better: int
    worse: int
    seeds: tuple[str, ...]
    values_a: tuple[float, ...]
    values_b: tuple[float, ...]
    length: int
    p_holm: float | None = None
    family: int = 1

    @property
    def n(self) -> int:
        """The number of paired seeds."""
        return len(self.diffs)

    @property
    def mean(self) -> float:
        """The mean paired difference (of log perplexities, or of accuracies)."""
        return sum(self.diffs) / len(self.diffs)

    @property
    def threshold(self) -> float:
        """The smallest mean paired difference that can decide: ln(1 + :data:`TIE`), or :data:`PASSKEY_TIE`."""
        return math.log1p(TIE) if self.metric == "ppl" else PASSKEY_TIE

    @property
    def outcome(self) -> Outcome:
        """The rule (module docstring): the paired t-test at α after Holm's correction, and the threshold.

        A seed on which the two are equal (both at 100 % retrieval, say) counts for neither side; it still enters
        the test as a difference of 0.
        """
        p = self.p_decides
        if p is None:
            return Outcome.NOT_DISTINGUISHED
        return _OUTCOME_OF[decide(self.mean, p, "ppl" if self.metric == "ppl" else "passkey", ALPHA)]

    @property
    def p_decides(self) -> float | None:
        """The p value the rule reads: Holm's adjusted p within the family, else the test's own (None: one seed)."""
        return self.p_holm if self.p_holm is not None else self.p

    @property
    def effect(self) -> float:
        """The mean effect: the paired ratio exp(d̄) for perplexity, the mean difference for passkey accuracy."""
        return math.exp(self.mean) if self.metric == "ppl" else self.mean

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95 % t interval of :attr:`effect` (as a ratio for perplexity); None with one seed."""
        if self.n < 2:
            return None
        s = math.sqrt(sum((d - self.mean) ** 2 for d in self.diffs) / (self.n - 1))
        half = t_quantile(0.975, self.n - 1) * s / math.sqrt(self.n)
        low, high = self.mean - half, self.mean + half
        return (math.exp(low), math.exp(high)) if self.metric == "ppl" else (low, high)

    @property
    def verdict(self) -> Outcome:
        """:attr:`outcome`, under the name the notebooks read ("a", "b" or "tie")."""
        return self.outcome

    @property
    def near_threshold(self) -> bool:
        """Whether the threshold alone decides: the test distinguishes the two and the mean paired difference lies
        within a tenth of the threshold, on either side (a win that is nearly below it, or the reverse)."""
        p = self.p_decides
        distinguished = p is not None and p <= ALPHA
        return distinguished and abs(abs(self.mean) - self.threshold) < 0.1 * self.threshold

    @property
    def noisy(self) -> int:
        """For perplexity, the seeds whose ratio lies within :data:`CPU_NOISE` of 1 (a sign another CPU could
        reverse); 0 for passkey accuracy."""
        if self.metric != "ppl":
            return 0
        return sum(0 < abs(d) < math.log1p(CPU_NOISE) for d in self.diffs)

    @property
    def t(self) -> float | None:
        """The paired t statistic d̄ / (s / √n) of the per-seed differences (None with one seed).

        Identical differences give ±inf (0 when they are all zero): no spread to divide by.
        """
        if self.n < 2:
            return None
        s = math.sqrt(sum((d - self.mean) ** 2 for d in self.diffs) / (self.n - 1))
        if s == 0:
            return 0.0 if self.mean == 0 else math.copysign(math.inf, self.mean)
        return self.mean / (s / math.sqrt(self.n))

    @property
    def p(self) -> float | None:
        """The two-sided p value of :attr:`t` with n − 1 degrees of freedom (None with one seed)."""
        t = self.t
        return None if t is None else two_sided_p(t, self.n - 1)

    def text(self) -> str:
        """The comparison as a phrase from ``a``'s side, in poslib's language (:mod:`poslib.lab.wording`)."""
        from .wording import paired_text  # the wording layer imports this module: loaded on first use

        return paired_text(self)


def paired(
    results: Mapping[str, Any], a: str, b: str, multiple: int = 8, metric: str = "ppl"
) -> PairedComparison | None:
    """``a`` against ``b`` at ``multiple`` × L_train, seed by seed (module docstring); None where either is undefined.

    ``metric="ppl"``: per-seed log ratios of perplexity, threshold ln(1 + :data:`TIE`);
    ``metric="passkey"``: per-seed differences of passkey accuracy, threshold :data:`PASSKEY_TIE`.
    """
    _check_metric(metric)
    if metric == "ppl":
        va, vb = seed_values(results, a, multiple), seed_values(results, b, multiple)
    else:
        va, vb = passkey_values(results, a, multiple), passkey_values(results, b, multiple)
    if va is None or vb is None:
        return None
    # pair by seed id, not by the order the runs happen to be stored in (a resumed run may store them otherwise)
    ids_a, ids_b = _seed_ids(results, a, len(va)), _seed_ids(results, b, len(vb))
    if sorted(ids_a) != sorted(ids_b):
        raise ValueError(f"{a!r} has seeds {ids_a} and {b!r} {ids_b}: a paired comparison needs the same seeds")
    by_seed = dict(zip(ids_b, vb, strict=True))
    vb = [by_seed[k] for k in ids_a]
    if metric == "ppl":
        # ln x − ln y, not ln(x / y): exactly antisymmetric in floating point, so a against b is b against a reversed
        diffs = tuple(math.log(x) - math.log(y) for x, y in zip(va, vb, strict=True))
        better, worse = sum(d < 0 for d in diffs), sum(d > 0 for d in diffs)
    else:
        diffs = tuple(x - y for x, y in zip(va, vb, strict=True))
        better, worse = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    length = multiple * LabConfig.from_dict(results["config"]).train_len
    key = family_key(a, b, multiple, metric)
    consulted = results.get(_CONSULTED)
    if consulted is not None:  # with_family is listing the comparisons a notebook's verdicts draw on
        consulted.append(key)
    p_holm, family = (results.get(FAMILY) or {}).get(key, (None, 1))
    return PairedComparison(
        a, b, metric, multiple, diffs, better, worse, tuple(ids_a), tuple(va), tuple(vb), length, p_holm, family
    )


FAMILY = "holm_family"  # results key: {family_key: [Holm-adjusted p, family size]} (:func:`with_family`)
_CONSULTED = "_family_consulted"  # results key while with_family lists the comparisons drawn on


def family_key(a: str, b: str, multiple: int, metric: str) -> str:
    """One comparison's key in a family: the two schemes in text order (the test is symmetric), length, metric."""
    x, y = sorted((a, b))
    return f"{x}|{y}|{multiple}|{metric}"


def with_family(results: Mapping[str, Any], *verdicts: Callable[[Mapping[str, Any]], Any]) -> dict[str, Any]:
    """``results`` with the family of comparisons that ``verdicts`` draw on, Holm-adjusted together.

    Each of ``verdicts`` is called with the results (e.g. ``lambda r: claims(r, 8)``); every paired comparison
    they make is one member of the family, and :func:`paired` then reads its p after Holm's correction over all of
    them (kept under :data:`FAMILY`). The verdicts are called again with the family in place until the list of
    comparisons is stable (which comparisons a verdict draws on may depend on the outcomes), so every comparison
    they state is in the family. Comparisons with one seed have no p and are left out.
    """
    if not verdicts:
        raise ValueError("verdicts must name at least one function of the results (the statements of the family)")
    keys: dict[str, None] = {}
    family: dict[str, list[float]] = {}
    for _round in range(5):
        record = {**results, FAMILY: family, _CONSULTED: []}
        for verdict in verdicts:
            verdict(record)
        new = dict.fromkeys([*keys, *record[_CONSULTED]])
        if new.keys() == keys.keys() and family:
            break
        keys = new
        raw: dict[str, float] = {}
        for key in keys:
            a, b, multiple, metric = key.split("|")
            comparison = paired(results, a, b, int(multiple), metric)
            if comparison is not None and comparison.p is not None:
                raw[key] = comparison.p
        adjusted = holm_adjust(list(raw.values()))
        family = {k: [q, len(raw)] for k, q in zip(raw, adjusted, strict=True)}
    return {**results, FAMILY: family}


def beats(results: Mapping[str, Any], a: str, b: str, multiple: int = 8, metric: str = "ppl") -> bool:
    """Whether ``a`` beats ``b`` at ``multiple`` × L_train by the paired rule (module docstring)."""
    comparison = paired(results, a, b, multiple, metric)
    return comparison is not None and comparison.outcome is Outcome.A_BEATS_B


def tied(results: Mapping[str, Any], a: str, b: str, multiple: int = 8) -> bool:
    """Whether neither of ``a`` and ``b`` beats the other in perplexity at ``multiple`` × L_train by the paired rule.

    Neither: the test does not distinguish them at these seeds, or the paired ratio is within :data:`TIE`
    (module docstring); the wording says which, never "tied" for an order every seed agrees on. A scheme whose
    seeds disagree there (:func:`seeds_disagree`) is compared with nothing (False): it is named apart, not ranked.
    """
    comparison = paired(results, a, b, multiple)
    if comparison is None:
        return False
    if seeds_disagree(results, a, multiple) or seeds_disagree(results, b, multiple):
        return False
    return not comparison.outcome.decided


def passkey_tied(results: Mapping[str, Any], a: str, b: str, multiple: int = 1) -> bool:
    """Whether neither of ``a`` and ``b`` retrieves better at ``multiple`` × L_train, by the paired rule.

    As for perplexity (module docstring): neither, unless the test distinguishes them and the mean paired
    difference reaches :data:`PASSKEY_TIE` (10 points). A scheme whose seeds disagree there (:func:`seeds_disagree`,
    ``metric="passkey"``) is compared with nothing (False).
    """
    comparison = paired(results, a, b, multiple, "passkey")
    if comparison is None:
        return False
    if seeds_disagree(results, a, multiple, "passkey") or seeds_disagree(results, b, multiple, "passkey"):
        return False  # a mean over seeds that disagree is no measurement to tie with
    return not comparison.outcome.decided


# ---- loss curves and combined runs ------------------------------------------------------------------------------


def plateau(
    values: Sequence[float], share: float = PLATEAU_SHARE, tolerance: float = PLATEAU_TOLERANCE
) -> dict[str, Any]:
    """Whether a loss curve has stopped improving: its last ``share`` of points, on average, within ``tolerance``
    of the ``share`` before them.

    Returns ``{"reached": bool, "last": mean of the last share, "before": mean of the share before it,
    "change": (before − last) / before}`` (positive: still falling). Needs at least two points per share.
    """
    n = len(values)
    k = max(1, round(share * n))
    if n < 2 * k or k < 1 or n < 2:
        raise ValueError(f"a plateau needs at least {2 * k} values, got {n}")
    last, before = sum(values[-k:]) / k, sum(values[-2 * k : -k]) / k
    change = (before - last) / before
    return {"reached": abs(change) <= tolerance, "last": last, "before": before, "change": change}


_PER_SCHEME_SECTIONS = ("ppl", "ppl_std", "runs", "passkey", "passkey_std", "passkey_by_depth")


# model fields that may differ between two runs paired by seed: they change the model's shape, never its data
LAYOUT_FIELDS = ("n_heads",)


def combine_runs(base: Mapping[str, Any], extra: Mapping[str, Any], layout: Sequence[str] = ()) -> dict[str, Any]:
    """``base`` with ``extra``'s other schemes added, so that schemes of two runs can be paired seed by seed.

    Both runs must have one configuration (every field but ``schemes``), hence the same seeds, batches,
    validation bytes and passkey keys; a scheme both hold must have the same per-seed perplexities in
    both (the same trained model: ``extra`` retrained it as a control), or the pairing would mix two models.
    ``layout`` names model fields of :data:`LAYOUT_FIELDS` that may differ (the head count: batches and bytes are
    drawn from the seed alone, so seeds still pair); the result then records ``extra``'s values under
    ``"layouts"`` (``{scheme: {field: value}}``, one entry per added scheme) so that a reader can print them.
    The result is for reading only (``run``-level timings and training records stay ``base``'s).
    """
    unknown = [f for f in layout if f not in LAYOUT_FIELDS]
    if isinstance(layout, str) or unknown:
        raise ValueError(f"layout must name fields among {LAYOUT_FIELDS}, got {layout!r}")
    base_cfg, extra_cfg = LabConfig.from_dict(base["config"]), LabConfig.from_dict(extra["config"])
    differ = {k: v for k, v in base_cfg.differences(extra_cfg).items() if k != "schemes" and k not in layout}
    if differ:
        raise ValueError(f"the two runs have different configurations: {differ} (base, extra)")
    shared = [s for s in extra_cfg.schemes if s in base_cfg.schemes]
    for scheme in shared:
        mine = {seed: run["ppl"] for seed, run in base["runs"][scheme].items()}
        theirs = {seed: run["ppl"] for seed, run in extra["runs"][scheme].items()}
        if mine != theirs:
            raise ValueError(f"{scheme!r} differs between the two runs: not the same trained models, nothing to pair")
    combined = {k: v for k, v in base.items() if k not in _PER_SCHEME_SECTIONS}
    added = [s for s in extra_cfg.schemes if s not in base_cfg.schemes]
    combined["config"] = {**base["config"], "schemes": [*base_cfg.schemes, *added]}
    for key in _PER_SCHEME_SECTIONS:
        if base.get(key) is None or extra.get(key) is None:
            combined[key] = None
            continue
        combined[key] = {**base[key], **{s: extra[key][s] for s in added}}
    other = {
        f: getattr(extra_cfg.model, f) for f in layout if getattr(extra_cfg.model, f) != getattr(base_cfg.model, f)
    }
    if other:
        combined["layouts"] = {**base.get("layouts", {}), **dict.fromkeys(added, other)}
    return combined
