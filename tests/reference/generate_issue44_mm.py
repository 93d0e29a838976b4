"""Generate tests/reference/issue44_mm.npz from VideoRoPE's and HoPE's published code (issue 44 item 6; not run by CI).

Run from the repository root with the project's environment (it needs torch only) and bare git snapshots of the
two repositories:

    python tests/reference/generate_issue44_mm.py --videorope VIDEOROPE_GIT_DIR --hope HOPE_GIT_DIR

What it runs, in float64, from the files at the commits stored in the npz (``commits``):

* Wiselnn570/VideoRoPE ``videorope-transformer/modeling_videorope.py``: ``rotate_half``,
  ``apply_m_modify_multimodal_rotary_pos_emb`` (low-frequency temporal allocation) and the method
  ``get_t_scale_rope_index`` (diagonal layout, temporal step δ = ``scale_factor``);
* hrlics/HoPE ``modeling_hope.py``: ``apply_hybrid_multimodal_rotary_pos_emb`` (temporal pairs at frequency 0)
  and ``get_rope_index`` (its copy of transformers' Qwen2-VL position ids).

Each function's source is taken out of the file by name and executed alone (the module's other imports are
transformers-relative and not needed); the methods get a stand-in ``self`` whose ``config`` holds the token ids.
cos and sin are built as ``Qwen2VLRotaryEmbedding.forward`` does: freqs = position ⊗ inv_freq per axis,
``emb = cat(freqs, freqs)``.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import subprocess
import types
from typing import Optional, Tuple  # noqa: UP035 (the executed reference sources annotate with these)

import numpy as np
import torch

OUT = pathlib.Path(__file__).with_name("issue44_mm.npz")
VIDEO_FILE = "videorope-transformer/modeling_videorope.py"
HOPE_FILE = "modeling_hope.py"
IMAGE, VIDEO, START = 151655, 151656, 151652  # Qwen2-VL's image, video and vision-start token ids


def source_of(git_dir: str, path: str) -> tuple[str, str]:
    commit = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    text = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout
    return commit, text


def function(text: str, name: str) -> types.FunctionType:
    """The function (or method) ``name`` of the module text, compiled alone with torch in its namespace."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            code = ast.get_source_segment(text, node)
            lines = code.splitlines()
            indent = len(lines[0]) - len(lines[0].lstrip())
            code = "\n".join(line[indent:] for line in lines)
            space = {"torch": torch, "Optional": Optional, "Tuple": Tuple, "random": None}  # noqa: UP006
            exec(compile(code, f"<{name}>", "exec"), space)  # the reference's own code, run as published
            return space[name]
    raise KeyError(name)


def cos_sin(position_ids: torch.Tensor, inv_freq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    # Qwen2VLRotaryEmbedding.forward in float64: (3, bs, seq, head_dim)
    freqs = position_ids[..., None].double() * inv_freq.double()
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videorope", required=True)
    parser.add_argument("--hope", required=True)
    args = parser.parse_args()
    v_commit, v_text = source_of(args.videorope, VIDEO_FILE)
    h_commit, h_text = source_of(args.hope, HOPE_FILE)

    rotate_half = function(v_text, "rotate_half")
    videorope_apply = function(v_text, "apply_m_modify_multimodal_rotary_pos_emb")
    hope_apply = function(h_text, "apply_hybrid_multimodal_rotary_pos_emb")
    for f in (videorope_apply, hope_apply):
        f.__globals__["rotate_half"] = rotate_half
    t_scale_index = function(v_text, "get_t_scale_rope_index")
    qwen2_index = function(h_text, "get_rope_index")

    config = types.SimpleNamespace(
        vision_config=types.SimpleNamespace(spatial_merge_size=2),
        image_token_id=IMAGE,
        video_token_id=VIDEO,
        vision_start_token_id=START,
    )
    me = types.SimpleNamespace(config=config)
    # 3 text tokens, vision start, a video of grid (t, h, w) = (3, 6, 10) (llm grid 3×3×5 = 45 tokens), 4 text tokens;
    # then the same with an even llm grid (4×4×6), keys ending in _even
    grid = torch.tensor([[3, 6, 10]])
    n_video = 3 * 3 * 5
    ids = torch.tensor([[1, 2, START] + [VIDEO] * n_video + [7, 8, 9, 10]])
    mask = torch.ones_like(ids)
    out: dict[str, np.ndarray] = {}
    pos_q2, _ = qwen2_index(me, ids, None, grid, mask)
    out["qwen2vl_position_ids"] = pos_q2.double().numpy()
    for delta in (1.0, 2.0, 0.75):
        pos_v, _ = t_scale_index(me, ids, None, grid, mask, scale_factor=delta)
        out[f"videorope_position_ids_{delta}"] = pos_v.double().numpy()

    head_dim, section = 32, [4, 6, 6]
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    rng = np.random.default_rng(20261246)
    seq = ids.shape[1]
    q = torch.tensor(rng.standard_normal((1, 2, seq, head_dim)))
    out["q"] = q.numpy()
    out["inv_freq"] = inv_freq.numpy()
    out["mrope_section"] = np.array(section)
    pos = torch.tensor(out["videorope_position_ids_2.0"])
    cos, sin = cos_sin(pos, inv_freq)
    out["videorope_q"] = videorope_apply(q, q, cos, sin, list(section))[0].numpy()
    out["hope_q"] = hope_apply(q, q, cos, sin, list(section))[0].numpy()

    # issue 44 review item 4: an even llm grid (t, h, w) = (4, 4, 6) (video grid 4 × 8 × 12, 96 tokens), where the
    # frame centre ⌊(n − 1)/2⌋ and n // 2 differ on both spatial axes, so a port that centres by n // 2 fails here
    grid_even = torch.tensor([[4, 8, 12]])
    ids_even = torch.tensor([[1, 2, START] + [VIDEO] * (4 * 4 * 6) + [7, 8, 9, 10]])
    mask_even = torch.ones_like(ids_even)
    pos_q2_even, _ = qwen2_index(me, ids_even, None, grid_even, mask_even)
    out["qwen2vl_position_ids_even"] = pos_q2_even.double().numpy()
    pos_v_even, _ = t_scale_index(me, ids_even, None, grid_even, mask_even, scale_factor=2.0)
    out["videorope_position_ids_2.0_even"] = pos_v_even.double().numpy()
    q_even = torch.tensor(rng.standard_normal((1, 2, ids_even.shape[1], head_dim)))
    out["q_even"] = q_even.numpy()
    cos_e, sin_e = cos_sin(pos_v_even.double(), inv_freq)
    out["videorope_q_even"] = videorope_apply(q_even, q_even, cos_e, sin_e, list(section))[0].numpy()
    out["hope_q_even"] = hope_apply(q_even, q_even, cos_e, sin_e, list(section))[0].numpy()
    out["commits"] = np.array([f"Wiselnn570/VideoRoPE {v_commit}", f"hrlics/HoPE {h_commit}"])
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT}: {sorted(out)}")


if __name__ == "__main__":
    main()
