"""The extrapolation lab: small language models, one per positional scheme, scored beyond their training length.

Modules, each readable top to bottom and each about one concern:

* :mod:`poslib.lab.data`: the corpus (the Python standard library's ``.py``
  sources, byte-level) and its fixed train/validation split;
* :mod:`poslib.lab.schemes`: the positional schemes as registered objects with
  small hooks (embed, rotate q/k, bias);
* :mod:`poslib.lab.model`: a small decoder-only Transformer that calls those hooks;
* :mod:`poslib.lab.config`: one nested configuration, its validator (and the CLI's options);
* :mod:`poslib.lab.determinism`: fixed threads and deterministic kernels;
* :mod:`poslib.lab.train`: the training loop (same seed, data, optimizer, schedule, steps);
* :mod:`poslib.lab.evaluate`: perplexity on non-overlapping windows, attention profiles;
* :mod:`poslib.lab.run`: training and scoring every (scheme, seed), in parallel if asked;
* :mod:`poslib.lab.results`: the results dataclass, its table, the environment check;
* :mod:`poslib.lab.report`: growth with length, rankings and verdicts computed from a run's numbers.

Command line: ``python -m poslib.lab --help``.
"""

from .config import EvalConfig, LabConfig, ModelConfig, TrainConfig
from .data import Corpus, batch_generator, eval_spans, load_stdlib_corpus, stdlib_files
from .determinism import deterministic
from .evaluate import attention_profile, evaluate
from .model import LabModel, WeightedOutput
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
from .results import LabResults, same_environment, summary_table
from .run import rerun, run_lab
from .schemes import INFERENCE_VARIANTS, REGISTRY, SCHEMES, TRAINED_SCHEMES, Scheme, split_scheme
from .train import lr_at, train_model

__all__ = [
    "INFERENCE_VARIANTS",
    "REGISTRY",
    "SCHEMES",
    "TRAINED_SCHEMES",
    "Corpus",
    "EvalConfig",
    "LabConfig",
    "LabModel",
    "LabResults",
    "ModelConfig",
    "Scheme",
    "TrainConfig",
    "WeightedOutput",
    "attention_profile",
    "batch_generator",
    "category",
    "claim_verdicts",
    "deterministic",
    "eval_spans",
    "evaluate",
    "growth",
    "growth_range",
    "load_stdlib_corpus",
    "lr_at",
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
