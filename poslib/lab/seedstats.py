"""The numbers of a lab run over seeds, and the paired comparison that notebooks 08, 11 and 12 decide by.

Every seed of a run is one trained model (and in an extension run every method of a seed starts from the same
one), scored on the same validation bytes and passkey keys, so two schemes are compared seed by seed, never by
their unpaired ranges (:func:`paired`). For perplexity the per-seed difference is the log ratio

    d_i = ln ppl_a,i − ln ppl_b,i         (a log, so that a against b is exactly b against a reversed)

reported as the *paired ratio* exp(d̄), the geometric mean of ppl_a / ppl_b over seeds; for passkey accuracy it is
the difference in points, d_i = acc_a,i − acc_b,i.

**The rule these notebooks use** (:attr:`PairedComparison.outcome`): a **beats** b when it is worse on *no* seed
(a seed where the two are equal counts for neither) *and* the mean paired difference reaches the threshold, a
paired ratio beyond ×1.03 either way (:data:`TIE`, 3 %) or 10 points of accuracy (:data:`PASSKEY_TIE`);
otherwise they are **tied**. With one seed the same rule reads as "better by at least the threshold". "Beats" is
transitive (worse on no seed twice is worse on no seed, and the paired differences add up), so the schemes that
nothing beats always exist. Beside the rule each comparison carries the paired t statistic of its differences,
t = d̄ / (s / √n) with ν = n − 1 (:attr:`PairedComparison.t`, :attr:`PairedComparison.p`): evidence only; the
rule with a stated error rate that will decide by it is :mod:`poslib.lab.stats`.

**When the seeds disagree, no mean is read.** A scheme's seeds **disagree** at a length when their perplexities
differ by more than a factor :data:`PPL_DISAGREE` (max / min > 1.5), or their passkey accuracies span more than
:data:`PASSKEY_DISAGREE` (max − min > 0.5): a mean over such seeds describes none of them (:func:`seeds_disagree`).

This module returns numbers and dataclasses only; :mod:`poslib.lab.verdicts` decides the notebooks' verdicts
from them and :mod:`poslib.lab.wording` writes the sentences.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .config import LabConfig
from .stats import two_sided_p

__all__ = [
    "CPU_NOISE",
    "EXTRAPOLATES",
    "FAILS",
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
    """What the paired rule concludes about a against b (module docstring).

    The values are the letters the rule has always answered with ("a", "b", "tie"), so a notebook's
    ``comparison.verdict == "tie"`` reads the enum unchanged.
    """

    A_BEATS_B = "a"
    B_BEATS_A = "b"
    TIED = "tie"


@dataclass(frozen=True)
class PairedComparison:
    """Scheme ``a`` against scheme ``b`` seed by seed (module docstring): the paired rule's evidence and outcome.

    ``values_a`` and ``values_b`` are the per-seed perplexities (or passkey accuracies) of ``seeds``, paired by seed
    id, at ``multiple`` × L_train = ``length`` tokens. ``diffs`` holds one paired difference per seed, in that
    order: ln ppl_a − ln ppl_b for perplexity, acc_a − acc_b for passkey accuracy. ``better`` counts the seeds on
    which ``a`` is better (lower perplexity, higher accuracy), ``worse`` those on which it is worse.
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
        """The rule: worse on no seed, by a mean paired difference of at least the threshold; else tied.

        A seed on which the two are equal (both at 100 % retrieval, say) does not make a tie: only seeds that
        disagree in sign, or a mean below the threshold, do.
        """
        if abs(self.mean) >= self.threshold:
            if self.worse == 0:
                return Outcome.A_BEATS_B
            if self.better == 0:
                return Outcome.B_BEATS_A
        return Outcome.TIED

    @property
    def verdict(self) -> Outcome:
        """:attr:`outcome`, under the name the notebooks read ("a", "b" or "tie")."""
        return self.outcome

    @property
    def near_threshold(self) -> bool:
        """Whether the threshold alone decides: the seeds agree in sign and the mean paired difference lies
        within a tenth of the threshold, on either side (a win that is nearly a tie, or a tie nearly a win)."""
        agree = self.better == 0 or self.worse == 0
        return agree and abs(abs(self.mean) - self.threshold) < 0.1 * self.threshold

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
    return PairedComparison(a, b, metric, multiple, diffs, better, worse, tuple(ids_a), tuple(va), tuple(vb), length)


def beats(results: Mapping[str, Any], a: str, b: str, multiple: int = 8, metric: str = "ppl") -> bool:
    """Whether ``a`` beats ``b`` at ``multiple`` × L_train by the paired rule (module docstring)."""
    comparison = paired(results, a, b, multiple, metric)
    return comparison is not None and comparison.outcome is Outcome.A_BEATS_B


def tied(results: Mapping[str, Any], a: str, b: str, multiple: int = 8) -> bool:
    """Whether ``a`` and ``b`` are tied in perplexity at ``multiple`` × L_train by the paired rule.

    Tied: the seeds disagree on which is lower, or the mean paired difference is below :data:`TIE`
    (module docstring). A scheme whose seeds disagree there (:func:`seeds_disagree`) is compared with
    nothing (False): it is named apart, not ranked.
    """
    comparison = paired(results, a, b, multiple)
    if comparison is None:
        return False
    if seeds_disagree(results, a, multiple) or seeds_disagree(results, b, multiple):
        return False
    return comparison.outcome is Outcome.TIED


def passkey_tied(results: Mapping[str, Any], a: str, b: str, multiple: int = 1) -> bool:
    """Whether ``a`` and ``b`` retrieve equally well at ``multiple`` × L_train, by the paired rule.

    As for perplexity (module docstring): tied unless one is lower on no seed and higher by a mean of at least
    :data:`PASSKEY_TIE` (10 points). A scheme whose seeds disagree there (:func:`seeds_disagree`,
    ``metric="passkey"``) is compared with nothing (False).
    """
    comparison = paired(results, a, b, multiple, "passkey")
    if comparison is None:
        return False
    if seeds_disagree(results, a, multiple, "passkey") or seeds_disagree(results, b, multiple, "passkey"):
        return False  # a mean over seeds that disagree is no measurement to tie with
    return comparison.outcome is Outcome.TIED


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


def combine_runs(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra``'s other schemes added, so that schemes of two runs can be paired seed by seed.

    Both runs must have one configuration (every field but ``schemes``), hence the same seeds, batches,
    validation bytes and passkey keys; a scheme both hold must have the same per-seed perplexities in
    both (the same trained model: ``extra`` retrained it as a control), or the pairing would mix two models.
    The result is for reading only (``run``-level timings and training records stay ``base``'s).
    """
    base_cfg, extra_cfg = LabConfig.from_dict(base["config"]), LabConfig.from_dict(extra["config"])
    differ = {k: v for k, v in base_cfg.differences(extra_cfg).items() if k != "schemes"}
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
    return combined
