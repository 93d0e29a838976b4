"""Every committed loss curve judged by the plateau rule of poslib.lab.plateau (issue 45; docs/lab.md).

Run: python scripts/lab_plateaus.py [FILE ...]   (default: results/lab_extend_plateau.json, lab_extend_scale2.json)

For each held-out curve (``training.<model>.<seed>.heldout``): the new rule's verdict on the whole curve (a line
through the last 30 % of the points, extrapolated over another 30 % of the steps, within 1 %), the same curve
cut at step 300, and the old rule (:func:`poslib.lab.report.plateau`: the last tenth of the points against the
tenth before, within 3 %) on both. Then the new rule on every training-loss curve (``losses``), which a cosine
schedule's anneal is expected to fail (:func:`poslib.lab.plateau.training_plateau`).
"""

from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from poslib.lab.plateau import heldout_plateau, results_plateaus  # noqa: E402
from poslib.lab.report import plateau as old_plateau  # noqa: E402

FILES = ("results/lab_extend_plateau.json", "results/lab_extend_scale2.json")
CUT = 300


def _mark(passed: bool) -> str:
    return "passes" if passed else "FAILS"


def main(argv: list[str] | None = None) -> int:
    """Print one table of held-out verdicts and one of training-loss verdicts per results file."""
    for name in (argv if argv else sys.argv[1:]) or FILES:
        results = json.loads((ROOT / name).read_text())
        print(f"\n## {name}\n")
        print(f"| model | seed | new rule | change over the next 30 % | old rule | cut at step {CUT}: new | old |")
        print("|---|---|---|---|---|---|---|")
        for model, seeds in results_plateaus(results).items():
            for seed, verdict in seeds.items():
                curve = results["training"][model][seed]["heldout"]
                k = curve["steps"].index(CUT) + 1 if CUT in curve["steps"] else None
                old = old_plateau(curve["loss"])
                row = [model, seed, _mark(verdict.plateaued), f"{100 * verdict.change:+.2f} %", _mark(old["reached"])]
                if k is None:
                    row += ["—", "—"]
                else:
                    cut = heldout_plateau(curve["steps"][:k], curve["loss"][:k])
                    cut_old = old_plateau(curve["loss"][:k])
                    row += [f"{_mark(cut.plateaued)} ({100 * cut.change:+.2f} %)", _mark(cut_old["reached"])]
                print("| " + " | ".join(row) + " |")
        print("\nTraining-loss curves (every step; the pretraining's cosine anneal is expected to fail the rule):\n")
        print("| model | seed | new rule | change over the next 30 % | fitted steps |")
        print("|---|---|---|---|---|")
        for model, seeds in results_plateaus(results, "training").items():
            for seed, verdict in seeds.items():
                window = f"{verdict.window[0]} … {verdict.window[1]}"
                print(f"| {model} | {seed} | {_mark(verdict.plateaued)} | {100 * verdict.change:+.2f} % | {window} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
