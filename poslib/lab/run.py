"""Running the lab: train once per (trained scheme, seed), score every scheme, gather a :class:`LabResults`.

1. **Same conditions for every scheme.** One :class:`LabConfig` fixes the seed, the data order
   (a private generator: :func:`poslib.lab.data.batch_generator`), the optimizer, the step budget
   and the thread count (:func:`poslib.lab.deterministic`).
2. **Train once per trained scheme.** ``rope+ntk`` & co. reuse the ``rope`` model (no
   fine-tuning); ``alibi+logn`` reuses ``alibi``.
3. **Evaluate** as :mod:`poslib.lab.evaluate` describes.
4. **In parallel when asked.** Every (base scheme, seed) model is independent: ``jobs`` > 1 trains
   them in worker processes, with the same numbers as ``jobs=1``, bit for bit.
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import pathlib
import resource
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from ..fire import FireBias
from . import distributed
from .config import LabConfig
from .data import Corpus, eval_spans, load_stdlib_corpus
from .determinism import deterministic
from .evaluate import attention_profile, evaluate, evaluate_passkey
from .model import LabModel
from .results import LabResults, versions
from .schemes import split_scheme
from .train import train_model

__all__ = ["replay_losses", "rerun", "run_lab"]


def _cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _peak_memory_mib(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    # Linux reports KiB; RUSAGE_CHILDREN covers the worker processes of jobs > 1 (the largest one)
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return peak / 1024


def score_model(model: LabModel, cfg: LabConfig, spans: torch.Tensor, modifier: str | None) -> dict[str, Any]:
    """Perplexity at every eval length, and passkey accuracy when the config asks for it, as stored in results."""
    ppl = evaluate(model, spans, cfg.eval_lens, modifier, cfg.eval.eval_batch_tokens)
    out: dict[str, Any] = {"ppl": {str(L): v for L, v in ppl.items()}}
    if cfg.retrieval.passkey:
        pk = cfg.retrieval
        acc = evaluate_passkey(
            model,
            cfg.eval_lens,
            pk.passkey_depths,
            pk.passkey_samples,
            pk.key_digits,
            modifier,
            cfg.eval.eval_batch_tokens,
        )
        out["passkey"] = {
            str(L): None if row is None else {str(d): a for d, a in row.items()} for L, row in acc.items()
        }
    return out


@dataclass(frozen=True)
class _Job:
    """What training and scoring one (base scheme, seed) model needs besides the corpus (picklable)."""

    cfg: LabConfig
    spans: torch.Tensor
    windows: dict[str, torch.Tensor]
    profiles: tuple[str, ...]
    keep_model: bool

    def run(
        self, corpus: Corpus, base: str, seed: int
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], LabModel | None]:
        """Train ``base`` for ``seed``, score every scheme of the run that uses it; (ppl, attention, record, model)."""
        cfg = self.cfg
        model, record = train_model(base, cfg, corpus, seed)
        t_eval, cpu_eval = time.perf_counter(), time.process_time()
        scheme_ppl: dict[str, Any] = {}
        scheme_attention: dict[str, Any] = {}
        for scheme in cfg.schemes:
            s_base, modifier = split_scheme(scheme)
            if s_base != base:
                continue
            scheme_ppl[scheme] = score_model(model, cfg, self.spans, modifier)
            if scheme in self.profiles:
                scheme_attention[scheme] = {
                    label: {k: v.tolist() for k, v in attention_profile(model, w, modifier).items()}
                    for label, w in self.windows.items()
                }
        record["eval_seconds"] = time.perf_counter() - t_eval
        record["eval_cpu_seconds"] = time.process_time() - cpu_eval
        if base == "fire":  # the learned bias functions, per layer: notebook 10 plots them
            layers = [module for name, module in model.named_modules() if name.endswith("attn.position")]
            record["fire_layers"] = [f.weights() for f in layers if isinstance(f, FireBias)]
        return scheme_ppl, scheme_attention, record, (model if self.keep_model else None)


def _progress_line(base: str, seed: int, record: dict[str, Any], ppl: dict[str, Any]) -> str:
    losses = record["losses"]
    first = next(iter(ppl.get(base, {}).get("ppl", {}).values()), None)
    key = ppl.get(base, {}).get("passkey", {})
    retrieved = next(iter(key.values()), None) if key else None
    return (
        f"{base:>12s} seed {seed}: {len(losses)} steps in {record['train_seconds']:.0f} s "
        f"({record['train_cpu_seconds']:.0f} s CPU)"
        + (f", final loss {losses[-1]:.3f}" if losses else "")
        + (f", ppl at L_train {first:.2f}" if first is not None else "")
        + (f", passkey at L_train {statistics.fmean(retrieved.values()):.2f}" if retrieved else "")
        + f", scored in {record['eval_seconds']:.0f} s ({record['eval_cpu_seconds']:.0f} s CPU)"
    )


_WORKER_CORPUS: Corpus | None = None


def _init_worker(corpus: Corpus) -> None:
    global _WORKER_CORPUS
    _WORKER_CORPUS = corpus


def _run_in_worker(
    job: _Job, base: str, seed: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], LabModel | None]:
    assert _WORKER_CORPUS is not None  # set by _init_worker
    with deterministic(job.cfg.train.threads):
        return job.run(_WORKER_CORPUS, base, seed)


def _profile_windows(cfg: LabConfig, spans: torch.Tensor, profiles: Sequence[str], multiple: int) -> dict[str, Any]:
    unknown = [s for s in profiles if s not in cfg.schemes]
    if unknown:
        raise ValueError(f"profiles must be schemes of this run ({list(cfg.schemes)}), got {unknown}")
    if not profiles:
        return {}
    if multiple * cfg.train_len > cfg.span_len:
        raise ValueError(
            f"profile_multiple × train_len = {multiple * cfg.train_len} exceeds the evaluation span "
            f"({cfg.span_len} bytes); evaluate at that length too"
        )
    long_window = spans[:4, : multiple * cfg.train_len]
    return {"1x": long_window.reshape(-1, cfg.train_len), f"{multiple}x": long_window}


def _mean_and_std(runs: dict[str, Any], schemes: Sequence[str], seeds: Sequence[int], lens: Sequence[int]) -> Any:
    ppl: dict[str, dict[str, float | None]] = {}
    ppl_std: dict[str, dict[str, float | None]] = {}
    for scheme in schemes:
        ppl[scheme], ppl_std[scheme] = {}, {}
        for L in lens:
            values = [runs[scheme][str(s)]["ppl"][str(L)] for s in seeds]
            defined = None not in values
            ppl[scheme][str(L)] = statistics.fmean(values) if defined else None
            ppl_std[scheme][str(L)] = statistics.stdev(values) if defined and len(values) > 1 else None
    return ppl, ppl_std


def _passkey_summary(runs: dict[str, Any], cfg: LabConfig, schemes: Sequence[str] | None = None) -> dict[str, Any]:
    """Accuracy over depths and seeds (mean and sample std of the per-seed means), and per depth over seeds.

    ``schemes`` (default ``cfg.schemes``) names the rows of ``runs`` to summarise.
    """
    out: dict[str, Any] = {"passkey": {}, "passkey_std": {}, "passkey_by_depth": {}}
    for scheme in cfg.schemes if schemes is None else schemes:
        for key in out:
            out[key][scheme] = {}
        for L in map(str, cfg.eval_lens):
            rows = [runs[scheme][str(s)]["passkey"][L] for s in cfg.train.seeds]
            if None in rows:
                out["passkey"][scheme][L] = out["passkey_std"][scheme][L] = out["passkey_by_depth"][scheme][L] = None
                continue
            per_seed = [statistics.fmean(row.values()) for row in rows]
            out["passkey"][scheme][L] = statistics.fmean(per_seed)
            out["passkey_std"][scheme][L] = statistics.stdev(per_seed) if len(per_seed) > 1 else None
            out["passkey_by_depth"][scheme][L] = {d: statistics.fmean(row[d] for row in rows) for d in rows[0]}
    return out


def run_lab(
    cfg: LabConfig,
    corpus: Corpus | None = None,
    *,
    progress: bool = False,
    keep_models: bool = False,
    profiles: Sequence[str] = (),
    profile_multiple: int = 8,
    jobs: int = 1,
    checkpoint: str | pathlib.Path | None = None,
) -> LabResults:
    """Train every needed model for every seed, evaluate every scheme, return the :class:`LabResults`.

    ``progress`` prints one line per trained model when it is done. For each scheme in
    ``profiles``, ``attention`` holds per seed the :func:`attention_profile` of 4 validation
    windows of ``profile_multiple`` × train_len bytes and of the same bytes cut into windows of
    train_len (keys ``"1x"`` and ``"{profile_multiple}x"``, lists of shape (n_layers, n_heads)).
    ``jobs`` > 1 trains the independent (base scheme, seed) models in that many worker processes
    (each with ``cfg.train.threads`` threads); the numbers are the same as with ``jobs=1``, bit for bit.
    ``keep_models`` returns the trained models under ``models`` (``{(base, seed): LabModel}``).
    ``checkpoint`` is a folder where every finished (base scheme, seed) model's numbers are saved; a run
    given the same folder again, after a kill, reuses them (same configuration and versions) and trains
    only the rest (not with ``keep_models``: the models themselves are not saved).
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    t_start, cpu_start = time.perf_counter(), _cpu_seconds(resource.RUSAGE_SELF)
    children_start = _cpu_seconds(resource.RUSAGE_CHILDREN)
    device = torch.device(cfg.train.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but torch.cuda.is_available() is False")
    corpus = corpus if corpus is not None else load_stdlib_corpus()
    spans = eval_spans(corpus.val, cfg.eval.n_eval_spans, cfg.span_len)
    bases = list(dict.fromkeys(split_scheme(s)[0] for s in cfg.schemes))
    windows = _profile_windows(cfg, spans, profiles, profile_multiple)
    tasks = [(base, seed) for seed in cfg.train.seeds for base in bases]
    job = _Job(cfg, spans, windows, tuple(profiles), keep_models)
    if checkpoint is not None and keep_models:
        raise ValueError("checkpoint saves numbers, not models: it cannot be used with keep_models")
    folder = pathlib.Path(checkpoint) if checkpoint is not None else None
    key = json.dumps([cfg.to_dict(), list(profiles), profile_multiple, versions()], sort_keys=True)
    done: dict[tuple[str, int], Any] = {}
    for base, seed in tasks:
        if folder is not None and (path := folder / f"{base}_seed{seed}.json").exists():
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved["key"] != key:
                raise ValueError(
                    f"{path} was written by a run with another configuration; remove the folder to restart"
                )
            done[(base, seed)] = (saved["ppl"], saved["attention"], saved["record"], None)
    if progress and done and distributed.rank() == 0:
        print(f"resuming: {len(done)} of {len(tasks)} models read from {folder}", flush=True)
    if distributed.world_size() > 1 and jobs > 1:
        raise ValueError("under torchrun every process trains the same model: jobs must be 1")

    def keep(base: str, seed: int, outcome: Any) -> None:
        done[(base, seed)] = outcome
        if folder is not None and distributed.rank() == 0:  # every rank holds the same numbers: one writes
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f"{base}_seed{seed}.json.tmp"
            text = json.dumps({"key": key, "ppl": outcome[0], "attention": outcome[1], "record": outcome[2]})
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(folder / f"{base}_seed{seed}.json")  # never a half-written file
        if progress and distributed.rank() == 0:
            print(_progress_line(base, seed, outcome[2], outcome[0]), flush=True)

    todo = [task for task in tasks if task not in done]
    if jobs == 1 or len(todo) <= 1:
        with deterministic(cfg.train.threads):
            for base, seed in todo:
                keep(base, seed, job.run(corpus, base, seed))
    else:
        # "spawn": a fresh interpreter per worker (forking a process that already ran torch threads can deadlock).
        with concurrent.futures.ProcessPoolExecutor(
            max_workers=min(jobs, len(tasks)),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(corpus,),
        ) as pool:
            futures = {pool.submit(_run_in_worker, job, base, seed): (base, seed) for base, seed in todo}
            for future in concurrent.futures.as_completed(futures):
                keep(*futures[future], future.result())
    outcomes = [done[task] for task in tasks]  # in task order: the same dict order as jobs=1
    runs: dict[str, dict[str, Any]] = {s: {} for s in cfg.schemes}
    attention: dict[str, dict[str, Any]] = {s: {} for s in profiles}
    training: dict[str, dict[str, Any]] = {b: {} for b in bases}
    models = {}
    for (base, seed), (scheme_ppl, scheme_attention, record, model) in zip(tasks, outcomes, strict=True):
        for scheme, numbers in scheme_ppl.items():
            runs[scheme][str(seed)] = numbers
        for scheme, prof in scheme_attention.items():
            attention[scheme][str(seed)] = prof
        training[base][str(seed)] = record
        if keep_models:
            models[(base, seed)] = model
    step_ms = [r["step_ms_median"] for b in bases for r in training[b].values() if r["step_ms_median"]]
    timings = {
        "total_seconds": time.perf_counter() - t_start,
        # this process and the worker processes of jobs > 1 (counted once the pool has shut down)
        "total_cpu_seconds": _cpu_seconds(resource.RUSAGE_SELF)
        - cpu_start
        + _cpu_seconds(resource.RUSAGE_CHILDREN)
        - children_start,
        "step_ms_median": {
            b: statistics.median([r["step_ms_median"] for r in training[b].values()]) if cfg.train.steps else None
            for b in bases
        },
        "step_ms_median_all": statistics.median(step_ms) if step_ms else None,
        "peak_memory_mib": _peak_memory_mib(device),
        "note": "wall-clock on a shared machine: compare ratios within one run, not across runs",
    }
    # a resumed run's wall and CPU above count only the restarted part: the models' own records count them all
    timings["resumed_models"] = len(tasks) - len(todo)
    timings["models_cpu_seconds"] = sum(
        training[b][str(seed)]["train_cpu_seconds"] + training[b][str(seed)]["eval_cpu_seconds"] for b, seed in tasks
    )
    if distributed.world_size() > 1:  # this rank's own times; the numbers are every rank's together
        timings["distributed"] = {
            "processes": distributed.world_size(),
            "per_rank_batch": cfg.train.batch_size // distributed.world_size(),
            "per_rank_passkey_rows": cfg.retrieval.passkey_rows // distributed.world_size(),
            "backend": torch.distributed.get_backend(),
            "rows_seen_per_step": dict(sorted(distributed.ROWS_SEEN.items())),  # measured at the slice, rank 0
        }
    return assemble_results(
        cfg, corpus, runs, cfg.schemes, training, timings, attention=attention if profiles else None, models=models
    )


def assemble_results(
    cfg: LabConfig,
    corpus: Corpus,
    runs: dict[str, dict[str, Any]],
    names: Sequence[str],
    training: dict[str, dict[str, Any]],
    timings: dict[str, Any],
    **extra: Any,
) -> LabResults:
    """The :class:`LabResults` of a run: per-seed ``runs`` of ``names`` summed up (means, spreads, passkey), with
    the configuration, versions and corpus; ``extra`` holds the sections only some runs have."""
    ppl, ppl_std = _mean_and_std(runs, names, cfg.train.seeds, cfg.eval_lens)
    passkey = _passkey_summary(runs, cfg, names) if cfg.retrieval.passkey else None
    return LabResults(
        config=cfg.to_dict(),
        versions=versions(),
        corpus=corpus.describe(),
        ppl=ppl,
        ppl_std=ppl_std,
        runs=runs,
        training=training,
        timings=timings,
        passkey=passkey["passkey"] if passkey else None,
        passkey_std=passkey["passkey_std"] if passkey else None,
        passkey_by_depth=passkey["passkey_by_depth"] if passkey else None,
        **extra,
    )


def rerun(results: Mapping[str, Any], scheme: str, seed: int, corpus: Corpus | None = None) -> dict[str, float | None]:
    """Train ``scheme`` for ``seed`` again with the configuration stored in ``results``; its perplexities.

    The returned ``{length: ppl}`` can be compared with ``results["runs"][scheme][str(seed)]["ppl"]``.
    With :func:`poslib.lab.same_environment` they agree closely but not always bit for bit: the CPU's
    floating-point kernels move the last digits, and 600 training steps amplify them (notebook 08's
    check of the committed sinusoidal model found a relative difference near 1e-3 and allows 1e-2).
    """
    stored = LabConfig.from_dict(results["config"])
    if scheme not in stored.schemes:
        raise ValueError(f"scheme {scheme!r} is not in these results; they have {list(stored.schemes)}")
    if seed not in stored.train.seeds:
        raise ValueError(f"seed {seed} is not in these results; they have {list(stored.train.seeds)}")
    cfg = replace(stored, schemes=(scheme,), train=replace(stored.train, seeds=(seed,)))
    ppl: dict[str, float | None] = run_lab(cfg, corpus).runs[scheme][str(seed)]["ppl"]
    return ppl


def replay_losses(
    results: Mapping[str, Any], scheme: str, seed: int, steps: int, corpus: Corpus | None = None
) -> tuple[list[float], list[float]]:
    """``(live, stored)``: the first ``steps`` training losses of ``scheme``'s model for ``seed``, retrained now
    with the configuration stored in ``results``, and the ones the results file holds.

    The cheap live check of a long run: the same schedule (its learning rate follows the full step
    count), the same data and passkey streams, so with :func:`poslib.lab.same_environment` the two lists
    start identical and drift apart slowly, if at all, as another CPU's kernels move the last digits.
    """
    cfg = LabConfig.from_dict(results["config"])
    base = split_scheme(scheme)[0]
    if base not in results["training"] or str(seed) not in results["training"][base]:
        raise ValueError(f"these results hold no training record for {base!r}, seed {seed}")
    stored: list[float] = results["training"][base][str(seed)]["losses"][:steps]
    with deterministic(cfg.train.threads):
        _, record = train_model(
            base, cfg, corpus if corpus is not None else load_stdlib_corpus(), seed, stop_after=steps
        )
    live: list[float] = record["losses"]
    return live, stored
