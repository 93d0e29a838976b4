"""Figures of notebook 02 (poslib.viz.learned)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import poslib as P
from poslib.teaching import similarity
from poslib.viz.learned import SimilarityRowPlot, default_tables, offset_profiles_figure, table_heatmaps


def test_similarity_row_plot_follows_position_and_table():
    tables = {"small": P.sinusoidal_table(20, 8), "random": torch.randn(30, 8)}
    plot = SimilarityRowPlot(tables=tables, position=3)
    s_small = similarity.cosine_similarity_matrix(tables["small"])
    for m in (0, 7, 19):
        plot.update(position=m)
        np.testing.assert_allclose(plot.row_line.get_ydata(), s_small[m])
        assert plot.hline.get_ydata()[0] == m
        assert plot.im.get_array().shape == (20, 20)
    plot.update(position=500)  # clipped to the last row
    np.testing.assert_allclose(plot.row_line.get_ydata(), s_small[19])
    plot.update(table="random", position=25)
    assert plot.im.get_array().shape == (30, 30)
    np.testing.assert_allclose(
        plot.row_line.get_ydata(), similarity.cosine_similarity_matrix(tables["random"].double().numpy())[25]
    )
    plot.update(table="no such table")  # falls back to the first table rather than failing mid-slide
    assert plot.im.get_array().shape == (20, 20)
    plot.close()


def test_similarity_row_plot_errors():
    with pytest.raises(ValueError, match="at least one table"):
        SimilarityRowPlot(tables={})
    with pytest.raises(ValueError, match="shape"):
        SimilarityRowPlot(tables={"bad": np.zeros(5)})
    with pytest.raises(TypeError, match="no parameter"):
        SimilarityRowPlot(tables={"t": np.eye(3)}, colour="red")


def test_default_tables_and_static_figures():
    tables = default_tables()
    assert all(t.shape == (512, 384) for t in tables.values())
    assert len(tables) == 2  # MiniLM ships with poslib, so it is always there
    fig = table_heatmaps({"a": np.eye(4), "b": torch.ones(3, 2)})
    assert len([ax for ax in fig.axes if ax.get_label() != "<colorbar>"]) == 2
    plt.close(fig)
    fig = offset_profiles_figure({"a": P.sinusoidal_table(10, 4)}, max_offset=50)
    np.testing.assert_allclose(
        fig.axes[0].lines[0].get_ydata(),
        similarity.offset_profile(similarity.cosine_similarity_matrix(P.sinusoidal_table(10, 4))),
    )
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one table"):
        table_heatmaps({})
