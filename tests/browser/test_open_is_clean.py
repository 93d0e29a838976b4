"""Opening a shipped notebook in JupyterLab does not mark it modified (issue 24, item 6).

As soon as a notebook's kernel connects, JupyterLab (4.x, ``NotebookPanel._updateSpec`` and
``_updateLanguage``) copies the kernel's ``kernelspec`` (name, display name, language) and its
``language_info`` into the notebook's metadata; where either differs from what the file stores, the
notebook turns modified (``jp-mod-dirty`` on its tab) although the reader did nothing, and autosave
then writes the file. The notebooks stored ``display_name: "Python 3"``, ipykernel's kernelspec says
``"Python 3 (ipykernel)"``; scripts/run_notebooks.py now stores the installed kernelspec's own fields.

One server, started with the README's open command in a temporary copy of what it serves (the test
adds only its port, token and settings flags), and one browser tab: the README's notebook is opened
from its URL, every other one with File ▸ Open from Path…, as a reader would, so JupyterLab loads only
once. For each notebook: its kernel is connected and idle (it connects only after the file's content is
in the model), every widget cell shows its saved picture, and half a second more has passed; at none
of these readings may its tab be marked modified. The next notebook's kernel starts while the current
one is checked.

``language_info.version`` is the kernel's Python release (``3.11.7``), a property of the machine, not
of the notebook: where the Python running this test is another release, the copy's version is set to it
(and printed), so the test checks what the notebooks control. A reader on another Python release does
see the notebook turn modified when its kernel connects; nothing stored in the file can prevent that.

Run only this: pytest tests/browser/test_open_is_clean.py
"""

from __future__ import annotations

import importlib.util
import json
import platform
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_harness import LAB_LOAD_MS, REPO, LabServer, _menu, plan_notebook
from test_links import open_command

SETTLE_MS = 500  # after the kernel is idle: JupyterLab writes the kernel's metadata within ~10 ms of its info reply
_TAB = ".lm-TabBar-tab"


def course_notebooks(root: Path) -> list[str]:
    """Every notebook under notebooks/ (not its subfolders), relative to ``root``."""
    return [p.relative_to(root).as_posix() for p in sorted((root / "notebooks").glob("*.ipynb"))]


def align_python_version(root: Path, relpaths: list[str]) -> list[str]:
    """Set language_info.version in the copies to this Python's release; one line per notebook changed."""
    here = platform.python_version()  # what ipykernel reports: sys.version.split()[0]
    changed = []
    for rel in relpaths:
        path = root / rel
        nb = json.loads(path.read_text(encoding="utf-8"))
        info = nb.get("metadata", {}).get("language_info", {})
        if "version" in info and info["version"] != here:
            changed.append(f"{rel}: stored Python {info['version']}, this kernel's {here} (set in the copy)")
            info["version"] = here
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


@pytest.fixture(scope="module")
def readme_lab(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LabServer, list[str]]]:
    """JupyterLab started with the README's open command in a copy of the notebooks, docs and results."""
    base = tmp_path_factory.mktemp("open-clean")
    root = base / "repo"
    skip = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    for folder in ("notebooks", "docs", "results"):
        shutil.copytree(REPO / folder, root / folder, ignore=skip)
    relpaths = course_notebooks(root)
    for line in align_python_version(root, relpaths):
        print(line)
    argv = open_command((REPO / "README.md").read_text(encoding="utf-8"))
    server = LabServer(root=root, base=base / "lab", argv=tuple(argv[2:]))
    server.start()
    try:
        yield server, relpaths
    finally:
        server.stop()


# The tab of the notebook called `name`: shown at all, marked modified; and whether the current
# notebook's kernel reads `kernel | Idle` in the status bar and the toolbar.
_JS_STATE = """([name, kernel]) => {
  const tab = [...document.querySelectorAll('.lm-TabBar-tab')]
      .find(t => (t.querySelector('.lm-TabBar-tabLabel') || {}).textContent === name);
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const shown = panel && panel.querySelector('.jp-NotebookPanel-toolbar .jp-KernelName');
  const status = [...document.querySelectorAll('.jp-StatusBar-TextItem')].map(e => e.textContent.trim());
  return {
    tab: !!tab,
    dirty: !!tab && tab.classList.contains('jp-mod-dirty'),
    kernel: !!tab && !!shown && shown.textContent.trim() === kernel && status.includes(kernel + ' | Idle'),
  };
}"""


def _state(page, name: str, kernel: str) -> dict:
    return page.evaluate(_JS_STATE, [name, kernel])


def _wait_for_kernel(page, name: str, kernel: str) -> None:
    deadline = time.monotonic() + LAB_LOAD_MS / 1000
    while not (st := _state(page, name, kernel))["kernel"]:
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{name}: kernel {kernel!r} not connected and idle within {LAB_LOAD_MS // 1000} s: {st}"
            )
        page.wait_for_timeout(100)


def _open_from_path(page, relpath: str) -> None:
    """File ▸ Open from Path…, type the path, Open: a new tab in the same JupyterLab, no page reload."""
    _menu(page, "File", "filebrowser:open-path")
    dialog = page.locator(".jp-Dialog")
    dialog.locator("input").first.fill(relpath)
    dialog.locator(".jp-Dialog-button.jp-mod-accept").first.click()
    dialog.first.wait_for(state="detached", timeout=10_000)


def _close_current_tab(page, modified: bool) -> None:
    """File ▸ Close Tab; a modified notebook asks whether to save: Discard, so the copy stays as shipped."""
    _menu(page, "File", "application:close")
    if modified:
        dialog = page.locator(".jp-Dialog")
        dialog.locator(".jp-Dialog-button", has_text="Discard").first.click(timeout=10_000)
        dialog.first.wait_for(state="detached", timeout=10_000)


def test_no_notebook_is_marked_modified_when_opened(readme_lab, page, screenshots) -> None:
    server, relpaths = readme_lab
    argv = open_command((REPO / "README.md").read_text(encoding="utf-8"))
    named = [a for a in argv[2:] if a in relpaths]  # the notebook the README's command opens
    order = [*named[:1], *[r for r in relpaths if r not in named[:1]]]
    specs = server.api("GET", "/api/kernelspecs")["kernelspecs"]
    plans = {rel: plan_notebook(server.root / rel) for rel in order}
    start = time.perf_counter()
    results: dict[str, tuple[bool, float]] = {}  # relpath -> (marked modified at any reading, seconds)
    server.start_kernel(order[0], plans[order[0]].kernel)
    for k, rel in enumerate(order):
        t0, plan, name = time.perf_counter(), plans[rel], Path(rel).name
        kernel = specs[plan.kernel]["spec"]["display_name"]
        if k == 0:
            page.goto(server.lab_url(rel), wait_until="domcontentloaded", timeout=LAB_LOAD_MS)
        else:
            _open_from_path(page, rel)
        if k + 1 < len(order):  # the next kernel starts while this notebook is checked
            server.start_kernel(order[k + 1], plans[order[k + 1]].kernel, wait=False)
        _wait_for_kernel(page, name, kernel)
        seen = [_state(page, name, kernel)["dirty"]]
        cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell")
        for i in plan.widget_cells:  # a saved widget view falls back to its picture (poslib.viz.interact saves one)
            cells.nth(i).locator(".jp-OutputArea img").first.wait_for(state="attached", timeout=LAB_LOAD_MS)
        seen.append(_state(page, name, kernel)["dirty"])
        page.wait_for_timeout(SETTLE_MS)
        seen.append(_state(page, name, kernel)["dirty"])
        if any(seen):
            page.screenshot(path=str(screenshots / f"{Path(rel).stem}-modified-on-open.png"))
        results[rel] = (any(seen), time.perf_counter() - t0)
        _close_current_tab(page, any(seen))
        server.end_sessions(rel, wait=False)
    for rel, (dirty, secs) in results.items():
        print(f"{rel}: {'MODIFIED' if dirty else 'clean'} after load, kernel and widgets ({secs:.1f} s)")
    print(f"{len(results)} notebooks opened and checked in {time.perf_counter() - start:.1f} s")
    modified = [rel for rel, (dirty, _) in results.items() if dirty]
    assert len(results) == len(relpaths) >= 11, f"checked {len(results)} of {len(relpaths)} notebooks"
    assert not modified, (
        f"{len(modified)} of {len(results)} notebooks are marked modified with no action taken: "
        + ", ".join(modified)
        + f"; screenshots in {screenshots}. JupyterLab copies the kernel's kernelspec and language_info into a"
        " notebook when its kernel connects: store the kernel's own (python scripts/run_notebooks.py, or with"
        " --metadata-only where the outputs need no refresh)."
    )


def _run_notebooks_module():
    spec = importlib.util.spec_from_file_location("run_notebooks", REPO / "scripts" / "run_notebooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stored_kernelspec_is_the_installed_kernels() -> None:
    # No browser needed: the field JupyterLab compares first, for every notebook, against the kernelspec
    # jupyter_client finds here (the one the server starts).
    from jupyter_client.kernelspec import KernelSpecManager

    manager, wrong = KernelSpecManager(), []
    for rel in course_notebooks(REPO):
        stored = json.loads((REPO / rel).read_text(encoding="utf-8"))["metadata"].get("kernelspec", {})
        spec = manager.get_kernel_spec(stored.get("name", "python3"))
        wanted = {"name": stored.get("name", "python3"), "display_name": spec.display_name, "language": spec.language}
        if stored != wanted:
            wrong.append(f"{rel}: {stored} (the kernel writes {wanted})")
    assert not wrong, "stored kernelspec is not the kernel's own:\n  " + "\n  ".join(wrong)


def test_store_kernel_metadata_on_a_hand_made_notebook() -> None:
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager

    store = _run_notebooks_module().store_kernel_metadata
    spec = KernelSpecManager().get_kernel_spec("python3")
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("1", metadata={"execution": {"iopub.status.idle": "2026"}, "tags": ["x"]})],
        metadata={"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    )
    assert store(nb) is True
    assert nb.metadata.kernelspec == {"name": "python3", "display_name": spec.display_name, "language": spec.language}
    assert nb.cells[0].metadata == {"tags": ["x"]}  # the timestamps go, other cell metadata stays
    assert store(nb) is False  # a second pass changes nothing
