"""Every stored output reads the same on any CPU: no raw rounding-level number that nbval would compare.

A float32 or float64 rounding error printed raw (``5e-07`` on one CPU, ``0e+00`` on another) makes strict nbval
fail on a machine other than the one that stored the output (issue 22, item 3). Such a number must be printed
as a verdict (``< 1e-9``) or rounded. This test reads every notebook's stored outputs, raw (before the
substitutions of tests/nbval_sanitize.cfg: a sanitizer that masks ``5.0e-07`` does not mask ``0.0e+00``, so the
raw text is what can differ), in every text mime type nbval compares, and fails on any number in e-notation
whose magnitude is below 1e-5 (zero included), unless a comparison sign (``< ≤ > ≥ ‹``) stands just before it
or it sits in a clause that names a bound or a tolerance (``(bound 1e-12)``, ``rtol=1e-7``). Words such as
"to", "below" or "within" do not exempt a number: "fell to 5e-07" is a measured value.

The same holds for a number printed in fixed point (issue 34, item 17): ``0.0000005`` (``f"{err:.7f}"``) is as
machine-dependent as ``5e-07``, and a negative zero (``-0.000``, a tiny negative value rounded) reads ``0.000`` on
a machine where the value came out positive. Both are flagged, with the same exemptions.
"""

from __future__ import annotations

import html
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("**/*.ipynb"))
# e-notation, numpy's "5.e-07" (a point with no digits after it) included
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d*)?[eE][-+]?\d+(?![\w.])")
# a comparison sign just before the number makes it a stated limit, not a measured value
SIGN = re.compile(r"[<≤>≥‹]\s*=?\s*$")
# a clause (from the last "(", ";" or "," on the line) that names a bound or a tolerance
# (the Chinese notebooks' words too: 界限 bound, 上界 upper bound, 容差 tolerance; their clauses open at （；，)
CLAUSE = re.compile(r"\bbounds?\b|\b[ar]?tol(?:erance)?\b|界限|上界|容差")
CLAUSE_START = re.compile(r"[(;,（；，]")
LIMIT = 1e-5
# A number in fixed point (no exponent), with an ASCII or a true minus sign. Flagged when it is a negative zero
# ("-0.0", "−0.000") or nonzero below LIMIT, i.e. five or more zeros after the point before its first nonzero digit
# ("0.0000005", "0.00000050"). Why that threshold: it is the e-notation rule's LIMIT, so the notation never decides
# (5e-07 and 0.0000005 get the same verdict); below it lives float32 rounding of O(1) values (eps 1.2e-7, grown
# up to ~100-fold by sums), while just above it sit values that are legitimately small and the same everywhere,
# a learning rate 0.00005 or a frequency 0.0001 (four zeros: a threshold there would flag them). A rounded zero
# "0.000" and values such as "0.0312" or "0.5" pass.
# (numpy prints a zero under suppress=True as "0." and a negative one as "-0.": the digits after the point optional)
FIXED = re.compile(r"(?<![\w.])[-+−]?\d+\.\d*(?![\w.])")
# nbval compares every output's text and every text mime type but these (images are skipped by nbval)
SKIPPED_MIME = ("image/", "application/")
TAG = re.compile(r"<[^>]*>")


def _is_risky(number: str) -> bool:
    """True for a number nbval may see differ across CPUs: e-notation below LIMIT (zero included), or fixed point
    below LIMIT but nonzero, or a negative zero."""
    value = float(number.replace("−", "-"))
    if NUMBER.fullmatch(number):
        return abs(value) < LIMIT
    return 0 < abs(value) < LIMIT or (value == 0 and number[0] in "-−")


def risky_numbers(text: str) -> list[str]:
    """The raw rounding-level numbers in ``text`` (no sanitizer applied) that are not bounds, each with context:
    e-notation below 1e-5, fixed point below 1e-5 but nonzero, and negative zeros."""
    found = []
    matches = sorted([*NUMBER.finditer(text), *FIXED.finditer(text)], key=lambda m: m.start())
    for m in matches:
        if not _is_risky(m.group()):
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[line_start : m.start()]
        starts = [c.end() for c in CLAUSE_START.finditer(before)]
        clause = before[starts[-1] :] if starts else before
        if SIGN.search(before) or CLAUSE.search(clause):
            continue
        found.append(text[max(line_start, m.start() - 60) : m.end()].strip())
    return found


def _stored_text(cell: dict) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append("".join(out.get("text", "")))
        for mime, value in out.get("data", {}).items():
            if mime.startswith(SKIPPED_MIME):
                continue
            text = "".join(value) if isinstance(value, list) else str(value)
            if mime == "text/html":  # tags out first (a tag's ">" is no comparison), then entities (&lt; is "<")
                text = html.unescape(TAG.sub(" ", text))
            parts.append(text)
    return "\n".join(parts)


def scan(path: pathlib.Path) -> list[str]:
    """``cell N (id): 'text'`` for every risky number in the stored outputs of the notebook at ``path``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for index, cell in enumerate(nb["cells"]):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] != "code" or "nbval-ignore-output" in tags or "nbval-skip" in tags:
            continue  # nbval does not compare these outputs
        for snippet in risky_numbers(_stored_text(cell)):
            problems.append(f"cell {index} ({cell.get('id')}): {snippet!r}")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_outputs_have_no_raw_rounding_level_number(path):
    problems = scan(path)
    assert not problems, f"{path.relative_to(ROOT)}: print a verdict (< 1e-9) or a rounded value: " + "; ".join(
        problems
    )


def test_scanner_flags_raw_small_numbers_and_spares_bounds():
    assert risky_numbers("max |error| 5e-07 (bound 1e-5, float32)") == ["max |error| 5e-07"]
    assert risky_numbers("max |error| 0e+00") and risky_numbers("gap 0.0e+00 here") and risky_numbers("x 1.23e-07")
    assert risky_numbers("max |error| < 1e-9 (bound 1e-9)") == []
    assert risky_numbers("(bound 1e-12); bounds 1e-12; rtol=1e-7; (absolute: ≥ 1e-9); tolerance 1e-12; ‹ 1e-9") == []
    assert risky_numbers("a frequency 1.0e-04, a rounded 0.000") == []  # above 1e-5, or no e-notation
    # the raw text is scanned: the sanitizer's pattern (one digit, one decimal, exponent −6 or below) is no excuse
    assert risky_numbers("max |error| 5.0e-07") == ["max |error| 5.0e-07"]
    assert risky_numbers("max |error| 2.2e-16") == ["max |error| 2.2e-16"]
    # words that once exempted a number do not: these are measured values
    for text in ("fell to 5e-07", "below 3e-08", "within 1e-07 of it", "above 0e+00", "under 2e-09"):
        assert risky_numbers(text), text
    # a bound named in an earlier clause does not cover a measured value in a later one
    assert risky_numbers("(bound 1e-9), measured 4e-12") == ["(bound 1e-9), measured 4e-12"]
    # the Chinese notebooks (notebooks/zh, built by scripts/i18n.py) name their bounds in Chinese
    assert risky_numbers("最大误差 < 1e-9（界限 1e-9）；（界限 ≥ −1e-12）；（容差 1e-12）") == []
    assert risky_numbers("（界限 1e-9），实测 4e-12") == ["（界限 1e-9），实测 4e-12"]


def test_scanner_flags_fixed_point_rounding_level_numbers_and_negative_zeros():
    # Issue 34, item 17: these three passed the e-notation-only scanner.
    assert risky_numbers("max |error| 0.00000050") == ["max |error| 0.00000050"]
    assert risky_numbers("gap 0.0000005 here") == ["gap 0.0000005"]
    assert risky_numbers("mean -0.0000") == ["mean -0.0000"]
    assert risky_numbers("mean −0.00, drift -0.0") == ["mean −0.00", "mean −0.00, drift -0.0"]  # true minus too
    assert risky_numbers("[0.5 0.0000012 0.25]") == ["[0.5 0.0000012"]  # inside an array's printout
    # legitimate outputs: rounded values, a rounded (positive) zero, values at or above 1e-5, verdicts, bounds
    legit = (
        "0.5",
        "0.0312",
        "0.000",
        "weights 0.5, 0.25 and -0.125",
        "peak learning rate 0.00005",  # four zeros: a small value that is the same on every machine
        "θ = [1.     0.7499 0.0001]",
        "0.00001",  # exactly the limit
        "max |error| < 1e-9",
        "max |error| < 0.0000001",
        "(tolerance 0.000001)",
        "version 2.0.0.1",
        "5.0e-04",
    )
    for text in legit:
        assert risky_numbers(text) == [], text
    # an e-notation mantissa is never read as a fixed-point number of its own
    assert risky_numbers("5.0e-07") == ["5.0e-07"]
    # numpy's own forms (review of issue 34): a negative zero under suppress=True, a bare-point mantissa
    assert risky_numbers("[-0.  1. ]") == ["[-0."]
    assert risky_numbers("err 5.e-07") == ["err 5.e-07"]
    assert risky_numbers("[ 0.  1. ]") == [] and risky_numbers("it ends at 1.") == []


def test_scanner_reads_every_text_mime_type():
    cell = {
        "outputs": [
            {"output_type": "execute_result", "data": {"text/html": "<td>3e-08</td>", "image/png": "5e-07"}},
            {"output_type": "display_data", "data": {"text/markdown": "error 0e+00", "text/plain": "x"}},
            {"output_type": "display_data", "data": {"text/html": "<td>&lt; 1e-9</td>"}},
        ]
    }
    assert risky_numbers(_stored_text(cell)) == ["3e-08", "error 0e+00"]


def test_every_notebook_is_scanned():
    assert len(NOTEBOOKS) >= 11 and all(p.suffix == ".ipynb" for p in NOTEBOOKS)
