"""The sentences notebooks 08, 11 and 12 print about a lab run, written from the verdicts' dataclasses.

This is the only module that turns :mod:`poslib.lab.verdicts` (and the
:class:`~poslib.lab.seedstats.PairedComparison` evidence) into words, at the very end: every sentence is an
English template with named fields, looked up in the ``lab`` catalogue in poslib's language
(:mod:`poslib.language`: ``_template.format(...)``, translate the template, then fill it), so that a Chinese
sentence is written as a Chinese sentence rather than pieced together from English ones. A word that itself needs
translating (a status, a category, a relation) goes through ``_`` too before it fills a field.

Nothing here decides anything, and nothing reads a sentence back: code that needs a verdict's status reads the
dataclass's enum (:func:`poslib.lab.verdicts.claims`, :func:`poslib.lab.verdicts.deployed_statuses`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from poslib.language import translate, translator

from .config import LabConfig
from .seedstats import (
    CPU_NOISE,
    PASSKEY_TIE,
    TIE,
    Outcome,
    PairedComparison,
    SeedValues,
    n_seeds,
    retrieval_reach,
    seed_record,
    seeds_disagree,
)
from .verdicts import (
    Agreement,
    Category,
    Cost,
    CostVerdict,
    DeployedClaim,
    Disagreement,
    ExtensionVerdicts,
    FinetuneRelation,
    GrowthClaim,
    Holds,
    Join,
    Mismatch,
    NtkClaim,
    Ordering,
    PairChange,
    PasskeyBest,
    Place,
    PractitionerClaim,
    Relation,
    Scale,
    Standing,
    Status,
    claims,
    deployed,
    disagreement_verdicts,
    extension,
    extension_agreement,
    orderings,
    passkey_best_group,
    practitioner_verdicts,
    scale_of,
    takeaway_verdicts,
)

__all__ = [
    "accuracy_text",
    "category_text",
    "claim_text",
    "claim_verdicts",
    "comparison_table",
    "deployed_verdicts",
    "disagreements",
    "extension_scale_agreement",
    "extension_text",
    "extension_verdicts",
    "paired_text",
    "passkey_best",
    "practitioner_claims",
    "reach_end",
    "scale_phrase",
    "scale_text",
    "seed_count_text",
    "seeds_text",
    "standing_text",
    "status_text",
    "values_text",
    "word",
]

_ = translator("lab")
P_FLOOR = 1e-5  # p values below it are printed as "p < 1e-05"


def _join(items: Iterable[str]) -> str:
    """A list of names in the current language ("rope, alibi"; Chinese takes the enumeration comma)."""
    return _(", ").join(items)


def _semicolons(items: Iterable[str]) -> str:
    """Clauses one after another ("a; b"; Chinese takes the full-width semicolon)."""
    return _("; ").join(items)


# ---- words ----------------------------------------------------------------------------------------------------------


def word(
    value: Relation | PairChange | Agreement | Holds | Category | Status | FinetuneRelation | Cost,
) -> str:
    """A verdict's bare enum value in the current language, for a notebook that prints it in its own sentence.

    A notebook's own code keeps the enum (data) and asks for its word only where it prints it, so a Chinese notebook
    never shows an English value inside a Chinese line.
    """
    if isinstance(value, Status):
        return status_text(value)
    if isinstance(value, Category):
        return category_text(value)
    words = {
        Relation.BEATS: _("beats"),
        Relation.BEATEN: _("beaten"),
        Relation.NOT_DISTINGUISHED: _("not distinguished"),
        Relation.WITHIN_THRESHOLD: _("within the threshold"),
        Relation.NOT_COMPARED: _("not compared"),
        PairChange.SAME: _("same"),
        PairChange.FLIPS: _("flips"),
        PairChange.SOFTENS: _("softens"),
        Agreement.SAME: _("same at both scales"),
        Agreement.DIFFERS: _("scale-dependent"),
        Agreement.AT_THRESHOLD: _("scale-dependent, at the threshold"),
        Agreement.UNDETERMINED: _("undetermined"),
        Holds.HOLDS: _("holds"),
        Holds.FAILS: _("fails"),
        FinetuneRelation.BEATS: _("beats"),
        FinetuneRelation.NEITHER: _("neither beats"),
        FinetuneRelation.LOSES: _("loses to"),
        Cost.GAINS: _("gains"),
        Cost.NEITHER: _("neither"),
        Cost.COSTS: _("costs"),
    }
    if value not in words:  # a StrEnum member equals its string: key on the member's class too
        raise ValueError(f"value must be a verdict enum member (Relation, PairChange, ...), got {value!r}")
    return words[value]


def status_text(status: Status) -> str:
    """A claim's :class:`~poslib.lab.verdicts.Status` in the current language."""
    return {
        Status.HOLDS: _("holds"),
        Status.PARTLY: _("partly holds"),
        Status.DOES_NOT_HOLD: _("does not hold"),
        Status.NOT_AGAINST_UNLISTED: _("does not hold against the distance remaps 000 does not list"),
        Status.UNDETERMINED: _("undetermined"),
    }[status]


def category_text(category: Category) -> str:
    """A growth's :class:`~poslib.lab.verdicts.Category` in the current language (what "the model" does)."""
    return {
        Category.EXTRAPOLATES: _("extrapolates"),
        Category.GRACEFUL: _("degrades gracefully"),
        Category.FAILS: _("does not extrapolate"),
        Category.NOT_DEFINED: _("not defined"),
    }[category]


def _seed_list(seeds: Sequence[str]) -> str:
    return _join(seeds)  # "0, 1, 2"; Chinese lists take the enumeration comma: "0、1、2"


def _values(values: Sequence[float]) -> str:
    return _join(f"{v:.2f}" for v in values)


def values_text(record: SeedValues) -> str:
    """One scheme's per-seed values as text: "seeds 0, 1, 2: 0.90, 0.00, 0.00" (or "not defined")."""
    if record.values is None:
        return _("not defined")
    if len(record.seeds) > 1:
        return _("seeds {seeds}: {values}").format(seeds=_seed_list(record.seeds), values=_values(record.values))
    return _("seed {seeds}: {values}").format(seeds=_seed_list(record.seeds), values=_values(record.values))


def seeds_text(results: Mapping[str, Any], scheme: str, multiple: int = 8, metric: str = "ppl") -> str:
    """The per-seed values of ``scheme`` at ``multiple`` × L_train as text: "seeds 0, 1, 2: 0.90, 0.00, 0.00"."""
    return values_text(seed_record(results, scheme, multiple, metric))


def _named_values(records: Iterable[SeedValues]) -> str:
    """ "xpos seeds 0, 1, 2: …; t5 seeds …": schemes named apart with their per-seed values."""
    return _semicolons(_("{scheme} {values}").format(scheme=r.scheme, values=values_text(r)) for r in records)


def scale_text(scale: Scale) -> str:
    """ "at this scale (≈116k–120k parameters, L_train = 64 bytes, 3 seeds)": the setting every verdict is about,
    followed by what is known of pretraining's plateau (a verdict drawn from unconverged models says so)."""
    text = _scale_text(scale)
    if scale.pretraining_plateau is None:
        return _("{scale}, pretraining not checked for a plateau (no held-out curve)").format(scale=text)
    if not scale.pretraining_plateau:
        return _("{scale}, from pretraining that has not plateaued").format(scale=text)
    return text


def _scale_text(scale: Scale) -> str:
    fields = dict(low=scale.params_low, high=scale.params_high, train_len=scale.train_len, seeds=scale.seeds)
    one = scale.seeds == 1
    if scale.params_low is None:
        if one:
            return _("at this scale (L_train = {train_len} bytes, {seeds} seed)").format(**fields)
        return _("at this scale (L_train = {train_len} bytes, {seeds} seeds)").format(**fields)
    if scale.params_low == scale.params_high:
        if one:
            return _("at this scale (≈{low}k parameters, L_train = {train_len} bytes, {seeds} seed)").format(**fields)
        return _("at this scale (≈{low}k parameters, L_train = {train_len} bytes, {seeds} seeds)").format(**fields)
    if one:
        return _("at this scale (≈{low}k–{high}k parameters, L_train = {train_len} bytes, {seeds} seed)").format(
            **fields
        )
    return _("at this scale (≈{low}k–{high}k parameters, L_train = {train_len} bytes, {seeds} seeds)").format(**fields)


def scale_phrase(results: Mapping[str, Any]) -> str:
    """:func:`scale_text` of a run (the parameter count is the range over the run's models)."""
    return scale_text(scale_of(results))


def accuracy_text(results: Mapping[str, Any], accuracy: float) -> str:
    """ "84%", or the count, "2 of 300 keys", below 1 % and above 99 % (where a rounded percentage hides the keys).

    The count is over every key the run scored at one length: keys per depth × depths × seeds.
    """
    if (accuracy < 0.01 or accuracy > 0.99) and accuracy not in (0.0, 1.0):
        retrieval_cfg = LabConfig.from_dict(results["config"]).retrieval
        keys = retrieval_cfg.passkey_samples * len(retrieval_cfg.passkey_depths) * n_seeds(results)
        return _("{found} of {keys} keys").format(found=round(accuracy * keys), keys=keys)
    return f"{accuracy:.0%}"


# ---- the paired evidence --------------------------------------------------------------------------------------------


def seed_count_text(c: PairedComparison) -> str:
    """ "lower on 3 of 3 seeds" (perplexity) or "higher on 2 of 3 seeds" (passkey), from ``a``'s side."""
    fields = dict(better=c.better, n=c.n)
    # every seed, none, or some: three templates that read the same in English ("lower on 3 of 3 seeds") and
    # differently in Chinese (在全部 3 个种子上都更低, 在 3 个种子上都没有更低, 在 3 个种子中有 2 个更低)
    if c.metric == "ppl":
        if c.n == 1:
            return _("lower on {better} of {n} seed").format(**fields)
        if c.better == c.n:
            return _("lower on {n} of {n} seeds").format(**fields)
        if c.better == 0:
            return _("lower on 0 of {n} seeds").format(**fields)
        return _("lower on {better} of {n} seeds").format(**fields)
    if c.n == 1:
        return _("higher on {better} of {n} seed").format(**fields)
    if c.better == c.n:
        return _("higher on {n} of {n} seeds").format(**fields)
    if c.better == 0:
        return _("higher on 0 of {n} seeds").format(**fields)
    return _("higher on {better} of {n} seeds").format(**fields)


def paired_text(c: PairedComparison) -> str:
    """From ``a``'s side: "lower on 3 of 3 seeds, paired ratio ×0.78 (×0.69 to ×0.90)", and why a tie is one.

    For perplexity the paired ratio is the geometric mean of ppl_a / ppl_b over seeds (its range in brackets); for
    passkey accuracy, the mean difference in points.
    """
    count = seed_count_text(c)
    if c.metric == "ppl":
        # three decimals, more where they would print the threshold itself (×1.030 for 1.02989)
        ratio, limit, digits = math.exp(abs(c.mean)), 1 + TIE, 3
        while digits < 6 and f"{ratio:.{digits}f}" == f"{limit:.{digits}f}":
            digits += 1
        shown = [f"×{math.exp(d):.{digits}f}" for d in (c.mean, min(c.diffs), max(c.diffs))]
        if c.n > 1:
            text = _("{count}, paired ratio {ratio} ({low} to {high})").format(
                count=count,
                ratio=shown[0],
                low=shown[1],
                high=shown[2],
            )
        else:
            text = _("{count}, paired ratio {ratio}").format(count=count, ratio=shown[0])
    else:
        shown = [f"{100 * d:+.0f}".replace("-", "−") for d in (c.mean, min(c.diffs), max(c.diffs))]
        if c.n > 1:
            text = _("{count}, mean paired difference {diff} points ({low} to {high})").format(
                count=count,
                diff=shown[0],
                low=shown[1],
                high=shown[2],
            )
        else:
            text = _("{count}, mean paired difference {diff} points").format(count=count, diff=shown[0])
    return _rule_text(c, text)


def _number(x: float, digits: int) -> str:
    """A signed number with a real minus sign; ±∞ for a t with no spread to divide by."""
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    text = f"{x:.{digits}f}"
    if float(text) == 0:
        text = text.lstrip("-")  # −0.0 says nothing a 0.0 does not
    return text.replace("-", "−")


def _test_text(c: PairedComparison) -> str:
    """ "t = −2.1, p = 0.17" or, within a family, "t = −5.2, p = 0.003 (Holm, 48 comparisons)"."""
    t, p = c.t, c.p_decides
    assert t is not None and p is not None
    # below 1e-5 a p value's digits are rounding noise of the t tail: it is printed as a bound ("p < 1e-05")
    fields = dict(t=_number(t, 1), p=f"{max(p, P_FLOOR):.2g}", family=c.family)
    if p < P_FLOOR:
        if c.family > 1:
            return _("t = {t}, p < {p} (Holm, {family} comparisons)").format(**fields)
        return _("t = {t}, p < {p}").format(**fields)
    if c.family > 1:
        return _("t = {t}, p = {p} (Holm, {family} comparisons)").format(**fields)
    return _("t = {t}, p = {p}").format(**fields)


def _rule_text(c: PairedComparison, evidence: str) -> str:
    """``evidence`` followed by what the rule (a paired t-test, Holm, the threshold) concludes, with the test."""
    if c.n < 2:
        text = _("{evidence}; one seed: not distinguished").format(evidence=evidence)
    elif c.outcome is Outcome.NOT_DISTINGUISHED:
        interval = c.interval
        assert interval is not None
        if c.metric == "ppl":
            low, high = f"×{interval[0]:.3f}", f"×{interval[1]:.3f}"
        else:
            low, high = (_number(100 * x, 0) for x in interval)
        text = _("{evidence}; not distinguished at {n} seeds ({test}; 95 % interval {low} to {high})").format(
            evidence=evidence, n=c.n, test=_test_text(c), low=low, high=high
        )
    elif c.outcome is Outcome.BELOW_THRESHOLD:
        if c.metric == "ppl":
            text = _("{evidence}; distinguished ({test}) but within ×{limit} either way").format(
                evidence=evidence, test=_test_text(c), limit=f"{1 + TIE:g}"
            )
        else:
            text = _("{evidence}; distinguished ({test}) but under {points} points").format(
                evidence=evidence, test=_test_text(c), points=f"{100 * PASSKEY_TIE:.0f}"
            )
    else:
        text = _("{evidence}; {test}").format(evidence=evidence, test=_test_text(c))
    if c.near_threshold:
        text = _("{evidence}; close to the threshold").format(evidence=text)  # a verdict another CPU could move
    if c.noisy and c.n > 1:
        text = _("{evidence}; {noisy} of {n} seeds within {percent} %, a sign another CPU could reverse").format(
            evidence=text,
            noisy=c.noisy,
            n=c.n,
            percent=f"{100 * CPU_NOISE:g}",
        )
    return text


def standing_text(s: Standing) -> str:
    """Where a scheme stands in a pool: "rope+ntk is the best (tied with …)", "… ties with the best, … (evidence)",
    or "… is the best and beats it (… against …'s …; evidence)"."""
    if s.place == Place.BEST:
        if s.ties:
            return _("{scheme} is the best (also unbeaten: {names})").format(scheme=s.scheme, names=_join(s.ties))
        return _("{scheme} is the best").format(scheme=s.scheme)
    assert s.evidence is not None
    if s.place == Place.UNBEATEN:
        return _("{scheme} is not beaten by the best, {best} ({scheme} {evidence})").format(
            scheme=s.scheme,
            best=s.best,
            evidence=s.evidence.text(),
        )
    fields = dict(
        best=s.best,
        winner=s.winner,
        scheme=s.scheme,
        winner_ppl=f"{s.winner_ppl:.2f}",
        ppl=f"{s.ppl:.2f}",
        evidence=s.evidence.text(),
    )
    if s.winner == s.best:
        return _("{best} is the best and beats it ({winner_ppl} against {scheme}'s {ppl}; {winner} {evidence})").format(
            **fields
        )
    return _(
        "{best} is the best, and {winner} beats it ({winner_ppl} against {scheme}'s {ppl}; {winner} {evidence})"
    ).format(
        **fields,
    )


def _not_ranked(text: str, records: Sequence[SeedValues]) -> str:
    """``text`` followed by the schemes not ranked because their seeds disagree, where there are any."""
    if not records:
        return text
    return _("{text} Not ranked, their seeds disagree: {list}.").format(text=text, list=_named_values(records))


# ---- notebook 08 ----------------------------------------------------------------------------------------------------


def _source(scheme: str) -> str:
    return {
        "rope": _("000 §5.3 / 001 §4: RoPE extrapolates well"),
        "sinusoidal": _("001 §2.4: sinusoidal encodings extrapolate to longer inputs"),
        "alibi": _("000 §7.3: ALiBi extrapolates well"),
    }[scheme]


def _growth_text(claim: GrowthClaim) -> str:
    if claim.growth is None or claim.per_seed is None:
        return _("not defined")
    if claim.scale.seeds == 1:
        return _("growth ×{growth}").format(growth=f"{claim.growth:.2f}")
    # written out as "growth", not g: g is CoPE's gate in notebook 10 (docs/notation.md)
    return _("growth ×{growth}, {low}–{high} over seeds").format(
        growth=f"{claim.growth:.2f}",
        low=f"{min(claim.per_seed):.2f}",
        high=f"{max(claim.per_seed):.2f}",
    )


def claim_text(claim: GrowthClaim | NtkClaim) -> str:
    """One claim verdict of :func:`poslib.lab.verdicts.claims` as a sentence."""
    scale, status = scale_text(claim.scale), status_text(claim.status)
    if isinstance(claim, GrowthClaim):
        if claim.split:
            where = _semicolons(_("at {k}× {seeds}").format(k=r.multiple, seeds=values_text(r)) for r in claim.split)
            return _(
                "{source} → {status} {scale}: the seeds disagree beyond the limit (perplexity {values}), so no mean or "
                "category is read."
            ).format(
                source=_source(claim.scheme),
                status=status,
                scale=scale,
                values=where,
            )
        template = (
            _(
                "{source} → {status} {scale}: at {k}× L_train the model {category} ({growth}) (the seeds disagree "
                "on the category: read it as borderline)."
            )
            if claim.mixed
            else _("{source} → {status} {scale}: at {k}× L_train the model {category} ({growth}).")
        )
        return template.format(
            source=_source(claim.scheme),
            status=status,
            scale=scale,
            k=claim.multiple,
            category=category_text(claim.category),
            growth=_growth_text(claim),
        )
    variants, listed = claim.variants, claim.listed
    if variants.place == Place.BEST:
        among = (
            _("NTK is the best of the RoPE variants (also unbeaten: {names})").format(names=_join(variants.ties))
            if variants.ties
            else _("NTK is the best of the RoPE variants")
        )
    elif variants.place == Place.UNBEATEN:
        among = _("NTK is not beaten by the best RoPE variant, {best}").format(best=variants.best)
    else:
        among = _("NTK is not the best RoPE variant; {best} is").format(best=variants.best)
    if listed.place == Place.BEST and not listed.ties:
        overall = _("and the best of the methods 000 §6.2 lists")
    elif listed.place in (Place.BEST, Place.UNBEATEN):
        overall = _("and none of the methods 000 §6.2 lists beats it")
    elif listed.ties:
        overall = _("but of the methods 000 §6.2 lists, {best} is the best (also unbeaten: {names})").format(
            best=listed.best,
            names=_join(listed.ties),
        )
    else:
        overall = _("but of the methods 000 §6.2 lists, {best} is the best").format(best=listed.best)
    fields = dict(status=status, scale=scale, k=claim.multiple, among=among, overall=overall)
    if claim.unranked:
        return _(
            "000 §6.2: NTK-RoPE is the strongest without fine-tuning → {status} {scale}: at {k}× L_train {among}, "
            "{overall} (not ranked, their seeds disagree: {unranked})."
        ).format(
            unranked=_named_values(claim.unranked),
            **fields,
        )
    return _(
        "000 §6.2: NTK-RoPE is the strongest without fine-tuning → {status} {scale}: at {k}× L_train {among}, "
        "{overall}."
    ).format(
        **fields,
    )


def claim_verdicts(results: Mapping[str, Any], multiple: int = 8) -> dict[str, str]:
    """One verdict sentence per claim of the sources that the run tests (keys: the scheme or claim).

    The verdicts are :func:`poslib.lab.verdicts.claims`; read their status there, not from these sentences.
    """
    return {key: claim_text(claim) for key, claim in claims(results, multiple).items()}


def takeaways(results: Mapping[str, Any], multiple: int = 8) -> list[str]:
    """Notebook 08's concluding bullets, each derived from the run (:func:`poslib.lab.verdicts.takeaway_verdicts`)."""
    t = takeaway_verdicts(results, multiple)
    scale = scale_text(t.scale)
    lines = []
    if t.failing:
        growths = _join(f"×{g:.2f}" for g in t.failing_growth)
        if len(t.failing) > 1:
            lines.append(
                _(
                    "Defined at every position is not the same as working there: {a} and {b} are defined beyond "
                    "L_train, yet their perplexity grows by {growths} from 1× to {k}× L_train, {scale}."
                ).format(
                    a=t.failing[0],
                    b=t.failing[1],
                    growths=growths,
                    k=multiple,
                    scale=scale,
                )
            )
        else:
            lines.append(
                _(
                    "Defined at every position is not the same as working there: {scheme} is defined beyond "
                    "L_train, yet its perplexity grows by {growths} from 1× to {k}× L_train, {scale}."
                ).format(
                    scheme=t.failing[0],
                    growths=growths,
                    k=multiple,
                    scale=scale,
                )
            )
    if t.biases:
        names = _join(t.biases)
        if t.flat == t.biases:
            template = _("Schemes that penalise distance in the logits ({names}) keep a flat curve up to {k}× L_train.")
        elif t.flat:
            template = _(
                "Schemes that penalise distance in the logits ({names}) do not all keep a flat curve up to {k}× "
                "L_train (flat: {flat})."
            )
        else:
            template = _(
                "Schemes that penalise distance in the logits ({names}) do not all keep a flat curve up to {k}× "
                "L_train."
            )
        lines.append(template.format(names=names, k=multiple, flat=_join(t.flat)))
        if t.at_train is not None:
            template = (
                _("At L_train itself ALiBi is behind RoPE ({alibi} against {rope}; ALiBi {evidence}).")
                if t.at_train.behind
                else _("At L_train itself RoPE does not beat ALiBi ({alibi} against {rope}; ALiBi {evidence}).")
            )
            evidence = t.at_train.evidence.text() if t.at_train.evidence is not None else "—"
            lines.append(
                template.format(
                    alibi=f"{t.at_train.alibi_ppl:.2f}", rope=f"{t.at_train.rope_ppl:.2f}", evidence=evidence
                )
            )
    if t.rescaling is not None:
        r = t.rescaling
        fields = dict(
            k=r.multiple,
            helped=_join(r.helped) or _("none"),
            hurt=_join(r.hurt) or _("none"),
            split=_join(r.split),
        )
        template = (
            _(
                "Rescaling a trained RoPE model at inference, without fine-tuning: better than plain RoPE at {k}×: "
                "{helped}; worse: {hurt} (seeds disagree, not compared: {split})."
            )
            if r.split
            else _(
                "Rescaling a trained RoPE model at inference, without fine-tuning: better than plain RoPE at {k}×: "
                "{helped}; worse: {hurt}."
            )
        )
        lines.append(template.format(**fields))
    return lines


def _ordering_text(o: Ordering) -> str:
    text = o.steps[0].scheme if o.steps else "—"
    for step in o.steps[1:]:
        if step.join == Join.SAME_GROUP:
            text += " ≈ " + step.scheme
        elif step.join == Join.NOT_DISTINGUISHED_FROM:
            text += " ≲ " + _("{scheme} (not beaten by {names})").format(scheme=step.scheme, names=_join(step.ties))
        else:
            text += " < " + step.scheme
    for r in o.split:
        text = _("{order}; {scheme} not placed, seeds disagree ({values})").format(
            order=text,
            scheme=r.scheme,
            values=values_text(r),
        )
    return _("{order} (perplexity at {k}×)").format(order=text, k=o.multiple)


def comparison_table(results: Mapping[str, Any], multiple: int = 8) -> list[dict[str, str]]:
    """Each published ordering of :data:`poslib.lab.verdicts.PUBLISHED` beside this run's ordering of the same
    schemes (:func:`poslib.lab.verdicts.orderings`), as table rows.

    ``lab_ppl``: by mean perplexity at ``multiple`` × L_train (``a ≈ b ≈ c``: every pair of the group tied by the
    paired rule, and none with a scheme placed earlier; ``< d``: d is tied with no scheme placed before it;
    ``≲ d (tied with b, …)``: d is tied with the schemes named); ``lab_passkey``: by passkey accuracy at the same
    length when the run has it. A scheme whose seeds disagree there is not placed: its per-seed values are shown.
    """
    rows = []
    for o in orderings(results, multiple):
        # the sources' words are English data (verdicts.PUBLISHED), translated here, where they are written
        row = {k: translate("lab", str(v)) for k, v in o.published.items() if k != "schemes"}
        row["lab_ppl"] = _ordering_text(o)
        if o.passkey is not None:
            # semicolons between schemes: a split scheme's per-seed values are a comma list of their own
            row["lab_passkey"] = _semicolons(
                _("{scheme} {values} (seeds disagree)").format(scheme=p.scheme, values=values_text(p.split))
                if p.split is not None
                else f"{p.scheme} {p.accuracy:.0%}"
                for p in o.passkey
            )
        rows.append(row)
    return rows


def _disagreement_text(d: Disagreement) -> str:
    if d.kind == Mismatch.SEEDS_SPLIT:
        split = _semicolons(
            (_("ppl {values}") if r.metric == "ppl" else _("passkey {values}")).format(values=values_text(r))
            for r in d.split
        )
        return _("{scheme}: the seeds disagree at {k}× ({split}): no verdict from the mean").format(
            scheme=d.scheme,
            k=d.multiple,
            split=split,
        )
    fields = dict(scheme=d.scheme, k=d.multiple, growth=f"{d.growth:.2f}", accuracy=f"{d.accuracy:.0%}")
    if d.kind == Mismatch.GROWS_BUT_RETRIEVES:
        return _(
            "{scheme}: perplexity grows at {k}× (growth {growth}) yet the passkey is retrieved ({accuracy})"
        ).format(**fields)
    if d.retrieval == "fails":
        return _(
            "{scheme}: perplexity flat at {k}× (growth {growth}) but passkey fails ({accuracy}): it does not use the "
            "long context"
        ).format(
            **fields,
        )
    return _(
        "{scheme}: perplexity flat at {k}× (growth {growth}) but passkey partly retrieves ({accuracy}): it uses only "
        "part of the long context"
    ).format(
        **fields,
    )


def disagreements(results: Mapping[str, Any], multiple: int = 8) -> list[str]:
    """Where perplexity and passkey retrieval tell different stories at ``multiple`` × L_train, one sentence each
    (:func:`poslib.lab.verdicts.disagreement_verdicts`)."""
    return [_disagreement_text(d) for d in disagreement_verdicts(results, multiple)]


def passkey_best(results: Mapping[str, Any], multiple: int = 1) -> dict[str, Any]:
    """The best scheme at ``multiple`` × L_train by mean passkey accuracy, among the schemes whose seeds agree.

    Returns ``{"best": name, "accuracy": mean, "tied": [the others nothing beats], "disagree": {name: its per-seed
    values as text}}`` (the paired rule); ``disagree`` holds the schemes left out because their seeds disagree.
    """
    best, accuracy, ties, split = passkey_best_group(results, multiple)
    disagree = {s: seeds_text(results, s, multiple, "passkey") for s in split}
    return {"best": best, "accuracy": accuracy, "tied": ties, "disagree": disagree}


def reach_end(results: Mapping[str, Any], scheme: str) -> tuple[int, str | None]:
    """``(reach, note)``: :func:`~poslib.lab.seedstats.retrieval_reach`, and where the mean that ended it comes from
    seeds that disagree, the multiple and the per-seed accuracies there ("4×: seeds 0, 1, 2: 0.95, 0.60, 0.27");
    else None. Such a reach is where the seeds part, not where the scheme stops retrieving.
    """
    cfg = LabConfig.from_dict(results["config"])
    reach = retrieval_reach(results, scheme)
    longer = [L // cfg.train_len for L in cfg.eval_lens if L // cfg.train_len > reach]
    if longer and seeds_disagree(results, scheme, longer[0], "passkey"):
        return reach, _("{k}×: {values}").format(k=longer[0], values=seeds_text(results, scheme, longer[0], "passkey"))
    return reach, None


# ---- notebook 11 ----------------------------------------------------------------------------------------------------


def _with_ties(value: str, ties: Sequence[str]) -> str:
    return _("{value}, also unbeaten: {names}").format(value=value, names=_join(ties)) if ties else value


def _passkey_best_text(results: Mapping[str, Any], best: PasskeyBest) -> str:
    accuracy = accuracy_text(results, best.accuracy)
    free = best.kind == "training-free"
    if best.fails:
        if free:
            template = (
                _("every training-free method whose seeds agree fails (best {accuracy})")
                if best.partial
                else _("every training-free method fails (best {accuracy})")
            )
        else:
            template = (
                _("every fine-tuned method whose seeds agree fails (best {accuracy})")
                if best.partial
                else _("every fine-tuned method fails (best {accuracy})")
            )
        return template.format(accuracy=accuracy)
    shown = _with_ties(accuracy, best.ties)
    template = _("best training-free {scheme} ({accuracy})") if free else _("best fine-tuned {scheme} ({accuracy})")
    return template.format(scheme=best.scheme, accuracy=shown)


def extension_text(results: Mapping[str, Any], v: ExtensionVerdicts) -> dict[str, str]:
    """Notebook 11's three sentences (``"claim"``, ``"finetune"``, ``"passkey"``) for :class:`ExtensionVerdicts`."""
    claim = _(
        "000 §6.2: NTK-RoPE is the strongest without fine-tuning → {status} {scale}: at {k}× L_train, among every "
        "training-free method {among_free}; among the frequency scalings alone (notebook 08's reading) "
        "{among_scalings}."
    ).format(
        status=status_text(v.status),
        scale=scale_text(v.scale),
        k=v.multiple,
        among_free=standing_text(v.among_free),
        among_scalings=standing_text(v.among_scalings),
    )
    out = {"claim": _not_ranked(claim, v.unranked)}
    f = v.finetune
    template = {
        FinetuneRelation.BEATS: _(
            "A short fine-tune ({steps} steps at {length} bytes) against no training, at {k}× "
            "L_train: the best fine-tuned model, {tuned} ({tuned_ppl}), beats the best training-free method, {free} "
            "({free_ppl}): {tuned} is {evidence}."
        ),
        FinetuneRelation.NEITHER: _(
            "A short fine-tune ({steps} steps at {length} bytes) against no training, at {k}× "
            "L_train: neither the best fine-tuned model, {tuned} ({tuned_ppl}), nor the best training-free method, "
            "{free} ({free_ppl}), beats the other: {tuned} is {evidence}."
        ),
        FinetuneRelation.LOSES: _(
            "A short fine-tune ({steps} steps at {length} bytes) against no training, at {k}× "
            "L_train: the best fine-tuned model, {tuned} ({tuned_ppl}), loses to the best training-free method, {free} "
            "({free_ppl}): {tuned} is {evidence}."
        ),
    }[f.relation]
    out["finetune"] = template.format(
        steps=f.steps,
        length=f.finetune_len,
        k=v.multiple,
        tuned=f.tuned,
        tuned_ppl=_with_ties(f"{f.tuned_ppl:.2f}", f.tuned_ties),
        free=f.free,
        free_ppl=_with_ties(f"{f.free_ppl:.2f}", f.free_ties),
        evidence=f.evidence.text(),
    )
    out["finetune"] = _not_plateaued_text(out["finetune"], f.not_plateaued)
    if v.passkey is not None:
        p = v.passkey
        text = _("Passkey retrieval at {k}× L_train: {free}, {tuned}; training-free NTK {ntk}.").format(
            k=p.multiple,
            free=_passkey_best_text(results, p.free),
            tuned=_passkey_best_text(results, p.tuned),
            ntk=accuracy_text(results, p.ntk),
        )
        out["passkey"] = _not_ranked(text, p.split)
    return out


def extension_verdicts(results: Mapping[str, Any], multiple: int = 4) -> dict[str, str]:
    """Notebook 11's verdicts at ``multiple`` × L_train as sentences (:func:`poslib.lab.verdicts.extension`)."""
    return extension_text(results, extension(results, multiple))


def _deployed_claim_text(c: DeployedClaim, scale: str, multiple: int) -> str:
    template = (
        _("000 §6.2, NTK given the test length → {status} {scale}: at {k}× L_train {standing}.")
        if c.matched
        else _(
            "000 §6.2, NTK as deployed (one factor, chosen on held-out bytes) → {status} {scale}: at {k}× L_train "
            "{standing}."
        )
    )
    return template.format(status=status_text(c.status), scale=scale, k=multiple, standing=standing_text(c.standing))


def _cost_text(results: Mapping[str, Any], c: CostVerdict) -> str:
    fields = dict(scheme=c.method, evidence=c.evidence.text())
    if c.passkey_before is None or c.passkey_after is None:
        return _("{scheme} ppl {evidence}").format(**fields)
    return _("{scheme} ppl {evidence}, passkey {before} → {after}").format(
        before=accuracy_text(results, c.passkey_before),
        after=accuracy_text(results, c.passkey_after),
        **fields,
    )


def deployed_verdicts(results: Mapping[str, Any], multiple: int) -> dict[str, str]:
    """Notebook 11's verdicts as a practitioner would run them, at ``multiple`` × L_train, as sentences.

    ``"claim"``, ``"matched"``, ``"finetune"`` and ``"cost"`` (:func:`poslib.lab.verdicts.deployed`; their statuses:
    :func:`poslib.lab.verdicts.deployed_statuses`).
    """
    v = deployed(results, multiple)
    scale = scale_text(v.scale)
    out = {
        "claim": _deployed_claim_text(v.claim, scale, multiple),
        "matched": _deployed_claim_text(v.matched, scale, multiple),
    }
    f = v.finetune
    if f.finetune_len == v.judged_len:
        where = _("at their own fine-tuning length")
    elif v.judged_len > (f.finetune_len or 0):
        where = _("at {length} bytes, beyond their fine-tuning length of {finetune_len}").format(
            length=v.judged_len,
            finetune_len=f.finetune_len,
        )
    else:
        where = _("at {length} bytes, below their fine-tuning length of {finetune_len}").format(
            length=v.judged_len,
            finetune_len=f.finetune_len,
        )
    tuned = (
        _("{scheme} (not beaten by {names})").format(scheme=f.tuned, names=_join(f.tuned_ties))
        if f.tuned_ties
        else f.tuned
    )
    best = (
        _("the best whose seeds agree, {tuned}").format(tuned=tuned)
        if v.apart
        else _("the best, {tuned}").format(tuned=tuned)
    )
    template = {
        FinetuneRelation.BEATS: _(
            "Fine-tuned {steps} steps at {length} bytes, judged {where}: {best}, beats the best "
            "deployed training-free reading, {free}: {tuned} {evidence}."
        ),
        FinetuneRelation.NEITHER: _(
            "Fine-tuned {steps} steps at {length} bytes, judged {where}: neither {best}, nor the best "
            "deployed training-free reading, {free}, beats the other: {tuned} {evidence}."
        ),
        FinetuneRelation.LOSES: _(
            "Fine-tuned {steps} steps at {length} bytes, judged {where}: {best}, loses to the best "
            "deployed training-free reading, {free}: {tuned} {evidence}."
        ),
    }[f.relation]
    text = template.format(
        steps=f.steps,
        length=f.finetune_len,
        where=where,
        best=best,
        free=f.free,
        tuned=f.tuned,
        evidence=f.evidence.text(),
    )
    out["finetune"] = _not_plateaued_text(_not_ranked(text, v.apart), f.not_plateaued)
    out["cost"] = _("The cost at L_train, against the model each fine-tune started from: {list}.").format(
        list=_semicolons(_cost_text(results, c) for c in v.costs),
    )
    return out


def _not_plateaued_text(text: str, failing: Sequence[tuple[str, str, float]]) -> str:
    """``text`` followed by the fine-tunes it is drawn from whose held-out loss has not plateaued, where any."""
    if not failing:
        return text
    each = _semicolons(
        _("{scheme} seed {seed} ({change} % over another 30 % of the steps)").format(
            scheme=m, seed=seed, change=_number(100 * change, 2)
        )
        for m, seed, change in failing
    )
    return _("{text} Drawn from fine-tunes whose held-out loss has not plateaued: {list}.").format(text=text, list=each)


def _practitioner_sentence(c: PractitionerClaim) -> str:
    m = c.measured
    return {
        "yarn_ft_beats_free_at_4x": lambda: _(
            "the YaRN fine-tune beats every training-free reading at its own length (4×)"
        ),
        "finetunes_lose_at_16x": lambda: _(
            "beyond their length (16×) the best training-free reading beats every fine-tune"
        ),
        "plain_ft_helps_at_16x": lambda: _("the plain fine-tune beats the model it started from at 16×"),
        "only_yarn_gains_at_train": lambda: _("at L_train only the YaRN fine-tune beats the model it started from"),
        "kept_fine_tunes_cost_nothing": lambda: _(
            "at L_train the model they started from beats none of the control, NTK and YaRN fine-tunes, and they"
            " still retrieve ≥ 90 % of keys on every seed"
        ),
        "pi_ft_costs_at_train": lambda: _(
            "the PI fine-tune costs perplexity and retrieval at L_train (the model it started from beats it in both)"
        ),
        "rerope_logn_beats_ntk": lambda: _("ReRoPE with log-n queries beats NTK as deployed at 4× and at 16×"),
        "ntk_tuned_costs_short": lambda: _("NTK's factor chosen for 16× costs at L_train: the plain model beats it"),
        "ntk_at_grid_edge": lambda: _("NTK chose the largest factor of the grid ({largest}) on every seed").format(
            largest=m.get("largest")
        ),
    }[c.key]()


def _practitioner_measured(c: PractitionerClaim) -> str:
    m = c.measured
    if c.key == "yarn_ft_beats_free_at_4x":
        return _("beats {wins} of {of}; the closest, {closest}: {evidence}").format(
            wins=m["wins"],
            of=m["of"],
            closest=m["closest"],
            evidence=m["evidence"].text(),
        )
    if c.key == "finetunes_lose_at_16x":
        each = _semicolons(
            _("{scheme} {evidence}").format(scheme=s, evidence=x.text()) for s, x in m["against"].items()
        )
        return _("against {best}: {list}").format(best=m["best"], list=each)
    if c.key in ("plain_ft_helps_at_16x", "ntk_tuned_costs_short"):
        return str(m["evidence"].text())
    if c.key == "only_yarn_gains_at_train":
        return _semicolons(_("{scheme} {evidence}").format(scheme=s, evidence=x.text()) for s, x in m["costs"].items())
    if c.key == "kept_fine_tunes_cost_nothing":
        return _semicolons(
            _("{scheme} {evidence}, passkey per seed {values}").format(
                scheme=s,
                evidence=x.text(),
                values=_join(f"{v:.0%}" for v in m["passkey"][s]),
            )
            for s, x in m["costs"].items()
        )
    if c.key == "pi_ft_costs_at_train":
        if m["passkey"] is None:
            return str(m["evidence"].text())
        return _("{evidence}; passkey {passkey}").format(evidence=m["evidence"].text(), passkey=m["passkey"].text())
    if c.key == "rerope_logn_beats_ntk":
        return _semicolons(_("{k}×: {evidence}").format(k=k, evidence=x.text()) for k, x in m["by_multiple"].items())
    return _("chosen per seed {chosen}; held-out perplexity at 16× with factors {low} and {high}: {pairs}").format(
        chosen=_join(m["chosen"]),
        low=m["next_largest"],
        high=m["largest"],
        pairs=_semicolons(_join((f"{a:.2f}", f"{b:.2f}")) for a, b in m["heldout"]),
    )


def practitioner_claims(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The claims notebook 11 reads off its practitioner run (§5), measured in ``results`` by the paired rule.

    Returns, per claim key, ``{"claim": the sentence, "holds": bool, "measured": the evidence, "near_threshold":
    whether a paired comparison it rests on lies within a tenth of the rule's threshold}``
    (:func:`poslib.lab.verdicts.practitioner_verdicts` holds them as data).
    """
    return {
        key: {
            "claim": _practitioner_sentence(c),
            "holds": c.holds,
            "measured": _practitioner_measured(c),
            "near_threshold": c.near_threshold,
        }
        for key, c in practitioner_verdicts(results).items()
    }


def _agreement_label(key: str, multiple: int | None) -> str:
    if key == "claim":
        return _("000's claim, NTK as deployed, at {k}×").format(k=multiple)
    if key == "matched":
        return _("000's claim, NTK given the test length, at {k}×").format(k=multiple)
    if key == "finetune":
        return _("the best fine-tune against the best deployed reading at {k}×").format(k=multiple)
    return _("{scheme} against the model it started from, at L_train").format(scheme=key.removeprefix("cost "))


def extension_scale_agreement(
    base: Mapping[str, Any], other: Mapping[str, Any], multiples: Sequence[int] = (4, 16)
) -> list[dict[str, Any]]:
    """Whether notebook 11's practitioner verdicts hold at a second scale, as table rows.

    One row per :class:`poslib.lab.verdicts.AgreementRow`: ``"verdict"`` (what is compared, as text), ``"here"`` and
    ``"there"`` (the statuses, enums), ``"near"``, for a ranking ``"best_here"`` and ``"best_there"``, and
    ``"agreement"`` (:class:`poslib.lab.verdicts.Agreement`).
    """
    rows: list[dict[str, Any]] = []
    claim_sentences: dict[str, str] = {}
    for r in extension_agreement(base, other, multiples):
        if r.claim:
            if not claim_sentences:
                claim_sentences = {k: _practitioner_sentence(c) for k, c in practitioner_verdicts(base).items()}
            label = claim_sentences[r.key]
        else:
            label = _agreement_label(r.key, r.multiple)
        row: dict[str, Any] = {"verdict": label, "here": r.here, "there": r.there, "near": r.near}
        if r.best_here is not None:
            row["best_here"], row["best_there"] = r.best_here, r.best_there
        row["agreement"] = r.agreement
        rows.append(row)
    return rows
