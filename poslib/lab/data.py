"""The lab's corpus: the Python standard library's own ``.py`` sources, read as bytes.

Every Python installation carries them, so the lab needs no download. The
corpus is byte-level (vocabulary 256: a token is one byte, so any file is
valid input and nothing needs a tokenizer).

What is read, exactly:

* every ``*.py`` file below ``sysconfig.get_paths()["stdlib"]``, in sorted
  order of its path relative to that folder;
* except anything inside a ``site-packages``/``dist-packages`` folder
  (third-party code, different on every machine) or a ``test``/``tests``/
  ``idle_test`` folder (the test suite: 19 MB of mostly repetitive asserts);
* files are joined with one blank line between them.

The split is by file and fixed: a file belongs to the validation split when
``zlib.crc32(relative_path) % 10 == 0`` (about one file in ten), to the training
split otherwise. Hashing the path (not its rank) keeps the split of every file
the same when another Python version adds or removes files.

Evaluation spans (:func:`eval_spans`) are cut at evenly spaced offsets across
the whole validation split, so they sample many files, not one.
"""

from __future__ import annotations

import pathlib
import sysconfig
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["Corpus", "batch_generator", "eval_spans", "load_stdlib_corpus", "stdlib_files"]

EXCLUDED_DIRS = frozenset({"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"})
VAL_MODULUS = 10  # one file in VAL_MODULUS goes to validation


@dataclass(frozen=True)
class Corpus:
    """Train and validation byte streams (uint8 tensors) and where they came from."""

    train: torch.Tensor
    val: torch.Tensor
    root: str
    n_train_files: int
    n_val_files: int

    def describe(self) -> dict[str, Any]:
        """Sizes and provenance for the results file (no absolute path: results should compare across machines)."""
        return {
            "source": "Python standard library *.py sources (tests and site-packages excluded)",
            "python_stdlib": "sysconfig.get_paths()['stdlib']",
            "split": f"zlib.crc32(relative path) % {VAL_MODULUS} == 0 -> validation",
            "train_bytes": int(self.train.numel()),
            "val_bytes": int(self.val.numel()),
            "train_files": self.n_train_files,
            "val_files": self.n_val_files,
        }


def stdlib_files(root: str | pathlib.Path | None = None) -> list[pathlib.Path]:
    """The corpus files, sorted by relative path (see the module docstring for what is left out)."""
    root = pathlib.Path(root if root is not None else sysconfig.get_paths()["stdlib"])
    if not root.is_dir():
        raise ValueError(f"root must be a directory with Python sources, got {str(root)!r}")
    files = [
        p for p in root.rglob("*.py") if p.is_file() and not EXCLUDED_DIRS.intersection(p.relative_to(root).parts[:-1])
    ]
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def is_validation(relative_path: str) -> bool:
    """The fixed split rule: crc32 of the POSIX relative path, modulo 10, equals 0."""
    return zlib.crc32(relative_path.encode("utf-8")) % VAL_MODULUS == 0


def load_stdlib_corpus(root: str | pathlib.Path | None = None) -> Corpus:
    """Read the standard library sources into a train and a validation byte stream."""
    root = pathlib.Path(root if root is not None else sysconfig.get_paths()["stdlib"])
    parts: dict[bool, list[bytes]] = {False: [], True: []}
    for path in stdlib_files(root):
        parts[is_validation(path.relative_to(root).as_posix())].append(path.read_bytes())
    if not parts[False] or not parts[True]:
        raise ValueError(f"root {str(root)!r} holds too few .py files for a train/validation split")

    def stream(chunks: list[bytes]) -> torch.Tensor:
        data = bytearray(b"\n\n".join(chunks))
        return torch.frombuffer(data, dtype=torch.uint8).clone()

    return Corpus(stream(parts[False]), stream(parts[True]), str(root), len(parts[False]), len(parts[True]))


def batch_generator(
    data: torch.Tensor, batch_size: int, seq_len: int, seed: int
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Endless ``(x, y)`` batches of random windows, ``y`` = ``x`` shifted by one byte.

    The offsets come from a private ``torch.Generator`` seeded with ``seed``, so
    every scheme trained with the same seed sees exactly the same bytes in the
    same order, whatever the model's own random draws.
    """
    if data.numel() <= seq_len + 1:
        raise ValueError(f"data has {data.numel()} bytes, too few for windows of seq_len={seq_len}")
    gen = torch.Generator().manual_seed(seed)
    while True:
        starts = torch.randint(0, data.numel() - seq_len - 1, (batch_size,), generator=gen)
        window = torch.stack([data[s : s + seq_len + 1] for s in starts.tolist()]).long()
        yield window[:, :-1], window[:, 1:]


def eval_spans(data: torch.Tensor, n_spans: int, span_len: int) -> torch.Tensor:
    """``(n_spans, span_len + 1)`` spans at evenly spaced, non-overlapping offsets across ``data``.

    At evaluation length L each span is cut into span_len / L windows, so every
    length scores exactly the same bytes; only the context each byte sees changes.
    """
    need = n_spans * (span_len + 1)
    if data.numel() < need:
        raise ValueError(f"validation data has {data.numel()} bytes; {n_spans} spans of {span_len + 1} need {need}")
    stride = (data.numel() - (span_len + 1)) // max(n_spans - 1, 1)
    return torch.stack([data[i * stride : i * stride + span_len + 1] for i in range(n_spans)]).long()


def heldout_spans(data: torch.Tensor, n_test_spans: int, span_len: int, n_spans: int) -> torch.Tensor:
    """``(n_spans, span_len + 1)`` validation spans that overlap none of :func:`eval_spans`'s test spans.

    They sit halfway between consecutive test spans (the first ``n_spans`` gaps), so choosing a factor or
    watching a fine-tune's loss on them never looks at the bytes the verdicts are scored on.
    """
    need = n_test_spans * (span_len + 1)
    if data.numel() < need:
        raise ValueError(
            f"validation data has {data.numel()} bytes; {n_test_spans} spans of {span_len + 1} need {need}"
        )
    stride = (data.numel() - (span_len + 1)) // max(n_test_spans - 1, 1)
    if stride < 2 * (span_len + 1):
        raise ValueError(f"no room between the test spans (stride {stride}) for held-out spans of {span_len + 1} bytes")
    if not 1 <= n_spans <= n_test_spans - 1:
        raise ValueError(f"n_spans must be between 1 and {n_test_spans - 1} (the gaps), got {n_spans!r}")
    starts = [i * stride + stride // 2 for i in range(n_spans)]
    return torch.stack([data[a : a + span_len + 1] for a in starts]).long()
