"""Generate tests/reference/issue44.npz from the published code of issue 44's items (not run by CI).

Run from the repository root in a separate virtual environment (never the project's), with snapshots of
StanfordMIMI/LieRE and Longin-Yu/ComRoPE checked out or as bare git directories:

    python3 -m venv /tmp/ref44
    /tmp/ref44/bin/pip install torch==2.13.0 numpy==2.4.6 transformers==5.25.0 einops==0.8.2
    /tmp/ref44/bin/python tests/reference/generate_issue44.py --liere LIERE_GIT_DIR --comrope COMROPE_GIT_DIR

What it runs, each evaluated in float64 (the published source recompiled with its float32 casts replaced
by float64, as tests/reference/generate.py does; integer positions and float64 inputs):

* transformers 5.25.0, Gemma 4: ``Gemma4TextConfig`` → ``Gemma4TextRotaryEmbedding`` (its ``proportional``
  full-attention and ``default`` sliding frequencies, ``modeling_rope_utils._compute_proportional_rope_parameters``)
  and ``modeling_gemma4.apply_rotary_pos_emb``; the configs are stored as ``to_dict()`` gives them (with
  ``per_layer_config``) and in the released config.json form (``global_head_dim``).
* transformers 5.25.0, the rotated-dims convention: Qwen3-Next, GLM-4.5 (``glm4_moe``) and MiniMax-M2 rotary
  embeddings and their partial ``apply_rotary_pos_emb``.
* transformers 5.25.0, DeepSeek-V4: ``DeepseekV4Attention.forward`` itself (eager attention with its sinks, the
  trailing-slice interleaved RoPE, the output turned back with ``-sin``), with its projections replaced by
  modules that hand over chosen q and kv and capture the attention output before ``o_a_proj``.
* LieRE (``models/rope_vit.py``: ``LierePositionEncoder`` with learned generators and
  ``FlexibleAttention.apply_transforms``) and ComRoPE (``model.py``: ``LieREAttention``, ``ComRoPEAPAttention``,
  ``ComRoPELDAttention`` → ``get_exponent_matrix``, ``get_rotation_matrix``), with ``ipdb`` and ``torchvision``
  stubbed (neither is used by these functions).

The versions and the git commits read are stored in the file (``versions``) and checked by
tests/test_reference_issue44.py. vLLM's ``gemma4_rope.py`` (commit 4750b9f7ddfd40b37f08bcd33cc74f25d544bab7) was
read, not run: it builds the same zero-padded frequencies over the whole head.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import inspect
import json
import math
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import types

import numpy as np
import torch
import transformers.modeling_rope_utils as hf_rope
from torch import nn
from transformers import DeepseekV4Config, Gemma4TextConfig, Glm4MoeConfig, MiniMaxM2Config, Qwen3NextConfig
from transformers.models.deepseek_v4 import modeling_deepseek_v4 as ds4
from transformers.models.gemma4 import modeling_gemma4 as gemma4
from transformers.models.glm4_moe import modeling_glm4_moe as glm4_moe
from transformers.models.minimax_m2 import modeling_minimax_m2 as minimax_m2
from transformers.models.qwen3_next import modeling_qwen3_next as qwen3_next

OUT = pathlib.Path(__file__).with_name("issue44.npz")
rng = np.random.default_rng(20261244)


def float64_source(src: str) -> str:
    src = textwrap.dedent(src)
    src = src.replace("dtype=torch.float)", "dtype=torch.float64)").replace("torch.float32", "torch.float64")
    return src.replace(".float()", ".double()")


def float64_function(module, obj, name=None):
    """``obj`` (a function or method of ``module``) recompiled with every float32 dtype replaced by float64."""
    namespace = dict(vars(module))
    src = float64_source(inspect.getsource(obj))
    exec(compile(src, f"<float64 {obj.__qualname__}>", "exec"), namespace)  # the pinned package's own source
    found = namespace[name or obj.__name__]
    return found.__func__ if isinstance(found, staticmethod) else found


def seeded(shape):
    """A fresh seed and the standard-normal input it gives: tests rebuild inputs from stored seeds."""
    seed = int(rng.integers(2**31))
    return seed, np.random.default_rng(seed).standard_normal(shape)


# ------------------------------------------------------------------ item 1: Gemma 4 and the rotated-dims models


def gemma4_cases(out):
    prop64 = float64_function(hf_rope, hf_rope._compute_proportional_rope_parameters)
    default64 = float64_function(
        gemma4, gemma4.Gemma4TextRotaryEmbedding.compute_default_rope_parameters, "compute_default_rope_parameters"
    )
    forward64 = float64_function(gemma4, gemma4.Gemma4TextRotaryEmbedding.forward, "forward")
    draws = [(256, 512, 0.25, 1e6, 1e4, None), (128, 256, 0.25, 1e6, 1e4, None), (8, 16, 0.25, 1e6, 1e4, None)]
    while len(draws) < 40:
        head_dim = int(rng.integers(2, 33)) * 2
        global_dim = head_dim * int(rng.choice([1, 2]))
        partial = float(rng.choice([0.125, 0.25, 0.5, 0.75, 1.0]))
        if int(partial * global_dim // 2) < 1:
            continue
        theta = float(np.exp(rng.uniform(np.log(100), np.log(1e7))))
        factor = None if rng.random() < 0.6 else float(rng.uniform(1, 8))
        draws.append((head_dim, global_dim, partial, theta, 1e4, factor))
    rows, configs, inv_full, inv_slide, rotated = [], [], [], [], []
    for head_dim, global_dim, partial, theta, theta_slide, factor in draws:
        full = {"rope_type": "proportional", "partial_rotary_factor": partial, "rope_theta": theta}
        if factor is not None:
            full["factor"] = factor
        params = {"sliding_attention": {"rope_type": "default", "rope_theta": theta_slide}, "full_attention": full}
        cfg = Gemma4TextConfig(
            num_hidden_layers=3,
            layer_types=["sliding_attention", "sliding_attention", "full_attention"],
            head_dim=head_dim,
            global_head_dim=global_dim,
            hidden_size=64,
            num_attention_heads=2,
            num_key_value_heads=1,
            intermediate_size=32,
            vocab_size=32,
            vocab_size_per_layer_input=32,
            rope_parameters=params,
        )
        rot = gemma4.Gemma4TextRotaryEmbedding(cfg)  # the float32 buffers as transformers builds them
        f32 = rot.full_attention_inv_freq.double().numpy()
        f64, att = prop64(cfg.per_layer_config["full_attention"], None, layer_type="full_attention")
        s64, _ = default64(cfg.per_layer_config["sliding_attention"], None, layer_type="sliding_attention")
        np.testing.assert_allclose(f32, f64.numpy(), rtol=2e-6, atol=0)  # the float64 copy is the same formula
        rot.full_attention_inv_freq = f64
        rot.full_attention_attention_scaling = att
        seq, start = (3 if global_dim >= 256 else int(rng.integers(1, 7))), int(rng.integers(0, 200_000))
        seed, x = seeded((1, 1, seq, global_dim))
        x = torch.from_numpy(x)
        pos = torch.arange(start, start + seq)[None]
        cos, sin = forward64(rot, x, pos, "full_attention")
        y = gemma4.apply_rotary_pos_emb(x, cos, sin, unsqueeze_dim=1)
        d = cfg.to_dict()
        as_dict = {k: d[k] for k in ("head_dim", "layer_types", "per_layer_config", "rope_parameters")}
        released = {k: d[k] for k in ("head_dim", "layer_types", "rope_parameters")} | {"global_head_dim": global_dim}
        configs.append(json.dumps({"to_dict": as_dict, "config_json": released}))
        rows.append((head_dim, global_dim, seq, start, seed))
        inv_full.append(f64.numpy())
        inv_slide.append(s64.numpy())
        rotated.append(y.numpy().ravel())
    out["gemma4_cfg"] = np.array(rows)
    out["gemma4_config_json"] = np.array(configs)
    out["gemma4_inv_full"] = np.concatenate(inv_full)
    out["gemma4_inv_sliding"] = np.concatenate(inv_slide)
    out["gemma4_rotated"] = np.concatenate(rotated)


ROTATED_DIMS = {
    "qwen3_next": (qwen3_next, Qwen3NextConfig, qwen3_next.Qwen3NextRotaryEmbedding),
    "glm4_moe": (glm4_moe, Glm4MoeConfig, glm4_moe.Glm4MoeRotaryEmbedding),
    "minimax_m2": (minimax_m2, MiniMaxM2Config, minimax_m2.MiniMaxM2RotaryEmbedding),
}


def rotated_dims_cases(out):
    for name, (module, config_cls, rotary_cls) in ROTATED_DIMS.items():
        default64 = float64_function(
            module, rotary_cls.compute_default_rope_parameters, "compute_default_rope_parameters"
        )
        forward64 = float64_function(module, rotary_cls.forward, "forward")
        rows, configs, inv, q_out, k_out = [], [], [], [], []
        for n in range(9):
            head_dim = int(rng.integers(1, 9)) * 8  # int(head_dim·p) even for p = 0.25
            partial = [0.25, 0.5, 1.0][n % 3]
            theta = float(np.exp(rng.uniform(np.log(100), np.log(1e7))))
            cfg = config_cls(
                hidden_size=64,
                num_attention_heads=2,
                num_key_value_heads=1,
                head_dim=head_dim,
                rope_parameters={"rope_type": "default", "rope_theta": theta, "partial_rotary_factor": partial},
            )
            rot = rotary_cls(cfg)
            f64, att = default64(cfg, None)
            rot.inv_freq, rot.attention_scaling = f64, att
            seq, start = int(rng.integers(1, 7)), int(rng.integers(0, 200_000))
            seed, qk = seeded((2, 1, 1, seq, head_dim))
            q, k = torch.from_numpy(qk[0]), torch.from_numpy(qk[1])
            cos, sin = forward64(rot, q, torch.arange(start, start + seq)[None])
            qe, ke = module.apply_rotary_pos_emb(q, k, cos, sin)
            rows.append((head_dim, int(head_dim * partial), seq, start, seed))
            d = cfg.to_dict()
            configs.append(
                json.dumps({k: d[k] for k in ("head_dim", "hidden_size", "num_attention_heads", "rope_parameters")})
            )
            inv.append(f64.numpy())
            q_out.append(qe.numpy().ravel())
            k_out.append(ke.numpy().ravel())
        out[f"{name}_cfg"] = np.array(rows)
        out[f"{name}_config_json"] = np.array(configs)
        out[f"{name}_inv_freq"] = np.concatenate(inv)
        out[f"{name}_q_rot"], out[f"{name}_k_rot"] = np.concatenate(q_out), np.concatenate(k_out)


# ------------------------------------------------------------------ item 2: DeepSeek-V4's attention


class Hand(nn.Module):
    """Stands in for a projection: returns a chosen tensor (or captures its input)."""

    def __init__(self, value=None):
        super().__init__()
        self.value, self.seen = value, None

    def forward(self, x, *args, **kwargs):
        self.seen = x
        return self.value if self.value is not None else x


def deepseek_v4_cases(out):
    ds4.apply_rotary_pos_emb = float64_function(ds4, ds4.apply_rotary_pos_emb)  # forward reads the module's name
    rows, inv, sinks, outs, weights = [], [], [], [], []
    for n in range(30):
        heads, seq = int(rng.integers(1, 5)), int(rng.integers(1, 11))
        head_dim = int(rng.integers(2, 13)) * 2
        rope_dim = int(rng.integers(1, head_dim // 2 + 1)) * 2
        if n == 0:
            heads, seq, head_dim, rope_dim = 4, 12, 32, 8
        batch = 1 + n % 2
        theta = float(np.exp(rng.uniform(np.log(100), np.log(1e6))))
        cfg = DeepseekV4Config(
            hidden_size=16,
            num_attention_heads=heads,
            head_dim=head_dim,
            q_lora_rank=8,
            o_groups=1,
            o_lora_rank=8,
            num_hidden_layers=1,
            layer_types=["sliding_attention"],
            sliding_window=4096,
            rope_theta=theta,
            partial_rotary_factor=rope_dim / head_dim,
            vocab_size=32,
            n_routed_experts=2,
            num_experts_per_tok=1,
            moe_intermediate_size=8,
            index_n_heads=1,
            index_head_dim=8,
        )
        cfg._attn_implementation = "eager"
        attn = ds4.DeepseekV4Attention(cfg, 0).double().eval()
        rotary = ds4.DeepseekV4RotaryEmbedding(cfg)
        default64 = float64_function(
            ds4, ds4.DeepseekV4RotaryEmbedding.compute_default_rope_parameters, "compute_default_rope_parameters"
        )
        f64, _ = default64(cfg, None, layer_type="main")
        assert rotary.main_inv_freq.shape[0] == rope_dim // 2
        seed, qkv = seeded((batch, heads + 1, seq, head_dim))
        q, kv = torch.from_numpy(qkv[:, :heads]), torch.from_numpy(qkv[:, heads:])
        no_sink = n % 5 == 4  # sinks at −inf: the sink column carries nothing (poslib's sinks=None)
        sink = (
            torch.full((heads,), -math.inf, dtype=torch.float64)
            if no_sink
            else torch.from_numpy(rng.standard_normal(heads))
        )
        attn.q_a_proj, attn.q_a_norm, attn.q_b_norm, attn.kv_norm = Hand(), Hand(), Hand(), Hand()
        attn.q_b_proj = Hand(q.transpose(1, 2).reshape(batch, seq, heads * head_dim))
        attn.kv_proj = Hand(kv[:, 0])
        attn.o_a_proj, attn.o_b_proj = Hand(), Hand()
        attn.sinks = nn.Parameter(sink, requires_grad=False)
        pos = torch.arange(seq)[None].expand(batch, -1)
        freqs = pos[..., None].double() * f64
        cos, sin = freqs.cos(), freqs.sin()
        future = torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1)
        mask = torch.zeros(seq, seq, dtype=torch.float64).masked_fill(future, -math.inf)[None, None]
        hidden = torch.zeros(batch, seq, 16, dtype=torch.float64)
        with torch.no_grad():
            _, w = attn(hidden, {"main": (cos, sin)}, pos, mask.expand(batch, 1, seq, seq))
        o = attn.o_a_proj.seen.reshape(batch, seq, heads, head_dim).transpose(1, 2)  # (B, H, T, D) after the turn back
        rows.append((batch, heads, seq, head_dim, rope_dim, int(no_sink), seed))
        inv.append(f64.numpy())
        sinks.append(sink.numpy())
        outs.append(o.numpy().ravel())
        weights.append(w.numpy().ravel())
    out["dsv4_cfg"] = np.array(rows)
    out["dsv4_inv_freq"] = np.concatenate(inv)
    out["dsv4_sinks"] = np.concatenate(sinks)
    out["dsv4_out"], out["dsv4_weights"] = np.concatenate(outs), np.concatenate(weights)


# ------------------------------------------------------------------ item 4: LieRE and ComRoPE


def checkout(git_dir: str, files: list[str]) -> tuple[pathlib.Path, str]:
    commit = subprocess.run(["git", "-C", git_dir, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    root = pathlib.Path(tempfile.mkdtemp(prefix="issue44-"))
    for name in files:
        text = subprocess.run(
            ["git", "-C", git_dir, "show", f"HEAD:{name}"], capture_output=True, text=True, check=True
        )
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text.stdout)
    return root, commit.stdout.strip()


def stub(name: str, **attrs) -> None:
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules[name] = module


def liere_cases(out, git_dir: str) -> str:
    root, commit = checkout(git_dir, ["models/rope_vit.py", "models/vit.py"])
    stub("ipdb", set_trace=lambda: None)
    sys.path.insert(0, str(root))
    from models import rope_vit  # the repository's own module

    forward64 = float64_function(rope_vit, rope_vit.LierePositionEncoder.forward, "forward")
    rows, bases, positions, rotations, ys = [], [], [], [], []
    for n in range(6):
        axes = [2, 3][n % 2]
        gdim = [2, 4, 8][n % 3]
        torch.manual_seed(n)
        enc = rope_vit.LierePositionEncoder(
            image_size=32,
            patch_size=8,
            dim=64,
            phase_type="learned",
            position_sequencing_type="sequential",
            heads=1,
            input_dimensionality=axes,
            generator_dim=gdim,
            depth=1,
            rotary_embedding_per_layer=False,
            rotary_embedding_per_head=False,
            cls_token=False,
        ).double()
        tokens = 4
        pos = torch.from_numpy(rng.uniform(-3, 3, (1, tokens, axes)))
        rot = forward64(enc, None, torch.float64, positions=pos)  # (1, tokens, 1, num_generators, g, g)
        upper = torch.triu(enc.generator_raw_params, diagonal=1) - 0.5  # as forward builds its bases
        base = (upper - upper.transpose(-1, -2))[:, 0]  # (axes, num_generators, g, g)
        attention = rope_vit.FlexibleAttention(64, 1, 64, 0.0, False)
        seed, x = seeded((1, 1, tokens, 64))
        y = attention.apply_transforms(torch.from_numpy(x), rot)
        rows.append((axes, gdim, tokens, seed))
        bases.append(base.detach().numpy().ravel())
        positions.append(pos.numpy().ravel())
        rotations.append(rot.detach().numpy().ravel())
        ys.append(y.detach().numpy().ravel())
    out["liere_cfg"] = np.array(rows)
    out["liere_bases"] = np.concatenate(bases)
    out["liere_positions"] = np.concatenate(positions)
    out["liere_rotations"] = np.concatenate(rotations)
    out["liere_y"] = np.concatenate(ys)
    return commit


def comrope_cases(out, git_dir: str) -> str:
    root, commit = checkout(git_dir, ["model.py"])

    class Compose:  # torchvision.transforms.Compose, only subclassed by ComRoPE's image transform
        def __init__(self, *args, **kwargs):
            pass

    stub("torchvision")
    stub("torchvision.transforms", transforms=types.SimpleNamespace(Compose=Compose), InterpolationMode=None)
    sys.path.insert(0, str(root))
    import model as comrope  # the repository's own module

    rows, expo, positions, rotations = [], [], [], []
    torch.set_default_dtype(torch.float64)  # its parameters and diagR are built with the default dtype
    try:
        for n, kind in enumerate(["LieREAttention", "ComRoPEAPAttention", "ComRoPELDAttention"] * 2):
            axes, block = [2, 3][n % 2], [2, 4][(n // 3) % 2]
            cfg = comrope.CustomVITConfig(
                hidden_size=24 if axes == 3 else 16,
                num_attention_heads=2,
                block_size=block,
                num_axes=axes,
                init_std=1.0,
                scale_factor=1.0,
            )
            if (cfg.hidden_size // 2) % (axes * block):
                cfg = comrope.CustomVITConfig(
                    hidden_size=2 * axes * block * 2,
                    num_attention_heads=2,
                    block_size=block,
                    num_axes=axes,
                    init_std=1.0,
                    scale_factor=1.0,
                )
            torch.manual_seed(100 + n)
            attention = getattr(comrope, kind)(cfg)
            tokens = 4
            pos = torch.from_numpy(rng.uniform(-4, 4, (1, tokens, axes)))
            attention.set_positions(pos)
            with torch.no_grad():
                a = attention.get_exponent_matrix()  # (heads, axes, blocks, block, block)
                r = attention.get_rotation_matrix()  # (1, tokens, heads, D, D)
            rows.append((n % 3, axes, block, cfg.hidden_size // 2, tokens))
            expo.append(a.expand(2, axes, *a.shape[2:]).numpy().ravel())
            positions.append(pos.numpy().ravel())
            rotations.append(r.numpy().ravel())
    finally:
        torch.set_default_dtype(torch.float32)
    out["comrope_cfg"] = np.array(rows)
    out["comrope_exponent"] = np.concatenate(expo)
    out["comrope_positions"] = np.concatenate(positions)
    out["comrope_rotations"] = np.concatenate(rotations)
    return commit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--liere", required=True, help="git directory of StanfordMIMI/LieRE")
    parser.add_argument("--comrope", required=True, help="git directory of Longin-Yu/ComRoPE")
    args = parser.parse_args()
    torch.set_num_threads(1)
    out: dict[str, np.ndarray] = {}
    gemma4_cases(out)
    rotated_dims_cases(out)
    deepseek_v4_cases(out)
    liere = liere_cases(out, args.liere)
    comrope = comrope_cases(out, args.comrope)
    out["versions"] = np.array(
        [f"{name}=={md.version(name)}" for name in ("torch", "numpy", "transformers", "einops")]
        + [f"StanfordMIMI/LieRE@{liere}", f"Longin-Yu/ComRoPE@{comrope}"]
    )
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes): {', '.join(out['versions'])}")


if __name__ == "__main__":
    main()
