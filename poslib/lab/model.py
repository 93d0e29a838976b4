"""A small decoder-only Transformer; its positional scheme is a registered object with small hooks.

The architecture is GPT-2's, shrunk (nanoGPT style): token embedding → n_layers
× [LayerNorm → causal self-attention → residual, LayerNorm → MLP → residual] →
LayerNorm → output head tied to the token embedding. Only the place where
position enters changes from scheme to scheme (:mod:`poslib.lab.schemes`), and every
scheme is the poslib implementation:

=============  ====================================================  ==========================
scheme         where position enters                                 poslib
=============  ====================================================  ==========================
``nope``       nowhere (the causal mask is the only order signal)     —
``learned``    x + P[m] at the input; no row beyond train_len         LearnedPositionalEmbedding
``sinusoidal`` x + s·PE(m) at the input, s = 0.02·√2                    SinusoidalEmbedding
``rope``       q, k rotated by m·θ_i in every layer                   rope_angles, rope_inv_freq
``xpos``       RoPE plus a per-pair decay ζ_i^(±m/512)                xpos_scale
``t5``         learned bias per (bucket of n − m, head), one table    T5RelativeBias, mask_future
``alibi``      bias −μ_h·(m − n)                                      alibi_bias
``kerple``     learned bias −r₁·log(1 + r₂·(m − n)) per layer, head   KerpleBias
``sandwich``   bias Σ_i [cos((m − n)ω_i) − 1] / (8h/n_h)              sandwich_bias
``fire``       learned bias f_θ(ψ(m − n)/ψ(max(L, m))) per layer      FireBias
``cope``       q_m·e[p_mn], p_mn = gated count of keys n … m, per     CoPE
               layer (positions clamped to train_len − 1)
``rope+random``RoPE at a sorted random subset of 0 … 32·train_len − 1  randomized_positions
               (a fresh draw per training step, seeded ones at test)
``fox``        no positions; bias Σ_{l=j+1..i} log f_l, a forget gate  forgetting_attention
               f_t = σ(w_fᵀx_t + b_f) per token and head (FoX)
``fox+rope``   the same gate, and q, k rotated as ``rope``             forgetting_attention
``stickbreaking`` A_ij = σ(z_ij) Π_{j<m<i}(1 − σ(z_im)), no softmax,   stickbreaking_attention
               no positions; the rest of the stick to a learned vector
``rope_nope_hybrid`` RoPE in layer i unless (i + 1) % min(4, n_layers)  rope_angles
               = 0 (Llama 4, SmolLM3): 2 layers = RoPE, then NoPE
=============  ====================================================  ==========================

The last four (issue 38) are registered after the committed runs' schemes and are not in ``SCHEMES``; the
trained ``rope`` model is also read with Dual Chunk Attention, ``rope+dca`` (:func:`poslib.lab.schemes.dca_settings`).

KERPLE's table is per layer here; the authors' code (``gpt2_model.py`` of github.com/chijames/KERPLE)
builds one KERPLE module and passes it to every layer, so their layers share one (r₁, r₂) per head.

``rope+random`` is a *trained* scheme despite its ``+``: a model of its own, trained
with randomized positions (Ruoss et al., 2023). As in the paper's code
(google-deepmind/randomized_positional_encodings, whose noisy RoPE draws positions on
every forward pass), it is also *evaluated* at sorted random positions of the same range
(:func:`poslib.lab.evaluate` draws them from a generator seeded with the evaluation length).

Attention runs through ``torch.nn.functional.scaled_dot_product_attention``; additive
biases (with −inf on future keys) go in as its ``attn_mask``. :meth:`LabModel.forward_with_weights`
runs :func:`poslib.attention` instead, to get the weights for analysis.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import torch
import torch.nn.functional as F
from torch import nn

from ..attn import attention
from .config import ModelConfig
from .schemes import MODIFIERS, REGISTRY, PositionContext, RemapSettings, Scheme, logn_context, rotate

__all__ = ["LabModel", "WeightedOutput"]

# (q, k, v, bias) -> (output, weights or None)
Attend = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None], tuple[torch.Tensor, Any]]


def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None) -> tuple[torch.Tensor, Any]:
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, is_causal=bias is None), None


def _reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor | None
) -> tuple[torch.Tensor, Any]:
    out: tuple[torch.Tensor, Any] = attention(q, k, v, bias=bias, causal=bias is None)
    return out


class WeightedOutput(NamedTuple):
    """What :meth:`LabModel.forward_with_weights` returns."""

    logits: torch.Tensor  # (B, T, vocab)
    weights: list[torch.Tensor]  # per layer, (B, n_heads, T, T)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention; the scheme rotates q and k or adds a bias to the scores."""

    def __init__(self, scheme: Scheme, cfg: ModelConfig, layer: int = 0) -> None:
        super().__init__()
        self.scheme, self.n_heads, self.head_dim = scheme, cfg.n_heads, cfg.head_dim
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        self.position = scheme.layer_module(cfg)  # KERPLE, FIRE, CoPE, FoX's gate, stick-breaking's rest: per layer
        self.rope = scheme.rope_layer(layer, cfg)  # False: this layer ignores the rotation (a hybrid's NoPE layers)

    def forward(self, x: torch.Tensor, ctx: PositionContext, attend: Attend = _sdpa) -> tuple[torch.Tensor, Any]:
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.scheme.own_attention:  # stick-breaking: no softmax, no bias
            y, weights = self.scheme.attend(self.position, q, k, v, attend is not _sdpa)
            return self.proj(y.transpose(1, 2).reshape(B, T, C)), weights
        if self.rope and ctx.q_rotation is not None and ctx.k_rotation is not None:
            q, k = rotate(q, ctx.q_rotation), rotate(k, ctx.k_rotation)
        bias: torch.Tensor | None
        if self.scheme.gated:  # FoX: the bias comes from this layer's input
            bias = self.scheme.gate_bias(self.position, x, ctx)
        else:
            bias = self.scheme.layer_bias(self.position, q, k, ctx)
        if ctx.scores is not None and self.rope:
            # A remapped RoPE (poslib.remap): the logits come whole from the unrotated q and k, as the bias;
            # with q = 0 attention adds q·kᵀ = 0 exactly, so its softmax is the remapped logits' own.
            bias, q = ctx.scores(q, k), torch.zeros_like(q)
        if ctx.logit_scale is not None:
            # Scale the whole logit of query m (content and bias alike); −inf stays −inf.
            q = q * ctx.logit_scale
            bias = bias * ctx.logit_scale if bias is not None else None
        y, weights = attend(q, k, v, bias)
        return self.proj(y.transpose(1, 2).reshape(B, T, C)), weights


class Block(nn.Module):
    """Pre-LayerNorm Transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, scheme: Scheme, cfg: ModelConfig, layer: int = 0) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(scheme, cfg, layer)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(), nn.Linear(4 * cfg.d_model, cfg.d_model)
        )

    def forward(self, x: torch.Tensor, ctx: PositionContext, attend: Attend = _sdpa) -> tuple[torch.Tensor, Any]:
        a, weights = self.attn(self.ln1(x), ctx, attend)
        x = x + a
        return x + self.mlp(self.ln2(x)), weights


class LabModel(nn.Module):
    """The lab's decoder-only language model for ``scheme`` (a trained scheme's name) with shape ``cfg``.

    ``forward(idx, modifier=None, positions=None)`` → logits ``(B, T, vocab)``.
    """

    def __init__(self, scheme: str = "rope", cfg: ModelConfig | None = None) -> None:
        super().__init__()
        if scheme not in REGISTRY:
            raise ValueError(f"scheme must be a trained scheme ({', '.join(REGISTRY)}), got {scheme!r}")
        self.cfg = cfg = cfg if cfg is not None else ModelConfig()
        self.scheme = REGISTRY[scheme]
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.wpe = self.scheme.embedding(cfg)  # added to the token embeddings (learned, sinusoidal)
        self.shared = self.scheme.shared_module(cfg)  # shared by the layers (T5's table)
        self.blocks = nn.ModuleList(Block(self.scheme, cfg, layer) for layer in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.fixed_bias: dict[tuple[Any, ...], torch.Tensor] = {}  # FixedBias schemes' cache, per (T, device)
        # Context extension (poslib.lab.extend): the settings of the remap modifiers, and a fine-tuned
        # model's fixed RoPE scaling (a rope_inv_freq dict, used at every length; None = plain RoPE).
        self.remap = RemapSettings()
        self.rope_scaling: dict[str, Any] | None = None
        # bojone/rerope's queries are also scaled by max(1, ln(m + 1) / ln L_train): the lab's log-n, applied
        # beside any modifier when True (poslib.lab.extend's rope+rerope_logn)
        self.logn_queries = False
        self._init_weights()

    @property
    def name(self) -> str:
        """The scheme's name."""
        return self.scheme.name

    def _init_weights(self) -> None:
        # GPT-2's initialisation for the layers defined here; poslib's modules keep their own.
        nn.init.normal_(self.tok.weight, std=0.02)
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
        return self.scheme.max_len(self.cfg)

    def random_max_pos(self) -> int:
        """The range ``rope+random`` draws its positions from: 0 … this − 1."""
        return self.cfg.random_max_pos or 32 * self.cfg.train_len

    def no_decay(self, name: str) -> bool:
        """Whether parameter ``name`` is exempt from weight decay.

        The rule: decay on every matrix that multiplies activations (the projections, the MLPs,
        FIRE's MLP, CoPE's table e, which enters as the product q·e[p], and the token embedding,
        tied to the output head); none on vectors (biases, LayerNorm gains, KERPLE's r₁, r₂) and none
        on the position tables whose entries are *added* as they are (learned's P to the input,
        T5's bucket table to the logits), which nanoGPT would decay but whose rows for positions
        training rarely reaches would then be pulled towards zero with little gradient to hold them.
        """
        param = self.get_parameter(name)
        # stick-breaking's head_bias: one vector per head, (n_heads, head_dim), a vector in all but shape
        return param.ndim < 2 or name.startswith(("wpe.", "shared.")) or name.endswith(".head_bias")

    def position_context(
        self, T: int, modifier: str | None = None, device: Any = None, positions: torch.Tensor | None = None
    ) -> PositionContext:
        """The positional ingredients for an input of length ``T``, evaluated with ``modifier``.

        ``positions`` ``(T,)`` replaces 0 … T − 1; only ``rope+random`` takes it (its sorted random
        positions, :func:`poslib.randomized_positions`, drawn by the training loop and by ``evaluate``).
        """
        if modifier is not None:
            if modifier not in MODIFIERS:
                raise ValueError(f"modifier must be None or one of {MODIFIERS}, got {modifier!r}")
            if modifier not in self.scheme.modifiers:
                raise ValueError(f"modifier {modifier!r} does not apply to a {self.name!r} model")
        if positions is not None:
            if not self.scheme.takes_positions:
                raise ValueError(f"positions are only for a 'rope+random' model, not {self.name!r}")
            if tuple(positions.shape) != (T,):
                raise ValueError(f"positions must have shape ({T},), got {tuple(positions.shape)}")
        ctx = PositionContext(positions=torch.arange(T, device=device) if positions is None else positions.to(device))
        self.scheme.prepare(self, ctx, modifier)
        if modifier == "logn" or self.logn_queries:
            logn_context(ctx, self.cfg.train_len)
        return ctx

    def _run(
        self, idx: torch.Tensor, modifier: str | None, positions: torch.Tensor | None, attend: Attend
    ) -> WeightedOutput:
        _B, T = idx.shape
        limit = self.max_len()
        if limit is not None and T > limit:
            raise ValueError(f"a {self.name!r} model has no positions beyond {limit}; got an input of length {T}")
        ctx = self.position_context(T, modifier, idx.device, positions)
        x = self.tok(idx)
        if self.wpe is not None:
            x = x + self.scheme.embed(self.wpe, ctx.positions)
        weights = []
        for block in self.blocks:
            x, w = block(x, ctx, attend)
            weights.append(w)
        return WeightedOutput(self.ln_f(x) @ self.tok.weight.T, weights)

    def forward(
        self, idx: torch.Tensor, modifier: str | None = None, positions: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Logits ``(B, T, vocab)`` for byte ids ``idx`` ``(B, T)`` (``positions``: see :meth:`position_context`)."""
        return self._run(idx, modifier, positions, _sdpa).logits

    def forward_with_weights(
        self, idx: torch.Tensor, modifier: str | None = None, positions: torch.Tensor | None = None
    ) -> WeightedOutput:
        """Logits and per-layer attention weights ``(B, n_heads, T, T)``, through :func:`poslib.attention`."""
        return self._run(idx, modifier, positions, _reference)

    def n_params(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
