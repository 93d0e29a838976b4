"""Command line for the extrapolation lab: ``python -m poslib.lab [options]``.

Trains one small byte-level language model per scheme at ``--train-len``,
evaluates perplexity at each ``--eval-lens`` (default 1, 2, 4, 8, 16 × the
training length), prints a table and, with ``--out``, writes every number,
the configuration, library versions and timings as JSON.

Every field of :class:`poslib.lab.LabConfig` is an option of the same name
(``d_model`` → ``--d-model``), with the field's help text and default; the rest
(``--jobs``, ``--profiles``, ``--out``, ``--no-progress``) say how to run, not what.

``--extend`` runs the context-extension experiment of :mod:`poslib.lab.extend` instead (the rope
model read with training-free remaps and scalings, and fine-tuned at a longer length); the fields of
:class:`poslib.lab.extend.ExtendConfig` are its options (``--finetune-steps`` …).

Example::

    python -m poslib.lab --schemes rope,alibi,rope+ntk --steps 300 --out results.json
    python -m poslib.lab --extend --preset full --finetune-steps 100 --out results/lab_extend.json
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import shutil
import sys
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from . import distributed
from .config import PRESETS, LabConfig, config_fields
from .extend import ExtendConfig, run_extension
from .results import LabResults, merge_results, summary_table
from .run import run_lab
from .schemes import ADDED_SCHEMES, ADDED_VARIANTS, EXTENSION_VARIANTS, SCHEMES, split_scheme


def _int_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def _scheme_list(text: str) -> tuple[str, ...]:
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    if names == ("all",):
        return SCHEMES
    known = SCHEMES + tuple(EXTENSION_VARIANTS) + ADDED_SCHEMES + tuple(ADDED_VARIANTS)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown scheme(s) {', '.join(unknown)}; known: all, {', '.join(known)}")
    return names


def _parser_type(name: str, annotation: Any) -> Callable[[str], Any]:
    """The argparse ``type`` of a configuration field, from its annotation (``X | None`` reads as X)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        annotation = args[0]
    if typing.get_origin(annotation) is tuple:
        return _scheme_list if name == "schemes" else _int_list
    return typing.cast(Callable[[str], Any], annotation)


def _shown(value: Any) -> str:
    if isinstance(value, tuple):
        return "all" if value == SCHEMES else ",".join(map(str, value))
    return str(value)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser: one option per configuration field, then the run options (exposed for tests)."""
    p = argparse.ArgumentParser(
        prog="python -m poslib.lab",
        description="Train one small byte-level language model per positional scheme at "
        "--train-len and report validation perplexity at longer lengths.",
    )
    defaults = LabConfig()
    for section, f, annotation in config_fields():
        default = getattr(getattr(defaults, section) if section else defaults, f.name)
        kind: dict[str, Any] = (
            {"action": argparse.BooleanOptionalAction}
            if annotation is bool
            else {"type": _parser_type(f.name, annotation)}
        )
        p.add_argument(
            "--" + f.name.replace("_", "-"),
            dest=f.name,
            default=argparse.SUPPRESS,
            # argparse formats help with %: a literal % (the passkey depths') must be doubled
            help=f"{f.metadata.get('help', '')} (default: {_shown(default)})".replace("%", "%%"),
            **kind,
        )
    p.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default=None,
        help="start from a named configuration (the options given override it): "
        + "; ".join(f"{k}: {v[0]}" for k, v in sorted(PRESETS.items())),
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="train the independent (scheme, seed) models in this many processes, each with --threads threads "
        "(same numbers as --jobs 1; default: 1)",
    )
    p.add_argument("--out", default=None, help="write the results as JSON to this file")
    p.add_argument(
        "--rerun-into",
        default=None,
        metavar="FILE",
        help="retrain the --schemes given (and every scheme sharing their models) with the configuration stored "
        "in FILE, and replace their numbers there (written to --out, default FILE); no other configuration option",
    )
    p.add_argument(
        "--profiles",
        type=_scheme_list,
        default=(),
        help="schemes whose per-head attention distance and entropy at 1x and 8x are recorded",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress line per model")
    ext = p.add_argument_group(
        "context extension (--extend)",
        "train the rope model, score it with training-free remaps and scalings, fine-tune it at a longer length "
        "with PI, NTK-aware and YaRN scaling (and without, the control) and score those: poslib.lab.extend",
    )
    ext.add_argument(
        "--extend",
        action="store_true",
        help="run the context-extension experiment instead of --schemes (its results list every variant)",
    )
    for f in dataclasses.fields(ExtendConfig):
        annotation = typing.get_type_hints(ExtendConfig)[f.name]
        ext.add_argument(
            "--" + f.name.replace("_", "-"),
            dest=f.name,
            default=argparse.SUPPRESS,
            **(
                {"action": argparse.BooleanOptionalAction}
                if annotation is bool
                else {"type": _parser_type(f.name, annotation)}
            ),
            help=f"{f.metadata['help'].removeprefix('--extend: ')} (default: {f.default})",
        )
    return p


def _extend(parser: argparse.ArgumentParser, args: argparse.Namespace, ext_given: dict[str, Any]) -> int:
    """``--extend``: the context-extension run (:func:`poslib.lab.extend.run_extension`)."""
    if "schemes" in vars(args) or args.profiles or args.rerun_into is not None:
        parser.error("--extend scores its own variants; drop --schemes, --profiles and --rerun-into")
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        parser.error("--extend runs in one process (its fine-tuning is not distributed); torchrun runs the lab itself")
    try:
        cfg, ext = config_from_args(args), ExtendConfig(**ext_given)
    except ValueError as err:
        parser.error(str(err))
    # with --out, every finished seed is kept in OUT.partial/ until the file is written: a killed run, started
    # again with the same command, resumes from the seeds it finished
    partial = pathlib.Path(str(args.out) + ".partial") if args.out else None
    results = run_extension(cfg, ext, progress=not args.no_progress, jobs=args.jobs, checkpoint=partial)
    t = results.timings
    per_model = ", ".join(f"{name} {sec:.0f}" for name, sec in t["cpu_seconds_per_model"].items())
    return _report(results, f"CPU seconds per model (training and scoring, mean over seeds): {per_model}", args.out)


def _report(results: LabResults, cost_line: str, out: str | None) -> int:
    """Print the table, the cost and the totals; with ``out``, write the file and drop its checkpoint folder."""
    print()
    print(summary_table(results))
    t = results.timings
    print(f"\n{cost_line}")
    print(
        f"total {t['total_seconds']:.0f} s wall, {t['total_cpu_seconds']:.0f} s CPU; "
        f"peak memory {t['peak_memory_mib']:.0f} MiB"
    )
    if out:
        results.save(out)
        print(f"results written to {out}")
        partial = pathlib.Path(str(out) + ".partial")
        if partial.exists():  # the run is whole: a later run with this --out starts afresh
            shutil.rmtree(partial)
    return 0


def config_from_args(args: argparse.Namespace, base: LabConfig | None = None) -> LabConfig:
    """``base`` (default: ``LabConfig()``) with the configuration options given on the command line."""
    fields = {f.name for _, f, _ in config_fields()}
    given = {k: v for k, v in vars(args).items() if k in fields}
    if base is None:
        base = LabConfig.preset(args.preset) if getattr(args, "preset", None) else LabConfig()
    return base.replace(**given)


def _rerun_into(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--rerun-into FILE``: retrain some schemes with FILE's configuration and merge them into it."""
    given = sorted(k for k in vars(args) if k in {f.name for _, f, _ in config_fields()} - {"schemes"})
    if given or args.preset or args.profiles:
        parser.error(f"--rerun-into takes its configuration from the file; drop {given or ['--preset/--profiles']}")
    if "schemes" not in vars(args):
        parser.error("--rerun-into needs --schemes: the schemes to retrain")
    path = pathlib.Path(args.rerun_into)
    try:
        old = LabResults.load(path)
    except (OSError, ValueError) as err:
        parser.error(f"--rerun-into: cannot read {path}: {err}")
    stored = old.lab_config
    bases = {split_scheme(s)[0] for s in args.schemes}
    unknown = [s for s in args.schemes if s not in stored.schemes]
    if unknown:
        parser.error(f"--rerun-into: {unknown} are not in {path}; it has {', '.join(stored.schemes)}")
    schemes = tuple(s for s in stored.schemes if split_scheme(s)[0] in bases)  # every scheme of a rerun model
    profiles = tuple(s for s in schemes if old.attention is not None and s in old.attention)
    new = run_lab(
        dataclasses.replace(stored, schemes=schemes),
        progress=not args.no_progress,
        profiles=profiles,
        jobs=args.jobs,
    )
    merged = merge_results(old, new)
    out = args.out or path
    merged.save(out)
    t = new.timings
    print(f"retrained {', '.join(schemes)}: {t['total_seconds']:.0f} s wall, {t['total_cpu_seconds']:.0f} s CPU")
    print(f"results written to {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv``, run the lab, print the table; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"jobs must be a positive integer, got {args.jobs}")
    ext_given = {f.name: vars(args)[f.name] for f in dataclasses.fields(ExtendConfig) if f.name in vars(args)}
    if args.extend:
        return _extend(parser, args, ext_given)
    if ext_given:
        parser.error(f"{', '.join('--' + n.replace('_', '-') for n in ext_given)} only apply with --extend")
    if args.rerun_into is not None:
        return _rerun_into(parser, args)
    try:
        cfg = config_from_args(args)
    except ValueError as err:
        parser.error(str(err))  # exits with status 2 and the message
    partial = pathlib.Path(str(args.out) + ".partial") if args.out else None  # resumable, as for --extend
    if distributed.init_from_env(cfg.train.device):  # started by torchrun: one model at a time, on every rank
        if args.jobs != 1:
            parser.error("under torchrun every process trains the same model: drop --jobs")
        if distributed.rank() != 0:
            args.no_progress = True  # rank 0 prints and writes (every rank reads the checkpoints)
    results = run_lab(cfg, progress=not args.no_progress, profiles=args.profiles, jobs=args.jobs, checkpoint=partial)
    if distributed.world_size() > 1:
        is_first = distributed.rank() == 0
        distributed.close()
        if not is_first:
            return 0
    steps = ", ".join(f"{b} {ms:.0f}" for b, ms in results.timings["step_ms_median"].items() if ms is not None)
    return _report(results, f"median step time (ms): {steps}", args.out)


if __name__ == "__main__":
    sys.exit(main())
