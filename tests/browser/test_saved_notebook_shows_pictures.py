"""A saved notebook, opened in JupyterLab and not run: every interactive cell shows a picture, not widget text.

``poslib.viz.interact`` saves a PNG of its figure beside the widget view; before the kernel
has run, JupyterLab has no widget model and must fall back to that PNG, never to the
``VBox(children=(HBox(…`` repr a student used to see.
"""

from __future__ import annotations

import pytest
from browser_harness import LAB_LOAD_MS, plan_notebook, widget_notebooks

NOTEBOOK_PATHS = [f"notebooks/{plan.name}" for plan in widget_notebooks()]


@pytest.mark.parametrize("relpath", NOTEBOOK_PATHS[:1], ids=[p.split("/")[-1] for p in NOTEBOOK_PATHS[:1]])
def test_saved_widget_cell_shows_its_picture(relpath, page, lab, screenshots):
    plan = plan_notebook(lab.root / relpath)
    page.goto(lab.lab_url(relpath), wait_until="domcontentloaded", timeout=LAB_LOAD_MS)
    cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-CodeCell")
    cells.first.wait_for(timeout=LAB_LOAD_MS)
    for i in plan.interactive_cells:
        out = cells.nth(i).locator(".jp-OutputArea")
        out.scroll_into_view_if_needed()
        page.wait_for_timeout(3000)  # the widget manager settles (restores nothing: no state is saved)
        text = out.inner_text()
        page.screenshot(path=str(screenshots / f"{plan.path.stem}-saved-cell{i}.png"))
        assert "VBox(" not in text and "HBox(" not in text, f"{plan.name} cell {i} shows widget text: {text[:200]!r}"
        assert out.locator("img").count() >= 1, f"{plan.name} cell {i} shows no picture; it reads {text[:200]!r}"
    lab.end_sessions(relpath, wait=False)
