"""Planted bugs in the score-side schemes: ALiBi, KERPLE, Sandwich, and log-n scaling of the logits."""

from __future__ import annotations

import math
from typing import Any

import poslib.alibi as alibi
import poslib.kerple as kerple
import poslib.logn as logn
import poslib.sandwich as sandwich

from . import bug, swap


@bug(
    "alibi_pow2_slopes",
    "ALiBi slopes 2^(−8h/n) for every head count, also when n is not a power of two",
    tests=("tests/test_alibi.py",),
    notebooks=("notebooks/07_alibi.ipynb",),
    thread="huggingface/transformers#28380",
)
def _alibi_pow2_slopes() -> None:
    original = alibi._slopes  # alibi_slopes and alibi_bias both read it

    def wrong(n_heads: int) -> list[float]:
        return [2.0 ** (-8.0 * h / n_heads) for h in range(1, n_heads + 1)]

    swap(original, wrong)


@bug(
    "alibi_sign",
    "ALiBi bias +m·|i − j|: the minus sign lost, far keys favoured",
    tests=(
        "tests/test_alibi.py",
        "tests/test_kerple.py",
    ),
    notebooks=("notebooks/07_alibi.ipynb", "notebooks/06_length_extrapolation.ipynb"),
    thread="Press et al. 2022 (ALiBi), the penalty −m·(i − j)",
)
def _alibi_sign() -> None:
    original = alibi.alibi_bias

    def wrong(n_heads: int, q_len: int, k_len: int | None = None, **kw: Any) -> Any:
        return _flip_finite(original(n_heads, q_len, k_len, **kw))

    swap(original, wrong)


def _flip_finite(bias: Any) -> Any:
    """−bias on finite entries, masked (−inf) entries kept (NumPy or torch)."""
    try:
        import torch

        if isinstance(bias, torch.Tensor):
            return torch.where(torch.isinf(bias), bias, -bias)
    except ImportError:  # pragma: no cover
        pass
    import numpy as np

    return np.where(np.isinf(bias), bias, -bias)


@bug(
    "kerple_log_sign",
    "KERPLE log kernel +r₁·ln(1 + r₂|i − j|): sign lost, no longer a CPD penalty",
    tests=("tests/test_kerple.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="Chi et al. 2022 (KERPLE), the log variant −r₁·log(1 + r₂|m − n|)",
)
def _kerple_log_sign() -> None:
    original = kerple.kerple_bias

    def wrong(
        r1: Any, r2: Any, q_len: int, k_len: int | None = None, *, kind: str = "log", causal: bool = False, **kw: Any
    ) -> Any:
        bias = original(r1, r2, q_len, k_len, kind=kind, causal=False, **kw)
        if kind == "log":
            bias = -bias
        return kerple.mask_future(bias) if causal else bias

    swap(original, wrong)


@bug(
    "sandwich_divisor",
    "Sandwich's per-head factor 8h/H applied as a multiplier instead of a divisor",
    tests=("tests/test_sandwich.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="Chi et al. 2023 (Sandwich, arXiv:2212.10356); NVIDIA NeMo's SandwichRelativePositionEmbedding",
)
def _sandwich_divisor() -> None:
    original = sandwich.sandwich_bias

    def wrong(n_heads: int, dim: int, q_len: int, k_len: int | None = None, **kw: Any) -> Any:
        right = original(n_heads, dim, q_len, k_len, **kw)
        import numpy as np

        factor = (8 * np.arange(1, n_heads + 1) / n_heads) ** 2  # ÷(8h/H) turned into ×(8h/H)
        if not isinstance(right, np.ndarray):
            import torch

            factor = torch.as_tensor(factor, dtype=right.dtype, device=right.device)
        return right * factor[:, None, None]

    swap(original, wrong)


@bug(
    "logn_natural_log",
    "log-n scaling max(1, ln n): the natural log used instead of log_L n (ln n / ln L)",
    tests=(
        "tests/test_logn.py",
        "tests/test_teaching_entropy.py",
    ),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="Su 2021, kexue.fm/archives/8823 (log_512 n)",
)
def _logn_natural_log() -> None:
    original = logn.logn_scale

    def wrong(n: Any, train_len: float) -> Any:
        import numpy as np

        if isinstance(n, np.ndarray):
            return np.maximum(1.0, np.log(n.astype(np.float64)))
        if hasattr(n, "double"):
            return n.double().log().clamp(min=1.0)
        return max(1.0, math.log(n))

    swap(original, wrong)
