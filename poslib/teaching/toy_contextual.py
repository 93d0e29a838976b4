"""Toy tasks for notebook 10: counted positions (CoPE) against token positions, and what NoPE learns.

**Word recall.** A sequence is a run of *words*: each word is one capital letter (ids 0–7)
followed by 0–7 lowercase filler letters (ids 8–15), left-padded to a fixed length. The last
token asks "which capital starts the k-th word from the end?" (k = 1, 2, 3). In *words* the
answer is always at the same place (k words back); in *tokens* it moves with the lengths of
the later words. A one-layer model with CoPE can count capitals (gates open on them) and look
up position k; with RoPE it sees only token distances.

**Position probe.** A causal NoPE layer reads a sequence that starts with a BOS token and must
output its own position m as a number. Uniform attention over the m + 1 visible tokens puts
weight 1/(m + 1) on BOS (notebook 01); a trained layer learns a weight w(m) that falls with m
the same way, and an MLP turns it into m, but only for the values of w it saw in training.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .._backend import check_choice, check_positive_int
from ..attn import attention
from ..cope import CoPE, cope_positions
from ..rope import apply_rope, rope_frequencies

__all__ = [
    "N_CAPITALS",
    "PositionProbe",
    "WordRecallModel",
    "position_probe_batch",
    "train_position_probe",
    "train_word_recall",
    "word_recall_accuracy",
    "word_recall_batch",
]

N_CAPITALS = 8  # capitals 0–7 (the answers), lowercase 8–15, PAD 16, query tokens 17 …
_PAD = 16
RECALL_SCHEMES = ("cope", "rope", "nope")


def word_recall_batch(
    batch: int, rng: np.random.Generator, *, n_words: int = 5, max_len: int = 8, k_max: int = 3
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x, y, k)``: token ids ``(batch, n_words·max_len + 1)``, the answer's capital, the k asked.

    Word lengths are uniform in 1 … max_len, so the token distance from the query back to the
    k-th word's capital varies from k to k·max_len.
    """
    check_positive_int("batch", batch)
    if k_max > n_words:
        raise ValueError(f"k_max ({k_max}) must be ≤ n_words ({n_words})")
    T = n_words * max_len + 1
    lengths = rng.integers(1, max_len + 1, (batch, n_words))
    capitals = rng.integers(0, N_CAPITALS, (batch, n_words))
    filler = rng.integers(N_CAPITALS, 2 * N_CAPITALS, (batch, n_words))
    ks = rng.integers(1, k_max + 1, batch)
    # every word = its capital once, then its filler letter (length − 1) times; rows right-aligned
    tokens = np.stack([capitals, filler], -1).reshape(batch, -1)
    counts = np.stack([np.ones_like(lengths), lengths - 1], -1).reshape(batch, -1)
    total = counts.sum(1)
    flat = np.repeat(tokens.ravel(), counts.ravel())
    row = np.repeat(np.repeat(np.arange(batch), 2 * n_words), counts.ravel())
    start = np.concatenate([[0], np.cumsum(total)[:-1]])
    x = np.full((batch, T), _PAD)
    x[row, T - 1 - total[row] + np.arange(flat.size) - start[row]] = flat
    x[:, -1] = _PAD + ks
    y = capitals[np.arange(batch), n_words - ks]
    return torch.as_tensor(x), torch.as_tensor(y), torch.as_tensor(ks)


class WordRecallModel(nn.Module):
    """One attention layer (no MLP) read at the last token, then a linear map to the 8 capitals.

    ``scheme``: ``"cope"`` (gates = the attention logits, as in the CoPE paper), ``"rope"``
    (token positions, relative) or ``"nope"``.
    """

    def __init__(self, scheme: str, *, d_model: int = 32, n_heads: int = 4, max_pos: int = 8, k_max: int = 3) -> None:
        super().__init__()
        check_choice("scheme", scheme, RECALL_SCHEMES)
        self.scheme, self.n_heads, self.head_dim = scheme, n_heads, d_model // n_heads
        self.embed = nn.Embedding(_PAD + k_max + 1, d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.readout = nn.Linear(d_model, N_CAPITALS)
        self.cope = CoPE(max_pos, self.head_dim) if scheme == "cope" else None
        self.register_buffer("inv_freq", torch.tensor(rope_frequencies(self.head_dim), dtype=torch.float32))

    @torch.no_grad()
    def counted_positions(self, x: torch.Tensor) -> torch.Tensor:
        """CoPE's positions p_{T−1, j} of every key as seen from the last token, ``(B, n_heads, T)``."""
        if self.cope is None:
            raise ValueError(f"counted_positions needs a 'cope' model, not {self.scheme!r}")
        q, k, _ = self._qkv(x)
        logits = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        return cope_positions(logits, max_pos=self.cope.pos_emb.shape[0])[:, :, 0]

    def _qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        B, T = x.shape
        q, k, v = self.qkv(self.embed(x)).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        return q[:, :, -1:], k, v  # only the query token's output is read: one row of the attention matrix

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits over the capitals ``(B, 8)`` for token ids ``x`` ``(B, T)``."""
        return self.forward_with_weights(x)[0]

    def forward_with_weights(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits, weights)``: :meth:`forward`'s logits and the last token's attention ``(B, n_heads, T)``."""
        B, T = x.shape
        q, k, v = self._qkv(x)
        if self.scheme == "rope":
            positions = torch.arange(T, device=x.device)
            q = apply_rope(q, positions[-1:], self.inv_freq)
            k = apply_rope(k, positions, self.inv_freq)
        logits = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        if self.cope is not None:
            logits = logits + self.cope(q, logits)
        weights = logits.softmax(-1)
        out = self.readout((weights @ v).reshape(B, -1))
        return out, weights[:, :, 0]


def train_word_recall(
    scheme: str, *, steps: int = 200, batch: int = 64, lr: float = 1e-2, seed: int = 0
) -> tuple[WordRecallModel, list[float]]:
    """Train a :class:`WordRecallModel` with Adam; returns it (in eval mode) and the loss per step."""
    check_positive_int("steps", steps)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = WordRecallModel(scheme)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x, y, _k = word_recall_batch(batch, rng)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves backward() unannotated
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses


@torch.no_grad()
def word_recall_accuracy(model: WordRecallModel, *, n: int = 3000, seed: int = 999) -> dict[int, float]:
    """Accuracy per k on ``n`` fresh sequences (a generator seeded apart from training's)."""
    x, y, ks = word_recall_batch(n, np.random.default_rng(seed))
    correct = model(x).argmax(-1) == y
    return {int(k): float(correct[ks == k].float().mean()) for k in torch.unique(ks)}


BOS = 16  # the position probe's vocabulary: 16 random tokens and BOS


def position_probe_batch(batch: int, length: int, rng: np.random.Generator) -> torch.Tensor:
    """``(batch, length)`` random token ids 0–15 with BOS (16) at position 0."""
    x = torch.as_tensor(rng.integers(0, 16, (batch, length)))
    x[:, 0] = BOS
    return x


class PositionProbe(nn.Module):
    """Embedding → one causal attention head with no positional encoding → MLP → a number per token."""

    def __init__(self, d_model: int = 32, hidden: int = 64) -> None:
        super().__init__()
        self.embed = nn.Embedding(BOS + 1, d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The number read at every position, ``(B, T)``, for token ids ``x`` ``(B, T)``."""
        return self.forward_with_weights(x)[0]

    def forward_with_weights(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(out, weights)``: :meth:`forward`'s numbers and the causal attention weights ``(B, T, T)``."""
        q, k, v = self.qkv(self.embed(x)).chunk(3, dim=-1)
        y, weights = attention(q, k, v, causal=True)
        return self.mlp(y)[..., 0], weights


def train_position_probe(
    *, train_len: int = 32, steps: int = 300, batch: int = 64, lr: float = 3e-3, seed: int = 0
) -> tuple[PositionProbe, list[float]]:
    """Train a :class:`PositionProbe` to output m / train_len at position m (mean squared error)."""
    check_positive_int("train_len", train_len)
    check_positive_int("steps", steps)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = PositionProbe()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    target = torch.arange(train_len) / train_len
    losses = []
    for _ in range(steps):
        loss = ((model(position_probe_batch(batch, train_len, rng)) - target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses
