"""Frames for the book: every interactive figure drawn at a grid of its controls' values, for pages without a kernel.

The book's machinery, beside the book's script (scripts/build_book.py), not in poslib: when the environment
variable :data:`~poslib.viz._book_hook.FRAMES_ENV` names a folder, :func:`~poslib.viz.interact` hands its figure
to :func:`record_frames` here (through poslib.viz._book_hook, the only part of it a kernel imports, and only
then), which draws the notebook's own :class:`~poslib.viz.LivePlot` at a grid of control values and writes the
frames and a manifest into a new subfolder. ``python scripts/build_book.py --frames`` runs the notebooks that way
(with scripts/book/ on the kernel's PYTHONPATH) and turns each manifest into plain HTML controls that swap frames
(``scripts/book/frames.js``).

The grid, one rule for every figure:

1. **Values per control.** A dropdown or checkbox: every option. A selection slider: every option, or
   ``n`` of them evenly spread when it has more. A numeric slider: ``n`` values evenly spread over its range
   (over the exponent for a log slider), snapped to its step; where the range is narrower, every value.
   The notebook's starting value is always one of them, and a plot may add values where its picture changes
   fast (:meth:`~poslib.viz.LivePlot.frame_values`). A slider's range is the widget's, replaced by the plot's
   ``limits()`` as ``interact`` replaces it, for each choice of the menus (dropdowns and checkboxes).
   **Fine enough:** ``n`` grows, slider by slider, until no two neighbouring values lie more than a tenth of the
   range apart (:data:`MAX_GAP`; on the track, so over the exponent of a log slider and the option index of a
   selection slider), or one step of the widget where its own steps are coarser: one key press in the book
   never jumps further than that (a 0 … 4096 slider: at most 410 tokens).
2. **Which combinations.** The full product of the values when it has at most ``budget`` frames (the largest
   ``n`` from :data:`MIN_VALUES` to :data:`MAX_VALUES` that fits). Otherwise every choice of the menus times
   *one slider at a time* (each slider through its values, the other sliders at their starting values), again
   with the largest ``n`` that fits, and never fewer than rule 1 allows. On such a page, moving a slider
   returns the other sliders to their starting values, and the page says so. **Joint sliders:** a plot whose
   caption combines two controls ("in range only while G is large enough for L′") names them in
   :attr:`~poslib.viz.LivePlot.frame_joint`; their values are then drawn as a product (every pair, the other
   sliders at their starts), and moving one keeps the other where it is.
3. **Pixels.** A frame is :meth:`LivePlot.png` (what a slider move shows in JupyterLab, at twice the display
   resolution), reduced to a 256-colour palette (fast octree, no dithering) and stored as PNG: about a third
   of the bytes, a mean error of 1 to 3 levels in 255 (at most 3, measured on every figure in
   ``tests/test_figures.py``).
   :func:`encode_frame` is deterministic, so a test can draw a frame again and compare it byte for byte.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from poslib.viz._book_hook import FRAMES_ENV

__all__ = [
    "DEFAULT_BUDGET",
    "FRAMES_ENV",
    "ControlSpec",
    "FrameGrid",
    "control_spec",
    "decode_value",
    "encode_frame",
    "encode_value",
    "frame_grid",
    "largest_gap",
    "record_frames",
    "render_frame",
    "sample_fine",
    "sample_values",
    "track_positions",
    "track_steps",
]

DEFAULT_BUDGET = 40  # frames per figure (before deduplication)
MIN_VALUES, MAX_VALUES = 5, 17  # values per slider: the floor, and a ceiling that keeps the book small
MENU_KINDS = ("dropdown", "checkbox")
MAX_GAP = 0.1  # largest distance between neighbouring sampled values, as a fraction of the slider's track


@dataclass
class ControlSpec:
    """One control as the book shows it: its parameter, kind, label, options and range, and starting value."""

    name: str
    kind: str  # "slider", "log_slider", "selection", "dropdown" or "checkbox"
    label: str
    start: Any
    values: list[Any] = field(default_factory=list)  # the options (menus and selection sliders)
    labels: list[str] = field(default_factory=list)  # how each option reads
    low: float = 0.0  # numeric sliders: range and step (a log slider: of the exponent)
    high: float = 0.0
    step: float = 1.0
    base: float = 10.0
    integer: bool = False
    readout: str = ""  # Python format spec of the widget's readout; "" when a number box shows the value instead

    @property
    def is_menu(self) -> bool:
        return self.kind in MENU_KINDS

    def label_of(self, value: Any) -> str:
        """The value as the widget's readout shows it."""
        if self.kind in ("dropdown", "selection"):
            return self.labels[self.values.index(value)]
        if self.kind == "checkbox":
            return "on" if value else "off"
        if not self.readout:  # interact's number box beside a long slider: the bare value (4096, 2670, 0.125)
            return str(int(value)) if self.integer else f"{float(value):g}"
        return format(int(value) if self.integer else float(value), self.readout)


def _readout(widget: Any) -> str:
    """The widget's readout format, or "" when its readout is hidden (``interact`` shows a number box then)."""
    return str(widget.readout_format) if getattr(widget, "readout", True) else ""


def control_spec(name: str, widget: Any) -> ControlSpec:
    """The :class:`ControlSpec` of an ipywidgets control (after ``interact`` has set its labels and formats)."""
    kind = type(widget).__name__
    label = str(getattr(widget, "description", "") or name)
    if kind == "Checkbox":
        return ControlSpec(name, "checkbox", label, bool(widget.value), [False, True], ["off", "on"])
    if kind in ("Dropdown", "SelectionSlider", "RadioButtons", "ToggleButtons"):
        values, labels = list(widget._options_values), [str(s) for s in widget._options_labels]
        return ControlSpec(
            name, "selection" if kind == "SelectionSlider" else "dropdown", label, widget.value, values, labels
        )
    if kind == "FloatLogSlider":
        return ControlSpec(
            name, "log_slider", label, float(widget.value), low=float(widget.min), high=float(widget.max),
            step=float(widget.step), base=float(widget.base), readout=_readout(widget),
        )  # fmt: skip
    if kind in ("IntSlider", "FloatSlider"):
        integer = kind == "IntSlider"
        return ControlSpec(
            name, "slider", label, widget.value, low=float(widget.min), high=float(widget.max), step=float(widget.step),
            integer=integer, readout=_readout(widget),
        )  # fmt: skip
    raise TypeError(f"control {name!r}: the book cannot draw frames for a {kind} (sliders, dropdowns, checkboxes)")


def _round_half_up(x: float) -> int:
    """2.5 → 3, as a reader rounds (Python's round() gives 2)."""
    return math.floor(x + 0.5 + 1e-9)


def _snap(spec: ControlSpec, x: float, low: float, high: float) -> float:
    """``x`` moved onto the slider's step grid (counted from its widget minimum) and into [low, high]."""
    k = _round_half_up((x - spec.low) / spec.step)
    v = spec.low + k * spec.step
    v = min(max(v, low), high)
    return float(round(v, 12))


def _spread(spec: ControlSpec, lo: float, hi: float, n: int, start: float) -> set[float]:
    """``n`` values evenly over [lo, hi] on the step grid (every step when there are fewer), the start among them.

    The start replaces the nearest inner value, so the values stay evenly spread; when an end is nearer, it is
    added instead (the ends are always kept).
    """
    count = round((hi - lo) / spec.step) + 1
    if count <= n:
        return {_snap(spec, lo + i * spec.step, lo, hi) for i in range(count)}
    grid = [_snap(spec, lo + i * (hi - lo) / (n - 1), lo, hi) for i in range(n)]
    first = _snap(spec, start, lo, hi)
    if first not in grid:
        inner = min(range(1, n - 1), key=lambda i: abs(grid[i] - first))
        if abs(grid[inner] - first) <= min(abs(grid[0] - first), abs(grid[-1] - first)):
            grid[inner] = first
        else:
            grid.append(first)
    return set(grid)


def sample_values(spec: ControlSpec, n: int, *, low: float | None = None, high: float | None = None,
                  extra: tuple[Any, ...] = ()) -> list[Any]:  # fmt: skip
    """The values the book draws for one control (rule 1 of the module docstring), in slider order.

    ``low``/``high`` narrow a numeric slider's range (the plot's ``limits()``); the start value, clipped into
    the range, is always included, and so is every value of ``extra`` that lies in the range.
    """
    if n < 3:
        raise ValueError(f"n must be at least 3, got {n}")
    if spec.is_menu:
        return list(spec.values)
    if spec.kind == "selection":
        if len(spec.values) <= n:
            return list(spec.values)
        picks = {_round_half_up(i * (len(spec.values) - 1) / (n - 1)) for i in range(n)} | {
            spec.values.index(spec.start)
        }
        return [spec.values[i] for i in sorted(picks)]
    if spec.kind == "log_slider":
        exps = _spread(spec, spec.low, spec.high, n, math.log(float(spec.start), spec.base))
        # the start value itself (1e4, not 10 ** 4.000000000001); extras as given
        start_exp = _snap(spec, math.log(float(spec.start), spec.base), spec.low, spec.high)
        values = {float(spec.start) if e == start_exp else round(spec.base**e, 9) for e in exps}
        values |= {float(x) for x in extra if spec.base**spec.low <= x <= spec.base**spec.high}
        return sorted(values)
    lo = spec.low if low is None else float(low)
    hi = max(spec.high if high is None else float(high), lo)
    grid = _spread(spec, lo, hi, n, float(spec.start))
    grid |= {float(x) for x in extra if lo <= x <= hi}
    cast = int if spec.integer else float
    return [cast(v) for v in sorted(grid)]


def track_positions(spec: ControlSpec, values: list[Any]) -> list[float]:
    """Where each sampled value lies on the slider's track, 0 (first value) … 1 (last): over the exponent of a log
    slider and the option index of a selection slider. The first and last sampled values are the track's ends."""
    if spec.kind == "selection":
        x = [float(spec.values.index(v)) for v in values]
    elif spec.kind == "log_slider":
        x = [math.log(float(v), spec.base) for v in values]
    else:
        x = [float(v) for v in values]
    span = x[-1] - x[0] if len(x) > 1 else 0.0
    return [round((v - x[0]) / span, 6) if span > 0 else 0.0 for v in x]


def largest_gap(spec: ControlSpec, values: list[Any]) -> tuple[float, float]:
    """The largest distance between neighbouring sampled values and the most rule 1 allows, as track fractions.

    The allowance is :data:`MAX_GAP`, or one step of the widget (one option of a selection slider) where that is
    more: a slider of eight steps moves by an eighth, every value drawn.
    """
    positions = track_positions(spec, values)
    gap = max((b - a for a, b in itertools.pairwise(positions)), default=0.0)
    steps = track_steps(spec, values)
    allowed = max(MAX_GAP, 1.0 / steps) if steps >= 1 else 1.0
    return gap, allowed


def track_steps(spec: ControlSpec, values: list[Any]) -> int:
    """How many steps of the widget (options of a selection slider) lie between the first and last sampled value."""
    if spec.kind == "selection":
        return spec.values.index(values[-1]) - spec.values.index(values[0])
    if spec.kind == "log_slider":
        span = math.log(float(values[-1]), spec.base) - math.log(float(values[0]), spec.base)
    else:
        span = float(values[-1]) - float(values[0])
    return round(span / spec.step)


def sample_fine(spec: ControlSpec, n: int, *, low: float | None = None, high: float | None = None,
                extra: tuple[Any, ...] = ()) -> list[Any]:  # fmt: skip
    """:func:`sample_values` with ``n`` raised until no neighbouring values lie further apart than rule 1 allows."""
    while True:
        values = sample_values(spec, n, low=low, high=high, extra=extra)
        gap, allowed = largest_gap(spec, values)
        if spec.is_menu or gap <= allowed + 1e-9 or n > 4096:
            return values
        n += 1


@dataclass
class FrameGrid:
    """The combinations to draw: for each menu choice, each slider's values; ``product`` or one slider at a time."""

    specs: list[ControlSpec]
    contexts: dict[tuple[int, ...], dict[str, list[Any]]]  # menu indices → slider name → values
    product: bool
    n: int
    joint: list[tuple[str, ...]] = field(default_factory=list)  # sliders drawn as a product when one at a time

    def group_of(self, name: str) -> tuple[str, ...]:
        """The sliders that move with ``name`` (its joint group, or itself alone)."""
        return next((g for g in self.joint if name in g), (name,))

    def menus(self) -> list[ControlSpec]:
        return [s for s in self.specs if s.is_menu]

    def sliders(self) -> list[ControlSpec]:
        return [s for s in self.specs if not s.is_menu]

    def start_index(self, context: tuple[int, ...], spec: ControlSpec) -> int:
        """Index of the starting value in a slider's list for a menu choice (the nearest one when clipped)."""
        values = self.contexts[context][spec.name]
        if spec.start in values:
            return values.index(spec.start)
        if spec.kind == "selection":
            return 0
        return int(np.argmin([abs(float(v) - float(spec.start)) for v in values]))

    def combinations(self) -> list[tuple[int, ...]]:
        """Index tuples (one per control, in ``specs`` order) of every frame to draw."""
        menus, sliders = self.menus(), self.sliders()
        out: list[tuple[int, ...]] = []
        for context, lists in self.contexts.items():
            starts = [self.start_index(context, s) for s in sliders]
            if self.product:
                slider_picks = list(itertools.product(*[range(len(lists[s.name])) for s in sliders]))
            else:
                picks = {tuple(starts)}
                names = [s.name for s in sliders]
                for group in dict.fromkeys(self.group_of(s.name) for s in sliders):
                    where = [names.index(g) for g in group]
                    for ks in itertools.product(*[range(len(lists[g])) for g in group]):
                        moved = list(starts)
                        for j, k in zip(where, ks, strict=True):
                            moved[j] = k
                        picks.add(tuple(moved))
                slider_picks = sorted(picks)
            for pick in slider_picks:
                by_name = dict(zip([m.name for m in menus], context, strict=True))
                by_name |= dict(zip([s.name for s in sliders], pick, strict=True))
                out.append(tuple(by_name[s.name] for s in self.specs))
        return out

    def values_at(self, key: tuple[int, ...]) -> dict[str, Any]:
        """Parameter values of one index tuple."""
        context = tuple(i for i, s in zip(key, self.specs, strict=True) if s.is_menu)
        lists = self.contexts[context]
        return {s.name: (s.values[i] if s.is_menu else lists[s.name][i]) for i, s in zip(key, self.specs, strict=True)}


def frame_grid(plot: Any, specs: list[ControlSpec], budget: int = DEFAULT_BUDGET) -> FrameGrid:
    """The grid of rule 2 for ``plot`` and its controls; ``plot`` is left at the controls' starting values."""
    if budget < 1:
        raise ValueError(f"budget must be at least 1 frame, got {budget}")
    start = {s.name: s.start for s in specs}
    menus = [s for s in specs if s.is_menu]
    slider_names = [s.name for s in specs if not s.is_menu]
    joint = [
        tuple(n for n in group if n in slider_names)
        for group in getattr(plot, "frame_joint", ())
        if sum(n in slider_names for n in group) >= 2
    ]
    extra: dict[str, tuple[Any, ...]] = {k: tuple(v) for k, v in plot.frame_values().items()}
    ranges: dict[tuple[int, ...], dict[str, tuple[float, float] | None]] = {}
    for context in itertools.product(*[range(len(m.values)) for m in menus]):
        plot.params.update(start | {m.name: m.values[i] for m, i in zip(menus, context, strict=True)})
        limits = plot.limits()
        ranges[context] = {s.name: limits.get(s.name) for s in specs if not s.is_menu}
    plot.params.update(start)

    def contexts(n: int) -> dict[tuple[int, ...], dict[str, list[Any]]]:
        out: dict[tuple[int, ...], dict[str, list[Any]]] = {}
        for context, lims in ranges.items():
            out[context] = {}
            for s in specs:
                if s.is_menu:
                    continue
                lo_hi = lims[s.name]
                lo, hi = (None, None) if lo_hi is None else (lo_hi[0], lo_hi[1])
                out[context][s.name] = sample_fine(s, n, low=lo, high=hi, extra=extra.get(s.name, ()))
        return out

    def size(grid: FrameGrid) -> int:
        return len(grid.combinations())

    best: FrameGrid | None = None
    for product in (True, False):
        for n in range(MAX_VALUES, MIN_VALUES - 1, -1):
            grid = FrameGrid(specs, contexts(n), product, n, joint)
            if size(grid) <= budget:
                best = grid
                break
        if best is not None:
            break
    if best is None:  # over budget even one slider at a time with the fewest values: the floor wins
        best = FrameGrid(specs, contexts(MIN_VALUES), False, MIN_VALUES, joint)
    return best


def encode_frame(png: bytes) -> bytes:
    """A frame as the book stores it: 256-colour palette (fast octree, no dithering), PNG at the highest compression."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    palette = image.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    buf = io.BytesIO()
    palette.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def render_frame(plot: Any, values: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """Draw ``plot`` at ``values`` as the notebook would; returns the encoded frame and the values it was drawn at.

    As in ``interact``, a value outside the range the plot's ``limits()`` gives for the others is clipped into it
    (the widget clips it and draws again), so the returned values may differ from the requested ones.
    """
    shown = dict(values)
    plot.update(**shown)
    for _ in range(4):
        clipped = {
            name: type(shown[name])(min(max(shown[name], lo), hi))
            for name, (lo, hi) in plot.limits().items()
            if name in shown and not lo <= shown[name] <= hi
        }
        if not clipped:
            break
        shown |= clipped
        plot.update(**shown)
    return encode_frame(plot.png()), shown


def encode_value(value: Any) -> Any:
    """A parameter value as JSON: tuples tagged so :func:`decode_value` gives them back, NumPy scalars as numbers."""
    if isinstance(value, tuple):
        return {"tuple": [encode_value(v) for v in value]}
    if isinstance(value, list):
        return [encode_value(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"cannot store a parameter value of type {type(value).__name__} in a frame manifest")


def decode_value(value: Any) -> Any:
    """The inverse of :func:`encode_value`."""
    if isinstance(value, dict) and set(value) == {"tuple"}:
        return tuple(decode_value(v) for v in value["tuple"])
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    return value


def _rebuildable(plot: Any, start_frame: bytes) -> bool:
    """Whether ``type(plot)(**plot.params)`` draws the same start frame (not when the plot holds notebook data)."""
    try:
        fresh = type(plot)(**plot.params)
    except Exception:  # a plot that needs data the notebook made (a trained table) cannot be rebuilt from its params
        return False
    try:
        return render_frame(fresh, dict(plot.params))[0] == start_frame
    finally:
        fresh.close()


def record_frames(plot: Any, controls: dict[str, Any], caption: str, folder: Path,
                  budget: int | None = None) -> Path:  # fmt: skip
    """Draw ``plot`` at the grid of its ``controls`` and write the frames and ``manifest.json`` into a new subfolder.

    Subfolders are numbered in call order (``figure-000``, ``figure-001``, …): the k-th ``interact`` a notebook
    runs is its k-th interactive output. ``plot`` is left at the controls' starting values. ``budget`` defaults
    to the environment's ``POSLIB_BOOK_BUDGET`` or :data:`DEFAULT_BUDGET`.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"figure-{len(list(folder.glob('figure-*'))):03d}"
    out.mkdir()
    budget = int(os.environ.get("POSLIB_BOOK_BUDGET", DEFAULT_BUDGET)) if budget is None else budget
    specs = [control_spec(name, w) for name, w in controls.items()]
    start = {s.name: s.start for s in specs}
    grid = frame_grid(plot, specs, budget)
    files: dict[str, int] = {}
    frames: dict[str, list[Any]] = {}
    for key in grid.combinations():
        png, shown = render_frame(plot, grid.values_at(key))
        digest = hashlib.sha256(png).hexdigest()[:16]
        if digest not in files:
            files[digest] = len(files)
            (out / f"{digest}.png").write_bytes(png)
        labels = [s.label_of(shown[s.name]) if s.name in shown else "" for s in specs]
        frames[",".join(map(str, key))] = [files[digest], labels, [encode_value(shown[s.name]) for s in specs]]
    start_png, _ = render_frame(plot, start)
    redrawn = _redraw_check(plot, grid, frames, files, out)
    manifest = {
        "plot": f"{type(plot).__module__}.{type(plot).__qualname__}",
        "params": {k: encode_value(v) for k, v in plot.params.items()},
        "rebuildable": _rebuildable(plot, start_png),
        "redrawn": redrawn,
        "caption": caption,
        "budget": budget,
        "grid": "product" if grid.product else "one slider at a time",
        "values_per_slider": grid.n,
        "joint": [list(g) for g in grid.joint] if not grid.product else [],
        "controls": [
            {"name": s.name, "kind": s.kind, "label": s.label, "labels": s.labels if s.is_menu else []}
            | ({"start": s.values.index(s.start)} if s.is_menu else {})
            for s in specs
        ],
        "contexts": {
            ",".join(map(str, context)): {
                s.name: {
                    "labels": [s.label_of(v) for v in lists[s.name]],
                    "numbers": [float(v) if s.kind != "selection" else i for i, v in enumerate(lists[s.name])],
                    "start": grid.start_index(context, s),
                    "positions": track_positions(s, lists[s.name]),
                    "steps": track_steps(s, lists[s.name]),
                }
                for s in grid.sliders()
            }
            for context, lists in grid.contexts.items()
        },
        "files": [f"{d}.png" for d in files],
        "frames": frames,
        "start": ",".join(map(str, _start_key(grid))),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=0), encoding="utf-8")
    return out


def _redraw_check(
    plot: Any, grid: FrameGrid, frames: dict[str, list[Any]], files: dict[str, int], out: Path, count: int = 3
) -> int:
    """Draw ``count`` frames again, each after a different one, with the notebook's own plot; they must be the
    files already written (a picture that depends on what was drawn before would differ). Returns ``count``.

    This is the one exactness check a plot holding the notebook's data (02's trained table) gets: it cannot be
    rebuilt from its parameters outside the kernel.
    """
    keys = list(frames)
    picks = [keys[len(keys) * k // count] for k in range(count)] if keys else []
    names = [f"{d}.png" for d in files]
    for before, key in zip(reversed(picks), picks, strict=True):
        render_frame(plot, grid.values_at(tuple(int(i) for i in before.split(","))))
        png, _ = render_frame(plot, grid.values_at(tuple(int(i) for i in key.split(","))))
        if png != (out / names[frames[key][0]]).read_bytes():
            raise RuntimeError(f"{type(plot).__name__}: frame {key} drawn again after {before} differs from the first")
    start = {s.name: s.start for s in grid.specs}
    render_frame(plot, start)
    return len(picks)


def _start_key(grid: FrameGrid) -> tuple[int, ...]:
    context = tuple(m.values.index(m.start) for m in grid.menus())
    return tuple(s.values.index(s.start) if s.is_menu else grid.start_index(context, s) for s in grid.specs)
