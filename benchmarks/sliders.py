"""Slider responsiveness: in-place update + redraw against rebuilding the figure, for every LivePlot.

Run: python benchmarks/sliders.py [--repeats N] [--only NAME]

For each LivePlot subclass in poslib.viz, over its ``bench_values``:
  update  = plot.update(**values) + render_png(plot.fig)   (what a slider move costs)
  rebuild = Cls(**values) + render_png(fig)                (what a naive callback costs)
Prints the median of each and their ratio. Goals: update ≤ 150 ms and ≤ 0.7 × rebuild.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from poslib.viz import all_live_plots, render_png


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="passes over each plot's bench_values")
    parser.add_argument("--only", default="", help="substring of the class names to run")
    args = parser.parse_args()
    print(f"{'LivePlot':44s} {'update ms':>10s} {'rebuild ms':>11s} {'ratio':>6s}  goal")
    for cls in all_live_plots():
        name = f"{cls.__module__.split('.')[-1]}.{cls.__name__}"
        if args.only not in name or not cls.bench_values:
            continue
        plot = cls()
        render_png(plot.fig)
        updates, rebuilds = [], []
        for values in itertools.islice(itertools.cycle(cls.bench_values), args.repeats * len(cls.bench_values)):
            t0 = time.perf_counter()
            plot.update(**values)
            render_png(plot.fig)
            updates.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            fresh = cls(**{**plot.params, **values})
            render_png(fresh.fig)
            rebuilds.append(time.perf_counter() - t0)
            fresh.close()
        plot.close()
        plt.close("all")
        u, r = 1000 * statistics.median(updates), 1000 * statistics.median(rebuilds)
        ok = "ok" if u <= 150 and u <= 0.7 * r else "MISSED"
        print(f"{name:44s} {u:10.1f} {r:11.1f} {u / r:6.2f}  {ok}")


if __name__ == "__main__":
    main()
