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


# ---------------------------------------------------------------------------------------------------------
# One symbol, one meaning, beyond the markdown: printed outputs, figure titles and the glossary (issue 34,
# item 18). Each rule is a double meaning the course once had; the symbol the table gives is named beside it.
# Rules hold in every notebook's markdown, in the text outputs of its code cells, in the titles its code and
# poslib/viz draw, and in docs/glossary.md. The notation cell and the table page (which list what papers
# write) are not read.

_T = r"(?:ᵀ|\^\{?\\top\}?)\s*"  # a transpose, printed (ᵀ) or in LaTeX (^\top, ^{\top})
RULES = {
    "Π as anything but a permutation matrix (a function Π(m, n))": re.compile(r"\\Pi\s*\(|Π\s*\("),
    "G as a matrix (G is Self-Extend's group size; W_q^T W_k is W_{qk}, a kernel's Gram matrix 𝒦)": re.compile(
        _T + r"G(?!\()|\bG\s*=\s*W_q|\ban \$G\$|max\s*\|G\|"
    ),
    "A as a matrix other than the attention weights (W_{qk}; Transformer-XL's score z^rel_{m,n})": re.compile(
        _T + r"A\s*(?:M|PE)|\bA_\{?m,?\s*n\}?(?![\w}])"
    ),
    "S as the score matrix (S_mn is cosine similarity; scores are z_{m,n})": re.compile(r"\\Pi\s*S\s*\\Pi|\bS'\s*="),
    "b(·) as a bias of the offset (b is RoPE's base; T5's bias is b_bucket(r))": re.compile(
        r"(?<![\w\\])b\((?:r|n\s*[-−]\s*m|m\s*[-−]\s*n)\)"
    ),
    "RoPE's rotation without Θ (the table writes R_{Θ,m})": re.compile(
        r"(?<![\w\\^])R_m\b(?!\s*[-−])|(?<!\^)R_\{m\}|W_q" + _T + r"R_\{?n\s*[-−]\s*m"
    ),
    "s as a shift of positions (s is the context-extension factor; a shift is Δ)": re.compile(
        r"(?<![\w\\])[mnp]\s*\+\s*s\b(?!')"
    ),
    "h with a position subscript (h is a head)": re.compile(r"(?<![\w\\])h_\{?[mn]\}?(?![\w{])"),
    "h as an axis of M-RoPE's grid (h is a head)": re.compile(r"\baxis\s+\$?h\b"),
    "an offset written k (a shift is Δ)": re.compile(r"\(\s*p\s*\+\s*k\s*\)|\bk\s*=\s*m\s*[-−]\s*n"),
    "σ as the logistic function (σ is a standard deviation; write sigmoid)": re.compile(
        r"\\sigma\s*\(\s*[qkx]|σ\s*\(\s*[qkx]"
    ),
    # issue 43 item 7: PaTH's paper writes its strength β_t, stick-breaking's its break fraction β_{i,j}
    "β as PaTH's strength (β is stick-breaking's break fraction; PaTH's strength is η_t)": re.compile(
        r"I\s*[-−]\s*(?:\\beta|β)|strength\s+\$?(?:\\beta|β)|PaTH\s*(?:with\s+|\()\$?(?:\\beta|β)|(?:\\beta|β)_t\b"
    ),
}
# in the glossary (which has no "papers write" column) positions are m, n as well
GLOSSARY_RULES = {
    **RULES,
    "positions written i, j": FORBIDDEN["positions written i, j"],
    "a pair of positions as subscript ij": re.compile(r"_\{?ij\}?"),
}
_TITLE = re.compile(
    r"""(?:\btitle\s*=\s*|\bsuptitle\s*=\s*|set_title\(\s*|suptitle\(\s*)((?:[rfb]{0,2}(?:"[^"\n]*"|'[^'\n]*')\s*)+)"""
)


def titles(code: str) -> list[str]:
    """The string literals a piece of code passes as a figure or axes title (title=, set_title, suptitle)."""
    out = []
    for m in _TITLE.finditer(code):
        literal = m.group(1)
        if "f" in literal.split('"')[0].split("'")[0].lower():  # an f-string's {{ }} are the braces it shows
            literal = literal.replace("{{", "{").replace("}}", "}")
        out.append(literal)
    return out


def texts_of(nb: dict) -> list[tuple[str, str]]:
    """(where, text) for a notebook's markdown, its code cells' printed text and the titles its code draws."""
    out = []
    for i, c in enumerate(nb["cells"]):
        src = "".join(c["source"])
        if notation.ANCHOR in src:
            continue  # the table itself names what the papers write
        if c["cell_type"] == "markdown":
            out.append((f"cell {i} markdown", src))
            continue
        out += [(f"cell {i} title", t) for t in titles(src)]
        for o in c.get("outputs", []):
            printed = "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
            if printed and not printed.startswith("<Figure"):
                out.append((f"cell {i} output", printed))
    return out


# a paper's own formula, quoted beside the course's symbols ("the paper writes …, our …"): not a second meaning
PAPER_QUOTES = {
    "10_learned_and_contextual_positions": [
        "its equation has the gate $\\sigma(q_i^\\top k_j)$, our\n$\\mathrm{sigmoid}(q_m^\\top k_n)$",
    ],
    "12_position_from_the_data": ["(the paper's $H_t$ and $\\beta_t$, the code's `beta`"],
}


def clashes(
    texts: list[tuple[str, str]], rules: dict[str, re.Pattern[str]] = RULES, quotes: tuple[str, ...] = ()
) -> list[str]:
    found = []
    for where, t in texts:
        for quote in quotes:
            t = t.replace(quote, "«paper»")
        found += [f"{where}: {what}: {m.group()!r}" for what, rx in rules.items() for m in rx.finditer(t)]
    return found


NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_markdown_outputs_and_titles_keep_one_meaning(name):
    nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    found = clashes(texts_of(nb), quotes=tuple(PAPER_QUOTES.get(name, ())))
    assert not found, found


def test_paper_quotes_are_still_there_and_exempt_only_themselves():
    # each exemption names text that exists (a stale one would exempt nothing and hide nothing), and the
    # same formula outside the quote is still caught
    for name, quotes in PAPER_QUOTES.items():
        nb = (ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8")
        text = "".join("".join(c["source"]) for c in json.loads(nb)["cells"])
        for quote in quotes:
            assert quote in text, (name, quote)
            assert clashes([("planted", quote)]), quote
            assert clashes([("planted", quote + r"; again $\sigma(q_m)$")], quotes=(quote,)), quote


def test_figure_titles_in_poslib_viz_keep_one_meaning():
    texts = []
    for path in sorted((ROOT / "poslib" / "viz").glob("*.py")):
        texts += [(f"{path.name} title", t) for t in titles(path.read_text(encoding="utf-8"))]
    assert len(texts) > 30, len(texts)  # the titles are found at all
    found = clashes(texts)
    assert not found, found


def test_glossary_uses_the_table_symbols():
    text = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    found = clashes([("docs/glossary.md", text)], GLOSSARY_RULES)
    assert not found, found


# planted cases: each rule catches the double meaning it was written for, and the collectors read what they say
PLANTED = {
    "Π as anything but a permutation matrix (a function Π(m, n))": r"$\Pi(m, n) = \mathrm{PE}(m)^{\top} A$",
    "G as a matrix (G is Self-Extend's group size; W_q^T W_k is W_{qk}, a kernel's Gram matrix 𝒦)": "min cᵀGc / max|G|",
    "A as a matrix other than the attention weights (W_{qk}; Transformer-XL's score z^rel_{m,n})": (
        r"the four terms of $A_{mn}$"
    ),
    "S as the score matrix (S_mn is cosine similarity; scores are z_{m,n})": r"$\Pi S \Pi^{\top}$",
    "b(·) as a bias of the offset (b is RoPE's base; T5's bias is b_bucket(r))": r"add a term $b(r)$",
    "RoPE's rotation without Θ (the table writes R_{Θ,m})": r"$f(q, m) = R_m q$",
    "s as a shift of positions (s is the context-extension factor; a shift is Δ)": "|score(m+s, n+s) − score(m, n)|",
    "h with a position subscript (h is a head)": r"$h_m = x_m + p_m$",
    "h as an axis of M-RoPE's grid (h is a head)": "pairs 1, 4, 7 are overwritten by axis h",
    "an offset written k (a shift is Δ)": r"$\mathrm{PE}(p+k)$",
    "σ as the logistic function (σ is a standard deviation; write sigmoid)": r"$g = \sigma(q_i^\top k_j)$",
    "β as PaTH's strength (β is stick-breaking's break fraction; PaTH's strength is η_t)": (
        r"$\mathcal{H}_t = I - \beta_t w_t w_t^\top$; strength β (2: a reflection); PaTH with β = 0"
    ),
}
# what the rules must let through: the table's own symbols, and the same letters in their one meaning
ALLOWED = [
    r"$\Pi X$, $\Pi^{\top}\Pi = I$",
    r"$M_\Delta^{\top} W_{qk} M_\Delta = W_{qk}$",
    r"$\lfloor m/G \rfloor$ with group size $G$",
    r"$G(q, k, m-n)$, $G = R_G\,e^{\mathrm{j}\Theta_G}$",
    r"$A' = \Pi A \Pi^{\top}$; the new arc $A_i(L')$",
    r"$S_{mn} = \cos\angle(p_m, p_n)$",
    r"$b_{\mathrm{bucket}(r)}$ and the base $b$",
    r"$R_{\Theta,m}$, Transformer-XL's $R_{m-n}$ and $R_{n-m}$",
    "score(m+Δ, n+Δ); L' = sL; s'(N)",
    r"head $h$ of $n_h$; $x'_m = x_m + p_m$",
    r"$\mathrm{PE}(p+\Delta) = M_\Delta\,\mathrm{PE}(p)$; $k_n$",
    r"a spread $\sigma$; $\mathrm{sigmoid}(q_m^\top k_n)$; σ(N) = 2.5",
    r"$\mathcal{H}_t = I - \eta_t w_t w_t^\top$; strength η (2: a reflection); PaTH with η = 0",
    r"$a_{m,n} = \beta_{m,n}\prod_{n<t<m}(1-\beta_{m,t})$; $\beta(1-\beta)^{\Delta-1}$; break fraction β",
]


def test_each_rule_catches_its_planted_case():
    assert set(PLANTED) == set(RULES)
    for what, text in PLANTED.items():
        assert [h for h in clashes([("planted", text)]) if what in h], (what, text)


def test_rules_let_the_table_symbols_through():
    found = clashes([(f"allowed {i}", t) for i, t in enumerate(ALLOWED)])
    assert not found, found


def test_glossary_rules_catch_paper_positions():
    for text in (r"$\psi(i-j)/\psi(\max(L, i))$", r"$g_{ij}$"):
        assert clashes([("planted", text)], GLOSSARY_RULES), text


def test_outputs_and_titles_are_read():
    # a misuse planted in a printed line, in a title of a code cell and in a poslib/viz-style title is found
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["no symbols here"]},
            {
                "cell_type": "code",
                "source": ['ax.set_title(f"the four terms of $A_{{mn}}$ at L = {L}")\n', 'fig.suptitle("R_m q")'],
                "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": ["max |score(m+s, n+s) − score(m, n)|\n"]},
                    {"output_type": "execute_result", "data": {"text/plain": ["'min cᵀGc'"]}},
                    {"output_type": "display_data", "data": {"text/plain": ["<Figure size 640x480 with 1 Axes>"]}},
                ],
            },
        ]
    }
    found = clashes(texts_of(nb))
    assert [f for f in found if f.startswith("cell 1 title") and "A_{mn}" in f], found
    assert [f for f in found if f.startswith("cell 1 title") and "R_m" in f], found
    assert [f for f in found if f.startswith("cell 1 output") and "m+s" in f], found
    assert [f for f in found if f.startswith("cell 1 output") and "'ᵀG'" in f], found
    assert titles('ax.set(title=r"$z^{\\mathrm{rel}}_{m,n}$", xlabel="x")') == ['r"$z^{\\mathrm{rel}}_{m,n}$"']
