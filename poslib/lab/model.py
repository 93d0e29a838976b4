"""A small decoder-only Transformer whose positional scheme is chosen by name.

The architecture is GPT-2's, shrunk (nanoGPT style): token embedding → n_layers
× [LayerNorm → causal self-attention → residual, LayerNorm → MLP → residual] →
LayerNorm → output head tied to the token embedding. Only the place where
position enters changes from scheme to scheme, and every scheme is the poslib
implementation:

=============  ====================================================  ==========================
scheme         where position enters                                 poslib
=============  ====================================================  ==========================
``nope``       nowhere (the causal mask is the only order signal)     —
``learned``    x + P[m] at the input; no row beyond train_len         LearnedPositionalEmbedding
``sinusoidal`` x + s·PE(m) at the input, s = 0.02·√2 (see below)        SinusoidalEmbedding
``rope``       q, k rotated by m·θ_i in every layer                   apply_rope, rope_inv_freq
``xpos``       RoPE plus a per-pair decay ζ_i^(±m/512)                apply_xpos
``t5``         learned bias per (bucket of j − i, head), one table    T5RelativeBias, mask_future
``alibi``      bias −m_h·(i − j)                                      alibi_bias
``kerple``     learned bias −r₁·log(1 + r₂·(i − j)) per layer, head   KerpleBias
``sandwich``   bias Σ_k [cos((i − j)ω_k) − 1] / (8h/H)                sandwich_bias
``fire``       learned bias f_θ(ψ(i − j)/ψ(max(L, i))) per layer      FireBias
``cope``       q_i·e[p_ij], p_ij = gated count of keys j … i, per     CoPE
               layer (positions clamped to train_len − 1)
``rope+random``RoPE at a sorted random subset of 0 … 32·train_len − 1  randomized_positions,
               (a fresh draw per training step, seeded ones at test)    apply_rope
=============  ====================================================  ==========================

``rope+random`` is a *trained* scheme despite its ``+``: a model of its own, trained
with randomized positions (Ruoss et al., 2023). Only the names in
:data:`INFERENCE_VARIANTS` reuse another scheme's model. As in the paper's code
(google-deepmind/randomized_positional_encodings, whose noisy RoPE draws positions on
every forward pass), it is also *evaluated* at sorted random positions of the same range:
:func:`poslib.lab.train.evaluate` draws them from a generator seeded with the evaluation
length, so the score is reproducible. The range is twice the lab's longest evaluation
length, so that even a 16 × train_len window sees random gaps, as in training.

**Scale of the sinusoidal table.** Token embeddings start with std 0.02 (GPT-2), a row norm of
about 0.16 at width 64, while PE(m) has entries ±1 and a row norm of √(d/2) ≈ 5.7: added as it is,
the table drowns the tokens, and the model is worse than NoPE at its own training length.
Vaswani et al. (2017, §3.4) make the two comparable by multiplying the token embeddings by
√d_model; this lab keeps GPT-2's embedding and instead scales the fixed table by
s = 0.02·√2, which gives PE the RMS of the token embeddings (and of the learned table) at
initialisation: every sin/cos pair has sin² + cos² = 1, so the mean square of an entry is 1/2.

The schemes in :data:`INFERENCE_VARIANTS` are a trained model evaluated differently, with no fine-tuning:
``rope+pi``, ``rope+ntk``, ``rope+yarn`` use :func:`poslib.rope_inv_freq` with
factor s = L / train_len for an input of length L (the factor one would pick
knowing the evaluation length); ``rope+dynamic`` uses the dynamic NTK base for
the current length (factor 1, so s' = L / train_len; see
:func:`poslib.lab.train.evaluate` for how it is scored); ``rope+logn`` and
``alibi+logn`` multiply the attention logits of the query at position m by
:func:`poslib.logn_scale` (m + 1, train_len).

Attention runs through ``torch.nn.functional.scaled_dot_product_attention``;
additive biases (with −inf on future keys) go in as its ``attn_mask``.
``forward(..., return_weights=True)`` uses :func:`poslib.attention` instead, to
get the weights for analysis.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from ..alibi import alibi_bias
from ..attn import attention, mask_future
from ..cope import CoPE
from ..fire import FireBias
from ..kerple import KerpleBias
from ..learned import LearnedPositionalEmbedding
from ..logn import logn_scale
from ..rope import apply_rope
from ..rope_scaling import rope_inv_freq
from ..sandwich import sandwich_bias
from ..sinusoidal import SinusoidalEmbedding
from ..t5 import T5RelativeBias
from ..xpos import apply_xpos

__all__ = [
    "EMBED_STD",
    "INFERENCE_VARIANTS",
    "SCHEMES",
    "SINUSOIDAL_SCALE",
    "TRAINED_SCHEMES",
    "LabModel",
    "ModelConfig",
    "split_scheme",
]

# New schemes go at the end: every model is trained from its own seed and data stream, so adding one
# leaves the others' numbers unchanged (and the committed results valid for them).
TRAINED_SCHEMES = (
    "nope",
    "learned",
    "sinusoidal",
    "rope",
    "xpos",
    "t5",
    "alibi",
    "kerple",
    "sandwich",
    "fire",
    "cope",
    "rope+random",
)
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
EMBED_STD = 0.02  # GPT-2's initial std of the token (and learned position) embeddings
SINUSOIDAL_SCALE = EMBED_STD * math.sqrt(2)  # PE's entries have mean square 1/2: scaled, their RMS is EMBED_STD
MODIFIERS = ("pi", "ntk", "dynamic", "yarn", "logn")
_COPE_CHUNK_ENTRIES = 2**22  # (window, head, query, key) entries per CoPE chunk at evaluation (16 MiB per float32)
_ROPE_TYPE = {"pi": "linear", "ntk": "ntk", "dynamic": "dynamic", "yarn": "yarn"}


def split_scheme(name: str) -> tuple[str, str | None]:
    """``"rope+ntk"`` → ``("rope", "ntk")``; ``"alibi"`` → ``("alibi", None)``; unknown names → ValueError.

    A trained scheme is its own base, even when its name has a ``+`` (``"rope+random"`` →
    ``("rope+random", None)``): only :data:`INFERENCE_VARIANTS` share another scheme's model.
    """
    if name in TRAINED_SCHEMES:
        return name, None
    if name in INFERENCE_VARIANTS:
        return INFERENCE_VARIANTS[name]
    raise ValueError(f"unknown scheme {name!r}; known schemes: {', '.join(SCHEMES)}")


@dataclass(frozen=True)
class ModelConfig:
    """Everything that fixes a model's shape. ``scheme`` is one of :data:`TRAINED_SCHEMES`."""

    scheme: str = "rope"
    train_len: int = 64
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    vocab_size: int = 256
    rope_base: float = 10000.0
    xpos_scale_base: float = 512.0
    t5_buckets: int = 32
    # None = train_len: every distance ≥ train_len then shares the last bucket, which
    # training reaches. T5's 128 with train_len 64 would leave buckets that no
    # training example ever updates, and the model would meet them only at test time.
    t5_max_distance: int | None = None
    fire_hidden: int = 32  # FIRE's MLP width (one hidden ReLU layer)
    # CoPE's number of position embeddings; None = train_len (a count never exceeds it in training)
    cope_max_pos: int | None = None
    # rope+random draws its positions from 0 … random_max_pos − 1; None = 32 × train_len, twice the
    # lab's longest evaluation length (at N = L every position is taken and the gaps are all 1)
    random_max_pos: int | None = None

    def __post_init__(self) -> None:
        if self.scheme not in TRAINED_SCHEMES:
            raise ValueError(
                f"ModelConfig.scheme must be a trained scheme ({', '.join(TRAINED_SCHEMES)}), got {self.scheme!r}"
            )
        for name in ("train_len", "d_model", "n_layers", "n_heads", "vocab_size", "t5_buckets"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"ModelConfig.{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"ModelConfig.d_model ({self.d_model}) must split into n_heads ({self.n_heads}) "
                "heads of even size (RoPE rotates pairs)"
            )

    @property
    def head_dim(self) -> int:
        """d_model / n_heads."""
        return self.d_model // self.n_heads

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for the results file."""
        return asdict(self)


@dataclass
class PositionContext:
    """What the attention layers need to know about positions for one forward pass (built by LabModel)."""

    positions: torch.Tensor
    inv_freq: torch.Tensor | None = None  # RoPE / xPos frequencies, float64
    rope_factor: float = 1.0  # YaRN's attention factor on cos and sin
    # (1, n_heads, T, T), −inf on future keys; None = plain causal. The leading 1 matters:
    # PyTorch's CPU flash kernel takes only 4-D masks, a 3-D one falls back to a path ~8× slower.
    bias: torch.Tensor | None = None
    logit_scale: torch.Tensor | None = None  # (T, 1) log-n factor per query


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention; the positional scheme acts on q, k or the scores."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        # KERPLE's two parameters per head are learned per layer, as in the paper's code.
        self.kerple = KerpleBias(cfg.n_heads, kind="log") if cfg.scheme == "kerple" else None
        # FIRE and CoPE are per layer too (CoPE's table shared by the heads, as in its paper's code).
        self.fire = (
            FireBias(cfg.n_heads, hidden=cfg.fire_hidden, L_init=float(cfg.train_len)) if cfg.scheme == "fire" else None
        )
        self.cope = CoPE(cfg.cope_max_pos or cfg.train_len, cfg.head_dim) if cfg.scheme == "cope" else None

    def forward(self, x: torch.Tensor, ctx: PositionContext, return_weights: bool = False) -> Any:
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.cfg.n_heads, self.cfg.head_dim).permute(2, 0, 3, 1, 4)
        if self.cfg.scheme in ("rope", "rope+random"):
            q = apply_rope(q, ctx.positions, ctx.inv_freq, attention_factor=ctx.rope_factor)
            k = apply_rope(k, ctx.positions, ctx.inv_freq, attention_factor=ctx.rope_factor)
        elif self.cfg.scheme == "xpos":
            q = apply_xpos(q, ctx.positions, ctx.inv_freq, scale_base=self.cfg.xpos_scale_base)
            k = apply_xpos(k, ctx.positions, ctx.inv_freq, scale_base=self.cfg.xpos_scale_base, is_key=True)
        bias = ctx.bias
        if self.kerple is not None:
            bias = self.kerple(T, T, causal=True)[None]
        if self.fire is not None:
            bias = self.fire(T, T, causal=True)[None]
        if self.cope is not None:
            # The paper's Appendix B: the gates are the masked attention logits q·k/√d themselves,
            # and q·e[p] is added to them unscaled (SDPA adds attn_mask after its own 1/√d).
            # Evaluation at 16 × train_len holds about a dozen (B, H, T, T) tensors here (positions,
            # indices, gathers): without gradients, take the batch a few windows at a time.
            chunk = B if torch.is_grad_enabled() else max(1, _COPE_CHUNK_ENTRIES // (self.cfg.n_heads * T * T))
            bias = torch.cat([self._cope_bias(q[s : s + chunk], k[s : s + chunk]) for s in range(0, B, chunk)])
        if ctx.logit_scale is not None:
            # Scale the whole logit of query m (content and bias alike); −inf stays −inf.
            q = q * ctx.logit_scale
            bias = bias * ctx.logit_scale if bias is not None else None
        weights = None
        if return_weights:
            y, weights = attention(q, k, v, bias=bias, causal=bias is None)
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, is_causal=bias is None)
        y = self.proj(y.transpose(1, 2).reshape(B, T, C))
        return (y, weights) if return_weights else y

    def _cope_bias(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        assert self.cope is not None
        # The paper's Appendix B: the gates are the masked attention logits q·k/√d themselves,
        # and q·e[p] is added to them unscaled (SDPA adds attn_mask after its own 1/√d).
        logits = mask_future(q @ k.transpose(-1, -2) / math.sqrt(self.cfg.head_dim))
        return mask_future(self.cope(q, logits))


class Block(nn.Module):
    """Pre-LayerNorm Transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(), nn.Linear(4 * cfg.d_model, cfg.d_model)
        )

    def forward(self, x: torch.Tensor, ctx: PositionContext, return_weights: bool = False) -> Any:
        a = self.attn(self.ln1(x), ctx, return_weights)
        a, weights = a if return_weights else (a, None)
        x = x + a
        x = x + self.mlp(self.ln2(x))
        return (x, weights) if return_weights else x


class LabModel(nn.Module):
    """The decoder-only language model of the lab. ``forward(idx, modifier=None)`` → logits ``(B, T, vocab)``."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe: nn.Module | None = None
        if cfg.scheme == "learned":
            self.wpe = LearnedPositionalEmbedding(cfg.train_len, cfg.d_model, init_std=EMBED_STD)
        elif cfg.scheme == "sinusoidal":
            self.wpe = SinusoidalEmbedding(cfg.d_model)
        # x + s·PE: the fixed table scaled to the embeddings' size (module docstring); a learned table starts there
        self.wpe_scale = SINUSOIDAL_SCALE if cfg.scheme == "sinusoidal" else 1.0
        # T5 shares one bias table across layers (Raffel et al.); causal, so unidirectional buckets.
        # At most one bucket per distance: short training lengths get fewer buckets.
        max_distance = cfg.t5_max_distance or cfg.train_len
        self.t5 = (
            T5RelativeBias(
                cfg.n_heads,
                num_buckets=min(cfg.t5_buckets, max_distance),
                bidirectional=False,
                max_distance=max_distance,
            )
            if cfg.scheme == "t5"
            else None
        )
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self._fixed_bias: dict[tuple[Any, ...], torch.Tensor] = {}
        self._init_weights()

    def _init_weights(self) -> None:
        # GPT-2's initialisation for the layers defined here; poslib's modules keep their own.
        nn.init.normal_(self.tok.weight, std=EMBED_STD)
        for block in self.blocks:
            assert isinstance(block, Block)
            for lin in (block.attn.qkv, cast(nn.Linear, block.mlp[0])):
                nn.init.normal_(lin.weight, std=0.02)
            for lin in (block.attn.proj, cast(nn.Linear, block.mlp[2])):  # residual outputs, scaled by depth
                nn.init.normal_(lin.weight, std=0.02 / math.sqrt(2 * self.cfg.n_layers))
            for lin in (cast(nn.Linear, block.mlp[0]), cast(nn.Linear, block.mlp[2])):
                nn.init.zeros_(lin.bias)

    def max_len(self) -> int | None:
        """The longest input the scheme defines, or None for no limit (only ``learned`` has one)."""
        return self.cfg.train_len if self.cfg.scheme == "learned" else None

    def position_context(self, T: int, modifier: str | None = None, device: Any = None) -> PositionContext:
        """The positional ingredients for an input of length ``T``, evaluated with ``modifier``."""
        cfg = self.cfg
        if modifier is not None:
            if modifier not in MODIFIERS:
                raise ValueError(f"modifier must be None or one of {MODIFIERS}, got {modifier!r}")
            allowed = "alibi" if modifier == "logn" and cfg.scheme == "alibi" else "rope"
            if cfg.scheme != allowed:
                raise ValueError(f"modifier {modifier!r} does not apply to a {cfg.scheme!r} model")
        ctx = PositionContext(positions=torch.arange(T, device=device))
        if cfg.scheme in ("rope", "xpos", "rope+random"):
            scaling, seq_len = None, None
            if modifier in _ROPE_TYPE:
                factor = 1.0 if modifier == "dynamic" else max(1.0, T / cfg.train_len)
                scaling = {
                    "rope_type": _ROPE_TYPE[modifier],
                    "factor": factor,
                    "original_max_position_embeddings": cfg.train_len,
                }
                seq_len = T
            inv_freq, factor = rope_inv_freq(cfg.head_dim, cfg.rope_base, scaling, seq_len=seq_len, backend="torch")
            ctx.inv_freq, ctx.rope_factor = inv_freq.to(device), factor
        if cfg.scheme in ("alibi", "sandwich"):
            key = (T, str(device))
            if key not in self._fixed_bias:
                if cfg.scheme == "alibi":
                    bias = alibi_bias(cfg.n_heads, T, T, causal=True, backend="torch", device=device)
                else:
                    bias = sandwich_bias(
                        cfg.n_heads, cfg.d_model, q_len=T, k_len=T, causal=True, backend="torch", device=device
                    )
                self._fixed_bias[key] = bias.float()[None]
            ctx.bias = self._fixed_bias[key]
        elif self.t5 is not None:
            ctx.bias = mask_future(self.t5(T, T))[None]
        if modifier == "logn":
            ctx.logit_scale = logn_scale(ctx.positions + 1, cfg.train_len).float()[:, None]
        return ctx

    def random_max_pos(self) -> int:
        """The range ``rope+random`` draws its positions from: 0 … this − 1."""
        return self.cfg.random_max_pos or 32 * self.cfg.train_len

    def forward(
        self,
        idx: torch.Tensor,
        modifier: str | None = None,
        return_weights: bool = False,
        positions: torch.Tensor | None = None,
    ) -> Any:
        """Logits ``(B, T, vocab)`` for byte ids ``idx`` ``(B, T)``; with ``return_weights`` also a list of
        per-layer attention weights ``(B, n_heads, T, T)``.

        ``positions`` ``(T,)`` replaces 0 … T − 1; only ``rope+random`` takes it (its sorted random
        positions, :func:`poslib.randomized_positions`, drawn by the training loop and by ``evaluate``).
        """
        _B, T = idx.shape
        limit = self.max_len()
        if limit is not None and T > limit:
            raise ValueError(f"a {self.cfg.scheme!r} model has no positions beyond {limit}; got an input of length {T}")
        ctx = self.position_context(T, modifier, idx.device)
        if positions is not None:
            if self.cfg.scheme != "rope+random":
                raise ValueError(f"positions are only for a 'rope+random' model, not {self.cfg.scheme!r}")
            if tuple(positions.shape) != (T,):
                raise ValueError(f"positions must have shape ({T},), got {tuple(positions.shape)}")
            ctx.positions = positions.to(idx.device)
        x = self.tok(idx)
        if self.wpe is not None:
            x = x + self.wpe_scale * self.wpe(ctx.positions).to(x.dtype)
        all_weights = []
        for block in self.blocks:
            if return_weights:
                x, w = block(x, ctx, True)
                all_weights.append(w)
            else:
                x = block(x, ctx)
        logits = self.ln_f(x) @ self.tok.weight.T
        return (logits, all_weights) if return_weights else logits

    def n_params(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
