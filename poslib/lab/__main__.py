"""Command line for the extrapolation lab: ``python -m poslib.lab [options]``.

Trains one small byte-level language model per scheme at ``--train-len``,
evaluates perplexity at each ``--eval-lens`` (default 1, 2, 4, 8, 16 × the
training length), prints a table and, with ``--out``, writes every number,
the configuration, library versions and timings as JSON.

Example::

    python -m poslib.lab --schemes rope,alibi,rope+ntk --steps 300 --out results.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .model import SCHEMES
from .train import LabConfig, run_lab, summary_table


def _int_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _scheme_list(text: str) -> tuple[str, ...]:
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    if names == ("all",):
        return SCHEMES
    unknown = [n for n in names if n not in SCHEMES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown scheme(s) {', '.join(unknown)}; known: all, {', '.join(SCHEMES)}")
    return names


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and documentation)."""
    d = LabConfig()
    p = argparse.ArgumentParser(
        prog="python -m poslib.lab",
        description="Train one small byte-level language model per positional scheme at "
        "--train-len and report validation perplexity at longer lengths.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--schemes", type=_scheme_list, default="all", help=f"comma-separated names, or 'all' = {','.join(SCHEMES)}"
    )
    p.add_argument("--train-len", type=int, default=d.train_len, help="training context L_train")
    p.add_argument("--steps", type=int, default=d.steps, help="optimizer steps per trained model")
    p.add_argument(
        "--eval-lens",
        type=_int_list,
        default=None,
        help="comma-separated evaluation lengths, multiples of --train-len; None = 1,2,4,8,16 × it",
    )
    p.add_argument(
        "--seeds",
        type=_int_list,
        default=",".join(map(str, d.seeds)),
        help="comma-separated seeds (error bars when > 1)",
    )
    p.add_argument("--device", default=d.device, help="cpu, cuda or cuda:N")
    p.add_argument("--batch-size", type=int, default=d.batch_size)
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--d-model", type=int, default=d.d_model)
    p.add_argument("--n-layers", type=int, default=d.n_layers)
    p.add_argument("--n-heads", type=int, default=d.n_heads)
    p.add_argument("--eval-spans", type=int, default=d.n_eval_spans, help="validation spans scored at every length")
    p.add_argument("--threads", type=int, default=d.threads, help="torch CPU threads (fixed for determinism)")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="train the independent (scheme, seed) models in this many processes, each with --threads threads "
        "(same numbers as --jobs 1)",
    )
    p.add_argument("--out", default=None, help="write the results as JSON to this file")
    p.add_argument(
        "--profiles",
        type=_scheme_list,
        default=(),
        help="schemes whose per-head attention distance and entropy at 1x and 8x are recorded",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, run the lab, print the table; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        cfg = LabConfig(
            schemes=args.schemes,
            train_len=args.train_len,
            steps=args.steps,
            eval_lens=args.eval_lens,
            seeds=args.seeds,
            device=args.device,
            batch_size=args.batch_size,
            lr=args.lr,
            d_model=args.d_model,
            n_layers=args.n_layers,
            n_heads=args.n_heads,
            n_eval_spans=args.eval_spans,
            threads=args.threads,
        )
    except ValueError as err:
        build_parser().error(str(err))  # exits with status 2 and the message
    if args.jobs < 1:
        build_parser().error(f"jobs must be a positive integer, got {args.jobs}")
    results = run_lab(cfg, progress=not args.no_progress, profiles=args.profiles, jobs=args.jobs)
    print()
    print(summary_table(results))
    t = results["timings"]
    steps = ", ".join(f"{b} {ms:.0f}" for b, ms in t["step_ms_median"].items() if ms is not None)
    print(f"\nmedian step time (ms): {steps}")
    print(
        f"total {t['total_seconds']:.0f} s wall, {t['total_cpu_seconds']:.0f} s CPU; "
        f"peak memory {t['peak_memory_mib']:.0f} MiB"
    )
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
        print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
