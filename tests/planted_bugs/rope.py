"""Planted bugs in RoPE and its scaling family (poslib.rope, poslib.rope_scaling, poslib.xpos)."""

from __future__ import annotations

from typing import Any

import poslib.rope as rope

from . import bug, swap


@bug(
    "rope_theta_sign",
    "RoPE frequencies base^(+2i/d): the exponent's minus sign lost",
    tests=("tests/test_rope.py",),
    notebooks=("notebooks/05_rope.ipynb",),
    thread="labmlai/annotated_deep_learning_paper_implementations#313",
)
def _rope_theta_sign() -> None:
    original = rope.rope_frequencies

    def wrong(head_dim: int, base: float = 10000.0, **kw: Any) -> Any:
        return 1.0 / original(head_dim, base, **kw)  # base^(+2i/d) instead of base^(-2i/d)

    swap(original, wrong)
