"""Planted bugs in RoPE and its scaling family (poslib.rope, poslib.rope_scaling, poslib.xpos)."""

from __future__ import annotations

from typing import Any

import poslib.rope as rope
import poslib.rope_scaling as scaling
import poslib.xpos as xpos

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


# ---------------------------------------------------------------- RoPE kernels (poslib.rope)


@bug(
    "rope_bf16_angles",
    "RoPE angles m·θ formed (and cos/sin taken) in the input's dtype (bfloat16/float16), not float64",
    tests=("tests/test_rope.py",),
    notebooks=("notebooks/05_rope.ipynb",),
    thread="huggingface/transformers#29285",
)
def _rope_bf16_angles() -> None:
    import numpy as np
    import torch

    original = rope.apply_rope

    def wrong(
        x: Any, positions: Any, inv_freq: Any, *, layout: str = "interleaved", attention_factor: float = 1.0, **kw: Any
    ) -> Any:
        low = (torch.bfloat16, torch.float16) if isinstance(x, torch.Tensor) else (np.float16,)
        if x.dtype not in low or kw.get("rotary_dim") is not None:
            return original(x, positions, inv_freq, layout=layout, attention_factor=attention_factor, **kw)
        scale = attention_factor
        if isinstance(x, torch.Tensor):
            pos = torch.as_tensor(positions).to(x.dtype)
            angles = pos[..., None] * torch.as_tensor(inv_freq).to(x.dtype)  # rounded in the low dtype
            cos, sin = torch.cos(angles).double(), torch.sin(angles).double()
        else:
            angles = np.asarray(positions).astype(x.dtype)[..., None] * np.asarray(inv_freq).astype(x.dtype)
            cos, sin = np.cos(angles).astype(np.float64), np.sin(angles).astype(np.float64)
        return rope._rotate_pairs(x, scale * cos, scale * sin, layout)

    swap(original, wrong)


@bug(
    "rope_layout_mixed",
    "half-split (rotate_half) input rotated as interleaved pairs: the layout argument ignored",
    tests=("tests/test_rope.py",),
    notebooks=("notebooks/05_rope.ipynb",),
    thread="huggingface/transformers#25199",
)
def _rope_layout_mixed() -> None:
    original = rope.rope_rotate  # apply_rope rotates through it too

    def wrong(x: Any, cos: Any, sin: Any, *, layout: str = "interleaved", rotary_dim: int | None = None) -> Any:
        return original(x, cos, sin, layout="interleaved", rotary_dim=rotary_dim)

    swap(original, wrong)


@bug(
    "rope_sin_sign",
    "rotation written with the sin terms' signs flipped (rotating by −mθ): the teaching-code minus-sign slip",
    tests=("tests/test_rope.py",),
    notebooks=("notebooks/05_rope.ipynb",),
    thread="RoFormer (arXiv:2104.09864) eq. 15: each block is [[cos, −sin], [sin, cos]]",
)
def _rope_sin_sign() -> None:
    original = rope.apply_rope

    def wrong(x: Any, positions: Any, inv_freq: Any, **kw: Any) -> Any:
        return original(x, -positions, inv_freq, **kw)  # cos even, sin odd: sin's sign flips

    swap(original, wrong)


# ---------------------------------------------------------------- RoPE scaling (poslib.rope_scaling)


@bug(
    "ntk_exponent",
    "NTK-aware base' = b·s^(d/(d−1)) instead of b·s^(d/(d−2)): the lowest pair no longer divided by exactly s",
    tests=("tests/test_rope_scaling.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="bloc97, NTK-aware scaled RoPE (r/LocalLLaMA, 2023): base · s^(d/(d−2))",
)
def _ntk_exponent() -> None:
    original = scaling._ntk_base

    def wrong(base: float, factor: float, head_dim: int) -> float:
        return float(base * factor ** (head_dim / (head_dim - 1)))

    swap(original, wrong)


@bug(
    "dynamic_factor_rule",
    "dynamic NTK's effective factor s·n/L, the −(s − 1) dropped (s' ≠ 1 at n = L)",
    tests=("tests/test_rope_scaling.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="emozilla 2023, dynamically scaled RoPE; Hugging Face's `dynamic` type",
)
def _dynamic_factor_rule() -> None:
    original = scaling.ROPE_SCALINGS["dynamic"]

    def wrong(head_dim: int, base: float, cfg: Any, seq_len: Any, backend: Any) -> Any:
        s = cfg["factor"]
        n = (
            cfg["original_max_position_embeddings"]
            if seq_len is None
            else max(int(seq_len), cfg["original_max_position_embeddings"])
        )
        effective = s * n / cfg["original_max_position_embeddings"]  # − (s − 1) missing
        return rope.rope_frequencies(head_dim, scaling._ntk_base(base, effective, head_dim), backend=backend), 1.0

    swap(original, wrong)


@bug(
    "yarn_mscale_missing",
    "YaRN's attention factor 0.1·ln s + 1 left out (factor 1)",
    tests=("tests/test_rope_scaling.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="YaRN, Peng et al. 2023, eq. for √(1/t) = 0.1 ln s + 1",
)
def _yarn_mscale_missing() -> None:
    original = scaling.yarn_attention_factor

    def wrong(factor: float, mscale: float = 1.0) -> float:
        return 1.0

    swap(original, wrong)


@bug(
    "llama3_bands_swapped",
    "Llama-3 scaling with low_freq_factor and high_freq_factor swapped (band edges exchanged)",
    tests=("tests/test_rope_scaling.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="Meta's Llama 3.1 config: low_freq_factor 1, high_freq_factor 4",
)
def _llama3_bands_swapped() -> None:
    original = scaling.ROPE_SCALINGS["llama3"]

    def wrong(head_dim: int, base: float, cfg: Any, seq_len: Any, backend: Any) -> Any:
        import math

        import numpy as np

        s, lo, hi = cfg["factor"], cfg["high_freq_factor"], cfg["low_freq_factor"]  # swapped
        theta = rope.rope_frequencies(head_dim, base, backend=backend)
        wavelength = 2 * math.pi / theta
        t = np.clip((cfg["original_max_position_embeddings"] / wavelength - lo) / (hi - lo), 0, 1)
        return (1 - t) * theta / s + t * theta, 1.0

    swap(original, wrong)


@bug(
    "pi_multiplies",
    "position interpolation multiplies positions by s (θ·s) instead of dividing (θ/s)",
    tests=("tests/test_rope_scaling.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="Chen et al. 2023 (PI), m → m/s",
)
def _pi_multiplies() -> None:
    original = scaling.ROPE_SCALINGS["linear"]

    def wrong(head_dim: int, base: float, cfg: Any, seq_len: Any, backend: Any) -> Any:
        return rope.rope_frequencies(head_dim, base, backend=backend) * cfg["factor"], 1.0

    swap(original, wrong)


# ---------------------------------------------------------------- XPOS (poslib.xpos)


@bug(
    "xpos_sides_swapped",
    "XPOS decay on the wrong sides: queries ÷ ζ^(m/B), keys × ζ^(n/B), so scores grow with distance",
    tests=("tests/test_rope.py",),
    notebooks=("notebooks/06_length_extrapolation.ipynb",),
    thread="Sun et al. 2022 (XPOS), queries ζ^(m/B), keys ζ^(−n/B)",
)
def _xpos_sides_swapped() -> None:
    original = xpos.xpos_scale

    def wrong(positions: Any, head_dim: int, *, is_key: bool = False, **kw: Any) -> Any:
        return original(positions, head_dim, is_key=not is_key, **kw)

    swap(original, wrong)
