"""Planted bugs of issue 23's lab items: KERPLE's initialisation, verdicts over disagreeing seeds, CoPE's path."""

from __future__ import annotations

import math
from typing import Any

import poslib.kerple as kerple
import poslib.lab.schemes as schemes
import poslib.lab.seedstats as seedstats

from . import bug, swap


@bug(
    "kerple_constant_init",
    "KerpleBias starts r1 = r2 = 1 in every head of every layer (the authors' code draws 2·U(0, 1) and U(0, 1))",
    tests=("tests/test_kerple.py",),
    notebooks=("notebooks/08_extrapolation_lab.ipynb",),
    thread="chijames/KERPLE megatron/mpu/layers.py, ParallelKerpleLog: get_parameter(2, 'uniform')",
)
def _kerple_constant_init() -> None:
    original = kerple.KerpleBias.__init__

    def constant(
        self: Any,
        n_heads: int,
        kind: str = "log",
        r1_init: float | None = None,
        r2_init: float | None = None,
        **kw: Any,
    ) -> None:
        original(self, n_heads, kind, 1.0 if r1_init is None else r1_init, 1.0 if r2_init is None else r2_init, **kw)

    kerple.KerpleBias.__init__ = constant  # type: ignore[method-assign]


@bug(
    "lab_mean_over_disagreeing_seeds",
    "verdicts read the mean over seeds that disagree (0.90, 0, 0 → 'partly retrieves (30%)', ties by a range of 1)",
    tests=("tests/test_lab.py::test_seeds_that_disagree_get_their_values_not_a_mean_a_tie_or_a_category",),
    notebooks=("notebooks/08_extrapolation_lab.ipynb",),
    thread="issue 23 item 2 (08 cell 43)",
)
def _lab_mean_over_disagreeing_seeds() -> None:
    def never(*args: Any, **kw: Any) -> bool:
        return False

    swap(seedstats.seeds_disagree, never)


@bug(
    "lab_cope_position_logits_scaled",
    "the lab's CoPE divides q·e[p] by √d like the content logits (the paper adds it unscaled); "
    "invisible while CoPE's table is zero, as at initialisation",
    tests=("tests/test_lab.py::test_cope_layer_is_the_papers_formula_with_a_random_table",),
    notebooks=("notebooks/08_extrapolation_lab.ipynb",),
    thread="Golovneva et al. 2024 (arXiv 2405.18719), Appendix B",
)
def _lab_cope_position_logits_scaled() -> None:
    original = schemes.Cope.layer_bias

    def scaled(self: Any, module: Any, q: Any, k: Any, ctx: Any) -> Any:
        return original(self, module, q, k, ctx) / math.sqrt(q.shape[-1])  # −inf stays −inf

    schemes.Cope.layer_bias = scaled  # type: ignore[method-assign]


@bug(
    "cope_forward_count",
    "CoPE counts gates forward from the first key (cumsum over 0 … n) instead of back from the query (n … m)",
    tests=("tests/test_cope.py",),
    notebooks=("notebooks/08_extrapolation_lab.ipynb",),
    thread="Golovneva et al. 2024 (arXiv 2405.18719), Appendix B: gates.flip(-1).cumsum(dim=-1).flip(-1)",
)
def _cope_forward_count() -> None:
    import torch

    import poslib.cope as cope

    def forward(gate_logits: Any, *, max_pos: int | None = None) -> Any:
        gates = cope._sigmoid(gate_logits)
        pos = gates.cumsum(-1)  # numpy and torch alike
        if max_pos is not None:
            pos = pos.clamp(max=max_pos - 1) if isinstance(pos, torch.Tensor) else pos.clip(max=max_pos - 1)
        return pos

    swap(cope.cope_positions, forward)
