"""Passkey retrieval: a short numeric key hidden in filler text, asked for at the end.

The test of Landmark Attention (Mohtashami & Jaggi, 2023) and of Position Interpolation
(Chen et al., 2023), written for a byte-level model. A sequence of ``length`` bytes is::

    <filler …> key=48213. <filler …> key=48213
               ^ the needle, at a chosen depth       ^ the question, with the answer's digits last

The filler is the usual sentence repeated ("The grass is green. The sky is blue. …"), started at a
random phase so that no byte position is special; it holds no digit. The depth is the share of the
filler that comes before the needle: 0 % puts it at the start, 100 % right before the question.
Only the answer's digits are scored: a sequence counts as retrieved when the model's most likely
byte is the right digit at every answer position, given the bytes before it (teacher forcing). That is
exactly when greedy decoding would write the whole key, so it is the usual exact-match accuracy.

:func:`passkey_batch` draws training sequences (random depth) and test sequences (a given depth)
from a ``numpy.random.Generator``, so every scheme and seed is scored on the same keys.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["FILLER", "passkey_batch", "passkey_layout"]

FILLER = b"The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
NEEDLE, QUESTION = b" key=", b" key="  # the needle ends with "." after its digits; the question with the digits


def passkey_layout(length: int, key_digits: int) -> tuple[int, int]:
    """``(needle_len, filler_len)`` of a ``length``-byte sequence; ValueError when the key does not fit."""
    needle = len(NEEDLE) + key_digits + 1
    filler = length + 1 - needle - len(QUESTION) - key_digits
    if filler < 0:
        raise ValueError(f"length must be at least {length - filler} bytes for a {key_digits}-digit key, got {length}")
    return needle, filler


def passkey_batch(
    n: int, length: int, key_digits: int, rng: np.random.Generator, depth: float | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x, y)`` of ``n`` passkey sequences of ``length`` bytes, ``y`` = ``x`` shifted by one byte.

    The answer is ``y[:, -key_digits:]``. ``depth`` in [0, 1] places the needle (module
    docstring); None draws one uniformly per sequence (training).
    """
    if depth is not None and not 0 <= depth <= 1:
        raise ValueError(f"depth must be in [0, 1] or None, got {depth!r}")
    _, filler_len = passkey_layout(length, key_digits)
    filler = np.frombuffer(FILLER * (filler_len // len(FILLER) + 2), dtype=np.uint8)
    rows = np.empty((n, length + 1), dtype=np.int64)
    for i in range(n):
        key = rng.integers(0, 10, key_digits) + ord("0")
        phase = int(rng.integers(0, len(FILLER)))
        d = rng.random() if depth is None else depth
        before = round(d * filler_len)
        text = filler[phase : phase + filler_len]
        rows[i] = np.concatenate(
            [
                text[:before],
                np.frombuffer(NEEDLE, np.uint8),
                key,
                [ord(".")],
                text[before:],
                np.frombuffer(QUESTION, np.uint8),
                key,
            ]
        )
    data = torch.from_numpy(rows)
    return data[:, :-1], data[:, 1:]
