"""Reading a lab run: growth of perplexity with length, seed spreads, rankings, and verdicts.

Every verdict is computed from a results dictionary of :func:`poslib.lab.run_lab`,
with fixed, documented thresholds, so that a notebook never states a conclusion
its own numbers contradict, and every verdict says at which scale it was measured.

Thresholds on the growth, ppl(k·L_train) / ppl(L_train) (means over seeds; printed "growth ×1.55"):

* growth ≤ 1.05 → the scheme **extrapolates** (a perfect extrapolator even gains:
  longer windows give the average byte more context);
* 1.05 < growth ≤ 1.5 → it **degrades gracefully**;
* growth > 1.5 → it **does not extrapolate**.

**Comparisons are paired by seed.** Every seed of a run is one trained model (and in an extension run
every method of a seed starts from the same one), scored on the same validation bytes and passkey keys,
so two schemes are compared seed by seed, never by their unpaired ranges (:func:`paired`). For
perplexity the per-seed difference is the log ratio ln(ppl_a / ppl_b), reported as the *paired ratio*,
the geometric mean of ppl_a / ppl_b over seeds (a log, so that a against b is exactly b against a
reversed); for passkey accuracy it is the difference in points, acc_a − acc_b. Scheme a **beats** b when
it is worse on *no* seed (a seed where the two are equal counts for neither) *and* the mean paired difference
reaches the threshold: a paired ratio beyond ×1.03 either way (:data:`TIE`, 3 %) or 10 points of accuracy
(:data:`PASSKEY_TIE`). Otherwise they are **tied**:
the seeds disagree in sign, or they agree on a difference too small to matter. With one seed the same
rule reads as "better by at least the threshold". "Beats" is transitive (worse on no seed twice is
worse on no seed, and the paired differences add up, for perplexity multiplicatively), so the
schemes that nothing beats always exist, and orderings built from it never contradict a pair.

**When the seeds disagree, no mean is read.** A mean over seeds that fall far apart describes
none of them: passkey accuracies of 0.90, 0, 0 average to 0.30 ("partly retrieves"), and a
range of 0.9 would make that scheme "tied" with almost anything. So a scheme's seeds
**disagree** at a length when their perplexities differ by more than a factor
:data:`PPL_DISAGREE` (max / min > 1.5, the width of the whole "degrades gracefully" band of
growth), or their passkey accuracies span more than :data:`PASSKEY_DISAGREE` (max − min > 0.5,
half the scale). There, the verdicts show the per-seed values (:func:`seeds_text`) instead of a
mean, a tie or a category: such a scheme is left out of the rankings that verdicts are drawn from,
and named separately.

**In the notebooks' language.** The sentences a notebook prints (:func:`takeaways`, :func:`claim_verdicts`,
:func:`comparison_table`, :func:`extension_verdicts`, :func:`deployed_verdicts`) come back in Chinese when
:func:`poslib.exercises.i18n.language` is "zh" (a kernel of ``notebooks/zh``), through the catalogue
``i18n/zh/outputs.md`` (:mod:`poslib._i18n_outputs`); each function's English is its ``__wrapped__``, and what
reads the sentences back (:func:`scale_agreement`) reads the English.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from poslib._i18n_outputs import in_language

from .config import LabConfig

__all__ = [
    "DATA_DEPENDENT",
    "EXTRAPOLATES",
    "GRACEFUL",
    "PASSKEY_DISAGREE",
    "PPL_DISAGREE",
    "TIE",
    "PairedComparison",
    "accuracy_text",
    "beats",
    "category",
    "claim_verdicts",
    "combine_runs",
    "datadep_readings",
    "deployed_statuses",
    "deployed_verdicts",
    "extension_scale_agreement",
    "extension_verdicts",
    "finetune_plateaus",
    "growth",
    "growth_range",
    "n_seeds",
    "paired",
    "passkey_best",
    "plateau",
    "practitioner_claims",
    "ranking",
    "reach_end",
    "relation",
    "scale_agreement",
    "scale_phrase",
    "seed_values",
    "seeds_disagree",
    "seeds_text",
    "spread",
    "takeaways",
    "tied",
    "unbeaten",
    "verdict_status",
]

EXTRAPOLATES, GRACEFUL, TIE = 1.05, 1.5, 0.03
# the notebooks' replays allow a retrain on another CPU to move a perplexity by 0.1 % (their bound, not a
# measurement): a per-seed sign smaller than that is flagged in the paired evidence
CPU_NOISE = 0.001
PPL_DISAGREE, PASSKEY_DISAGREE = 1.5, 0.5  # seeds disagree: ppl max/min above, or passkey max − min above
RETRIEVES, FAILS, PASSKEY_TIE = 0.9, 0.1, 0.1  # passkey: retrieves at or above, fails at or below; paired tie
ROPE_VARIANTS = ("rope+pi", "rope+ntk", "rope+dynamic", "rope+yarn", "rope+logn")
# 000 §6.2 lists these as remedies for unseen positions; NTK-RoPE is called the strongest without fine-tuning.
SECTION_6_2 = ("alibi", "kerple", "sandwich", "xpos", "rope+pi", "rope+ntk")
DISTANCE_BIASES = ("alibi", "kerple", "sandwich")


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


def spread(results: Mapping[str, Any], scheme: str, multiple: int = 8) -> float | None:
    """Range (max − min) over seeds of the perplexity at ``multiple`` × L_train; 0 for one seed."""
    values = seed_values(results, scheme, multiple)
    return None if values is None else max(values) - min(values)


def seeds_disagree(results: Mapping[str, Any], scheme: str, multiple: int = 8, metric: str = "ppl") -> bool:
    """Whether the seeds of ``scheme`` disagree at ``multiple`` × L_train (module docstring).

    ``metric="ppl"``: the per-seed perplexities differ by more than a factor :data:`PPL_DISAGREE`;
    ``metric="passkey"``: the per-seed passkey accuracies span more than :data:`PASSKEY_DISAGREE`.
    False where the value is not defined, and always with one seed (nothing to disagree with).
    """
    if metric not in ("ppl", "passkey"):
        raise ValueError(f"metric must be 'ppl' or 'passkey', got {metric!r}")
    if metric == "ppl":
        values = seed_values(results, scheme, multiple)
        return values is not None and len(values) > 1 and max(values) > PPL_DISAGREE * min(values)
    accs = passkey_values(results, scheme, multiple)
    return accs is not None and len(accs) > 1 and max(accs) - min(accs) > PASSKEY_DISAGREE


def seeds_text(results: Mapping[str, Any], scheme: str, multiple: int = 8, metric: str = "ppl") -> str:
    """The per-seed values of ``scheme`` at ``multiple`` × L_train as text: "seeds 0, 1, 2: 0.90, 0.00, 0.00"."""
    if metric not in ("ppl", "passkey"):
        raise ValueError(f"metric must be 'ppl' or 'passkey', got {metric!r}")
    values = seed_values(results, scheme, multiple) if metric == "ppl" else passkey_values(results, scheme, multiple)
    if values is None:
        return "not defined"
    runs = results.get("runs", {}).get(scheme) or {}
    seeds = list(runs) if len(runs) == len(values) else [str(s) for s in range(len(values))]
    shown = ", ".join(f"{v:.2f}" for v in values)
    return f"seed{'s' * (len(seeds) > 1)} {', '.join(seeds)}: {shown}"


def growth(results: Mapping[str, Any], scheme: str, multiple: int = 8) -> float | None:
    """Mean ppl at ``multiple`` × L_train divided by mean ppl at L_train (None where either is not defined)."""
    hi, lo = _ppl(results, scheme, multiple), _ppl(results, scheme, 1)
    return None if hi is None or lo is None else hi / lo


def growth_range(results: Mapping[str, Any], scheme: str, multiple: int = 8) -> tuple[float, float] | None:
    """The smallest and largest per-seed growth ppl(multiple × L) / ppl(L)."""
    hi, lo = seed_values(results, scheme, multiple), seed_values(results, scheme, 1)
    if hi is None or lo is None:
        return None
    ratios = [h / low for h, low in zip(hi, lo, strict=True)]
    return min(ratios), max(ratios)


def category(g: float | None) -> str:
    """ "extrapolates", "degrades gracefully", "does not extrapolate" or "not defined" for a growth ``g``."""
    if g is None:
        return "not defined"
    return "extrapolates" if g <= EXTRAPOLATES else "degrades gracefully" if g <= GRACEFUL else "does not extrapolate"


def ranking(
    results: Mapping[str, Any], multiple: int = 8, schemes: Sequence[str] | None = None
) -> list[tuple[str, float]]:
    """``(scheme, mean ppl)`` at ``multiple`` × L_train, best (lowest) first; schemes not defined there are left out."""
    names = list(schemes) if schemes is not None else list(results["ppl"])
    values = [(s, _ppl(results, s, multiple)) for s in names]
    return sorted(((s, v) for s, v in values if v is not None), key=lambda sv: sv[1])


@dataclass(frozen=True)
class PairedComparison:
    """Scheme ``a`` against scheme ``b`` seed by seed (module docstring): the paired rule's evidence and verdict.

    ``diffs`` holds one paired difference per seed, in seed order: ln(ppl_a / ppl_b) for perplexity (a log,
    so that a against b is exactly minus b against a, and differences add along a chain), acc_a − acc_b
    for passkey accuracy. ``better`` counts the seeds on which ``a`` is better (lower perplexity, higher
    accuracy), ``worse`` those on which it is worse. ``verdict`` is ``"a"`` (a beats b), ``"b"`` (b beats
    a) or ``"tie"``.
    """

    a: str
    b: str
    metric: str
    multiple: int
    diffs: tuple[float, ...]
    better: int
    worse: int

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
    def verdict(self) -> str:
        """ "a", "b" or "tie": worse on no seed, by a mean paired difference of at least the threshold.

        A seed on which the two are equal (both at 100 % retrieval, say) does not make a tie: only seeds that
        disagree in sign, or a mean below the threshold, do.
        """
        if abs(self.mean) >= self.threshold:
            if self.worse == 0:
                return "a"
            if self.better == 0:
                return "b"
        return "tie"

    def text(self) -> str:
        """From ``a``'s side: "lower on 3 of 3 seeds, paired ratio ×0.78 (×0.69 to ×0.90)", and why a tie is one.

        For perplexity the paired ratio is the geometric mean of ppl_a / ppl_b over seeds (its range in
        brackets); for passkey accuracy, the mean difference in points.
        """
        if self.metric == "ppl":
            word = "lower"
            # three decimals, more where they would print the threshold itself (×1.030 for 1.02989)
            ratio, limit, digits = math.exp(abs(self.mean)), 1 + TIE, 3
            while digits < 6 and f"{ratio:.{digits}f}" == f"{limit:.{digits}f}":
                digits += 1
            shown = [f"×{math.exp(d):.{digits}f}" for d in (self.mean, min(self.diffs), max(self.diffs))]
            size = f"paired ratio {shown[0]}"
            small = f"the paired ratio is within ×{1 + TIE:g} either way"
        else:
            word = "higher"
            shown = [f"{100 * d:+.0f}".replace("-", "−") for d in (self.mean, min(self.diffs), max(self.diffs))]
            size = f"mean paired difference {shown[0]} points"
            small = f"the mean paired difference is under {100 * PASSKEY_TIE:.0f} points"
        span = f" ({shown[1]} to {shown[2]})" if self.n > 1 else ""
        text = f"{word} on {self.better} of {self.n} seed{'s' * (self.n > 1)}, {size}{span}"
        if self.verdict == "tie":
            split = self.better > 0 and self.worse > 0
            text += "; tied: " + (f"not {word} on every seed" if split else small)
        if self.near_threshold:
            text += "; close to the threshold"  # a verdict, or a tie, that another CPU's last digits could move
        if self.metric == "ppl":
            noisy = sum(0 < abs(d) < math.log1p(CPU_NOISE) for d in self.diffs)
            if noisy and self.n > 1:
                text += f"; {noisy} of {self.n} seeds within {100 * CPU_NOISE:g} %, a sign another CPU could reverse"
        return text

    @property
    def near_threshold(self) -> bool:
        """Whether the threshold alone decides: the seeds agree in sign and the mean paired difference lies
        within a tenth of the threshold, on either side (a win that is nearly a tie, or a tie nearly a win)."""
        agree = self.better == 0 or self.worse == 0
        return agree and abs(abs(self.mean) - self.threshold) < 0.1 * self.threshold


def paired(
    results: Mapping[str, Any], a: str, b: str, multiple: int = 8, metric: str = "ppl"
) -> PairedComparison | None:
    """``a`` against ``b`` at ``multiple`` × L_train, seed by seed (module docstring); None where either is undefined.

    ``metric="ppl"``: per-seed log ratios of perplexity, threshold ln(1 + :data:`TIE`);
    ``metric="passkey"``: per-seed differences of passkey accuracy, threshold :data:`PASSKEY_TIE`.
    """
    if metric not in ("ppl", "passkey"):
        raise ValueError(f"metric must be 'ppl' or 'passkey', got {metric!r}")
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
    return PairedComparison(a, b, metric, multiple, diffs, better, worse)


def _seed_ids(results: Mapping[str, Any], scheme: str, n: int) -> list[str]:
    """The seed ids of ``scheme``'s per-seed values, in the order :func:`seed_values` returns them."""
    runs = results.get("runs", {}).get(scheme) or {}
    return list(runs) if len(runs) == n else [str(k) for k in range(n)]


def beats(results: Mapping[str, Any], a: str, b: str, multiple: int = 8, metric: str = "ppl") -> bool:
    """Whether ``a`` beats ``b`` at ``multiple`` × L_train by the paired rule (module docstring)."""
    comparison = paired(results, a, b, multiple, metric)
    return comparison is not None and comparison.verdict == "a"


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
    return comparison.verdict == "tie"


def unbeaten(results: Mapping[str, Any], multiple: int, schemes: Sequence[str], metric: str = "ppl") -> list[str]:
    """The schemes of ``schemes`` that no other one beats by the paired rule, best mean first.

    Schemes whose seeds disagree (:func:`seeds_disagree`) and schemes not defined there are left out
    (compared with nothing). Never empty while one scheme remains: "beats" is transitive.
    """
    if metric == "ppl":
        pool = [s for s, _ in ranking(results, multiple, schemes) if not seeds_disagree(results, s, multiple)]
    else:
        pool = [
            s
            for s, _ in passkey_ranking(results, multiple, schemes)
            if not seeds_disagree(results, s, multiple, "passkey")
        ]
    return [s for s in pool if not any(beats(results, t, s, multiple, metric) for t in pool if t != s)]


def _best(results: Mapping[str, Any], multiple: int, schemes: Sequence[str]) -> tuple[str, list[str]]:
    """The best scheme (lowest mean among those nothing beats, by the paired rule) and the others nothing beats.

    Schemes whose seeds disagree are left out. Every scheme outside the returned group is beaten by one
    inside it (transitivity), so "X is the best (tied with Y)" never names a scheme that another one beats.
    """
    group = unbeaten(results, multiple, schemes)
    return group[0], group[1:]


def scale_phrase(results: Mapping[str, Any]) -> str:
    """ "at this scale (≈116k–120k parameters, L_train = 64 bytes, 3 seeds)": the setting every verdict is about.

    The parameter count is the range over the run's models (the schemes differ by their position parameters).
    """
    params = [record["n_params"] for per_seed in results.get("training", {}).values() for record in per_seed.values()]
    lo, hi = (round(f(params) / 1000) for f in (min, max)) if params else (0, 0)
    size = (f"≈{lo}k parameters, " if lo == hi else f"≈{lo}k–{hi}k parameters, ") if params else ""
    seeds = n_seeds(results)
    train_len = LabConfig.from_dict(results["config"]).train_len
    return f"at this scale ({size}L_train = {train_len} bytes, {seeds} seed{'s' * (seeds > 1)})"


def _growth_text(results: Mapping[str, Any], scheme: str, multiple: int) -> str:
    g, span = growth(results, scheme, multiple), growth_range(results, scheme, multiple)
    if g is None or span is None:
        return "not defined"
    if n_seeds(results) == 1:
        return f"growth ×{g:.2f}"
    # written out as "growth", not g: g is CoPE's gate in notebook 10 (docs/notation.md)
    return f"growth ×{g:.2f}, {span[0]:.2f}–{span[1]:.2f} over seeds"


@in_language
def claim_verdicts(results: Mapping[str, Any], multiple: int = 8) -> dict[str, str]:
    """One verdict sentence per claim of the sources that the run tests (keys: the scheme or claim).

    Claims: RoPE extrapolates (000 §5.3, 001 §4); sinusoidal encodings extrapolate
    (001 §2.4); ALiBi extrapolates (000 §7.3); NTK-RoPE is the strongest method
    without fine-tuning (000 §6.2). That a learned table cannot go beyond its length
    (000 §3.1.4) is true by construction, a definition rather than something to test.
    A verdict whose per-seed growths fall in different categories says so.
    """
    have = set(results["ppl"])
    scale = scale_phrase(results)
    out: dict[str, str] = {}
    for scheme, source in (
        ("rope", "000 §5.3 / 001 §4: RoPE extrapolates well"),
        ("sinusoidal", "001 §2.4: sinusoidal encodings extrapolate to longer inputs"),
        ("alibi", "000 §7.3: ALiBi extrapolates well"),
    ):
        if scheme not in have:
            continue
        split = [k for k in (1, multiple) if seeds_disagree(results, scheme, k)]
        if split:
            out[scheme] = (
                f"{source} → undetermined {scale}: the seeds disagree beyond the limit (perplexity "
                + "; ".join(f"at {k}× {seeds_text(results, scheme, k)}" for k in split)
                + "), so no mean or category is read."
            )
            continue
        cat = category(growth(results, scheme, multiple))
        holds = {
            "extrapolates": "holds",
            "degrades gracefully": "partly holds",
            "does not extrapolate": "does not hold",
            "not defined": "does not hold",
        }[cat]
        span = growth_range(results, scheme, multiple)
        mixed = span is not None and category(span[0]) != category(span[1])
        note = " (the seeds disagree on the category: read it as borderline)" if mixed else ""
        out[scheme] = (
            f"{source} → {holds} {scale}: at {multiple}× L_train the model {cat} "
            f"({_growth_text(results, scheme, multiple)}){note}."
        )
    variants = [s for s in ROPE_VARIANTS if s in have]
    if "rope+ntk" in have and len(variants) > 1:
        best, ties = _best(results, multiple, variants)
        if best == "rope+ntk":
            among = "NTK is the best of the RoPE variants" + (f" (tied with {', '.join(ties)})" if ties else "")
        elif "rope+ntk" in ties:
            among = f"NTK ties with the best RoPE variant, {best}"
        else:
            among = f"NTK is not the best RoPE variant; {best} is"
        pool = [s for s in SECTION_6_2 if s in have]
        best_all, ties_all = _best(results, multiple, pool)
        if best_all == "rope+ntk" and not ties_all:
            overall, holds = "and the best of the methods 000 §6.2 lists", "holds"
        elif best_all == "rope+ntk" or "rope+ntk" in ties_all:
            overall, holds = "and ties for the best of the methods 000 §6.2 lists", "partly holds"
        else:
            tied_best = f" (tied with {', '.join(ties_all)})" if ties_all else ""
            overall, holds = (
                f"but of the methods 000 §6.2 lists, {best_all} is the best{tied_best}",
                ("partly holds" if best == "rope+ntk" or "rope+ntk" in ties else "does not hold"),
            )
        unranked = [x for x in dict.fromkeys(variants + pool) if seeds_disagree(results, x, multiple)]
        left_out = (
            " (not ranked, their seeds disagree: "
            + "; ".join(f"{x} {seeds_text(results, x, multiple)}" for x in unranked)
            + ")"
            if unranked
            else ""
        )
        out["rope+ntk"] = (
            f"000 §6.2: NTK-RoPE is the strongest without fine-tuning → {holds} {scale}: "
            f"at {multiple}× L_train {among}, {overall}{left_out}."
        )
    return out


@in_language
def takeaways(results: Mapping[str, Any], multiple: int = 8) -> list[str]:
    """The notebook's concluding bullets, each derived from the run (so they follow the numbers)."""
    have = set(results["ppl"])
    scale = scale_phrase(results)
    lines = []
    defined_but_failing = [
        s for s in ("rope", "sinusoidal") if s in have and category(growth(results, s, multiple)) != "extrapolates"
    ]
    if defined_but_failing:
        lines.append(
            f"Defined at every position is not the same as working there: {' and '.join(defined_but_failing)} "
            f"{'are' if len(defined_but_failing) > 1 else 'is'} defined beyond L_train, yet "
            f"{'their' if len(defined_but_failing) > 1 else 'its'} perplexity grows by "
            + ", ".join(f"×{growth(results, s, multiple):.2f}" for s in defined_but_failing)
            + f" from 1× to {multiple}× L_train, {scale}."
        )
    biases = [s for s in DISTANCE_BIASES if s in have]
    flat = [s for s in biases if category(growth(results, s, multiple)) == "extrapolates"]
    if biases:
        verb = "keep a flat curve" if flat == biases else "do not all keep a flat curve"
        lines.append(
            f"Schemes that penalise distance in the logits ({', '.join(biases)}) {verb} up to {multiple}× L_train"
            + (f" (flat: {', '.join(flat)})" if flat and flat != biases else "")
            + "."
        )
        if "rope" in have and "alibi" in have:
            r1, a1 = _ppl(results, "rope", 1), _ppl(results, "alibi", 1)
            if r1 is not None and a1 is not None:
                where = "behind" if a1 > r1 and not tied(results, "rope", "alibi", 1) else "level with"
                lines.append(f"At L_train itself ALiBi is {where} RoPE ({a1:.2f} against {r1:.2f}).")
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
        split = [s for s in ["rope", *variants] if seeds_disagree(results, s, multiple)]
        helped, hurt = [s for s in helped if s not in split], [s for s in hurt if s not in split]
        lines.append(
            f"Rescaling a trained RoPE model at inference, without fine-tuning: better than plain RoPE at "
            f"{multiple}×: {', '.join(helped) or 'none'}; worse: {', '.join(hurt) or 'none'}"
            + (f" (seeds disagree, not compared: {', '.join(split)})" if split else "")
            + "."
        )
    return lines


# ---- a second scale ---------------------------------------------------------------------------------------------

_STATUS = (
    "does not hold against the distance remaps 000 does not list",
    "partly holds",
    "does not hold",
    "holds",
    "undetermined",
)


def verdict_status(text: str) -> str:
    """The status word of a verdict sentence: what follows its "→" ("holds", "partly holds", "does not hold", …)."""
    after = text.split("→", 1)[1].strip() if "→" in text else ""
    for status in _STATUS:
        if after.startswith(status):
            return status
    raise ValueError(f"no verdict status after '→' in {text[:80]!r}")


def relation(results: Mapping[str, Any], a: str, b: str, multiple: int = 8) -> str:
    """``a`` against ``b`` by the paired rule: "beats", "tied", "beaten", or "not compared" (seeds disagree)."""
    if seeds_disagree(results, a, multiple) or seeds_disagree(results, b, multiple):
        return "not compared"
    comparison = paired(results, a, b, multiple)
    if comparison is None:
        return "not compared"
    return {"a": "beats", "b": "beaten", "tie": "tied"}[comparison.verdict]


def scale_agreement(
    base: Mapping[str, Any], other: Mapping[str, Any], multiple: int = 8
) -> dict[str, list[dict[str, str]]]:
    """Whether this run's verdicts hold at a second scale: the same lab run with another model or length.

    ``"claims"``: for every verdict of :func:`claim_verdicts` in both runs, its status in each and
    ``"same at both scales"`` (whether the claim holds or not), ``"scale-dependent"`` when the statuses differ,
    or ``"undetermined"`` when either run cannot decide. ``"pairs"``: for every
    pair of schemes that a published ordering (:data:`PUBLISHED`) ranks and both runs hold, the paired
    relation in each (:func:`relation`) and ``"same"``, ``"flips"`` (one beats the other at one scale
    and is beaten at the other) or ``"softens"`` (a win at one scale is a tie or not compared at the other).
    """
    claims = []
    english = getattr(claim_verdicts, "__wrapped__")  # the status words are read from the English sentences  # noqa: B009
    mine, theirs = english(base, multiple), english(other, multiple)
    for key in mine:
        if key not in theirs:
            continue
        a, b = verdict_status(mine[key]), verdict_status(theirs[key])
        verdict = "undetermined" if "undetermined" in (a, b) else "same at both scales" if a == b else "scale-dependent"
        claims.append({"claim": key, "here": a, "there": b, "verdict": verdict})
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
                    kind = "same"
                elif {here, there} == {"beats", "beaten"}:
                    kind = "flips"
                else:
                    kind = "softens"
                pairs.append({"a": x, "b": y, "here": here, "there": there, "verdict": kind})
    return {"claims": claims, "pairs": pairs}


# ---- passkey retrieval --------------------------------------------------------------------------------------------


def passkey_values(results: Mapping[str, Any], scheme: str, multiple: int = 1) -> list[float] | None:
    """Per-seed passkey accuracy (mean over depths) of ``scheme`` at ``multiple`` × L_train; None where not defined."""
    if results.get("passkey") is None:
        raise ValueError("these results have no passkey retrieval (run with --passkey)")
    L = _length(results, scheme, multiple)
    rows = [run["passkey"][L] for run in results["runs"][scheme].values()]
    return None if None in rows else [sum(row.values()) / len(row) for row in rows]


def passkey_spread(results: Mapping[str, Any], scheme: str, multiple: int = 1) -> float | None:
    """Range (max − min) over seeds of the passkey accuracy at ``multiple`` × L_train; 0 for one seed."""
    values = passkey_values(results, scheme, multiple)
    return None if values is None else max(values) - min(values)


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
    return comparison.verdict == "tie"


def accuracy_text(results: Mapping[str, Any], accuracy: float) -> str:
    """ "84%", or the count, "2 of 300 keys", below 1 % and above 99 % (where a rounded percentage hides the keys).

    The count is over every key the run scored at one length: keys per depth × depths × seeds.
    """
    shown = f"{accuracy:.0%}"
    if (accuracy < 0.01 or accuracy > 0.99) and accuracy not in (0.0, 1.0):
        retrieval_cfg = LabConfig.from_dict(results["config"]).retrieval
        keys = retrieval_cfg.passkey_samples * len(retrieval_cfg.passkey_depths) * n_seeds(results)
        shown = f"{round(accuracy * keys)} of {keys} keys"
    return shown


def retrieval(accuracy: float | None) -> str:
    """ "retrieves" (≥ 0.9), "fails" (≤ 0.1), "partly retrieves" between, or "not defined"."""
    if accuracy is None:
        return "not defined"
    return "retrieves" if accuracy >= RETRIEVES else "fails" if accuracy <= FAILS else "partly retrieves"


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


def reach_end(results: Mapping[str, Any], scheme: str) -> tuple[int, str | None]:
    """``(reach, note)``: :func:`retrieval_reach`, and where the mean that ended it comes from seeds that
    disagree, the multiple and the per-seed accuracies there ("4×: seeds 0, 1, 2: 0.95, 0.60, 0.27");
    else None. Such a reach is where the seeds part, not where the scheme stops retrieving.
    """
    cfg = LabConfig.from_dict(results["config"])
    reach = retrieval_reach(results, scheme)
    longer = [L // cfg.train_len for L in cfg.eval_lens if L // cfg.train_len > reach]
    if longer and seeds_disagree(results, scheme, longer[0], "passkey"):
        return reach, f"{longer[0]}×: {seeds_text(results, scheme, longer[0], 'passkey')}"
    return reach, None


def passkey_best(results: Mapping[str, Any], multiple: int = 1) -> dict[str, Any]:
    """The best scheme at ``multiple`` × L_train by mean passkey accuracy, among the schemes whose seeds agree.

    Returns ``{"best": name, "accuracy": mean, "tied": [the others nothing beats], "disagree": {name: seeds_text}}``
    (the paired rule, :func:`unbeaten`); ``disagree`` holds the schemes left out because their seeds disagree there.
    """
    ranked = passkey_ranking(results, multiple)
    split = {
        s: seeds_text(results, s, multiple, "passkey")
        for s, _ in ranked
        if seeds_disagree(results, s, multiple, "passkey")
    }
    if len(split) == len(ranked):
        raise ValueError(f"the seeds of every scheme disagree at {multiple}× L_train: no best scheme")
    group = unbeaten(results, multiple, [s for s, _ in ranked], "passkey")
    best, ties = group[0], group[1:]
    acc = dict(ranked)[best]
    return {"best": best, "accuracy": acc, "tied": ties, "disagree": split}


def disagreements(results: Mapping[str, Any], multiple: int = 8) -> list[str]:
    """Where perplexity and passkey retrieval tell different stories at ``multiple`` × L_train, one sentence each.

    Flat perplexity (growth ≤ 1.05) with failed retrieval: the model predicts the next byte as well
    as before while ignoring what lies far back. The opposite (perplexity grows, retrieval holds) says
    the long context is read but the byte statistics still suffer. A scheme whose seeds disagree
    (:func:`seeds_disagree`, on perplexity at 1× or ``multiple`` ×, or on retrieval at ``multiple`` ×)
    gets its per-seed values and no verdict.
    """
    out = []
    for scheme in results["passkey"]:
        split = [
            f"{metric} {seeds_text(results, scheme, k, metric)}"
            for metric, ks in (("ppl", (1, multiple)), ("passkey", (multiple,)))
            for k in dict.fromkeys(ks)
            if seeds_disagree(results, scheme, k, metric)
        ]
        if split:
            out.append(f"{scheme}: the seeds disagree at {multiple}× ({'; '.join(split)}): no verdict from the mean")
            continue
        g = growth(results, scheme, multiple)
        acc = results["passkey"][scheme][_length(results, scheme, multiple)]
        ppl_says, key_says = category(g), retrieval(acc)
        if ppl_says == "extrapolates" and key_says != "retrieves":
            out.append(
                f"{scheme}: perplexity flat at {multiple}× (growth {g:.2f}) but passkey {key_says} "
                f"({acc:.0%}): it {'does not use' if key_says == 'fails' else 'uses only part of'} the long context"
            )
        elif ppl_says == "does not extrapolate" and key_says == "retrieves":
            out.append(
                f"{scheme}: perplexity grows at {multiple}× (growth {g:.2f}) yet the passkey is retrieved ({acc:.0%})"
            )
    return out


# Published orderings, best first, as the sources state them (arXiv ids; "≈": reported close or tied).
PUBLISHED: tuple[dict[str, Any], ...] = (
    {
        "source": "ALiBi (Press et al., ICLR 2022, arXiv 2108.12409), Fig. 1",
        "setting": "word-level LMs on WikiText-103, trained at L = 512 and 1024 tokens, perplexity at longer inputs",
        "schemes": ("alibi", "t5", "rope", "sinusoidal"),
        "ordering": "alibi stays flat; t5, rope and sinusoidal all degrade",
        "confirmed": "the caption (sinusoidal, rotary and T5 degrade, ALiBi does not); the order among the three "
        "degrading ones is read from the figure, not confirmed here",
    },
    {
        "source": "KERPLE (Chi et al., NeurIPS 2022, arXiv 2205.09921)",
        "setting": "small GPT-NeoX configuration on OpenWebText2, GitHub and ArXiv, trained at 512 tokens, "
        "tested at longer lengths",
        "schemes": ("kerple", "alibi", "t5", "rope", "sinusoidal"),
        "ordering": "kerple (log) best at long lengths",
        "confirmed": "the abstract (the logarithmic variant extrapolates best on three datasets); datasets and "
        "training length from a reproducibility summary of the paper; the order of the baselines could not be "
        "confirmed here",
    },
    {
        "source": "FIRE (Li et al., ICLR 2024, arXiv 2310.04418)",
        "setting": "decoder LMs, zero-shot language modeling and long-text benchmarks at lengths beyond training",
        "schemes": ("fire", "kerple", "alibi", "t5", "rope", "nope"),
        "ordering": "fire best at lengths beyond training",
        "confirmed": "the abstract (FIRE generalizes better to longer contexts than the encodings it compares "
        "with); data set, lengths and the order of the others could not be confirmed here",
    },
    {
        "source": "NoPE (Kazemnejad et al., NeurIPS 2023, arXiv 2305.19466)",
        "setting": "decoder-only models on reasoning and mathematical tasks, exact match (about 107M parameters, "
        "trained at up to 20 tokens and tested up to 40, per a secondary summary)",
        "schemes": ("nope", "t5", "alibi", "rope", "sinusoidal"),
        "ordering": "nope ≈ t5 best, alibi in the middle, rope and sinusoidal (APE) worst",
        "confirmed": "the abstract (NoPE outperforms the explicit encodings; ALiBi, Rotary and APE are not well "
        "suited) and a quoted sentence (NoPE on par with or better than T5's bias); the middle of the order "
        "comes from a secondary summary",
    },
)


@in_language
def comparison_table(results: Mapping[str, Any], multiple: int = 8) -> list[dict[str, str]]:
    """Each published ordering of :data:`PUBLISHED` beside this run's ordering of the same schemes.

    This run's ordering is by mean perplexity at ``multiple`` × L_train (``a ≈ b ≈ c``: every pair
    of the group tied by the paired rule, and none with a scheme placed earlier; ``< d``: d is tied
    with no scheme placed before it; ``≲ d (tied with b, …)``: d is tied with the schemes named, a set
    the chain alone could not show; both start a new group), and by passkey accuracy at the same
    length when the run has it. A scheme whose seeds disagree there is not placed in the order: its
    per-seed values are shown instead.
    """
    rows = []
    for pub in PUBLISHED:
        names = [s for s in pub["schemes"] if s in results["ppl"]]
        split = [s for s in names if seeds_disagree(results, s, multiple)]
        ranked = [(s, v) for s, v in ranking(results, multiple, names) if s not in split]
        text = ranked[0][0] if ranked else "—"
        group, placed = [s for s, _ in ranked[:1]], [s for s, _ in ranked[:1]]
        for s, _ in ranked[1:]:
            # "≈" only joins a scheme tied with every member of its group and with nothing placed before
            # it, so a ≈ b ≈ c never hides a < c; "≲ s (tied with …)" names the ties a chain cannot show;
            # "<" joins a scheme tied with nothing placed before it
            ties = [p for p in placed if tied(results, p, s, multiple)]
            if set(group) <= set(ties) and set(ties) <= set(group):
                text, group = text + " ≈ " + s, [*group, s]
            elif ties:
                text, group = text + f" ≲ {s} (tied with {', '.join(ties)})", [s]
            else:
                text, group = text + " < " + s, [s]
            placed.append(s)
        text += "".join(f"; {s} not placed, seeds disagree ({seeds_text(results, s, multiple)})" for s in split)
        row = {
            **{k: str(v) for k, v in pub.items() if k != "schemes"},
            "lab_ppl": f"{text} (perplexity at {multiple}×)",
        }
        if results.get("passkey") is not None:
            keys = passkey_ranking(results, multiple, names)
            row["lab_passkey"] = ", ".join(
                f"{s} {seeds_text(results, s, multiple, 'passkey')} (seeds disagree)"
                if seeds_disagree(results, s, multiple, "passkey")
                else f"{s} {v:.0%}"
                for s, v in keys
            )
        rows.append(row)
    return rows


PLATEAU_SHARE, PLATEAU_TOLERANCE = 0.1, 0.03  # the last 10 % of a curve within 3 % of the 10 % before


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


# notebook 11's groups (poslib.lab.extend runs them; listed here so the verdicts do not import torch's side)
FREQUENCY_SCALINGS = ("rope+pi", "rope+ntk", "rope+yarn", "rope+dynamic")
DISTANCE_REMAPS = ("rope+rerope", "rope+leaky_rerope", "rope+self_extend")
FINETUNED = ("rope+ft", "rope+ft_pi", "rope+ft_ntk", "rope+ft_yarn")


def _standing(results: Mapping[str, Any], scheme: str, multiple: int, pool: Sequence[str]) -> tuple[str, str]:
    """(where ``scheme`` stands in ``pool`` at ``multiple`` ×: "best" / "tied" / "beaten", the phrase saying so).

    By the paired rule: "tied" when nothing beats it but another scheme has the lower mean; "beaten" names
    the best scheme that beats it (one that nothing beats: "beats" is transitive) with the paired evidence.
    """
    best, ties = _best(results, multiple, pool)
    if best == scheme:
        return ("best", f"{scheme} is the best" + (f" (tied with {', '.join(ties)})" if ties else ""))
    if scheme in ties:
        evidence = paired(results, scheme, best, multiple)
        assert evidence is not None
        return ("tied", f"{scheme} ties with the best, {best} ({scheme} {evidence.text()})")
    winner = next(s for s in (best, *ties) if beats(results, s, scheme, multiple))
    evidence = paired(results, winner, scheme, multiple)
    assert evidence is not None
    v, w = _ppl(results, scheme, multiple), _ppl(results, winner, multiple)
    who = f"{best} is the best and beats it" if winner == best else f"{best} is the best, and {winner} beats it"
    return ("beaten", f"{who} ({w:.2f} against {scheme}'s {v:.2f}; {winner} {evidence.text()})")


@in_language
def extension_verdicts(results: Mapping[str, Any], multiple: int = 4) -> dict[str, str]:
    """Notebook 11's verdicts at ``multiple`` × L_train, from a :func:`poslib.lab.run_extension` result.

    ``"claim"``: 000 §6.2, NTK-RoPE is the strongest method without fine-tuning, judged against every
    training-free method of the run (frequency scalings and distance remaps), by the paired rule of the
    module docstring: holds when NTK is the only method nothing beats, partly holds when nothing beats it
    but it is not alone, does not hold when a method beats it (said "against the distance remaps 000 does
    not list" when only remaps do: 000 ranked the remedies it lists), with the paired evidence (seeds on
    which one is lower, the mean paired difference and its range); where NTK stands among the frequency
    scalings alone (the reading notebook 08 could test) is added.
    ``"finetune"``: the best fine-tuned model against the best training-free method, paired. ``"passkey"``: the
    same comparison by passkey accuracy, where the run scored it (a best below :data:`FAILS` is reported
    as every method failing). Ties, seed disagreements and the scale follow the module docstring; a
    scheme whose seeds disagree is named apart.
    """
    have = set(results["ppl"])
    scale = scale_phrase(results)
    free = [s for s in ("rope", *FREQUENCY_SCALINGS, *DISTANCE_REMAPS) if s in have]
    scalings = [s for s in ("rope", *FREQUENCY_SCALINGS) if s in have]
    tuned = [s for s in FINETUNED if s in have]
    if "rope+ntk" not in have or not tuned:
        raise ValueError("results must come from run_extension: rope+ntk and the fine-tuned models are missing")
    unranked = [s for s in free + tuned if seeds_disagree(results, s, multiple)]
    apart = (
        " Not ranked, their seeds disagree: "
        + "; ".join(f"{s} {seeds_text(results, s, multiple)}" for s in unranked)
        + "."
        if unranked
        else ""
    )
    where_all, all_text = _standing(results, "rope+ntk", multiple, free)
    _, sc_text = _standing(results, "rope+ntk", multiple, scalings)
    holds = {"best": "holds", "tied": "partly holds", "beaten": "does not hold"}[where_all]
    if where_all == "best" and _best(results, multiple, free)[1]:
        holds = "partly holds"  # the lowest mean, but another method is not beaten by it (paired rule)
    beaten_by = [
        s for s in free if beats(results, s, "rope+ntk", multiple) and not seeds_disagree(results, s, multiple)
    ]
    if where_all == "beaten" and all(s in DISTANCE_REMAPS for s in beaten_by):
        # 000 ranks the remedies it lists; what beats NTK here is only remaps it does not list (ReRoPE, Self-Extend)
        holds = "does not hold against the distance remaps 000 does not list"
    out = {
        "claim": (
            f"000 §6.2: NTK-RoPE is the strongest without fine-tuning → {holds} {scale}: at {multiple}× L_train, "
            f"among every training-free method {all_text}; among the frequency scalings alone (notebook 08's "
            f"reading) {sc_text}.{apart}"
        )
    }
    best_free, free_ties = _best(results, multiple, free)
    best_tuned, tuned_ties = _best(results, multiple, tuned)
    steps = results.get("extension", {}).get("settings", {}).get("finetune_steps")
    f_len = results.get("extension", {}).get("finetune_len")
    evidence = paired(results, best_tuned, best_free, multiple)
    assert evidence is not None
    relation = {"a": "beats", "b": "loses to", "tie": "ties with"}[evidence.verdict]
    out["finetune"] = (
        f"A short fine-tune ({steps} steps at {f_len} bytes) against no training, at {multiple}× L_train: the best "
        f"fine-tuned model, {best_tuned} ({_ppl(results, best_tuned, multiple):.2f}"
        + (f", tied with {', '.join(tuned_ties)}" if tuned_ties else "")
        + f"), {relation} the best training-free method, {best_free} ({_ppl(results, best_free, multiple):.2f}"
        + (f", tied with {', '.join(free_ties)}" if free_ties else "")
        + f"): {best_tuned} is {evidence.text()}."
    )
    if results.get("passkey"):
        split = {s for s in free + tuned if seeds_disagree(results, s, multiple, "passkey")}
        L = _length(results, "rope", multiple)

        def best_by_passkey(pool: Sequence[str]) -> tuple[str, float, list[str]]:
            group = unbeaten(results, multiple, [s for s in pool if s not in split], "passkey")
            return group[0], results["passkey"][group[0]][L], group[1:]

        def best_text(kind: str, pool: Sequence[str]) -> str:
            top, acc, ties = best_by_passkey(pool)
            if acc <= FAILS:
                agree = " whose seeds agree" if split & set(pool) else ""
                return f"every {kind} method{agree} fails (best {accuracy_text(results, acc)})"
            return (
                f"best {kind} {top} ({accuracy_text(results, acc)}"
                + (f", tied with {', '.join(ties)}" if ties else "")
                + ")"
            )

        ntk = results["passkey"]["rope+ntk"][L]
        out["passkey"] = (
            f"Passkey retrieval at {multiple}× L_train: {best_text('training-free', free)}, "
            f"{best_text('fine-tuned', tuned)}; training-free NTK {accuracy_text(results, ntk)}."
            + (
                " Not ranked, their seeds disagree: "
                + "; ".join(f"{s} {seeds_text(results, s, multiple, 'passkey')}" for s in sorted(split))
                + "."
                if split
                else ""
            )
        )
    return out


# ---- notebook 11's practitioner protocol (issue 35): plateaued fine-tunes, deployed baselines ---------------------

# readings that use only the longest target length (chosen once per deployment), never the length being scored
TUNED_SCALINGS = ("rope+pi_tuned", "rope+ntk_tuned", "rope+yarn_tuned", "rope+dynamic_tuned")
DEPLOYED_REMAPS = ("rope+self_extend_fixed", "rope+leaky_rerope_fit", "rope+rerope_logn")
# ReRoPE (w = 16) and Leaky ReRoPE (leak 16) use no length at all; the matched factors s = L'/L_train and the
# per-length group size use the length being scored
KNOWS_TEST_LENGTH = ("rope+pi", "rope+ntk", "rope+yarn", "rope+dynamic", "rope+self_extend")


def finetune_plateaus(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per fine-tuned method and seed, :func:`plateau` of its held-out loss curve (``heldout`` in its record)."""
    out: dict[str, dict[str, Any]] = {}
    for method in FINETUNED:
        records = results.get("training", {}).get(method, {})
        out[method] = {seed: plateau(r["heldout"]["loss"]) for seed, r in records.items() if "heldout" in r}
    return out


@in_language
def deployed_verdicts(results: Mapping[str, Any], multiple: int) -> dict[str, str]:
    """Notebook 11's verdicts as a practitioner would run them, at ``multiple`` × L_train (paired rule).

    ``"claim"``: 000 §6.2 with every baseline as deployed: NTK at the factor chosen on held-out bytes
    (``rope+ntk_tuned``) among the readings that need no knowledge of the test length (the tuned
    scalings, the deployed remaps, ReRoPE, Leaky ReRoPE and plain RoPE); ``"matched"``: the same claim
    among the readings given the test length (matched factors, per-length G), for comparison;
    ``"finetune"``: the best fine-tuned model against the best deployed reading, with whether the
    fine-tunes are judged at their own length or beyond it; ``"cost"``: what fine-tuning costs at
    L_train, perplexity and passkey against the model it started from, paired.
    """
    return _deployed(results, multiple)[1]


def deployed_statuses(results: Mapping[str, Any], multiple: int) -> dict[str, str]:
    """The status word of each of :func:`deployed_verdicts`' verdicts, to compare two runs.

    :func:`extension_scale_agreement` compares them across scales.

    ``"claim"`` and ``"matched"``: "holds", "partly holds" or "does not hold"; ``"finetune"``: "beats",
    "ties with" or "loses to" (the best fine-tune against the best deployed reading); ``"cost <method>"``
    per fine-tune: "gains", "tied" or "costs" at L_train against the model it started from (paired rule).
    """
    return _deployed(results, multiple)[0]


def _pools(results: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """The readings :func:`deployed_verdicts` compares: (as deployed, given the test length, fine-tuned)."""
    have = set(results["ppl"])
    deployed = [s for s in ("rope", *TUNED_SCALINGS, "rope+rerope", "rope+leaky_rerope", *DEPLOYED_REMAPS) if s in have]
    matched = [s for s in ("rope", *KNOWS_TEST_LENGTH, "rope+rerope", "rope+leaky_rerope") if s in have]
    return deployed, matched, [s for s in FINETUNED if s in have]


def _deployed(results: Mapping[str, Any], multiple: int) -> tuple[dict[str, str], dict[str, str]]:
    """(statuses, sentences) of :func:`deployed_verdicts`: one computation, so the two never disagree."""
    have = set(results["ppl"])
    if not all(name in have for name in TUNED_SCALINGS):
        raise ValueError("these results have no tuned readings: run --extend with --factor-grid")
    scale = scale_phrase(results)
    deployed, matched, tuned = _pools(results)
    out: dict[str, str] = {}
    status: dict[str, str] = {}
    for key, pool, ntk in (("claim", deployed, "rope+ntk_tuned"), ("matched", matched, "rope+ntk")):
        where, text = _standing(results, ntk, multiple, pool)
        holds = {"best": "holds", "tied": "partly holds", "beaten": "does not hold"}[where]
        if where == "best" and _best(results, multiple, pool)[1]:
            holds = "partly holds"
        status[key] = holds
        which = "as deployed (one factor, chosen on held-out bytes)" if key == "claim" else "given the test length"
        out[key] = f"000 §6.2, NTK {which} → {holds} {scale}: at {multiple}× L_train {text}."
    ext = results.get("extension", {})
    f_len, steps = ext.get("finetune_len"), ext.get("settings", {}).get("finetune_steps")
    train_len = LabConfig.from_dict(results["config"]).train_len
    where_len = (
        "at their own fine-tuning length"
        if f_len == multiple * train_len
        else f"at {multiple * train_len} bytes, {'beyond' if multiple * train_len > f_len else 'below'} their"
        f" fine-tuning length of {f_len}"
    )
    best_free, _ = _best(results, multiple, deployed)
    best_tuned, tuned_ties = _best(results, multiple, tuned)
    evidence = paired(results, best_tuned, best_free, multiple)
    assert evidence is not None
    relation_word = {"a": "beats", "b": "loses to", "tie": "ties with"}[evidence.verdict]
    status["finetune"] = relation_word
    apart = [s for s in tuned if seeds_disagree(results, s, multiple)]
    out["finetune"] = (
        f"Fine-tuned {steps} steps at {f_len} bytes, judged {where_len}: the best"
        + (" whose seeds agree" if apart else "")
        + f", {best_tuned}"
        + (f" (tied with {', '.join(tuned_ties)})" if tuned_ties else "")
        + f", {relation_word} the best deployed training-free reading, {best_free}: {best_tuned} {evidence.text()}."
        + (
            " Not ranked, their seeds disagree: "
            + "; ".join(f"{s} {seeds_text(results, s, multiple)}" for s in apart)
            + "."
            if apart
            else ""
        )
    )
    costs = []
    for method in tuned:
        cost = paired(results, method, "rope", 1)
        assert cost is not None
        status[f"cost {method}"] = {"a": "gains", "b": "costs", "tie": "tied"}[cost.verdict]
        text = f"{method} ppl ×{math.exp(cost.mean):.3f} ({cost.text().split(', ', 1)[0]})"
        if results.get("passkey"):
            before, after = passkey_values(results, "rope", 1), passkey_values(results, method, 1)
            if before is not None and after is not None:
                text += (
                    f", passkey {accuracy_text(results, sum(before) / len(before))}"
                    f" → {accuracy_text(results, sum(after) / len(after))}"
                )
        costs.append(text)
    out["cost"] = "The cost at L_train, against the model each fine-tune started from: " + "; ".join(costs) + "."
    return status, out


def practitioner_claims(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The claims notebook 11 reads off its practitioner run (§5), each measured in ``results`` by the paired rule.

    Returns, per claim key, ``{"claim": the sentence, "holds": bool, "measured": the evidence, "near_threshold":
    whether a paired comparison it rests on lies within a tenth of the rule's threshold}``, so that the same
    sentences can be checked in another run (:func:`extension_scale_agreement`) instead of being assumed to
    carry over. Fine-tunes are judged at 4× (their own length) and 16× (beyond it), costs at L_train.
    """
    if not all(name in results["ppl"] for name in (*TUNED_SCALINGS, *FINETUNED)):
        raise ValueError("these results have no practitioner readings: run --extend with --factor-grid")
    seeds = list(results["runs"]["rope"])
    free = [s for s in results["ppl"] if s not in FINETUNED]  # every training-free reading, matched or deployed
    out: dict[str, dict[str, Any]] = {}

    def claim(key: str, sentence: str, holds: bool, measured: str, rests_on: Sequence[PairedComparison]) -> None:
        near = any(c.near_threshold for c in rests_on)
        out[key] = {"claim": sentence, "holds": bool(holds), "measured": measured, "near_threshold": near}

    yarn4 = {s: _paired(results, "rope+ft_yarn", s, 4) for s in free}
    wins = [s for s, c in yarn4.items() if c.verdict == "a"]
    closest = max(free, key=lambda s: yarn4[s].mean)
    claim(
        "yarn_ft_beats_free_at_4x",
        "the YaRN fine-tune beats every training-free reading at its own length (4×)",
        len(wins) == len(free),
        f"beats {len(wins)} of {len(free)}; the closest, {closest}: {yarn4[closest].text()}",
        list(yarn4.values()),
    )
    best16 = unbeaten(results, 16, free)[0]
    against = {m: _paired(results, m, best16, 16) for m in FINETUNED}
    claim(
        "finetunes_lose_at_16x",
        "beyond their length (16×) every fine-tune is higher, on every seed, than the best training-free reading",
        all(c.better == 0 for c in against.values()),
        f"against {best16}: " + "; ".join(f"{m} lower on {c.better} of {c.n}" for m, c in against.items()),
        [],
    )
    plain = _paired(results, "rope+ft", "rope", 16)
    claim(
        "plain_ft_helps_at_16x",
        "the plain fine-tune is lower than the model it started from at 16×, on every seed",
        plain.better == plain.n,
        plain.text(),
        [],
    )
    costs = {m: _paired(results, m, "rope", 1) for m in FINETUNED}
    gains = [m for m in FINETUNED if costs[m].verdict == "a"]
    claim(
        "only_yarn_gains_at_train",
        "at L_train only the YaRN fine-tune's gain passes the rule's threshold (the control's and NTK's are ties)",
        gains == ["rope+ft_yarn"],
        "; ".join(f"{m} {costs[m].text()}" for m in FINETUNED),
        list(costs.values()),
    )
    kept = ("rope+ft", "rope+ft_ntk", "rope+ft_yarn")
    keys = {m: passkey_values(results, m, 1) or [0.0] for m in (*FINETUNED, "rope")}
    claim(
        "kept_fine_tunes_cost_nothing",
        "the control, NTK and YaRN fine-tunes are lower at L_train on every seed and still retrieve ≥ 90 % of keys"
        " on every seed",
        all(costs[m].better == costs[m].n and min(keys[m]) >= RETRIEVES for m in kept),
        "; ".join(
            f"{m} lower on {costs[m].better} of {costs[m].n}, passkey per seed "
            + ", ".join(f"{v:.0%}" for v in keys[m])
            for m in kept
        ),
        [],
    )
    pi_lower = sum(a < b for a, b in zip(keys["rope+ft_pi"], keys["rope"], strict=True))
    claim(
        "pi_ft_costs_at_train",
        "the PI fine-tune costs perplexity (beaten) and retrieval (lower on every seed) at L_train",
        costs["rope+ft_pi"].verdict == "b" and pi_lower == len(keys["rope"]),
        f"{costs['rope+ft_pi'].text()}; passkey lower on {pi_lower} of {len(keys['rope'])} seeds",
        [costs["rope+ft_pi"]],
    )
    logn = {k: _paired(results, "rope+rerope_logn", "rope+ntk_tuned", k) for k in (4, 16)}
    claim(
        "rerope_logn_beats_ntk",
        "ReRoPE with log-n queries beats NTK as deployed at 4× and at 16×",
        all(c.verdict == "a" for c in logn.values()),
        "; ".join(f"{k}×: {c.text()}" for k, c in logn.items()),
        list(logn.values()),
    )
    short = _paired(results, "rope+ntk_tuned", "rope", 1)
    claim(
        "ntk_tuned_costs_short",
        "NTK's factor chosen for 16× costs at L_train: higher than the plain model on every seed",
        short.worse == short.n,
        short.text(),
        [],
    )
    grid = [str(f) for f in results["extension"]["settings"]["factor_grid"]]
    chosen = [str(results["extension"]["deployed"]["rope+ntk_tuned"][k]) for k in seeds]
    search = [
        results["training"]["rope"][k]["factor_search"]["rope+ntk_tuned"]["heldout_ppl_at_longest"] for k in seeds
    ]
    claim(
        "ntk_at_grid_edge",
        f"NTK chose the largest factor of the grid ({grid[-1]}) on every seed",
        chosen == [grid[-1]] * len(seeds),
        f"chosen per seed {', '.join(chosen)}; held-out perplexity at 16× with factors {grid[-2]} and {grid[-1]}: "
        + "; ".join(f"{g[grid[-2]]:.2f}, {g[grid[-1]]:.2f}" for g in search),
        [],
    )
    return out


def _paired(results: Mapping[str, Any], a: str, b: str, multiple: int) -> PairedComparison:
    comparison = paired(results, a, b, multiple)
    if comparison is None:
        raise ValueError(f"{a} or {b} has no perplexity at {multiple}× L_train")
    return comparison


_STATUS_LABELS = {
    "claim": "000's claim, NTK as deployed,",
    "matched": "000's claim, NTK given the test length,",
    "finetune": "the best fine-tune against the best deployed reading",
    **{f"cost {m}": f"{m} against the model it started from," for m in FINETUNED},
}
SAME, DIFFERS, AT_THRESHOLD = "same at both scales", "scale-dependent", "scale-dependent, at the threshold"


def extension_scale_agreement(
    base: Mapping[str, Any], other: Mapping[str, Any], multiples: Sequence[int] = (4, 16)
) -> list[dict[str, Any]]:
    """Whether notebook 11's practitioner verdicts hold at a second scale: two runs of the same extension protocol.

    One row per verdict: each status of :func:`deployed_statuses` at every multiple (the costs at L_train
    once), then each claim of :func:`practitioner_claims` ("holds" / "fails"), with its value in each run
    (``"here"``, ``"there"``) and ``"agreement"``: :data:`SAME`, :data:`DIFFERS`, or :data:`AT_THRESHOLD` when
    the statuses differ and a comparison behind them lies within a tenth of the paired rule's threshold in
    either run (the threshold, not the direction, changed). Rows of a ranking also give the best reading in each
    run (``"best_here"``, ``"best_there"``: the lowest mean among those nothing beats), since the same status
    word can hide a new winner. Raises ValueError when the two runs do not hold the same verdicts.
    """
    rows: list[dict[str, Any]] = []
    pools = {"claim": 0, "matched": 1, "finetune": 2}
    for i, k in enumerate(multiples):
        mine, theirs = deployed_statuses(base, k), deployed_statuses(other, k)
        if set(mine) != set(theirs):
            raise ValueError(f"the two runs hold different verdicts at {k}×: {sorted(set(mine) ^ set(theirs))}")
        for key in mine:
            at_train = key.startswith("cost ")  # measured at L_train: the same whatever the multiple
            if at_train and i > 0:
                continue
            row: dict[str, Any] = {
                "verdict": f"{_STATUS_LABELS.get(key, key)} {'at L_train' if at_train else f'at {k}×'}",
                "here": mine[key],
                "there": theirs[key],
            }
            if at_train:
                method = key.removeprefix("cost ")
                row["near"] = any(_paired(r, method, "rope", 1).near_threshold for r in (base, other))
            else:
                row["near"] = False
                row["best_here"], row["best_there"] = (unbeaten(r, k, _pools(r)[pools[key]])[0] for r in (base, other))
            rows.append(row)
    here, there = practitioner_claims(base), practitioner_claims(other)
    if set(here) != set(there):
        raise ValueError(f"the two runs hold different claims: {sorted(set(here) ^ set(there))}")
    word = {True: "holds", False: "fails"}
    for key, c in here.items():
        near = c["near_threshold"] or there[key]["near_threshold"]
        rows.append({"verdict": c["claim"], "here": word[c["holds"]], "there": word[there[key]["holds"]], "near": near})
    for row in rows:
        row["agreement"] = SAME if row["here"] == row["there"] else AT_THRESHOLD if row["near"] else DIFFERS
    return rows


# ---- notebook 12: the schemes whose position comes from the data ----------------------------------------------------

DATA_DEPENDENT = ("fox", "fox+rope", "stickbreaking")
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


def datadep_readings(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """What notebook 12's lab section states, from the 08 run (``base``) and the notebook-12 run (``extra``).

    Every comparison is the paired rule (:func:`paired`) on :func:`combine_runs`. Keys:

    * ``falls``: per data-dependent scheme, the per-seed ratios ppl(16×) / ppl(1×) (below 1: perplexity falls
      with length on that seed);
    * ``against_base``: per data-dependent scheme and multiple (1, 4, 16), the schemes of ``base`` it beats,
      ties with and loses to, and those with no perplexity at that length ("not defined");
    * ``among``: the verdicts among the three (at 16×), as :class:`PairedComparison` objects;
    * ``rope_growth``: `rope`'s per-seed ratios ppl(16×) / ppl(1×);
    * ``passkey``: per scheme of ``extra``, the per-seed accuracies at 1× (mean over depths);
    * ``answer_loss``: per trained scheme of ``extra``, the per-seed passkey answer loss at the end of training
      (the last point of ``passkey_loss_curve``, nats per digit; guessing among ten digits is ln 10 = 2.303);
    * ``hybrid``: ``rope_nope_hybrid`` against ``rope`` at 1×, 4× and 16×.
    """
    results = combine_runs(base, extra)
    base_schemes = list(LabConfig.from_dict(base["config"]).schemes)
    multiples = (1, 4, 16)

    def ratios(scheme: str) -> list[float]:
        low, high = seed_values(results, scheme, 1), seed_values(results, scheme, 16)
        assert low is not None and high is not None
        return [h / lo for lo, h in zip(low, high, strict=True)]

    against: dict[str, dict[int, dict[str, list[str]]]] = {}
    for scheme in DATA_DEPENDENT:
        against[scheme] = {}
        for k in multiples:
            groups: dict[str, list[str]] = {"beats": [], "ties": [], "loses to": [], "not defined": []}
            for other in base_schemes:
                comparison = paired(results, scheme, other, k)
                if comparison is None:
                    groups["not defined"].append(other)  # a learned table has no row beyond its length
                    continue
                groups[{"a": "beats", "tie": "ties", "b": "loses to"}[comparison.verdict]].append(other)
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
