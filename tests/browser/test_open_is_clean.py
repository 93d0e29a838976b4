"""Opening a shipped notebook in JupyterLab does not mark it modified (issue 24, item 6).

As soon as a notebook's kernel connects, JupyterLab (4.x, ``NotebookPanel._updateSpec`` and
``_updateLanguage``) copies the kernel's ``kernelspec`` (name, display name, language) and its
``language_info`` into the notebook's metadata; where either differs from what the file stores, the
notebook turns modified (``jp-mod-dirty`` on its tab) although the reader did nothing, and autosave
then writes the file. The notebooks stored ``display_name: "Python 3"``, ipykernel's kernelspec says
``"Python 3 (ipykernel)"``; scripts/run_notebooks.py now stores the installed kernelspec's own fields.

The browser check itself (browser_harness.check_opens_unmodified) runs where each notebook is opened
anyway, in the session's JupyterLab, which is started with the README's open command in a temporary copy
of notebooks/, docs/ and results/ (conftest.py): test_notebooks_in_browser.py checks every notebook with a
widget right after it opens, before it is run, and opens every other notebook for this check alone. For
each: its kernel is connected and idle (it connects only after the file's content is in the model), every
widget cell shows its saved picture, and half a second more has passed; at none of these readings may its
tab be marked modified. (This file used to open every notebook a second time, in a server of its own.)
The tests below need no browser: the coverage of that check, and the fields it rests on.

``language_info.version`` is the kernel's Python release (``3.11.7``), a property of the machine, not
of the notebook: where the Python running the tests is another release, the copies' version is set to it
(browser_harness.align_python_version, printed), so the check tests what the notebooks control. A reader
on another Python release does see the notebook turn modified when its kernel connects; nothing stored in
the file can prevent that.

Run only these: pytest tests/browser/test_open_is_clean.py tests/browser/test_notebooks_in_browser.py
"""

from __future__ import annotations

import importlib.util
import json

from browser_harness import REPO, course_notebooks, plan_notebook


def test_every_notebook_gets_the_open_check() -> None:
    # The open check runs in two tests of test_notebooks_in_browser.py: the slider test of each notebook
    # with a widget, the open-only test of each other one. Together they must cover every course notebook,
    # each once, and a notebook counts as "with a widget" exactly when the slider test finds one to move.
    from test_notebooks_in_browser import NOTEBOOK_PATHS, OPEN_ONLY_PATHS

    everything = course_notebooks(REPO)
    assert len(everything) >= 11, everything
    assert sorted(NOTEBOOK_PATHS + OPEN_ONLY_PATHS) == everything, (NOTEBOOK_PATHS, OPEN_ONLY_PATHS)
    assert all(plan_notebook(REPO / rel).widget_cells for rel in NOTEBOOK_PATHS)
    assert not any(plan_notebook(REPO / rel).widget_cells for rel in OPEN_ONLY_PATHS)


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
