"""The book's frames (scripts/book/book_frames.py): which values are drawn, which combinations, and that a frame is
the code's.

Expected values are counted by hand from the widget ranges (not by calling the sampling code twice). The
exactness test draws frames the way the book build does (``interact`` with the frames folder set), then draws
them again from a fresh LivePlot and compares the bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from poslib.viz import interact
from poslib.viz._book_hook import book_recorder
from poslib.viz._live import LivePlot, _widen
from poslib.viz.alibi import AlibiBiasPlot, AlibiReachPlot

F = book_recorder()  # scripts/book/book_frames.py
widgets = pytest.importorskip("ipywidgets")


def _spec(widget, name="x"):
    return F.control_spec(name, widget)


def test_slider_values_are_spread_evenly_and_include_the_start():
    s = _spec(widgets.IntSlider(value=16, min=1, max=63))
    # 1 + k·15.5, halves rounded up: 1, 17, 32, 48, 63; the start 16 replaces 17
    assert F.sample_values(s, 5) == [1, 16, 32, 48, 63]
    s = _spec(widgets.IntSlider(value=3, min=1, max=63))
    # the start (3) is nearer the end 1 (distance 2) than the nearest inner value 17 (14): added, the ends stay
    assert F.sample_values(s, 5) == [1, 3, 17, 32, 48, 63]
    s = _spec(widgets.FloatSlider(value=16.0, min=1.5, max=32.0, step=0.5))
    # evenly, onto the 0.5 grid: 1.5, 9.125→9.0, 16.75→17.0, 24.375→24.5, 32.0; the start 16.0 replaces 17.0
    assert F.sample_values(s, 5) == [1.5, 9.0, 16.0, 24.5, 32.0]


def test_narrow_sliders_get_every_value_and_limits_narrow_the_range():
    s = _spec(widgets.IntSlider(value=1, min=1, max=8))
    assert F.sample_values(s, 17) == list(range(1, 9))
    assert F.sample_values(s, 5, low=1, high=3) == [1, 2, 3], "a plot's limits() narrow the range"


def test_readouts_read_as_in_the_notebook():
    """After interact's widening: a float slider of step 0.125 reads 0.125; a long slider's number box, 4096."""
    fine = widgets.FloatSlider(value=0.25, min=0.125, max=1.0, step=0.125)
    _widen(fine, widgets, 10)
    assert _spec(fine).label_of(0.125) == "0.125"
    long = widgets.IntSlider(value=12, min=0, max=4096)
    _widen(long, widgets, 10)  # more than 256 steps: the readout is hidden and a number box shows the value
    assert _spec(long).label_of(4096) == "4096"
    base = widgets.FloatSlider(value=2500, min=1820, max=3720, step=5)
    _widen(base, widgets, 10)
    assert _spec(base).label_of(2670.0) == "2670"
    assert _spec(widgets.IntSlider(value=8, min=1, max=64)).label_of(16384) == "16384"  # plain widget: "d"


def test_log_slider_values_are_even_in_the_exponent():
    s = _spec(widgets.FloatLogSlider(value=1e4, base=10, min=2, max=6))
    assert F.sample_values(s, 5) == [100.0, 1000.0, 10000.0, 100000.0, 1000000.0]
    assert F.sample_values(s, 5)[2] == 1e4  # the start exactly, not 10 ** 4.000000000001


def test_menus_and_selection_sliders():
    d = _spec(widgets.Dropdown(options=[("a", (0, 1)), ("b", (1, 0))], value=(1, 0)))
    assert (d.kind, F.sample_values(d, 5), d.label_of((1, 0))) == ("dropdown", [(0, 1), (1, 0)], "b")
    c = _spec(widgets.Checkbox(value=True))
    assert (c.kind, F.sample_values(c, 5)) == ("checkbox", [False, True])
    sel = _spec(widgets.SelectionSlider(options=list(range(10)), value=7))
    assert F.sample_values(sel, 5) == [0, 2, 5, 7, 9]  # indices 0, 2.25→2, 4.5→5, 6.75→7, 9
    off = _spec(widgets.SelectionSlider(options=list(range(10)), value=6))
    assert F.sample_values(off, 5) == [0, 2, 5, 6, 7, 9], "a start off the spread is added"
    with pytest.raises(TypeError, match="control 'x'"):
        _spec(widgets.Text(value="no"))


class _Grid(LivePlot):
    """A cheap LivePlot for the grid rules: two sliders, a menu; the second slider's range ends at the first."""

    defaults = {"a": 2, "b": 1, "m": "p"}

    def build(self):
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(2, 1.5))
        ax.set_title("grid")
        (self.line,) = ax.plot([0, 1], [0, 0])
        ax.set(xlim=(0, 1), ylim=(0, 20))
        return fig

    def redraw(self):
        self.line.set_ydata([self.params["a"], self.params["b"] + (5 if self.params["m"] == "q" else 0)])

    def limits(self):
        return {"b": (1, int(self.params["a"]))}


def _grid_controls():
    return {
        "a": widgets.IntSlider(value=2, min=1, max=9),
        "b": widgets.IntSlider(value=1, min=1, max=9),
        "m": widgets.Dropdown(options=["p", "q"], value="p"),
    }


def test_grid_is_the_product_when_it_fits_otherwise_one_slider_at_a_time():
    plot = _Grid()
    specs = [F.control_spec(n, w) for n, w in _grid_controls().items()]
    # b's range ends at a's start (2): b ∈ {1, 2}; a ∈ 1…9 has 8 steps, each more than a tenth of the range, so
    # every one of its 9 values is drawn (rule 1): the product is 2 menus × 9 × 2 = 36
    big = F.frame_grid(plot, specs, budget=36)
    assert big.product and len(big.combinations()) == 36
    # budget 20: no product fits (36); one slider at a time: 2 × (1 + 8 + 1) = 20, a still at every value
    mid = F.frame_grid(plot, specs, budget=20)
    assert not mid.product and len(mid.combinations()) == 20
    assert mid.contexts[(0,)]["a"] == list(range(1, 10)), "rule 1: a is never sampled coarser than its own steps"
    for key in mid.combinations():  # never two sliders away from their starts
        values = mid.values_at(key)
        assert (values["a"] != 2) + (values["b"] != 1) <= 1, values
    tiny = F.frame_grid(plot, specs, budget=3)
    assert len(tiny.combinations()) == 20, "over budget even at the floor: the floor wins"
    plot.close()


def test_no_long_slider_steps_more_than_a_tenth_of_its_range():
    """05's position slider (0 … 4096) had 6 values, one key press ≈ 800 tokens; now at most 409.6 (a tenth)."""
    s = _spec(widgets.IntSlider(value=12, min=0, max=4096))
    # 11 values (0, 410, 819, 1229, …) leave 819 → 1229 = 410 > 409.6; 12 values (0, 372, 745, …) are fine,
    # and the start 12, nearer the end 0 than the inner 372, is added
    values = F.sample_fine(s, 5)
    assert len(values) == 13 and values[:3] == [0, 12, 372] and values[-1] == 4096, values
    assert np.diff(values).max() <= 409.6
    assert F.largest_gap(s, values)[0] <= 0.1
    # a selection slider of four options: every option (each step is a third of the track)
    sel = _spec(widgets.SelectionSlider(options=[128, 256, 512, 1024], value=256))
    assert F.sample_fine(sel, 5) == [128, 256, 512, 1024]
    # 06's pair index (0 … 63 of a 128-dim head): a step of at most 6.3 pairs
    pair = _spec(widgets.IntSlider(value=0, min=0, max=63))
    picks = F.sample_fine(pair, 5)
    assert np.diff(picks).max() <= 6.3, picks
    # a log slider: a tenth of the exponent's range (2 … 6: at most 0.4 per step)
    log = _spec(widgets.FloatLogSlider(value=1e4, base=10, min=2, max=6, step=0.1))
    exps = np.log10(F.sample_fine(log, 5))
    assert np.diff(exps).max() <= 0.4 + 1e-9, exps
    assert F.track_positions(log, F.sample_fine(log, 5))[0] == 0.0


class _Joint(_Grid):
    """Three sliders and a menu; the caption combines a and b."""

    defaults = {"a": 2, "b": 1, "c": 1, "m": "p"}
    frame_joint = (("a", "b"),)

    def redraw(self):
        p = self.params
        self.line.set_ydata([p["a"] + p["c"], p["b"] + (5 if p["m"] == "q" else 0)])

    def limits(self):
        return {}


def test_joint_sliders_are_drawn_at_every_combination():
    """11's figure: Self-Extend stays in range only while G is large enough for L'; so every (G, L') pair."""
    plot = _Joint()
    controls = {
        "a": widgets.IntSlider(value=2, min=1, max=9),
        "b": widgets.IntSlider(value=1, min=1, max=9),
        "c": widgets.IntSlider(value=1, min=1, max=3),
        "m": widgets.Dropdown(options=["p", "q"], value="p"),
    }
    specs = [F.control_spec(n, w) for n, w in controls.items()]
    grid = F.frame_grid(plot, specs, budget=40)
    assert not grid.product and grid.joint == [("a", "b")]
    combos = [grid.values_at(k) for k in grid.combinations()]
    # per menu choice: the 9 × 9 pairs of a and b (c at its start), and c's 2 other values: 83; two choices: 166
    assert len(combos) == 166
    for m in ("p", "q"):
        pairs = {(v["a"], v["b"]) for v in combos if v["m"] == m and v["c"] == 1}
        assert pairs == {(a, b) for a in range(1, 10) for b in range(1, 10)}, m
    assert all(v["c"] == 1 or (v["a"], v["b"]) == (2, 1) for v in combos), "c still moves alone"
    plot.close()


def test_remap_plot_declares_g_and_length_jointly_and_samples_each_flip():
    """The book's frames of 11's figure hold, for every input length, the smallest G in range and the G below."""
    from poslib.viz.extend import RemapDistancePlot, remap_distances

    plot = RemapDistancePlot()
    try:
        assert ("group_size", "length") in plot.frame_joint
        flips = plot.frame_values()["group_size"]
    finally:
        plot.close()
    for length in (128, 256, 512, 1024):
        inside = [g for g in range(1, 33) if np.nanmax(remap_distances("Self-Extend", length, group_size=g)) <= 63]
        assert inside[0] in flips and inside[0] - 1 in flips, (length, inside[0], flips)


class _MenuLimits(_Grid):
    """b's range depends on the menu; a names a value where its picture changes fast."""

    defaults = {"a": 500, "b": 1, "m": "p"}

    def limits(self):
        return {"b": (1, 3 if self.params["m"] == "p" else 9)}

    def frame_values(self):
        return {"a": [123]}


def test_grid_takes_the_plots_fast_values_and_each_menu_choices_range():
    plot = _MenuLimits()
    specs = [
        F.control_spec("a", widgets.IntSlider(value=500, min=0, max=1000)),
        F.control_spec("b", widgets.IntSlider(value=1, min=1, max=9)),
        F.control_spec("m", widgets.Dropdown(options=["p", "q"], value="p")),
    ]
    grid = F.frame_grid(plot, specs, budget=1000)
    for context in [(0,), (1,)]:
        assert 123 in grid.contexts[context]["a"], "the plot's frame_values are drawn"
    assert max(grid.contexts[(0,)]["b"]) == 3 and max(grid.contexts[(1,)]["b"]) == 9, grid.contexts
    plot.close()


def test_recorded_labels_are_the_clipped_values(tmp_path):
    """A requested value the plot's limits() clip is stored, and labelled, as the value the frame was drawn at."""
    controls = {
        "a": widgets.IntSlider(value=2, min=1, max=9, description="a"),
        "b": widgets.IntSlider(value=1, min=1, max=9, description="b"),
        "m": widgets.Dropdown(options=["p", "q"], value="p", description="m"),
    }
    controls["b"].max = 9  # the product below asks for b up to a's start value only; widen it to ask for more
    plot = _Grid()
    folder = F.record_frames(plot, controls, "", tmp_path, budget=36)
    manifest = json.loads((folder / "manifest.json").read_text())
    clipped = 0
    for key, (_, labels, values) in manifest["frames"].items():
        a, b, _m = values
        assert b <= a, f"frame {key} stored b = {b} above a = {a}"
        assert labels[:2] == [f"{a:,}", f"{b:,}"], (key, labels, values)
        clipped += key.split(",")[1] != "0" and b == 1
    assert manifest["redrawn"] == 3
    plot.close()


def test_render_frame_clips_like_the_widget():
    plot = AlibiBiasPlot()
    try:
        _, shown = F.render_frame(plot, {"n_heads": 2, "head": 8, "causal": True})
        assert shown == {"n_heads": 2, "head": 2, "causal": True}, "the head slider ends at the number of heads"
    finally:
        plot.close()


def test_encoded_frame_is_deterministic_and_smaller():
    """Encoding twice gives the same bytes (the exactness tests compare bytes). The palette's error is measured on
    every figure in tests/test_figures.py (bound: 3 levels of 255 on average)."""
    plot = AlibiReachPlot()
    try:
        png = plot.png()
        a, b = F.encode_frame(png), F.encode_frame(png)
        assert a == b and len(a) < len(png)
    finally:
        plot.close()


def test_value_encoding_round_trips():
    for value in [(0, 1, 2), [1, (2, 3)], 1.5, True, "Self-Extend", None]:
        assert F.decode_value(json.loads(json.dumps(F.encode_value(value)))) == value
    assert F.encode_value(np.int64(3)) == 3
    with pytest.raises(TypeError, match="ndarray"):
        F.encode_value(np.zeros(2))


def test_interact_records_frames_that_a_fresh_plot_draws_again(tmp_path, monkeypatch):
    """The exactness the book relies on, on one figure: every recorded frame is what a fresh LivePlot draws."""
    from poslib.viz.relative import DebertaPlot

    monkeypatch.setenv(F.FRAMES_ENV, str(tmp_path))
    monkeypatch.setenv("POSLIB_BOOK_BUDGET", "5")
    span = widgets.IntSlider(value=8, min=1, max=32, description="clipping distance κ (att_span, tokens)")
    box = interact(DebertaPlot(), caption="look", att_span=span)
    box.plot.close()
    (folder,) = sorted(tmp_path.glob("figure-*"))
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["plot"] == "poslib.viz.relative.DebertaPlot" and manifest["rebuildable"]
    assert manifest["redrawn"] == 3
    # budget 5, one slider 1 … 32 (a tenth: 3.1). n = 12: 1 + k·31/11 = 1, 4, 7, 9, …; the start 8 replaces 7
    # (the first of the two nearest), leaving 4 → 8, a gap of 4. n = 13: 1 + k·31/12 with halves up = 1, 4, 6, 9,
    # 11, 14, 17, 19, 22, 24, 27, 29, 32; the start 8 replaces 9: no gap over 3
    drawn = [v[2][0] for v in manifest["frames"].values()]
    assert drawn == [1, 4, 6, 8, 11, 14, 17, 19, 22, 24, 27, 29, 32], drawn
    (slider,) = manifest["contexts"][""].values()
    assert slider["positions"][0] == 0.0 and slider["positions"][-1] == 1.0 and len(slider["positions"]) == 13
    fresh = DebertaPlot(**{k: F.decode_value(v) for k, v in manifest["params"].items()})
    try:
        for key, (file_index, labels, values) in list(manifest["frames"].items())[::3]:
            png, shown = F.render_frame(fresh, {"att_span": values[0]})
            assert shown == {"att_span": values[0]}, key
            assert png == (folder / manifest["files"][file_index]).read_bytes(), f"frame {key} is not the code's"
            assert labels == [f"{values[0]:,}"]
    finally:
        fresh.close()
    assert manifest["frames"][manifest["start"]][1] == ["8"], "the page opens at the notebook's starting value"


def test_base_bound_frames_straddle_every_flip_between_passing_and_failing():
    """09's base slider: frames on both sides of each narrow failing band, checked by a sum written out here."""
    from poslib.viz.production import BaseBoundPlot

    plot = BaseBoundPlot()
    try:
        bases = plot.frame_values()["base"]
    finally:
        plot.close()
    delta = np.arange(BaseBoundPlot.context_len, dtype=np.float64)

    def passes(b: float) -> bool:  # min over Δ of Σ_i cos(Δ · b^(−2i/d)) ≥ 0
        theta = b ** (-np.arange(0, BaseBoundPlot.head_dim, 2) / BaseBoundPlot.head_dim)
        return bool(np.cos(np.outer(delta, theta)).sum(axis=1).min() >= 0)

    assert len(bases) >= 6 and len(bases) % 2 == 0, bases
    pairs = list(zip(bases[::2], bases[1::2], strict=True))
    for lo, hi in pairs:
        assert hi - lo == 5.0, (lo, hi)
        assert passes(lo) != passes(hi), f"no flip between {lo} and {hi}"
    print(f"{len(pairs)} flips between passing and failing bases, at {[p[0] for p in pairs]}")


def test_the_book_machinery_is_beside_the_book_and_a_kernel_loads_it_only_for_the_book():
    """scripts/book/book_frames.py holds the book's frame machinery; poslib keeps only the hook (poslib.viz._book_hook),
    and a kernel without the book's environment variable never imports the recorder."""
    root = Path(__file__).resolve().parent.parent
    assert Path(F.__file__).resolve() == root / "scripts" / "book" / "book_frames.py"
    assert not (root / "poslib" / "viz" / "frames.py").exists()
    code = (
        "import os, sys; os.environ.pop('POSLIB_BOOK_FRAMES', None); import ipywidgets as w; from poslib.viz import "
        "interact; from poslib.viz.relative import DebertaPlot; box = interact(DebertaPlot(), caption='look', "
        "att_span=w.IntSlider(value=8, min=1, max=32)); box.plot.close(); print('book_frames' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120)
    assert out.stdout.strip().splitlines()[-1:] == ["False"], out.stdout + out.stderr
