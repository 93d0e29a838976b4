"""Key press to new pixels: how long JupyterLab takes to show a slider's new figure, measured in the page.

Run: python benchmarks/browser_sliders.py [--root DIR ...] [--notebooks 04_relative,05_rope] [--presses 7]
                                         [--out FILE.json]

Needs what the browser tests need (Debian's Chromium and the Python package playwright; see CONTRIBUTING,
"Tested in a real browser"). One JupyterLab server per ``--root`` (a checkout: default this one), started
with the README's open command in a temporary copy of that checkout's notebooks/, docs/ and results/, with
PYTHONPATH=DIR so that its kernels import that checkout's poslib (the script asks each kernel which poslib
file it imported and prints it) and one thread per kernel (OMP/MKL/OPENBLAS_NUM_THREADS=1, as conftest.py
sets for the notebooks). One headless Chromium for everything.

For each notebook (default: the ones whose figures issue 37's slider round sped up, plus 00 and 05) and
each root in turn: open it, Run All (tests/browser/browser_harness.py, imported, not copied), then for
every interactive cell with a slider, focus its first slider's handle and ``--presses`` times press
ArrowRight (ArrowLeft at the maximum). Each press is timed in the page with performance.now(): from the
keydown (a capture listener on the document) until the cell's figure, the ipywidgets Image that
poslib.viz.interact replaces on every change, has a new src, has loaded and been decoded, and two
requestAnimationFrame callbacks have run (the frame holding it has been painted). Between presses the
script waits for quiet: for 600 ms no new picture and no animation frame later than 50 ms, and the
kernel idle. Given several roots, the roots take turns per notebook, which one goes first alternating
(one kernel alive at a time), so "before" and "after" see the same conditions.

Printed: per figure (notebook, code cell, slider description) and root, the median and max in ms; per
root the overall median and max over every press, and the share of presses within 300 ms (issue 37's
goal). ``--out`` writes all of it, every press included, as JSON. A figure's first two or three presses
after Run All are slower, before and after issue 37 alike: the kernel's redraw takes longer (it does outside the
browser too: the first move rebuilds poslib.viz._blit.FrameCache's background, and the next blits are
still slower than the later ones), so the median is over every press, as a student meets them.

The 1-minute load average is read at the start and end; ``--quiet-below L`` first waits (60 s at a
time, at most ``--quiet-wait-min`` minutes) until it is below L. The benchmark itself keeps one core
busy while a figure redraws, so compare roots within one run, not runs on different days.

Example, before and after a change (the "before" checkout as a git worktree):
    git worktree add /tmp/before 568b580
    python benchmarks/browser_sliders.py --root /tmp/before --root . --out /tmp/browser_sliders.json
    git worktree remove /tmp/before
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))  # the harness, as tests/browser/conftest.py uses it

from browser_harness import (  # noqa: E402
    _CELLS,
    CHROMIUM_ARGS,
    LabServer,
    NotebookPlan,
    _figure,
    align_python_version,
    check_widgets,
    course_notebooks,
    find_chromium,
    open_and_run_all,
    open_command,
    plan_notebook,
)

DEFAULT_NOTEBOOKS = (
    "00_tour",
    "04_relative",
    "05_rope",
    "09_rope_in_production",
    "10_learned_and_contextual_positions",
)
GOAL_MS = 300.0  # issue 37: new pixels within 0.3 s of a key press
PRESS_TIMEOUT_MS = 15_000  # a press whose figure has not changed by then counts as "no redraw"
QUIET_MS = 600  # between presses: no new picture for this long, and the kernel idle
QUIET_CAP_MS = 20_000

# Armed before a press: records the keydown's performance.now(), then watches the cell's output for a
# figure with a new src; once that image has loaded and decoded, two animation frames later it is on
# screen. window.__pressTiming.done resolves with why it ended: 'ok', 'error' or 'timeout'.
_JS_ARM = """([index, timeoutMs]) => {
  const cell = document.querySelectorAll(__CELLS__)[index];
  const out = cell.querySelector('.jp-OutputArea');
  const figure = () => out.querySelector('img.widget-image') || out.querySelector('img');
  const first = figure();
  const src0 = first ? first.src : null;
  const st = {t0: null, stamp: null, loaded: null, t1: null, why: null, src: null};
  st.done = new Promise(resolve => {
    let over = false, watching = null;
    const finish = why => {
      if (over) return;
      over = true; st.why = why; obs.disconnect(); clearTimeout(timer);
      document.removeEventListener('keydown', onKey, true);
      resolve(why);
    };
    const onKey = e => { if (st.t0 === null) { st.t0 = performance.now(); st.stamp = e.timeStamp; } };
    document.addEventListener('keydown', onKey, true);
    const shown = (img, src) => {
      if (over || img.src !== src) return;  // a later picture replaced this one: wait for that
      st.loaded = performance.now();
      img.decode().catch(() => null).then(() => requestAnimationFrame(() => requestAnimationFrame(() => {
        if (over || img.src !== src) return;
        st.t1 = performance.now(); st.src = src; finish('ok');
      })));
    };
    const check = () => {
      const img = figure();
      if (!img || (img === first && img.src === src0) || img.src === watching) return;
      const src = watching = img.src;
      if (img.complete && img.naturalWidth && img.currentSrc === src) shown(img, src);
      else {
        img.addEventListener('load', () => shown(img, src), {once: true});
        img.addEventListener('error', () => img.src === src && finish('error'), {once: true});
      }
    };
    const obs = new MutationObserver(check);
    obs.observe(out, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
  });
  window.__pressTiming = st;
}""".replace("__CELLS__", json.dumps(_CELLS))

_JS_RESULT = """async () => {
  const st = window.__pressTiming;
  await st.done;
  return {why: st.why, t0: st.t0, stamp: st.stamp, loaded: st.loaded, t1: st.t1};
}"""

# The first slider handle of a cell: focused without scrolling (the figure is what is kept in view),
# its value and range, and the slider's description.
_JS_HANDLE = """([index, focus]) => {
  const cell = document.querySelectorAll(__CELLS__)[index];
  const h = cell.querySelector('.widget-slider .noUi-handle');
  if (!h) return null;
  if (focus) h.focus({preventScroll: true});
  const slider = h.closest('.widget-slider');
  const label = slider && slider.querySelector('.widget-label');
  const num = a => parseFloat(h.getAttribute(a));
  return {now: num('aria-valuenow'), min: num('aria-valuemin'), max: num('aria-valuemax'),
          label: label ? label.textContent.trim() : '', focused: document.activeElement === h};
}""".replace("__CELLS__", json.dumps(_CELLS))

# Resolves once, for quietMs, the cell has shown no new picture and the page has drawn every frame within
# 50 ms (no long task: JupyterLab lays out and typesets what a scroll brought into view), and the kernel
# reads idle; or after capMs.
_JS_QUIET = """([index, quietMs, capMs]) => new Promise(resolve => {
  const cell = document.querySelectorAll(__CELLS__)[index];
  const out = cell.querySelector('.jp-OutputArea');
  let last = performance.now(), frame = last, over = false;
  const start = last;
  const obs = new MutationObserver(() => { last = performance.now(); });
  obs.observe(out, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
  const tick = t => {
    if (over) return;
    if (t - frame > 50) last = Math.max(last, t);
    frame = t;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  const idle = () => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
      .some(e => / [|] Idle$/.test(e.textContent.trim()));
  const poll = () => {
    const now = performance.now();
    if ((now - last >= quietMs && idle()) || now - start > capMs) {
      over = true; obs.disconnect(); resolve(now - start);
    } else setTimeout(poll, 100);
  };
  poll();
})""".replace("__CELLS__", json.dumps(_CELLS))

# Asked of each notebook's kernel once its cells have run (silently: no output, no prompt number).
_KERNEL_EXPRESSIONS = {
    "poslib": "__import__('poslib').__file__",
    "omp_threads": "__import__('os').environ.get('OMP_NUM_THREADS')",
    "torch_threads": "(lambda m: m['torch'].get_num_threads() if 'torch' in m else None)(__import__('sys').modules)",
}


@dataclass
class Figure:
    """One slider-driven figure of one root: its presses, in ms from keydown to painted."""

    root: str
    notebook: str
    cell: int
    slider: str
    presses_ms: list[float] = field(default_factory=list)
    load_ms: list[float] = field(default_factory=list)  # keydown to the image's load event
    missed: int = 0  # presses after which no new picture came within PRESS_TIMEOUT_MS
    values: list[str] = field(default_factory=list)  # the slider's value after each press

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.notebook, self.cell, self.slider)

    def summary(self) -> dict[str, Any]:
        p = self.presses_ms
        return {
            "median_ms": round(statistics.median(p), 1) if p else None,
            "max_ms": round(max(p), 1) if p else None,
            "n": len(p),
            "missed": self.missed,
        }


@dataclass
class Root:
    """A checkout whose notebooks and poslib are served by one JupyterLab server."""

    path: Path
    label: str
    server: LabServer | None = None
    kernels: dict[str, dict[str, Any]] = field(default_factory=dict)  # notebook -> what its kernel answered


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def wait_until_quiet(below: float, max_minutes: float) -> list[float]:
    """Sleep 60 s at a time until the 1-minute load average is below ``below`` (at most ``max_minutes``)."""
    deadline = time.monotonic() + max_minutes * 60
    while (load := loadavg())[0] >= below and time.monotonic() < deadline:
        print(f"load {load}: waiting for < {below}", flush=True)
        time.sleep(60)
    if load[0] >= below:
        print(f"the machine did not get quiet within {max_minutes} min (load {load}): measuring anyway", flush=True)
    return load


def describe(path: Path) -> str:
    """The checkout's short commit, marked + where its poslib/ or notebooks/ differ from that commit."""
    try:
        sha = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--", "poslib", "notebooks"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return path.name
    return sha + ("+" if dirty else "")


def start_server(root: Root, base: Path) -> None:
    """A JupyterLab on a copy of the checkout's notebooks/, docs/ and results/, its kernels importing its poslib."""
    copy = base / "root"
    skip = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    for folder in ("notebooks", "docs", "results"):
        if (root.path / folder).is_dir():
            shutil.copytree(root.path / folder, copy / folder, ignore=skip)
    align_python_version(copy, course_notebooks(copy))
    argv = open_command((REPO / "README.md").read_text(encoding="utf-8"))
    # LabServer passes os.environ on to the server and so to its kernels
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(root.path), *([saved] if saved else [])])
    try:
        root.server = LabServer(root=copy, base=base / "lab", argv=tuple(argv[2:]))
        root.server.start()
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def ask_kernel(server: LabServer, relpath: str) -> dict[str, Any]:
    """Evaluate _KERNEL_EXPRESSIONS silently in the kernel of ``relpath`` (a second client on its connection file)."""
    from jupyter_client.blocking.client import BlockingKernelClient

    session = next(s for s in server.api("GET", "/api/sessions") if s.get("path") == relpath)
    connection = server.base / "jupyter-runtime" / f"kernel-{session['kernel']['id']}.json"
    client = BlockingKernelClient(connection_file=str(connection))
    client.load_connection_file()
    client.start_channels()
    try:
        msg_id = client.execute("", silent=True, store_history=False, user_expressions=_KERNEL_EXPRESSIONS)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            reply = client.get_shell_msg(timeout=60)
            if reply["parent_header"].get("msg_id") == msg_id:
                answers = reply["content"].get("user_expressions", {})
                return {
                    k: ast.literal_eval(v["data"]["text/plain"]) if v.get("status") == "ok" else v.get("evalue")
                    for k, v in answers.items()
                }
        raise RuntimeError(f"no answer from the kernel of {relpath}")
    finally:
        client.stop_channels()


def measure_cell(page: Page, plan: NotebookPlan, index: int, presses: int, root: str) -> Figure | None:
    """Press the arrow key ``presses`` times on the cell's first slider and time each new picture."""
    cell = page.locator(_CELLS).nth(index)
    cell.scroll_into_view_if_needed()
    fig = _figure(cell)
    if fig is None:
        return None
    fig.scroll_into_view_if_needed()
    state = page.evaluate(_JS_HANDLE, [index, False])
    if state is None:
        return None
    figure = Figure(root, plan.path.stem, index, state["label"])
    page.evaluate(_JS_QUIET, [index, QUIET_MS, QUIET_CAP_MS])
    for _ in range(presses):
        state = page.evaluate(_JS_HANDLE, [index, True])
        key = "ArrowLeft" if state["now"] >= state["max"] else "ArrowRight"
        page.evaluate(_JS_ARM, [index, PRESS_TIMEOUT_MS])
        page.keyboard.press(key)
        result = page.evaluate(_JS_RESULT)
        if result["why"] == "ok" and result["t0"] is not None:
            figure.presses_ms.append(result["t1"] - result["t0"])
            figure.load_ms.append(result["loaded"] - result["t0"])
        else:
            figure.missed += 1
        figure.values.append(str(page.evaluate(_JS_HANDLE, [index, False])["now"]))
        page.evaluate(_JS_QUIET, [index, QUIET_MS, QUIET_CAP_MS])
    return figure


def run_notebook(context: BrowserContext, root: Root, name: str, presses: int) -> list[Figure]:
    """Open the root's copy of notebooks/``name``, Run All, and measure each slider cell."""
    server = root.server
    assert server is not None
    relpath = f"notebooks/{name}.ipynb"
    path = server.root / relpath
    if not path.exists():
        print(f"  [{root.label}] {relpath}: not in this checkout", flush=True)
        return []
    plan = plan_notebook(path)
    page = context.new_page()
    times: dict[str, float] = {}
    try:
        server.start_kernel(relpath, plan.kernel)
        open_and_run_all(page, server, relpath, plan, times)
        check_widgets(page, plan)
        answers = ask_kernel(server, relpath)
        root.kernels[name] = answers
        print(
            f"  [{root.label}] {name}: ran in {times.get('run', 0):.0f} s; kernel imports {answers['poslib']}"
            f" (OMP_NUM_THREADS={answers['omp_threads']}, torch threads {answers['torch_threads']})",
            flush=True,
        )
        figures = []
        for index in plan.slider_cells:
            figure = measure_cell(page, plan, index, presses, root.label)
            if figure is None:
                print(f"  [{root.label}] {name} cell {index}: no slider handle or figure on the page", flush=True)
                continue
            s = figure.summary()
            print(
                f"  [{root.label}] {name} cell {index} {figure.slider!r}: median {s['median_ms']} ms,"
                f" max {s['max_ms']} ms ({s['n']} presses, {s['missed']} without a new picture)",
                flush=True,
            )
            figures.append(figure)
        return figures
    finally:
        page.close()
        server.end_sessions(relpath)


def overall(figures: list[Figure]) -> dict[str, Any]:
    every = [ms for f in figures for ms in f.presses_ms]
    if not every:
        return {"median_ms": None, "max_ms": None, "n": 0, "within_goal": None}
    return {
        "median_ms": round(statistics.median(every), 1),
        "max_ms": round(max(every), 1),
        "median_of_figure_medians_ms": round(
            statistics.median(statistics.median(f.presses_ms) for f in figures if f.presses_ms), 1
        ),
        "n": len(every),
        "within_goal": round(sum(ms <= GOAL_MS for ms in every) / len(every), 3),
        "missed": sum(f.missed for f in figures),
    }


def table(roots: list[Root], figures: list[Figure]) -> str:
    """Per figure, one median / max column pair per root."""
    by_key: dict[tuple[str, int, str], dict[str, Figure]] = {}
    for f in figures:
        by_key.setdefault(f.key, {})[f.root] = f
    head = f"{'notebook':<36} {'cell':>4}  {'slider':<30}" + "".join(f" {r.label + ' med/max ms':>26}" for r in roots)
    lines = [head, "-" * len(head)]
    for (nb, cell, slider), per_root in by_key.items():
        row = f"{nb:<36} {cell:>4}  {slider[:30]:<30}"
        for r in roots:
            shown = per_root.get(r.label)
            s = shown.summary() if shown else None
            celltext = "—" if not s or s["median_ms"] is None else f"{s['median_ms']:.0f} / {s['max_ms']:.0f}"
            if s and s["missed"]:
                celltext += f" ({s['missed']} missed)"
            row += f" {celltext:>26}"
        lines.append(row)
    lines.append("-" * len(head))
    for r in roots:
        o = overall([f for f in figures if f.root == r.label])
        if o["n"]:
            lines.append(
                f"{r.label}: overall median {o['median_ms']:.0f} ms, max {o['max_ms']:.0f} ms over {o['n']} presses;"
                f" median of figure medians {o['median_of_figure_medians_ms']:.0f} ms;"
                f" {o['within_goal']:.0%} within {GOAL_MS:.0f} ms"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root",
        action="append",
        type=Path,
        help="a checkout whose notebooks and poslib to measure (repeat for before/after; default: this one)",
    )
    parser.add_argument("--notebooks", default=",".join(DEFAULT_NOTEBOOKS), help="comma-separated notebook stems")
    parser.add_argument("--presses", type=int, default=7, help="key presses per figure")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--quiet-below", type=float, help="first wait until the 1-minute load average is below this")
    parser.add_argument("--quiet-wait-min", type=float, default=40, help="longest wait for --quiet-below, minutes")
    args = parser.parse_args()

    chromium = find_chromium()
    if chromium is None:
        sys.exit("no Chromium: install Debian's (apt-get install chromium) or set $POSLIB_CHROMIUM")
    from playwright.sync_api import sync_playwright

    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = "1"  # one thread per kernel, as the notebooks run (conftest.py)
    paths = [p.resolve() for p in (args.root or [REPO])]
    roots = [Root(p, describe(p)) for p in paths]
    for r in roots:  # two checkouts at one commit still need telling apart
        if sum(o.label == r.label for o in roots) > 1:
            r.label = f"{r.label}:{r.path.name}"
    notebooks = [n.removesuffix(".ipynb") for n in args.notebooks.split(",") if n]

    load_wait = wait_until_quiet(args.quiet_below, args.quiet_wait_min) if args.quiet_below else None
    load_start, started = loadavg(), time.perf_counter()
    print(f"load average at the start: {load_start}", flush=True)
    figures: list[Figure] = []
    load_by_notebook: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="browser-sliders-") as tmp:
        pw = sync_playwright().start()
        browser = None
        try:
            for i, r in enumerate(roots):
                start_server(r, Path(tmp) / f"root{i}")
                print(f"{r.label}: {r.path} served at {r.server.url if r.server else '?'}", flush=True)
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            for k, name in enumerate(notebooks):
                load_by_notebook[name] = loadavg()
                print(f"{name} (load {load_by_notebook[name]})", flush=True)
                for r in roots[k % len(roots) :] + roots[: k % len(roots)]:  # who goes first alternates
                    figures += run_notebook(context, r, name, args.presses)
        finally:
            if browser is not None:
                browser.close()
            pw.stop()
            for r in roots:
                if r.server is not None:
                    r.server.stop()
    load_end = loadavg()
    print(f"\nload average at the end: {load_end}; {time.perf_counter() - started:.0f} s\n")
    print(table(roots, figures))
    if args.out:
        report = {
            "what": "ms from keydown to the new figure painted (load, decode, two animation frames), in JupyterLab",
            "goal_ms": GOAL_MS,
            "presses": args.presses,
            "load_after_waiting": load_wait,
            "load_start": load_start,
            "load_end": load_end,
            "load_before_each_notebook": load_by_notebook,
            "seconds": round(time.perf_counter() - started),
            "roots": {
                r.label: {
                    "path": str(r.path),
                    "kernels": r.kernels,
                    **overall([f for f in figures if f.root == r.label]),
                }
                for r in roots
            },
            "figures": [{**asdict(f), **f.summary()} for f in figures],
        }
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"written: {args.out}")


if __name__ == "__main__":
    main()
