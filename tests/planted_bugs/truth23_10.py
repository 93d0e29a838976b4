"""Planted bugs behind notebook 10's repaired checks (issue 23 items 16-17): CoPE's gate, NoPE's probe,
FIRE's threshold, the randomized-position sampler."""

from __future__ import annotations

from typing import Any

import numpy as np

import poslib.cope as cope
import poslib.fire as fire
import poslib.randomized as randomized
import poslib.teaching.toy_contextual as toy_contextual

from . import bug, swap


@bug(
    "cope_gate_no_sqrt_d",
    "CoPE's gate logits q·k without the 1/√d the paper's Appendix B code divides by before the sigmoid",
    tests=("tests/test_cope.py",),
    notebooks=("notebooks/10_learned_and_contextual_positions.ipynb",),
    thread="arXiv 2405.18719 eq. (3) writes σ(q_i·k_j); its Appendix B code gates the √d-scaled logits",
)
def _cope_gate_no_sqrt_d() -> None:
    original = cope.cope_gate_logits

    def wrong(q: Any, k: Any, *, causal: bool = True) -> Any:
        return original(q, k, causal=causal) * np.sqrt(q.shape[-1])  # undoes the scale: gates at temperature √d

    swap(original, wrong)


@bug(
    "nope_probe_untrained",
    "the NoPE position probe's optimizer never moves it (learning rate 0): an untrained probe is returned",
    tests=("tests/test_nope.py",),
    notebooks=("notebooks/10_learned_and_contextual_positions.ipynb",),
)
def _nope_probe_untrained() -> None:
    original = toy_contextual.train_position_probe

    def wrong(**kw: Any) -> Any:
        return original(**{**kw, "lr": 0.0})

    swap(original, wrong)


@bug(
    "fire_L_detached",
    "FIRE's threshold L detached from the graph: it gets no gradient and stays at L_init",
    tests=("tests/test_fire.py",),
    notebooks=("notebooks/10_learned_and_contextual_positions.ipynb",),
)
def _fire_L_detached() -> None:
    original = fire.FireBias.c_L

    def wrong(self: Any) -> Any:
        c, L = original(self)
        return c, L.detach()

    fire.FireBias.c_L = wrong  # type: ignore[method-assign]  # a method: swap() scans module globals only


@bug(
    "randomized_pinned_zero",
    "randomized positions always start at 0 (a BOS convention), the other n − 1 drawn from 1 … max_pos − 1: biased",
    tests=("tests/test_randomized.py",),
    notebooks=("notebooks/10_learned_and_contextual_positions.ipynb",),
)
def _randomized_pinned_zero() -> None:
    original = randomized.randomized_positions

    def wrong(n: int, max_pos: int, *, seed: Any = 0, backend: str = "numpy", device: Any = None) -> Any:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        rest = rng.choice(np.arange(1, max_pos), size=n - 1, replace=False)
        positions = np.sort(np.append(0, rest)).astype(np.int64)
        if backend == "numpy":
            return positions
        import torch

        out = torch.as_tensor(positions)
        return out.to(device) if device is not None else out

    swap(original, wrong)


@bug(
    "randomized_eval_arange",
    "lab.evaluate feeds rope+random 0 … L' − 1 instead of a sorted random subset of 0 … N_max − 1",
    tests=("tests/test_randomized.py",),
    notebooks=("notebooks/10_learned_and_contextual_positions.ipynb",),
    thread="Ruoss et al.'s models/transformer.py draws the noisy positions on every forward pass, test too",
)
def _randomized_eval_arange() -> None:
    import importlib

    import torch

    evaluate = importlib.import_module("poslib.lab.evaluate")  # the module: poslib.lab.evaluate is also a function

    def wrong(n: int, max_pos: int, *, seed: Any = 0, backend: str = "numpy", device: Any = None) -> Any:
        return torch.arange(n)  # the training loop still draws at random: only the evaluation is wrong

    evaluate.randomized_positions = wrong  # the evaluation's name only, not training's
