"""The lab's configuration: one nested, frozen dataclass, one validator, and the CLI built from its fields.

:class:`LabConfig` holds what a run is (the schemes) and three sections:

* :class:`ModelConfig`: the shape of every model (the scheme is chosen per model, not here);
* :class:`TrainConfig`: seeds, optimizer, schedule, steps, threads, device;
* :class:`EvalConfig`: the evaluation lengths and how many validation bytes they score;
* :class:`PasskeyConfig`: passkey retrieval, trained beside the corpus and scored (off by default).

Every field carries its help text and its constraint in ``metadata``; :func:`check_fields` is the
one validator that reads them (each section calls it from ``__post_init__``), and
:func:`poslib.lab.__main__.build_parser` turns the same fields into command-line options.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .passkey import passkey_layout
from .schemes import ADDED_SCHEMES, ADDED_VARIANTS, EXTENSION_VARIANTS, SCHEMES, split_scheme

__all__ = [
    "DEFAULT_EVAL_MULTIPLES",
    "PRESETS",
    "EvalConfig",
    "LabConfig",
    "ModelConfig",
    "PasskeyConfig",
    "TrainConfig",
    "check_fields",
    "config_fields",
]

DEFAULT_EVAL_MULTIPLES = (1, 2, 4, 8, 16)

# What a constraint in a field's metadata means, as the error message says it.
_RULES: dict[str, tuple[Any, str]] = {
    "positive": (lambda v: v >= 1, "a positive integer"),
    "non-negative": (lambda v: v >= 0, "an integer ≥ 0"),
    "positive number": (lambda v: math.isfinite(v) and v > 0, "a positive number"),
    "non-negative number": (lambda v: math.isfinite(v) and v >= 0, "a number ≥ 0"),
    "percent": (lambda v: 0 <= v <= 100, "an integer percentage (0 … 100)"),
}


def _f(default: Any, help: str, rule: str | None = None) -> Any:
    """A dataclass field with its help text and constraint (``rule``: a key of ``_RULES``) in metadata."""
    return field(default=default, metadata={"help": help, "rule": rule})


def _check_value(name: str, value: Any, rule: str) -> None:
    test, kind = _RULES[rule]
    integer = "integer" in kind
    ok_type = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    if isinstance(value, bool) or not isinstance(value, ok_type) or not test(value):
        raise ValueError(f"{name} must be {kind}, got {value!r}")


def check_fields(obj: Any) -> None:
    """The one validator: every field of the dataclass ``obj`` that names a rule in its metadata obeys it.

    A tuple field is checked element by element (and must be a non-empty sequence, not a string);
    ``None`` is accepted where the field's default is ``None`` (it means "derive from the others").
    """
    for f in dataclasses.fields(obj):
        value, rule = getattr(obj, f.name), f.metadata.get("rule")
        if value is None and f.default is None:
            continue
        if isinstance(f.default, tuple) or (f.default is None and "tuple" in str(f.type)):
            if isinstance(value, (str, int)) or not value:
                raise ValueError(f"{f.name} must be a non-empty sequence, got {value!r}")
            value = tuple(value)
            object.__setattr__(obj, f.name, value)
            items = value
        else:
            items = (value,)
        if rule is not None:
            for item in items:
                _check_value(f.name, item, rule)


@dataclass(frozen=True)
class ModelConfig:
    """Everything that fixes a model's shape, for every scheme (the scheme itself is chosen per model)."""

    train_len: int = _f(64, "training context L_train (bytes)", "positive")
    d_model: int = _f(64, "model width", "positive")
    n_layers: int = _f(2, "Transformer blocks", "positive")
    n_heads: int = _f(4, "attention heads", "positive")
    vocab_size: int = _f(256, "vocabulary (bytes)", "positive")
    rope_base: float = _f(10000.0, "RoPE / xPos frequency base", "positive number")
    xpos_scale_base: float = _f(512.0, "xPos decay scale", "positive number")
    t5_buckets: int = _f(32, "T5 relative-position buckets", "positive")
    # None = train_len: every distance ≥ train_len then shares the last bucket, which
    # training reaches. T5's 128 with train_len 64 would leave buckets that no
    # training example ever updates, and the model would meet them only at test time.
    t5_max_distance: int | None = _f(None, "T5's max distance; None = train_len", "positive")
    fire_hidden: int = _f(32, "FIRE's MLP width (one hidden ReLU layer)", "positive")
    # CoPE's number of position embeddings; None = train_len (a count never exceeds it in training)
    cope_max_pos: int | None = _f(None, "CoPE's position embeddings; None = train_len", "positive")
    # rope+random draws its positions from 0 … random_max_pos − 1; None = 32 × train_len, twice the
    # lab's longest evaluation length (at N = L every position is taken and the gaps are all 1)
    random_max_pos: int | None = _f(None, "rope+random's position range; None = 32 × train_len", "positive")

    def __post_init__(self) -> None:
        check_fields(self)
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"d_model ({self.d_model}) must split into n_heads ({self.n_heads}) heads of even size "
                "(RoPE rotates pairs)"
            )

    @property
    def head_dim(self) -> int:
        """d_model / n_heads."""
        return self.d_model // self.n_heads


@dataclass(frozen=True)
class TrainConfig:
    """Seeds, optimizer (AdamW), schedule (linear warm-up, cosine to lr/10), steps and where to run."""

    steps: int = _f(600, "optimizer steps per trained model", "non-negative")
    seeds: tuple[int, ...] = _f((0,), "seeds (error bars when more than one)", "non-negative")
    batch_size: int = _f(32, "sequences per step", "positive")
    lr: float = _f(3e-3, "peak learning rate", "positive number")
    warmup_steps: int = _f(50, "linear warm-up steps", "non-negative")
    weight_decay: float = _f(
        0.1, "AdamW weight decay (matrices; none on vectors, learned's and T5's tables)", "non-negative number"
    )
    threads: int = _f(1, "torch CPU threads (fixed: the same bits on any machine)", "positive")
    # the curve the plateau rule reads (poslib.lab.plateau); the held-out spans sit between the test spans
    pretrain_heldout_every: int = _f(
        0, "held-out loss at train_len every this many pretraining steps (0: never)", "non-negative"
    )
    pretrain_heldout_spans: int = _f(4, "held-out validation spans watched during pretraining", "positive")
    device: str = _f("cpu", "cpu, cuda or cuda:N")

    def __post_init__(self) -> None:
        check_fields(self)
        if self.device not in ("cpu", "cuda") and not self.device.startswith("cuda:"):
            raise ValueError(f"device must be 'cpu' or 'cuda[:n]', got {self.device!r}")


@dataclass(frozen=True)
class EvalConfig:
    """Where models are scored: the lengths, and the validation spans every length cuts into windows."""

    eval_lens: tuple[int, ...] | None = _f(None, "evaluation lengths; None = train_len × 1, 2, 4, 8, 16", "positive")
    n_eval_spans: int = _f(32, "validation spans scored at every length", "positive")
    eval_batch_tokens: int = _f(8192, "bytes per evaluation forward pass (bounds memory)", "positive")

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass(frozen=True)
class PasskeyConfig:
    """Passkey retrieval (:mod:`poslib.lab.passkey`): trained beside the corpus, scored at every evaluation length."""

    passkey: bool = _f(False, "train on passkey sequences beside the corpus and score retrieval")
    passkey_rows: int = _f(16, "passkey sequences per step, beside batch_size corpus windows", "positive")
    key_digits: int = _f(5, "digits of the key", "positive")
    passkey_depths: tuple[int, ...] = _f(
        (0, 25, 50, 75, 100), "needle depths scored (% of the filler before it)", "percent"
    )
    passkey_samples: int = _f(20, "test sequences per length and depth", "positive")

    def __post_init__(self) -> None:
        check_fields(self)
        if not isinstance(self.passkey, bool):
            raise ValueError(f"passkey must be True or False, got {self.passkey!r}")


@dataclass(frozen=True)
class LabConfig:
    """A complete, repeatable description of one lab run (recorded in the results file)."""

    schemes: tuple[str, ...] = _f(
        SCHEMES,
        f"schemes to train and score; all = the {len(SCHEMES)} of the committed runs ({', '.join(SCHEMES)}); "
        f"also {', '.join(ADDED_SCHEMES + tuple(ADDED_VARIANTS) + tuple(EXTENSION_VARIANTS))}",
    )
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    retrieval: PasskeyConfig = field(default_factory=PasskeyConfig)

    def __post_init__(self) -> None:
        check_fields(self)
        if self.retrieval.passkey:
            passkey_layout(self.model.train_len, self.retrieval.key_digits)
        for name in self.schemes:
            split_scheme(name)
        if len(set(self.schemes)) != len(self.schemes):
            raise ValueError(f"schemes contains duplicates: {list(self.schemes)}")
        L = self.model.train_len
        lens = self.eval.eval_lens or tuple(m * L for m in DEFAULT_EVAL_MULTIPLES)
        if any(n % L for n in lens):
            bad = next(n for n in lens if n % L)
            raise ValueError(
                f"eval_lens must be multiples of train_len={L} (the scaled-RoPE factors are L / train_len), got {bad}"
            )
        object.__setattr__(self, "eval", dataclasses.replace(self.eval, eval_lens=tuple(sorted(set(lens)))))

    @property
    def train_len(self) -> int:
        """L_train (``model.train_len``): the model's, the data's and the evaluation's unit of length."""
        return self.model.train_len

    @property
    def eval_lens(self) -> tuple[int, ...]:
        """The evaluation lengths, sorted (filled in from the default multiples when not given)."""
        assert self.eval.eval_lens is not None  # filled in by __post_init__
        return self.eval.eval_lens

    @property
    def span_len(self) -> int:
        """Length of each evaluation span: the least common multiple of the evaluation lengths."""
        return math.lcm(*self.eval_lens)

    def replace(self, **changes: Any) -> LabConfig:
        """A copy with the named fields changed, whichever section they live in (``steps=300, d_model=128``).

        Evaluation lengths that were the default multiples of train_len follow a new train_len.
        """
        where = {f.name: section for section, f, _ in config_fields()}
        unknown = sorted(set(changes) - set(where))
        if unknown:
            raise ValueError(f"unknown configuration field(s) {unknown}; known: {', '.join(where)}")
        if "train_len" in changes and "eval_lens" not in changes:
            if self.eval_lens == tuple(m * self.train_len for m in DEFAULT_EVAL_MULTIPLES):
                changes["eval_lens"] = None
        by_section: dict[str | None, dict[str, Any]] = {}
        for name, value in changes.items():
            by_section.setdefault(where[name], {})[name] = value
        top = by_section.pop(None, {})
        sections = {s: dataclasses.replace(getattr(self, s), **kw) for s, kw in by_section.items() if s is not None}
        return dataclasses.replace(self, **top, **sections)

    @classmethod
    def preset(cls, name: str) -> LabConfig:
        """A named configuration of :data:`PRESETS` (``"full"``: the committed full run; ``"gpu"``: larger, CUDA)."""
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {', '.join(sorted(PRESETS))}, got {name!r}")
        return cls().replace(**PRESETS[name][1])

    def differences(self, other: LabConfig) -> dict[str, tuple[Any, Any]]:
        """``{field: (this value, other's value)}`` for every field (of any section) where the two differ."""
        out = {}
        for section, f, _ in config_fields():
            mine, theirs = (getattr(getattr(c, section) if section else c, f.name) for c in (self, other))
            if mine != theirs:
                out[f.name] = (mine, theirs)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Nested plain-dict form for the results file."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LabConfig:
        """The configuration stored by :meth:`to_dict` (lists from JSON become tuples)."""
        sections = {f.name: f.type for f in dataclasses.fields(cls) if f.name != "schemes"}
        unknown = set(data) - set(sections) - {"schemes"}
        if unknown:
            raise ValueError(f"unknown configuration keys {sorted(unknown)}; expected schemes, {', '.join(sections)}")
        hints = typing.get_type_hints(cls)
        kwargs: dict[str, Any] = {"schemes": tuple(data.get("schemes", SCHEMES))}
        for name in sections:
            section_cls = hints[name]
            values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.get(name, {}).items()}
            kwargs[name] = section_cls(**values)
        return cls(**kwargs)


def config_fields() -> list[tuple[str | None, dataclasses.Field[Any], Any]]:
    """Every leaf field of :class:`LabConfig` as ``(section or None, field, type)``: what the CLI exposes."""
    out: list[tuple[str | None, dataclasses.Field[Any], Any]] = []
    hints = typing.get_type_hints(LabConfig)
    for f in dataclasses.fields(LabConfig):
        section = hints[f.name]
        if dataclasses.is_dataclass(section):
            sub_hints = typing.get_type_hints(section)
            out += [(f.name, g, sub_hints[g.name]) for g in dataclasses.fields(section)]
        else:
            out.append((None, f, section))
    return out


# name -> (what it is, the fields it changes from LabConfig()'s defaults)
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "full": (
        "perplexity and passkey retrieval, 3 seeds, 2000 steps: results/lab_full.json (--jobs 2)",
        {"seeds": (0, 1, 2), "passkey": True, "steps": 2000},
    ),
    "gpu": (
        "the same experiment 4x wider, twice as deep, L_train = 256, for one CUDA GPU",
        {
            "seeds": (0, 1, 2),
            "passkey": True,
            "train_len": 256,
            "d_model": 256,
            "n_layers": 4,
            "n_heads": 8,
            "steps": 6000,
            "batch_size": 64,
            "passkey_rows": 32,
            "lr": 1e-3,
            "warmup_steps": 200,
            "eval_batch_tokens": 65536,
            "device": "cuda",
        },
    ),
}
