"""What notebooks 01–03 add to poslib: the toy models, similarity helpers and their figures
(the shipped pretrained table: tests/test_pretrained.py)."""

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P
from poslib import similarity, toy
from poslib.viz.learned import SimilarityRowPlot, default_tables, offset_profiles_figure, table_heatmaps
from poslib.viz.sinusoidal import DotDecayPlot, WavePairPlot, cross_terms_figure, dot_decay_curves
from poslib.viz.style import freeze_layout
from poslib.viz.why_position import ORDERS, PermutationPlot, permutation_views

# --- toy: the attention layer and permutations ------------------------------------------------


@given(perm=st.permutations(list(range(7))), causal=st.booleans())
def test_attention_layer_is_equivariant_only_without_mask(perm, causal):
    layer = toy.TinySelfAttention(6, seed=3)
    x = torch.randn(7, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        out, w = layer(x, causal=causal)
        out_p, w_p = layer(x[perm])
    if not causal:
        torch.testing.assert_close(out_p, out[perm], atol=1e-12, rtol=0)
        torch.testing.assert_close(w_p, w[perm][:, perm], atol=1e-12, rtol=0)
        torch.testing.assert_close(out_p.mean(0), out.mean(0), atol=1e-12, rtol=0)


def test_causal_mask_breaks_equivariance():
    layer = toy.TinySelfAttention(6, seed=3)
    x = torch.randn(5, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    perm = [4, 3, 2, 1, 0]
    with torch.no_grad():
        out, _ = layer(x, causal=True)
        out_p, _ = layer(x[perm], causal=True)
    assert (out_p - out[perm]).abs().max() > 0.1


def test_layer_and_words_are_seeded():
    torch.manual_seed(123)  # the global RNG must not matter
    a = toy.TinySelfAttention(8, seed=0).w_q.weight
    torch.manual_seed(456)
    b = toy.TinySelfAttention(8, seed=0).w_q.weight
    assert torch.equal(a, b)
    assert torch.equal(toy.word_vectors(8, seed=0), toy.word_vectors(8, seed=0))
    assert toy.word_vectors(8).shape == (3, 8) and len(toy.WORDS) == len(toy.PINYIN) == 3


def test_attention_layer_errors():
    layer = toy.TinySelfAttention(4)
    with pytest.raises(TypeError, match="x must be a torch tensor"):
        layer(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="last dimension 4"):
        layer(torch.zeros(3, 5, dtype=torch.float64))
    with pytest.raises(ValueError, match="dim"):
        toy.TinySelfAttention(0)
    with pytest.raises(ValueError, match="dim"):
        toy.word_vectors(-1)


# --- toy: offset copy ---------------------------------------------------------------------------


def test_offset_copy_batch_targets():
    tokens, targets = toy.offset_copy_batch(4, 10, 7, 3, generator=torch.Generator().manual_seed(0))
    assert tokens.shape == targets.shape == (4, 10)
    assert (targets[:, :3] == -100).all()
    assert torch.equal(targets[:, 3:], tokens[:, :-3])
    assert tokens.max() < 7 and tokens.min() >= 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(batch=0, length=5, vocab=3, offset=1), "batch"),
        (dict(batch=2, length=5, vocab=3, offset=5), "offset must be smaller than length"),
        (dict(batch=2, length=5, vocab=3, offset=0), "offset"),
    ],
)
def test_offset_copy_batch_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        toy.offset_copy_batch(**kwargs, generator=torch.Generator())


def test_training_leaves_unused_rows_untouched_and_restores_threads():
    threads = torch.get_num_threads()
    r = toy.train_offset_copy(max_len=12, train_len=8, dim=8, steps=5, batch=4)
    assert torch.get_num_threads() == threads
    assert torch.equal(r.table[8:], r.initial_table[8:])
    assert not torch.equal(r.table[:8], r.initial_table[:8])
    assert len(r.losses) == 5 and r.config["train_len"] == 8
    again = toy.train_offset_copy(max_len=12, train_len=8, dim=8, steps=5, batch=4)
    assert torch.equal(r.table, again.table), "training must be deterministic for a given seed"


def test_written_out_adam_matches_torch_adam():
    gen = torch.Generator().manual_seed(0)
    w0 = torch.randn(5, 3, generator=gen)
    targets = torch.randn(5, 3, generator=gen)
    ours, theirs = torch.nn.Parameter(w0.clone()), torch.nn.Parameter(w0.clone())
    moments = [(torch.zeros_like(ours), torch.zeros_like(ours))]
    opt = torch.optim.Adam([theirs], lr=0.01)
    for step in range(1, 21):
        for p in (ours, theirs):
            p.grad = None
            ((p - targets) ** 3).sum().backward()
        toy._adam_step([ours], moments, step, 0.01)
        opt.step()
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=1e-5)


def test_fixed_schemes_have_no_table_and_run_past_max_len():
    r = toy.train_offset_copy(scheme="sinusoidal", max_len=8, train_len=8, dim=8, steps=2, batch=2)
    assert r.table is None and r.initial_table is None
    acc = toy.offset_copy_accuracy(r.model, 20, offset=3, vocab=16, batch=4)
    assert acc.shape == (20,) and torch.isnan(acc[:3]).all() and not torch.isnan(acc[3:]).any()
    learned = toy.train_offset_copy(max_len=8, train_len=8, dim=8, steps=1, batch=2)
    with pytest.raises(IndexError, match="L_max = 8"):
        toy.offset_copy_accuracy(learned.model, 9, offset=3, vocab=16, batch=2)
    none = toy.OffsetCopyModel(5, 4, 3, scheme="none")
    assert torch.equal(none.positions(6), torch.zeros(6, 4))


def test_training_errors():
    with pytest.raises(ValueError, match="train_len must be ≤ max_len"):
        toy.train_offset_copy(max_len=4, train_len=5)
    with pytest.raises(ValueError, match="scheme"):
        toy.OffsetCopyModel(4, 4, 4, scheme="rope")
    with pytest.raises(ValueError, match="steps"):
        toy.train_offset_copy(steps=0)
    with pytest.raises(ValueError, match="lr"):
        toy.train_offset_copy(lr=0.0)
    with pytest.raises(ValueError, match="batch"):
        toy.train_offset_copy(batch=0)
    with pytest.raises(TypeError, match="OffsetCopyModel"):
        toy.offset_copy_accuracy(torch.nn.Linear(2, 2), 8, offset=1, vocab=4)


# --- toy: which schemes are relative -------------------------------------------------------------


@given(shift=st.integers(1, 3000), seed=st.integers(0, 50))
def test_shift_gap_separates_relative_from_absolute(shift, seed):
    x = np.random.default_rng(seed).standard_normal((5, 8))
    for scheme in ("none", "rope", "t5", "alibi"):
        assert toy.shift_gap(scheme, x, shift, seed=seed) < 1e-9
    for scheme in ("learned", "sinusoidal"):
        assert toy.shift_gap(scheme, x, shift, seed=seed) > 1e-6


def test_position_scores_matches_plain_attention_scores():
    x = np.random.default_rng(0).standard_normal((4, 8))
    rng = np.random.default_rng(0)
    w_q, w_k = rng.standard_normal((2, 8, 8)) / math.sqrt(8)
    np.testing.assert_allclose(toy.position_scores("none", x, np.arange(4)), (x @ w_q) @ (x @ w_k).T / math.sqrt(8))


def test_position_scores_errors():
    x = np.zeros((3, 4))
    with pytest.raises(ValueError, match="scheme"):
        toy.position_scores("xpos", x, np.arange(3))
    with pytest.raises(ValueError, match="positions"):
        toy.position_scores("rope", x, np.arange(4))
    with pytest.raises(TypeError, match="integers"):
        toy.position_scores("rope", x, np.arange(3.0))
    with pytest.raises(ValueError, match="positions must lie in"):
        toy.position_scores("learned", x, np.array([-1, 0, 1]))
    with pytest.raises(ValueError, match="positions must lie in"):
        toy.shift_gap("learned", x, 5000)
    assert toy.shift_gap("rope", x, -7) < 1e-12  # negative positions are fine for a formula
    with pytest.raises(TypeError, match="shift"):
        toy.shift_gap("rope", x, 1.5)


# --- similarity ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_similarity_of_sinusoidal_table(backend):
    table = P.sinusoidal_table(40, 16, backend=backend)
    s = similarity.cosine_similarity_matrix(table)
    assert type(s) is type(table)
    s = np.asarray(s)
    np.testing.assert_allclose(np.diag(s), 1.0)
    np.testing.assert_allclose(s, s.T, atol=1e-12)
    assert similarity.toeplitz_gap(s) < 1e-12
    prof = np.asarray(similarity.offset_profile(torch.as_tensor(s) if backend == "torch" else s, 5))
    np.testing.assert_allclose(prof, [s[0, k] for k in range(6)], atol=1e-12)


def test_toeplitz_gap_and_profile_by_hand():
    s = np.array([[1.0, 0.5, 0.0], [0.2, 1.0, 0.5], [0.0, 0.2, 1.0]])
    assert similarity.toeplitz_gap(s) == 0.0
    s[0, 1] = 0.9
    assert similarity.toeplitz_gap(s) == pytest.approx(0.4)
    np.testing.assert_allclose(similarity.offset_profile(s), [1.0, 0.7, 0.0])


def test_similarity_errors():
    with pytest.raises(ValueError, match="all-zero row"):
        similarity.cosine_similarity_matrix(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="table must have shape"):
        similarity.cosine_similarity_matrix(np.zeros(3))
    with pytest.raises(ValueError, match="square"):
        similarity.toeplitz_gap(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="max_offset"):
        similarity.offset_profile(np.eye(3), 3)


# --- figures: notebook 01 ------------------------------------------------------------------------


def test_permutation_plot_draws_permuted_weights():
    plot = PermutationPlot()
    reference = permutation_views((0, 1, 2), False)
    for order in ORDERS:
        plot.update(order=order, causal=False)
        v = permutation_views(order, False)
        np.testing.assert_allclose(plot.images[0].get_array(), v["weights"])
        np.testing.assert_allclose(plot.images[1].get_array(), reference["weights"], atol=1e-12)
        np.testing.assert_allclose(plot.out_im.get_array(), v["outputs"])
        assert [t.get_text() for t in plot.axes[0].get_xticklabels()] == [toy.PINYIN[i] for i in order]
        assert "same weights" in plot.status.get_text()
    plot.update(order=(2, 1, 0), causal=True)
    assert "weights changed" in plot.status.get_text()
    assert plot.texts[0][0][1].get_text() == "0.00"  # the first query cannot see the second key
    plot.close()


def test_permutation_views_errors():
    with pytest.raises(ValueError, match="permutation"):
        permutation_views((0, 0, 1), False)


def test_freeze_layout_turns_the_engine_off():
    fig, ax = plt.subplots(layout="constrained")
    ax.set_title("a title")
    before = ax.get_position().bounds
    assert freeze_layout(fig).get_layout_engine() is None
    assert ax.get_position().bounds != before  # the layout was solved once before switching off
    plt.close(fig)


# --- figures: notebook 02 ------------------------------------------------------------------------


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


# --- figures: notebook 03 ------------------------------------------------------------------------


def test_wave_pair_plot_marks_the_wavelength():
    plot = WavePairPlot()
    for pair, base in [(0, 10000.0), (5, 10000.0), (31, 10000.0), (3, 100.0)]:
        plot.update(pair=pair, base=base)
        lam = 2 * np.pi * base ** (2 * pair / plot.dim)
        assert plot.periods[0].get_xdata()[0] == pytest.approx(lam)
        assert plot.periods[1].get_xdata()[0] == pytest.approx(2 * lam)
        p = plot.sin_line.get_xdata()
        np.testing.assert_allclose(plot.sin_line.get_ydata(), np.sin(p / base ** (2 * pair / plot.dim)), atol=1e-12)
        np.testing.assert_allclose(plot.cos_line.get_ydata(), np.cos(p / base ** (2 * pair / plot.dim)), atol=1e-12)
        assert plot.box.get_y() == 2 * pair - 0.5
        assert plot.ax_w.get_xlim()[1] == pytest.approx(2.5 * lam)
    with pytest.raises(ValueError, match="pair"):
        plot.update(pair=32)
    plot.close()


def test_dot_decay_plot_draws_the_cosine_sum():
    plot = DotDecayPlot()
    for base, dim in [(10000.0, 128), (100.0, 64), (1e5, 512)]:
        plot.update(base=base, dim=dim)
        k = plot.pe_line.get_xdata()
        expected = np.cos(k[:, None] * P.sinusoidal_frequencies(dim, base)).sum(-1)
        np.testing.assert_allclose(plot.pe_line.get_ydata(), expected, atol=1e-9)
        np.testing.assert_allclose(plot.pe_ref.get_ydata(), expected, atol=1e-9)
    plot.close()


def test_dot_decay_curves_expectation_and_errors():
    c = dot_decay_curves(10000.0, 32, 50, n_draws=20000)
    assert np.abs(c["mean_draws"] - c["pe"]).max() < 0.5  # cross terms average out
    assert c["one_draw"].shape == (51,)
    # the draws are shared across d: the first draw at d = 16 uses the first 16 coordinates of the d = 32 draw
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 256, 512))[:, :1, :16]
    pe = P.sinusoidal_table(11, 16)
    np.testing.assert_allclose(dot_decay_curves(10000.0, 16, 10)["one_draw"], ((q[0] + pe[0]) * (k[0] + pe)).sum(-1))
    with pytest.raises(ValueError, match="dim must be ≤ max_dim"):
        dot_decay_curves(10000.0, 1024, 10)
    with pytest.raises(ValueError, match="dim must be even"):
        dot_decay_curves(10000.0, 15, 10)
    with pytest.raises(ValueError, match="base"):
        dot_decay_curves(-1.0, 16, 10)


def test_cross_terms_figure():
    fig, mats = cross_terms_figure(16, 20)
    pe = P.sinusoidal_table(20, 16)
    np.testing.assert_allclose(mats["plain"], pe @ pe.T)
    assert similarity.toeplitz_gap(mats["plain"]) < 1e-12 and similarity.toeplitz_gap(mats["projected"]) > 0.1
    plt.close(fig)
    with pytest.raises(ValueError, match="dim"):
        cross_terms_figure(15)
