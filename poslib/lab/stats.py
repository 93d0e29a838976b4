"""A comparison rule with a stated error rate (issue 45): a paired t-test over seeds, Holm's correction, a threshold.

Two schemes (or methods) a and b are trained and scored on the same seeds, so they are compared seed by seed.
The per-seed difference d_i is the log ratio of perplexities, or the difference of passkey accuracies:

    d_i = ln ppl_a,i − ln ppl_b,i            (perplexity: a ratio, so a against b is minus b against a)
    d_i = acc_a,i − acc_b,i                  (passkey accuracy, a fraction: 0.10 is 10 points)
    d̄ = Σ d_i / n,   s² = Σ (d_i − d̄)² / (n − 1),   t = d̄ / (s / √n),   ν = n − 1
    p = P(|T_ν| ≥ |t|)                       (two-sided; Student's t CDF below, exact for integer ν)

One notebook states a family of m comparisons; their p values are adjusted by Holm's step-down rule, which keeps
the chance of naming any false winner in the family at or below α (Holm 1979):

    p_(1) ≤ … ≤ p_(m),   p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j))

and a comparison is then one of :class:`Relation`:

* **a beats b** (or b beats a): p̃ ≤ α = 0.05 *and* the mean effect reaches the threshold, a paired ratio
  exp(d̄) beyond ×1.03 either way (:data:`PPL_THRESHOLD`) or 10 points of accuracy (:data:`PASSKEY_THRESHOLD`);
* **distinguished, below the threshold**: p̃ ≤ α, but the mean effect is too small to matter;
* **not distinguished at n seeds**: p̃ > α. This is not a tie: the :class:`Comparison` still holds the effect, its
  95 % interval and how many seeds favour each side, so an ordering that every seed agrees on reads "3 of 3
  seeds favour a, not distinguished at 3 seeds", never "tied".

Why a t-test on log ratios: the lab's log ratios are close to normal across seeds (the models differ by their
initialisation and data order only), and at n = 3 a sign-flip permutation test cannot reach p ≤ 0.05 at all
(its smallest two-sided p is 2/2³ = 0.25). The rule's error rates at the noise the lab measures are in
docs/lab.md (``scripts/lab_rule_error_rates.py``; :func:`simulate_rule`).

This module returns data only (dataclasses and numbers); the sentences that state a comparison are written
elsewhere.
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from .config import LabConfig

__all__ = [
    "ALPHA",
    "PASSKEY_THRESHOLD",
    "PPL_THRESHOLD",
    "Comparison",
    "Metric",
    "Relation",
    "compare",
    "compare_results",
    "decide",
    "holm",
    "holm_adjust",
    "log_ratio_spreads",
    "per_seed",
    "simulate_rule",
    "student_t_cdf",
    "t_quantile",
    "two_sided_p",
]

ALPHA = 0.05  # the family-wise error rate Holm's correction keeps
PPL_THRESHOLD = 1.03  # a paired ratio of perplexities must reach ×1.03 (or ×1/1.03) to name a winner
PASSKEY_THRESHOLD = 0.10  # a mean paired difference of passkey accuracy must reach 10 points

Metric = Literal["ppl", "passkey"]


class Relation(enum.Enum):
    """What the rule concludes about a against b (module docstring); the values are identifiers, not sentences."""

    A_BEATS_B = "a_beats_b"
    B_BEATS_A = "b_beats_a"
    BELOW_THRESHOLD = "distinguished_below_threshold"
    NOT_DISTINGUISHED = "not_distinguished"


# ---- Student's t distribution, integer degrees of freedom -----------------------------------------------------------


def _central(t: float, df: int) -> float:
    """A(t | ν) = P(|T_ν| ≤ |t|), by the finite series of Abramowitz & Stegun 26.7.3 (ν odd) and 26.7.4 (ν even)."""
    if math.isinf(t):
        return 1.0
    theta = math.atan(abs(t) / math.sqrt(df))  # θ = arctan(t/√ν)
    c2, sin = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:
        if df == 1:
            return 2 * theta / math.pi  # Cauchy
        # (2/π)[θ + sinθ (cosθ + (2/3)cos³θ + … + (2·4⋯(ν−3))/(1·3⋯(ν−2)) cos^(ν−2)θ)]
        term = total = math.cos(theta)
        for k in range(3, df - 1, 2):
            term *= c2 * (k - 1) / k  # cos^(k−2) → cos^k: one more factor (k−1)/k
            total += term
        return 2 / math.pi * (theta + sin * total)
    # sinθ [1 + (1/2)cos²θ + (1·3)/(2·4)cos⁴θ + … + (1·3⋯(ν−3))/(2·4⋯(ν−2)) cos^(ν−2)θ]
    term = total = 1.0
    for k in range(2, df - 1, 2):
        term *= c2 * (k - 1) / k
        total += term
    return sin * total


def _check_df(df: int) -> None:
    if isinstance(df, bool) or not isinstance(df, int | np.integer) or df < 1:
        raise ValueError(f"df must be an integer ≥ 1 (degrees of freedom), got {df!r}")


def student_t_cdf(t: float, df: int) -> float:
    """P(T_ν ≤ t) for Student's t with ``df`` = ν ≥ 1 integer degrees of freedom (exact series, no scipy)."""
    _check_df(df)
    if math.isnan(t):
        raise ValueError("t must be a number, got nan")
    # the series sums to A within a few ulps of 1 in the far tail; keep it a probability
    half = 0.5 * min(1.0, _central(t, int(df)))
    return 0.5 + half if t >= 0 else 0.5 - half  # symmetric about 0


def two_sided_p(t: float, df: int) -> float:
    """P(|T_ν| ≥ |t|): the two-sided p value of a t statistic with ``df`` degrees of freedom."""
    _check_df(df)
    if math.isnan(t):
        raise ValueError("t must be a number, got nan")
    return max(0.0, 1.0 - _central(t, int(df)))  # p below ~1e-15 reads 0: far past any α


@functools.lru_cache(maxsize=256)
def t_quantile(q: float, df: int) -> float:
    """The t with P(T_ν ≤ t) = ``q`` (0 < q < 1), by bisection on :func:`student_t_cdf` (cached: the rule asks for
    the 0.975 quantile of a few ν many times)."""
    _check_df(df)
    if not 0 < q < 1:
        raise ValueError(f"q must lie strictly between 0 and 1, got {q!r}")
    if q < 0.5:
        return -t_quantile(1 - q, df)
    lo, hi = 0.0, 1.0
    while student_t_cdf(hi, df) < q:  # the Cauchy's 0.9995 quantile is 637: doubling gets there in 10 steps
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):  # no float left between them
            break
        lo, hi = (mid, hi) if student_t_cdf(mid, df) < q else (lo, mid)
    return 0.5 * (lo + hi)


# ---- the rule -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """a against b seed by seed at one length: the evidence and what the rule concludes (module docstring).

    ``effect`` is the mean paired effect: for perplexity the paired ratio exp(d̄), the geometric mean of
    ppl_a / ppl_b over seeds (below 1: a is lower); for passkey accuracy the mean difference acc_a − acc_b (a
    fraction). ``low`` and ``high`` bound its 95 % t interval, exp(d̄ ± t_{0.975, n−1} · s/√n) (or d̄ ± … for
    passkey). ``p`` is the paired t-test's two-sided p value, ``p_holm`` the same after Holm's correction over
    the ``family`` comparisons it was stated with (``p`` itself for a family of one). ``favour_a`` and
    ``favour_b`` count the seeds on which each side is better; a seed where the two are equal counts for neither.
    """

    a: str
    b: str
    metric: Metric
    length: int
    seeds: tuple[str, ...]
    values_a: tuple[float, ...]
    values_b: tuple[float, ...]
    effect: float
    low: float
    high: float
    t: float
    p: float
    p_holm: float
    family: int
    n: int
    favour_a: int
    favour_b: int
    threshold: float
    alpha: float
    relation: Relation

    @property
    def diffs(self) -> tuple[float, ...]:
        """The per-seed paired differences d_i, in ``seeds`` order: log ratios for perplexity, else differences."""
        return _diffs(self.metric, self.values_a, self.values_b)

    @property
    def unanimous(self) -> bool:
        """Whether every seed favours the same side (an ordering the rule may still leave "not distinguished")."""
        return self.n > 0 and (self.favour_a == self.n or self.favour_b == self.n)


def _diffs(metric: Metric, va: Sequence[float], vb: Sequence[float]) -> tuple[float, ...]:
    if metric == "ppl":
        # ln x − ln y, not ln(x / y): exactly antisymmetric in floating point, so b against a is a against b negated
        return tuple(math.log(x) - math.log(y) for x, y in zip(va, vb, strict=True))
    return tuple(x - y for x, y in zip(va, vb, strict=True))


def decide(mean_diff: float, p_adjusted: float, metric: Metric, alpha: float = ALPHA) -> Relation:
    """The rule's relation for a mean paired difference d̄ (log ratio or accuracy difference) and an adjusted p.

    Not distinguished while p̃ > α; distinguished, then a winner only where |effect| reaches the threshold:
    |d̄| ≥ ln 1.03 for perplexity (lower wins), |d̄| ≥ 0.10 for passkey accuracy (higher wins).
    """
    if p_adjusted > alpha:
        return Relation.NOT_DISTINGUISHED
    gain = -mean_diff if metric == "ppl" else mean_diff  # positive: a is better
    if abs(mean_diff) < (math.log(PPL_THRESHOLD) if metric == "ppl" else PASSKEY_THRESHOLD):
        return Relation.BELOW_THRESHOLD
    return Relation.A_BEATS_B if gain > 0 else Relation.B_BEATS_A


def _seed_order(ids: Sequence[str]) -> list[str]:
    # numeric seed ids in numeric order ("2" before "10"), any others after them in text order
    return sorted(ids, key=lambda s: (0, int(s), "") if s.isdigit() else (1, 0, s))


def _checked_values(name: str, values: Mapping[Any, float], metric: Metric) -> dict[str, float]:
    if not isinstance(values, Mapping):
        raise ValueError(f"{name} must map seed ids to values (paired by seed), got {type(values).__name__}")
    out = {}
    for seed, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise ValueError(f"{name}: seed {seed!r} has {value!r}, not a number")
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{name}: seed {seed!r} has {v}, not a finite number")
        if metric == "ppl" and v <= 0:
            raise ValueError(f"{name}: seed {seed!r} has perplexity {v}; perplexities must be positive")
        if metric == "passkey" and not 0 <= v <= 1:
            raise ValueError(f"{name}: seed {seed!r} has passkey accuracy {v}; accuracies are fractions in [0, 1]")
        out[str(seed)] = v
    if len(out) != len(values):
        raise ValueError(f"{name}: two seed ids read the same as text ({list(values)})")
    return out


def compare(
    a: str,
    b: str,
    values_a: Mapping[Any, float],
    values_b: Mapping[Any, float],
    *,
    metric: Metric = "ppl",
    length: int,
    alpha: float = ALPHA,
) -> Comparison:
    """``a`` against ``b`` by the rule, as a family of one (:func:`holm` adjusts a family's comparisons together).

    ``values_a`` and ``values_b`` map seed ids to per-seed perplexities (positive) or passkey accuracies (fractions
    in [0, 1]); they must hold the same seeds, at least two. ``length`` is the evaluation length in tokens.
    """
    if metric not in ("ppl", "passkey"):
        raise ValueError(f"metric must be 'ppl' or 'passkey', got {metric!r}")
    if isinstance(length, bool) or not isinstance(length, int | np.integer) or length < 1:
        raise ValueError(f"length must be a positive integer (tokens), got {length!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    va, vb = _checked_values("values_a", values_a, metric), _checked_values("values_b", values_b, metric)
    if set(va) != set(vb):
        raise ValueError(
            f"values_a and values_b must hold the same seed ids (a paired test pairs them by seed): values_a has "
            f"{_seed_order(list(va))}, values_b {_seed_order(list(vb))}"
        )
    if len(va) < 2:
        raise ValueError(f"values_a holds {len(va)} seed; a paired test needs at least 2 seeds (it estimates a spread)")
    seeds = tuple(_seed_order(list(va)))
    xa, xb = tuple(va[s] for s in seeds), tuple(vb[s] for s in seeds)
    d = _diffs(metric, xa, xb)
    n = len(d)
    mean = math.fsum(d) / n
    sd = statistics.stdev(d)  # s, with n − 1 in the denominator
    se = sd / math.sqrt(n)
    if se > 0:
        t = mean / se
    else:  # every seed the same difference: no spread to weigh it against
        t = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    p = two_sided_p(t, n - 1)
    half = t_quantile(0.975, n - 1) * se  # 95 % t interval of d̄
    lo_d, hi_d = mean - half, mean + half
    if metric == "ppl":
        effect, low, high, threshold = math.exp(mean), math.exp(lo_d), math.exp(hi_d), PPL_THRESHOLD
        favour_a, favour_b = sum(x < 0 for x in d), sum(x > 0 for x in d)
    else:
        effect, low, high, threshold = mean, lo_d, hi_d, PASSKEY_THRESHOLD
        favour_a, favour_b = sum(x > 0 for x in d), sum(x < 0 for x in d)
    return Comparison(
        a=a,
        b=b,
        metric=metric,
        length=int(length),
        seeds=seeds,
        values_a=xa,
        values_b=xb,
        effect=effect,
        low=low,
        high=high,
        t=t,
        p=p,
        p_holm=p,
        family=1,
        n=n,
        favour_a=favour_a,
        favour_b=favour_b,
        threshold=threshold,
        alpha=alpha,
        relation=decide(mean, p, metric, alpha),
    )


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p values, in the input's order: p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) · p_(j)).

    Rejecting where p̃ ≤ α keeps the chance of any false rejection among the m at or below α, whatever their
    dependence (Holm 1979, "A simple sequentially rejective multiple test procedure").
    """
    m = len(p_values)
    for i, p in enumerate(p_values):
        if not (isinstance(p, int | float | np.floating) and 0 <= p <= 1):
            raise ValueError(f"p_values[{i}] must be a probability in [0, 1], got {p!r}")
    order = sorted(range(m), key=lambda i: p_values[i])  # stable: equal p values keep their order
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):  # rank j − 1: the (j)-th smallest is multiplied by m − j + 1 = m − rank
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))  # step-down: never below an earlier one
        adjusted[i] = running
    return adjusted


def holm(comparisons: Sequence[Comparison], alpha: float = ALPHA) -> list[Comparison]:
    """Every comparison one notebook states, as one family: Holm-adjusted p values and the relations they give.

    Returns the comparisons in the input's order with ``p_holm``, ``family`` (= m), ``alpha`` and ``relation``
    replaced; the rest (effects, intervals, raw p) is unchanged.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    adjusted = holm_adjust([c.p for c in comparisons])
    return [
        replace(c, p_holm=q, family=len(comparisons), alpha=alpha, relation=decide(_mean(c), q, c.metric, alpha))
        for c, q in zip(comparisons, adjusted, strict=True)
    ]


def _mean(c: Comparison) -> float:
    return math.fsum(c.diffs) / c.n


# ---- reading a results file ------------------------------------------------------------------------------------------


def per_seed(results: Mapping[str, Any], scheme: str, multiple: int, metric: Metric = "ppl") -> dict[str, float] | None:
    """``{seed id: value}`` of ``scheme`` at ``multiple`` × L_train in a lab results dictionary (``runs``).

    Perplexity, or passkey accuracy averaged over the needle depths (as notebook 08 reads it). None where a seed's
    value is not defined there (a scheme not scored at that length).
    """
    if metric not in ("ppl", "passkey"):
        raise ValueError(f"metric must be 'ppl' or 'passkey', got {metric!r}")
    runs = results.get("runs", {}).get(scheme)
    if not runs:
        raise ValueError(f"scheme {scheme!r} has no per-seed runs in these results; they have {list(results['runs'])}")
    L = str(multiple * LabConfig.from_dict(results["config"]).train_len)
    out: dict[str, float] = {}
    for seed, run in runs.items():
        if metric == "ppl":
            value = run.get("ppl", {}).get(L)
        else:
            row = run.get("passkey", {}).get(L)
            value = None if row is None or None in row.values() else sum(row.values()) / len(row)
        if value is None:
            return None
        out[str(seed)] = value
    return out


def compare_results(
    results: Mapping[str, Any], a: str, b: str, multiple: int, metric: Metric = "ppl", alpha: float = ALPHA
) -> Comparison | None:
    """:func:`compare` of ``a`` and ``b`` at ``multiple`` × L_train in a results dictionary; None where undefined."""
    va, vb = per_seed(results, a, multiple, metric), per_seed(results, b, multiple, metric)
    if va is None or vb is None:
        return None
    L = multiple * LabConfig.from_dict(results["config"]).train_len
    return compare(a, b, va, vb, metric=metric, length=L, alpha=alpha)


def log_ratio_spreads(results: Mapping[str, Any]) -> dict[int, list[float]]:
    """Per multiple of L_train, the per-seed spread s (sample standard deviation over seeds) of the paired log ratio
    ln ppl_a − ln ppl_b of every pair of schemes in ``results`` that share their seeds and are defined there.
    A pair equal on every seed is left out: it is one model read twice the same way (at L_train a training-free
    remap such as PI at its matched factor 1 is the plain model), whose spread 0 is no one's noise.

    The spread is the noise the rule must see through: the median over pairs is what :func:`simulate_rule` is run
    at (``scripts/lab_rule_error_rates.py``).
    """
    cfg = LabConfig.from_dict(results["config"])
    out: dict[int, list[float]] = {}
    for L in cfg.eval_lens:
        if L % cfg.train_len:
            continue
        multiple = L // cfg.train_len
        values = {s: per_seed(results, s, multiple) for s in results["runs"]}
        defined = {s: v for s, v in values.items() if v is not None and len(v) > 1}
        spreads = []
        for x, y in itertools.combinations(defined, 2):
            vx, vy = defined[x], defined[y]
            if set(vx) == set(vy) and any(vx[k] != vy[k] for k in vx):
                spreads.append(statistics.stdev(math.log(vx[k]) - math.log(vy[k]) for k in vx))
        out[multiple] = spreads
    return out


# ---- the rule's error rates ------------------------------------------------------------------------------------------


def simulate_rule(spread: float, true_ratio: float, n_seeds: int, n_draws: int, rng: np.random.Generator) -> float:
    """The rate at which the rule names a winner (either side) between two schemes whose per-seed paired log ratio
    is normal, d_i ~ N(ln true_ratio, spread²), over ``n_draws`` draws of ``n_seeds`` seeds each.

    At ``true_ratio`` = 1 this is the false-winner rate (the schemes are equal); at 1.05 or 1.10 it is the power
    (a winner on the wrong side would need a mean beyond ×1/1.03 the wrong way with p ≤ α, which at these spreads
    and ratios happens in well under 0.1 % of draws). Each draw goes through :func:`compare` as a family of one,
    the same code the notebooks' comparisons take.
    """
    if not (math.isfinite(spread) and spread >= 0):
        raise ValueError(f"spread must be a finite number ≥ 0, got {spread!r}")
    if not (math.isfinite(true_ratio) and true_ratio > 0):
        raise ValueError(f"true_ratio must be a positive number, got {true_ratio!r}")
    if n_seeds < 2:
        raise ValueError(f"n_seeds must be at least 2, got {n_seeds!r}")
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws!r}")
    d = rng.normal(math.log(true_ratio), spread, size=(n_draws, n_seeds))
    ones = dict.fromkeys(map(str, range(n_seeds)), 1.0)
    named = 0
    for row in np.exp(d).tolist():
        c = compare("a", "b", dict(zip(ones, row, strict=True)), ones, metric="ppl", length=1)
        named += c.relation in (Relation.A_BEATS_B, Relation.B_BEATS_A)
    return named / n_draws
