"""Training one lab model: same seed, data order, optimizer, schedule and steps for every scheme.

The optimizer is AdamW (β = (0.9, 0.95); weight decay on the matrices that multiply activations, CoPE's
table and FIRE's MLP included, none on vectors and on the added position tables of learned and T5:
:meth:`poslib.lab.LabModel.no_decay`),
gradients are clipped to norm 1, and the learning rate follows :func:`lr_at` through
``torch.optim.lr_scheduler.LambdaLR``: linear warm-up, then a cosine down to lr / 10.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..randomized import randomized_positions
from . import distributed
from .config import LabConfig, TrainConfig
from .data import Corpus, batch_generator, heldout_spans
from .evaluate import heldout_loss
from .model import LabModel
from .passkey import passkey_batch
from .schemes import split_scheme

__all__ = ["lr_at", "train_model"]

PASSKEY_STREAM = 0x9A55  # second word of the passkey generator's seed, beside the model's seed
LOSS_WINDOW = 50  # steps per point of the recorded passkey loss curve


def lr_at(step: int, cfg: TrainConfig) -> float:
    """The learning rate of ``step``: lr·(step + 1)/warmup, then lr·(0.1 + 0.9·½(1 + cos(π·progress)))."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))  # cosine down to lr/10


def _optimizer(model: LabModel, cfg: TrainConfig) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    decay = [p for n, p in model.named_parameters() if not model.no_decay(n)]
    no_decay = [p for n, p in model.named_parameters() if model.no_decay(n)]
    # Base lr 1: LambdaLR sets lr = base · λ(step) = lr_at(step) exactly. With base = cfg.lr and
    # λ = lr_at / cfg.lr, 18 of the 50 warm-up rates would round differently
    # (lr·(s + 1)/w ≠ lr·((s + 1)/w) in floating point) and every committed number would move.
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=1.0,
        betas=(0.9, 0.95),
    )
    return opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda step: lr_at(step, cfg))


def train_model(
    scheme: str,
    cfg: LabConfig,
    corpus: Corpus,
    seed: int,
    progress: Callable[[int, float], None] | None = None,
    *,
    stop_after: int | None = None,
) -> tuple[LabModel, dict[str, Any]]:
    """Train the model for ``scheme`` (its base scheme) and return it with a training record.

    ``stop_after`` runs only the first steps of the same schedule (the learning rate still follows
    ``cfg.train.steps``): with the stored run's Python, torch and corpus their losses match its first losses (bit for
    bit for the first steps; another CPU's kernels then move the last digits), a cheap live check of a stored run.

    With ``cfg.retrieval.passkey`` every step also trains on ``passkey_rows`` passkey sequences of
    train_len bytes (:mod:`poslib.lab.passkey`, random depths), scored on their answer digits only:
    the loss is the corpus loss plus the answer loss (``passkey_loss_curve``: the second, averaged
    over every 50 steps).

    The record holds the loss every step (``losses``), the median step time in ms
    (``step_ms_median``), the training seconds (wall and CPU) and the parameter count. With
    ``cfg.train.pretrain_heldout_every`` > 0 it also holds ``heldout``: the mean loss (nats per byte) at
    train_len on ``pretrain_heldout_spans`` held-out spans (:func:`poslib.lab.data.heldout_spans`, never the
    test bytes) every that many steps and after the last, the curve :mod:`poslib.lab.plateau` judges. Scoring
    draws no random numbers, so the losses are the same bits with or without it.
    ``progress(step, loss)`` is called after every step.
    """
    tc = cfg.train
    device = torch.device(tc.device)
    torch.manual_seed(seed)
    model = LabModel(split_scheme(scheme)[0], cfg.model).to(device)
    opt, schedule = _optimizer(model, tc)
    batches = batch_generator(corpus.train, tc.batch_size, cfg.train_len, seed)
    # rope+random: a fresh sorted subset of 0 … random_max_pos − 1 every step, from a private generator
    position_rng = np.random.default_rng(seed) if model.scheme.takes_positions else None
    # passkey sequences from their own generator: the corpus stream is the same with or without them
    pk, digits = cfg.retrieval, cfg.retrieval.key_digits
    pk_rng = np.random.default_rng((seed, PASSKEY_STREAM)) if pk.passkey else None
    losses: list[float] = []
    passkey_losses: list[float] = []
    step_ms: list[float] = []
    # several processes (torchrun): each its own slice of the same global batch, gradients averaged (distributed.py)
    net, size = distributed.wrap(model), distributed.world_size()
    every = tc.pretrain_heldout_every
    watched = (
        heldout_spans(corpus.val, cfg.eval.n_eval_spans, cfg.span_len, tc.pretrain_heldout_spans) if every else None
    )
    curve: dict[str, list[Any]] = {"steps": [], "loss": []}

    n_steps = tc.steps if stop_after is None else min(tc.steps, stop_after)
    model.train()
    start, cpu_start = time.perf_counter(), time.process_time()
    for step in range(n_steps):
        t0 = time.perf_counter()
        x, y = (distributed.share(t, "batch_size").to(device) for t in next(batches))
        positions = None
        if position_rng is not None:
            positions = randomized_positions(
                cfg.train_len, model.random_max_pos(), seed=position_rng, backend="torch", device=device
            )
        if pk_rng is None:
            loss = F.cross_entropy(net(x, positions=positions).flatten(0, 1), y.flatten())
        else:
            # passkey rows ride in the same forward pass; only their answer digits are scored
            px, py = (
                distributed.share(t, "passkey_rows").to(device)
                for t in passkey_batch(pk.passkey_rows, cfg.train_len, digits, pk_rng)
            )
            logits = net(torch.cat([x, px]), positions=positions)
            text_loss = F.cross_entropy(logits[: len(x)].flatten(0, 1), y.flatten())
            key_loss = F.cross_entropy(logits[len(x) :, -digits:].flatten(0, 1), py[:, -digits:].flatten())
            loss = text_loss + key_loss
            passkey_losses.append(distributed.sum_across(key_loss.item()) / size)
        opt.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves backward() unannotated
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        schedule.step()
        losses.append(distributed.sum_across(loss.item()) / size)  # the global batch's loss: equal slices
        step_ms.append(1000 * (time.perf_counter() - t0))
        if progress is not None:
            progress(step, losses[-1])
        if watched is not None and ((step + 1) % every == 0 or step + 1 == n_steps):
            curve["steps"].append(step + 1)
            curve["loss"].append(heldout_loss(model, watched, cfg.train_len, cfg.eval.eval_batch_tokens))
    model.eval()
    record: dict[str, Any] = {
        "losses": losses,
        "step_ms_median": statistics.median(step_ms) if step_ms else None,
        "train_seconds": time.perf_counter() - start,
        "train_cpu_seconds": time.process_time() - cpu_start,
        "n_params": model.n_params(),
    }
    if every:
        record["heldout"] = curve
    if pk_rng is not None:  # the answer loss, averaged over windows of LOSS_WINDOW steps (the curve, not every step)
        record["passkey_loss_curve"] = [
            statistics.fmean(passkey_losses[i : i + LOSS_WINDOW]) for i in range(0, len(passkey_losses), LOSS_WINDOW)
        ]
    return model, record
