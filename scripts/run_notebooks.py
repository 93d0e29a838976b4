"""Re-execute notebooks in place, top to bottom in a fresh kernel: the one way stored outputs are refreshed.

Run: python scripts/run_notebooks.py [notebooks/05_rope.ipynb ...]   (default: every notebook)
     python scripts/run_notebooks.py --metadata-only notebooks/00_tour.ipynb ...   (no execution)

Each notebook runs with its own folder as the working directory, like Jupyter
does, and is saved with its new outputs. nbval (run by `pytest`) then checks
that a fresh run reproduces exactly those outputs.

The stored kernel metadata is the kernel's own (see ``store_kernel_metadata``), so that
opening a notebook in JupyterLab does not mark it modified; ``--metadata-only`` applies just
that to notebooks whose outputs need no refresh.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

# one thread per kernel, as under pytest (see conftest.py): the stored outputs come from the conditions CI runs in
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

ROOT = pathlib.Path(__file__).resolve().parent.parent
KERNEL = "python3"


def run(path: pathlib.Path, timeout: int) -> float:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    # record_timing=False: no per-cell execution timestamps, so a re-run changes only what the notebook computes
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=KERNEL,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()  # stores the kernel's own language_info (from its kernel_info reply)
    replace_widget_text(nb)
    store_kernel_metadata(nb)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def store_kernel_metadata(nb: nbformat.NotebookNode, kernel_name: str = KERNEL) -> bool:
    """Store the kernelspec exactly as JupyterLab writes it; drop per-cell timestamps. Returns whether anything changed.

    When a notebook's kernel connects, JupyterLab (4.x, ``NotebookPanel._updateSpec``) sets
    ``metadata.kernelspec`` to ``{name, display_name, language}`` from the running kernel's spec,
    and ``metadata.language_info`` to the kernel's info reply; a value that differs from the stored
    one marks the notebook modified, and autosave writes it, before the reader has done anything.
    ipykernel's spec says "Python 3 (ipykernel)"; the notebooks used to store "Python 3".
    ``language_info`` is left to nbclient, which stores the executing kernel's reply (its
    ``version`` is that machine's Python release). The ``execution`` timestamps nbclient used to
    record in each code cell's metadata are removed: they differed on every run.
    """
    spec = KernelSpecManager().get_kernel_spec(kernel_name)
    wanted = {"display_name": spec.display_name, "language": spec.language, "name": kernel_name}
    changed = dict(nb.metadata.get("kernelspec", {})) != wanted
    nb.metadata["kernelspec"] = wanted
    for cell in nb.cells:
        if "execution" in cell.get("metadata", {}):
            del cell.metadata["execution"]
            changed = True
    return changed


def rewrite_metadata(path: pathlib.Path) -> bool:
    """Apply ``store_kernel_metadata`` to a stored notebook without executing it; returns whether the file changed."""
    nb = nbformat.read(path, as_version=4)
    if not store_kernel_metadata(nb):
        return False
    nbformat.write(nb, path)
    return True


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_TEXT = "Interactive figure: run the notebook to move its controls."


def replace_widget_text(nb: nbformat.NotebookNode) -> int:
    """Give every widget output a readable plain-text fallback; returns how many were changed.

    What a reader sees before the kernel runs is a saved widget's fallback. ``poslib.viz.interact``
    already saves a PNG of its figure and this text beside the widget; any other widget would fall
    back to its repr (``VBox(children=(HBox(...``), which this replaces. nbval does not compare
    widget cells (they carry the ``nbval-ignore-output`` tag). The text is in the notebook's language
    (``metadata.language``, which the Chinese build sets), from poslib's widgets catalogue.
    """
    from poslib.language import translate

    # in the notebook's own language: a Chinese notebook (notebooks/zh/, metadata language "zh") says it in Chinese
    text = translate("widgets", WIDGET_TEXT, nb.metadata.get("language", "en"))
    changed = 0
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and data.get("text/plain") != text:
                data["text/plain"] = text
                changed += 1
    return changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path)
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    parser.add_argument(
        "--metadata-only",
        action="store_true",
        help="do not execute: only store the kernel's kernelspec and drop cell timestamps (outputs untouched)",
    )
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.metadata_only:
        for path in paths:
            print(f"{path.name:40s} {'metadata rewritten' if rewrite_metadata(path) else 'unchanged'}")
        return
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
