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


# subscripts that only index a symbol (a position, a pair, a head, a key/query pair): stripped, so that
# "θ_i" and "θ" are one symbol; a subscript that names something (ζ, fast, keep, train, a digit) stays
_INDEX_SUB = re.compile(r"_(?:\{(?:[mnipt,]|\\Delta)+\}|[mnipt]|\\Delta)(?![A-Za-z])")
_HEAD_SUB = re.compile(r"(?<!n)_h(?![A-Za-z])")  # μ_h: head h's slope; but n_h (number of heads) is a name
# letters the table deliberately uses twice, each use distinguished by its subscript: p a position and p_m the
# vector added at position m (and CoPE's counted position p_{m,n}); rows that call themselves "an exception"
# (FIRE's u, KERPLE's r_1, r_2) are exempt as well
ALLOWED_TWICE = {"p"}
_MATH = re.compile(r"\$([^$]+)\$")


def base_symbols(cell: str) -> list[str]:
    """The single symbols of a table's symbol cell: each $…$ on its own, index subscripts and arguments dropped."""
    out = []
    for math in _MATH.findall(cell):
        sym = re.sub(r"\(.*\)$", "", math.strip())  # PE(p) -> PE, s'(N) -> s'
        sym = re.sub(r"\\mathrm\{([^}]*)\}", r"\1", sym)
        sym = re.sub(r"\^\{?[\\\w{}]*\}?$", "", sym)  # a superscript that only marks a power or transpose
        sym = _HEAD_SUB.sub("", _INDEX_SUB.sub("", sym)).replace(" ", "")
        out.append(sym)
    return out


def test_base_symbols_split_and_strip_indices():
    assert base_symbols("$x_m$, $X$") == ["x", "X"]
    assert base_symbols("$\\theta_i$") == ["\\theta"] and base_symbols("$\\mu_h$") == ["\\mu"]
    assert base_symbols("$g_{m,n}$, $p_{m,n}$") == ["g", "p"]
    assert base_symbols("$B_\\zeta$") == ["B_\\zeta"] and base_symbols("$r_1$, $r_2$") == ["r_1", "r_2"]
    assert base_symbols("$\\mathrm{PE}(p)$") == ["PE"] and base_symbols("$x'_m$") == ["x'"]
    assert base_symbols("$f_{\\mathrm{keep}}$") == ["f_{keep}"] and base_symbols("$h$, $n_h$") == ["h", "n_h"]


def test_one_symbol_one_meaning():
    rows = _rows()
    assert len(rows) > 40
    assert all(len(r) == 4 for r in rows), [r for r in rows if len(r) != 4]
    cells = [r[0] for r in rows]
    exempt = {r[0] for r in rows if "an exception" in r[1]}
    repeated = {s for s in cells if cells.count(s) > 1}
    assert not repeated, f"symbol cells listed twice: {repeated}"
    # one symbol, one row: split each cell into its symbols, so "$h$" and "$h_m$" in two rows are caught
    seen: dict[str, str] = {}
    clashes = []
    for cell in cells:
        if cell in exempt:
            continue
        for sym in base_symbols(cell):
            if sym in ALLOWED_TWICE:
                continue
            if sym in seen and seen[sym] != cell:
                clashes.append(f"{sym!r} in {seen[sym]!r} and {cell!r}")
            seen.setdefault(sym, cell)
    assert not clashes, "one symbol in two rows: " + "; ".join(clashes)


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
