"""Plant real classes of mistakes in poslib, one at a time, and show which checks catch each.

Run: python scripts/plant_bugs.py [--bugs name,name] [--jobs 2] [--list] [--no-notebooks]

For every bug in ``tests/planted_bugs`` this starts fresh processes in which poslib is patched in
memory (files are never edited): ``pytest`` over the unit tests the bug names, and each notebook
the bug names executed top to bottom in a kernel. A unit test catches the bug when it fails; a
notebook check catches it when a cell raises (an ``assert`` or a named error), not when a printed
number merely changes. The table lists, per bug, the tests that failed and the notebook cells that
raised; the last line is ``caught K/N planted bugs`` (caught = by at least one unit test AND at
least one notebook check; a bug whose entry says why no notebook can show it, by its unit tests).
The exit status is 0 only when every bug is caught. ``--no-notebooks`` runs the
unit tests alone (a quick check of a new entry, or on a machine too busy for the notebooks): a bug then counts
as caught by its unit tests, and the last line says that the notebooks were not run.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import time
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parent.parent
SITE = ROOT / "tests" / "planted_bugs" / "site"
sys.path.insert(0, str(ROOT / "tests"))

from planted_bugs import ENV, Bug, catalogue  # noqa: E402


@dataclass
class Outcome:
    bug: Bug
    failed_tests: list[str]
    failed_cells: list[str]
    seconds: float
    planted: bool = True
    notebooks_run: bool = True

    @property
    def caught(self) -> bool:
        shown = bool(self.failed_cells) or not self.notebooks_run or bool(self.bug.unit_only)
        return self.planted and bool(self.failed_tests) and shown


def _env(name: str) -> dict[str, str]:
    env = dict(os.environ)
    env[ENV] = name
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SITE), str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("MPLBACKEND", "Agg")
    return env


def run_tests(bug: Bug) -> list[str]:
    """The unit tests that fail with ``bug`` planted (pytest node ids)."""
    if not bug.tests:
        return []
    # -p no:nbval keeps the notebooks out; the project's addopts name nbval, so override them.
    cmd = [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider", "-rf", *bug.tests]
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(bug.name), capture_output=True, text=True, timeout=900)
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", proc.stdout, flags=re.MULTILINE)
    if proc.returncode not in (0, 1) and not failed:
        failed = [f"pytest exit {proc.returncode}: {proc.stdout[-300:]}{proc.stderr[-300:]}"]
    return failed


_NOTEBOOK_RUNNER = r"""
import sys, nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                        resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}})
client.execute()
for index, cell in enumerate(nb.cells):
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            print(f"CELL {index}: {out['ename']}: {out['evalue'].splitlines()[0] if out['evalue'] else ''}"[:160])
"""


def run_notebook(bug: Bug, notebook: str) -> list[str]:
    """The cells of ``notebook`` that raise with ``bug`` planted (nothing is written back)."""
    proc = subprocess.run(
        [sys.executable, "-c", _NOTEBOOK_RUNNER, notebook],
        cwd=ROOT,
        env=_env(bug.name),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if proc.returncode:
        return [f"{notebook}: runner failed: {proc.stderr.strip().splitlines()[-1:]}"]
    stem = pathlib.Path(notebook).stem[:2]
    return [f"{stem} cell {line[5:]}" for line in proc.stdout.splitlines() if line.startswith("CELL ")]


def planting_error(bug: Bug) -> str | None:
    """None when ``bug`` plants cleanly in a fresh process, else what went wrong.

    sitecustomize's errors are only printed by Python, never raised, so a patch that misses its
    target would otherwise look like a bug that no check catches.
    """
    probe = f"import sys; m = sys.modules.get('planted_bugs'); sys.exit(0 if m and m.PLANTED == {bug.name!r} else 3)"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=_env(bug.name), capture_output=True, text=True)
    return None if proc.returncode == 0 else (proc.stderr.strip() or f"exit {proc.returncode}")


def run_bug(bug: Bug, notebooks: bool = True) -> Outcome:
    start = time.perf_counter()
    error = planting_error(bug)
    if error:
        return Outcome(bug, [], [f"PLANTING FAILED: {error[-200:]}"], time.perf_counter() - start, planted=False)
    failed_tests = run_tests(bug)
    failed_cells = [cell for nb in bug.notebooks for cell in run_notebook(bug, nb)] if notebooks else []
    return Outcome(bug, failed_tests, failed_cells, time.perf_counter() - start, notebooks_run=notebooks)


def _short(items: list[str], limit: int = 2) -> str:
    if not items:
        return "—"
    # Test node ids lose their file; notebook entries keep "NN cell" and drop the message (printed above).
    shown = [i.split("::")[-1] if "::" in i else i.split(":")[0] for i in items[:limit]]
    more = f" (+{len(items) - limit})" if len(items) > limit else ""
    return "; ".join(shown) + more


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bugs", help="comma-separated names (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="bugs run side by side (default 2)")
    parser.add_argument("--list", action="store_true", help="list the catalogue and exit")
    parser.add_argument("--no-notebooks", action="store_true", help="run the unit tests only (caught by them alone)")
    args = parser.parse_args(argv)
    bugs = catalogue()
    if args.list:
        for b in bugs.values():
            print(f"{b.name:28s} {b.what}  [{b.thread}]")
        return 0
    names = args.bugs.split(",") if args.bugs else list(bugs)
    unknown = sorted(set(names) - set(bugs))
    if unknown:
        parser.error(f"unknown bugs {unknown}; known: {sorted(bugs)}")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    outcomes: dict[str, Outcome] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_bug, bugs[n], not args.no_notebooks): n for n in names}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            outcome = future.result()
            outcomes[outcome.bug.name] = outcome
            mark = "caught" if outcome.caught else ("MISSED" if outcome.planted else "NOT PLANTED")
            print(f"[{done}/{len(names)}] {outcome.bug.name}: {mark} ({outcome.seconds:.0f} s)", flush=True)
            for cell in outcome.failed_cells[:3]:
                print(f"    {cell}", flush=True)
    print()
    print("| bug | what | unit tests that failed | notebook checks that failed |")
    print("|---|---|---|---|")
    for name in names:
        o = outcomes[name]
        what = o.bug.what + (f" ({o.bug.thread})" if o.bug.thread else "")
        print(f"| `{name}` | {what} | {_short(o.failed_tests)} | {_short(o.failed_cells)} |")
    caught = sum(o.caught for o in outcomes.values())
    print()
    alone = " by their unit tests alone (notebooks not run)" if args.no_notebooks else ""
    print(f"caught {caught}/{len(names)} planted bugs{alone}")
    return 0 if caught == len(names) else 1


if __name__ == "__main__":
    sys.exit(main())
