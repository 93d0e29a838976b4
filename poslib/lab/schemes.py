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

**Issue 38: position from the data.** :data:`ADDED_SCHEMES` are trained schemes registered after the committed
runs (so not in :data:`SCHEMES`, which those files list exactly, nor in :data:`TRAINED_SCHEMES`): ``fox`` and
``fox+rope`` (a forget gate per token and head, :class:`ForgetGate`, :func:`poslib.forgetting_attention`),
``stickbreaking`` (:func:`poslib.stickbreaking_attention`'s weights; the rest of the stick to a learned vector)
and ``rope_nope_hybrid`` (RoPE in some layers, none in the others: :meth:`Scheme.rope_layer`). They use three
hooks the older schemes leave alone: :meth:`Scheme.gate_bias` (a bias from the layer's input),
:meth:`Scheme.attend` (an attention of the scheme's own) and :meth:`Scheme.rope_layer`. :data:`ADDED_VARIANTS`
holds ``rope+dca``, Dual Chunk Attention (:func:`poslib.dca.dual_chunk_positions`) on the trained ``rope`` model
with ChunkLlama's settings for L_train (:func:`dca_settings`), scored through the remap path.

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
import torch.nn.functional as F
from torch import nn

from ..alibi import alibi_bias
from ..attn import mask_future
from ..cope import CoPE
from ..dca import dual_chunk_positions
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
    "ADDED_SCHEMES",
    "ADDED_VARIANTS",
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
    "dca_settings",
    "rotate",
    "rotation",
    "split_scheme",
]

EMBED_STD = 0.02  # GPT-2's initial std of the token (and learned position) embeddings
SINUSOIDAL_SCALE = EMBED_STD * math.sqrt(2)  # PE's entries have mean square 1/2: scaled, their RMS is EMBED_STD
REMAPS = ("rerope", "leaky_rerope", "self_extend")  # training-free distance remaps (poslib.remap)
CHUNK_REMAPS = ("dca",)  # Dual Chunk Attention (poslib.dca): a three-region remap, scored like REMAPS
MODIFIERS = ("pi", "ntk", "dynamic", "yarn", "logn", *REMAPS, *CHUNK_REMAPS)
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
        if modifier == "dca":
            chunk_size, local_window = dca_settings(train_len)
            return dual_chunk_positions(
                T, chunk_size=chunk_size, local_window=local_window, backend="torch", device=device
            )
        if modifier == "self_extend":
            G, W = self.group(T, train_len), self.neighbor_window(train_len)
            return self_extend_positions(T, group_size=G, neighbor_window=W, backend="torch", device=device)
        leak = self.leak if modifier == "leaky_rerope" else None
        return rerope_positions(T, window=self.window(train_len), leak=leak, backend="torch", device=device)


def dca_settings(train_len: int) -> tuple[int, int]:
    """Dual Chunk Attention's ``(chunk_size, local_window)`` for a model trained at ``train_len``, as ChunkLlama sets.

    HKUNLP/ChunkLlama ``chunkllama_attn_replace.py`` (commit 847ae71),
    ``replace_with_chunkllama(pretraining_length, local_window_size=None)``: ``chunk_size = pretraining_length * 3
    // 4`` and ``local_window = pretraining_length // 8`` (its first version, 15c5787, had ``// 16``). For
    L_train = 64: chunk_size 48, local_window 8, chunks of s = 40 keys; no distance exceeds 48, inputs of up to 49
    tokens are plain RoPE (the second chunk's first local_window + 1 queries keep their true distances), and from
    50 tokens on a true distance of 10 already reads 9, so DCA already acts at L_train. ChunkLlama's code also
    multiplies cos and sin by mscale = 0.05·ln(T / L_train) + 1 beyond L_train; ``rope+dca`` does not (nor does
    :func:`poslib.dual_chunk_attention` by default), so that it changes the distances only, as the other remaps do.
    """
    return train_len * 3 // 4, train_len // 8


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

    # The hooks below came with issue 38 (position from the data); the schemes before it use none of them.
    gated = False  # whether the bias comes from the layer's *input* (FoX's forget gate): gate_bias, not layer_bias
    own_attention = False  # whether the scheme replaces softmax attention itself (stick-breaking): attend

    def rope_layer(self, layer: int, cfg: ModelConfig) -> bool:
        """Whether layer ``layer`` (0-based) uses the rotation :meth:`prepare` computed (all layers, but a hybrid's)."""
        return True

    def gate_bias(self, module: nn.Module | None, x: torch.Tensor, ctx: PositionContext) -> torch.Tensor:
        """The additive bias ``(B, n_heads, T, T)`` computed from the layer's input ``x`` ``(B, T, d_model)``."""
        raise NotImplementedError

    def attend(
        self, module: nn.Module | None, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, weights: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(output (B, n_heads, T, head_dim), weights or None)`` of a scheme with its own attention."""
        raise NotImplementedError


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
    modifiers: tuple[str, ...] = ("pi", "ntk", "dynamic", "yarn", "logn", *REMAPS, *CHUNK_REMAPS)

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
        elif modifier in REMAPS or modifier in CHUNK_REMAPS:
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


class ForgetGate(nn.Module):
    """FoX's forget gate: log f_t = log σ(w_fᵀ x_t + b_f), one scalar per token and head, from the layer input x.

    As the authors' ``ForgettingAttentionLayer`` (zhixuan-lin/forgetting-transformer,
    ``modeling_forgetting_transformer.py``, ``fgate_type="full"``): ``fgate_proj = nn.Linear(hidden_size,
    num_heads, bias=True)`` on the normalised layer input, ``logsigmoid`` of its output in float32; the weight
    starts at N(0, 0.02²) (``initializer_range``) and the bias at zero (their ``fgate_bias_init``, the
    T_min/T_max initialisation, is asserted off for the data-dependent gate and used only for the fixed and
    bias-only ones), so every gate starts near σ(0) = 1/2.
    """

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d_model, n_heads, bias=True)
        nn.init.normal_(self.proj.weight, std=EMBED_STD)
        nn.init.zeros_(self.proj.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """log f ``(B, n_heads, T)`` for the layer input ``x`` ``(B, T, d_model)``."""
        return F.logsigmoid(self.proj(x).float()).transpose(-1, -2)


def forgetting_bias(log_f: torch.Tensor) -> torch.Tensor:
    """FoX's bias Σ_{l=j+1..i} log f_l = Λ_i − Λ_j, −inf on future keys: ``(B, H, T)`` → ``(B, H, T, T)`` float32.

    :func:`poslib.forgetting_attention`'s term (added unscaled, beside scale·q·k): Λ and the differences in
    float64, so that long inputs lose no digits to Λ's growing magnitude, then cast to float32.
    """
    lam = log_f.double().cumsum(-1)  # Λ_t = Σ_{l≤t} log f_l
    bias: torch.Tensor = mask_future((lam[..., :, None] - lam[..., None, :]).float())
    return bias


class Fox(Scheme):
    """FoX (Lin et al., ICLR 2025): no positions, a forget gate per token and head, bias Σ_{l=j+1..i} log f_l."""

    name = "fox"
    gated = True

    def layer_module(self, cfg: ModelConfig) -> nn.Module | None:
        return ForgetGate(cfg.d_model, cfg.n_heads)

    def gate_bias(self, module: nn.Module | None, x: torch.Tensor, ctx: PositionContext) -> torch.Tensor:
        assert module is not None
        return forgetting_bias(module(x))


class FoxRope(Fox, Rope):
    """FoX's forget gate and RoPE together (the paper's "FoX with RoPE" ablation)."""

    name = "fox+rope"
    modifiers = ()


class StickBreakingRemainder(nn.Module):
    """Where the rest of the stick goes: a learned vector per head, zero at the start (``head_bias``)."""

    def __init__(self, n_heads: int, head_dim: int) -> None:
        super().__init__()
        self.head_bias = nn.Parameter(torch.zeros(n_heads, head_dim))


def stickbreaking_weights(q: torch.Tensor, k: torch.Tensor, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(A, rest)``: A_ij = σ(z_ij) Π_{j<m<i} (1 − σ(z_im)) over keys j < i, z = scale·q kᵀ, and 1 − Σ_j A_ij.

    Log space as :func:`poslib.stickbreaking_attention` and the reference (``sb_ref.py``): log σ(z) for the key's
    share, Σ_{m>j} log σ(−z_im) over the keys nearer the query (a reversed cumulative sum, shifted by one key
    rather than subtracted, so nothing cancels), and the rest as Π_m (1 − β_im) = exp(Σ_m log σ(−z_im)).
    """
    T = q.shape[-2]
    z = (q @ k.transpose(-1, -2)) * scale
    seen = torch.ones(T, T, dtype=torch.bool, device=q.device).tril(-1)  # keys j < i (attend_current=False)
    log_keep = F.logsigmoid(-z).masked_fill(~seen, 0.0)  # log(1 − β_im) on the keys seen
    behind = log_keep.flip(-1).cumsum(-1).flip(-1)  # Σ_{m≥j}
    after = torch.cat([behind[..., 1:], torch.zeros_like(behind[..., :1])], dim=-1)  # Σ_{m>j}
    A = (F.logsigmoid(z) + after).masked_fill(~seen, -math.inf).exp()
    return A, behind[..., 0].exp()


class StickBreaking(Scheme):
    """Stick-breaking attention (Tan et al., ICLR 2025), no position encoding; the remainder to a learned vector.

    The weights are :func:`poslib.stickbreaking_attention`'s (σ logits q·k/√d, keys j < i: the reference's
    ``attend_current=False`` default). The rest of the stick follows the layer the authors' 3B model runs in,
    IBM/dolomite-engine's ``SBAttention``: ``hidden_states + rem[..., None] * self.head_bias``, a learned
    per-head vector initialised to zero; :func:`poslib.stickbreaking_attention` (like the reference's tests)
    gives it to the query's own value v_i instead. That layer also group-normalises each head's output before the
    output projection; the lab leaves that out, so that only the attention differs from the other schemes.
    """

    name = "stickbreaking"
    own_attention = True

    def layer_module(self, cfg: ModelConfig) -> nn.Module | None:
        return StickBreakingRemainder(cfg.n_heads, cfg.head_dim)

    def attend(
        self, module: nn.Module | None, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, weights: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        assert isinstance(module, StickBreakingRemainder)
        A, rest = stickbreaking_weights(q, k, 1 / math.sqrt(q.shape[-1]))
        out = A @ v + rest[..., None] * module.head_bias[None, :, None, :]
        return out, (A if weights else None)


class RopeNopeHybrid(Rope):
    """RoPE in some layers, none in the others: layer i is NoPE when (i + 1) is a multiple of the interval.

    Llama 4's iRoPE and SmolLM3 (Hugging Face ``Llama4TextConfig`` / ``SmolLM3Config``: ``no_rope_layers[i] =
    int((i + 1) % no_rope_layer_interval != 0)``, interval 4: every fourth layer NoPE). The interval is 4 capped at
    the depth, so that the last layer is NoPE: with the lab's 2 layers, layer 0 RoPE and layer 1 NoPE (with 4,
    layer 3 NoPE, as those models). Llama 4 also makes its RoPE layers chunked (8192 tokens) and scales the NoPE
    layers' queries with length (``attn_temperature_tuning``); neither is here.
    """

    name = "rope_nope_hybrid"
    modifiers = ()
    nope_interval = 4

    def rope_layer(self, layer: int, cfg: ModelConfig) -> bool:
        return (layer + 1) % min(self.nope_interval, cfg.n_layers) != 0


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
        Fox(),
        FoxRope(),
        StickBreaking(),
        RopeNopeHybrid(),
    )
}
# Trained schemes registered after the committed runs (issue 38): in REGISTRY and on the command line, not in
# SCHEMES, so `--schemes all` and the committed files (which list SCHEMES exactly) are unchanged.
ADDED_SCHEMES = ("fox", "fox+rope", "stickbreaking", "rope_nope_hybrid")
TRAINED_SCHEMES = tuple(s for s in REGISTRY if s not in ADDED_SCHEMES)
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


# training-free readings added with issue 38, like INFERENCE_VARIANTS but not in SCHEMES (see ADDED_SCHEMES)
ADDED_VARIANTS = {"rope+dca": ("rope", "dca")}


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
    if name in ADDED_VARIANTS:
        return ADDED_VARIANTS[name]
    known = SCHEMES + tuple(EXTENSION_VARIANTS) + ADDED_SCHEMES + tuple(ADDED_VARIANTS)
    raise ValueError(f"unknown scheme {name!r}; known schemes: {', '.join(known)}")


def logn_context(ctx: PositionContext, train_len: int) -> None:
    """log-n scaling: the logits of the query at position m are multiplied by logn_scale(m + 1, train_len)."""
    ctx.logit_scale = logn_scale(ctx.positions + 1, train_len).float()[:, None]
