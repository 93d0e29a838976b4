"""Reading a lab run: growth of perplexity with length, rankings, and verdicts on the sources' claims.

Every verdict is computed from a results dictionary of :func:`poslib.lab.run_lab`,
with fixed, documented thresholds, so that a notebook never states a conclusion
its own numbers contradict. Verdict texts contain no numbers: the numbers
themselves depend on the CPU's floating-point kernels, the categories do not
(unless a value sits right at a threshold).

Thresholds on the growth g = ppl(k·L_train) / ppl(L_train):

* g ≤ 1.05 → the scheme **extrapolates** (a perfect extrapolator even gains:
  longer windows give the average byte more context);
* 1.05 < g ≤ 1.5 → it **degrades gracefully**;
* g > 1.5 → it **does not extrapolate**.

Two schemes are **tied** when their perplexities differ by less than 3 %.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["EXTRAPOLATES", "GRACEFUL", "TIE", "category", "claim_verdicts", "growth", "ranking"]

EXTRAPOLATES, GRACEFUL, TIE = 1.05, 1.5, 0.03
ROPE_VARIANTS = ("rope+pi", "rope+ntk", "rope+dynamic", "rope+yarn", "rope+logn")
# 000 §6.2 lists these as remedies for unseen positions; NTK-RoPE is called the strongest without fine-tuning.
SECTION_6_2 = ("alibi", "kerple", "sandwich", "xpos", "rope+pi", "rope+ntk")


def _ppl(results: dict[str, Any], scheme: str, multiple: int) -> float | None:
    if scheme not in results["ppl"]:
        raise ValueError(f"scheme {scheme!r} is not in these results; they have {list(results['ppl'])}")
    L = multiple * results["config"]["train_len"]
    if L not in results["config"]["eval_lens"]:
        raise ValueError(
            f"multiple {multiple} × train_len = {L} was not evaluated; eval_lens are "
            f"{list(results['config']['eval_lens'])}"
        )
    return results["ppl"][scheme][str(L)]


def growth(results: dict[str, Any], scheme: str, multiple: int = 8) -> float | None:
    """ppl at ``multiple`` × L_train divided by ppl at L_train (None where either is not defined)."""
    hi, lo = _ppl(results, scheme, multiple), _ppl(results, scheme, 1)
    return None if hi is None or lo is None else hi / lo


def category(g: float | None) -> str:
    """ "extrapolates", "degrades gracefully", "does not extrapolate" or "not defined" for a growth ``g``."""
    if g is None:
        return "not defined"
    return "extrapolates" if g <= EXTRAPOLATES else "degrades gracefully" if g <= GRACEFUL else "does not extrapolate"


def ranking(
    results: dict[str, Any], multiple: int = 8, schemes: Sequence[str] | None = None
) -> list[tuple[str, float]]:
    """``(scheme, ppl)`` at ``multiple`` × L_train, best (lowest) first; schemes not defined there are left out."""
    names = list(schemes) if schemes is not None else list(results["ppl"])
    values = [(s, _ppl(results, s, multiple)) for s in names]
    return sorted(((s, v) for s, v in values if v is not None), key=lambda sv: sv[1])


def _best(results: dict[str, Any], multiple: int, schemes: Sequence[str]) -> tuple[str, list[str]]:
    """The best scheme and the others tied with it (within TIE)."""
    ranked = ranking(results, multiple, schemes)
    best, best_ppl = ranked[0]
    return best, [s for s, v in ranked[1:] if v <= best_ppl * (1 + TIE)]


def claim_verdicts(results: dict[str, Any], multiple: int = 8) -> dict[str, str]:
    """One verdict sentence per claim of the sources that the run covers (keys: the scheme or claim).

    Claims: RoPE extrapolates (000 §5.3, 001 §4); sinusoidal encodings extrapolate
    (001 §2.4); ALiBi extrapolates (000 §7.3); NTK-RoPE is the strongest method
    without fine-tuning (000 §6.2); a learned table cannot go beyond its length (000 §3.1.4).
    """
    have = set(results["ppl"])
    out: dict[str, str] = {}
    for scheme, source in (
        ("rope", "000 §5.3 / 001 §4: RoPE extrapolates well"),
        ("sinusoidal", "001 §2.4: sinusoidal encodings extrapolate to longer inputs"),
        ("alibi", "000 §7.3: ALiBi extrapolates well"),
        ("learned", "000 §3.1.4: a learned table cannot go beyond its length"),
    ):
        if scheme not in have:
            continue
        cat = category(growth(results, scheme, multiple))
        holds = {
            "extrapolates": "holds",
            "degrades gracefully": "partly holds",
            "does not extrapolate": "does not hold",
            "not defined": "does not hold",
        }[cat]
        if scheme == "learned":
            holds = "holds" if cat == "not defined" else "does not hold"
            out[scheme] = f"{source} → {holds}: beyond L_train the model has no positions (perplexity not defined)."
            continue
        out[scheme] = f"{source} → {holds}: at {multiple}× L_train the model {cat}."
    variants = [s for s in ROPE_VARIANTS if s in have]
    if "rope+ntk" in have and len(variants) > 1:
        best, tied = _best(results, multiple, variants)
        if best == "rope+ntk":
            among = "NTK is the best of the RoPE variants" + (f" (tied with {', '.join(tied)})" if tied else "")
        elif "rope+ntk" in tied:
            among = f"NTK ties with the best RoPE variant, {best}"
        else:
            among = f"NTK is not the best RoPE variant; {best} is"
        pool = [s for s in SECTION_6_2 if s in have]
        best_all, tied_all = _best(results, multiple, pool)
        if best_all == "rope+ntk" and not tied_all:
            overall, holds = "and the best of the methods 000 §6.2 lists", "holds"
        elif best_all == "rope+ntk" or "rope+ntk" in tied_all:
            overall, holds = "and ties for the best of the methods 000 §6.2 lists", "partly holds"
        else:
            overall, holds = (
                f"but of the methods 000 §6.2 lists, {best_all} is the best",
                ("partly holds" if best == "rope+ntk" or "rope+ntk" in tied else "does not hold"),
            )
        out["rope+ntk"] = (
            f"000 §6.2: NTK-RoPE is the strongest without fine-tuning → {holds}: "
            f"at {multiple}× L_train {among}, {overall}."
        )
    return out
