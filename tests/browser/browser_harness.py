"""Helpers for the browser tests: find notebooks with widgets, run a JupyterLab server, drive a notebook in it.

Nothing here is collected by pytest; ``conftest.py`` holds the fixtures and
``test_notebooks_in_browser.py`` the tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# A call that builds a widget box: poslib.viz.interact(...), ipywidgets.interact(...)/interactive(...).
_WIDGET_CALL = re.compile(r"\binteract(?:ive)?\s*\(")
_SLIDER = re.compile(r"Slider\s*\(")

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Waits are generous because the 2-core machine is shared with people executing notebooks,
# but bounded so that a hang fails instead of eating CI's time.
LAB_LOAD_MS = 90_000  # page load until the notebook's first cell is in the DOM
RUN_ALL_MS = 400_000  # Run All until every cell has run (notebook 10 needs ~200 s on a loaded 2-core machine)
FIGURE_CHANGE_MS = 45_000  # slider moved until the new picture is shown
SERVER_START_S = 120  # `jupyter lab` started until /api/status answers (seconds)


# ----------------------------------------------------------------------------- discovery


@dataclass(frozen=True)
class NotebookPlan:
    """What the browser test expects of one notebook, read from the .ipynb file.

    Cell numbers count code cells only, in order (the n-th ``.jp-CodeCell`` in the page).
    """

    path: Path
    n_code: int
    runnable: tuple[int, ...]  # code cells with a non-empty source (Run All executes them)
    widget_cells: tuple[int, ...]  # code cells that show a widget (controls, or a progress bar)
    interactive_cells: tuple[int, ...]  # widget cells that wire controls to a figure: interact(...)
    slider_cells: tuple[int, ...]  # interactive cells that build a slider
    kernel: str = "python3"

    @property
    def name(self) -> str:
        return self.path.name


def _strip_comments(src: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in src.splitlines())


def plan_notebook(path: Path) -> NotebookPlan:
    """Read a notebook and list the code cells that must run and the ones that must show widgets."""
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    runnable, widget_cells, interactive_cells, slider_cells = [], [], [], []
    for i, cell in enumerate(code):
        src = _strip_comments(cell.source)
        if cell.source.strip():
            runnable.append(i)
        stored_widget = any(WIDGET_MIME in out.get("data", {}) for out in cell.get("outputs", []))
        interactive = bool(_WIDGET_CALL.search(src))
        if stored_widget or interactive:
            widget_cells.append(i)
        if interactive:
            interactive_cells.append(i)
            if _SLIDER.search(src):
                slider_cells.append(i)
    kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
    return NotebookPlan(
        path, len(code), tuple(runnable), tuple(widget_cells), tuple(interactive_cells), tuple(slider_cells), kernel
    )


def widget_notebooks(folder: Path = NOTEBOOKS) -> list[NotebookPlan]:
    """Every notebook in ``folder`` (not its subfolders) with at least one widget cell, by name."""
    plans = []
    for path in sorted(folder.glob("*.ipynb")):
        try:
            plan = plan_notebook(path)
        except Exception:
            continue
        if plan.widget_cells:
            plans.append(plan)
    return plans


def course_notebooks(root: Path) -> list[str]:
    """Every notebook under ``root``/notebooks/ (not its subfolders), relative to ``root``."""
    return [p.relative_to(root).as_posix() for p in sorted((root / "notebooks").glob("*.ipynb"))]


def open_command(readme: str) -> list[str]:
    """The README's open command as argv: the line marked ``# open`` in its first ```bash block."""
    block = re.search(r"^```bash\n(.*?)^```", readme, re.M | re.S)
    assert block, "the README has no ```bash block with the install, open and test commands"
    for line in block.group(1).splitlines():
        command, _, comment = line.partition("#")
        if comment.strip().startswith("open"):
            argv = shlex.split(command)
            assert argv[:2] == ["jupyter", "lab"], f"the README's open command is not `jupyter lab …`: {line}"
            return argv
    raise AssertionError("no line marked `# open` in the README's first ```bash block")


def align_python_version(root: Path, relpaths: list[str]) -> list[str]:
    """Set language_info.version in the copies to this Python's release; one line per notebook changed.

    ``language_info.version`` is the kernel's Python release (``3.11.7``), a property of the machine, not of
    the notebook; JupyterLab copies it into a notebook when its kernel connects. Where the Python running
    the tests is another release, the copy's version is set to it, so the open check tests what the
    notebooks control. A reader on another Python release does see the notebook turn modified when its
    kernel connects; nothing stored in the file can prevent that.
    """
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


HARNESS_NOTEBOOK = "widget_harness.ipynb"


def write_harness_notebook(folder: Path) -> NotebookPlan:
    """A small notebook wired like the project's: a LivePlot defined in the notebook, shown with poslib.viz.interact.

    It proves the harness itself works (widgets render, a keyboard move redraws) even
    before any real notebook has a slider.
    """
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    live_plot = '''\
import ipywidgets as widgets
import matplotlib.pyplot as plt
import numpy as np
from poslib.viz import LivePlot, interact


class Wave(LivePlot):
    """sin(k·x): one line whose data the slider replaces."""

    defaults = {"k": 1}

    def build(self):
        fig, ax = plt.subplots(figsize=(4, 2.5))
        self.x = np.linspace(0, 2 * np.pi, 200)
        (self.line,) = ax.plot(self.x, np.sin(self.params["k"] * self.x))
        ax.set(ylim=(-1.1, 1.1), xlabel="x", ylabel="sin(kx)", title="harness")
        return fig

    def redraw(self):
        self.line.set_ydata(np.sin(self.params["k"] * self.x))


plot = Wave()
plt.close(plot.fig)'''
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Browser-test harness\nA slider drives a figure through `poslib.viz.interact`."),
            new_code_cell(live_plot),
            new_code_cell(
                "interact(plot, k=widgets.IntSlider(value=1, min=1, max=6, description='k'))",
                metadata={"tags": ["nbval-ignore-output"]},
            ),
            new_code_cell(""),
            new_code_cell("print('after the slider')"),
        ],
        metadata={"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}},
    )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / HARNESS_NOTEBOOK
    nbformat.write(nb, path)
    return plan_notebook(path)


# ----------------------------------------------------------------------------- browser


def find_chromium() -> str | None:
    """$POSLIB_CHROMIUM if set, else Debian's Chromium (what CI installs), else a chromium on PATH."""
    if "POSLIB_CHROMIUM" in os.environ:
        override = os.environ["POSLIB_CHROMIUM"]
        return override if os.access(override, os.X_OK) else None
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


# ----------------------------------------------------------------------------- server


def _quietly(fn, *args: Any) -> Any:
    """Call ``fn``; a request the server refuses or drops returns None (the test checks the page, not this)."""
    try:
        return fn(*args)
    except (OSError, ValueError):
        return None


class _PortTaken(Exception):
    pass


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabServer:
    """A `jupyter lab` process on 127.0.0.1 serving ``root``; stopped with :meth:`stop`.

    ``argv``: the arguments of a `jupyter lab …` command as a reader types it (the README's open command),
    run in ``root``; they then choose the server's root as they would for the reader, in place of
    ``--ServerApp.root_dir``.
    """

    root: Path
    base: Path
    argv: tuple[str, ...] | None = None
    port: int = 0
    token: str = ""
    proc: subprocess.Popen | None = None
    log_path: Path | None = None
    _log: Any = field(default=None, repr=False)
    _starting: dict = field(default_factory=dict, repr=False)  # relpath -> thread starting its kernel

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lab_url(self, relpath: str) -> str:
        # ?reset starts from an empty workspace, so the previous notebook is not reopened.
        return f"{self.url}/lab/tree/{relpath}?reset&token={self.token}"

    def api(self, method: str, path: str, timeout: float = 30) -> Any:
        req = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, n: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def start(self, tries: int = 3) -> None:
        """Start the server with every folder it writes inside ``base`` and wait until it answers.

        The free port is picked before the server binds it; should another process take it in
        between, the server exits at once and another port is tried.
        """
        for attempt in range(tries):
            try:
                return self._start()
            except _PortTaken:
                if attempt == tries - 1:
                    raise RuntimeError(f"jupyter lab found no free port in {tries} tries:\n{self.log_tail()}") from None

    def _start(self) -> None:
        settings, workspaces = self.base / "lab-user-settings", self.base / "lab-workspaces"
        config, data, runtime = self.base / "jupyter-config", self.base / "jupyter-data", self.base / "jupyter-runtime"
        for d in (settings, workspaces, config / "labconfig", data, runtime):
            d.mkdir(parents=True, exist_ok=True)
        # Front end: no news, no update checks (the announcements plugin is what asks for and fetches them).
        (config / "labconfig" / "page_config.json").write_text(
            json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
        )
        notif = settings / "@jupyterlab" / "apputils-extension"
        notif.mkdir(parents=True, exist_ok=True)
        (notif / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )

        self.port, self.token = _free_port(), secrets.token_hex(24)
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            *([f"--ServerApp.root_dir={self.root}"] if self.argv is None else []),
            "--ServerApp.terminals_enabled=False",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={workspaces}",
            # Server side: no news feed and no version check, so nothing is fetched from the internet.
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        cmd += list(self.argv or ())
        env = {
            **os.environ,
            "JUPYTER_TOKEN": self.token,  # not on the command line, where `ps` shows it
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTER_DATA_DIR": str(data),
            "JUPYTER_RUNTIME_DIR": str(runtime),
            "IPYTHONDIR": str(self.base / "ipython"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        env.pop("JUPYTER_PATH", None)
        self.log_path = self.base / "jupyterlab.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            cmd, cwd=self.root, env=env, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if self.proc.poll() is not None:
                self._log.close()
                if "already in use" in self.log_tail():
                    raise _PortTaken
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_tail()}")
            with contextlib.suppress(OSError, ValueError):
                if "started" in self.api("GET", "/api/status", timeout=5):
                    self.api("GET", "/api/kernelspecs", timeout=60)  # the first listing is the slow one
                    return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"jupyter lab did not answer /api/status within {SERVER_START_S} s:\n{self.log_tail()}"
                )
            time.sleep(0.25)

    def api_json(self, method: str, path: str, body: dict, timeout: float = 60) -> Any:
        req = urllib.request.Request(
            f"{self.url}{path}",
            method=method,
            data=json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"null")

    def kernel_display_name(self, kernel: str) -> str:
        """The name JupyterLab shows (toolbar, status bar) for the server's kernelspec ``kernel``."""
        return self.api("GET", "/api/kernelspecs")["kernelspecs"][kernel]["spec"]["display_name"]

    def start_kernel(self, relpath: str, kernel: str = "python3", wait: bool = True) -> None:
        """Start the session (a fresh kernel, nothing executed) that JupyterLab attaches to when it opens ``relpath``.

        With a session already there JupyterLab connects to it instead of choosing a kernel
        itself, which on a loaded machine sometimes ends in a "Select Kernel" dialog. With
        ``wait=False`` it starts in the background, while the previous notebook is on screen.
        """
        body = {"path": relpath, "name": Path(relpath).name, "type": "notebook", "kernel": {"name": kernel}}
        pending = self._starting.pop(relpath, None)
        if pending is not None:
            pending.join(timeout=SERVER_START_S)
        if wait:  # the server answers with the existing session if there is one
            self.api_json("POST", "/api/sessions", body, timeout=SERVER_START_S)
            return
        thread = threading.Thread(target=_quietly, args=(self.api_json, "POST", "/api/sessions", body), daemon=True)
        thread.start()
        self._starting[relpath] = thread

    def end_sessions(self, relpath: str | None = None, wait: bool = True) -> None:
        """End the sessions (and so the kernels) of ``relpath``, or all of them, so kernels do not pile up."""

        def run() -> None:
            for s in _quietly(self.api, "GET", "/api/sessions") or []:
                if relpath is None or s.get("path") == relpath:
                    _quietly(self.api, "DELETE", f"/api/sessions/{s['id']}")

        if wait:
            run()
        else:
            threading.Thread(target=run, daemon=True).start()

    def _children(self) -> list:
        """The server's child processes (its kernels) as psutil handles, which notice a reused pid."""
        try:
            import psutil  # ipykernel's dependency, so present wherever the kernel is
        except ImportError:
            return []
        with contextlib.suppress(Exception):
            return psutil.Process(self.proc.pid).children(recursive=True)
        return []

    def stop(self) -> None:
        """Shut the server down by its own process id, then any kernel it left behind (by theirs)."""
        if self.proc is None:
            return
        children = self._children()  # the kernels, started by this server
        if self.proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                self.api("POST", "/api/shutdown", timeout=10)  # shuts its kernels down too
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        for child in children:  # normally gone already; never signal a pid that now names another process
            with contextlib.suppress(Exception):
                if child.is_running():
                    child.kill()
        if self._log is not None:
            self._log.close()
        self.proc = None


# ----------------------------------------------------------------------------- notebook in the page


class NotebookFailure(AssertionError):
    """A notebook misbehaved in the browser; the message says where."""


# Page-side checks, run with page.evaluate. Cells are the notebook's code cells in order.
_JS_PROMPTS = "() => [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-CodeCell')].map(c => (c.querySelector('.jp-InputPrompt')||{}).textContent||'')"

_JS_ERRORS = r"""() => {
  const cells = [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-CodeCell')];
  const found = [];
  cells.forEach((cell, i) => {
    for (const out of cell.querySelectorAll('.jp-OutputArea-output')) {
      const mime = out.getAttribute('data-mime-type') || '';
      const text = (out.textContent || '').trim();  // textContent: no layout, cheap to poll
      // JupyterLab renders an error output as stderr text; a traceback or a final
      // "SomeError: ..." line tells it from a warning.
      const last = text.split('\n').filter(l => l.trim()).pop() || '';
      if (mime === 'application/vnd.jupyter.error' || (mime === 'application/vnd.jupyter.stderr' &&
          (/Traceback \(most recent call last\)/.test(text) || /^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b/.test(last))))
        found.push([i, 'error output', text.slice(-1500)]);
      else if (/Error displaying widget|Error rendering|Could not render/i.test(text))
        found.push([i, 'widget failed to display', text.slice(0, 600)]);
      else if (mime === 'text/plain' && /^\s*\w+\((children|value|description)=/.test(text))
        found.push([i, 'widget shown as text (no widget manager?)', text.slice(0, 300)]);
    }
  });
  return found;
}"""


def _prompts(page) -> list[str]:
    return [p.strip() for p in page.evaluate(_JS_PROMPTS)]


def _fail_on_errors(page, plan: NotebookPlan, when: str) -> None:
    errors = page.evaluate(_JS_ERRORS)
    if errors:
        lines = [f"  code cell {i} ({kind}): {text}" for i, kind, text in errors]
        raise NotebookFailure(f"{plan.name}: {when}, the page shows:\n" + "\n".join(lines))


def _fail_on_dialog(page, plan: NotebookPlan, when: str) -> None:
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        raise NotebookFailure(f"{plan.name}: {when}, a dialog is open: {dialog.first.inner_text()[:400]}")


def _answer_kernel_dialog(page) -> None:
    """Answer "Select Kernel" the way a student does: accept the notebook's own kernel.

    On a loaded machine JupyterLab sometimes asks although the notebook names its kernel.
    """
    dialog = page.locator(".jp-Dialog")
    if dialog.count() and "Select Kernel" in (dialog.first.text_content() or ""):
        dialog.first.locator(".jp-Dialog-button.jp-mod-accept").click(timeout=10_000)
        dialog.first.wait_for(state="detached", timeout=10_000)


def _menu(page, menu: str, command: str, timeout_ms: int = LAB_LOAD_MS) -> None:
    """Click a main-menu entry, as a student would (Run ▸ Run All Cells).

    An entry is disabled until the notebook is the current widget, and clicking it then does
    nothing, so the menu is reopened until the entry is enabled.
    """
    from playwright.sync_api import Error as PlaywrightError

    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        _answer_kernel_dialog(page)
        try:
            page.locator(".lm-MenuBar-item", has_text=menu).first.click(timeout=10_000)
            item = page.locator(f".lm-Menu-item[data-command='{command}']").first
            item.wait_for(timeout=10_000)
            if "lm-mod-disabled" not in (item.get_attribute("class") or ""):
                item.click(timeout=10_000)
                return
            page.keyboard.press("Escape")
        except PlaywrightError:  # a dialog in the way, or the menu closed under the pointer
            page.keyboard.press("Escape")
        if time.monotonic() > deadline:
            raise NotebookFailure(f"menu {menu} ▸ {command} could not be used for {timeout_ms // 1000} s")
        page.wait_for_timeout(300)


_CELLS = ".jp-NotebookPanel .jp-Notebook .jp-CodeCell"


def open_and_run_all(
    page,
    server: LabServer,
    relpath: str,
    plan: NotebookPlan,
    times: dict | None = None,
    on_open: Callable[[], None] | None = None,
) -> None:
    """Open the notebook, clear its stored outputs, Run All, wait until the kernel is idle and check every cell.

    ``times`` (if given) receives the seconds spent opening, waiting for the kernel and running;
    ``on_open`` (if given) is called once the kernel is connected and idle, before anything is changed
    (the open check, :func:`check_opens_unmodified`).
    """
    times = {} if times is None else times
    t0 = time.perf_counter()
    page.goto(server.lab_url(relpath), wait_until="domcontentloaded", timeout=LAB_LOAD_MS)
    page.locator(_CELLS).first.wait_for(timeout=LAB_LOAD_MS)
    times["open"] = (t1 := time.perf_counter()) - t0
    # The kernel must be attached and idle before Run All: a cell run while the notebook still
    # shows "No Kernel" makes JupyterLab ask "Select Kernel", and changing kernel drops the queue.
    # (The toolbar's execution indicator already reads idle during "No Kernel | Initializing".)
    try:
        page.wait_for_function(
            """() => {
            const name = document.querySelector('.jp-NotebookPanel-toolbar .jp-KernelName');
            const status = [...document.querySelectorAll('.jp-StatusBar-TextItem')].map(e => e.textContent.trim());
            return name && !/^(No Kernel|Kernel)?$/.test(name.textContent.trim())
                   && status.some(t => / [|] Idle$/.test(t) && !t.startsWith('No Kernel'));
        }""",
            timeout=LAB_LOAD_MS,
            polling=200,
        )
    except Exception as err:
        _answer_kernel_dialog(page)
        _fail_on_dialog(page, plan, "while waiting for the kernel")
        raise NotebookFailure(f"{plan.name}: the kernel was not idle within {LAB_LOAD_MS // 1000} s") from err
    times["kernel"] = time.perf_counter() - t1
    _answer_kernel_dialog(page)
    _fail_on_dialog(page, plan, "after opening")
    if on_open is not None:
        on_open()
    t2 = time.perf_counter()
    # Cleared first, so every output checked below comes from this run (stored prompts would look
    # finished). Both menu actions work on the whole notebook while its later cells are still
    # being attached to the page, so rendering and the kernel's work overlap.
    _menu(page, "Edit", "editmenu:clear-all")
    # A collapsed code cell (a long run of checks) has no prompt on the page, so it would never read
    # as run: View ▸ Expand All Code first, as a student who wants to see what ran.
    _menu(page, "View", "notebook:show-all-cell-code")
    page.wait_for_function(
        f"""() => !document.querySelector('{_CELLS} .jp-OutputArea-output') &&
        ![...document.querySelectorAll('{_CELLS} .jp-InputPrompt')].some(e => /\\d/.test(e.textContent))""",
        timeout=LAB_LOAD_MS,
    )
    started = f"""() => [...document.querySelectorAll('{_CELLS} .jp-InputPrompt')]
                        .some(e => /\\[(\\*|\\d+)\\]/.test(e.textContent))"""
    for attempt in range(3):
        _menu(page, "Run", "runmenu:run-all")
        try:  # queued cells show [*] at once; a click that was swallowed shows nothing
            page.wait_for_function(started, timeout=15_000, polling=100)
            break
        except Exception:
            if attempt == 2:
                raise NotebookFailure(f"{plan.name}: Run ▸ Run All Cells started nothing (tried 3 times)") from None

    # Done when every cell is on the page, nothing is queued or running, and either every runnable
    # cell has a number or an error stopped the run (JupyterLab then drops the rest of the queue).
    done = f"""([n, runnable]) => {{
      const cells = [...document.querySelectorAll('{_CELLS}')];
      if (cells.length !== n) return false;
      const p = cells.map(c => ((c.querySelector('.jp-InputPrompt') || {{}}).textContent || '').trim());
      if (p.some(t => t.includes('*'))) return false;
      if (document.querySelector('.jp-Dialog') || ({_JS_ERRORS})().length) return true;
      return runnable.every(i => /^\\[\\d+\\]:$/.test(p[i]));
    }}"""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline, reruns = time.monotonic() + RUN_ALL_MS / 1000, 0
    while True:
        try:
            page.wait_for_function(done, arg=[plan.n_code, list(plan.runnable)], timeout=5_000, polling=500)
        except PlaywrightTimeout:
            prompts = _prompts(page)
            if reruns < 2 and len(prompts) == plan.n_code and not any("*" in p for p in prompts):
                # Nothing queued or running, no error, yet cells without a number: the queue was
                # dropped (a kernel change cancels it), so run all again, as a student would.
                reruns += 1
                _menu(page, "Run", "runmenu:run-all")
                continue
            if time.monotonic() < deadline:
                continue
            n_dom = page.locator(_CELLS).count()
            if n_dom != plan.n_code:
                raise NotebookFailure(
                    f"{plan.name}: the page shows {n_dom} code cells, the file has {plan.n_code}"
                ) from None
            raise NotebookFailure(
                f"{plan.name}: Run All did not finish within {RUN_ALL_MS // 1000} s; prompts: {_prompts(page)}"
            ) from None
        if page.locator(".jp-Dialog").count() and "Select Kernel" in (
            page.locator(".jp-Dialog").first.text_content() or ""
        ):
            _answer_kernel_dialog(page)  # the queued cells run once the kernel is chosen
            continue
        break
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(timeout=RUN_ALL_MS)
    times["run"] = time.perf_counter() - t2
    _fail_on_dialog(page, plan, "after Run All")
    _fail_on_errors(page, plan, "after Run All")
    prompts = _prompts(page)
    missed = [i for i in plan.runnable if not re.fullmatch(r"\[\d+\]:", prompts[i])]
    if missed:
        raise NotebookFailure(f"{plan.name}: code cells {missed} did not run (prompts {[prompts[i] for i in missed]})")


# ----------------------------------------------------------------------------- opening leaves it unmodified

# After the kernel is idle: JupyterLab writes the kernel's metadata within ~10 ms of its info reply.
OPEN_SETTLE_MS = 500

# The tab of the notebook called `name`: shown at all, marked modified; and whether the notebook's
# kernel reads `kernel | Idle` in the status bar and its name in the toolbar.
_JS_OPEN_STATE = """([name, kernel]) => {
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


def check_opens_unmodified(page, server: LabServer, plan: NotebookPlan, shots: Path) -> None:
    """The notebook just opened in ``page`` is not marked modified although the reader did nothing (issue 24, item 6).

    As soon as a notebook's kernel connects, JupyterLab (4.x, ``NotebookPanel._updateSpec`` and
    ``_updateLanguage``) copies the kernel's ``kernelspec`` (name, display name, language) and its
    ``language_info`` into the notebook's metadata; where either differs from what the file stores, the
    notebook turns modified (``jp-mod-dirty`` on its tab) and autosave then writes the file. Three readings
    of its tab: once its kernel is connected and idle (it connects only after the file's content is in the
    model), once every widget cell shows its saved picture, and half a second later. None may read modified.
    Call it before anything in the notebook is changed.
    """
    kernel = server.kernel_display_name(plan.kernel)
    deadline = time.monotonic() + LAB_LOAD_MS / 1000
    while not (st := page.evaluate(_JS_OPEN_STATE, [plan.name, kernel]))["kernel"]:
        if time.monotonic() > deadline:
            raise NotebookFailure(
                f"{plan.name}: kernel {kernel!r} not connected and idle within {LAB_LOAD_MS // 1000} s: {st}"
            )
        page.wait_for_timeout(100)
    seen = [st["dirty"]]
    cells = page.locator(_CELLS)
    for i in plan.widget_cells:  # a saved widget view falls back to its picture (poslib.viz.interact saves one)
        cells.nth(i).locator(".jp-OutputArea img").first.wait_for(state="attached", timeout=LAB_LOAD_MS)
    seen.append(page.evaluate(_JS_OPEN_STATE, [plan.name, kernel])["dirty"])
    page.wait_for_timeout(OPEN_SETTLE_MS)
    seen.append(page.evaluate(_JS_OPEN_STATE, [plan.name, kernel])["dirty"])
    if any(seen):
        shot = shots / f"{plan.path.stem}-modified-on-open.png"
        page.screenshot(path=str(shot))
        readings = ", ".join(
            f"{when}: {'modified' if dirty else 'clean'}"
            for when, dirty in zip(("kernel idle", "widget pictures shown", f"+{OPEN_SETTLE_MS} ms"), seen, strict=True)
        )
        raise NotebookFailure(
            f"{plan.name} is marked modified with no action taken ({readings}); screenshot: {shot}. JupyterLab"
            " copies the kernel's kernelspec and language_info into a notebook when its kernel connects: store"
            " the kernel's own (python scripts/run_notebooks.py, or with --metadata-only where the outputs need"
            " no refresh)."
        )


def logged_errors(page) -> list[str]:
    """Error-level entries of JupyterLab's Log Console: where a widget callback's exception lands.

    The status bar counts log messages; only when it shows some is the console opened and read.
    """
    item = page.locator(".jp-LogConsoleStatusItem")
    if not item.count() or not item.first.is_visible() or not re.search(r"[1-9]", item.first.inner_text()):
        return []
    item.first.click()
    page.locator(".jp-LogConsolePanel").first.wait_for(timeout=10_000)
    page.wait_for_timeout(300)
    return page.evaluate("""() => [...document.querySelectorAll('.jp-LogConsolePanel .jp-OutputArea-child')]
        .filter(c => ['error', 'critical'].includes((c.querySelector('[data-log-level]') || {dataset: {}}).dataset.logLevel))
        .map(c => ((c.querySelector('.jp-OutputArea-output') || c).innerText || '').slice(-1500))""")


@dataclass
class Move:
    """One keyboard move of a slider and what it did to the figure."""

    cell: int
    control: str
    before: str
    after: str
    shot: Path


def check_widgets(page, plan: NotebookPlan) -> None:
    """Every interactive cell shows real widgets; every slider cell shows a real slider.

    (Any widget shown as text or as "Error displaying widget", progress bars included, has
    already failed the run's error check.)
    """
    cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-CodeCell")
    for i in plan.interactive_cells:
        out = cells.nth(i).locator(".jp-OutputArea")
        if out.locator(".jupyter-widgets").count() == 0:
            text = out.inner_text()[:300] if out.count() else ""
            raise NotebookFailure(f"{plan.name}: code cell {i} shows no widget; its output reads: {text!r}")
        if i in plan.slider_cells and out.locator(".widget-slider").count() == 0:
            raise NotebookFailure(f"{plan.name}: code cell {i} builds a slider, but no slider was rendered")


def _figure(cell):
    """The picture a widget cell drives: the ipywidgets Image that poslib.viz.interact updates, else any image."""
    for sel in ("img.widget-image", ".jp-OutputArea img", ".jp-OutputArea canvas"):
        loc = cell.locator(sel)
        if loc.count():
            return loc.first
    return None


# What the figure shows, as a fingerprint: for a loaded <img>, its source URL and a hash of the
# bytes behind it (the PNG bytes differ exactly when the picture does); null while loading.
_JS_FINGERPRINT = """async e => {
  if (!e.complete || !e.naturalWidth) return null;
  const src = e.currentSrc || e.src;
  const bytes = new Uint8Array(await (await fetch(src)).arrayBuffer());
  let h = 2166136261;
  for (let i = 0; i < bytes.length; i++) { h ^= bytes[i]; h = Math.imul(h, 16777619) >>> 0; }
  return src + '|' + bytes.length + '|' + h;
}"""


def _fingerprint(fig) -> str | bytes | None:
    """The image's content hash; for anything that is not an <img> (a canvas), its pixels."""
    if fig.evaluate("e => e.tagName") == "IMG":
        return fig.evaluate(_JS_FINGERPRINT)
    return fig.screenshot(animations="disabled", timeout=FIGURE_CHANGE_MS)


def _content(fp: str | bytes | None) -> object:
    """The picture part of a fingerprint (not the blob URL it was served from)."""
    return fp.split("|", 1)[1] if isinstance(fp, str) else fp


_JS_SLIDER_VALUE = """e => {
  const box = e.closest('.widget-hslider, .widget-vslider');
  const readout = box && box.querySelector('.widget-readout');
  return (e.getAttribute('aria-valuenow') || '') + '|' + (readout ? readout.textContent.trim() : '');
}"""


def move_first_slider(page, plan: NotebookPlan, cell_index: int, shots: Path) -> Move:
    """Move the cell's first slider with the keyboard and wait for its figure to change.

    Right arrow, or Left at the maximum.
    """
    cell = page.locator(".jp-NotebookPanel .jp-Notebook .jp-CodeCell").nth(cell_index)
    cell.scroll_into_view_if_needed()
    fig = _figure(cell)
    if fig is None:
        raise NotebookFailure(f"{plan.name}: code cell {cell_index} has a slider but no figure (image) under it")
    fig.scroll_into_view_if_needed()
    # The first slider, moved with the arrow keys (noUiSlider's handle takes them). A cell without
    # a slider gets its first dropdown or checkbox changed the way a mouse does: in command mode
    # JupyterLab's own shortcuts take the arrow keys and letters before a <select> sees them.
    handle, select, box = (
        cell.locator(sel)
        for sel in (".widget-slider .noUi-handle", ".widget-dropdown select", ".widget-checkbox input")
    )
    if handle.count():
        control = handle.first
        # aria-valuenow is rounded to one decimal (a move of 0.01 from 0.1 reads "0.1" again): the readout
        # beside the track shows the value in the slider's own format, so both are read
        read = lambda: control.evaluate(_JS_SLIDER_VALUE)  # noqa: E731

        def moves():
            control.focus()
            yield lambda: page.keyboard.press("ArrowRight")
            yield lambda: page.keyboard.press("ArrowLeft")  # when Right is stuck at the maximum
    elif select.count():
        control = select.first
        read = lambda: control.input_value()  # noqa: E731

        def moves():
            options = control.locator("option").evaluate_all("os => os.map(o => o.value)")
            i = options.index(read()) if read() in options else 0
            yield lambda: control.select_option(options[(i + 1) % len(options)])
    elif box.count():
        control = box.first
        read = lambda: str(control.is_checked())  # noqa: E731

        def moves():
            yield lambda: control.click()
    else:
        raise NotebookFailure(
            f"{plan.name}: code cell {cell_index} shows widgets but no slider, dropdown or checkbox to move"
        )
    fig.evaluate("e => e.tagName !== 'IMG' || e.complete || new Promise(r => { e.onload = e.onerror = r; })")
    fp0, value0 = _fingerprint(fig), read()
    if fp0 is None:
        raise NotebookFailure(f"{plan.name}: code cell {cell_index}: the figure's image never loaded")
    value1 = value0
    for move in moves():
        move()
        deadline = time.monotonic() + 5
        while (value1 := read()) == value0 and time.monotonic() < deadline:
            page.wait_for_timeout(100)
        if value1 != value0:
            break
    if value1 == value0:
        raise NotebookFailure(f"{plan.name}: code cell {cell_index}: the control did not move (value {value0})")
    deadline = time.monotonic() + FIGURE_CHANGE_MS / 1000
    fp1 = fp0
    log = page.locator(".jp-LogConsoleStatusItem")
    moved_at = time.monotonic()
    while time.monotonic() < deadline:
        fp1 = _fingerprint(fig)
        if fp1 is not None and _content(fp1) != _content(fp0):
            break
        if time.monotonic() - moved_at > 3 and log.count() and re.search(r"[1-9]", log.first.inner_text()):
            break  # nothing redrawn and the kernel logged something: the callback raised, no use waiting
        page.wait_for_timeout(150)
    _fail_on_errors(page, plan, f"after moving the slider in code cell {cell_index}")
    shot = shots / f"{plan.path.stem}-cell{cell_index}.png"
    page.screenshot(path=str(shot))
    if fp1 is None or _content(fp1) == _content(fp0):
        changed_src = isinstance(fp1, str) and fp1.split("|")[0] != fp0.split("|")[0]
        logged = "\n".join(logged_errors(page)) or "(nothing)"
        raise NotebookFailure(
            f"{plan.name}: code cell {cell_index}: moved the slider from {value0} to {value1}, but the figure "
            f"did not change within {FIGURE_CHANGE_MS // 1000} s (image source {'changed' if changed_src else 'unchanged'}); "
            f"screenshot: {shot}\nLog Console errors (a callback that raised lands there):\n{logged}"
        )
    return Move(cell_index, control.evaluate("e => e.outerHTML.slice(0, 80)"), value0, value1, shot)
