"""The extrapolation lab: small language models, one per positional scheme, scored beyond their training length.

Modules, each readable top to bottom and each about one concern:

* :mod:`poslib.lab.data`: the corpus (the Python standard library's ``.py``
  sources, byte-level) and its fixed train/validation split;
* :mod:`poslib.lab.schemes`: the positional schemes as registered objects with
  small hooks (embed, rotate q/k, bias);
* :mod:`poslib.lab.model`: a small decoder-only Transformer that calls those hooks;
* :mod:`poslib.lab.passkey`: passkey-retrieval sequences (a key hidden in filler, asked for last);
* :mod:`poslib.lab.config`: one nested configuration, its validator (and the CLI's options);
* :mod:`poslib.lab.determinism`: fixed threads and deterministic kernels;
* :mod:`poslib.lab.train`: the training loop (same seed, data, optimizer, schedule, steps);
* :mod:`poslib.lab.evaluate`: perplexity on non-overlapping windows, attention profiles;
* :mod:`poslib.lab.run`: training and scoring every (scheme, seed), in parallel if asked;
* :mod:`poslib.lab.results`: the results dataclass, its table, the environment check;
* :mod:`poslib.lab.seedstats`: a run's numbers over seeds and the paired comparison the notebooks decide by;
* :mod:`poslib.lab.verdicts`: growth with length, rankings and verdicts, as dataclasses with enums;
* :mod:`poslib.lab.wording`: the sentences those verdicts are stated in, in poslib's language (gettext);
* :mod:`poslib.lab.report`: the three above under one name (re-exports only);
* :mod:`poslib.lab.stats`: the comparison rule with a stated error rate (paired t-test over seeds, Holm,
  a threshold) and its simulation;
* :mod:`poslib.lab.plateau`: the plateau rule that can fail (a line through the end of a loss curve);
* :mod:`poslib.lab.extend`: extending the rope model's context, training-free (remaps, scalings) and
  by short fine-tuning (``--extend``).

Command line: ``python -m poslib.lab --help``.
"""

from pathlib import Path

# Before .report: importing a submodule binds its name in this package, and the name `plateau` must end up bound
# to report.plateau (the old rule, read as poslib.lab.plateau by notebooks and tests), not to the module
# poslib.lab.plateau; read that module's names with `from poslib.lab.plateau import ...`.
from . import plateau as _plateau_module  # noqa: F401  (loaded for the binding order only)
from .config import PRESETS, EvalConfig, LabConfig, ModelConfig, PasskeyConfig, TrainConfig
from .data import Corpus, batch_generator, eval_spans, load_stdlib_corpus, stdlib_files
from .determinism import deterministic
from .evaluate import attention_profile, evaluate, evaluate_passkey
from .extend import (
    FINETUNE_METHODS,
    TRAINING_FREE,
    TUNED_SCALINGS,
    ExtendConfig,
    deployed_remaps,
    finetune_model,
    load_trained_model,
    reading_perplexity,
    replay_finetune_losses,
    run_extension,
    save_trained_model,
    stored_configs,
)
from .model import LabModel, WeightedOutput
from .passkey import passkey_batch
from .report import (
    DATA_DEPENDENT,
    DISTANCE_REMAPS,
    FINETUNED,
    FREQUENCY_SCALINGS,
    PASSKEY_DISAGREE,
    PPL_DISAGREE,
    PUBLISHED,
    PairedComparison,
    beats,
    category,
    claim_verdicts,
    combine_runs,
    comparison_table,
    datadep_readings,
    deployed_statuses,
    deployed_verdicts,
    disagreements,
    extension_scale_agreement,
    extension_verdicts,
    finetune_plateaus,
    growth,
    growth_range,
    n_seeds,
    paired,
    passkey_best,
    passkey_ranking,
    passkey_spread,
    passkey_tied,
    passkey_values,
    plateau,
    practitioner_claims,
    ranking,
    reach_end,
    relation,
    retrieval,
    retrieval_reach,
    scale_agreement,
    scale_phrase,
    seed_values,
    seeds_disagree,
    seeds_text,
    spread,
    stated_family,
    takeaways,
    tied,
    unbeaten,
    with_family,
    word,
)
from .results import LabResults, merge_results, merge_seeds, same_environment, select_seeds, summary_table
from .run import replay_losses, rerun, run_lab
from .schemes import (
    EXTENSION_VARIANTS,
    INFERENCE_VARIANTS,
    REGISTRY,
    SCHEMES,
    TRAINED_SCHEMES,
    RemapSettings,
    Scheme,
    split_scheme,
)
from .train import lr_at, train_model

# The repository's committed runs (results/), found from the package rather than the working directory, so a
# notebook reads them from notebooks/ and from the generated notebooks/zh/ alike.
RESULTS_DIR: Path = Path(__file__).resolve().parents[2] / "results"

__all__ = [
    "DATA_DEPENDENT",
    "DISTANCE_REMAPS",
    "EXTENSION_VARIANTS",
    "FINETUNED",
    "FINETUNE_METHODS",
    "FREQUENCY_SCALINGS",
    "INFERENCE_VARIANTS",
    "PASSKEY_DISAGREE",
    "PPL_DISAGREE",
    "PRESETS",
    "PUBLISHED",
    "REGISTRY",
    "RESULTS_DIR",
    "SCHEMES",
    "TRAINED_SCHEMES",
    "TRAINING_FREE",
    "TUNED_SCALINGS",
    "Corpus",
    "EvalConfig",
    "ExtendConfig",
    "LabConfig",
    "LabModel",
    "LabResults",
    "ModelConfig",
    "PairedComparison",
    "PasskeyConfig",
    "RemapSettings",
    "Scheme",
    "TrainConfig",
    "WeightedOutput",
    "attention_profile",
    "batch_generator",
    "beats",
    "category",
    "claim_verdicts",
    "combine_runs",
    "comparison_table",
    "datadep_readings",
    "deployed_remaps",
    "deployed_statuses",
    "deployed_verdicts",
    "deterministic",
    "disagreements",
    "eval_spans",
    "evaluate",
    "evaluate_passkey",
    "extension_scale_agreement",
    "extension_verdicts",
    "finetune_model",
    "finetune_plateaus",
    "growth",
    "growth_range",
    "load_stdlib_corpus",
    "load_trained_model",
    "lr_at",
    "merge_results",
    "merge_seeds",
    "n_seeds",
    "paired",
    "passkey_batch",
    "passkey_best",
    "passkey_ranking",
    "passkey_spread",
    "passkey_tied",
    "passkey_values",
    "plateau",
    "practitioner_claims",
    "ranking",
    "reach_end",
    "reading_perplexity",
    "relation",
    "replay_finetune_losses",
    "replay_losses",
    "rerun",
    "retrieval",
    "retrieval_reach",
    "run_extension",
    "run_lab",
    "same_environment",
    "save_trained_model",
    "scale_agreement",
    "scale_phrase",
    "seed_values",
    "seeds_disagree",
    "seeds_text",
    "select_seeds",
    "split_scheme",
    "spread",
    "stated_family",
    "stdlib_files",
    "stored_configs",
    "summary_table",
    "takeaways",
    "tied",
    "train_model",
    "unbeaten",
    "with_family",
    "word",
]
