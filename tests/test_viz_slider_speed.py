"""Rules behind the slider speed-ups of issue 37: what a move may leave alone, and that the picture stays the same.

``tests/test_figures.py`` checks every fast frame against a full draw; these tests hold the rules that made
the frames fast: colour bars that relabel instead of being rebuilt, artists set again only when their
control moved, FIRE's rows computed alone.
"""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import poslib as P
from poslib.viz._blit import FrameCache
from poslib.viz.contextual import FireInterpolationPlot
from poslib.viz.learned import SimilarityRowPlot
from poslib.viz.length import UnseenAnglePlot
from poslib.viz.production import MropeGridPlot
from poslib.viz.relative import DebertaPlot, T5BucketPlot
from poslib.viz.sinusoidal import WavePairPlot
from poslib.viz.style import freeze_layout, new_figure, sparse_colorbar


def _labels(cb):
    axis = cb.ax.yaxis
    ticks = [t for t in axis.get_major_ticks() if t.label1.get_visible()]
    axis.get_figure(root=True).canvas.draw()
    return [t.label1.get_text() for t in ticks if t.get_visible()], axis.offsetText.get_text()


def _colorbars(plot):
    return [ax._colorbar for ax in plot.fig.axes if ax.get_label() == "<colorbar>"]


@pytest.mark.parametrize(
    ("cls", "moves"),
    [
        (MropeGridPlot, [{"row": 0}, {"col": 3}, {"row": 11, "col": 15}, {"layout": "interleaved (Qwen3-VL)"}]),
        (T5BucketPlot, [{"num_buckets": 16}, {"num_buckets": 48}, {"num_buckets": 64, "max_distance": 256}]),
        (DebertaPlot, [{"att_span": 2}, {"att_span": 5}, {"att_span": 32}]),
    ],
    ids=["MropeGridPlot", "T5BucketPlot", "DebertaPlot"],
)
def test_colour_bars_follow_the_limits_without_a_full_draw(cls, moves):
    """The colour limits still follow the slider, the colour bar shows the ticks a colour bar of the image would,
    its colour strip is never rebuilt, and so no move needs a full draw."""
    plot = cls()
    plot.png()
    strips = [cb.solids for cb in _colorbars(plot)]
    clims = [tuple(cb.locator.mappable.get_clim() for cb in _colorbars(plot))]
    for values in moves:
        plot.update(**values)
        plot.png()
        clims.append(tuple(cb.locator.mappable.get_clim() for cb in _colorbars(plot)))
        for cb in _colorbars(plot):
            image = cb.locator.mappable
            fig, ax = new_figure(4, 3)
            reference = sparse_colorbar(fig, ax.imshow(image.get_array(), cmap=image.get_cmap()), ax, "r")
            reference.mappable.set_clim(image.get_clim())
            assert _labels(cb) == _labels(reference), f"{cls.__name__} at {values}"
    assert len(set(clims)) == len(clims), f"the colour limits must still follow the slider: {clims}"
    assert [cb.solids for cb in _colorbars(plot)] == strips, "a colour strip was rebuilt"
    assert plot._frames.full_draws == 1, "a move made a full draw"
    plot.close()


def test_t5_colour_limits_still_follow_the_number_of_buckets():
    plot = T5BucketPlot()
    limits = {plot.update(num_buckets=nb) and plot.im.get_clim() for nb in (16, 32)}
    assert limits == {(0, 15), (0, 31)}
    plot.close()


def _settled(plot):
    plot.png()  # the frame cache marks every artist drawn (not stale)


@pytest.mark.parametrize(
    ("cls", "move", "untouched"),
    [
        (SimilarityRowPlot, {"position": 7}, lambda p: [p.im, p.ax_s.xaxis, p.ax_s.yaxis, p.ax_s.title, p.ax_r.xaxis]),
        (WavePairPlot, {"pair": 9}, lambda p: [p.im]),
        (UnseenAnglePlot, {"pair": 50}, lambda p: [p.bars, p.infer_line, p.marks, p.count, *p.turns_legend.texts]),
        (T5BucketPlot, {"max_distance": 64}, lambda p: [p.ax.yaxis, p.top, p.marks[0], p.marks[1]]),
        (FireInterpolationPlot, {"c": 0.5}, lambda p: [p.ax1.xaxis, p.ax2.xaxis, p.ax2.yaxis, p.ax2.title]),
        (MropeGridPlot, {"row": 2}, lambda p: [*p.marks, p.legend_axes.title, *p.legend_axes.get_legend().texts]),
    ],
    ids=["SimilarityRowPlot", "WavePairPlot", "UnseenAnglePlot", "T5BucketPlot", "FireInterpolationPlot", "Mrope"],
)
def test_a_move_sets_again_only_what_its_control_changes(cls, move, untouched):
    """Setting an artist, even to equal values, marks it stale, and the frame cache redraws it (and all it overlaps)."""
    plot = cls()
    _settled(plot)
    plot.update(**move)
    stale = [a for a in untouched(plot) if a.stale]
    assert not stale, f"{cls.__name__}: {move} marked {stale} changed"
    plot.close()


@pytest.mark.parametrize(("c", "L"), [(1.0, 64), (0.05, 16), (4.0, 128)])
def test_fire_plot_draws_the_rows_of_poslibs_full_bias(c, L):
    plot = FireInterpolationPlot(c=c, L=L)
    n = 4 * L + 1
    w = P.fire_weights_from_bias(-0.25 * np.arange(L + 1, dtype=np.float64)[None], c=c, L=float(L))
    u = P.fire_inputs(n, c=c, L=float(L))
    bias = P.fire_bias(w["w1"], w["b1"], w["w2"], w["b2"], q_len=n, k_len=n, c=c, L=float(L), causal=True)[0]
    for k, i in enumerate([L // 2, L, 2 * L, 4 * L]):
        d = np.arange(i + 1)
        np.testing.assert_array_equal(plot.lines_u[k].get_xdata(), d)
        np.testing.assert_allclose(plot.lines_u[k].get_ydata(), u[i, i - d], rtol=0, atol=1e-15)
        np.testing.assert_allclose(plot.lines_b[k].get_ydata(), bias[i, i - d], rtol=0, atol=1e-12)
    plot.close()


def test_frame_cache_does_not_rebuild_for_moves_that_change_nothing():
    """A slider step that rounds to the same picture is a plain blit: it does not count towards shrinking."""
    fig, ax = new_figure(4, 3)
    (a,) = ax.plot([0, 1], [0, 1])
    (b,) = ax.plot([0, 1], [1, 0])
    ax.set(xlim=(0, 1), ylim=(0, 1))
    freeze_layout(fig)  # as LivePlot does: a layout engine makes every frame a full draw
    frames = FrameCache(fig, fig.dpi)
    frames.frame()
    for k in range(6):
        a.set_ydata([0, k / 6])
        b.set_ydata([1, k / 6])
        frames.frame()
        frames.frame()  # nothing changed, twice in a row: before issue 37 that rebuilt the background
        frames.frame()
    assert frames.full_draws == 1 and frames.rebuilds == 1, (frames.full_draws, frames.rebuilds, frames.blits)


def test_a_move_to_the_current_value_redraws_nothing():
    from poslib.viz.alibi import AlibiBiasPlot

    plot = AlibiBiasPlot()
    calls = []
    original = plot.redraw
    plot.redraw = lambda: (calls.append(1), original())[1]  # type: ignore[method-assign]
    key, value = next(iter(plot.params.items()))
    plot.update(**{key: value})
    assert calls == []  # the same value: no redraw
    other = next(v for values in type(plot).bench_values for k, v in values.items() if k == key and v != value)
    plot.update(**{key: other})
    assert calls == [1]  # a real move redraws once
    plot.update()
    assert calls == [1, 1]  # an explicit update with nothing given still redraws
    plot.close()
