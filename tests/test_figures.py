"""Every figure of the course is sharp at the size shown, readable, and keeps its legends and notes off the data.

Checked for every LivePlot (at its first picture and at each of its benchmark
settings, since a slider can move a curve under a legend) and every static
figure function of poslib.viz:

* width ≤ style.MAX_WIDTH inches, so the notebook never shrinks it, and PNGs drawn
  at style.RENDER_DPI = 2 × style.DISPLAY_DPI (one matplotlib point = one CSS point);
* every visible Text artist ≥ style.MIN_FONT_PT points at that displayed size;
* no CJK character in any Text artist (a machine without a CJK font draws boxes);
* no legend box covers a plotted point (line vertices and the segments between
  them, images, bars) in any axes, and no note placed in the axes (``ax.text``)
  sits on a line.

The planted-defect tests at the end show each check failing on a figure built to break it.
"""

from __future__ import annotations

import base64
import io
import json
import pathlib
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from poslib.viz import all_live_plots, interact, render_png, style
from poslib.viz._blit import FrameCache, png_bytes
from poslib.viz.contextual import fire_function_figure
from poslib.viz.lab import attention_profile_figure, passkey_map_figure, perplexity_figure, ppl_and_passkey_figure
from poslib.viz.late2026 import (
    generator_drift_figure,
    partial_rotary_figure,
    path_deltanet_figure,
    vo_rope_shift_figure,
)
from poslib.viz.learned import offset_profiles_figure, table_heatmaps
from poslib.viz.production import longrope_divisors_figure, sink_mass_figure
from poslib.viz.relative import heatmap_row
from poslib.viz.sinusoidal import cross_terms_figure

PLOTS = all_live_plots()
CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$")
SNAKE = re.compile(r"[a-z]{2,}(?:_[a-z]{2,})+")  # a code name (max_distance, att_span) may keep its underscores


def _notation_problem(text: str) -> str | None:
    """A literal subscript (θ_i, L_train) or a visible backslash outside $…$ mathtext, if any."""
    plain = SNAKE.sub("", MATH.sub("", text))
    if "_" in plain:
        return "a literal underscore outside mathtext"
    if "\\" in plain:
        return "a visible backslash outside mathtext"
    return None


def _line_pixels(line: Line2D, clip: Bbox) -> np.ndarray:
    """Display coordinates of a line's vertices and of points every ~2 px along its segments, inside ``clip``."""
    xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
    if not len(xy):
        return np.zeros((0, 2))
    px = line.get_transform().transform(xy)
    if line.get_linestyle() not in ("None", "none", "", " ") and len(px) > 1:
        a, b = px[:-1], px[1:]
        ok = np.isfinite(a).all(1) & np.isfinite(b).all(1)
        a, b = a[ok], b[ok]
        n = np.clip(np.ceil(np.hypot(*(b - a).T) / 2).astype(int), 1, 400)
        t = np.concatenate([np.arange(k) / k for k in n])
        start = np.repeat(a, n, axis=0)
        px = np.concatenate([px, start + t[:, None] * (np.repeat(b, n, axis=0) - start)])
    px = px[np.isfinite(px).all(1)]
    inside = (px[:, 0] >= clip.x0) & (px[:, 0] <= clip.x1) & (px[:, 1] >= clip.y0) & (px[:, 1] <= clip.y1)
    return px[inside]


def _hits(box: Bbox, px: np.ndarray, margin: float = 1.0) -> int:
    b = box.shrunk_to_aspect(1.0) if False else box
    return int(
        (
            (px[:, 0] > b.x0 + margin)
            & (px[:, 0] < b.x1 - margin)
            & (px[:, 1] > b.y0 + margin)
            & (px[:, 1] < b.y1 - margin)
        ).sum()
    )


def figure_problems(fig: Figure) -> list[str]:
    """Everything wrong with ``fig`` by the rules in the module docstring; empty when it is fine."""
    problems = []
    if fig.get_figwidth() > style.MAX_WIDTH + 1e-9:
        problems.append(f"{fig.get_figwidth():.2f} in wide (> {style.MAX_WIDTH}): shrunk on screen")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for t in fig.findobj(Text):
        text = t.get_text()
        if not (t.get_visible() and text.strip()):
            continue
        if t.get_fontsize() < style.MIN_FONT_PT - 1e-9:
            problems.append(f"text {text[:40]!r} is {t.get_fontsize():.1f} pt (< {style.MIN_FONT_PT})")
        if CJK.search(text):
            problems.append(f"text {text[:40]!r} has CJK characters")
        if t.get_usetex() is False and (why := _notation_problem(text)):
            problems.append(f"text {text[:40]!r} has {why}")
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>" and ax.axison]
    legends = [ax.get_legend() for ax in axes if ax.get_legend() is not None] + list(fig.legends)
    for ax in axes:
        clip = ax.get_window_extent(renderer)
        lines = {id(ln): _line_pixels(ln, clip) for ln in ax.get_lines() if ln.get_visible()}
        data = np.concatenate([*lines.values(), np.zeros((0, 2))])
        for legend in legends:
            box = legend.get_window_extent(renderer)
            if n := _hits(box, data):
                problems.append(f"a legend covers {n} plotted points of axes {ax.get_title()[:40]!r}")
            for artist in [*ax.images, *(p for p in ax.patches if isinstance(p, Rectangle))]:
                if not artist.get_visible():
                    continue
                if isinstance(artist, Rectangle) and not artist.get_fill():
                    continue
                overlap = Bbox.intersection(box, artist.get_window_extent(renderer))
                if overlap is not None and overlap.width > 2 and overlap.height > 2:
                    kind = "an image" if isinstance(artist, AxesImage) else "a bar"
                    problems.append(f"a legend covers {kind} in axes {ax.get_title()[:40]!r}")
        for note in ax.texts:
            if note.get_visible() and note.get_text().strip() and (n := _hits(note.get_window_extent(renderer), data)):
                problems.append(f"note {note.get_text()[:30]!r} sits on {n} plotted points")
    return problems


# ---------------------------------------------------------------- every LivePlot


@pytest.mark.parametrize("cls", PLOTS, ids=[c.__name__ for c in PLOTS])
def test_live_plot_updates_in_place_and_is_readable_at_every_setting(cls):
    """One pass over the slider benchmark's settings: each draw serves both the update and the readability checks."""
    assert cls.bench_values, f"{cls.__name__} needs bench_values for the slider benchmark"
    plot = cls()
    fig, axes = plot.fig, list(plot.fig.axes)
    assert not (found := figure_problems(fig)), f"{cls.__name__} at its defaults: {found}"
    before, changed = _pixels(fig), False  # figure_problems has just drawn it
    first = before.copy()
    frames = FrameCache(fig, fig.dpi)  # a slider's fast frames, here at the figure's own dpi
    frames.frame()
    for values in cls.bench_values:
        at_defaults = {**plot.params, **values} == cls.defaults  # already checked for readability
        assert plot.update(**values) is fig
        assert list(fig.axes) == axes, "update must reuse the axes, not add new ones"
        fast = np.asarray(frames.frame()).copy()
        if at_defaults:
            fig.canvas.draw()
        else:
            assert not (found := figure_problems(fig)), f"{cls.__name__} at {values}: {found}"
        after = _pixels(fig)
        # the frame cache redraws only what changed: it must give the full draw's pixels exactly
        wrong = int((fast != after).any(axis=-1).sum())
        assert wrong == 0, f"{cls.__name__} at {values}: the fast frame differs from a full draw in {wrong} pixels"
        changed |= after.shape != before.shape or bool((after != before).any())
        before = after
    assert changed, f"{cls.__name__}.update never changed the picture"
    # Back at the defaults, the same picture as the first one: the notebook saves the first, and a slider moved
    # away and back (or the book's frame at the start) shows the later one. A title re-made by fig.suptitle()
    # in redraw() drops back to its default height and broke this.
    plot.update(**cls.defaults)
    fig.canvas.draw()
    wrong = int((_pixels(fig) != first).any(axis=-1).sum()) if _pixels(fig).shape == first.shape else -1
    assert wrong == 0, f"{cls.__name__}: back at its defaults the picture differs from the first in {wrong} pixels"
    png = render_png(fig)
    assert png[:4] == b"\x89PNG"
    width_px = int.from_bytes(png[16:20], "big")  # PNG IHDR: width, big-endian, at byte 16
    assert abs(width_px - fig.get_figwidth() * style.RENDER_DPI) <= 1
    assert style.RENDER_DPI == 2 * style.DISPLAY_DPI
    # The book's frames are this picture in a 256-colour palette (scripts/book/book_frames.py, encode_frame): its
    # mean error is stated there as at most 3 levels of 255; measured here on every figure.
    from PIL import Image

    from poslib.viz._book_hook import book_recorder

    encode_frame = book_recorder().encode_frame

    full = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)
    reduced = np.asarray(Image.open(io.BytesIO(encode_frame(png))).convert("RGB"), dtype=np.int16)
    mean_error = float(np.abs(full - reduced).mean())
    assert mean_error < 3.0, f"{cls.__name__}: the book's palette frame is off by {mean_error:.2f} levels; bound 3"
    plot.close()


@pytest.mark.parametrize("name", ["AlibiBiasPlot", "DotDecayPlot"])
def test_slider_frames_are_the_saved_figure_pixel_for_pixel(name):
    """What a slider move shows (``LivePlot.png``, at 2×) against ``render_png``'s full savefig, setting by setting."""
    from PIL import Image

    cls = next(c for c in PLOTS if c.__name__ == name)
    plot = cls()
    decode = lambda png: np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))  # noqa: E731
    for values in cls.bench_values:
        plot.update(**values)
        fast, full = decode(plot.png()), decode(render_png(plot.fig))
        assert fast.shape == full.shape and (fast != full).any(axis=-1).sum() == 0, f"{name} at {values}"
    assert plot._frames.blits > 0, "the frames were all full draws: the cache was never used"
    plot.close()


def test_frame_cache_redraws_the_ticks_of_an_autoscaled_axes():
    """Autoscaling moves an axes' limits at draw time without marking its ticks stale: the cache must notice."""
    fig, ax = style.new_figure(4, 3)
    (line,) = ax.plot([0, 1], [0, 1])
    ax.set_title("a static title")
    style.freeze_layout(fig)  # as LivePlot does: a layout engine would make every frame a full draw
    frames = FrameCache(fig, fig.dpi)
    frames.frame()
    for top in (1, 10, 1000, 2):
        line.set_ydata([0, top])
        ax.relim()
        ax.autoscale(axis="y")  # a request: the limits move at the next draw, and nothing is marked stale
        fast = np.asarray(frames.frame()).copy()
        fig.canvas.draw()
        assert np.array_equal(fast, _pixels(fig)), f"stale ticks after autoscaling to {top}"
    assert frames.blits + frames.rebuilds == 4 and frames.full_draws == 1


def test_frame_cache_follows_artists_added_and_removed_and_static_strokes_over_changes():
    """A removed artist must vanish and a new one appear; a wide static stroke over a changing text is kept on top."""
    fig, ax = style.new_figure(4, 3)
    ax.set(xlim=(0, 1), ylim=(0, 1))
    note = ax.text(0.2, 0.5, "0", fontsize=20)
    ax.plot([0, 1], [0.52, 0.52], lw=30, color="0.5", zorder=5)  # static, on top of the text, wider than its pad
    style.freeze_layout(fig)
    frames = FrameCache(fig, fig.dpi)
    frames.frame()
    for k in range(4):
        note.set_text(str(10**k))
        # one move adds a marker, the next removes it (nothing else changes where it was)
        if k % 2 == 0:
            ax.plot([0.1 + 0.2 * k], [0.1], "s")
        else:
            ax.lines[-1].remove()
        fast = np.asarray(frames.frame()).copy()
        fig.canvas.draw()
        assert np.array_equal(fast, _pixels(fig)), f"after move {k}"
        note.set_text(f"{k} again")  # a move with no artist added or removed: a blit
        fast = np.asarray(frames.frame()).copy()
        fig.canvas.draw()
        assert np.array_equal(fast, _pixels(fig)), f"after blit {k}"
    assert frames.blits + frames.rebuilds >= 4, "the moves without a new artist were blits"


def test_png_bytes_round_trips_and_names_a_bad_buffer():
    from PIL import Image

    rgba = np.random.default_rng(0).integers(0, 256, size=(7, 5, 4), dtype=np.uint8)
    image = Image.open(io.BytesIO(png_bytes(rgba, 192)))
    assert image.mode == "RGBA" and np.array_equal(np.asarray(image), rgba)
    assert round(image.info["dpi"][0]) == 192
    with pytest.raises(ValueError, match="rgba must be a"):
        png_bytes(rgba[..., :3], 192)


def _pixels(fig: Figure) -> np.ndarray:
    """The canvas as last drawn (RGBA)."""
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def test_widget_shows_the_figure_at_one_css_inch_per_figure_inch():
    ipywidgets = pytest.importorskip("ipywidgets")
    cls = PLOTS[0]
    plot = cls()
    name, value = next(iter(cls.defaults.items()))
    box = interact(plot, caption="what to look for", **{name: ipywidgets.Dropdown(options=[value], value=value)})
    assert box.image.width == str(round(plot.fig.get_figwidth() * style.DISPLAY_DPI))
    data, meta = box._repr_mimebundle_()
    assert "image/png" in data and meta["image/png"]["width"] == int(box.image.width)
    assert "VBox" not in data["text/plain"]
    plt.close("all")


# ---------------------------------------------------------------- every static figure function


def _lab_results() -> dict:
    lens = [64, 128, 256, 512]
    ppl = {
        "rope": {"64": 3.0, "128": 3.1, "256": 5.0, "512": 9.0},
        "alibi": {"64": 3.1, "128": 3.0, "256": 3.0, "512": 3.05},
        "learned": {"64": 3.2, "128": None, "256": None, "512": None},
        "nope": {"64": 3.3, "128": 60.0, "256": 90.0, "512": 99.0},
    }
    std = {k: {L: (0.05 if v is not None else None) for L, v in d.items()} for k, d in ppl.items()}
    return {"config": {"eval": {"eval_lens": lens}, "model": {"train_len": 64}}, "ppl": ppl, "ppl_std": std}


def _fire_layers() -> list[dict]:
    rng = np.random.default_rng(0)
    return [
        {
            "w1": rng.standard_normal(8),
            "b1": rng.standard_normal(8),
            "w2": rng.standard_normal((2, 8)) / 3,
            "b2": np.zeros(2),
            "c": 1.5,
            "L": 60.0,
        }
        for _ in range(2)
    ]


def _full_run() -> dict:
    # the committed passkey run: its figures are drawn from real numbers, None entries included
    root = pathlib.Path(__file__).resolve().parent.parent
    return json.loads((root / "results" / "lab_full.json").read_text(encoding="utf-8"))


def _profiles() -> dict:
    rng = np.random.default_rng(0)
    prof = lambda: {"distance": rng.uniform(0, 80, (2, 2)), "entropy": rng.uniform(0, 4, (2, 2))}  # noqa: E731
    return {s: {"1×": prof(), "8×": prof()} for s in ("rope", "alibi")}


def _longrope_config() -> dict:
    # Phi-3.5-mini's shape (96-dim heads, s = 32) with made-up factor lists: the figure, not the values, is tested
    return {
        "hidden_size": 3072,
        "num_attention_heads": 32,
        "rope_theta": 10000.0,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_scaling": {
            "type": "longrope",
            "short_factor": np.linspace(1, 3, 48).tolist(),
            "long_factor": np.geomspace(1, 64, 48).tolist(),
        },
    }


STATIC = {
    "table_heatmaps": lambda: table_heatmaps(
        {"a": np.random.default_rng(0).standard_normal((32, 16)), "b": np.eye(16)}
    ),
    "offset_profiles_figure": lambda: offset_profiles_figure(
        {"a": np.random.default_rng(0).standard_normal((64, 16)), "b": np.eye(64)[:, :16] + 0.1}, max_offset=40
    ),
    "cross_terms_figure": lambda: cross_terms_figure(32, 32)[0],
    "heatmap_row": lambda: heatmap_row([np.eye(8), -2 * np.eye(8)], ["plus", "minus"], suptitle="two terms"),
    "heatmap_row(separate scales)": lambda: heatmap_row([np.eye(8), -np.eye(8)], ["a", "b"], shared_scale=False),
    "perplexity_figure": lambda: perplexity_figure(_lab_results()),
    "passkey_map_figure": lambda: passkey_map_figure(_full_run(), ["sandwich", "alibi", "rope", "learned"]),
    "ppl_and_passkey_figure": lambda: ppl_and_passkey_figure(_full_run(), ["sandwich", "alibi", "rope", "learned"]),
    "attention_profile_figure": lambda: attention_profile_figure(_profiles(), 64),
    "fire_function_figure": lambda: fire_function_figure(_fire_layers(), "FIRE's learned bias"),
    "longrope_divisors_figure": lambda: longrope_divisors_figure(_longrope_config()),
    "sink_mass_figure": lambda: sink_mass_figure(
        [1, 16, 256], [0.0, 4.0], np.random.default_rng(0).uniform(0, 1, (5, 2, 3)), np.full((2, 3), 0.5)
    ),
    "partial_rotary_figure": lambda: partial_rotary_figure(
        np.arange(50), {"one reading": np.cos(np.arange(50) / 9), "another": np.cos(np.arange(50) / 20)}
    ),
    "vo_rope_shift_figure": lambda: vo_rope_shift_figure(
        np.array([0, 1, 10, 100]), {"with": np.array([0, 1e-16, 1e-15, 1e-14]), "without": np.array([0, 1.0, 2, 3])}
    ),
    "generator_drift_figure": lambda: generator_drift_figure(
        np.linspace(0, 0.5, 6), np.linspace(0, 0.4, 6), np.array([1e-16, 0.05, 0.1, 0.2, 0.3, 0.4])
    ),
    "path_deltanet_figure": lambda: path_deltanet_figure(
        np.array([1.0, 0.1, 0.01]), np.array([1e-15, 1e-8, 1e3]), np.array([3.0, 1e6, 1e20])
    ),
}


@pytest.mark.parametrize("name", list(STATIC))
def test_static_figure_is_readable(name):
    fig = STATIC[name]()
    assert not (found := figure_problems(fig)), f"{name}: {found}"
    plt.close(fig)


def test_style_is_applied_on_import():
    assert matplotlib.rcParams["figure.dpi"] == style.DISPLAY_DPI
    assert matplotlib.rcParams["savefig.dpi"] == style.RENDER_DPI
    assert matplotlib.colors.to_rgba(matplotlib.rcParams["figure.facecolor"])[3] == 1.0, "opaque for dark themes"
    with pytest.raises(ValueError, match="width"):
        style.new_figure(style.MAX_WIDTH + 1, 3)


# ---------------------------------------------------------------- the checks can fail


def _planted(**kw) -> Figure:
    fig, ax = style.new_figure(6, 3)
    x = np.linspace(0, 1, 50)
    ax.plot(x, x, label="rising line")
    ax.set(title="planted", xlabel="x", ylabel="y")
    if kw.get("legend_over_data"):
        ax.legend(loc="center")
    if kw.get("small_font"):
        ax.text(0.05, 0.9, "tiny", fontsize=7)
    if kw.get("cjk"):
        ax.set_title("位置编码")
    if kw.get("underscore"):
        ax.set_ylabel("θ_i (rad)")
    if kw.get("note_on_line"):
        ax.text(0.5, 0.5, "note on the line", ha="center", va="center")
    return fig


@pytest.mark.parametrize(
    ("defect", "message"),
    [
        ("legend_over_data", "legend covers"),
        ("small_font", "7.0 pt"),
        ("cjk", "CJK"),
        ("underscore", "literal underscore"),
        ("note_on_line", "sits on"),
    ],
)
def test_checks_catch_a_planted_defect(defect, message):
    assert figure_problems(_planted()) == []
    if defect == "cjk":  # what a student without a CJK font gets: boxes, and this warning
        with pytest.warns(UserWarning, match="missing from font"):
            found = figure_problems(_planted(cjk=True))
    else:
        found = figure_problems(_planted(**{defect: True}))
    assert any(message in p for p in found), found


def test_notation_check_reads_mathtext():
    assert _notation_problem(r"$L_{\mathrm{train}}$ = 64 and max_distance 128") is None
    assert _notation_problem("R_Θ,m") and _notation_problem(r"\delta^*") and _notation_problem("L_train")


def test_check_catches_a_legend_over_an_image_and_a_wide_figure():
    fig = plt.figure(figsize=(12, 3))
    ax = fig.subplots()
    ax.imshow(np.eye(8))
    ax.plot([0, 1], [0, 1], label="line")
    ax.set(title="t", xlabel="x", ylabel="y")
    ax.legend(loc="center")
    found = figure_problems(fig)
    assert any("covers an image" in p for p in found) and any("shrunk on screen" in p for p in found), found
    plt.close(fig)


# ---------------------------------------------------------------- the saved notebooks

NOTEBOOKS = sorted(pathlib.Path(__file__).resolve().parent.parent.glob("notebooks/[0-9][0-9]_*.ipynb"))
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_saved_notebook_figures_are_sharp_and_not_stretched(path):
    """Every stored PNG is drawn at 2× and shown at ≤ 960 px; widgets are saved with a picture and tagged for nbval."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        assert "NBVAL_" not in src, f"{path.name} cell {i}: nbval markers are cell tags, not comments"
        assert "filterwarnings" not in src, f"{path.name} cell {i}: a warning filter hides what a student should see"
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data:
                assert "image/png" in data, f"{path.name} cell {i}: a widget saved without a picture"
                assert "nbval-ignore-output" in cell["metadata"].get("tags", []), f"{path.name} cell {i}: untagged"
            if "image/png" not in data:
                continue
            raw = base64.b64decode(data["image/png"])
            width_px = int.from_bytes(raw[16:20], "big")
            shown = out.get("metadata", {}).get("image/png", {}).get("width")
            assert shown, f"{path.name} cell {i}: a PNG without a display width is shown at its pixel size"
            assert shown <= style.NOTEBOOK_WIDTH_PX, f"{path.name} cell {i}: {shown} px wide, shrunk on screen"
            assert abs(width_px - 2 * shown) <= 2, f"{path.name} cell {i}: {width_px} px shown at {shown} px (not 2×)"
