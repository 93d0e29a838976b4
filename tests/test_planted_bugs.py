"""The planted-bug catalogue behind scripts/plant_bugs.py: well-formed, and the planting really plants.

Running every bug takes minutes (``python scripts/plant_bugs.py``; its table is in docs/verification.md); these
tests only keep the catalogue honest and the mechanism working.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from planted_bugs import ENV, catalogue, swap  # noqa: E402


def test_catalogue_is_large_and_names_existing_checks():
    bugs = catalogue()
    assert len(bugs) >= 20, f"only {len(bugs)} planted bugs"
    for bug in bugs.values():
        assert bug.tests, f"{bug.name}: needs a unit test that catches it"
        assert bug.notebooks or bug.unit_only, f"{bug.name}: needs a notebook that catches it, or why none can"
        for target in bug.tests:
            assert (ROOT / target.split("::")[0]).is_file(), f"{bug.name}: no test file {target}"
        for notebook in bug.notebooks:
            assert (ROOT / notebook).is_file(), f"{bug.name}: no notebook {notebook}"


def test_swap_refuses_a_patch_that_misses():
    with pytest.raises(RuntimeError, match="planting failed"):
        swap(object(), None)


def _frequencies(env_bug: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests" / "planted_bugs" / "site"), str(ROOT)])
    if env_bug:
        env[ENV] = env_bug
    code = "import poslib as P; print([round(v, 9) for v in P.rope_frequencies(8).tolist()])"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_planting_changes_poslib_only_in_the_planted_process():
    # θ_i = 10000^(−2i/8): 1, 0.1, 0.01, 0.001. With the minus sign lost: 1, 10, 100, 1000.
    assert _frequencies(None) == "[1.0, 0.1, 0.01, 0.001]"
    assert _frequencies("rope_theta_sign") == "[1.0, 10.0, 100.0, 1000.0]"
