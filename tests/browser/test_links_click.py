"""Links that click (issue 37): in JupyterLab at 1280 × 800, a link does what it says.

1. **No link under the cell toolbar.** JupyterLab 4 draws the active cell's toolbar (duplicate, move up/down,
   insert above/below, delete; about 175 × 32 px) over the top right of the cell. It hides the toolbar when its
   check finds text under it (``jp-toolbar-overlap`` on the cell), but on a freshly opened notebook that check
   can run before the markdown is rendered: the toolbar then stays over the text, and a click meant for a link
   there inserts a cell (05's header: "notation" lay under "Insert a cell above", 64 cells became 65). So the test
   measures the toolbar where JupyterLab draws it when it is shown (``jp-toolbar-overlap`` taken off for the
   measurement): for every notebook, with its first cell and then its second selected, no box of any link in that
   cell may intersect the toolbar's box. scripts/course_map.py keeps the header's first paragraph free of links
   (TOOLBAR_CLEAR). Not counted: the ``¶`` JupyterLab adds to every heading (``jp-InternalAnchorLink``), invisible
   until the heading is hovered; a long title reaches under the toolbar, and JupyterLab's own check, which runs
   after rendering when a reader selects that cell, hides the toolbar there.
2. **Links into another notebook land on their target.** JupyterLab 4.6 renders notebooks in a window: a cell far
   down is not laid out when the notebook opens, so a ``#heading`` or ``#<a id>`` fragment finds nothing and the
   notebook opens at its top; it also percent-encodes ``·`` and ``§`` in heading fragments. A ``#cell-id=<id>``
   fragment is looked up in the notebook's model and scrolled to (``Notebook.setFragment``). For every markdown
   link of the course of the form ``NN_name.ipynb#fragment``, the test clicks it in JupyterLab, as a reader does,
   and waits until the page is still: the target notebook must be the current tab, the target cell the selected one,
   and its top edge in the notebook's viewport with at least ``MIN_VISIBLE_PX`` of it shown. JupyterLab scrolls the
   cell to the top of the view, then, while the freshly opened notebook finishes its layout, the cell moves down: in
   2026-12 it came to rest at 383 px (01's notation box) and 498 px (03's verdict) of a 679 px view, so the test asks
   for "on screen", not "at the top"; since issue 43 the plugin in labextension/ puts the cell back at the top (0 px),
   tests/browser/test_shorter_paths.py. (The offline book gives every cell ``id="cell-id=<id>"``, nbconvert's lab
   template, so the same links work there; tests/browser/test_book.py checks every book link's id.)

The session's server and browser serve every notebook (conftest.py: JupyterLab started with the README's open
command in a temporary copy). About 2.5 minutes on the shared 2-core machine (measured 2026-12-03: 56 s for the
toolbar, 84 s for the ten links; most of it JupyterLab opening notebooks, and the kernels it starts). Screenshots of
each measured page go to pytest's temp folder.

Run only this: pytest tests/browser/test_links_click.py
"""

from __future__ import annotations

import json
import posixpath
import time
from pathlib import Path

from browser_harness import LAB_LOAD_MS, REPO, _answer_kernel_dialog, course_notebooks
from test_links import anchor_ids, links

VIEWPORT = {"width": 1280, "height": 800}  # the reader's screen in issue 37
FIRST_CELLS = 2  # the header (course map) and the title cell
MIN_VISIBLE_PX = 60  # of the target cell below its top edge: its heading's first line
SETTLE_S, SETTLE_MAX_S = 1.5, 20  # the target must keep its place this long (images and math above it load late)

# The notebook on screen: the widget of the main area's current tab (hidden panels stay in the page).
_JS_PANEL = """const tab = document.querySelector('#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current');
  const panel = tab && document.getElementById(tab.dataset.id);
  const cellAt = i => panel && panel.querySelector(`.jp-Notebook .jp-Cell[data-windowed-list-index="${i}"]`);"""

# The toolbar's box and every link box of cell ``i`` (client rects: a link that wraps has one per line).
_JS_TOOLBAR_AND_LINKS = """(i) => {
  /*PANEL*/
  const cell = cellAt(i);
  if (!cell) return {error: 'cell not in the page'};
  const hidden = cell.classList.contains('jp-toolbar-overlap');
  cell.classList.remove('jp-toolbar-overlap');  // where the toolbar is drawn when JupyterLab shows it
  const bar = cell.querySelector('.jp-cell-toolbar');
  const box = r => [r.left, r.top, r.right, r.bottom].map(Math.round);
  const out = {hidden, toolbar: bar ? box(bar.getBoundingClientRect()) : null, links: []};
  for (const a of cell.querySelectorAll('.jp-RenderedMarkdown a[href]:not(.jp-InternalAnchorLink)'))
    for (const r of a.getClientRects()) out.links.push([a.textContent.trim(), box(r)]);
  if (hidden) cell.classList.add('jp-toolbar-overlap');
  return out;
}""".replace("/*PANEL*/", _JS_PANEL)

# Mark the link of cell ``i`` to notebook ``name`` with fragment ``frag`` (JupyterLab rewrites a relative href into
# an absolute /files/… URL that keeps the fragment); true when found.
_JS_MARK_LINK = """([i, name, frag]) => {
  /*PANEL*/
  const cell = cellAt(i);
  for (const a of cell ? cell.querySelectorAll('.jp-RenderedMarkdown a[href]') : []) {
    const url = new URL(a.href, document.baseURI);
    if (url.pathname.endsWith('/' + name) && decodeURIComponent(url.hash) === '#' + frag) {
      a.setAttribute('data-poslib-test-link', '');
      return true;
    }
  }
  return false;
}""".replace("/*PANEL*/", _JS_PANEL)

# Where the current notebook stands: its tab's name, its selected cells, and the top of cell ``i`` in its viewport.
_JS_WHERE = """(i) => {
  /*PANEL*/
  if (!panel || !panel.querySelector('.jp-Notebook')) return null;
  const view = panel.querySelector('.jp-WindowedPanel-outer') || panel.querySelector('.jp-Notebook');
  const cell = cellAt(i), v = view.getBoundingClientRect();
  return {
    tab: tab.querySelector('.lm-TabBar-tabLabel').textContent.trim(),
    // JupyterLab selects the cell it scrolled to (Notebook.scrollToCell: deselectAll, select) but leaves the active
    // cell (the cursor, also marked selected) where it was
    selected: [...panel.querySelectorAll('.jp-Notebook .jp-Cell.jp-mod-selected')]
      .map(c => Number(c.dataset.windowedListIndex)),
    top: cell ? Math.round(cell.getBoundingClientRect().top - v.top) : null,
    height: Math.round(v.height),
  };
}""".replace("/*PANEL*/", _JS_PANEL)


# The cell ``i`` of the notebook on screen, for Playwright (a tab's widget id is unique in the page).
def _cell(page, i: int) -> str:
    panel = page.evaluate(
        "() => document.querySelector('#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current').dataset.id"
    )
    return f'[id="{panel}"] .jp-Notebook .jp-Cell[data-windowed-list-index="{i}"]'


def _cells(rel: str) -> list[dict]:
    return json.loads((REPO / rel).read_text(encoding="utf-8"))["cells"]


def heading_links() -> list[tuple[str, int, str, str, int]]:
    """(source notebook, its cell index, link as written, target notebook, target cell index) of every markdown link
    of a course notebook into a cell of a course notebook (``NN_name.ipynb#fragment``).

    The target cell is the one the fragment names: ``cell-id=<id>``, or the cell that holds the heading or the
    ``<a id>`` (the form that does not scroll in JupyterLab 4.6; found so that the test reports it, not skips it).
    """
    found = []
    notebooks = course_notebooks(REPO)
    for rel in notebooks:
        for i, cell in enumerate(_cells(rel)):
            if cell["cell_type"] != "markdown":
                continue
            for link in links("".join(cell["source"])):
                path, _, fragment = link.partition("#")
                target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), path))
                if not fragment or not path.endswith(".ipynb") or target not in notebooks:
                    continue
                target_cells = _cells(target)
                if fragment.startswith("cell-id="):
                    index = next((j for j, c in enumerate(target_cells) if c.get("id") == fragment[8:]), -1)
                else:
                    index = next(
                        (
                            j
                            for j, c in enumerate(target_cells)
                            if c["cell_type"] == "markdown" and fragment in anchor_ids("".join(c["source"]))
                        ),
                        -1,
                    )
                found.append((rel, i, link, target, index))
    return found


def _open(page, lab, rel: str) -> None:
    """Open ``rel`` in a fresh workspace, as the README's open command does, and wait for its first cell's links."""
    lab.start_kernel(rel, wait=False)  # JupyterLab attaches to it, so it never asks "Select Kernel"
    page.goto(lab.lab_url(rel), wait_until="domcontentloaded", timeout=LAB_LOAD_MS)
    page.locator('.jp-NotebookPanel .jp-Cell[data-windowed-list-index="0"] .jp-RenderedMarkdown').first.wait_for(
        timeout=LAB_LOAD_MS
    )
    _answer_kernel_dialog(page)


def _intersects(a: list[int], b: list[int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_no_link_of_the_first_cells_lies_under_the_cell_toolbar(browser_context, lab, page, screenshots: Path) -> None:
    page.set_viewport_size(VIEWPORT)
    problems, measured = [], 0
    for rel in course_notebooks(REPO):
        _open(page, lab, rel)
        for i in range(FIRST_CELLS):
            page.locator(_cell(page, i) + " .jp-InputPrompt").first.click()  # select it as a reader does
            page.locator(_cell(page, i) + ".jp-mod-active .jp-cell-toolbar").first.wait_for(
                state="attached", timeout=15_000
            )
            got = page.evaluate(_JS_TOOLBAR_AND_LINKS, i)
            if got.get("error") or not got["toolbar"]:
                problems.append(f"{rel} cell {i}: {got.get('error') or 'no cell toolbar on the active cell'}")
                continue
            measured += 1
            covered = [text for text, box in got["links"] if _intersects(box, got["toolbar"])]
            if covered:
                problems.append(f"{rel} cell {i}: the cell toolbar {got['toolbar']} covers the link(s) {covered}")
        page.screenshot(path=str(screenshots / f"toolbar-{Path(rel).stem}.png"))
        lab.end_sessions(rel, wait=False)
    assert measured == FIRST_CELLS * len(course_notebooks(REPO)), problems
    assert not problems, "\n  ".join(["links a click on which hits the cell toolbar:", *problems])


def test_links_into_another_notebook_land_on_their_target(browser_context, lab, page, screenshots: Path) -> None:
    page.set_viewport_size(VIEWPORT)
    cases = heading_links()
    assert len(cases) >= 10, cases  # 01's notation box (8 links) and 03's verdict (2) at least
    problems, landed = [], []
    for rel, i, link, target, index in cases:
        where = f"{rel} cell {i}: [{link}]"
        if index < 0:
            problems.append(f"{where}: {target} has no cell with that id, heading or anchor")
            continue
        _open(page, lab, rel)
        lab.start_kernel(target, wait=False)
        # Bring the source cell on screen as a reader does (a cell far down is not laid out before): select the
        # first cell, then move down with the arrow key, which scrolls the active cell into view.
        page.locator(_cell(page, 0) + " .jp-InputPrompt").first.click()
        for _ in range(i):
            page.keyboard.press("ArrowDown")
        path, _, fragment = link.partition("#")
        page.locator(_cell(page, i) + " .jp-RenderedMarkdown").first.wait_for(timeout=15_000)
        marked = page.evaluate(_JS_MARK_LINK, [i, posixpath.basename(path), fragment])
        if not marked:
            problems.append(f"{where}: no such link in cell {i} on the page")
            continue
        page.locator("a[data-poslib-test-link]").first.click()
        deadline, last, still_since = time.monotonic() + SETTLE_MAX_S, None, time.monotonic()
        while time.monotonic() < deadline:
            page.wait_for_timeout(250)
            now = page.evaluate(_JS_WHERE, index)
            if now != last:
                last, still_since = now, time.monotonic()
            elif now and now["tab"] == Path(target).name and index in now["selected"]:
                if time.monotonic() - still_since >= SETTLE_S:  # a link that does not scroll runs to the deadline
                    break
        page.screenshot(path=str(screenshots / f"link-{Path(rel).stem}-cell{i}-to-{Path(target).stem}.png"))
        if not last or last["tab"] != Path(target).name:
            problems.append(f"{where}: the current tab is {last and last['tab']!r}, not {Path(target).name}")
        elif index not in last["selected"] or last["top"] is None:
            problems.append(f"{where}: {target} opened with cell(s) {last['selected']} selected, not cell {index}")
        elif not 0 <= last["top"] <= last["height"] - MIN_VISIBLE_PX:
            problems.append(
                f"{where}: cell {index}'s top is at {last['top']} px of a {last['height']} px view (not on screen)"
            )
        else:
            landed.append(f"{rel} → {target} cell {index}: top at {last['top']} of {last['height']} px")
        lab.end_sessions(wait=False)
    print("\n".join(landed))
    assert not problems, "\n  ".join(["links that do not land on their target:", *problems])
