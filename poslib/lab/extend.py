"""Extending the trained RoPE model's context, as practitioners do: training-free remaps and short fine-tuning.

``python -m poslib.lab --extend`` trains the lab's ``rope`` model per seed (exactly as the lab does)
and scores it, like every lab model (perplexity at 1, 2, 4, 8, 16 × L_train; passkey retrieval with
``--passkey``), in two families:

* **Training-free**, on the trained model as it is: plain ``rope``; the frequency scalings the lab
  already has (``rope+pi``, ``rope+ntk``, ``rope+yarn``, ``rope+dynamic``, factor s = L / L_train
  per input length L); and the distance remaps of :mod:`poslib.remap` (``rope+rerope``,
  ``rope+leaky_rerope``, ``rope+self_extend``, with :class:`poslib.lab.schemes.RemapSettings`).
* **Fine-tuned**: a copy of the trained model trained on for ``finetune_steps`` more steps at
  L' = ``finetune_multiple`` × L_train with a fixed scaling of factor s = L'/L_train, then scored with
  that same scaling at every length, as a fine-tuned checkpoint's config would fix it:
  ``rope+ft`` (no scaling: the control, plain RoPE trained on longer windows), ``rope+ft_pi``
  (Position Interpolation, Chen et al. 2023, who fine-tune about 1000 steps), ``rope+ft_ntk`` (the
  NTK-aware base b' = b·s^(d/(d−2)): a raised base, as "adjusted base frequency" and Code Llama train
  with), ``rope+ft_yarn`` (YaRN, Peng et al. 2023, about 400 steps, with its attention factor).

``finetune_steps`` is 100 by default, sized so that three seeds of ``--preset full`` fit in about
30 CPU minutes on the project's shared 2-core machine (the papers fine-tune 7B models for 400 to
1000 steps). Fine-tuning recipe (the same for every method and seed, written in the results file): a fresh
AdamW (β = (0.9, 0.95), no weight decay, as PI's recipe), the lab's schedule (:func:`poslib.lab.lr_at`:
linear warm-up, cosine to a tenth) with peak ``finetune_lr`` (a tenth of pretraining's) and
``finetune_warmup`` steps, gradients clipped to 1, and the same bytes per step as pretraining:
batch_size / s windows of L' bytes from their own data stream (the same for every method), plus
passkey_rows / s passkey sequences of L' bytes when ``passkey`` is on.

**DroPE** (``rope+drope``, off unless ``drope_steps`` > 0; Gelberg et al., Sakana AI, arXiv 2512.12167): RoPE is
dropped from the trained model (the same weights read as the lab's ``nope`` model: RoPE has no parameters) and the
model is recalibrated at L_train itself, then scored without positions at every length. Read at SakanaAI/DroPE
(commit 260a8bb9f4fda0673266ddfee7668915aade8b33): ``attention_type: nope`` after RoPE training, with a
``qk_norm_nope`` variant for every model (``*_qk_norm.yaml``; left out here, and which variant the paper's headline
numbers use is not confirmed); ``cfgs/run_cfg/llama2_7b_drope.yaml``: 5000 steps of 512 × 4096 tokens (about 10 B,
some 0.5 % of Llama 2's 2 T pretraining tokens), peak learning rate 1e-4, 100 warm-up steps, cosine. The SmolLM-360M
run's batch and schedule come from a Hydra composition not run here: not confirmed. The paper's "about 1 % of the
pretraining tokens" was not confirmed from its text. Here ``drope_steps`` steps of pretraining's own batch, window
and passkey rows (its own data stream) spend ``drope_steps / steps`` of the lab's pretraining bytes, with the
fine-tuning recipe above (:func:`_continue_training`; its warm-up is ``min(finetune_warmup, drope_steps)`` steps, so
a 20-step run is all warm-up).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import dataclasses
import hashlib
import json
import multiprocessing
import pathlib
import resource
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from . import run as _run
from .config import LabConfig, _f, check_fields
from .data import Corpus, batch_generator, eval_spans, heldout_spans, load_stdlib_corpus
from .determinism import deterministic
from .evaluate import evaluate, heldout_loss
from .model import LabModel
from .passkey import passkey_batch
from .results import LabResults, versions
from .schemes import RemapSettings, split_scheme
from .train import PASSKEY_STREAM, _optimizer, train_model

__all__ = [
    "DROPE",
    "FINETUNE_METHODS",
    "TRAINING_FREE",
    "TUNED_SCALINGS",
    "ExtendConfig",
    "deployed_remaps",
    "drope_model",
    "finetune_model",
    "load_trained_model",
    "reading_perplexity",
    "replay_finetune_losses",
    "run_extension",
    "save_trained_model",
    "stored_configs",
]

# the training-free ways to read the trained rope model at longer lengths
TRAINING_FREE = (
    "rope",
    "rope+pi",
    "rope+ntk",
    "rope+yarn",
    "rope+dynamic",
    "rope+rerope",
    "rope+leaky_rerope",
    "rope+self_extend",
)
# fine-tuned model -> poslib.rope_inv_freq's rope_type at the fixed factor s (None: plain RoPE, the control)
FINETUNE_METHODS: dict[str, str | None] = {
    "rope+ft": None,
    "rope+ft_pi": "linear",
    "rope+ft_ntk": "ntk",
    "rope+ft_yarn": "yarn",
}
# the frequency scalings read at one factor for every length, chosen on held-out bytes (--factor-grid)
TUNED_SCALINGS: dict[str, str] = {
    "rope+pi_tuned": "linear",
    "rope+ntk_tuned": "ntk",
    "rope+yarn_tuned": "yarn",
    "rope+dynamic_tuned": "dynamic",
}
FINETUNE_STREAM = 0xF17E  # added to the seed of the fine-tuning data stream (pretraining's is the seed itself)
DROPE = "rope+drope"  # the trained rope model with RoPE dropped and recalibrated (drope_steps > 0)
DROPE_STREAM = 0xD20E  # added to the seed of DroPE's recalibration data stream


@dataclass(frozen=True)
class ExtendConfig:
    """The extension run's own settings (``--extend``): fine-tuning and the remaps; None = relative to train_len."""

    finetune_steps: int = _f(100, "--extend: fine-tuning steps per method and seed", "non-negative")
    finetune_multiple: int = _f(4, "--extend: fine-tune at this × train_len (the scaling factor s)", "positive")
    finetune_lr: float = _f(3e-4, "--extend: fine-tuning peak learning rate", "positive number")
    finetune_warmup: int = _f(20, "--extend: fine-tuning warm-up steps", "non-negative")
    rerope_window: int | None = _f(None, "--extend: ReRoPE's window w; None = train_len / 4", "positive")
    leak: float = _f(16.0, "--extend: Leaky ReRoPE's leak factor (> 1; Su's k)", "positive number")
    self_extend_window: int | None = _f(
        None, "--extend: Self-Extend's neighbour window W; None = train_len / 4", "positive"
    )
    group_size: int | None = _f(
        None,
        "--extend: Self-Extend's group size G; None = per length, the smallest keeping distances < train_len",
        "positive",
    )
    heldout_every: int = _f(
        0, "--extend: held-out loss at the fine-tuning length every this many steps (0: never)", "non-negative"
    )
    heldout_spans: int = _f(8, "--extend: held-out validation spans (between the test spans)", "positive")
    dca: bool = _f(False, "--extend: also score Dual Chunk Attention (rope+dca) training-free")
    factor_grid: tuple[int, ...] | None = _f(
        None,
        "--extend: factors s tried for PI, NTK, YaRN and dynamic NTK, the best on the held-out spans at the longest "
        "length scored at every length as rope+<method>_tuned, beside the deployed remaps; None = neither",
        "positive",
    )

    drope_steps: int = _f(
        0,
        "--extend: DroPE: drop RoPE from the trained model and recalibrate it this many steps at train_len, scored "
        "as rope+drope (0: off; ceil(0.01 × steps) spends 1 %% of the pretraining bytes)",
        "non-negative",
    )

    def __post_init__(self) -> None:
        check_fields(self)
        if not isinstance(self.dca, bool):
            raise ValueError(f"dca must be True or False, got {self.dca!r}")
        self.remap  # noqa: B018  (validates the remap settings now, not at the first evaluation)

    @property
    def training_free(self) -> tuple[str, ...]:
        """The training-free readings scored: :data:`TRAINING_FREE`, and ``rope+dca`` with ``dca``."""
        return (*TRAINING_FREE, "rope+dca") if self.dca else TRAINING_FREE

    @property
    def remap(self) -> RemapSettings:
        """The remap settings the model is scored with."""
        return RemapSettings(self.rerope_window, float(self.leak), self.self_extend_window, self.group_size)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for the results file (``drope_steps`` only when on, so earlier runs keep their key)."""
        out = dataclasses.asdict(self)
        if not out["drope_steps"]:
            del out["drope_steps"]
        return out


def finetune_model(
    model: LabModel,
    cfg: LabConfig,
    ext: ExtendConfig,
    corpus: Corpus,
    seed: int,
    method: str,
    *,
    stop_after: int | None = None,
    heldout: torch.Tensor | None = None,
) -> tuple[LabModel, dict[str, Any]]:
    """A copy of the trained ``model`` fine-tuned with ``method`` (a key of :data:`FINETUNE_METHODS`), and its record.

    See the module docstring for the recipe. The copy carries its fixed scaling as ``rope_scaling``
    (the same at every evaluation length); ``model`` itself is not changed. The record holds the loss
    of every step, the median step time (ms), the seconds (wall and CPU) and the scaling.
    ``stop_after`` runs only the first steps of the same schedule (the learning rate still follows
    ``finetune_steps``), as :func:`replay_finetune_losses` does. With ``heldout`` spans and
    ``ext.heldout_every`` > 0 the record also holds ``heldout``: the mean loss (nats per byte) on those spans at
    the fine-tuning length before the first step, every ``heldout_every`` steps and after the last.
    """
    if method not in FINETUNE_METHODS:
        raise ValueError(f"method must be one of {list(FINETUNE_METHODS)}, got {method!r}")
    if model.name != "rope":
        raise ValueError(f"only the lab's 'rope' model is fine-tuned here, got {model.name!r}")
    L, s = cfg.train_len, ext.finetune_multiple
    long_len = s * L
    tuned = copy.deepcopy(model)
    rope_type = FINETUNE_METHODS[method]
    tuned.rope_scaling = (
        None
        if rope_type is None
        else {"rope_type": rope_type, "factor": float(s), "original_max_position_embeddings": L}
    )
    watch = heldout is not None and ext.heldout_every > 0
    curve: dict[str, list[Any]] = {"steps": [], "loss": []}

    def look(step: int) -> None:
        assert heldout is not None
        curve["steps"].append(step)
        curve["loss"].append(heldout_loss(tuned, heldout, long_len, cfg.eval.eval_batch_tokens))

    record = _continue_training(
        tuned,
        cfg,
        ext,
        corpus,
        steps=ext.finetune_steps,
        seq_len=long_len,
        batch_size=max(1, cfg.train.batch_size // s),
        passkey_rows=max(1, cfg.retrieval.passkey_rows // s),
        stream=FINETUNE_STREAM,
        seed=seed,
        stop_after=stop_after,
        look=look if watch else None,
    )
    extra = {"heldout": curve} if watch else {}
    return tuned, {
        **extra,
        **record,
        "n_params": tuned.n_params(),
        "rope_scaling": tuned.rope_scaling,
        "finetune_len": long_len,
    }


def _continue_training(
    model: LabModel,
    cfg: LabConfig,
    ext: ExtendConfig,
    corpus: Corpus,
    *,
    steps: int,
    seq_len: int,
    batch_size: int,
    passkey_rows: int,
    stream: int,
    seed: int,
    stop_after: int | None = None,
    look: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Train ``model`` further, in place, the way every fine-tune here does: fresh AdamW with the lab's schedule
    (peak ``ext.finetune_lr``, ``ext.finetune_warmup`` steps, no weight decay), gradients clipped to 1, batches of
    ``batch_size`` rows of ``seq_len`` bytes from data stream ``seed + stream``, plus ``passkey_rows`` passkey rows
    (their answer digits scored) when the run trains with passkeys. ``stop_after`` runs the first steps of the same
    schedule; ``look(step)`` is called before the first step and every ``ext.heldout_every`` steps and after the
    last. Returns the record's training part: the loss of every step, the median step time (ms), and the wall and
    CPU seconds.
    """
    tc = dataclasses.replace(
        cfg.train,
        steps=steps,
        lr=ext.finetune_lr,
        warmup_steps=min(ext.finetune_warmup, steps),
        weight_decay=0.0,
    )
    device = next(model.parameters()).device
    opt, schedule = _optimizer(model, tc)
    batches = batch_generator(corpus.train, batch_size, seq_len, seed + stream)
    pk, digits = cfg.retrieval, cfg.retrieval.key_digits
    pk_rng = np.random.default_rng((seed, PASSKEY_STREAM, stream)) if pk.passkey else None
    n_steps = tc.steps if stop_after is None else min(tc.steps, stop_after)
    losses: list[float] = []
    step_ms: list[float] = []
    model.train()
    start, cpu_start = time.perf_counter(), time.process_time()
    if look is not None:
        look(0)
    for step in range(n_steps):
        t0 = time.perf_counter()
        x, y = (t.to(device) for t in next(batches))
        if pk_rng is None:
            loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        else:
            px, py = (t.to(device) for t in passkey_batch(passkey_rows, seq_len, digits, pk_rng))
            logits = model(torch.cat([x, px]))
            loss = F.cross_entropy(logits[: len(x)].flatten(0, 1), y.flatten()) + F.cross_entropy(
                logits[len(x) :, -digits:].flatten(0, 1), py[:, -digits:].flatten()
            )
        opt.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves backward() unannotated
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        schedule.step()
        losses.append(loss.item())
        step_ms.append(1000 * (time.perf_counter() - t0))
        if look is not None and ((step + 1) % ext.heldout_every == 0 or step + 1 == n_steps):
            look(step + 1)
    model.eval()
    return {
        "losses": losses,
        "step_ms_median": statistics.median(step_ms) if step_ms else None,
        "train_seconds": time.perf_counter() - start,
        "train_cpu_seconds": time.process_time() - cpu_start,
    }


def drope_model(
    model: LabModel,
    cfg: LabConfig,
    ext: ExtendConfig,
    corpus: Corpus,
    seed: int,
    *,
    stop_after: int | None = None,
) -> tuple[LabModel, dict[str, Any]]:
    """The trained ``rope`` model with RoPE dropped (read as the lab's ``nope`` model) and recalibrated: DroPE.

    ``ext.drope_steps`` steps at L_train on pretraining's mix (its batch of text, and its passkey rows when the run
    trains with them; its own data stream, ``seed + DROPE_STREAM``) and the fine-tuning recipe of this module (fresh
    AdamW, the lab's schedule with peak ``finetune_lr`` and ``finetune_warmup`` steps, no weight decay, gradients
    clipped to 1: :func:`_continue_training`); see the module docstring for the reference recipe. ``model`` itself
    is not changed. The record holds the loss of every step, the median step time (ms), the seconds (wall and CPU)
    and the recalibration length. ``stop_after`` runs only the first steps.
    """
    if model.name != "rope":
        raise ValueError(f"DroPE drops RoPE from the lab's 'rope' model, got {model.name!r}")
    if ext.drope_steps < 1:
        raise ValueError(f"drope_steps must be positive to recalibrate, got {ext.drope_steps}")
    device = next(model.parameters()).device
    dropped = LabModel("nope", cfg.model).to(device)
    dropped.load_state_dict(model.state_dict())  # RoPE has no parameters: the same weights, no positions
    record = _continue_training(
        dropped,
        cfg,
        ext,
        corpus,
        steps=ext.drope_steps,
        seq_len=cfg.train_len,
        batch_size=cfg.train.batch_size,
        passkey_rows=cfg.retrieval.passkey_rows,
        stream=DROPE_STREAM,
        seed=seed,
        stop_after=stop_after,
    )
    return dropped, {
        **record,
        "n_params": dropped.n_params(),
        "recalibration_len": cfg.train_len,
    }


@contextlib.contextmanager
def _reading(
    model: LabModel,
    *,
    rope_scaling: dict[str, Any] | None = None,
    remap: RemapSettings | None = None,
    logn: bool = False,
) -> Iterator[LabModel]:
    """The trained ``model`` read one deployed way for the duration of the block, then restored."""
    saved = (model.rope_scaling, model.remap, model.logn_queries)
    model.rope_scaling, model.remap, model.logn_queries = rope_scaling, remap or saved[1], logn
    try:
        yield model
    finally:
        model.rope_scaling, model.remap, model.logn_queries = saved


def _fixed_scaling(rope_type: str, factor: float, train_len: int) -> dict[str, Any]:
    return {"rope_type": rope_type, "factor": float(factor), "original_max_position_embeddings": train_len}


def deployed_remaps(cfg: LabConfig, ext: ExtendConfig) -> dict[str, dict[str, Any]]:
    """The remaps as a deployment fixes them for its longest length (``--factor-grid`` scores them).

    ``rope+self_extend_fixed``: one group size G for every length, the smallest that keeps the longest
    evaluation length in range (LongLM and llama.cpp fix G once). ``rope+leaky_rerope_fit``: the leak at which
    the largest distance at the longest length is exactly L_train − 1, (L_max − 1 − w) / (L_train − 1 − w).
    ``rope+rerope_logn``: ReRoPE with bojone/rerope's query scaling max(1, ln(m + 1) / ln L_train). Each needs
    the longest length only, never the length being scored.
    """
    L, longest, remap = cfg.train_len, max(cfg.eval_lens), ext.remap
    w = remap.window(L)
    if w >= L - 1:
        raise ValueError(f"ReRoPE's window ({w}) must be below train_len − 1 ({L - 1}) to fit a leak")
    leak = (longest - 1 - w) / (L - 1 - w)
    return {
        "rope+self_extend_fixed": {
            "modifier": "self_extend",
            "remap": dataclasses.replace(remap, group_size=remap.group(longest, L)),
        },
        "rope+leaky_rerope_fit": {
            "modifier": "leaky_rerope",
            "remap": dataclasses.replace(remap, leak=max(leak, 1.0 + 1e-9)),
        },
        "rope+rerope_logn": {"modifier": "rerope", "logn": True},
    }


def _choose_factor(
    model: LabModel, cfg: LabConfig, heldout: torch.Tensor, rope_type: str, grid: tuple[int, ...]
) -> tuple[int, dict[str, float | None]]:
    """The factor of ``grid`` with the lowest held-out perplexity at the longest length, and every one tried."""
    longest = max(cfg.eval_lens)
    tried: dict[str, float | None] = {}
    for factor in grid:
        with _reading(model, rope_scaling=_fixed_scaling(rope_type, factor, cfg.train_len)):
            tried[str(factor)] = evaluate(model, heldout, (longest,), None, cfg.eval.eval_batch_tokens)[longest]
    scored = {f: v for f in grid if (v := tried[str(f)]) is not None}
    if not scored:
        raise ValueError(f"no factor of {grid} gives a perplexity at {longest}")
    best = min(scored, key=scored.__getitem__)
    return best, tried


def _stage(folder: pathlib.Path | None, key: str, seed: int, name: str, compute: Any) -> Any:
    """``compute()``, or what a killed run of the same key saved for this seed's stage ``name`` (a resumable seed).

    A seed of a long run (pretraining, the readings, four fine-tunes) can take an hour: each stage is kept in
    the checkpoint folder as it finishes, so a restarted run loses at most the stage it was in.
    """
    if folder is None:
        return compute()
    path = folder / f"seed{seed}_{name}.pt"
    if path.exists():
        saved = torch.load(path, weights_only=False)
        if saved["key"] == key:
            return saved["value"]
    value = compute()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save({"key": key, "value": value}, tmp)
    tmp.replace(path)  # a kill mid-write leaves no half file
    return value


def _seed_run(
    cfg: LabConfig,
    ext: ExtendConfig,
    spans: torch.Tensor,
    corpus: Corpus,
    seed: int,
    progress: bool = False,
    folder: pathlib.Path | None = None,
    key: str = "",
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train the rope model of ``seed``, score it every training-free way, fine-tune and score every method.

    With a checkpoint ``folder`` every stage is saved as it ends and reused by a restarted run (:func:`_stage`).
    """

    def say(text: str) -> None:
        if progress:
            print(f"seed {seed}: {text}", flush=True)

    def pretrain() -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        trained, rec = train_model("rope", cfg, corpus, seed)
        return trained.state_dict(), rec

    state, record = _stage(folder, key, seed, "pretrained", pretrain)
    model = LabModel("rope", cfg.model).to(torch.device(cfg.train.device))
    model.load_state_dict(state)
    model.eval()
    say(f"pretrained ({record['train_cpu_seconds']:.0f} s CPU)")
    model.remap = ext.remap
    heldout = None
    if ext.heldout_every > 0 or ext.factor_grid is not None:
        heldout = heldout_spans(corpus.val, cfg.eval.n_eval_spans, cfg.span_len, ext.heldout_spans)

    def readings() -> tuple[dict[str, Any], dict[str, Any]]:
        numbers: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        cpu = time.process_time()
        for scheme in ext.training_free:
            numbers[scheme] = _run.score_model(model, cfg, spans, split_scheme(scheme)[1])
        if ext.factor_grid is not None:
            assert heldout is not None
            extra["factor_search"] = {}
            for name, rope_type in TUNED_SCALINGS.items():
                factor, tried = _choose_factor(model, cfg, heldout, rope_type, ext.factor_grid)
                extra["factor_search"][name] = {"chosen": factor, "heldout_ppl_at_longest": tried}
                with _reading(model, rope_scaling=_fixed_scaling(rope_type, factor, cfg.train_len)):
                    numbers[name] = _run.score_model(model, cfg, spans, None)
            for name, how in deployed_remaps(cfg, ext).items():
                with _reading(model, remap=how.get("remap"), logn=how.get("logn", False)):
                    numbers[name] = _run.score_model(model, cfg, spans, how["modifier"])
        extra["eval_cpu_seconds"] = time.process_time() - cpu
        return numbers, extra

    numbers, extra = _stage(folder, key, seed, "readings", readings)
    record = {**record, **extra}
    say(f"training-free readings scored ({record['eval_cpu_seconds']:.0f} s CPU)")
    records = {"rope": record}
    for method in FINETUNE_METHODS:

        def finetune(method: str = method) -> tuple[dict[str, Any], dict[str, Any]]:
            tuned, ft_record = finetune_model(model, cfg, ext, corpus, seed, method, heldout=heldout)
            cpu = time.process_time()
            scored = _run.score_model(tuned, cfg, spans, None)
            ft_record["eval_cpu_seconds"] = time.process_time() - cpu
            return scored, ft_record

        numbers[method], records[method] = _stage(folder, key, seed, method.replace("+", "_"), finetune)
        say(f"{method} fine-tuned and scored ({records[method]['train_cpu_seconds']:.0f} s CPU)")
    if ext.drope_steps > 0:

        def drope() -> tuple[dict[str, Any], dict[str, Any]]:
            dropped, d_record = drope_model(model, cfg, ext, corpus, seed)
            cpu = time.process_time()
            scored = _run.score_model(dropped, cfg, spans, None)
            d_record["eval_cpu_seconds"] = time.process_time() - cpu
            return scored, d_record

        numbers[DROPE], records[DROPE] = _stage(folder, key, seed, DROPE.replace("+", "_"), drope)
        say(f"{DROPE} recalibrated and scored ({records[DROPE]['train_cpu_seconds']:.0f} s CPU)")
    return numbers, records


def _seed_run_in_worker(
    cfg: LabConfig,
    ext: ExtendConfig,
    spans: torch.Tensor,
    seed: int,
    progress: bool = False,
    folder: pathlib.Path | None = None,
    key: str = "",
) -> tuple[dict[str, Any], dict[str, Any]]:
    assert _run._WORKER_CORPUS is not None  # set by run._init_worker
    with deterministic(cfg.train.threads):
        return _seed_run(cfg, ext, spans, _run._WORKER_CORPUS, seed, progress, folder, key)


def _checkpoint_key(cfg: LabConfig, ext: ExtendConfig) -> str:
    """What a seed's checkpoint must match to be reused: the configuration, the settings and the library versions."""
    v = versions()
    return json.dumps([cfg.to_dict(), ext.to_dict(), v["torch"], v["python"], v["poslib"]], sort_keys=True)


def _load_checkpoint(folder: pathlib.Path | None, key: str, seed: int) -> tuple[dict[str, Any], dict[str, Any]] | None:
    if folder is None or not (folder / f"seed{seed}.json").exists():
        return None
    saved = json.loads((folder / f"seed{seed}.json").read_text(encoding="utf-8"))
    if saved["key"] != key:
        raise ValueError(
            f"{folder / f'seed{seed}.json'} was written by a run with another configuration, settings or versions;"
            " remove the folder to start again"
        )
    return saved["numbers"], saved["records"]


def _save_checkpoint(
    folder: pathlib.Path | None, key: str, seed: int, outcome: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    if folder is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"seed{seed}.json.tmp"
    tmp.write_text(json.dumps({"key": key, "numbers": outcome[0], "records": outcome[1]}), encoding="utf-8")
    tmp.replace(folder / f"seed{seed}.json")  # a kill mid-write leaves no half file


def _progress(seed: int, records: dict[str, Any], numbers: dict[str, Any], cfg: LabConfig) -> str:
    longest = str(max(cfg.eval_lens))
    cpu = sum(r["train_cpu_seconds"] + r["eval_cpu_seconds"] for r in records.values())
    ppl = ", ".join(f"{name} {numbers[name]['ppl'][longest]:.2f}" for name in numbers)
    return f"seed {seed}: {cpu:.0f} s CPU; perplexity at {longest}: {ppl}"


def _median_step(by_seed: dict[str, Any]) -> float | None:
    ms = [r["step_ms_median"] for r in by_seed.values() if r["step_ms_median"] is not None]
    return statistics.median(ms) if ms else None


def run_extension(
    cfg: LabConfig,
    ext: ExtendConfig | None = None,
    corpus: Corpus | None = None,
    *,
    progress: bool = False,
    jobs: int = 1,
    checkpoint: str | pathlib.Path | None = None,
) -> LabResults:
    """The extension experiment (module docstring) for every seed of ``cfg``: a :class:`LabResults`.

    ``cfg.schemes`` is replaced by ``ext.training_free``; ``ppl``, ``runs`` (and ``passkey``…) also hold
    the fine-tuned models under the names of :data:`FINETUNE_METHODS`, ``training`` their records beside
    the ``rope`` model's, and ``extension`` the settings (with the window and group sizes used).
    ``jobs`` > 1 runs the seeds in that many worker processes (the same numbers as ``jobs=1``).
    ``checkpoint`` is a folder where each finished seed is saved (``seed<k>.json``); a run given the same
    folder again, after a kill, reuses the seeds found there (same configuration, settings and versions)
    and computes only the others.
    """
    ext = ext if ext is not None else ExtendConfig()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    cfg = dataclasses.replace(cfg, schemes=ext.training_free)
    t_start, cpu_start = time.perf_counter(), _run._cpu_seconds(resource.RUSAGE_SELF)
    children_start = _run._cpu_seconds(resource.RUSAGE_CHILDREN)
    device = torch.device(cfg.train.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch.cuda.is_available() is False")
    corpus = corpus if corpus is not None else load_stdlib_corpus()
    spans = eval_spans(corpus.val, cfg.eval.n_eval_spans, cfg.span_len)
    seeds = cfg.train.seeds
    folder = pathlib.Path(checkpoint) if checkpoint is not None else None
    key = _checkpoint_key(cfg, ext)
    done = {seed: found for seed in seeds if (found := _load_checkpoint(folder, key, seed)) is not None}
    if progress and done:
        print(f"resuming: seeds {sorted(done)} read from {folder}", flush=True)
    todo = [seed for seed in seeds if seed not in done]
    if jobs == 1 or len(todo) <= 1:
        with deterministic(cfg.train.threads):
            for seed in todo:
                done[seed] = _seed_run(cfg, ext, spans, corpus, seed, progress, folder, key)
                _save_checkpoint(folder, key, seed, done[seed])
                if progress:
                    print(_progress(seed, done[seed][1], done[seed][0], cfg), flush=True)
    else:
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=min(jobs, len(todo)),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_run._init_worker,
            initargs=(corpus,),
        ) as pool:
            futures = {
                pool.submit(_seed_run_in_worker, cfg, ext, spans, seed, progress, folder, key): seed for seed in todo
            }
            for future in concurrent.futures.as_completed(futures):
                seed = futures[future]
                done[seed] = future.result()
                _save_checkpoint(folder, key, seed, done[seed])
                if progress:
                    print(_progress(seed, done[seed][1], done[seed][0], cfg), flush=True)
    outcomes = [done[seed] for seed in seeds]
    extra = [*TUNED_SCALINGS, *deployed_remaps(cfg, ext)] if ext.factor_grid is not None else []
    # the models trained after pretraining: the fine-tunes, and DroPE's recalibrated model when it is on
    trained_after = [*FINETUNE_METHODS, *([DROPE] if ext.drope_steps > 0 else [])]
    names = [*ext.training_free, *extra, *trained_after]
    runs: dict[str, dict[str, Any]] = {name: {} for name in names}
    training: dict[str, dict[str, Any]] = {name: {} for name in ("rope", *trained_after)}
    for seed, (numbers, records) in zip(seeds, outcomes, strict=True):
        for name in names:
            runs[name][str(seed)] = numbers[name]
        for name, record in records.items():
            training[name][str(seed)] = record
    remap = ext.remap
    timings = {
        "total_seconds": time.perf_counter() - t_start,
        "total_cpu_seconds": _run._cpu_seconds(resource.RUSAGE_SELF)
        - cpu_start
        + _run._cpu_seconds(resource.RUSAGE_CHILDREN)
        - children_start,
        "cpu_seconds_per_model": {
            name: statistics.fmean(r["train_cpu_seconds"] + r["eval_cpu_seconds"] for r in by_seed.values())
            for name, by_seed in training.items()
        },
        "step_ms_median": {name: _median_step(by_seed) for name, by_seed in training.items()},
        "peak_memory_mib": _run._peak_memory_mib(device),
        "note": "wall-clock on a shared machine: compare ratios within one run, not across runs",
        # a resumed run's wall and CPU above count only the restarted part: the models' own records count them all
        "resumed_seeds": sorted(seed for seed in seeds if seed not in todo),
        "models_cpu_seconds": sum(
            r["train_cpu_seconds"] + r["eval_cpu_seconds"] for by_seed in training.values() for r in by_seed.values()
        ),
    }
    extension = {
        "settings": ext.to_dict(),
        "training_free": [*ext.training_free, *extra],
        "deployed": {
            **{
                name: {s: r["factor_search"][name]["chosen"] for s, r in training["rope"].items()}
                for name in (TUNED_SCALINGS if ext.factor_grid is not None else {})
            },
            **{
                name: dataclasses.asdict(how.get("remap") or remap) | {"logn": how.get("logn", False)}
                for name, how in (deployed_remaps(cfg, ext).items() if ext.factor_grid is not None else [])
            },
        },
        "finetuned": dict(FINETUNE_METHODS),
        "finetune_len": ext.finetune_multiple * cfg.train_len,
        "rerope_window": remap.window(cfg.train_len),
        "leak": remap.leak,
        "self_extend_window": remap.neighbor_window(cfg.train_len),
        "group_size_by_length": {str(L): remap.group(L, cfg.train_len) for L in cfg.eval_lens},
    }
    return _run.assemble_results(cfg, corpus, runs, names, training, timings, extension=extension)


def stored_configs(results: Mapping[str, Any]) -> tuple[LabConfig, ExtendConfig]:
    """The lab and extension configurations an extension results file was made with."""
    if not results.get("extension"):
        raise ValueError("results must come from run_extension (python -m poslib.lab --extend): no 'extension' section")
    return LabConfig.from_dict(results["config"]), ExtendConfig(**results["extension"]["settings"])


def _losses_digest(losses: list[float]) -> str:
    """SHA-256 of the loss trace as the results file stores it (JSON floats round-trip exactly)."""
    return hashlib.sha256(json.dumps(losses).encode("ascii")).hexdigest()


def _config_text(results: Mapping[str, Any]) -> str:
    """The configuration as JSON text: the same for a results object and the file it was written to (tuples → lists)."""
    return json.dumps(results["config"], sort_keys=True)


def save_trained_model(
    results: Mapping[str, Any], seed: int, path: str | pathlib.Path, corpus: Corpus | None = None
) -> pathlib.Path:
    """Train the ``rope`` model of ``seed`` again with the configuration in ``results`` and save its weights.

    The weights are saved only when every training loss equals the one ``results`` stored, bit for
    bit, so the file holds the very model the results were scored with (training is deterministic for
    a fixed thread count on one machine; elsewhere the losses drift and this raises). The file also
    stores the configuration and a digest of the loss trace, which :func:`load_trained_model` checks.
    """
    cfg, _ = stored_configs(results)
    if str(seed) not in results["training"]["rope"]:
        raise ValueError(f"seed {seed} is not in these results; they have {sorted(results['training']['rope'])}")
    stored: list[float] = results["training"]["rope"][str(seed)]["losses"]
    with deterministic(cfg.train.threads):
        model, record = train_model("rope", cfg, corpus if corpus is not None else load_stdlib_corpus(), seed)
    if record["losses"] != stored:
        step = next(i for i, (a, b) in enumerate(zip(record["losses"], stored, strict=True)) if a != b)
        raise ValueError(
            f"the retrained model is not the stored one: its loss at step {step} is {record['losses'][step]!r}, "
            f"the file's {stored[step]!r} (another Python, torch, corpus or CPU?)"
        )
    path = pathlib.Path(path)
    torch.save(
        {
            "state_dict": model.state_dict(),
            "seed": seed,
            "config": _config_text(results),
            "losses_sha256": _losses_digest(stored),
        },
        path,
    )
    return path


def load_trained_model(path: str | pathlib.Path, results: Mapping[str, Any]) -> tuple[LabModel, int]:
    """The trained ``rope`` model saved by :func:`save_trained_model`, ready to score as the run did; and its seed.

    Raises unless the file was made from ``results``: the same configuration and the same loss trace.
    The model carries the run's remap settings and no scaling (``modifier`` picks one per call).
    """
    cfg, ext = stored_configs(results)
    saved = torch.load(pathlib.Path(path), weights_only=True)
    seed = int(saved["seed"])
    if saved["config"] != _config_text(results):
        raise ValueError(f"{path} was saved from a run with another configuration than these results")
    if saved["losses_sha256"] != _losses_digest(results["training"]["rope"][str(seed)]["losses"]):
        raise ValueError(f"{path} holds another training run than these results' rope model of seed {seed}")
    model = LabModel("rope", cfg.model)
    model.load_state_dict(saved["state_dict"])
    model.remap = ext.remap
    return model.eval(), seed


def reading_perplexity(
    model: LabModel, results: Mapping[str, Any], name: str, seed: int, length: int, corpus: Corpus | None = None
) -> float | None:
    """The perplexity at ``length`` of the training-free reading ``name`` of ``model``, as the run scored it.

    ``model`` is the run's trained rope model of ``seed`` (:func:`load_trained_model`). Plain readings
    (:data:`TRAINING_FREE`) use their modifier; the tuned scalings use the factor the run chose for that seed
    (``extension.deployed``); the deployed remaps their stored settings. Scored on the run's own test spans.
    """
    cfg, ext = stored_configs(results)
    corpus = corpus if corpus is not None else load_stdlib_corpus()
    spans = eval_spans(corpus.val, cfg.eval.n_eval_spans, cfg.span_len)
    deployed = results["extension"].get("deployed", {})
    if name in TRAINING_FREE:
        how: dict[str, Any] = {"modifier": split_scheme(name)[1]}
    elif name in TUNED_SCALINGS:
        factor = deployed[name][str(seed)]
        how = {"modifier": None, "rope_scaling": _fixed_scaling(TUNED_SCALINGS[name], factor, cfg.train_len)}
    elif name in deployed:
        settings = dict(deployed[name])
        logn = settings.pop("logn")
        how = {
            "modifier": deployed_remaps(cfg, ext)[name]["modifier"],
            "remap": RemapSettings(**settings),
            "logn": logn,
        }
    else:
        raise ValueError(f"{name!r} is not a training-free reading of these results")
    with (
        deterministic(cfg.train.threads),
        _reading(model, rope_scaling=how.get("rope_scaling"), remap=how.get("remap"), logn=how.get("logn", False)),
    ):
        return evaluate(model, spans, (length,), how["modifier"], cfg.eval.eval_batch_tokens)[length]


def replay_finetune_losses(
    results: Mapping[str, Any], model: LabModel, method: str, seed: int, steps: int, corpus: Corpus | None = None
) -> tuple[list[float], list[float]]:
    """``(live, stored)``: the first ``steps`` fine-tuning losses of ``method`` from ``model``, now and in ``results``.

    ``model`` is the trained rope model of ``seed`` (:func:`load_trained_model`); the schedule follows
    the stored ``finetune_steps`` (the learning rate of step t is the stored run's), the data stream is
    the stored run's. ``model`` is not changed.
    """
    cfg, ext = stored_configs(results)
    if method not in FINETUNE_METHODS:
        raise ValueError(f"method must be one of {list(FINETUNE_METHODS)}, got {method!r}")
    stored: list[float] = results["training"][method][str(seed)]["losses"][:steps]
    with deterministic(cfg.train.threads):
        _, record = finetune_model(
            model, cfg, ext, corpus if corpus is not None else load_stdlib_corpus(), seed, method, stop_after=steps
        )
    live: list[float] = record["losses"]
    return live, stored
