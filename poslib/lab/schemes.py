"""The lab's positional schemes as registered objects, each a few small hooks on one shared Transformer.

A scheme says where position enters the model, and nothing else; every hook defaults to "nowhere":

* :meth:`Scheme.embedding` / :meth:`Scheme.embed`: a module whose output is added to the token
  embeddings (learned, sinusoidal);
* :meth:`Scheme.prepare`: once per forward pass, the ingredients every layer shares, in a
  :class:`PositionContext`: RoPE's rotation e^{i·m·θ} (cos and sin computed once, not per layer for q
  and k), a fixed bias (ALiBi, Sandwich), a shared bias table (T5);
* :meth:`Scheme.layer_module` / :meth:`Scheme.layer_bias`: a per-layer module and the additive
  attention bias it produces from that layer's q and k (KERPLE, FIRE, CoPE).

:data:`REGISTRY` maps every trained scheme's name to its object (new schemes go at the end: every
model is trained from its own seed and data stream, so adding one leaves the others' numbers
unchanged). :data:`INFERENCE_VARIANTS` are a trained model evaluated differently, with no
fine-tuning: ``rope+pi``, ``rope+ntk``, ``rope+yarn`` use :func:`poslib.rope_inv_freq` with
factor s = L / train_len for an input of length L; ``rope+dynamic`` uses the dynamic NTK base for
the current length; ``rope+logn`` and ``alibi+logn`` multiply the attention logits of the query at
position m by :func:`poslib.logn_scale` (m + 1, train_len).

:data:`EXTENSION_VARIANTS` are the training-free distance remaps of :mod:`poslib.remap` on the same
``rope`` model, ``rope+rerope``, ``rope+leaky_rerope`` and ``rope+self_extend``, with the settings of
:class:`RemapSettings` (defaults relative to train_len). They are not in :data:`SCHEMES` (the committed
runs predate them); ``python -m poslib.lab --extend`` scores them (:mod:`poslib.lab.extend`).

**Scale of the sinusoidal table.** Token embeddings start with std 0.02 (GPT-2), a row norm of
about 0.16 at width 64, while PE(m) has entries ±1 and a row norm of √(d/2) ≈ 5.7: added as it is,
the table drowns the tokens, and the model is worse than NoPE at its own training length.
Vaswani et al. (2017, §3.4) make the two comparable by multiplying the token embeddings by
√d_model; this lab keeps GPT-2's embedding and instead scales the fixed table by
s = 0.02·√2, which gives PE the RMS of the token embeddings (and of the learned table) at
initialisation: every sin/cos pair has sin² + cos² = 1, so the mean square of an entry is 1/2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from ..alibi import alibi_bias
from ..attn import mask_future
from ..cope import CoPE
from ..fire import FireBias
from ..kerple import KerpleBias
from ..learned import LearnedPositionalEmbedding
from ..logn import logn_scale
from ..remap import rerope_positions, rope_remapped_scores, self_extend_max_distance, self_extend_positions
from ..rope import rope_cos_sin, rope_rotate
from ..rope_scaling import rope_inv_freq
from ..sandwich import sandwich_bias
from ..sinusoidal import SinusoidalEmbedding
from ..t5 import T5RelativeBias
from ..xpos import xpos_scale

if TYPE_CHECKING:
    from .config import ModelConfig

__all__ = [
    "EMBED_STD",
    "EXTENSION_VARIANTS",
    "INFERENCE_VARIANTS",
    "REGISTRY",
    "SCHEMES",
    "SINUSOIDAL_SCALE",
    "TRAINED_SCHEMES",
    "PositionContext",
    "RemapSettings",
    "Scheme",
    "rotate",
    "rotation",
    "split_scheme",
]

EMBED_STD = 0.02  # GPT-2's initial std of the token (and learned position) embeddings
SINUSOIDAL_SCALE = EMBED_STD * math.sqrt(2)  # PE's entries have mean square 1/2: scaled, their RMS is EMBED_STD
REMAPS = ("rerope", "leaky_rerope", "self_extend")  # training-free distance remaps (poslib.remap)
MODIFIERS = ("pi", "ntk", "dynamic", "yarn", "logn", *REMAPS)
_COPE_CHUNK_ENTRIES = 2**22  # (window, head, query, key) entries per CoPE chunk at evaluation (16 MiB per float32)
_ROPE_TYPE = {"pi": "linear", "ntk": "ntk", "dynamic": "dynamic", "yarn": "yarn"}


def rotation(positions: torch.Tensor, inv_freq: torch.Tensor, scale: Any = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """scale · (cos mθ_j, sin mθ_j) as float32, shape ``(T, head_dim/2)``, computed once per forward.

    :func:`poslib.rope_cos_sin` forms the angles and their cos/sin in float64; the scale (YaRN's
    attention factor, or xPos's per-pair ζ^(±m/scale_base)) multiplies them before the cast.
    """
    cos, sin = rope_cos_sin(positions, inv_freq)
    return (scale * cos).float(), (scale * sin).float()


def rotate(x: torch.Tensor, rot: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Rotate the pairs (x₂ⱼ, x₂ⱼ₊₁) of ``x`` ``(..., T, head_dim)`` with :func:`poslib.rope_rotate`."""
    return rope_rotate(x, *rot)


@dataclass
class PositionContext:
    """What the attention layers need about positions for one forward pass (built by :meth:`Scheme.prepare`)."""

    positions: torch.Tensor
    q_rotation: tuple[torch.Tensor, torch.Tensor] | None = None  # (cos, sin), each (T, head_dim/2)
    k_rotation: tuple[torch.Tensor, torch.Tensor] | None = None
    # (1, n_heads, T, T), −inf on future keys; None = plain causal. The leading 1 matters:
    # PyTorch's CPU flash kernel takes only 4-D masks, a 3-D one falls back to a path ~8× slower.
    bias: torch.Tensor | None = None
    logit_scale: torch.Tensor | None = None  # (T, 1) log-n factor per query
    # a remapped RoPE (poslib.remap): the whole causal logit matrix from the *unrotated* q and k of a layer
    scores: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None


@dataclass(frozen=True)
class RemapSettings:
    """The settings of the training-free remaps (:mod:`poslib.remap`); None means "relative to train_len".

    Defaults, for a model trained at L: ReRoPE's and Leaky ReRoPE's window w = L/4 (bojone/rerope's
    README reports ReRoPE-w1024 at L = 4096); Leaky ReRoPE's leak = 16 (``leaky_rerope_patch.py``:
    ``scaling_factor = 16``); Self-Extend's neighbour window W = L/4 (LongLM's README: W from 512 to 1536
    for Llama-2's 4096, its worked example uses 1024) and, per input length T, the smallest group size G
    whose largest distance, :func:`poslib.self_extend_max_distance` (T), is at most L − 1 (the README:
    "try the smallest group size first"), so no distance the model never saw is used. ``group_size``
    fixes G for every length instead. bojone's ReRoPE code also multiplies the queries by
    max(1, log(m + 1)/log L) (the lab's ``logn``); these variants do not, so that they change the
    distances only.
    """

    rerope_window: int | None = None
    leak: float = 16.0
    self_extend_window: int | None = None
    group_size: int | None = None

    def __post_init__(self) -> None:
        for name in ("rerope_window", "self_extend_window", "group_size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be None or a positive integer, got {value!r}")
        if isinstance(self.leak, bool) or not isinstance(self.leak, (int, float)) or not self.leak > 1:
            raise ValueError(f"leak must be a number > 1, got {self.leak!r}")

    def window(self, train_len: int) -> int:
        """ReRoPE's and Leaky ReRoPE's window w for a model trained at ``train_len``."""
        return self.rerope_window or max(1, train_len // 4)

    def neighbor_window(self, train_len: int) -> int:
        """Self-Extend's neighbour window W for a model trained at ``train_len``."""
        return self.self_extend_window or max(1, train_len // 4)

    def group(self, T: int, train_len: int) -> int:
        """Self-Extend's group size G for an input of length ``T``: ``group_size``, else the smallest that
        keeps every distance below ``train_len``."""
        if self.group_size is not None:
            return self.group_size
        W = self.neighbor_window(train_len)
        if W >= train_len:
            raise ValueError(f"self_extend_window ({W}) must be below train_len ({train_len}) to choose a group size")
        G = 1
        while self_extend_max_distance(T, group_size=G, neighbor_window=W) > train_len - 1:
            G += 1  # ends by G = T, where every grouped distance is W
        return G

    def positions(self, modifier: str, T: int, train_len: int, device: Any) -> Any:
        """The :class:`poslib.RemappedPositions` of ``modifier`` for an input of length ``T``."""
        if modifier == "self_extend":
            G, W = self.group(T, train_len), self.neighbor_window(train_len)
            return self_extend_positions(T, group_size=G, neighbor_window=W, backend="torch", device=device)
        leak = self.leak if modifier == "leaky_rerope" else None
        return rerope_positions(T, window=self.window(train_len), leak=leak, backend="torch", device=device)


class Scheme:
    """Where position enters the lab's model. The base class is NoPE: position enters nowhere."""

    name = "nope"
    modifiers: tuple[str, ...] = ()  # inference-time modifiers this scheme's model accepts
    takes_positions = False  # whether forward() accepts explicit positions (rope+random)

    def max_len(self, cfg: ModelConfig) -> int | None:
        """The longest input the scheme defines, or None for no limit."""
        return None

    def embedding(self, cfg: ModelConfig) -> nn.Module | None:
        """A module whose (scaled) output is added to the token embeddings, or None."""
        return None

    def embed(self, module: nn.Module, positions: torch.Tensor) -> torch.Tensor:
        """What is added to the token embeddings at ``positions``."""
        out: torch.Tensor = module(positions)
        return out

    def shared_module(self, cfg: ModelConfig) -> nn.Module | None:
        """A module shared by every layer (T5's bias table), or None."""
        return None

    def layer_module(self, cfg: ModelConfig) -> nn.Module | None:
        """A module of every attention layer (KERPLE, FIRE, CoPE), or None."""
        return None

    def prepare(self, model: Any, ctx: PositionContext, modifier: str | None) -> None:
        """Fill ``ctx`` with what every layer shares for an input of ``len(ctx.positions)`` (once per forward)."""

    def layer_bias(
        self, module: nn.Module | None, q: torch.Tensor, k: torch.Tensor, ctx: PositionContext
    ) -> torch.Tensor | None:
        """The additive attention bias ``(B or 1, n_heads, T, T)`` of one layer, −inf on future keys."""
        return ctx.bias


class Learned(Scheme):
    """x + P[m] at the input; no row beyond train_len."""

    name = "learned"

    def max_len(self, cfg: ModelConfig) -> int | None:
        return cfg.train_len

    def embedding(self, cfg: ModelConfig) -> nn.Module | None:
        return LearnedPositionalEmbedding(cfg.train_len, cfg.d_model, init_std=EMBED_STD)


class Sinusoidal(Scheme):
    """x + s·PE(m) at the input, s = 0.02·√2 (module docstring)."""

    name = "sinusoidal"

    def embedding(self, cfg: ModelConfig) -> nn.Module | None:
        return SinusoidalEmbedding(cfg.d_model)

    def embed(self, module: nn.Module, positions: torch.Tensor) -> torch.Tensor:
        return SINUSOIDAL_SCALE * super().embed(module, positions)


class Rope(Scheme):
    """q, k rotated by m·θ_i in every layer; the rotation is computed once per forward."""

    name = "rope"
    modifiers: tuple[str, ...] = ("pi", "ntk", "dynamic", "yarn", "logn", *REMAPS)

    def inv_freq(self, cfg: ModelConfig, T: int, modifier: str | None) -> tuple[torch.Tensor, float]:
        """RoPE's frequencies for an input of length ``T`` under ``modifier``, and YaRN's attention factor."""
        scaling, seq_len = None, None
        if modifier in _ROPE_TYPE:
            factor = 1.0 if modifier == "dynamic" else max(1.0, T / cfg.train_len)
            scaling = {
                "rope_type": _ROPE_TYPE[modifier],
                "factor": factor,
                "original_max_position_embeddings": cfg.train_len,
            }
            seq_len = T
        inv_freq, attention_factor = rope_inv_freq(
            cfg.head_dim, cfg.rope_base, scaling, seq_len=seq_len, backend="torch"
        )
        return inv_freq, attention_factor

    def prepare(self, model: Any, ctx: PositionContext, modifier: str | None) -> None:
        scaling = getattr(model, "rope_scaling", None)
        if scaling is not None:  # a model fine-tuned with a fixed scaling (poslib.lab.extend): the same at every length
            if modifier is not None:
                raise ValueError(f"a model fine-tuned with rope_scaling {scaling} takes no modifier, got {modifier!r}")
            # dynamic NTK reads the current length (HF's "dynamic"); the static scalings ignore it
            seq_len = len(ctx.positions) if scaling.get("rope_type") == "dynamic" else None
            inv_freq, factor = rope_inv_freq(
                model.cfg.head_dim, model.cfg.rope_base, scaling, seq_len=seq_len, backend="torch"
            )
        elif modifier in REMAPS:
            ctx.scores = self.remapped_scores(model, len(ctx.positions), modifier, ctx.positions.device)
            return
        else:
            inv_freq, factor = self.inv_freq(model.cfg, len(ctx.positions), modifier)
        ctx.q_rotation = ctx.k_rotation = rotation(ctx.positions, inv_freq.to(ctx.positions.device), factor)

    def remapped_scores(
        self, model: Any, T: int, modifier: str, device: Any
    ) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        """q, k ↦ the causal logits (R(d'_mn) q_m)ᵀ k_n / √d of the remap ``modifier``.

        :func:`poslib.rope_remapped_scores` on the layer's unrotated q and k.

        One RoPE pass per region and a selection per pair: twice plain attention's products, no
        rotation per pair. The positions are built once per forward pass and shared by the layers.
        """
        cfg = model.cfg
        settings: RemapSettings = getattr(model, "remap", None) or RemapSettings()
        positions = settings.positions(modifier, T, cfg.train_len, device)
        inv_freq = self.inv_freq(cfg, T, None)[0].to(device)
        scale = 1 / math.sqrt(cfg.head_dim)

        def scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = mask_future(rope_remapped_scores(q, k, positions, inv_freq) * scale)
            return out

        return scores


class RopeRandom(Rope):
    """RoPE at a sorted random subset of 0 … 32·train_len − 1 (a fresh draw per training step)."""

    name = "rope+random"
    modifiers = ()
    takes_positions = True


class XPos(Rope):
    """RoPE plus a per-pair decay ζ_i^(±m/scale_base): queries ×, keys ÷."""

    name = "xpos"
    modifiers = ()

    def prepare(self, model: Any, ctx: PositionContext, modifier: str | None) -> None:
        cfg, p = model.cfg, ctx.positions.double()
        inv_freq = self.inv_freq(cfg, len(p), None)[0].to(p.device)
        for key in (False, True):
            zeta = xpos_scale(p, cfg.head_dim, scale_base=cfg.xpos_scale_base, is_key=key)
            setattr(ctx, "k_rotation" if key else "q_rotation", rotation(p, inv_freq, zeta))


class T5(Scheme):
    """A learned bias per (bucket of j − i, head), one table shared by the layers (Raffel et al.)."""

    name = "t5"

    def shared_module(self, cfg: ModelConfig) -> nn.Module | None:
        # Causal, so unidirectional buckets; at most one bucket per distance: short training lengths get fewer.
        max_distance = cfg.t5_max_distance or cfg.train_len
        return T5RelativeBias(
            cfg.n_heads, num_buckets=min(cfg.t5_buckets, max_distance), bidirectional=False, max_distance=max_distance
        )

    def prepare(self, model: Any, ctx: PositionContext, modifier: str | None) -> None:
        T = len(ctx.positions)
        ctx.bias = mask_future(model.shared(q_len=T, k_len=T))[None]


class FixedBias(Scheme):
    """A bias that depends on the length only: built once per (length, device) and cached on the model."""

    def build(self, cfg: ModelConfig, T: int, device: Any) -> torch.Tensor:
        """The causal bias ``(n_heads, T, T)``."""
        raise NotImplementedError

    def prepare(self, model: Any, ctx: PositionContext, modifier: str | None) -> None:
        T, device = len(ctx.positions), ctx.positions.device
        key = (T, str(device))
        if key not in model.fixed_bias:
            model.fixed_bias[key] = self.build(model.cfg, T, device).float()[None]
        ctx.bias = model.fixed_bias[key]


class Alibi(FixedBias):
    """Bias −m_h·(i − j)."""

    name = "alibi"
    modifiers = ("logn",)

    def build(self, cfg: ModelConfig, T: int, device: Any) -> torch.Tensor:
        bias: torch.Tensor = alibi_bias(cfg.n_heads, q_len=T, k_len=T, causal=True, backend="torch", device=device)
        return bias


class Sandwich(FixedBias):
    """Bias Σ_k [cos((i − j)ω_k) − 1] / (8h/H)."""

    name = "sandwich"

    def build(self, cfg: ModelConfig, T: int, device: Any) -> torch.Tensor:
        bias: torch.Tensor = sandwich_bias(
            q_len=T, k_len=T, dim=cfg.d_model, n_heads=cfg.n_heads, causal=True, backend="torch", device=device
        )
        return bias


class LayerBias(Scheme):
    """A learned bias module per layer, called with the input length (KERPLE, FIRE)."""

    def layer_bias(
        self, module: nn.Module | None, q: torch.Tensor, k: torch.Tensor, ctx: PositionContext
    ) -> torch.Tensor | None:
        T = q.shape[-2]
        out: torch.Tensor = module(q_len=T, k_len=T, causal=True)[None]  # type: ignore[misc]
        return out


class Kerple(LayerBias):
    """Learned bias −r₁·log(1 + r₂·(i − j)) per layer and head (as in the paper's code)."""

    name = "kerple"

    def layer_module(self, cfg: ModelConfig) -> nn.Module | None:
        return KerpleBias(cfg.n_heads, kind="log")


class Fire(LayerBias):
    """Learned bias f_θ(ψ(i − j)/ψ(max(L, i))) per layer."""

    name = "fire"

    def layer_module(self, cfg: ModelConfig) -> nn.Module | None:
        return FireBias(cfg.n_heads, hidden=cfg.fire_hidden, L_init=float(cfg.train_len))


class Cope(Scheme):
    """q_m·e[p_mn], p_mn = gated count of keys n … m, per layer (positions clamped to cope_max_pos − 1)."""

    name = "cope"

    def layer_module(self, cfg: ModelConfig) -> nn.Module | None:
        # The table is shared by the heads, as in the paper's code.
        return CoPE(cfg.cope_max_pos or cfg.train_len, cfg.head_dim)

    def layer_bias(
        self, module: nn.Module | None, q: torch.Tensor, k: torch.Tensor, ctx: PositionContext
    ) -> torch.Tensor | None:
        assert module is not None
        B, H, T, D = q.shape
        # Evaluation at 16 × train_len holds about a dozen (B, H, T, T) tensors here (positions,
        # indices, gathers): without gradients, take the batch a few windows at a time.
        chunk = B if torch.is_grad_enabled() else max(1, _COPE_CHUNK_ENTRIES // (H * T * T))
        parts = []
        for s in range(0, B, chunk):
            qs, ks = q[s : s + chunk], k[s : s + chunk]
            # The paper's Appendix B: the gates are the masked attention logits q·k/√d themselves,
            # and q·e[p] is added to them unscaled (SDPA adds attn_mask after its own 1/√d).
            logits = mask_future(qs @ ks.transpose(-1, -2) / math.sqrt(D))
            parts.append(mask_future(module(qs, logits)))
        return torch.cat(parts)


REGISTRY: dict[str, Scheme] = {
    s.name: s
    for s in (
        Scheme(),
        Learned(),
        Sinusoidal(),
        Rope(),
        XPos(),
        T5(),
        Alibi(),
        Kerple(),
        Sandwich(),
        Fire(),
        Cope(),
        RopeRandom(),
    )
}
TRAINED_SCHEMES = tuple(REGISTRY)
# name -> (trained scheme it reuses, what changes at evaluation)
INFERENCE_VARIANTS = {
    "rope+pi": ("rope", "pi"),
    "rope+ntk": ("rope", "ntk"),
    "rope+dynamic": ("rope", "dynamic"),
    "rope+yarn": ("rope", "yarn"),
    "rope+logn": ("rope", "logn"),
    "alibi+logn": ("alibi", "logn"),
}
SCHEMES = TRAINED_SCHEMES + tuple(INFERENCE_VARIANTS)
# the training-free remaps of the rope model (poslib.remap), scored by `python -m poslib.lab --extend`
EXTENSION_VARIANTS = {
    "rope+rerope": ("rope", "rerope"),
    "rope+leaky_rerope": ("rope", "leaky_rerope"),
    "rope+self_extend": ("rope", "self_extend"),
}


def split_scheme(name: str) -> tuple[str, str | None]:
    """``"rope+ntk"`` → ``("rope", "ntk")``; ``"alibi"`` → ``("alibi", None)``; unknown names → ValueError.

    A trained scheme is its own base, even when its name has a ``+`` (``"rope+random"`` →
    ``("rope+random", None)``): only :data:`INFERENCE_VARIANTS` share another scheme's model.
    """
    if name in REGISTRY:
        return name, None
    if name in INFERENCE_VARIANTS:
        return INFERENCE_VARIANTS[name]
    if name in EXTENSION_VARIANTS:
        return EXTENSION_VARIANTS[name]
    raise ValueError(f"unknown scheme {name!r}; known schemes: {', '.join(SCHEMES + tuple(EXTENSION_VARIANTS))}")


def logn_context(ctx: PositionContext, train_len: int) -> None:
    """log-n scaling: the logits of the query at position m are multiplied by logn_scale(m + 1, train_len)."""
    ctx.logit_scale = logn_scale(ctx.positions + 1, train_len).float()[:, None]
