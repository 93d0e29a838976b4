"""The lab on several processes: ``torchrun --nproc_per_node=N -m poslib.lab …`` (torch.distributed).

Every process (rank) builds the same model from the same seed and draws the same global batch from
the same data stream; each takes its own contiguous slice of it (``batch_size / N`` windows, and
``passkey_rows / N`` passkey sequences), and :class:`torch.nn.parallel.DistributedDataParallel`
averages the gradients. Since every slice has the same size, the averaged gradient is the gradient of
the whole batch's mean loss, so N processes train the model one process trains at the same global
batch (up to the order of floating-point sums). The recorded loss is the mean of the ranks' losses,
which is the global batch's loss. Scoring splits the evaluation batches (and the passkey keys) among
the ranks in turn and sums the results across them; only rank 0 prints and writes the results file,
which records the number of processes and the per-rank batch.

The backend is gloo on the CPU and NCCL on CUDA (each rank on the GPU of its ``LOCAL_RANK``). The
single-process default never touches torch.distributed.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.distributed as dist

__all__ = ["close", "init_from_env", "rank", "share", "sum_across", "world_size", "wrap"]


def world_size() -> int:
    """How many processes train together: 1 unless torch.distributed is initialised."""
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def rank() -> int:
    """This process's rank (0 when not distributed)."""
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def init_from_env(device: str) -> bool:
    """Join the process group that ``torchrun`` describes in the environment (``WORLD_SIZE`` > 1).

    Returns whether this run is distributed. gloo for ``device="cpu"``, NCCL for ``"cuda"`` (and the
    process's GPU set from ``LOCAL_RANK``).
    """
    size = int(os.environ.get("WORLD_SIZE", "1"))
    if size <= 1:
        return False
    if not dist.is_initialized():
        if device == "cuda":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        # NCCL for CUDA tensors, and gloo beside it for the CPU scalars sum_across reduces every step (a group
        # with NCCL alone refuses a CPU tensor: "No backend type associated with device type cpu")
        dist.init_process_group(backend="cpu:gloo,cuda:nccl" if device == "cuda" else "gloo")
    return True


# rows of each global batch this process last trained on, by the configuration field that sizes it (measured
# where the slice is taken, so the results file records what each rank saw, not what the configuration implies)
ROWS_SEEN: dict[str, int] = {}


def share(batch: torch.Tensor, name: str) -> torch.Tensor:
    """This rank's contiguous slice of a global batch (its first dimension), which must divide evenly."""
    size = world_size()
    if size == 1:
        return batch
    if batch.shape[0] % size:
        raise ValueError(f"{name} ({batch.shape[0]}) must be divisible by the number of processes ({size})")
    per = batch.shape[0] // size
    part = batch[rank() * per : (rank() + 1) * per]
    ROWS_SEEN[name] = part.shape[0]
    return part


def sum_across(value: float) -> float:
    """``value`` summed over every rank (itself when not distributed)."""
    if world_size() == 1:
        return value
    total = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(total)
    return float(total.item())


def wrap(model: torch.nn.Module) -> Any:
    """``model`` inside DistributedDataParallel when distributed (the parameters are shared), else itself."""
    if world_size() == 1:
        return model
    device = next(model.parameters()).device
    ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)


def close() -> None:
    """Leave the process group (after the last collective of the run)."""
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
