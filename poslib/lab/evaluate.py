"""Scoring a trained lab model: perplexity on non-overlapping windows, and attention profiles.

**Non-overlapping windows.** ``n_eval_spans`` spans of lcm(eval_lens) + 1 bytes are taken evenly
across the validation split; at length L each span is cut into consecutive windows of L, and every
byte of a window is predicted from the bytes before it *in that window*. All lengths thus score the
same bytes. Perplexity is exp(mean negative log-likelihood). (Sliding-window evaluation gives each
byte more context and flatter curves: see ofirpress/attention_with_linear_biases#16.)

**rope+random is scored as it was trained**, at sorted random positions (one draw per forward pass
from a generator seeded with L, so the score is reproducible), as Ruoss et al.'s code does.

**Not defined is not a number.** A learned table has no rows beyond train_len: that perplexity is
recorded as ``None``.

``rope+dynamic`` needs one more rule: dynamic NTK chooses its base from the current length, so in
generation the byte at position t is predicted with the base for length t + 1. The lab approximates
that in blocks of train_len: the bytes at positions [n − train_len, n) are scored by a forward pass
over the first n bytes with the base for length n. Bytes before train_len see plain RoPE.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import numpy as np
import torch
import torch.nn.functional as F

from ..attn import attention_entropy, relative_distance
from ..randomized import randomized_positions
from . import distributed
from .model import LabModel
from .passkey import passkey_batch

__all__ = ["attention_profile", "evaluate", "evaluate_passkey", "passkey_test_set"]


def _nll(
    model: LabModel, x: torch.Tensor, y: torch.Tensor, modifier: str | None, rng: np.random.Generator | None
) -> Iterator[float]:
    """Summed negative log-likelihoods of ``y`` given windows ``x``, one per forward pass (module docstring).

    Yielded, not summed here: the caller adds them to its running total in order, so the
    floating-point sum is the same whatever the batching of passes.
    """
    pieces: Iterable[tuple[torch.Tensor, torch.Tensor]]
    if rng is not None:
        positions = randomized_positions(x.shape[1], model.random_max_pos(), seed=rng, backend="torch")
        pieces = [(model(x, positions=positions.to(x.device)), y)]
    elif modifier == "dynamic":
        # one pass per block of train_len, with the base for the block's end (see module docstring)
        n = model.cfg.train_len
        pieces = (
            (model(x[:, :end], "dynamic")[:, end - n : end], y[:, end - n : end]) for end in range(n, x.shape[1] + 1, n)
        )
    else:
        pieces = [(model(x, modifier), y)]
    for logits, target in pieces:
        yield float(F.cross_entropy(logits.flatten(0, 1), target.flatten(), reduction="sum"))


@torch.no_grad()
def evaluate(
    model: LabModel,
    spans: torch.Tensor,
    eval_lens: tuple[int, ...],
    modifier: str | None = None,
    batch_tokens: int = 8192,
) -> dict[int, float | None]:
    """Perplexity at each length in ``eval_lens`` on non-overlapping windows cut from ``spans``.

    ``spans`` is ``(n_spans, span_len + 1)`` (see :func:`poslib.lab.data.eval_spans`);
    every L must divide span_len. Lengths the scheme does not define give ``None``.
    """
    span_len = spans.shape[1] - 1
    device = next(model.parameters()).device
    out: dict[int, float | None] = {}
    for L in eval_lens:
        if span_len % L:
            raise ValueError(f"eval length {L} must divide the span length {span_len}")
        limit = model.max_len()
        if limit is not None and L > limit:
            out[L] = None
            continue
        x, y = spans[:, :-1].reshape(-1, L), spans[:, 1:].reshape(-1, L)
        per_batch = max(1, batch_tokens // L)
        rng = np.random.default_rng(L) if model.scheme.takes_positions else None
        total = 0.0
        for b, i in enumerate(range(0, x.shape[0], per_batch)):
            if b % distributed.world_size() != distributed.rank():  # another rank's batch (torchrun)
                if rng is not None:  # its draw of random positions, so this rank's draws stay the one-process ones
                    randomized_positions(L, model.random_max_pos(), seed=rng, backend="torch")
                continue
            for nll in _nll(model, x[i : i + per_batch].to(device), y[i : i + per_batch].to(device), modifier, rng):
                total += nll
        out[L] = math.exp(distributed.sum_across(total) / y.numel())
    return out


def passkey_test_set(L: int, depth: int, n: int, key_digits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``n`` test sequences of length ``L`` with the needle at ``depth`` %: the same for every scheme and seed."""
    return passkey_batch(n, L, key_digits, np.random.default_rng((L, depth, key_digits)), depth / 100)


@torch.no_grad()
def heldout_loss(model: LabModel, spans: torch.Tensor, length: int, batch_tokens: int = 8192) -> float | None:
    """Mean loss (nats per byte) of ``model`` on ``spans`` cut into windows of ``length``: a point of a watched curve.

    The model is scored in eval mode and left in train mode, as it is between training steps. None where the
    scheme does not define ``length``.
    """
    model.eval()
    ppl = evaluate(model, spans, (length,), None, batch_tokens)[length]
    model.train()
    return math.log(ppl) if ppl is not None else None


def evaluate_passkey(
    model: LabModel,
    eval_lens: tuple[int, ...],
    depths: tuple[int, ...],
    n: int,
    key_digits: int,
    modifier: str | None = None,
    batch_tokens: int = 8192,
) -> dict[int, dict[int, float] | None]:
    """Exact-match passkey accuracy at every length and depth (%): ``{L: {depth: share of n keys retrieved}}``.

    A key counts when the most likely byte is right at every answer digit (teacher forcing, which is
    greedy decoding's exact match; :mod:`poslib.lab.passkey`). Lengths the scheme does not define give
    None. ``rope+random`` reads at sorted random positions, ``rope+dynamic`` with the base for the
    whole length (the answer is in the last block), as in :func:`evaluate`.
    """
    device = next(model.parameters()).device
    limit = model.max_len()
    out: dict[int, dict[int, float] | None] = {}
    for L in eval_lens:
        if limit is not None and L > limit:
            out[L] = None
            continue
        rng = np.random.default_rng(L) if model.scheme.takes_positions else None
        row: dict[int, float] = {}
        for depth in depths:
            x, y = passkey_test_set(L, depth, n, key_digits)
            hits = 0
            for b, i in enumerate(range(0, n, max(1, batch_tokens // L))):
                if b % distributed.world_size() != distributed.rank():  # another rank's keys (torchrun)
                    if rng is not None:
                        randomized_positions(L, model.random_max_pos(), seed=rng, backend="torch")
                    continue
                xb, yb = (
                    x[i : i + max(1, batch_tokens // L)].to(device),
                    y[i : i + max(1, batch_tokens // L)].to(device),
                )
                positions = None
                if rng is not None:
                    positions = randomized_positions(L, model.random_max_pos(), seed=rng, backend="torch").to(device)
                logits = model(xb, modifier, positions)[:, -key_digits:]
                hits += int((logits.argmax(-1) == yb[:, -key_digits:]).all(-1).sum())
            row[depth] = distributed.sum_across(hits) / n
        out[L] = row
    return out


@torch.no_grad()
def attention_profile(model: LabModel, window: torch.Tensor, modifier: str | None = None) -> dict[str, np.ndarray]:
    """Per layer and head, averaged over queries: attention entropy (nats) and mean distance i − j (bytes).

    ``window`` is ``(B, T)`` byte ids. Only queries in the last quarter of the
    window are averaged, where the context is longest. Returns arrays
    ``(n_layers, n_heads)`` under ``"entropy"`` and ``"distance"``.
    """
    weights = model.forward_with_weights(window.to(next(model.parameters()).device), modifier).weights
    T = window.shape[1]
    rows = slice(3 * T // 4, T)
    dist = (-relative_distance(T, backend="torch")).clamp(min=0).float().to(weights[0].device)  # i − j ≥ 0
    entropy = np.stack([attention_entropy(w[..., rows, :]).mean(dim=(0, 2)).cpu().numpy() for w in weights])
    distance = np.stack([(w[..., rows, :] * dist[rows]).sum(-1).mean(dim=(0, 2)).cpu().numpy() for w in weights])
    return {"entropy": entropy, "distance": distance}
