"""Fixtures for the browser tests: one JupyterLab server and one headless Chromium for the whole session.

The server is started with the README's open command (the test adds only its port, token and settings
flags) in a temporary copy of notebooks/, docs/ and results/ (autosave never touches the repository),
plus a small harness notebook, so every notebook opens as it does for a reader; everything it writes
(settings, workspaces, runtime files, IPython profile) stays in pytest's temporary folder.
Without Chromium or Playwright the tests skip, except under CI=true, where
that is a failure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_harness import (
    CHROMIUM_ARGS,
    REPO,
    LabServer,
    align_python_version,
    course_notebooks,
    find_chromium,
    open_command,
    write_harness_notebook,
)

ENABLE_HINT = (
    "install Debian's Chromium (`apt-get install -y chromium`) and the pinned Playwright "
    "(`pip install -r requirements-dev.txt`); no `playwright install` is needed"
)


def _missing(what: str) -> None:
    msg = f"browser tests need {what}: {ENABLE_HINT}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI=true and {msg}", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of the Chromium binary; skips (fails under CI) when it or Playwright is missing."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("the Python package playwright")
    path = find_chromium()
    if path is None:
        _missing("Chromium (looked for $POSLIB_CHROMIUM, /usr/bin/chromium, chromium on PATH)")
    return path


@pytest.fixture(scope="session")
def lab(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1 (random free port, token), started with the README's open command in root.

    root holds copies of notebooks/, docs/ and results/ (notebooks 08 and 10 read ../results/lab.json) and
    harness/. Each copy's language_info.version is this Python's release (see align_python_version).
    """
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "root"
    skip = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    for folder in ("notebooks", "docs", "results"):
        shutil.copytree(REPO / folder, root / folder, ignore=skip)
    for line in align_python_version(root, course_notebooks(root)):
        print(line)
    write_harness_notebook(root / "harness")
    argv = open_command((REPO / "README.md").read_text(encoding="utf-8"))
    server = LabServer(root=root, base=base / "lab", argv=tuple(argv[2:]))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser_context(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Headless Chromium with a fresh profile (--user-data-dir in the temporary folder)."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    pw = sync_playwright().start()
    try:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=chromium_path,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
            timeout=60_000,
        )
    except Exception:
        pw.stop()
        raise
    try:
        yield context
    finally:
        context.close()
        pw.stop()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder for the screenshots taken after each slider move (and on failure)."""
    return tmp_path_factory.mktemp("browser-screenshots")


@pytest.fixture
def page(browser_context) -> Iterator[object]:
    """A fresh tab, closed at the end of the test (the test ends its notebook's kernel)."""
    tab = browser_context.new_page()
    tab.console_errors = []  # what the page logged as errors, quoted in failure messages
    tab.on("console", lambda m: m.type == "error" and tab.console_errors.append(m.text[:300]))
    tab.on("pageerror", lambda e: tab.console_errors.append(f"uncaught: {str(e)[:300]}"))
    try:
        yield tab
    finally:
        tab.close()
