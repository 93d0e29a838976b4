"""The comparison rule's error rates at the noise the lab's committed runs show (issue 45; docs/lab.md).

Run: python scripts/lab_rule_error_rates.py [--draws 4000] [--seed 45]

1. The noise: for every pair of schemes in results/lab.json, lab_full.json and lab_extend_plateau.json, the
   per-seed spread s of the paired log ratio ln ppl_a − ln ppl_b (sample standard deviation over the file's own
   seeds: 8 for lab.json, 3 for the other two; the header prints each file's count), and per length its median
   over the pairs: of each file, and of all three files' pairs together. A file's spread is read over all its
   seeds, so lab.json's at 8 seeds is not the one its first 3 seeds gave (0.055 against 0.031 at 8 × L_train).
2. The rates, by simulation (:func:`poslib.lab.stats.simulate_rule`): two schemes whose paired log ratio is
   N(ln r, s²) per seed, with s the pooled median at that length (and the largest of the three files' medians);
   the false-winner rate at r = 1, the power at r = 1.05 and 1.10, for n = 3, 5, 8, 12, 16 seeds. Beside them
   the old rule's false-winner rate ("worse on no seed and a paired ratio of at least ×1.03", issue 38), from the
   same kind of draws.

Prints markdown tables; every cell draws from its own generator (``--seed`` and the cell's index), so a cell
does not change when the table grows.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from poslib.lab.stats import PPL_THRESHOLD, log_ratio_spreads, simulate_rule  # noqa: E402

FILES = ("lab.json", "lab_full.json", "lab_extend_plateau.json")
SEEDS = (3, 5, 8, 12, 16)
RATIOS = (1.0, 1.05, 1.10)


def old_rule_rate(spread: float, true_ratio: float, n_seeds: int, n_draws: int, rng: np.random.Generator) -> float:
    """How often issue 38's rule names a winner: every seed on one side (none worse) and |d̄| ≥ ln 1.03."""
    d = rng.normal(math.log(true_ratio), spread, size=(n_draws, n_seeds))
    one_side = (d < 0).all(axis=1) | (d > 0).all(axis=1)
    large = np.abs(d.mean(axis=1)) >= math.log(PPL_THRESHOLD)
    return float((one_side & large).mean())


def measured_spreads() -> tuple[dict[str, dict[int, float]], dict[int, float], dict[int, int], dict[str, int]]:
    """Per file and pooled: the median per-seed spread of paired log ratios at each multiple of L_train; the pairs
    per multiple; and each file's number of seeds."""
    by_file: dict[str, dict[int, float]] = {}
    pooled: dict[int, list[float]] = {}
    n_seeds: dict[str, int] = {}
    for name in FILES:
        results = json.loads((ROOT / "results" / name).read_text())
        n_seeds[name] = len(results["config"]["train"]["seeds"])
        spreads = log_ratio_spreads(results)
        by_file[name] = {m: statistics.median(v) for m, v in spreads.items()}
        for m, v in spreads.items():
            pooled.setdefault(m, []).extend(v)
    return (
        by_file,
        {m: statistics.median(v) for m, v in pooled.items()},
        {m: len(v) for m, v in pooled.items()},
        n_seeds,
    )


def main(argv: list[str] | None = None) -> int:
    """Print the spread table and the error-rate table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=4000, help="draws per cell (default 4000)")
    parser.add_argument("--seed", type=int, default=45, help="first word of every cell's generator seed")
    args = parser.parse_args(argv)
    start, cpu = time.perf_counter(), time.process_time()
    by_file, pooled, pairs, n_seeds = measured_spreads()
    seeds = ", ".join(f"{f} {n}" for f, n in n_seeds.items())
    print(f"Median per-seed spread s of the paired log ratio, over scheme pairs (seeds per file: {seeds}):\n")
    print("| length | " + " | ".join(f"`{f}`" for f in FILES) + " | all three (pairs) |")
    print("|---|" + "---|" * (len(FILES) + 1))
    for m in sorted(pooled):
        cells = " | ".join(f"{by_file[f][m]:.3f}" for f in FILES)
        print(f"| {m} × | {cells} | {pooled[m]:.3f} ({pairs[m]}) |")
    # the binomial standard error of a rate near α = 5 % at this many draws (the widest is at 50 %)
    se5, se50 = math.sqrt(0.05 * 0.95 / args.draws), math.sqrt(0.25 / args.draws)
    print(f"\nRates over {args.draws} draws per cell (binomial standard error {100 * se5:.2f} points near 5 %, "
          f"at most {100 * se50:.2f}); new rule: paired t-test, α = 0.05, and ×1.03; old rule: worse on no seed "
          "and ×1.03.\n")  # fmt: skip
    print("| length | n | false winner | power ×1.05 | power ×1.10 | old rule's false winner "
          "| false winner | power ×1.05 | power ×1.10 | old rule's false winner |")  # fmt: skip
    print("|---|---|" + "---|" * 8)
    cell = 0
    for m in sorted(pooled):
        worst = max(by_file[f][m] for f in FILES)
        print(f"| **{m} ×** | | **s = {pooled[m]:.3f}** (all three) | | | | **s = {worst:.3f}** (largest) | | | |")
        for n in SEEDS:
            shown = []
            for s in (pooled[m], worst):
                for r in RATIOS:
                    shown.append(simulate_rule(s, r, n, args.draws, np.random.default_rng((args.seed, cell))))
                    cell += 1
                shown.append(old_rule_rate(s, 1.0, n, args.draws, np.random.default_rng((args.seed, cell))))
                cell += 1
            print(f"| {m} × | {n} | " + " | ".join(f"{100 * x:.1f} %" for x in shown) + " |", flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s wall, {time.process_time() - cpu:.0f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
