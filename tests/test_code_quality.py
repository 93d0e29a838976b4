"""The project's style and type habits, enforced by the test command: ruff (lint and format), mypy
(strict for poslib/), the GitHub workflow's schema and the pre-commit configuration.

Each tool is first shown a planted mistake, so a check that silently looks at nothing (a wrong
path, a rule set switched off) fails here instead of passing.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"
BOOK_WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
BIN = pathlib.Path(sys.executable).parent


def tool(name: str) -> str:
    """The tool installed beside this Python (requirements-dev.txt pins it), else the one on PATH.

    A student's `pytest` (requirements.txt only) skips the check with a message; under CI=true, where .ci/run
    installs requirements-dev.txt, a missing tool is a failure.
    """
    path = BIN / name
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        message = f"{name} is not installed: it is a developer's tool, pip install -r requirements-dev.txt"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true and {message}", pytrace=False)
        pytest.skip(message)
    return found


def test_a_missing_tool_skips_except_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"pip install -r requirements-dev\.txt"):
        tool("no-such-tool-poslib")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true and no-such-tool-poslib is not installed"):
        tool("no-such-tool-poslib")


def run(*args: str, cwd: pathlib.Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


def report(proc: subprocess.CompletedProcess[str]) -> str:
    return f"exit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"


def test_ruff_lint_is_clean() -> None:
    proc = run(tool("ruff"), "check", "--no-cache", ".")
    assert proc.returncode == 0, report(proc)


def test_ruff_format_is_clean() -> None:
    proc = run(tool("ruff"), "format", "--no-cache", "--check", ".")
    assert proc.returncode == 0, "run `ruff format .`\n" + report(proc)


def test_ruff_sees_planted_mistakes(tmp_path: pathlib.Path) -> None:
    # The project's configuration must flag an unused import, unsorted imports and bad formatting, in a
    # module and in a notebook cell alike.
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "bad.py").write_text("import sys\nimport os\nx=1\n")
    (tmp_path / "bad.ipynb").write_text(
        '{"cells": [{"cell_type": "code", "execution_count": null, "id": "a", "metadata": {}, "outputs": [],'
        ' "source": ["import os\\n"]}], "metadata": {"language_info": {"name": "python"}},'
        ' "nbformat": 4, "nbformat_minor": 5}'
    )
    lint = run(tool("ruff"), "check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert lint.returncode == 1, report(lint)
    for expected in ("bad.py:1:1: I001", "bad.py:1:8: F401", "bad.ipynb:cell 1:1:8: F401"):
        assert expected in lint.stdout, report(lint)
    fmt = run(tool("ruff"), "format", "--no-cache", "--check", "bad.py", cwd=tmp_path)
    assert fmt.returncode == 1 and "bad.py" in fmt.stdout, report(fmt)


def test_mypy_strict_on_poslib_is_clean() -> None:
    proc = run(tool("mypy"), "--cache-dir", str(ROOT / "build" / "mypy-cache"))
    assert proc.returncode == 0, report(proc)
    assert "Success: no issues found" in proc.stdout and "source files" in proc.stdout, report(proc)


def test_mypy_configuration_is_strict(tmp_path: pathlib.Path) -> None:
    # The same configuration rejects an unannotated function and a wrong argument type.
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text().replace('"poslib"', '"mod.py"'))
    (tmp_path / "mod.py").write_text("def f(x):\n    return x\n\n\ndef g(n: int) -> int:\n    return n\n\n\ng('a')\n")
    proc = run(tool("mypy"), "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path)
    assert proc.returncode == 1, report(proc)
    assert "[no-untyped-def]" in proc.stdout and "[arg-type]" in proc.stdout, report(proc)


def test_workflows_match_github_schema(tmp_path: pathlib.Path) -> None:
    # One check-jsonschema process for both workflows and a broken copy (each start costs seconds of CI):
    # it must fail, and name the broken copy only.
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on:", "run-on:"))
    paths = [str(WORKFLOW), str(BOOK_WORKFLOW), str(broken)]
    proc = run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *paths)
    assert proc.returncode == 1, "a workflow without runs-on passed the schema check\n" + report(proc)
    out = proc.stdout + proc.stderr
    assert str(broken) in out and "'runs-on' is a required property" in out, report(proc)
    assert str(WORKFLOW) not in out.replace(str(broken), "") and str(BOOK_WORKFLOW) not in out, report(proc)


def test_workflow_runs_the_ci_script() -> None:
    import yaml

    workflow = yaml.safe_load(WORKFLOW.read_text())
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as True
    assert {"push", "pull_request"} <= set(on), on
    steps = [s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"]]
    assert "bash .ci/run" in steps, steps
    job = next(iter(workflow["jobs"].values()))
    assert job["env"]["CI"] == "true"
    # .ci/run installs Chromium with apt-get as root: the job must run in a Debian container.
    assert "bookworm" in job["container"], job


def test_book_workflow_publishes_the_build() -> None:
    import yaml

    workflow = yaml.safe_load(BOOK_WORKFLOW.read_text())  # its schema: test_workflows_match_github_schema
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    runs = [s.get("run", "") for s in build["steps"]]
    build_cmd, test_cmd = "python scripts/build_book.py --out build/book --frames", "pytest tests/browser/test_book.py"
    assert "pip install -r requirements.txt" in runs and build_cmd in runs, runs
    # the book's browser tests need Playwright, a developer's tool; CI=true makes a missing one a failure
    assert runs.index("pip install -r requirements-dev.txt") < runs.index(test_cmd), runs
    test = next(s for s in build["steps"] if s.get("run") == test_cmd)
    assert test["env"]["POSLIB_BOOK"] == "build/book", "the book's tests must read the published build"
    assert test["env"]["CI"] == "true", "without CI=true a missing browser or Playwright would skip, not fail"
    assert runs.index(test_cmd) > runs.index(build_cmd), "the tests read the build, so they run after it"
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "build/book"
    assert deploy["needs"] == "build" and deploy["steps"][0]["uses"].startswith("actions/deploy-pages")
    assert {"pages": "write", "id-token": "write"}.items() <= workflow["permissions"].items()


def test_pre_commit_configuration_is_valid() -> None:
    proc = run(tool("pre-commit"), "validate-config", ".pre-commit-config.yaml")
    assert proc.returncode == 0, report(proc)
