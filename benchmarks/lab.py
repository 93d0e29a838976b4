"""Training-step time of the lab's model, per scheme, against x-transformers and a plain PyTorch model of the same size.

Run: python benchmarks/lab.py [--threads 2] [--seq 64] [--dim 128] [--repeats 15]

One step = forward, cross-entropy, backward, AdamW step, on a batch of 32
random byte windows. Every candidate runs in this one process, round-robin (one
step of each in turn, ``--repeats`` rounds), so load from other processes on a
shared machine hits them alike; we report medians and ratios, not single timings.

References:

* ``x-transformers`` (lucidrains/x-transformers, the pin below), if importable:
  ``TransformerWrapper(Decoder(dim, depth, heads, attn_dim_head=dim/heads, attn_flash=True))``
  with its own rotary / ALiBi / absolute embedding. It is a benchmark-only dependency,
  not in requirements.txt: ``pip install x-transformers==2.31.10`` (it does not
  pull another torch). A second row uses its defaults (dim_head 64, no flash), the
  configuration quoted in the lab's issue.
* ``plain torch``: ``nn.TransformerEncoder`` with norm_first layers, a causal
  mask and a learned position table: the baseline any PyTorch user would write.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from poslib.lab import LabModel, ModelConfig

XT_PIN = "2.31.10"
SCHEMES = ("nope", "learned", "sinusoidal", "rope", "xpos", "t5", "alibi", "kerple", "sandwich")


class PlainTorchLM(nn.Module):
    """nn.TransformerEncoder (pre-norm, causal) with a learned position table and a tied output head."""

    def __init__(self, dim: int, depth: int, heads: int, seq: int) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(256, dim), nn.Embedding(seq, dim)
        layer = nn.TransformerEncoderLayer(
            dim, heads, 4 * dim, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(dim)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq), persistent=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos.weight[: idx.shape[1]]
        x = self.encoder(x, mask=self.mask, is_causal=True)
        return self.ln(x) @ self.tok.weight.T


def candidates(dim: int, depth: int, heads: int, seq: int) -> dict[str, nn.Module]:
    models: dict[str, nn.Module] = {}
    for scheme in SCHEMES:
        models[f"poslib {scheme}"] = LabModel(
            scheme, ModelConfig(train_len=seq, d_model=dim, n_layers=depth, n_heads=heads)
        )
    models["plain torch (learned)"] = PlainTorchLM(dim, depth, heads, seq)
    try:
        import x_transformers
        from x_transformers import Decoder, TransformerWrapper
    except ImportError:
        print(f"x-transformers not installed (pip install x-transformers=={XT_PIN}); comparing with plain torch only")
        return models
    if getattr(x_transformers, "__version__", XT_PIN) != XT_PIN:
        print(f"note: x-transformers {x_transformers.__version__} installed, benchmark written for {XT_PIN}")

    def xt(**kw):
        use_abs = kw.pop("use_abs_pos_emb", False)
        return TransformerWrapper(
            num_tokens=256,
            max_seq_len=seq,
            use_abs_pos_emb=use_abs,
            attn_layers=Decoder(dim=dim, depth=depth, heads=heads, **kw),
        )

    same = dict(attn_dim_head=dim // heads, attn_flash=True)
    models["x-transformers rope"] = xt(rotary_pos_emb=True, **same)
    models["x-transformers alibi"] = xt(alibi_pos_bias=True, **same)
    models["x-transformers learned"] = xt(use_abs_pos_emb=True, **same)
    models["x-transformers learned (defaults)"] = xt(use_abs_pos_emb=True)
    return models


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    models = candidates(args.dim, args.depth, args.heads, args.seq)
    opts = {name: torch.optim.AdamW(m.parameters(), lr=1e-3) for name, m in models.items()}
    x = torch.randint(0, 256, (args.batch, args.seq))
    y = torch.randint(0, 256, (args.batch, args.seq))

    def step(name: str) -> float:
        t0 = time.perf_counter()
        loss = F.cross_entropy(models[name](x).flatten(0, 1), y.flatten())
        opts[name].zero_grad(set_to_none=True)
        loss.backward()
        opts[name].step()
        return time.perf_counter() - t0

    times: dict[str, list[float]] = {name: [] for name in models}
    for name in models:  # two warm-up steps each
        step(name), step(name)
    for _ in range(args.repeats):
        for name in models:
            times[name].append(step(name))
    med = {name: 1000 * statistics.median(t) for name, t in times.items()}
    params = {name: sum(p.numel() for p in m.parameters()) for name, m in models.items()}
    ref_name = next(n for n in ("x-transformers rope", "plain torch (learned)") if n in med)
    print(
        f"torch {torch.__version__}, {args.threads} threads; dim {args.dim}, depth {args.depth}, heads {args.heads}, "
        f"batch {args.batch} × seq {args.seq}; median of {args.repeats} round-robin steps"
    )
    print(f"{'candidate':36s} {'params':>8s} {'median ms':>10s} {'÷ ' + ref_name:>26s}")
    for name, ms in med.items():
        print(f"{name:36s} {params[name]:8d} {ms:10.1f} {ms / med[ref_name]:25.2f}×")


if __name__ == "__main__":
    main()
