"""Figures of notebook 11 (poslib.viz.extend): the distance maps drawn are the formulas' numbers."""

import numpy as np
import pytest

from poslib.viz import extend as VX


def _by_formula(method: str, length: int, w: int, leak: float, G: int) -> np.ndarray:
    """The maps of poslib.remap written out here, from the papers' formulas (causal pairs; NaN above)."""
    m, n = np.arange(length)[:, None], np.arange(length)[None, :]
    d = (m - n).astype(float)
    if method == "ReRoPE":
        d = np.minimum(d, w)
    elif method == "Leaky ReRoPE":
        d = np.where(d < w, d, w + (d - w) / leak)
    elif method == "Self-Extend":
        d = np.where(d < w, d, (m // G + w - w // G) - n // G)
    elif method == "Dual Chunk Attention":  # fixed settings: chunks of s = chunk_size − local_window tokens
        c, s = VX.DCA_CHUNK_SIZE, VX.DCA_CHUNK_SIZE - VX.DCA_LOCAL_WINDOW
        back = m // s - n // s  # 0: same chunk, 1: the chunk before, 2+: farther
        query = np.where(back == 0, m % s, np.where(back == 1, np.minimum(m % s + s, c), min(2 * s - 1, c)))
        d = (query - n % s).astype(float)
    return np.where(m >= n, d, np.nan)


@pytest.mark.parametrize("method", VX.REMAP_METHODS)
@pytest.mark.parametrize(("length", "w", "leak", "G"), [(64, 16, 16.0, 6), (100, 7, 2.5, 3), (33, 1, 1.5, 1)])
def test_remap_distances_are_the_formulas(method, length, w, leak, G):
    got = VX.remap_distances(method, length, window=w, leak=leak, group_size=G)
    np.testing.assert_array_equal(np.isnan(got), np.triu(np.ones((length, length), bool), 1))
    np.testing.assert_allclose(got, _by_formula(method, length, w, leak, G), rtol=0, atol=1e-12)


def test_remap_distances_rejects_an_unknown_method():
    with pytest.raises(ValueError, match="method must be one of"):
        VX.remap_distances("DCA", 8)  # the dropdown's name is "Dual Chunk Attention"


def test_plot_draws_the_matrix_and_the_last_row():
    plot = VX.RemapDistancePlot()
    for setting in [*VX.RemapDistancePlot.bench_values, {"method": "Self-Extend", "length": 128, "group_size": 3}]:
        plot.update(**setting)
        p = plot.params
        expected = _by_formula(p["method"], p["length"], p["window"], p["leak"], p["group_size"])
        shown = plot.im.get_array()
        np.testing.assert_array_equal(shown.mask, np.isnan(expected))
        np.testing.assert_allclose(shown.filled(np.nan), expected, atol=1e-12)
        x, y = plot.row.get_data()
        np.testing.assert_array_equal(x, np.arange(p["length"]))
        np.testing.assert_allclose(y, expected[-1, ::-1], atol=1e-12)  # key n = length − 1 − (m − n)
        unseen = int(np.sum(expected[~np.isnan(expected)] > plot.train_len - 1))
        assert f"{unseen:,} of" in plot.row_title.get_text()
    plot.close()


def test_plain_rope_at_four_times_the_training_length_leaves_the_trained_range():
    plot = VX.RemapDistancePlot(method="plain RoPE", length=256)
    L = plot.train_len
    # (L' − L)(L' − L + 1)/2 causal pairs lie at a distance ≥ L: 192·193/2 = 18,528
    assert "18,528 of 32,896 pairs beyond it" in plot.row_title.get_text().replace("\n", " ")
    assert L == 64
    plot.close()
