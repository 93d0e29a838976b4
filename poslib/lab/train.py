"""Train each scheme at a short context, score it at longer ones: the lab's protocol.

1. **Same conditions for every scheme.** One :class:`LabConfig` fixes the seed,
   the data order (a private generator: :func:`poslib.lab.data.batch_generator`),
   the optimizer (AdamW, linear warm-up then cosine decay), the step budget and
   the thread count. Training is bit-deterministic on CPU for a fixed thread count.
2. **Train once per trained scheme.** ``rope+ntk`` & co. reuse the ``rope``
   model (no fine-tuning); ``alibi+logn`` reuses ``alibi``.
3. **Evaluate on non-overlapping windows.** ``n_eval_spans`` spans of
   lcm(eval_lens) + 1 bytes are taken evenly across the validation split; at
   length L each span is cut into consecutive windows of L, and every byte of a
   window is predicted from the bytes before it *in that window*. All lengths
   thus score the same bytes. Perplexity is exp(mean negative log-likelihood).
   (Sliding-window evaluation gives each byte more context and flatter curves:
   see ofirpress/attention_with_linear_biases#16.)
4. **rope+random is scored as it was trained**, at sorted random positions (one draw per
   forward pass from a generator seeded with L, so the score is reproducible), as Ruoss et
   al.'s code does.
5. **Not defined is not a number.** A learned table has no rows beyond
   train_len: that perplexity is recorded as ``None``.

``rope+dynamic`` needs one more rule: dynamic NTK chooses its base from the
current length, so in generation the byte at position t is predicted with the
base for length t + 1. The lab approximates that in blocks of train_len: the
bytes at positions [n − train_len, n) are scored by a forward pass over the
first n bytes with the base for length n. Bytes before train_len see plain RoPE.
"""

from __future__ import annotations

import math
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..fire import FireBias
from ..randomized import randomized_positions
from .data import Corpus, batch_generator, eval_spans, load_stdlib_corpus
from .model import SCHEMES, LabModel, ModelConfig, split_scheme

__all__ = [
    "LabConfig",
    "attention_profile",
    "evaluate",
    "rerun",
    "run_lab",
    "same_environment",
    "summary_table",
    "train_model",
]

DEFAULT_EVAL_MULTIPLES = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class LabConfig:
    """A complete, repeatable description of one lab run (recorded in the results file)."""

    schemes: tuple[str, ...] = SCHEMES
    train_len: int = 64
    steps: int = 600
    eval_lens: tuple[int, ...] | None = None  # None: train_len × (1, 2, 4, 8, 16)
    seeds: tuple[int, ...] = (0,)
    device: str = "cpu"
    batch_size: int = 32
    lr: float = 3e-3
    warmup_steps: int = 50
    weight_decay: float = 0.1
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    n_eval_spans: int = 32
    eval_batch_tokens: int = 8192  # bytes per evaluation forward pass (bounds memory)
    threads: int = 1  # one thread: the same bits on any machine, and no oversubscription on a shared box

    def __post_init__(self) -> None:
        if isinstance(self.schemes, str) or not self.schemes:
            raise ValueError(f"schemes must be a non-empty sequence of names, got {self.schemes!r}")
        object.__setattr__(self, "schemes", tuple(self.schemes))
        for name in self.schemes:
            split_scheme(name)
        if len(set(self.schemes)) != len(self.schemes):
            raise ValueError(f"schemes contains duplicates: {list(self.schemes)}")
        for name in (
            "train_len",
            "batch_size",
            "d_model",
            "n_layers",
            "n_heads",
            "n_eval_spans",
            "eval_batch_tokens",
            "threads",
        ):
            _check_int(name, getattr(self, name), minimum=1)
        _check_int("steps", self.steps, minimum=0)
        _check_int("warmup_steps", self.warmup_steps, minimum=0)
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        if not (isinstance(self.weight_decay, (int, float)) and self.weight_decay >= 0):
            raise ValueError(f"weight_decay must be a number ≥ 0, got {self.weight_decay!r}")
        if isinstance(self.seeds, int) or not self.seeds:
            raise ValueError(f"seeds must be a non-empty sequence of integers, got {self.seeds!r}")
        object.__setattr__(self, "seeds", tuple(self.seeds))
        for s in self.seeds:
            _check_int("seeds", s, minimum=0)
        lens = (
            self.eval_lens if self.eval_lens is not None else tuple(m * self.train_len for m in DEFAULT_EVAL_MULTIPLES)
        )
        if isinstance(lens, int) or not lens:
            raise ValueError(f"eval_lens must be a non-empty sequence of integers, got {lens!r}")
        for L in lens:
            _check_int("eval_lens", L, minimum=1)
            if L % self.train_len:
                raise ValueError(
                    f"eval_lens must be multiples of train_len={self.train_len} "
                    f"(the scaled-RoPE factors are L / train_len), got {L}"
                )
        object.__setattr__(self, "eval_lens", tuple(sorted(set(lens))))
        if self.device not in ("cpu", "cuda") and not self.device.startswith("cuda:"):
            raise ValueError(f"device must be 'cpu' or 'cuda[:n]', got {self.device!r}")

    @property
    def span_len(self) -> int:
        """Length of each evaluation span: the least common multiple of the evaluation lengths."""
        assert self.eval_lens is not None  # filled in by __post_init__
        return math.lcm(*self.eval_lens)

    def model_config(self, scheme: str) -> ModelConfig:
        """The :class:`ModelConfig` of the model trained for ``scheme`` (variants share their base's)."""
        base, _ = split_scheme(scheme)
        return ModelConfig(
            scheme=base, train_len=self.train_len, d_model=self.d_model, n_layers=self.n_layers, n_heads=self.n_heads
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for the results file."""
        return asdict(self)


def _check_int(name: str, value: Any, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        kind = "a positive integer" if minimum == 1 else f"an integer ≥ {minimum}"
        raise ValueError(f"{name} must be {kind}, got {value!r}")


# torch's stubs do not declare this module's switch; reached through Any.
_DETERMINISTIC: Any = torch.utils.deterministic


@contextmanager
def deterministic(threads: int) -> Iterator[None]:
    """Fixed thread count and deterministic kernels for the duration of a run (restored afterwards)."""
    old_threads, old_det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    old_fill = _DETERMINISTIC.fill_uninitialized_memory
    # On CUDA, deterministic mode makes cuBLAS raise unless its workspace is pinned this way
    # (PyTorch's "Reproducibility" notes); the variable is ignored on the CPU.
    old_cublas = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    if old_cublas is None:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    # Deterministic mode also fills every new tensor with NaN (a debugging aid, ~10% of a
    # training step here); results do not depend on it because nothing reads unwritten memory.
    _DETERMINISTIC.fill_uninitialized_memory = False
    try:
        yield
    finally:
        torch.set_num_threads(old_threads)
        torch.use_deterministic_algorithms(old_det)
        _DETERMINISTIC.fill_uninitialized_memory = old_fill
        if old_cublas is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)


def _lr_at(step: int, cfg: LabConfig) -> float:
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))  # cosine down to lr/10


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
    ``cfg.steps``): their losses equal the full run's first losses, bit for bit, which is a cheap
    live check of a stored run.

    The record holds the loss every step (``losses``), the median and all step
    times in ms (``step_ms``), the total seconds and the parameter count.
    ``progress(step, loss)`` is called after every step (the CLI's tqdm bar).
    """
    device = torch.device(cfg.device)
    torch.manual_seed(seed)
    model = LabModel(cfg.model_config(scheme)).to(device)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and not n.startswith(("t5.", "wpe."))]
    no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and not n.startswith(("t5.", "wpe.")))]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr,
        betas=(0.9, 0.95),
    )
    batches = batch_generator(corpus.train, cfg.batch_size, cfg.train_len, seed)
    # rope+random: a fresh sorted subset of 0 … random_max_pos − 1 every step, from a private generator
    position_rng = np.random.default_rng(seed) if model.cfg.scheme == "rope+random" else None
    losses, step_ms = [], []
    model.train()
    start, cpu_start = time.perf_counter(), time.process_time()
    n_steps = cfg.steps if stop_after is None else min(cfg.steps, stop_after)
    for step in range(n_steps):
        t0 = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = _lr_at(step, cfg)
        x, y = next(batches)
        x, y = x.to(device), y.to(device)
        positions = None
        if position_rng is not None:
            positions = randomized_positions(
                cfg.train_len, model.random_max_pos(), seed=position_rng, backend="torch", device=device
            )
        loss = F.cross_entropy(model(x, positions=positions).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves backward() unannotated
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        step_ms.append(1000 * (time.perf_counter() - t0))
        if progress is not None:
            progress(step, losses[-1])
    model.eval()
    record = {
        "losses": losses,
        "step_ms_median": statistics.median(step_ms) if step_ms else None,
        "train_seconds": time.perf_counter() - start,
        "train_cpu_seconds": time.process_time() - cpu_start,
        "n_params": model.n_params(),
    }
    return model, record


@torch.no_grad()
def evaluate(
    model: LabModel,
    spans: torch.Tensor,
    eval_lens: tuple[int, ...],
    modifier: str | None = None,
    batch_tokens: int = 8192,
) -> dict[int, float | None]:
    """Perplexity at each length in ``eval_lens`` on non-overlapping windows cut from ``spans``.

    ``spans`` is ``(n_spans, span_len + 1)`` (see :func:`poslib.lab.data.eval_spans`);
    every L must divide span_len. Lengths the scheme does not define give ``None``.
    """
    span_len = spans.shape[1] - 1
    device = next(model.parameters()).device
    train_len = model.cfg.train_len
    out: dict[int, float | None] = {}
    for L in eval_lens:
        if span_len % L:
            raise ValueError(f"eval length {L} must divide the span length {span_len}")
        limit = model.max_len()
        if limit is not None and L > limit:
            out[L] = None
            continue
        x = spans[:, :-1].reshape(-1, L)
        y = spans[:, 1:].reshape(-1, L)
        total, count = 0.0, 0
        per_batch = max(1, batch_tokens // L)
        # rope+random is scored at sorted random positions, as it was trained (module docstring)
        position_rng = np.random.default_rng(L) if model.cfg.scheme == "rope+random" else None
        for i in range(0, x.shape[0], per_batch):
            xb, yb = x[i : i + per_batch].to(device), y[i : i + per_batch].to(device)
            if position_rng is not None:
                positions = randomized_positions(L, model.random_max_pos(), seed=position_rng, backend="torch")
                logits = model(xb, positions=positions.to(device))
                total += float(F.cross_entropy(logits.flatten(0, 1), yb.flatten(), reduction="sum"))
            elif modifier == "dynamic":
                # one pass per block of train_len, with the base for the block's end (see module docstring)
                for end in range(train_len, L + 1, train_len):
                    logits = model(xb[:, :end], modifier="dynamic")[:, end - train_len : end]
                    nll = F.cross_entropy(logits.flatten(0, 1), yb[:, end - train_len : end].flatten(), reduction="sum")
                    total += float(nll)
            else:
                logits = model(xb, modifier=modifier)
                total += float(F.cross_entropy(logits.flatten(0, 1), yb.flatten(), reduction="sum"))
            count += yb.numel()
        out[L] = math.exp(total / count)
    return out


@torch.no_grad()
def attention_profile(model: LabModel, window: torch.Tensor, modifier: str | None = None) -> dict[str, np.ndarray]:
    """Per layer and head, averaged over queries: attention entropy (nats) and mean distance i − j (bytes).

    ``window`` is ``(B, T)`` byte ids. Only queries in the last quarter of the
    window are averaged, where the context is longest. Returns arrays
    ``(n_layers, n_heads)`` under ``"entropy"`` and ``"distance"``.
    """
    from ..attn import attention_entropy, relative_distance

    _, weights = model(window.to(next(model.parameters()).device), modifier=modifier, return_weights=True)
    T = window.shape[1]
    rows = slice(3 * T // 4, T)
    dist = (-relative_distance(T, backend="torch")).clamp(min=0).float().to(weights[0].device)  # i − j ≥ 0
    entropy = np.stack([attention_entropy(w[..., rows, :]).mean(dim=(0, 2)).cpu().numpy() for w in weights])
    distance = np.stack([(w[..., rows, :] * dist[rows]).sum(-1).mean(dim=(0, 2)).cpu().numpy() for w in weights])
    return {"entropy": entropy, "distance": distance}


def _versions() -> dict[str, str]:
    import poslib

    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": np.__version__,
        "poslib": poslib.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


def _children_cpu_seconds() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _peak_memory_mib(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    # Linux reports KiB; RUSAGE_CHILDREN covers the worker processes of jobs > 1 (the largest one)
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return peak / 1024


@dataclass(frozen=True)
class _Job:
    """What training and scoring one (base scheme, seed) model needs besides the corpus (picklable)."""

    cfg: LabConfig
    spans: torch.Tensor
    windows: dict[str, torch.Tensor]
    profiles: tuple[str, ...]
    keep_model: bool
    progress: bool
    progress_interval: float

    def run(
        self, corpus: Corpus, base: str, seed: int
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], LabModel | None]:
        """Train ``base`` for ``seed``, score every scheme of the run that uses it; (ppl, attention, record, model)."""
        cfg = self.cfg
        assert cfg.eval_lens is not None  # filled in by LabConfig.__post_init__
        bar = _progress_bar(f"{base} (seed {seed})", cfg.steps, self.progress_interval) if self.progress else None
        model, record = train_model(base, cfg, corpus, seed, _bar_update(bar) if bar else None)
        if bar:
            bar.close()
        t_eval = time.perf_counter()
        scheme_ppl, scheme_attention = {}, {}
        for scheme in cfg.schemes:
            s_base, modifier = split_scheme(scheme)
            if s_base != base:
                continue
            ppl = evaluate(model, self.spans, cfg.eval_lens, modifier, cfg.eval_batch_tokens)
            scheme_ppl[scheme] = {str(L): v for L, v in ppl.items()}
            if scheme in self.profiles:
                scheme_attention[scheme] = {
                    label: {k: v.tolist() for k, v in attention_profile(model, w, modifier).items()}
                    for label, w in self.windows.items()
                }
        record["eval_seconds"] = time.perf_counter() - t_eval
        if base == "fire":  # the learned bias functions, per layer: notebook 10 plots them
            fires = [getattr(block.attn, "fire", None) for block in model.blocks]
            record["fire_layers"] = [f.weights() for f in fires if isinstance(f, FireBias)]
        return scheme_ppl, scheme_attention, record, (model if self.keep_model else None)


_WORKER_CORPUS: Corpus | None = None


def _init_worker(corpus: Corpus) -> None:
    global _WORKER_CORPUS
    _WORKER_CORPUS = corpus


def _run_in_worker(
    job: _Job, base: str, seed: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], LabModel | None]:
    assert _WORKER_CORPUS is not None  # set by _init_worker
    with deterministic(job.cfg.threads):
        return job.run(_WORKER_CORPUS, base, seed)


def run_lab(
    cfg: LabConfig,
    corpus: Corpus | None = None,
    *,
    progress: bool = False,
    progress_interval: float = 0.5,
    keep_models: bool = False,
    profiles: Sequence[str] = (),
    profile_multiple: int = 8,
    jobs: int = 1,
) -> dict[str, Any]:
    """Train every needed model for every seed, evaluate every scheme, return the results dictionary.

    The dictionary (what ``--out`` writes as JSON) holds ``config``, ``versions``,
    ``corpus``, per-scheme ``ppl`` (mean over seeds, per length; None = not defined),
    ``ppl_std`` (over seeds, None with one seed), ``runs`` (per seed: perplexities,
    losses, step times), ``training`` (per trained scheme and seed; for ``fire`` it also holds
    ``fire_layers``, the learned c, L and MLP weights per layer) and ``timings``. With
    ``keep_models`` the trained models are returned under ``"models"``
    (``{(base_scheme, seed): LabModel}``), not JSON-serialisable.
    ``progress`` shows a text progress bar per trained model on stdout, redrawn at most every
    ``progress_interval`` seconds (a notebook wants a few seconds: every redraw is a kernel message).
    For each scheme in ``profiles``, ``attention`` holds per seed the :func:`attention_profile` of
    4 validation windows of ``profile_multiple`` × train_len bytes and of the same bytes cut into
    windows of train_len (keys ``"1x"`` and ``"{profile_multiple}x"``, lists of shape (n_layers, n_heads)).
    ``jobs`` > 1 trains the independent (base scheme, seed) models in that many worker processes
    (each with ``cfg.threads`` threads); the numbers are the same as with ``jobs=1``, bit for bit.
    """
    _check_int("jobs", jobs, minimum=1)
    t_start, cpu_start, children_start = time.perf_counter(), time.process_time(), _children_cpu_seconds()
    device = torch.device(cfg.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch.cuda.is_available() is False")
    corpus = corpus if corpus is not None else load_stdlib_corpus()
    spans = eval_spans(corpus.val, cfg.n_eval_spans, cfg.span_len)
    eval_lens = cfg.eval_lens
    assert eval_lens is not None  # filled in by LabConfig.__post_init__
    bases = list(dict.fromkeys(split_scheme(s)[0] for s in cfg.schemes))
    unknown = [s for s in profiles if s not in cfg.schemes]
    if unknown:
        raise ValueError(f"profiles must be schemes of this run ({list(cfg.schemes)}), got {unknown}")
    windows: dict[str, torch.Tensor] = {}
    if profiles:
        if profile_multiple * cfg.train_len > cfg.span_len:
            raise ValueError(
                f"profile_multiple × train_len = {profile_multiple * cfg.train_len} exceeds the evaluation span "
                f"({cfg.span_len} bytes); evaluate at that length too"
            )
        long_window = spans[:4, : profile_multiple * cfg.train_len]
        windows = {"1x": long_window.reshape(-1, cfg.train_len), f"{profile_multiple}x": long_window}
    attention: dict[str, dict[str, Any]] = {s: {} for s in profiles}
    runs: dict[str, dict[str, Any]] = {s: {} for s in cfg.schemes}
    train_records: dict[str, dict[str, Any]] = {b: {} for b in bases}
    models = {}
    tasks = [(base, seed) for seed in cfg.seeds for base in bases]
    # jobs > 1: no per-step bars (several processes would draw over each other), a line per finished model
    job = _Job(cfg, spans, windows, tuple(profiles), keep_models, progress and jobs == 1, progress_interval)
    if jobs == 1:
        with deterministic(cfg.threads):
            outcomes = [job.run(corpus, base, seed) for base, seed in tasks]
    else:
        # Every (base, seed) model is independent: its own seed, data stream and thread count, so a
        # worker process computes the same bits as this one. "spawn": a fresh interpreter per worker
        # (forking a process that already ran torch threads can deadlock).
        import concurrent.futures
        import multiprocessing

        with concurrent.futures.ProcessPoolExecutor(
            max_workers=min(jobs, len(tasks)),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(corpus,),
        ) as pool:
            futures = [pool.submit(_run_in_worker, job, base, seed) for base, seed in tasks]
            outcomes = []
            for (base, seed), future in zip(tasks, futures, strict=True):
                outcomes.append(future.result())  # in submission order: the same dict order as jobs=1
                if progress:
                    print(f"{base} (seed {seed}) done", flush=True)
    for (base, seed), (scheme_ppl, scheme_attention, record, model) in zip(tasks, outcomes, strict=True):
        for scheme, ppl in scheme_ppl.items():
            runs[scheme][str(seed)] = {"ppl": ppl}
        for scheme, prof in scheme_attention.items():
            attention[scheme][str(seed)] = prof
        train_records[base][str(seed)] = record
        if keep_models:
            models[(base, seed)] = model
    results: dict[str, Any] = {
        "config": cfg.to_dict(),
        "model": {b: cfg.model_config(b).to_dict() for b in bases},
        "versions": _versions(),
        "corpus": corpus.describe(),
        "protocol": "non-overlapping windows; every length scores the same validation bytes",
        "ppl": {},
        "ppl_std": {},
        "runs": runs,
        "training": train_records,
    }
    if profiles:
        results["attention"] = attention
    for scheme in cfg.schemes:
        results["ppl"][scheme], results["ppl_std"][scheme] = {}, {}
        for L in eval_lens:
            values = [runs[scheme][str(s)]["ppl"][str(L)] for s in cfg.seeds]
            defined = None not in values
            results["ppl"][scheme][str(L)] = statistics.fmean(values) if defined else None
            results["ppl_std"][scheme][str(L)] = statistics.stdev(values) if defined and len(values) > 1 else None
    step_ms = [r["step_ms_median"] for b in bases for r in train_records[b].values() if r["step_ms_median"]]
    results["timings"] = {
        "total_seconds": time.perf_counter() - t_start,
        # CPU seconds of this process: on a shared machine, the wall time an idle one would take (one thread)
        # this process and the worker processes of jobs > 1 (counted once the pool has shut down)
        "total_cpu_seconds": time.process_time() - cpu_start + _children_cpu_seconds() - children_start,
        "step_ms_median": {
            b: statistics.median([r["step_ms_median"] for r in train_records[b].values()]) if cfg.steps else None
            for b in bases
        },
        "step_ms_median_all": statistics.median(step_ms) if step_ms else None,
        "peak_memory_mib": _peak_memory_mib(device),
        "note": "wall-clock on a shared machine: compare ratios within one run, not across runs",
    }
    if keep_models:
        results["models"] = models
    return results


def _bar_update(bar: Any) -> Callable[[int, float], None]:
    def update(step: int, loss: float) -> None:
        # refresh=False: the postfix is drawn with the bar's next redraw, not on every step
        bar.set_postfix(loss=f"{loss:.3f}", refresh=False)
        bar.update(1)

    return update


def _progress_bar(desc: str, total: int, interval: float) -> Any:
    # Plain text, not tqdm.auto's widget: a widget sends kernel messages on every redraw, and
    # thousands of them during a long cell overflow the queue nbval reads outputs from.
    from tqdm import tqdm

    return tqdm(total=total, desc=f"{desc:>20s}", leave=True, mininterval=interval, file=sys.stdout)


def summary_table(results: dict[str, Any], digits: int = 1) -> str:
    """Perplexity per scheme (rows) and evaluation length (columns) as fixed-width text; "—" = not defined."""
    lens = results["config"]["eval_lens"]
    train_len = results["config"]["train_len"]
    head = f"{'scheme':<14s}" + "".join(f"{f'{L // train_len}× ({L})':>13s}" for L in lens)
    lines = [head, "-" * len(head)]
    for scheme, row in results["ppl"].items():
        cells = []
        for L in lens:
            v, sd = row[str(L)], results["ppl_std"][scheme][str(L)]
            text = "—" if v is None else (f"{v:.{digits}f}" + (f"±{sd:.{digits}f}" if sd is not None else ""))
            cells.append(f"{text:>13s}")
        lines.append(f"{scheme:<14s}" + "".join(cells))
    return "\n".join(lines)


def same_environment(results: dict[str, Any], corpus: Corpus | None = None) -> bool:
    """Whether this process would train on the same bytes with the same libraries as ``results`` did.

    Compares the Python and torch versions and the corpus's description (file counts and sizes:
    the corpus is this Python's standard library). The CPU is not compared: its floating-point
    kernels move the last digits only.
    """
    corpus = corpus if corpus is not None else load_stdlib_corpus()
    now = _versions()
    return all(results["versions"][k] == now[k] for k in ("python", "torch")) and results["corpus"] == corpus.describe()


def rerun(results: dict[str, Any], scheme: str, seed: int, corpus: Corpus | None = None) -> dict[str, float | None]:
    """Train ``scheme`` for ``seed`` again with the configuration stored in ``results``; its perplexities.

    The returned ``{length: ppl}`` can be compared with ``results["runs"][scheme][str(seed)]["ppl"]``:
    on the same CPU with :func:`same_environment` they are identical, bit for bit.
    """
    stored = dict(results["config"])
    if scheme not in stored["schemes"]:
        raise ValueError(f"scheme {scheme!r} is not in these results; they have {list(stored['schemes'])}")
    if seed not in stored["seeds"]:
        raise ValueError(f"seed {seed} is not in these results; they have {list(stored['seeds'])}")
    stored.update(
        schemes=(scheme,),
        seeds=(seed,),
        eval_lens=tuple(stored["eval_lens"]),
    )
    live = run_lab(LabConfig(**stored), corpus)
    ppl: dict[str, float | None] = live["runs"][scheme][str(seed)]["ppl"]
    return ppl
