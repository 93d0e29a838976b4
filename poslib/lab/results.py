"""A lab run's results: a dataclass that reads like the JSON file it is saved as, and its text table.

:class:`LabResults` is what :func:`poslib.lab.run_lab` returns. Like Hugging Face's ``ModelOutput``
it is a dataclass that also answers ``results["ppl"]``, so the functions of
:mod:`poslib.lab.report` and :mod:`poslib.viz.lab` read a live run and a committed file
(:meth:`LabResults.load`, or plain ``json.load``) the same way.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pathlib
import platform
import statistics
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from poslib.language import translator
from poslib.text import display_width, pad

from .config import LabConfig
from .data import Corpus, load_stdlib_corpus
from .schemes import split_scheme

_ = translator("lab")

__all__ = [
    "LabResults",
    "merge_results",
    "merge_seeds",
    "same_environment",
    "select_seeds",
    "summary_table",
    "versions",
]

PROTOCOL = "non-overlapping windows; every length scores the same validation bytes"


def versions() -> dict[str, str]:
    """Python, torch, numpy and poslib versions and the platform: what a results file records."""
    import poslib

    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": np.__version__,
        "poslib": poslib.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
    }


@dataclass
class LabResults(Mapping[str, Any]):
    """Every number of a lab run, its configuration, library versions, corpus and timings.

    ``ppl[scheme][L]`` is the mean perplexity over seeds (None: not defined at that length),
    ``ppl_std`` its sample standard deviation (None with one seed), ``runs[scheme][seed]`` the
    per-seed numbers, ``training[base][seed]`` the training records (losses, step times; for
    ``fire`` also ``fire_layers``, the learned functions), ``attention[scheme][seed]`` the
    attention profiles asked for. With passkey retrieval, ``passkey[scheme][L]`` is the exact-match
    accuracy over depths and seeds (mean over seeds of each seed's mean over depths), ``passkey_std``
    the sample std of those per-seed means, ``passkey_by_depth[scheme][L][depth]`` the mean over seeds
    (None where the scheme is not defined). ``extension`` (the context-extension run of
    :mod:`poslib.lab.extend` only) holds its settings. ``models`` (``{(base, seed): LabModel}``, with ``keep_models``)
    is not saved.
    """

    config: dict[str, Any]
    versions: dict[str, str]
    corpus: dict[str, Any]
    ppl: dict[str, dict[str, float | None]]
    ppl_std: dict[str, dict[str, float | None]]
    runs: dict[str, dict[str, Any]]
    training: dict[str, dict[str, Any]]
    timings: dict[str, Any]
    protocol: str = PROTOCOL
    attention: dict[str, Any] | None = None
    passkey: dict[str, dict[str, float | None]] | None = None
    passkey_std: dict[str, dict[str, float | None]] | None = None
    passkey_by_depth: dict[str, dict[str, dict[str, float] | None]] | None = None
    # the context-extension run only (poslib.lab.extend): its fine-tuning and remap settings, and which
    # of the scored names are fine-tuned models rather than schemes of ``config``
    extension: dict[str, Any] | None = None
    # the Holm family a notebook states from these results (poslib.lab.stated_family): never saved by a run
    holm_family: dict[str, list[float]] | None = None
    models: dict[tuple[str, int], Any] = field(default_factory=dict, repr=False, compare=False)

    def _keys(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self) if f.name != "models" and getattr(self, f.name) is not None]

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    @property
    def lab_config(self) -> LabConfig:
        """The run's :class:`LabConfig`."""
        return LabConfig.from_dict(self.config)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-serialisable form (everything but ``models``)."""
        return {k: self[k] for k in self}

    def save(self, path: str | pathlib.Path) -> None:
        """Write :meth:`to_dict` as JSON to ``path``."""
        pathlib.Path(path).write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabResults:
        """Results from their JSON form; unknown keys are an error."""
        names = {f.name for f in dataclasses.fields(cls)} - {"models"}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown results keys {sorted(unknown)}; expected some of {sorted(names)}")
        return cls(**dict(data))

    @classmethod
    def load(cls, path: str | pathlib.Path) -> LabResults:
        """Results from a JSON file written by :meth:`save` (or ``python -m poslib.lab --out``)."""
        return cls.from_dict(json.loads(pathlib.Path(path).read_text(encoding="utf-8")))


def summary_table(results: Mapping[str, Any], digits: int = 1) -> str:
    """Perplexity per scheme (rows) and evaluation length (columns) as fixed-width text; "—" = not defined.

    The header's first word is in poslib's language (the ``lab`` catalogue); its column is padded by display width,
    so a Chinese header lines up with the scheme names below it.
    """
    cfg = LabConfig.from_dict(results["config"])
    first = _("scheme")
    width = max([14, display_width(first) + 1, *(len(s) + 1 for s in results["ppl"])])  # rope+leaky_rerope: > 14
    head = pad(first, width) + "".join(f"{f'{L // cfg.train_len}× ({L})':>13s}" for L in cfg.eval_lens)
    lines = [head, "-" * display_width(head)]
    for scheme, row in results["ppl"].items():
        cells = []
        for L in cfg.eval_lens:
            v, sd = row[str(L)], results["ppl_std"][scheme][str(L)]
            text = "—" if v is None else (f"{v:.{digits}f}" + (f"±{sd:.{digits}f}" if sd is not None else ""))
            cells.append(f"{text:>13s}")
        lines.append(f"{scheme:<{width}s}" + "".join(cells))
    return "\n".join(lines)


def same_environment(results: Mapping[str, Any], corpus: Corpus | None = None) -> bool:
    """Whether this process would train on the same bytes with the same libraries as ``results`` did.

    Compares the Python and torch versions and the corpus's description (file counts and sizes:
    the corpus is this Python's standard library). The CPU is not compared: its floating-point
    kernels move the last digits only.
    """
    corpus = corpus if corpus is not None else load_stdlib_corpus()
    now = versions()
    return all(results["versions"][k] == now[k] for k in ("python", "torch")) and results["corpus"] == corpus.describe()


# what a rerun replaces, per scheme (the per-seed records and every summary built from them)
_PER_SCHEME = ("ppl", "ppl_std", "runs", "attention", "passkey", "passkey_std", "passkey_by_depth")


def _same_run_environment(old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Raise unless two runs to be merged used the same Python, torch, numpy and poslib and the same corpus."""
    for key in ("python", "torch", "numpy", "poslib"):
        if old["versions"].get(key) != new["versions"].get(key):
            raise ValueError(
                f"{key} differs: {old['versions'].get(key)} (old) against {new['versions'].get(key)} (new)"
            )
    if old["corpus"] != new["corpus"]:
        raise ValueError("the corpus differs between the old and the new results")


def merge_results(old: Mapping[str, Any], new: Mapping[str, Any]) -> LabResults:
    """``old`` with every scheme of ``new`` replaced by ``new``'s numbers: how part of a run is redone.

    ``new`` must be a run of the same configuration restricted to some of ``old``'s schemes (the
    same seeds, model, training and evaluation), with the same Python, torch, numpy and poslib and
    the same corpus, and it must rerun every scheme of ``old`` that shares one of its models
    (rerunning ``rope`` without ``rope+ntk`` would leave numbers of two different models). Scores do
    not depend on which other schemes a run holds, so the merged file has the numbers a full run
    of the current code would give for the rerun schemes. The per-scheme sections, the training
    records of the rerun models and the per-model median step times are replaced; the run-level
    timings stay the original run's, and ``timings["reruns"]`` lists each rerun (its schemes, wall
    and CPU seconds, platform).
    """
    old_cfg, new_cfg = LabConfig.from_dict(old["config"]), LabConfig.from_dict(new["config"])
    if not set(new_cfg.schemes) <= set(old_cfg.schemes):
        extra = sorted(set(new_cfg.schemes) - set(old_cfg.schemes))
        raise ValueError(f"new results have schemes the old ones lack: {extra}")
    differ = {k: v for k, v in old_cfg.differences(new_cfg).items() if k != "schemes"}
    if differ:
        raise ValueError(f"new results have another configuration than the old ones: {differ} (old, new)")
    bases = {split_scheme(s)[0] for s in new_cfg.schemes}
    missing = [s for s in old_cfg.schemes if split_scheme(s)[0] in bases and s not in new_cfg.schemes]
    if missing:
        raise ValueError(f"rerun every scheme that shares a rerun model; missing: {missing}")
    _same_run_environment(old, new)
    merged = {k: copy.deepcopy(v) for k, v in old.items() if k != "models"}
    for key in _PER_SCHEME:
        if merged.get(key) is None:
            continue
        for scheme in new_cfg.schemes:
            if key == "attention" and scheme not in merged[key]:
                continue  # not profiled in the old run
            if key == "attention" and (new.get(key) is None or scheme not in new[key]):
                raise ValueError(f"{scheme!r} was profiled in the old run; rerun it with --profiles {scheme}")
            merged[key][scheme] = copy.deepcopy(new[key][scheme])
    timings = merged["timings"]
    for base in bases:
        merged["training"][base] = copy.deepcopy(new["training"][base])
        timings["step_ms_median"][base] = new["timings"]["step_ms_median"][base]
    step_ms = [r["step_ms_median"] for b in merged["training"].values() for r in b.values() if r["step_ms_median"]]
    timings["step_ms_median_all"] = statistics.median(step_ms) if step_ms else None
    timings["peak_memory_mib"] = max(timings["peak_memory_mib"], new["timings"]["peak_memory_mib"])
    timings["reruns"] = [
        *timings.get("reruns", []),
        {
            "schemes": list(new_cfg.schemes),
            "total_seconds": new["timings"]["total_seconds"],
            "total_cpu_seconds": new["timings"]["total_cpu_seconds"],
            "platform": new["versions"]["platform"],
        },
    ]
    return LabResults.from_dict(merged)


def merge_seeds(old: Mapping[str, Any], new: Mapping[str, Any]) -> LabResults:
    """``old`` with ``new``'s seeds added: how a run gets more seeds without retraining the ones it has.

    ``new`` must be a run of the same configuration (schemes, model, training, evaluation, retrieval; for an
    extension run the same ``extension.settings``) on seeds ``old`` does not hold, with the same Python, torch,
    numpy and poslib and the same corpus. Every per-seed record of ``old`` is kept as it is (so its seeds replay
    unchanged) and ``new``'s are added after them; the means and spreads over seeds (``ppl``, ``ppl_std``, the
    passkey summaries) are computed again over all seeds, and the per-seed parts of ``extension`` (the factor each
    seed's tuned scaling chose) are joined. ``timings`` stays ``old``'s, with ``timings["added_seeds"]`` listing
    each addition (its seeds, wall and CPU seconds, platform).
    """
    old_cfg, new_cfg = LabConfig.from_dict(old["config"]), LabConfig.from_dict(new["config"])
    differ = {k: v for k, v in old_cfg.differences(new_cfg).items() if k != "seeds"}
    if differ:
        raise ValueError(f"new results have another configuration than the old ones: {differ} (old, new)")
    shared = sorted(set(old_cfg.train.seeds) & set(new_cfg.train.seeds))
    if shared:
        raise ValueError(f"new results repeat seeds the old ones hold: {shared}; add only new seeds")
    if ("extension" in old) != ("extension" in new):
        raise ValueError("one of the two is an extension run and the other is not")
    if "extension" in old and old["extension"].get("settings") != new["extension"].get("settings"):
        raise ValueError("the extension settings differ between the old and the new results")
    _same_run_environment(old, new)
    merged = {k: copy.deepcopy(v) for k, v in old.items() if k != "models"}
    for section in ("runs", "training", "attention"):
        if merged.get(section) is None:
            continue
        for name, per_seed in new[section].items():
            merged[section].setdefault(name, {}).update(copy.deepcopy(per_seed))
    if "extension" in merged:
        for name, chosen in new["extension"].get("deployed", {}).items():
            if all(str(k) in chosen for k in new_cfg.train.seeds):  # per-seed choices, not one fixed setting
                merged["extension"]["deployed"][name].update(copy.deepcopy(chosen))
    _summarise_seeds(merged, (*old_cfg.train.seeds, *new_cfg.train.seeds))
    merged["timings"]["added_seeds"] = [
        *merged["timings"].get("added_seeds", []),
        {
            "seeds": list(new_cfg.train.seeds),
            "total_seconds": new["timings"]["total_seconds"],
            "total_cpu_seconds": new["timings"]["total_cpu_seconds"],
            "platform": new["versions"]["platform"],
        },
    ]
    return LabResults.from_dict(merged)


def select_seeds(results: Mapping[str, Any], seeds: Sequence[int]) -> LabResults:
    """``results`` cut down to ``seeds``: how two runs with different seed counts are compared at equal power.

    Every per-seed record of the chosen seeds is kept as it is; the means and spreads over seeds (``ppl``,
    ``ppl_std``, the passkey summaries) are computed again over them, and the per-seed parts of ``extension`` are
    cut the same way. The Holm family a notebook stated on ``results`` is dropped: state it again on the cut run.
    """
    held = LabConfig.from_dict(results["config"]).train.seeds
    chosen = tuple(int(s) for s in seeds)
    missing = sorted(set(chosen) - set(held))
    if not chosen or missing:
        raise ValueError(f"seeds must be a non-empty subset of the run's seeds {list(held)}, got {list(chosen)}")
    keep = {str(s) for s in chosen}
    cut = {k: copy.deepcopy(v) for k, v in results.items() if k not in ("models", "holm_family")}
    for section in ("runs", "training", "attention"):
        if cut.get(section) is None:
            continue
        cut[section] = {name: {k: v for k, v in per.items() if k in keep} for name, per in cut[section].items()}
    if "extension" in cut:
        for name, choice in cut["extension"].get("deployed", {}).items():
            if set(map(str, held)) <= set(choice):  # per-seed choices, not one fixed setting
                cut["extension"]["deployed"][name] = {k: v for k, v in choice.items() if k in keep}
    _summarise_seeds(cut, tuple(s for s in held if s in chosen))
    return LabResults.from_dict(cut)


def _summarise_seeds(record: dict[str, Any], seeds: tuple[int, ...]) -> None:
    """Set ``record``'s seeds to ``seeds`` and compute its means and spreads over them again, in place."""
    from .run import _mean_and_std, _passkey_summary  # run imports this module: loaded on first use

    record["config"] = {**record["config"], "train": {**record["config"]["train"], "seeds": list(seeds)}}
    cfg = LabConfig.from_dict(record["config"])
    names = list(record["runs"])
    record["ppl"], record["ppl_std"] = _mean_and_std(record["runs"], names, seeds, cfg.eval_lens)
    if cfg.retrieval.passkey:
        summary = _passkey_summary(record["runs"], cfg, names)
        for key in ("passkey", "passkey_std", "passkey_by_depth"):
            record[key] = summary[key]
