"""Every notebook with a widget, used the way a student uses it: in JupyterLab, in Chromium.

For each notebook in notebooks/ that shows a widget (found automatically): open it,
clear outputs, Run All, wait for the kernel to go idle; no cell may show an error;
every widget cell must render real widgets (not the ``VBox(children=…`` text
fallback, not "Error displaying widget"); then the first slider of each widget cell
is moved with the keyboard and the figure it drives must change on screen, with
nothing logged as an error. A harness notebook (a LivePlot defined inline, wired
with poslib.viz.interact) runs first, so the harness is proven even when no real
notebook has a slider.

Run only these: pytest tests/browser
"""

from __future__ import annotations

import time

import pytest
from browser_harness import (
    HARNESS_NOTEBOOK,
    NotebookFailure,
    check_widgets,
    logged_errors,
    move_first_slider,
    open_and_run_all,
    plan_notebook,
    widget_notebooks,
)

NOTEBOOK_PATHS = [f"notebooks/{plan.name}" for plan in widget_notebooks()]
HARNESS_PATH = f"harness/{HARNESS_NOTEBOOK}"


def _next_notebook(request: pytest.FixtureRequest) -> str | None:
    """The notebook the next collected browser test opens (its kernel can start early)."""
    items = request.session.items
    i = items.index(request.node)
    for item in items[i + 1 : i + 2]:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and isinstance(callspec.params.get("relpath"), str):
            return callspec.params["relpath"]
    return None


def _exercise(request, page, lab, relpath: str, screenshots):
    """Run one notebook in the page and move its sliders; on failure, say where and keep a screenshot."""
    plan = plan_notebook(lab.root / relpath)
    start, times = time.perf_counter(), {}
    try:
        lab.start_kernel(relpath, plan.kernel)  # at once if it was started during the previous test
        open_and_run_all(page, lab, relpath, plan, times)
        following = _next_notebook(request)
        if following and (lab.root / following).exists():  # its kernel starts while this one is checked
            lab.start_kernel(following, plan_notebook(lab.root / following).kernel, wait=False)
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
        shot = screenshots / f"{plan.path.stem}-FAILED.png"
        try:
            page.screenshot(path=str(shot))
            where = f"screenshot: {shot}"
        except Exception as shot_err:
            where = f"no screenshot ({type(shot_err).__name__})"
        logged = "\n  ".join(page.console_errors[-8:]) or "(none)"
        raise NotebookFailure(
            f"{err}\n{where}\nbrowser console errors:\n  {logged}\nserver log: {lab.log_path}"
        ) from err
    finally:
        lab.end_sessions(relpath, wait=False)
    phases = ", ".join(f"{k} {v:.1f}" for k, v in times.items())
    print(
        f"{plan.name}: {len(moves)} interactive cell(s), each moved and redrawn; "
        f"{time.perf_counter() - start:.1f} s ({phases}); screenshots in {screenshots}"
    )
    return plan, moves


@pytest.mark.parametrize("relpath", [HARNESS_PATH], ids=["harness"])
def test_harness_notebook_slider_redraws(request, relpath, page, lab, screenshots):
    """The harness itself: a poslib.viz.interact slider renders, moves by keyboard, and redraws its image."""
    plan, moves = _exercise(request, page, lab, relpath, screenshots)
    assert plan.interactive_cells == plan.slider_cells == (1,) and plan.runnable == (0, 1, 3)
    assert [(m.before, m.after) for m in moves] == [("1.0", "2.0")]


@pytest.mark.parametrize(
    "relpath",
    NOTEBOOK_PATHS
    or [pytest.param(None, marks=pytest.mark.skip(reason="no notebook in notebooks/ shows a widget yet"))],
    ids=[p.split("/")[-1] for p in NOTEBOOK_PATHS] or ["none"],
)
def test_notebook_sliders_in_jupyterlab(request, relpath, page, lab, screenshots):
    """Open, Run All, check the widgets, move each widget cell's first slider, check its figure changed."""
    _exercise(request, page, lab, relpath, screenshots)
