"""Toy models for notebooks 01–03: one-layer self-attention, trained for seconds on a task where order matters.

:class:`TinySelfAttention` is a real single-head attention layer (W_q, W_k, W_v,
W_o as ``nn.Linear``) that calls :func:`poslib.attention`, so the notebooks can
permute its input and watch what happens, with or without a causal mask and
with or without positions added.

:func:`train_offset_copy` trains a one-layer model whose only source of order
is a :class:`~poslib.learned.LearnedPositionalEmbedding` (or a fixed sinusoidal
table) on *offset copy*: the target at position m is the token at m − offset.
No bag-of-tokens model can do that, so the learned table must come to encode
position. Training uses Adam without weight decay: a row whose position
never occurs gets an exactly zero gradient and therefore stays, bit for bit,
at its random initialisation, which is the fact notebook 02 checks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from .._backend import check_choice, check_positive, check_positive_int
from ..alibi import alibi_slopes
from ..attn import attention
from ..learned import LearnedPositionalEmbedding
from ..rope import apply_rope, rope_frequencies
from ..sinusoidal import sinusoidal_encode
from ..t5 import t5_relative_bucket

__all__ = [
    "PINYIN",
    "SCORE_SCHEMES",
    "WORDS",
    "OffsetCopyModel",
    "OffsetCopyResult",
    "SeedOutcome",
    "TinySelfAttention",
    "offset_copy_accuracy",
    "offset_copy_batch",
    "offset_copy_over_seeds",
    "position_blind_accuracy",
    "position_scores",
    "position_spans",
    "shift_gap",
    "train_offset_copy",
    "word_vectors",
]


WORDS = ("我", "爱", "你")  # "I love you"; reordered to 你 爱 我 it means "you love me"
PINYIN = ("wǒ", "ài", "nǐ")  # figure labels: matplotlib's default font has no CJK glyphs


def word_vectors(dim: int = 8, *, seed: int = 0) -> torch.Tensor:
    """Seeded float64 embeddings ``(3, dim)`` for :data:`WORDS`, row i for word i."""
    check_positive_int("dim", dim)
    return torch.randn(len(WORDS), dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


class TinySelfAttention(nn.Module):
    """One head of self-attention with an output projection, seeded: ``forward(x) -> (out, weights)``.

    ``x`` has shape ``(..., L, dim)``. Positions are *not* added here; callers
    add them to ``x`` first (absolute schemes) or pass ``bias`` (relative ones).
    """

    def __init__(self, dim: int, *, seed: int = 0) -> None:
        super().__init__()
        check_positive_int("dim", dim)
        gen = torch.Generator().manual_seed(seed)
        self.dim = dim
        self.w_q, self.w_k, self.w_v, self.w_o = (
            nn.Linear(dim, dim, bias=False, dtype=torch.float64) for _ in range(4)
        )
        with torch.no_grad():  # seeded independently of the global RNG, so the layer is the same in any notebook
            for lin in (self.w_q, self.w_k, self.w_v, self.w_o):
                lin.weight.copy_(torch.randn(dim, dim, generator=gen, dtype=torch.float64) / math.sqrt(dim))

    def forward(
        self, x: torch.Tensor, *, causal: bool = False, bias: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(W_o · attention output, weights)`` for token vectors ``x`` (float64, ``(..., L, dim)``)."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch tensor, got {type(x).__name__}")
        if x.shape[-1] != self.dim:
            raise ValueError(f"x must have last dimension {self.dim}, got shape {tuple(x.shape)}")
        out, weights = attention(self.w_q(x), self.w_k(x), self.w_v(x), bias=bias, causal=causal)
        return self.w_o(out), weights


def offset_copy_batch(
    batch: int, length: int, vocab: int, offset: int, *, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens ``(batch, length)`` and targets: token at m − offset, or −100 (ignored) where m < offset."""
    for name, value in (("batch", batch), ("length", length), ("vocab", vocab), ("offset", offset)):
        check_positive_int(name, value)
    if offset >= length:
        raise ValueError(f"offset must be smaller than length, got offset={offset}, length={length}")
    tokens = torch.randint(vocab, (batch, length), generator=generator)
    targets = torch.full_like(tokens, -100)
    targets[:, offset:] = tokens[:, :-offset]
    return tokens, targets


class OffsetCopyModel(nn.Module):
    """Token embedding + position vector → one attention layer (residual) → logits over the vocabulary.

    ``scheme="learned"`` uses a trainable ``(max_len, dim)`` table,
    ``"sinusoidal"`` the fixed table, ``"none"`` no positions at all.
    """

    def __init__(self, vocab: int, dim: int, max_len: int, *, scheme: str = "learned") -> None:
        super().__init__()
        check_positive_int("vocab", vocab)
        check_positive_int("dim", dim)
        check_positive_int("max_len", max_len)
        check_choice("scheme", scheme, ("learned", "sinusoidal", "none"))
        self.scheme = scheme
        self.tok = nn.Embedding(vocab, dim)
        self.pos = LearnedPositionalEmbedding(max_len, dim) if scheme == "learned" else None
        self.q, self.k, self.v = (nn.Linear(dim, dim, bias=False) for _ in range(3))
        self.out = nn.Linear(dim, vocab)

    def positions(self, length: int) -> torch.Tensor:
        """The ``(length, dim)`` position vectors added to the tokens (zeros for ``"none"``)."""
        idx = torch.arange(length)
        if self.pos is not None:
            return self.pos(idx)
        if self.scheme == "sinusoidal":
            return sinusoidal_encode(idx, self.tok.embedding_dim).float()
        return torch.zeros(length, self.tok.embedding_dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, L, vocab)`` for integer ``tokens`` ``(batch, L)``."""
        h = self.tok(tokens) + self.positions(tokens.shape[-1])  # injection by addition: x_m + p_m
        out, _ = attention(self.q(h), self.k(h), self.v(h))
        return self.out(h + out)


@torch.no_grad()
def _adam_step(
    params: list[nn.Parameter],
    moments: list[tuple[torch.Tensor, torch.Tensor]],
    step: int,
    lr: float,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
) -> None:
    """Adam (Kingma & Ba 2015), no weight decay, written out: torch.optim's first step imports torch._dynamo,
    which costs seconds in a fresh notebook kernel. A zero gradient leaves both moments at 0, so the step is 0."""
    b1, b2 = betas
    for p, (m, v) in zip(params, moments, strict=True):
        g = p.grad
        assert g is not None, "every parameter has a gradient after backward()"
        m.mul_(b1).add_(g, alpha=1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        m_hat = m / (1 - b1**step)
        v_hat = v / (1 - b2**step)
        p.sub_(lr * m_hat / (v_hat.sqrt() + eps))


@dataclass
class OffsetCopyResult:
    """What :func:`train_offset_copy` returns: the model, its table before and after, and the loss curve."""

    model: OffsetCopyModel
    initial_table: torch.Tensor | None
    losses: list[float] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def table(self) -> torch.Tensor | None:
        """The trained ``(max_len, dim)`` table (a detached copy), or None for a fixed scheme."""
        return None if self.model.pos is None else self.model.pos.weight.detach().clone()


def train_offset_copy(
    *,
    scheme: str = "learned",
    max_len: int = 32,
    train_len: int = 24,
    vocab: int = 16,
    dim: int = 32,
    offset: int = 3,
    steps: int = 300,
    batch: int = 64,
    lr: float = 0.01,
    seed: int = 0,
) -> OffsetCopyResult:
    """Train :class:`OffsetCopyModel` on sequences of ``train_len`` tokens (rows ≥ train_len are never used).

    Seeded (model init and data); about a second on a 2-core CPU with the
    defaults, with Adam written out (no weight decay). The table starts from N(0, 0.02²) like BERT's and GPT-2's, so
    any structure in it was put there by training. Adam without weight decay: rows that are
    never used keep their initial values exactly.
    """
    for name, count in (("train_len", train_len), ("steps", steps), ("batch", batch)):
        check_positive_int(name, count)
    check_positive("lr", lr)
    if train_len > max_len:
        raise ValueError(f"train_len must be ≤ max_len, got train_len={train_len}, max_len={max_len}")
    threads = torch.get_num_threads()
    # a model this small is dominated by per-op overhead: extra threads only add contention (and variance)
    torch.set_num_threads(1)
    try:
        return _train(scheme, max_len, train_len, vocab, dim, offset, steps, batch, lr, seed)
    finally:
        torch.set_num_threads(threads)


def _train(
    scheme: str,
    max_len: int,
    train_len: int,
    vocab: int,
    dim: int,
    offset: int,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
) -> OffsetCopyResult:
    torch.manual_seed(seed)
    model = OffsetCopyModel(vocab, dim, max_len, scheme=scheme)
    initial = None if model.pos is None else model.pos.weight.detach().clone()
    gen = torch.Generator().manual_seed(seed + 1)
    params = list(model.parameters())
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    losses = []
    for step in range(1, steps + 1):
        tokens, targets = offset_copy_batch(batch, train_len, vocab, offset, generator=gen)
        loss = nn.functional.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
        for p in params:
            p.grad = None
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves backward() unannotated
        _adam_step(params, moments, step, lr)
        losses.append(loss.item())
    config = dict(
        scheme=scheme,
        max_len=max_len,
        train_len=train_len,
        vocab=vocab,
        dim=dim,
        offset=offset,
        steps=steps,
        batch=batch,
        lr=lr,
        seed=seed,
    )
    return OffsetCopyResult(model, initial, losses, config)


@torch.no_grad()
def offset_copy_accuracy(
    model: OffsetCopyModel, length: int, *, offset: int, vocab: int, batch: int = 256, seed: int = 123
) -> torch.Tensor:
    """Accuracy at each position ``(length,)`` on fresh sequences (NaN where m < offset: nothing to copy)."""
    if not isinstance(model, OffsetCopyModel):
        raise TypeError(f"model must be an OffsetCopyModel, got {type(model).__name__}")
    gen = torch.Generator().manual_seed(seed)
    tokens, targets = offset_copy_batch(batch, length, vocab, offset, generator=gen)
    hits = (model(tokens).argmax(-1) == targets).float().mean(0)
    hits[:offset] = float("nan")
    return hits


@dataclass(frozen=True)
class SeedOutcome:
    """One seed of :func:`offset_copy_over_seeds`: how a model trained at ``train_len`` scores, per position."""

    seed: int
    inside: float  # lowest accuracy at positions offset…train_len − 1, tested at train_len
    beyond: float  # mean accuracy at positions train_len…test_len − 1, tested at test_len
    back: tuple[int, ...]  # positions ≥ train_len at accuracy ≥ threshold, tested at test_len
    lost: tuple[int, ...]  # trained positions (offset…train_len − 1) below threshold, tested at test_len


def offset_copy_over_seeds(
    seeds: Iterable[int], *, test_len: int, threshold: float = 0.9, **train: Any
) -> list[SeedOutcome]:
    """Train :func:`train_offset_copy` once per seed (``train``: its other arguments) and score each model with
    :func:`offset_copy_accuracy` at its training length and at ``test_len``: what holds on every seed, and what
    depends on it (notebook 03: which positions past the training length come back)."""
    check_positive_int("test_len", test_len)
    outcomes = []
    for seed in seeds:
        result = train_offset_copy(**train, seed=seed)
        c = result.config
        if test_len <= c["train_len"]:
            raise ValueError(f"test_len must be > train_len, got test_len={test_len}, train_len={c['train_len']}")
        at_train = offset_copy_accuracy(result.model, c["train_len"], offset=c["offset"], vocab=c["vocab"])
        acc = offset_copy_accuracy(result.model, test_len, offset=c["offset"], vocab=c["vocab"])
        outcomes.append(
            SeedOutcome(
                seed=seed,
                inside=at_train[c["offset"] :].min().item(),
                beyond=acc[c["train_len"] :].mean().item(),
                back=tuple(m for m in range(c["train_len"], test_len) if acc[m] >= threshold),
                lost=tuple(m for m in range(c["offset"], c["train_len"]) if acc[m] < threshold),
            )
        )
    return outcomes


def position_spans(positions: Iterable[int]) -> str:
    """Sorted positions written as runs: ``[24, 33, 34, 35]`` → ``"24, 33–35"``; none → ``"none"``."""
    runs: list[list[int]] = []
    for m in sorted(positions):
        if runs and runs[-1][1] == m - 1:
            runs[-1][1] = m
        else:
            runs.append([m, m])
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in runs) or "none"


@torch.no_grad()
def position_blind_accuracy(length: int, *, offset: int, vocab: int, batch: int = 256, seed: int = 123) -> torch.Tensor:
    """Accuracy at each position ``(length,)`` of the best guess that ignores positions, on the same data.

    Without positions a model sees each sequence as a bag of tokens, so about the best it can do at every
    position is to name the bag's most frequent token (ties: the smallest token id). Strictly, the best
    guess is the most frequent among the *other* tokens, since the query's own token reaches the output
    through the residual; the two score within a fraction of a percent. This scores that
    guess on exactly the sequences :func:`offset_copy_accuracy` draws for the same ``length``,
    ``offset``, ``vocab``, ``batch`` and ``seed`` (NaN where m < offset: nothing to copy).
    """
    gen = torch.Generator().manual_seed(seed)
    tokens, targets = offset_copy_batch(batch, length, vocab, offset, generator=gen)
    counts = nn.functional.one_hot(tokens, vocab).sum(dim=1)  # (batch, vocab): each sequence's own counts
    guess = counts.argmax(dim=-1)  # first maximum: the smallest token id among ties
    hits = (targets == guess[:, None]).float().mean(0)
    hits[:offset] = float("nan")
    return hits


SCORE_SCHEMES = ("none", "learned", "sinusoidal", "rope", "t5", "alibi")
_LEARNED_ROWS = 4096


def position_scores(scheme: str, x: np.ndarray, positions: np.ndarray, *, seed: int = 0) -> np.ndarray:
    """Attention scores ``(L, L)`` of content rows ``x`` (L, d) placed at ``positions`` under ``scheme``.

    One seeded W_q, W_k (and, per scheme, a seeded learned table of 4096 rows,
    a T5 bucket table, ALiBi's one-head slope), so that calls differing only in
    ``positions`` are comparable. Absolute schemes add a vector to x before the
    projections; RoPE rotates q and k; T5 and ALiBi add a bias to the scores.
    """
    check_choice("scheme", scheme, SCORE_SCHEMES)
    x = np.asarray(x, dtype=np.float64)
    pos = np.asarray(positions)
    if x.ndim != 2 or pos.shape != (x.shape[0],):
        raise ValueError(f"x must be (L, d) and positions (L,), got {x.shape} and {pos.shape}")
    if pos.dtype.kind not in "iu":
        raise TypeError(f"positions must be integers, got dtype {pos.dtype}")
    if scheme == "learned" and len(pos) and (pos.min() < 0 or pos.max() >= _LEARNED_ROWS):
        raise ValueError(
            f"positions must lie in [0, {_LEARNED_ROWS}) for the learned table, got {pos.min()} … {pos.max()}"
        )
    d = x.shape[1]
    rng = np.random.default_rng(seed)
    w_q, w_k = rng.standard_normal((2, d, d)) / math.sqrt(d)
    if scheme == "learned":
        x = x + rng.standard_normal((_LEARNED_ROWS, d))[pos]
    elif scheme == "sinusoidal":
        x = x + sinusoidal_encode(pos, d)
    q, k = x @ w_q, x @ w_k
    if scheme == "rope":
        inv_freq = rope_frequencies(d)
        q, k = apply_rope(q, pos, inv_freq), apply_rope(k, pos, inv_freq)
    scores = q @ k.T / math.sqrt(d)
    rel = pos[None, :] - pos[:, None]  # key − query
    if scheme == "t5":
        scores = scores + rng.standard_normal(32)[t5_relative_bucket(rel)]
    elif scheme == "alibi":
        scores = scores - alibi_slopes(1)[0] * np.abs(rel)
    return scores


def shift_gap(scheme: str, x: np.ndarray, shift: int, *, seed: int = 0) -> float:
    """max |scores at positions 0…L−1 − scores at shift…shift+L−1|: 0 for a relative scheme, whatever the content."""
    if isinstance(shift, bool) or not isinstance(shift, (int, np.integer)):
        raise TypeError(f"shift must be an integer, got {shift!r}")
    n = len(x)
    base = np.arange(n)
    return float(
        np.abs(position_scores(scheme, x, base, seed=seed) - position_scores(scheme, x, base + shift, seed=seed)).max()
    )
