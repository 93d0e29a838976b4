"""One notation table (docs/notation.md), and notebook 01's notation cell generated from it (scripts/notation.py)."""

from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import notation  # noqa: E402

TABLE = (ROOT / "docs" / "notation.md").read_text(encoding="utf-8")


def _cell() -> str:
    nb = json.loads(notation.NOTEBOOK.read_text(encoding="utf-8"))
    cells = ["".join(c["source"]) for c in nb["cells"] if notation.ANCHOR in "".join(c["source"])]
    assert len(cells) == 1, f"expected one cell with {notation.ANCHOR}, found {len(cells)}"
    return cells[0]


def test_notebook_01_notation_cell_is_generated_from_docs_notation():
    assert _cell() == notation.cell_source(TABLE), "run python scripts/notation.py after editing docs/notation.md"


def test_an_edit_to_the_table_alone_is_caught():
    # the agreement test can fail: change one meaning in the page and the generated cell no longer matches
    edited = TABLE.replace("position of the query, position of the key", "position of the key, position of the query")
    assert edited != TABLE
    assert _cell() != notation.cell_source(edited)


def test_cell_links_work_from_the_notebooks_folder():
    cell = notation.cell_source(TABLE)
    assert "../notebooks/" not in cell
    assert "](../docs/glossary.md)" in cell and "](04_relative.ipynb)" in cell
    assert cell.startswith(notation.ANCHOR) and "\n### " in cell and "\n## Positions" not in cell


def _rows() -> list[list[str]]:
    rows = []
    for line in TABLE.splitlines():
        if line.startswith("| ") and not line.startswith("| symbol") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip()[1:-1].split("|")])
    return rows


def test_one_symbol_one_meaning():
    rows = _rows()
    assert len(rows) > 40
    symbols = [r[0] for r in rows]
    repeated = {s for s in symbols if symbols.count(s) > 1}
    assert not repeated, f"symbols listed twice: {repeated}"
    assert all(len(r) == 4 for r in rows), [r for r in rows if len(r) != 4]


def test_table_states_the_course_decisions():
    # the decisions every notebook follows (issue 22, item 15): no "follow the paper", no m_h, μ_h the ALiBi slope
    assert "follow the paper" not in TABLE and "m_h" not in TABLE
    assert r"$\mu_h$" in TABLE and r"$r = n - m$" in TABLE and r"$\mathrm{j}$" in TABLE
    slope_rows = [r for r in _rows() if "slope" in r[1]]
    assert slope_rows and all(r"\mu" in r[0] for r in slope_rows), slope_rows
    assert not [r for r in _rows() if re.fullmatch(r"\$s\$", r[0]) and "slope" in r[1]]


# Notebooks 00–03 and their exercises write positions m, n, p (never i, j, k), and ALiBi's slope μ.
EARLY = ["00_tour", "01_why_position", "02_learned_absolute", "03_sinusoidal"]
FORBIDDEN = {
    "positions written i, j": re.compile(r"\bi\s*[-−]\s*j\b|\|i\s*[-−]\s*j\||\(i,\s*j\)"),
    "an offset written k": re.compile(r"\bk\s*=\s*m\s*[-−]\s*n|\$k\s*=\s*0"),
    "ALiBi's slope written s or m_h": re.compile(r"-s\\,|s\s*\\lvert|m_h"),
}


@pytest.mark.parametrize("name", EARLY)
def test_early_notebooks_follow_the_table(name):
    nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    texts = []
    for i, c in enumerate(nb["cells"]):
        if notation.ANCHOR in "".join(c["source"]):
            continue  # the table itself names what the papers write
        texts.append((i, "".join(c["source"])))
        for o in c.get("outputs", []):
            texts.append((i, "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))))
    found = [
        f"cell {i}: {what}: {m.group()!r}" for i, t in texts for what, rx in FORBIDDEN.items() for m in rx.finditer(t)
    ]
    assert not found, found
