"""Re-execute notebooks in place, top to bottom in a fresh kernel: the one way stored outputs are refreshed.

Run: python scripts/run_notebooks.py [notebooks/05_rope.ipynb ...]   (default: every notebook)

Each notebook runs with its own folder as the working directory, like Jupyter
does, and is saved with its new outputs. nbval (run by `pytest`) then checks
that a fresh run reproduces exactly those outputs.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import nbformat
from nbclient import NotebookClient

# one thread per kernel, as under pytest (see conftest.py): the stored outputs come from the conditions CI runs in
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run(path: pathlib.Path, timeout: int) -> float:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    replace_widget_text(nb)
    nbformat.write(nb, path)
    return time.perf_counter() - start


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_TEXT = "Interactive figure: run the notebook to move its controls."


def replace_widget_text(nb: nbformat.NotebookNode) -> int:
    """Give every widget output a readable plain-text fallback; returns how many were changed.

    What a reader sees before the kernel runs is a saved widget's fallback. ``poslib.viz.interact``
    already saves a PNG of its figure and this text beside the widget; any other widget would fall
    back to its repr (``VBox(children=(HBox(...``), which this replaces. nbval does not compare
    widget cells (they carry the ``nbval-ignore-output`` tag).
    """
    changed = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and data.get("text/plain") != WIDGET_TEXT:
                data["text/plain"] = WIDGET_TEXT
                changed += 1
    return changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path)
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    failed = []
    for path in paths:
        print(f"{path.name:40s}", end=" ", flush=True)
        try:
            print(f"{run(path, args.timeout):6.1f} s")
        except Exception as err:  # keep going so one broken notebook does not hide the others
            print(f"FAILED: {type(err).__name__}: {str(err)[:400]}")
            failed.append(path.name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
