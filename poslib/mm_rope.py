"""How multimodal RoPE spends its frequencies: M-RoPE, interleaved M-RoPE, VideoRoPE and HoPE.

A video token carries three positions, (t, h, w). Every scheme here keeps one frequency θ_j per pair j
(θ_j = base^(−2j/d), pair 0 the fastest) and turns pair j at angle p_{axis(j)}·θ_j: what differs is *which axis
each pair follows* and *which positions the tokens get*. Pairs are listed in frequency order j = 0 … d/2 − 1 (in
the half layout, pair j is the features (j, j + d/2)).

**Which pairs each axis gets** (:func:`mm_rope_pair_axes`; ``mrope_section = [n_t, n_h, n_w]``, Qwen2-VL-7B's
[16, 24, 24], d = 128):

* ``"mrope"`` (Qwen2-VL): three consecutive blocks, t the n_t fastest pairs, then h, then w the slowest
  (transformers' ``apply_multimodal_rotary_pos_emb``; :func:`poslib.apply_mrope`);
* ``"mrope_interleaved"`` (Qwen3-VL, ``mrope_interleaved: true``): pairs dealt t, h, w in turn
  (:func:`poslib.mrope_axis_of_pair` with ``interleaved=True``), so every axis spans the whole spectrum;
* ``"videorope"`` (Wei et al. 2025, arXiv:2502.05173, "low-frequency temporal allocation"): the n_h + n_w
  fastest pairs alternate h (even j), w (odd j), and t gets the n_t *slowest* pairs, so a long video's frame
  index turns slowly and never wraps into a fast pair (Wiselnn570/VideoRoPE
  ``videorope-transformer/modeling_videorope.py``, ``apply_m_modify_multimodal_rotary_pos_emb``);
* ``"hope"`` (Li et al. 2025, arXiv:2505.20444, "hybrid frequency allocation"): VideoRoPE's allocation with the n_t
  temporal pairs at frequency **zero** (cos = 1, sin = 0: no position at all on those pairs, NoPE for time), in
  hrlics/HoPE ``modeling_hope.py``, ``apply_hybrid_multimodal_rotary_pos_emb``. A text token (t = h = w)
  therefore does *not* get plain RoPE under HoPE: its n_t slowest pairs do not turn.

**Which positions the tokens get** (:func:`video_position_ids`, one video between text): Qwen2-VL's
``get_rope_index`` (read in hrlics/HoPE ``modeling_hope.py``, a copy of transformers' Qwen2-VL) gives the video
(t, h, w) = (τ, y, x) + s, s = the first free position, and the text after it starts at 1 + the largest position
on *any* axis. VideoRoPE's ``get_t_scale_rope_index`` ("diagonal layout") centres the frame,
(t, h, w) = (δτ, δτ + y − ⌊(H − 1)/2⌋, δτ + x − ⌊(W − 1)/2⌋) + s, so every frame's centre patch lies on the
text's diagonal t = h = w and the next frame moves it by δ along it; the text after starts at 1 + the largest
*t*. HoPE (``get_dynamic_rope_index``) is the same layout with δ drawn per video from [0.5, 0.75, 1, 1.25, 1.5]
during training (pass ``temporal_scale``). Qwen3-VL's own ``get_rope_index`` (timestamps as text, t = 0 per
frame) was not read here: not confirmed, and not modelled.

The reference commits read are in tests/reference/generate_issue44_mm.py, which stores their outputs in
tests/reference/issue44_mm.npz (compared in tests/test_mm_rope.py).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ._backend import Array, check_choice, check_positive, is_torch, to_float, xp_of
from .mrope import _check_sections, mrope_axis_of_pair
from .rope import LAYOUTS, _rotate_pairs

__all__ = ["MM_ROPE_SCHEMES", "apply_mm_rope", "mm_rope_frequencies", "mm_rope_pair_axes", "video_position_ids"]

MM_ROPE_SCHEMES = ("mrope", "mrope_interleaved", "videorope", "hope")
POSITION_LAYOUTS = ("mrope", "diagonal")


def mm_rope_pair_axes(mrope_section: Sequence[int], scheme: str) -> np.ndarray:
    """The axis (0 = t, 1 = h, 2 = w) each frequency pair j = 0 … d/2 − 1 follows under ``scheme``, int64.

    ``scheme`` is one of :data:`MM_ROPE_SCHEMES`; see the module docstring. For ``"videorope"`` and ``"hope"``
    the alternation of h and w runs over the n_h + n_w fastest pairs together, as the reference code does (h on
    even j, w on odd j, whatever the split of n_h and n_w); t takes the n_t slowest pairs. HoPE's t pairs are
    listed as axis 0 here; :func:`mm_rope_frequencies` sets their frequency to zero.
    """
    check_choice("scheme", scheme, MM_ROPE_SCHEMES)
    _check_sections(mrope_section)
    if scheme in ("mrope", "mrope_interleaved"):
        return mrope_axis_of_pair(mrope_section, interleaved=scheme == "mrope_interleaved")
    n_t, n_h, n_w = (int(n) for n in mrope_section)
    spatial = np.where(np.arange(n_h + n_w) % 2 == 0, 1, 2)  # h, w, h, w, … on the fastest pairs
    return np.concatenate([spatial, np.zeros(n_t, dtype=np.int64)]).astype(np.int64)


def mm_rope_frequencies(inv_freq: Array, mrope_section: Sequence[int], scheme: str) -> tuple[np.ndarray, Array]:
    """``(axes, freq)``: the pair axes (:func:`mm_rope_pair_axes`) and each pair's frequency under ``scheme``.

    ``freq`` is ``inv_freq`` (d/2 entries, same kind) except under ``"hope"``, whose temporal pairs get 0.
    ``ValueError`` if ``inv_freq`` does not have sum(mrope_section) entries.
    """
    axes = mm_rope_pair_axes(mrope_section, scheme)
    xp = xp_of(inv_freq=inv_freq)
    freq = to_float(inv_freq, xp, like=inv_freq if is_torch(inv_freq) else None)
    if freq.ndim != 1 or freq.shape[0] != len(axes):
        raise ValueError(
            f"inv_freq must have sum(mrope_section) = {len(axes)} entries (one per pair), got {tuple(freq.shape)}"
        )
    if scheme == "hope":
        keep = torch.as_tensor(axes != 0, device=freq.device) if xp is torch else axes != 0
        freq = xp.where(keep, freq, 0.0 * freq)
    return axes, freq


def apply_mm_rope(
    x: Array,
    positions_thw: Array,
    inv_freq: Array,
    mrope_section: Sequence[int],
    *,
    scheme: str,
    layout: str = "half",
) -> Array:
    """Rotate ``x`` (``(..., seq, head_dim)``) by multimodal RoPE: pair j turns by p_{axis(j)}·θ_j under ``scheme``.

    ``positions_thw``: ``(3, ..., seq)`` as :func:`poslib.apply_mrope` (rows t, h, w; float positions allowed,
    VideoRoPE's δτ); ``inv_freq``: head_dim/2 frequencies; ``mrope_section`` sums to head_dim/2. Angles in
    float64. ``layout="half"`` pairs (j, j + d/2), as the Qwen2-VL, VideoRoPE and HoPE references do.
    With ``scheme="mrope"`` or ``"mrope_interleaved"`` this is :func:`poslib.apply_mrope`.
    """
    check_choice("layout", layout, LAYOUTS)
    xp = xp_of(x=x, positions_thw=positions_thw, inv_freq=inv_freq)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError(f"x must have shape (..., seq, head_dim) with head_dim even, got shape {tuple(x.shape)}")
    half = x.shape[-1] // 2
    if sum(mrope_section) != half:
        raise ValueError(f"mrope_section must sum to head_dim/2 = {half}, got {list(mrope_section)}")
    axes, freq = mm_rope_frequencies(inv_freq, mrope_section, scheme)
    like = x if is_torch(x) else None
    pos = to_float(positions_thw, xp, like=like)
    if pos.ndim < 2 or pos.shape[0] != 3 or pos.shape[-1] not in (1, x.shape[-2]):
        raise ValueError(f"positions_thw must have shape (3, ..., seq = {x.shape[-2]}), got {tuple(pos.shape)}")
    index = torch.as_tensor(axes, device=pos.device) if xp is torch else axes
    # p_{axis(j)} for each pair j: (…, seq, d/2), then times θ_j, all float64
    per_pair = xp.moveaxis(pos, 0, -1)[..., index] if xp is np else torch.movedim(pos, 0, -1)[..., index]
    angles = per_pair * to_float(freq, xp, like=like)
    return _rotate_pairs(x, xp.cos(angles), xp.sin(angles), layout)


def _count(name: str, value: Any, *, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer ≥ {low}, got {value!r}")
    return int(value)


def video_position_ids(
    grid_thw: Sequence[int],
    *,
    text_before: int = 0,
    text_after: int = 0,
    layout: str = "mrope",
    temporal_scale: float = 1.0,
) -> np.ndarray:
    """The (t, h, w) positions of ``text_before`` text tokens, one video, then ``text_after`` text tokens: (3, seq).

    ``grid_thw`` = (T, H, W) is the video's grid *as the language model sees it* (after the vision encoder's
    spatial merge: Qwen2-VL's ``llm_grid_*``), the video's tokens in (τ, y, x) raster order. ``layout``:
    ``"mrope"``, Qwen2-VL's ``get_rope_index`` (video at (τ, y, x) + s; the text after it starts at 1 + the
    largest position on any axis), or ``"diagonal"``, VideoRoPE's ``get_t_scale_rope_index`` (frame centred on
    the text diagonal, time stepped by ``temporal_scale`` = δ; the text after starts at 1 + the largest t).
    ``temporal_scale`` other than 1 needs ``layout="diagonal"``. float64 NumPy (δτ need not be an integer).
    """
    check_choice("layout", layout, POSITION_LAYOUTS)
    if isinstance(grid_thw, (str, bytes)) or not isinstance(grid_thw, Sequence) or len(grid_thw) != 3:
        raise ValueError(f"grid_thw must be three integers (T, H, W), got {grid_thw!r}")
    n_t, n_h, n_w = (_count("grid_thw", g, low=1) for g in grid_thw)
    before = _count("text_before", text_before, low=0)
    after = _count("text_after", text_after, low=0)
    check_positive("temporal_scale", temporal_scale)
    if layout == "mrope" and temporal_scale != 1.0:
        raise ValueError("temporal_scale must be 1 with layout='mrope' (Qwen2-VL steps time by one)")
    tau, y, x = (g.reshape(-1).astype(np.float64) for g in np.meshgrid(*map(np.arange, (n_t, n_h, n_w)), indexing="ij"))
    text = np.arange(before, dtype=np.float64)
    if layout == "mrope":
        video = np.stack([tau, y, x]) + before
        start = video.max() + 1  # 1 + the largest position on any of the three axes
    else:
        t = tau * float(temporal_scale) + before
        video = np.stack([t, t + y - (n_h - 1) // 2, t + x - (n_w - 1) // 2])
        start = video[0].max() + 1  # 1 + the largest t: the text continues from time, not from the frame's corner
    tail = start + np.arange(after, dtype=np.float64)
    return np.concatenate([np.broadcast_to(text, (3, before)), video, np.broadcast_to(tail, (3, after))], axis=1)
