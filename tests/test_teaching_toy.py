"""The toy models of notebooks 01–03 (poslib.teaching.toy)."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from poslib.teaching import toy


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


# ---------- position_blind_accuracy ----------
def test_position_blind_guess_is_each_sequences_most_frequent_token():
    # the same draw as offset_copy_accuracy, scored with a per-sequence count written out in Python
    from collections import Counter

    acc = toy.position_blind_accuracy(10, offset=2, vocab=4, batch=32, seed=7)
    tokens, targets = toy.offset_copy_batch(32, 10, 4, 2, generator=torch.Generator().manual_seed(7))
    hits = np.zeros(10)
    for row, target in zip(tokens.tolist(), targets.tolist(), strict=True):
        counts = Counter(row)
        best = min(t for t in counts if counts[t] == max(counts.values()))
        hits += [t == best for t in target]
    np.testing.assert_allclose(acc[2:].numpy(), hits[2:] / 32, atol=1e-6)
    assert torch.isnan(acc[:2]).all()


def test_position_blind_guess_beats_chance():
    # a sequence of 24 tokens from 16 repeats its most frequent one more often than 1/16 of the time
    acc = toy.position_blind_accuracy(24, offset=3, vocab=16)
    assert np.nanmean(acc.numpy()) > 1 / 16 + 0.05


def test_the_position_free_control_trains_every_step_it_is_given():
    # 02's control is compared with the position-blind guess at its plateau: it must train as long as asked
    for scheme in ("none", "learned"):
        result = toy.train_offset_copy(scheme=scheme, max_len=32, train_len=24, steps=12, seed=0)
        assert len(result.losses) == 12, scheme


def test_position_spans_writes_runs():
    assert toy.position_spans([24, 33, 34, 35]) == "24, 33–35"
    assert toy.position_spans([36, 37, 38, 39, 40]) == "36–40"
    assert toy.position_spans([3]) == "3"
    assert toy.position_spans([]) == "none"
    assert toy.position_spans([35, 33, 34, 21, 22]) == "21–22, 33–35"


def test_offset_copy_over_seeds_matches_training_each_seed_by_hand():
    kw = dict(scheme="sinusoidal", train_len=12, steps=40)
    outcomes = toy.offset_copy_over_seeds([0, 5], test_len=20, **kw)
    assert [o.seed for o in outcomes] == [0, 5]
    for o in outcomes:
        model = toy.train_offset_copy(**kw, seed=o.seed).model
        at_train = toy.offset_copy_accuracy(model, 12, offset=3, vocab=16)
        acc = toy.offset_copy_accuracy(model, 20, offset=3, vocab=16)
        assert o.inside == at_train[3:].min().item()
        assert o.beyond == acc[12:].mean().item()
        assert o.back == tuple(m for m in range(12, 20) if acc[m] >= 0.9)
        assert o.lost == tuple(m for m in range(3, 12) if acc[m] < 0.9)
    with pytest.raises(ValueError, match="test_len must be > train_len"):
        toy.offset_copy_over_seeds([0], test_len=12, **kw)
