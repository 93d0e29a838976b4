"""Every stored output reads the same on any CPU: no raw rounding-level number that nbval would compare.

A float32 or float64 rounding error printed raw (``5e-07`` on one CPU, ``0e+00`` on another) makes strict nbval
fail on a machine other than the one that stored the output (issue 22, item 3). Such a number must be printed
as a verdict (``< 1e-9``) or rounded. This test reads every notebook's stored outputs, applies the substitutions
of tests/nbval_sanitize.cfg exactly as nbval does, and fails on any number in e-notation whose magnitude is
below 1e-5 (zero included) that is left, unless it is a bound or a tolerance (``< 1e-9``, ``(bound 1e-12)``).
"""

from __future__ import annotations

import configparser
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("**/*.ipynb"))
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")
# words just before a number that make it a stated limit rather than a measured value
BOUND = re.compile(
    r"(?:[<≤>≥]|\bbounds?\b|\btol(?:erance)?\b|\b[ar]tol\b|\beps\b|\b(?:below|under|above|within|to)\b)[\s:=(]*$"
)
LIMIT = 1e-5


def _sanitizers() -> list[tuple[re.Pattern[str], str]]:
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "nbval_sanitize.cfg", encoding="utf-8")
    return [(re.compile(config[s]["regex"]), config[s]["replace"]) for s in config.sections()]


SANITIZERS = _sanitizers()


def risky_numbers(text: str) -> list[str]:
    """The raw numbers below 1e-5 in ``text`` that survive the sanitizer and are not bounds, each with context."""
    for regex, replacement in SANITIZERS:
        text = regex.sub(replacement, text)
    found = []
    for m in NUMBER.finditer(text):
        if abs(float(m.group())) >= LIMIT:
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[max(line_start, m.start() - 25) : m.start()]
        if BOUND.search(before):
            continue
        found.append(text[max(line_start, m.start() - 60) : m.end()].strip())
    return found


def _stored_text(cell: dict) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append("".join(out.get("text", "")))
        parts.append("".join(out.get("data", {}).get("text/plain", "")))
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
    assert risky_numbers("within tolerance 1e-12; bounds 1e-12; rtol=1e-7; (absolute: ≥ 1e-9); equal to 1e-12") == []
    assert risky_numbers("a frequency 1.0e-04, a rounded 0.000") == []  # above 1e-5, or no e-notation
    # the sanitizer's own rule (one digit, one decimal, exponent −6 or below) is masked before the scan
    assert risky_numbers("max |error| 2.2e-16") == []


def test_every_notebook_is_scanned():
    assert len(NOTEBOOKS) >= 11 and all(p.suffix == ".ipynb" for p in NOTEBOOKS)
