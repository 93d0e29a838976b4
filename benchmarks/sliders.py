"""Slider responsiveness for every LivePlot: what one move costs, fast frames against full draws.

Run: python benchmarks/sliders.py [--repeats N] [--only NAME]

For each LivePlot subclass in poslib.viz (medians over ``repeats`` passes):
  drag    = plot.update(k=v) + plot.png(), moving one control k in small consecutive steps to each
            value ``bench_values`` give it (a student dragging a slider); median, 90th percentile,
            and how the drag's frames were made (full draws / background rebuilds / blits)
  switch  = plot.update(**values) + plot.png(), cycling through ``bench_values``
            (each move turns a different control: the worst case for the frame cache)
  full    = plot.update(**values) + render_png(plot.fig)   (a full savefig per move, as before issue 24)
  rebuild = Cls(**values) + render_png(fig)                  (what a naive callback costs)
Goals: drag ≤ 150 ms and switch ≤ 0.7 × rebuild. All in one process, one thread.
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import time
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from poslib.viz import LivePlot, all_live_plots, render_png


def drags(cls: type[LivePlot], steps: int = 6) -> list[dict[str, Any]]:
    """One control at a time, in small consecutive moves from its default to each value ``bench_values`` give it.

    A numeric control walks there in ``steps`` even moves (rounded for integers); any other control
    (a dropdown, a checkbox) jumps, as it does on screen.
    """
    moves: list[dict[str, Any]] = []
    for key in dict.fromkeys(k for values in cls.bench_values for k in values):
        start = cls.defaults[key]
        # integer controls move on the grid their values share (a model width of 16, 128, 512 moves by 16)
        values = [start, *(v[key] for v in cls.bench_values if key in v)]
        whole = all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        grid = math.gcd(*values) or 1 if whole else 1
        for target in (v[key] for v in cls.bench_values if key in v):
            numeric = isinstance(start, int | float) and isinstance(target, int | float) and not isinstance(start, bool)
            if not numeric:
                moves.append({key: target})
                continue
            path = [start + (target - start) * (k + 1) / steps for k in range(steps)]
            moves += [{key: grid * round(v / grid) if isinstance(start, int) else v} for v in path]
            start = target
    return moves


def timings_ms(step: Any, moves: list[dict[str, Any]], repeats: int) -> tuple[float, float]:
    """Median and 90th percentile of one move, in ms."""
    times = []
    for values in itertools.islice(itertools.cycle(moves), repeats * len(moves)):
        t0 = time.perf_counter()
        step(values)
        times.append(time.perf_counter() - t0)
    ms = sorted(1000 * t for t in times)
    return statistics.median(ms), ms[min(len(ms) - 1, int(0.9 * len(ms)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="passes over each plot's moves")
    parser.add_argument("--only", default="", help="substring of the class names to run")
    args = parser.parse_args()
    print(
        f"{'LivePlot':36s} {'drag ms':>8s} {'p90':>6s} {'switch ms':>10s} {'full ms':>8s} {'rebuild ms':>11s}"
        "  frames: full/rebuilt/blitted  goal"
    )
    for cls in all_live_plots():
        name = f"{cls.__module__.split('.')[-1]}.{cls.__name__}"
        if args.only not in name or not cls.bench_values:
            continue
        plot = cls()
        plot.png()

        def fast(values: dict[str, Any], plot: LivePlot = plot) -> None:
            plot.update(**values)
            plot.png()

        def full(values: dict[str, Any], plot: LivePlot = plot) -> None:
            plot.update(**values)
            render_png(plot.fig)

        def rebuild(values: dict[str, Any], plot: LivePlot = plot, cls: type[LivePlot] = cls) -> None:
            fresh = cls(**{**plot.params, **values})
            render_png(fresh.fig)
            fresh.close()

        d, d90 = timings_ms(fast, drags(cls), args.repeats)
        frames = plot._frames
        counts = f"{frames.full_draws}/{frames.rebuilds}/{frames.blits}" if frames else "-"
        s = timings_ms(fast, cls.bench_values, args.repeats)[0]
        f = timings_ms(full, cls.bench_values, args.repeats)[0]
        r = timings_ms(rebuild, cls.bench_values, max(1, args.repeats // 2))[0]
        plot.close()
        plt.close("all")
        ok = "ok" if d <= 150 and s <= 0.7 * r else "MISSED"
        print(f"{name:36s} {d:8.1f} {d90:6.0f} {s:10.1f} {f:8.1f} {r:11.1f}  {counts:>24s}  {ok}", flush=True)


if __name__ == "__main__":
    main()
