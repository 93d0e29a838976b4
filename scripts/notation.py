"""Write notebook 01's notation cell from docs/notation.md, the one notation table of the course.

Run: python scripts/notation.py           (rewrite the cell in notebooks/01_why_position.ipynb)
     python scripts/notation.py --check   (exit 1 if the cell differs from the table; tests/test_notation.py)

The cell is the one that holds ``<a id="notation">``; every other cell is left exactly as it is. Its text
is the table page below its title, with the page's section headings one level down and its links
rewritten to work from the notebooks folder, so the notebook and the page can never say two things.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs" / "notation.md"
NOTEBOOK = ROOT / "notebooks" / "01_why_position.ipynb"
ANCHOR = '<a id="notation"></a>'
HEADING = "## Notation used in every notebook"


def cell_source(table_text: str) -> str:
    """The notation cell's markdown for the page text ``table_text`` (docs/notation.md)."""
    lines = table_text.strip("\n").splitlines()
    if not lines or not lines[0].startswith("# "):
        raise ValueError("docs/notation.md must start with a '# ' title line")
    body = "\n".join(lines[1:]).strip("\n")
    body = re.sub(r"^## ", "### ", body, flags=re.MULTILINE)  # the page's sections sit under the cell's heading
    # links written from docs/ point one folder up; from notebooks/ the notebooks are neighbours
    body = body.replace("](../notebooks/", "](")
    body = re.sub(r"\]\((?!https?:|\.\./|#)([\w.-]+\.md)", r"](../docs/\1", body)
    return f"{ANCHOR}\n{HEADING}\n\n{body}"


def notation_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The one markdown cell of ``nb`` that holds the notation anchor."""
    cells = [c for c in nb.cells if c.cell_type == "markdown" and ANCHOR in c.source]
    if len(cells) != 1:
        raise ValueError(f"{NOTEBOOK.name} must have exactly one cell with {ANCHOR}, found {len(cells)}")
    return cells[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the cell is out of date")
    args = parser.parse_args()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    cell = notation_cell(nb)
    want = cell_source(TABLE.read_text(encoding="utf-8"))
    if cell.source == want:
        print(f"{NOTEBOOK.name}: notation cell matches docs/notation.md")
        return
    if args.check:
        print(f"{NOTEBOOK.name}: notation cell differs from docs/notation.md; run python scripts/notation.py")
        sys.exit(1)
    cell.source = want
    nbformat.write(nb, NOTEBOOK)
    print(f"{NOTEBOOK.name}: notation cell rewritten from docs/notation.md")


if __name__ == "__main__":
    main()
