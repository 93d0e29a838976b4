"""Speed of poslib.apply_rope against a copy (the floor) and the usual rotate_half formulation.

Run: python benchmarks/rope.py [--repeats N]

For each shape, every candidate runs in the same process; we print the median
time over repeats and ratios to (a) x.clone() — one read, one write, the least
an op that returns a new tensor can do — and (b) x*cos + rotate_half(x)*sin with
cos/sin precomputed (the Hugging Face / GPT-NeoX formulation).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

import poslib as P


def median_ms(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def bench_torch(shape: tuple[int, ...], repeats: int) -> dict[str, float]:
    x = torch.randn(shape)
    seq, d = shape[-2], shape[-1]
    pos = torch.arange(seq)
    inv_freq = torch.tensor(P.rope_frequencies(d))
    angles = (pos[:, None].double() * inv_freq).float()
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
    return {
        "(a) x.clone()": median_ms(lambda: x.clone(), repeats),
        "(b) x*cos + rotate_half(x)*sin": median_ms(lambda: x * cos + P.rotate_half(x) * sin, repeats),
        "apply_rope interleaved": median_ms(lambda: P.apply_rope(x, pos, inv_freq), repeats),
        "apply_rope half": median_ms(lambda: P.apply_rope(x, pos, inv_freq, layout="half"), repeats),
    }


def bench_numpy(shape: tuple[int, ...], repeats: int) -> dict[str, float]:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    pos = np.arange(shape[-2])
    inv_freq = P.rope_frequencies(shape[-1])
    return {
        "(a) x.copy()": median_ms(lambda: x.copy(), repeats),
        "apply_rope interleaved": median_ms(lambda: P.apply_rope(x, pos, inv_freq), repeats),
        "apply_rope half": median_ms(lambda: P.apply_rope(x, pos, inv_freq, layout="half"), repeats),
    }


def report(title: str, times: dict[str, float]) -> None:
    floor = next(iter(times.values()))
    usual = times.get("(b) x*cos + rotate_half(x)*sin")
    print(f"\n{title}")
    print(f"  {'candidate':34s} {'median ms':>10s} {'÷ (a)':>7s} {'(b) ÷ it':>9s}")
    for name, ms in times.items():
        speedup = f"{usual / ms:8.2f}×" if usual else ""
        print(f"  {name:34s} {ms:10.2f} {ms / floor:6.2f}× {speedup:>9s}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; numpy {np.__version__}")
    for shape in [(8, 8, 1024, 64), (1, 32, 4096, 128)]:
        report(f"torch float32 {shape}", bench_torch(shape, args.repeats))
        report(f"numpy float32 {shape}", bench_numpy(shape, args.repeats))


if __name__ == "__main__":
    main()
