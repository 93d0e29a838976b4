"""FIRE, CoPE and randomized positions: the formulas, their properties and the exact constructions."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import poslib as P

rng = np.random.default_rng(0)


def _random_fire(n_heads=3, hidden=8, seed=0):
    r = np.random.default_rng(seed)
    return (
        r.standard_normal(hidden),
        r.standard_normal(hidden),
        r.standard_normal((n_heads, hidden)),
        r.standard_normal(n_heads),
    )


def _row(bias):
    """(n_heads, n, n) causal bias → (n_heads, n): the last query's bias at distance 0 … n − 1."""
    return bias[:, -1, ::-1]


# ---------- FIRE ----------
def test_fire_inputs_are_the_papers_formula():
    c, L, n = 0.7, 5.0, 9
    u = P.fire_inputs(n, c=c, L=L)
    for i in range(n):
        for j in range(i + 1):
            expected = math.log(c * (i - j) + 1) / math.log(c * max(L, i) + 1)
            assert abs(u[i, j] - expected) < 1e-14
    assert (u >= 0).all() and (u <= 1).all()  # progressive interpolation keeps the MLP's input in [0, 1]
    assert (np.triu(u, 1) == 0).all()


@given(n=st.integers(2, 24), extra=st.integers(0, 30), c=st.floats(0.05, 5.0), seed=st.integers(0, 50))
def test_fire_bias_depends_only_on_distance_while_L_covers_the_queries(n, extra, c, seed):
    L = n - 1 + extra  # every query i ≤ n − 1 ≤ L: the denominator is ψ(L) for all of them
    b = P.fire_bias(*_random_fire(seed=seed), q_len=n, k_len=n, c=c, L=L, causal=True)
    for d in range(n):
        diagonal = np.stack([b[:, i, i - d] for i in range(d, n)], axis=1)
        np.testing.assert_allclose(diagonal, diagonal[:, :1].repeat(diagonal.shape[1], 1), rtol=0, atol=1e-12)


def test_fire_bias_is_interpolated_beyond_L():
    # For queries past L the same distance maps to a smaller input: the bias is no longer a function of i − j.
    u = P.fire_inputs(40, c=1.0, L=10.0)
    assert u[20, 15] > u[30, 25] > u[39, 34]
    assert abs(u[5, 0] - u[10, 5]) < 1e-15  # both queries ≤ L


@pytest.mark.parametrize("kind", ["t5", "alibi", "kerple"])
@pytest.mark.parametrize("c", [0.3, 1.0, 4.0])
def test_fire_reproduces_t5_alibi_and_kerple(kind, c):
    n = 48
    if kind == "t5":
        table = np.random.default_rng(1).standard_normal((16, 4))
        target = P.t5_bias(table, n, n, bidirectional=False, max_distance=n)
    elif kind == "alibi":
        target = P.alibi_bias(4, n, n, causal=True)
    else:
        target = P.kerple_bias(
            np.array([0.5, 1.0, 2.0, 3.0]), np.array([0.1, 0.5, 1.0, 2.0]), q_len=n, k_len=n, causal=True
        )
    w = P.fire_weights_from_bias(_row(target), c=c)
    got = P.fire_bias(w["w1"], w["b1"], w["w2"], w["b2"], q_len=n, k_len=n, c=w["c"], L=w["L"], causal=True)
    seen = np.tril(np.ones((n, n), bool))
    assert np.abs(got[:, seen] - target[:, seen]).max() < 1e-10
    assert np.isneginf(got[:, ~seen]).all()


def test_kerple_log_is_a_linear_fire_bias():
    # With c = r₂, ψ(d) = log(1 + r₂ d): KERPLE's −r₁ log(1 + r₂ d) is −r₁ ψ(L) · u, one ReLU unit.
    n, r1, r2, L = 30, 1.5, 0.4, 29.0
    psi_L = math.log(r2 * L + 1)
    got = P.fire_bias(
        np.ones(1), np.zeros(1), np.array([[-r1 * psi_L]]), np.zeros(1), q_len=n, k_len=n, c=r2, L=L, causal=True
    )
    want = P.kerple_bias(r1, r2, q_len=n, k_len=n, causal=True).squeeze(0)
    seen = np.tril(np.ones((n, n), bool))
    assert np.abs(got[0][seen] - want[seen]).max() < 1e-12


def test_fire_module_learns_c_and_L_and_matches_the_function():
    torch.manual_seed(0)
    m = P.FireBias(4, hidden=16, c_init=2.0, L_init=12.0)
    c, L = m.c_L()
    assert abs(c.item() - 2.0) < 1e-5 and abs(L.item() - 12.0) < 1e-4
    out = m(20, causal=True)
    assert out.shape == (4, 20, 20) and torch.isneginf(out[:, torch.ones(20, 20).triu(1).bool()]).all()
    out[:, torch.ones(20, 20).tril().bool()].sum().backward()
    assert m.raw_c.grad is not None and m.raw_L.grad is not None and m.raw_L.grad != 0  # queries ≥ L reach L
    w = [p.detach().double() for p in (m.mlp_in.weight[:, 0], m.mlp_in.bias, m.mlp_out.weight, m.mlp_out.bias)]
    ref = P.fire_bias(*w, q_len=20, k_len=20, c=c.item(), L=L.item(), causal=True)
    seen = torch.ones(20, 20).tril().bool()
    assert (ref[:, seen] - out.detach().double()[:, seen]).abs().max() < 1e-5


# ---------- CoPE ----------
def test_cope_positions_count_open_gates_from_the_key_to_the_query():
    # Gates fully open (logit +∞ → σ = 1) on keys 1 and 3 only: positions count them, j … i inclusive.
    logits = np.full((5, 5), -np.inf)
    logits[4, [1, 3]] = np.inf
    p = P.cope_positions(logits)
    np.testing.assert_array_equal(p[4], [2, 2, 1, 1, 0])
    # all gates open in a causal row: p_ij = i − j + 1, a token count
    p = P.cope_positions(P.mask_future(np.full((6, 6), np.inf)))
    i, j = np.indices((6, 6))
    np.testing.assert_array_equal(p, np.where(j <= i, i - j + 1, 0))
    assert P.cope_positions(P.mask_future(np.full((6, 6), np.inf)), max_pos=3).max() == 2


@given(n=st.integers(1, 16), seed=st.integers(0, 10_000), scale=st.floats(0.1, 20.0))
def test_cope_positions_never_decrease_toward_the_start_in_a_causal_row(n, seed, scale):
    logits = P.mask_future(scale * np.random.default_rng(seed).standard_normal((2, n, n)))
    p = P.cope_positions(logits)
    assert (p[..., :-1] >= p[..., 1:]).all()  # p_ij ≥ p_i,j+1
    assert (p >= 0).all() and (p <= np.arange(1, n + 1)[:, None]).all()  # at most one per token j … i


def test_cope_bias_interpolates_between_integer_positions():
    d, max_pos = 4, 6
    q = rng.standard_normal((1, 3, d))
    e = rng.standard_normal((max_pos, d))
    logits = P.mask_future(rng.standard_normal((1, 3, 3)))
    got = P.cope_bias(q, logits, e)
    p = P.cope_positions(logits, max_pos=max_pos)
    for i in range(3):
        for j in range(3):
            lo, frac = int(np.floor(p[0, i, j])), p[0, i, j] - np.floor(p[0, i, j])
            emb = (1 - frac) * e[lo] + frac * e[min(lo + 1, max_pos - 1)]
            assert abs(got[0, i, j] - q[0, i] @ emb) < 1e-12


def test_cope_module_starts_at_zero_and_trains():
    m = P.CoPE(8, 4)
    q = torch.randn(2, 2, 5, 4)
    logits = P.mask_future(q @ torch.randn(2, 2, 5, 4).transpose(-1, -2))
    assert torch.equal(m(q, logits), torch.zeros(2, 2, 5, 5))
    m(q, logits).sum().backward()
    assert m.pos_emb.grad is not None and m.pos_emb.grad.abs().sum() > 0


# ---------- randomized positions ----------
@given(n=st.integers(1, 64), extra=st.integers(0, 500), seed=st.integers(0, 2**32 - 1))
def test_randomized_positions_are_sorted_distinct_and_in_range(n, extra, seed):
    p = P.randomized_positions(n, n + extra, seed=seed)
    assert p.shape == (n,) and p.dtype == np.int64
    assert (np.diff(p) > 0).all() and p[0] >= 0 and p[-1] < n + extra


def test_randomized_positions_are_seeded_and_fresh_per_draw():
    a, b = P.randomized_positions(16, 1024, seed=3), P.randomized_positions(16, 1024, seed=3)
    np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(3)
    first, second = P.randomized_positions(16, 1024, seed=g), P.randomized_positions(16, 1024, seed=g)
    np.testing.assert_array_equal(first, a)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(P.randomized_positions(8, 8, seed=0), np.arange(8))  # the whole range
    # over many draws every position of the range is used (unlike training at 0 … n − 1)
    seen = np.unique(np.concatenate([P.randomized_positions(16, 256, seed=g) for _ in range(200)]))
    assert len(seen) == 256


# ---------- named errors ----------
@pytest.mark.parametrize(
    "call, exc, words",
    [
        (lambda: P.fire_inputs(4, c=0.0), ValueError, "c must be"),
        (lambda: P.fire_inputs(4, L=-1.0), ValueError, "L must be"),
        (lambda: P.fire_inputs(4, c=torch.tensor(1.0), L=np.array([3.0])), TypeError, "mixed"),
        (
            lambda: P.fire_bias(np.ones(3), np.ones(2), np.ones((1, 3)), np.ones(1), q_len=4, k_len=4, causal=True),
            ValueError,
            "w1 and b1",
        ),
        (
            lambda: P.fire_bias(np.ones(3), np.ones(3), np.ones((1, 2)), np.ones(1), q_len=4, k_len=4, causal=True),
            ValueError,
            "w2",
        ),
        (
            lambda: P.fire_bias(np.ones(3), torch.ones(3), np.ones((1, 3)), np.ones(1), q_len=4, k_len=4, causal=True),
            TypeError,
            "mixed",
        ),
        (lambda: P.fire_weights_from_bias(np.ones(5)), ValueError, "values"),
        (lambda: P.fire_weights_from_bias(np.ones((2, 5)), L=2.0), ValueError, "L must be ≥"),
        (lambda: P.FireBias(2, c_init=0.0), ValueError, "c_init"),
        (lambda: P.cope_positions(np.ones(3)), ValueError, "gate_logits"),
        (lambda: P.cope_positions(np.ones((3, 3)), max_pos=0), ValueError, "max_pos"),
        (lambda: P.cope_bias(np.ones((3, 4)), np.ones((3, 3)), np.ones((5, 3))), ValueError, "pos_emb"),
        (lambda: P.cope_bias(np.ones((3, 4)), np.ones((2, 3)), np.ones((5, 4))), ValueError, "gate_logits"),
        (lambda: P.cope_bias(np.ones((3, 4)), torch.ones(3, 3), np.ones((5, 4))), TypeError, "mixed"),
        (lambda: P.CoPE(0, 4), ValueError, "max_pos"),
        (lambda: P.randomized_positions(0, 4), ValueError, "n must be"),
        (lambda: P.randomized_positions(5, 4), ValueError, "max_pos"),
        (lambda: P.randomized_positions(2, 4, seed=1.5), TypeError, "seed"),
    ],
)
def test_bad_input_is_named(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


# ---------- notebook 10's toy tasks ----------
def test_word_recall_batch_asks_for_the_capital_k_words_back():
    from poslib.teaching.toy_contextual import N_CAPITALS, word_recall_batch

    x, y, ks = word_recall_batch(50, np.random.default_rng(0))
    assert x.shape == (50, 41) and y.shape == ks.shape == (50,)
    for row, answer, k in zip(x.tolist(), y.tolist(), ks.tolist(), strict=True):
        capitals = [t for t in row[:-1] if t < N_CAPITALS]
        assert len(capitals) == 5 and capitals[-k] == answer and row[-1] == 16 + k
    with pytest.raises(ValueError, match="k_max"):
        word_recall_batch(2, np.random.default_rng(0), n_words=2, k_max=3)


@pytest.mark.parametrize("scheme", ["cope", "rope", "nope"])
def test_word_recall_models_train(scheme):
    from poslib.teaching.toy_contextual import train_word_recall, word_recall_accuracy

    model, losses = train_word_recall(scheme, steps=3)
    assert len(losses) == 3 and all(math.isfinite(v) for v in losses)
    assert set(word_recall_accuracy(model, n=60)) == {1, 2, 3}


def test_position_probe_sees_bos_first():
    from poslib.teaching.toy_contextual import BOS, position_probe_batch, train_position_probe

    x = position_probe_batch(4, 10, np.random.default_rng(0))
    assert (x[:, 0] == BOS).all() and (x[:, 1:] < BOS).all()
    model, losses = train_position_probe(train_len=8, steps=2)
    out, w = model(x, return_weights=True)
    assert out.shape == (4, 10) and w.shape == (4, 10, 10) and len(losses) == 2
