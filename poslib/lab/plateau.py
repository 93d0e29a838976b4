"""A plateau rule that can fail (issue 45): a least-squares line through the end of a loss curve, extrapolated.

The old rule (:func:`poslib.lab.report.plateau`) compared the mean of the last tenth of a curve's points with the
tenth before; on a held-out curve of 21 points that is the last 2 points against the 2 before, within 3 %, and a
fine-tune cut at step 300 of 1000 passes it. This rule fits a line to the end of the curve and asks what it
predicts for the steps to come:

    window  = the last ⌈share · N⌉ points of the curve (at least 3)               share = 0.3
    ℓ(s)    ≈ α + β·s                           (ordinary least squares over the window)
    H       = horizon · (s_last − s_first)      (another 30 % of the steps run so far)     horizon = 0.3
    change  = β·H / ℓ̂(s_last)                  (relative change of the fitted loss over H)
    plateaued ⇔ |change| < tolerance                                          tolerance = 0.01

A curve still falling fails; so does one rising by more than the tolerance (the run is not at rest: it overfits
or diverges), and ``change`` keeps its sign so a reader can tell which. A pass on a short curve is weak
evidence: a fine-tune's held-out curve cut at step 300 of 1000 holds 7 points, the line goes through the last 3
and is carried only 90 steps, and 6 of 12 such cuts pass (issue 45's second reader) while their loss falls another
1.7–4.0 % by step 1000; a fail is the strong statement. The rule judges the curve it is given,
not the run that made it: extrapolating a straight line says nothing about a schedule that changes after the
last point. The lab's fine-tunes follow the same warm-up and cosine down to lr/10 as its pretraining, so their
held-out curves hold the anneal too: a pass there says the loss is flat even while the learning rate still
falls; a fail says the end still moves, and the remedy is a longer run (the whole schedule stretched), the
same step budget for every method compared.

(Importing: ``poslib.lab`` exports the old rule's function under the name ``plateau``, so read this module's
names with ``from poslib.lab.plateau import heldout_plateau``; ``import poslib.lab.plateau as m`` finds the
function.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "HORIZON",
    "MIN_POINTS",
    "SHARE",
    "TOLERANCE",
    "Plateau",
    "heldout_plateau",
    "results_plateaus",
    "training_plateau",
]

SHARE, HORIZON, TOLERANCE = 0.3, 0.3, 0.01  # fit the last 30 %, extrapolate 30 % more steps, within 1 %
MIN_POINTS = 3  # a line through two points has no residual: nothing checks that the end is a line at all


@dataclass(frozen=True)
class Plateau:
    """The rule's verdict on one curve and the numbers behind it (module docstring).

    ``change`` is the relative change of the fitted loss over the next ``horizon`` steps (negative: still
    falling); ``slope`` the fitted loss per step; ``window`` the first and last step of the fitted points and
    ``n_points`` how many there are; ``fitted_end`` the line's value at the last step.
    """

    plateaued: bool
    change: float
    slope: float
    window: tuple[int, int]
    n_points: int
    horizon: float
    fitted_end: float
    tolerance: float


def _fit(steps: np.ndarray, loss: np.ndarray, share: float, horizon: float, tolerance: float) -> Plateau:
    n = len(steps)
    k = max(MIN_POINTS, math.ceil(share * n - 1e-9))  # 0.3 · 21 = 6.3 → the last 7 points (steps 700 … 1000)
    if n < k:
        raise ValueError(f"a plateau needs at least {k} points, got {n}")
    s, y = steps[-k:], loss[-k:]
    ds = s - s.mean()
    slope = float((ds * (y - y.mean())).sum() / (ds * ds).sum())  # β = Σ(s − s̄)(ℓ − ℓ̄) / Σ(s − s̄)²
    end = float(y.mean() + slope * (s[-1] - s.mean()))  # ℓ̂(s_last) = ℓ̄ + β(s_last − s̄)
    h = horizon * float(steps[-1] - steps[0])
    change = slope * h / end
    return Plateau(
        plateaued=abs(change) < tolerance,
        change=change,
        slope=slope,
        window=(int(s[0]), int(s[-1])),
        n_points=k,
        horizon=h,
        fitted_end=end,
        tolerance=tolerance,
    )


def _check(share: float, horizon: float, tolerance: float) -> None:
    for name, value in (("share", share), ("horizon", horizon), ("tolerance", tolerance)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    if share > 1:
        raise ValueError(f"share must be at most 1 (a fraction of the curve), got {share!r}")


def heldout_plateau(
    steps: Sequence[float],
    loss: Sequence[float],
    share: float = SHARE,
    horizon: float = HORIZON,
    tolerance: float = TOLERANCE,
) -> Plateau:
    """Whether a held-out loss curve has plateaued by the rule (module docstring).

    ``steps`` and ``loss`` are a run's held-out curve as stored in its results (``training.<model>.<seed>.heldout``:
    ``{"steps": [...], "loss": [...]}``); the steps must increase strictly and every loss be finite and positive.
    """
    _check(share, horizon, tolerance)
    if len(steps) != len(loss):
        raise ValueError(f"steps and loss must have the same length, got {len(steps)} and {len(loss)}")
    if any(v is None for v in loss):
        raise ValueError("loss holds None (a length the run could not score): no curve to judge")
    s, y = np.asarray(steps, dtype=np.float64), np.asarray(loss, dtype=np.float64)
    if len(s) > 1 and not (np.diff(s) > 0).all():
        raise ValueError("steps must increase strictly")
    if not (np.isfinite(y).all() and (y > 0).all()):
        raise ValueError("loss must be finite and positive (nats per byte)")
    return _fit(s, y, share, horizon, tolerance)


def training_plateau(
    losses: Sequence[float], share: float = SHARE, horizon: float = HORIZON, tolerance: float = TOLERANCE
) -> Plateau:
    """The same rule on a training-loss curve recorded every step (``training.<model>.<seed>.losses``: step 1 … N).

    The per-batch noise averages out in the fit (the last 30 % of a 2000-step run is 600 points). But a run on a
    cosine schedule anneals its learning rate to the end (the lab's goes down to lr/10), and annealing alone
    lowers the training loss: the curve keeps falling through the last 30 % whether or not more data would
    help, so a cosine run is expected to *fail* this rule at its end. A failure here therefore means "the
    schedule's end still moves the loss", not by itself "train longer". A pass on a full run says more (the
    loss is flat even while the learning rate falls), but a pass on a curve cut early proves little: cut at 30 %,
    4 of ``lab.json``'s 96 training curves pass and then fall another 8–11 %. Judge convergence on the held-out curve
    (:func:`heldout_plateau`), or by comparing runs whose whole schedule is stretched, not by extending this
    line: no more steps at the same schedule exist to extrapolate over.

    Every method fine-tuned from one seed reads the same batches in the same order, so a stretch of harder text
    tilts all their training curves alike (seed 1 of ``lab_extend_plateau.json``: +1.8 to +2.4 % by this rule for
    the plain, NTK and YaRN fine-tunes); the held-out curve, scored on fixed spans, has no such term.
    """
    _check(share, horizon, tolerance)
    y = np.asarray(losses, dtype=np.float64)
    if not (np.isfinite(y).all() and (y > 0).all()):
        raise ValueError("losses must be finite and positive (nats per byte)")
    return _fit(np.arange(1, len(y) + 1, dtype=np.float64), y, share, horizon, tolerance)


def results_plateaus(results: Mapping[str, Any], curve: str = "heldout") -> dict[str, dict[str, Plateau]]:
    """``{model: {seed: Plateau}}`` for every training record of a results dictionary that holds the curve.

    ``curve="heldout"``: :func:`heldout_plateau` of each record's ``heldout`` curve (the fine-tunes of an extension
    run, and pretraining where it was watched); ``curve="training"``: :func:`training_plateau` of its ``losses``.
    """
    if curve not in ("heldout", "training"):
        raise ValueError(f"curve must be 'heldout' or 'training', got {curve!r}")
    out: dict[str, dict[str, Plateau]] = {}
    for model, seeds in results.get("training", {}).items():
        for seed, record in seeds.items():
            if curve == "heldout" and "heldout" in record:
                verdict = heldout_plateau(record["heldout"]["steps"], record["heldout"]["loss"])
            elif curve == "training" and record.get("losses"):
                verdict = training_plateau(record["losses"])
            else:
                continue
            out.setdefault(model, {})[seed] = verdict
    return out
