"""Every notebook with a widget, used the way a student uses it: in JupyterLab, in Chromium.

For each notebook in notebooks/ that shows a widget (found automatically): open it; once its kernel is
connected and its saved widget pictures are shown, its tab must not be marked modified (the open check,
browser_harness.check_opens_unmodified: issue 24, item 6); then clear outputs, Run All, wait for the
kernel to go idle; no cell may show an error; every widget cell must render real widgets (not the
``VBox(children=…`` text fallback, not "Error displaying widget"); then the first slider of each widget
cell is moved with the keyboard and the figure it drives must change on screen, with nothing logged as
an error. Every notebook without a widget gets the open check alone. A harness notebook (a LivePlot
defined inline, wired with poslib.viz.interact) runs first, so the harness is proven even when no real
notebook has a slider; before it, the first widget notebook is opened and not run, and each of its
interactive cells must show its saved picture, not widget text.

The server is the session's (conftest.py), started with the README's open command; each notebook is
opened once, in a fresh tab, before anything has changed its copy.

Run only these: pytest tests/browser/test_notebooks_in_browser.py
"""

from __future__ import annotations

import time

import pytest
from browser_harness import (
    HARNESS_NOTEBOOK,
    LAB_LOAD_MS,
    REPO,
    NotebookFailure,
    check_opens_unmodified,
    check_widgets,
    course_notebooks,
    logged_errors,
    move_first_slider,
    open_and_run_all,
    plan_notebook,
    widget_notebooks,
)

NOTEBOOK_PATHS = [f"notebooks/{plan.name}" for plan in widget_notebooks()]
HARNESS_PATH = f"harness/{HARNESS_NOTEBOOK}"
# Course notebooks without a widget: opened and checked unmodified, not run (nbval runs them).
OPEN_ONLY_PATHS = [rel for rel in course_notebooks(REPO) if rel not in NOTEBOOK_PATHS]


def _next_notebook(request: pytest.FixtureRequest) -> str | None:
    """The notebook the next test of this file opens (its kernel can start early).

    Only this file's: under xdist a test of another file may run on the other worker, where a kernel
    started here would idle until the session ends.
    """
    items = request.session.items
    i = items.index(request.node)
    for item in items[i + 1 : i + 2]:
        callspec = getattr(item, "callspec", None)
        if item.path != request.node.path:
            return None
        if callspec is not None and isinstance(callspec.params.get("relpath"), str):
            return callspec.params["relpath"]
    return None


def _start_next_kernel(request, lab) -> None:
    following = _next_notebook(request)
    if following and (lab.root / following).exists():  # its kernel starts while this one is checked
        lab.start_kernel(following, plan_notebook(lab.root / following).kernel, wait=False)


def _failure(page, plan, err: Exception, lab, screenshots) -> NotebookFailure:
    """``err`` with where it happened: a screenshot, the browser console's last errors, the server log."""
    shot = screenshots / f"{plan.path.stem}-FAILED.png"
    try:
        page.screenshot(path=str(shot))
        where = f"screenshot: {shot}"
    except Exception as shot_err:
        where = f"no screenshot ({type(shot_err).__name__})"
    logged = "\n  ".join(page.console_errors[-8:]) or "(none)"
    return NotebookFailure(f"{err}\n{where}\nbrowser console errors:\n  {logged}\nserver log: {lab.log_path}")


def _exercise(request, page, lab, relpath: str, screenshots, open_check: bool = True):
    """Open one notebook (and check it opens unmodified), run it in the page and move its sliders.

    On failure, say where and keep a screenshot.
    """
    plan = plan_notebook(lab.root / relpath)
    start, times = time.perf_counter(), {}

    def on_open() -> None:
        t = time.perf_counter()
        if open_check:
            check_opens_unmodified(page, lab, plan, screenshots)
        times["open check"] = time.perf_counter() - t

    try:
        lab.start_kernel(relpath, plan.kernel)  # at once if it was started during the previous test
        open_and_run_all(page, lab, relpath, plan, times, on_open=on_open)
        _start_next_kernel(request, lab)
        check_widgets(page, plan)
        t_moves = time.perf_counter()
        moves = [move_first_slider(page, plan, i, screenshots) for i in plan.interactive_cells]
        times["moves"] = time.perf_counter() - t_moves
        errors = logged_errors(page)
        if errors:
            raise NotebookFailure(
                f"{plan.name}: the Log Console shows errors (a widget callback raised?):\n" + "\n---\n".join(errors)
            )
    except Exception as err:
        raise _failure(page, plan, err, lab, screenshots) from err
    finally:
        lab.end_sessions(relpath, wait=False)
    phases = ", ".join(f"{k} {v:.1f}" for k, v in times.items())
    print(
        f"{plan.name}: {len(moves)} interactive cell(s), each moved and redrawn; "
        f"{time.perf_counter() - start:.1f} s ({phases}); screenshots in {screenshots}"
    )
    return plan, moves


# From tests/browser/test_saved_notebook_shows_pictures.py, unchanged: here it shares this file's server and
# Chromium (xdist runs a file on one worker), and it runs first, before any test has run notebook 01's copy.
@pytest.mark.parametrize("relpath", NOTEBOOK_PATHS[:1], ids=[p.split("/")[-1] for p in NOTEBOOK_PATHS[:1]])
def test_saved_widget_cell_shows_its_picture(relpath, page, lab, screenshots):
    """A saved notebook, opened in JupyterLab and not run: every interactive cell shows a picture, not widget text.

    ``poslib.viz.interact`` saves a PNG of its figure beside the widget view; before the kernel
    has run, JupyterLab has no widget model and must fall back to that PNG, never to the
    ``VBox(children=(HBox(…`` repr a student used to see.
    """
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


@pytest.mark.parametrize("relpath", [HARNESS_PATH], ids=["harness"])
def test_harness_notebook_slider_redraws(request, relpath, page, lab, screenshots):
    """The harness itself: a poslib.viz.interact slider renders, moves by keyboard, and redraws its image."""
    plan, moves = _exercise(request, page, lab, relpath, screenshots, open_check=False)
    assert plan.interactive_cells == plan.slider_cells == (1,) and plan.runnable == (0, 1, 3)
    # the value read is aria-valuenow and the readout beside the track (browser_harness._JS_SLIDER_VALUE)
    assert [(m.before, m.after) for m in moves] == [("1.0|1", "2.0|2")]


@pytest.mark.parametrize(
    "relpath",
    NOTEBOOK_PATHS
    or [pytest.param(None, marks=pytest.mark.skip(reason="no notebook in notebooks/ shows a widget yet"))],
    ids=[p.split("/")[-1] for p in NOTEBOOK_PATHS] or ["none"],
)
def test_notebook_sliders_in_jupyterlab(request, relpath, page, lab, screenshots):
    """Open (unmodified), Run All, check the widgets, move each widget cell's first slider, check its figure changed."""
    _exercise(request, page, lab, relpath, screenshots)


@pytest.mark.parametrize(
    "relpath",
    OPEN_ONLY_PATHS or [pytest.param(None, marks=pytest.mark.skip(reason="every notebook shows a widget"))],
    ids=[p.split("/")[-1] for p in OPEN_ONLY_PATHS] or ["none"],
)
def test_notebook_without_widgets_opens_unmodified(request, relpath, page, lab, screenshots):
    """Open the notebook as a reader does; once its kernel is connected and idle, its tab is not marked modified."""
    plan = plan_notebook(lab.root / relpath)
    start = time.perf_counter()
    try:
        lab.start_kernel(relpath, plan.kernel)  # at once if it was started during the previous test
        page.goto(lab.lab_url(relpath), wait_until="domcontentloaded", timeout=LAB_LOAD_MS)
        _start_next_kernel(request, lab)
        check_opens_unmodified(page, lab, plan, screenshots)
    except Exception as err:
        raise _failure(page, plan, err, lab, screenshots) from err
    finally:
        lab.end_sessions(relpath, wait=False)
    print(f"{plan.name}: opened, kernel connected, not marked modified; {time.perf_counter() - start:.1f} s")
