"""The word-recall and position-probe models of notebook 10 (poslib.teaching.toy_contextual)."""

import math

import numpy as np
import pytest


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
    out, w = model.forward_with_weights(x)
    assert out.shape == (4, 10) and w.shape == (4, 10, 10) and len(losses) == 2
