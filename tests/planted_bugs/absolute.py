"""Planted bugs in absolute and relative encodings: sinusoidal, learned, T5, DeBERTa, Transformer-XL, the causal mask.

Each is a mistake real code has made or that a reader of the sources would make; the notebooks 00–04 and the unit
tests named with it must catch it.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import torch

import poslib.deberta as deberta
import poslib.learned as learned
import poslib.sinusoidal as sinusoidal
import poslib.t5 as t5
import poslib.transformer_xl as transformer_xl

from . import bug, swap

attn = importlib.import_module("poslib.attn")

NB00, NB01, NB02, NB03, NB04 = (
    "notebooks/00_tour.ipynb",
    "notebooks/01_why_position.ipynb",
    "notebooks/02_learned_absolute.ipynb",
    "notebooks/03_sinusoidal.ipynb",
    "notebooks/04_relative.ipynb",
)


def _index(out: Any, perm: np.ndarray) -> Any:
    return out[..., torch.as_tensor(perm, device=out.device)] if isinstance(out, torch.Tensor) else out[..., perm]


@bug(
    "sinusoidal_sin_cos_swapped",
    "sinusoidal table with cos where sin belongs and sin where cos belongs",
    tests=("tests/test_sinusoidal.py",),
    notebooks=(NB03,),
    thread="lucidrains/denoising-diffusion-pytorch#76",
)
def _sin_cos_swapped() -> None:
    original = sinusoidal.sinusoidal_encode

    def wrong(positions: Any, dim: int, base: float = 10000.0, *, layout: str = "interleaved") -> Any:
        out = original(positions, dim, base, layout=layout)
        half = dim // 2
        if layout == "concat":
            perm = np.r_[half:dim, 0:half]
        else:
            perm = np.arange(dim).reshape(half, 2)[:, ::-1].ravel()
        return _index(out, perm)

    swap(original, wrong)


@bug(
    "sinusoidal_t2t_spacing",
    "sinusoidal frequencies spaced 10000^(−i/(d/2−1)) (tensor2tensor/fairseq) instead of the paper's 10000^(−2i/d)",
    tests=("tests/test_sinusoidal.py",),
    notebooks=(NB03,),
    thread="fairseq sinusoidal_positional_embedding docstring; huggingface/blog#2183",
)
def _t2t_spacing() -> None:
    original = sinusoidal._frequencies  # sinusoidal_frequencies and sinusoidal_encode both read it

    def wrong(dim: int, base: float, xp: Any, device: Any) -> Any:
        paper = original(dim, base, xp, device)  # ω_i = base^(−2i/d); rescale the exponent to i/(d/2 − 1)
        half = dim // 2
        return paper ** ((dim / 2) / max(half - 1, 1)) if half > 1 else paper

    swap(original, wrong)


@bug(
    "learned_lookup_clamps",
    "learned table lookup clamps positions beyond L_max to the last row instead of raising",
    tests=("tests/test_learned.py",),
    notebooks=(NB00, NB02),
)
def _learned_clamps() -> None:
    original = learned.learned_lookup

    def wrong(table: Any, positions: Any) -> Any:
        n = table.shape[0]
        if isinstance(table, torch.Tensor):
            idx = torch.as_tensor(positions, device=table.device)
            if not idx.is_floating_point():
                positions = idx.clamp(0, n - 1)
        else:
            idx = np.asarray(positions)
            if idx.dtype.kind in "iu":
                positions = np.clip(idx, 0, n - 1)
        return original(table, positions)

    swap(original, wrong)


@bug(
    "t5_query_minus_key",
    "T5 relative position computed as query − key instead of key − query",
    tests=("tests/test_t5.py",),
    notebooks=(NB04,),
    thread="memory_position − context_position in transformers' T5 compute_bias",
)
def _t5_sign() -> None:
    original = t5.t5_relative_positions

    def wrong(*args: Any, **kw: Any) -> Any:
        return -original(*args, **kw)

    swap(original, wrong)


@bug(
    "t5_bidirectional_not_halved",
    "T5 bidirectional buckets: num_buckets not halved per direction, so buckets run past num_buckets",
    tests=("tests/test_t5.py",),
    notebooks=(NB04,),
)
def _t5_halving() -> None:
    original = t5.t5_relative_bucket

    def wrong(relative_position: Any, *, bidirectional: bool = True, num_buckets: int = 32, **kw: Any) -> Any:
        if bidirectional:  # the // 2 forgotten: each direction gets all num_buckets
            return original(relative_position, bidirectional=True, num_buckets=2 * num_buckets, **kw)
        return original(relative_position, bidirectional=False, num_buckets=num_buckets, **kw)

    swap(original, wrong)


@bug(
    "deberta_p2c_delta_ij",
    "DeBERTa position→content reads row δ(i, j) when the paper's δ(j, i) is asked for",
    tests=("tests/test_deberta.py",),
    notebooks=(NB04,),
    thread="microsoft/DeBERTa#47",
)
def _deberta_p2c() -> None:
    original = deberta.deberta_score_terms  # deberta_scores sums them

    def wrong(*args: Any, p2c_index: str = "paper", **kw: Any) -> Any:
        return original(*args, p2c_index="code", **kw)

    swap(original, wrong)


@bug(
    "deberta_scale_sqrt_d",
    "DeBERTa scores scaled by 1/√d instead of 1/√(3d)",
    tests=("tests/test_deberta.py",),
    notebooks=(NB04,),
)
def _deberta_scale() -> None:
    original = deberta.deberta_scores

    def wrong(*args: Any, **kw: Any) -> Any:
        return original(*args, **kw) * math.sqrt(3)  # (c2c + c2p + p2c) / √d

    swap(original, wrong)


@bug(
    "deberta_log_bucket_mid",
    "DeBERTa-v2 log buckets scaled by mid instead of mid − 1: the top bucket is ±256 at |r| = 511, not ±255",
    tests=("tests/test_deberta.py",),
    notebooks=(NB04,),
)
def _deberta_log_bucket() -> None:
    original = deberta.deberta_log_bucket

    def wrong(relative_position: Any, bucket_size: int, max_position: int) -> Any:
        rel = np.asarray(relative_position, dtype=np.float64)
        mid = bucket_size // 2
        sign = np.sign(rel)
        abs_pos = np.where((rel < mid) & (rel > -mid), mid - 1, np.abs(rel))
        log_pos = np.ceil(np.log(abs_pos / mid) / math.log((max_position - 1) / mid) * mid) + mid  # mid − 1 intended
        out = np.where(abs_pos <= mid, rel, log_pos * sign).astype(np.int64)
        return torch.as_tensor(out) if isinstance(relative_position, torch.Tensor) else out

    swap(original, wrong)


@bug(
    "causal_mask_hides_diagonal",
    "causal mask hides the diagonal too (j < i instead of j ≤ i): a token cannot attend to itself",
    tests=(
        "tests/test_attn.py",
        "tests/test_transformer_xl.py",
    ),
    notebooks=(NB01,),
)
def _causal_diagonal() -> None:
    original = attn._causal_mask  # causal_mask and mask_future both read it

    def wrong(q_len: int, k_len: int | None, xp: Any, device: Any) -> Any:
        return attn._relative_distance(q_len, k_len, xp, device) < 0

    swap(original, wrong)


@bug(
    "causal_mask_sees_next",
    "causal mask off by one the other way (j ≤ i + 1): each query sees one future token",
    tests=("tests/test_attn.py",),
    notebooks=(NB01,),
)
def _causal_next() -> None:
    original = attn._causal_mask  # causal_mask and mask_future both read it

    def wrong(q_len: int, k_len: int | None, xp: Any, device: Any) -> Any:
        return attn._relative_distance(q_len, k_len, xp, device) <= 1

    swap(original, wrong)


@bug(
    "transformer_xl_r_j_minus_i",
    "Transformer-XL encodings R_{j−i} instead of R_{i−j}",
    tests=("tests/test_transformer_xl.py",),
    notebooks=(NB04,),
)
def _xl_sign() -> None:
    original = transformer_xl.transformer_xl_encodings

    def wrong(q_len: int, k_len: int | None, dim: int, **kw: Any) -> Any:
        offsets = transformer_xl.transformer_xl_offsets(
            q_len, k_len, backend=kw.get("backend", "numpy"), device=kw.get("device")
        )
        return sinusoidal.sinusoidal_encode(-offsets, dim, kw.get("base", 10000.0), layout="concat")

    swap(original, wrong)
