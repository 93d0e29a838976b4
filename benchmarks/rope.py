"""Speed of poslib's RoPE kernels against a copy (the floor) and the usual rotate_half formulation.

Run: python benchmarks/rope.py [--repeats N] [--threads T]

For each shape and backend every candidate runs in the same process, in interleaved rounds
(candidate 1, 2, …, then again), so that load from other processes hits all of them alike; we
print the median time over the rounds and ratios to (a) a copy of x — one read, one write, the
least an op that returns a new array can do — and (b) x*cos + rotate_half(x)*sin with cos/sin
precomputed at full width (the Hugging Face / GPT-NeoX formulation).

``rope_rotate`` gets cos/sin precomputed by ``rope_cos_sin`` in x's dtype: the same footing as
(b). ``apply_rope`` is the one-call form, which also forms the float64 angles and their cos/sin.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

import poslib as P

SHAPES = [(8, 8, 1024, 64), (1, 32, 4096, 128)]
BASELINE = "(b) x*cos + rotate_half(x)*sin"


def medians_ms(candidates: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median wall time (ms) of each candidate over ``repeats`` interleaved rounds, after one warm-up each."""
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for fn in candidates.values():
        fn()
    for _ in range(repeats):
        for name, fn in candidates.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: 1000 * statistics.median(ts) for name, ts in times.items()}


def candidates(x: object, seq: int, d: int) -> dict[str, Callable[[], object]]:
    """Copy, rotate_half baseline, rope_rotate (both layouts) and apply_rope (both layouts) on ``x``."""
    h = d // 2
    if isinstance(x, torch.Tensor):
        pos, inv_freq = torch.arange(seq), torch.tensor(P.rope_frequencies(d))
        full = lambda a: torch.cat([a, a], -1)  # noqa: E731
        copy = x.clone
        swap = lambda: torch.cat([x[..., h:], x[..., :h]], -1)  # noqa: E731
    else:
        pos, inv_freq = np.arange(seq), P.rope_frequencies(d)
        full = lambda a: np.concatenate([a, a], -1)  # noqa: E731
        copy = x.copy
        swap = lambda: np.concatenate([x[..., h:], x[..., :h]], -1)  # noqa: E731
    cos, sin = P.rope_cos_sin(pos, inv_freq, dtype=x.dtype)
    cos_full, sin_full = full(cos), full(sin)
    return {
        "(a) copy": copy,
        BASELINE: lambda: x * cos_full + P.rotate_half(x) * sin_full,
        "swap halves (x₂ | x₁) alone": swap,
        "rope_rotate interleaved": lambda: P.rope_rotate(x, cos, sin),
        "rope_rotate half": lambda: P.rope_rotate(x, cos, sin, layout="half"),
        "apply_rope interleaved": lambda: P.apply_rope(x, pos, inv_freq),
        "apply_rope half": lambda: P.apply_rope(x, pos, inv_freq, layout="half"),
    }


def report(title: str, times: dict[str, float]) -> None:
    floor, usual = times["(a) copy"], times[BASELINE]
    print(f"\n{title}")
    print(f"  {'candidate':32s} {'median ms':>10s} {'÷ (a)':>7s} {'(b) ÷ it':>9s}")
    for name, ms in times.items():
        print(f"  {name:32s} {ms:10.2f} {ms / floor:6.2f}× {usual / ms:8.2f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__}; float32")
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        x = rng.standard_normal(shape).astype(np.float32)
        for name, arr in (("torch", torch.from_numpy(x.copy())), ("numpy", x)):
            report(f"{name} float32 {shape}", medians_ms(candidates(arr, shape[-2], shape[-1]), args.repeats))


if __name__ == "__main__":
    main()
