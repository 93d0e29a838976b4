"""The first gradients of a lab model as ``train_model`` computes them, in one process or in each rank of torchrun.

Run by tests/test_lab_ddp.py: ``python -m torch.distributed.run --standalone --nproc_per_node=2
tests/lab_ddp_worker.py OUT`` saves, per rank, ``OUT.rank<r>.pt``: ``{parameter name: gradient}`` after the first
``backward()``, taken where the training loop clips them (before the clip and the optimizer), so AdamW's scale
invariance and the clip to norm 1 cannot hide a wrong factor. The process group is the one
:mod:`poslib.lab.distributed` joins from torchrun's environment, as ``python -m poslib.lab`` does.
"""

from __future__ import annotations

import sys
from typing import Any

import torch

from poslib.lab import Corpus, LabConfig, deterministic, distributed, load_stdlib_corpus, train_model

SCHEME, SEED = "rope", 0


def tiny_config() -> LabConfig:
    """A one-layer model, a global batch of 8 windows and 4 passkey rows: each of 2 ranks trains on half of each."""
    return LabConfig().replace(
        schemes=(SCHEME,),
        steps=3,
        d_model=32,
        n_layers=1,
        batch_size=8,
        warmup_steps=1,
        n_eval_spans=2,
        passkey=True,
        passkey_rows=4,
    )


def first_gradients(cfg: LabConfig, corpus: Corpus) -> dict[str, Any]:
    """``{name: gradient or None}`` of every parameter after ``train_model``'s first ``backward()``."""
    captured: list[list[torch.Tensor | None]] = []
    clip = torch.nn.utils.clip_grad_norm_

    def record_then_clip(parameters: Any, max_norm: float, *args: Any, **kwargs: Any) -> torch.Tensor:
        params = list(parameters)
        if not captured:  # the first step only: later gradients already depend on the optimizer
            captured.append([None if p.grad is None else p.grad.detach().clone() for p in params])
        return clip(params, max_norm, *args, **kwargs)

    # train.py calls torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0) right after backward(): the gradients
    # there are the ones DistributedDataParallel has already reduced across the ranks
    torch.nn.utils.clip_grad_norm_ = record_then_clip
    try:
        with deterministic(cfg.train.threads):
            model, _ = train_model(SCHEME, cfg, corpus, SEED, stop_after=1)
    finally:
        torch.nn.utils.clip_grad_norm_ = clip
    names = [name for name, _ in model.named_parameters()]  # the order model.parameters() gave the clip
    return dict(zip(names, captured[0], strict=True))


def main(out: str) -> None:
    """Join torchrun's process group, take the first gradients, save them as ``out.rank<r>.pt``."""
    distributed.init_from_env("cpu")
    grads = first_gradients(tiny_config(), load_stdlib_corpus())
    torch.save({"world_size": distributed.world_size(), "grads": grads}, f"{out}.rank{distributed.rank()}.pt")
    distributed.close()


if __name__ == "__main__":
    main(sys.argv[1])
