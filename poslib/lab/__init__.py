"""The extrapolation lab: small language models, one per positional scheme, scored beyond their training length.

Three layers, each readable top to bottom:

* :mod:`poslib.lab.data`: the corpus (the Python standard library's ``.py``
  sources, byte-level) and its fixed train/validation split;
* :mod:`poslib.lab.model`: a small decoder-only Transformer whose positional
  scheme is chosen by name (every scheme is the poslib implementation);
* :mod:`poslib.lab.train`: the protocol (same seed, data, optimizer, steps),
  evaluation on non-overlapping windows at multiples of the training length,
  and the results dictionary;
* :mod:`poslib.lab.report`: growth with length, rankings and verdicts computed
  from a run's numbers.

Command line: ``python -m poslib.lab --help``.
"""

from .data import Corpus, batch_generator, eval_spans, load_stdlib_corpus, stdlib_files
from .model import INFERENCE_VARIANTS, SCHEMES, TRAINED_SCHEMES, LabModel, ModelConfig, split_scheme
from .report import (
    category,
    claim_verdicts,
    growth,
    growth_range,
    n_seeds,
    ranking,
    scale_phrase,
    seed_values,
    spread,
    takeaways,
    tied,
)
from .train import (
    LabConfig,
    attention_profile,
    evaluate,
    rerun,
    run_lab,
    same_environment,
    summary_table,
    train_model,
)

__all__ = [
    "INFERENCE_VARIANTS",
    "SCHEMES",
    "TRAINED_SCHEMES",
    "Corpus",
    "LabConfig",
    "LabModel",
    "ModelConfig",
    "attention_profile",
    "batch_generator",
    "category",
    "claim_verdicts",
    "eval_spans",
    "evaluate",
    "growth",
    "growth_range",
    "load_stdlib_corpus",
    "n_seeds",
    "ranking",
    "rerun",
    "run_lab",
    "same_environment",
    "scale_phrase",
    "seed_values",
    "split_scheme",
    "spread",
    "stdlib_files",
    "summary_table",
    "takeaways",
    "tied",
    "train_model",
]
