"""poslib's gettext catalogues: python scripts/catalogues.py {extract,untranslated,compile,check}

The templates poslib writes through ``_ = poslib.language.translator(domain)`` are extracted from the code of each
domain (Babel's extractor: the first argument of ``_``, of ``N_``, the marker of a template looked up later, and of
the book's ``widget_text``) into ``poslib/locale/<lang>/LC_MESSAGES/<domain>.po``, which translators
edit; ``compile`` writes the ``.mo`` beside each ``.po`` (both are package data, both in git).

  extract        add every template the code writes to each language's .po (new ones untranslated), mark the
                 ones the code no longer writes obsolete
  untranslated   list every template a catalogue lacks (or marks fuzzy); exit status 1 when there is one
  compile        write each .mo from its .po
  check          every problem (untranslated, a field or number lost, a .mo older than its .po); exit 1 if any
"""

from __future__ import annotations

import argparse
import ast
import datetime
import html
import io
import json
import re
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "poslib" / "locale"
TRANSLATED = ("zh",)  # the languages with catalogues (English is the templates themselves)
# the code whose `_` calls belong to each domain
SOURCES = {
    "exercises": ("poslib/exercises/*.py",),
    "lab": ("poslib/lab/*.py",),
    "widgets": ("poslib/viz/*.py", "scripts/build_book.py"),
}
KEYWORDS = {"_": None, "N_": None, "widget_text": None}
# The interactive figures' labels, menu options and captions are written by the notebooks' code and looked up by
# poslib.viz.interact in the widgets catalogue: they are extracted from the English notebooks.
NOTEBOOKS = "notebooks/[0-9][0-9]_*.ipynb"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
LOOK = "<i>What to look for:</i> "
MENUS = ("DropdownModel", "RadioButtonsModel", "SelectModel", "ToggleButtonsModel")
FIELD = re.compile(r"\{([a-z_][a-z_0-9]*)(?:[:!][^}]*)?\}")
# a number as written with its sign and unit (−0.06, 16×, 5%), and the comparison signs: a translation must keep both
NUMBER = re.compile(r"[−+-]?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:e[−+-]?[0-9]+)?[×%°]?|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
COMPARISON = re.compile(r"[<>≤≥]")
# fixed header fields, so that a catalogue changes only when a message does
HEADER = dict(
    project="poslib",
    version="0.1.0",
    header_comment="# poslib's own words in one language (python scripts/catalogues.py; poslib/language.py).",
    copyright_holder="poslib",
    creation_date=datetime.datetime(2026, 12, 6, tzinfo=datetime.UTC),
    revision_date=datetime.datetime(2026, 12, 6, tzinfo=datetime.UTC),
)


def po_path(lang: str, domain: str) -> Path:
    """The catalogue translators edit."""
    return LOCALE / lang / "LC_MESSAGES" / f"{domain}.po"


def extracted(domain: str) -> Catalog:
    """Every template the code of ``domain`` passes to ``_``, with where it is written."""
    catalogue = Catalog(domain=domain, creation_date=HEADER["creation_date"])  # a fixed date: extract changes no header
    for pattern in SOURCES[domain]:
        for path in sorted(ROOT.glob(pattern)):
            for line, message, _comments, _context in extract_from_file("python", path, keywords=KEYWORDS):
                catalogue.add(message, locations=[(path.relative_to(ROOT).as_posix(), line)])
    if domain == "widgets":
        for text, where in notebook_widget_texts():
            catalogue.add(text, locations=[(where, 0)])
    return catalogue


def notebook_widget_texts() -> list[tuple[str, str]]:
    """(text, notebook) of every control label, menu option and caption the English notebooks' interactive figures
    show: the ``description=`` and ``caption=`` literals of their code and the labels their stored widgets hold
    (menu options come from poslib's data: ``list(TOUR_SCHEMES)``). Texts without a Latin word of two letters (a
    pinyin sentence, a number) are not words to translate."""
    found: dict[str, str] = {}
    for path in sorted(ROOT.glob(NOTEBOOKS)):
        nb = json.loads(path.read_text(encoding="utf-8"))
        texts: list[str] = []
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            for node in ast.walk(ast.parse("".join(cell["source"]))):
                if isinstance(node, ast.keyword) and node.arg in ("description", "caption"):
                    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                        texts.append(node.value.value)
        for model in nb["metadata"].get("widgets", {}).get(WIDGET_STATE, {}).get("state", {}).values():
            state = model["state"]
            if model["model_name"] in MENUS:
                texts += state.get("_options_labels", [])
            if model["model_name"] == "HTMLModel" and str(state.get("value", "")).startswith(LOOK):
                texts.append(html.unescape(state["value"][len(LOOK) :]))
        for text in texts:
            if re.search(r"[A-Za-z]{2}", text):
                found.setdefault(text, path.relative_to(ROOT).as_posix())
    return sorted(found.items())


def read(lang: str, domain: str) -> Catalog:
    """A language's catalogue of ``domain`` (empty when it has none yet)."""
    path = po_path(lang, domain)
    if not path.exists():
        catalogue = Catalog(locale=lang, domain=domain, fuzzy=False, **HEADER)
    else:
        with path.open("rb") as f:
            catalogue = read_po(f, locale=lang, domain=domain)
    for key, value in HEADER.items():
        setattr(catalogue, key, value)
    return catalogue


def write(catalogue: Catalog, lang: str, domain: str) -> None:
    path = po_path(lang, domain)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    write_po(buffer, catalogue, width=120, sort_output=True, omit_header=False, include_previous=True)
    path.write_bytes(buffer.getvalue())


def extract() -> None:
    for domain in SOURCES:
        template = extracted(domain)
        for lang in TRANSLATED:
            catalogue = read(lang, domain)
            catalogue.update(template, no_fuzzy_matching=True)
            write(catalogue, lang, domain)
            print(f"{po_path(lang, domain).relative_to(ROOT)}: {sum(1 for m in catalogue if m.id)} templates")


def problems() -> list[str]:
    """Every way a catalogue falls short of the code or of its template, one line each."""
    found = []
    for domain in SOURCES:
        written = {m.id for m in extracted(domain) if m.id}
        for lang in TRANSLATED:
            path = po_path(lang, domain).relative_to(ROOT)
            catalogue = read(lang, domain)
            have = {m.id: m for m in catalogue if m.id}
            for english in sorted(written - have.keys()):
                found.append(f"{path}: not in the catalogue (run extract): {english!r}")
            for english, entry in sorted(have.items()):
                if english not in written:
                    continue
                if not entry.string or entry.fuzzy:
                    found.append(f"{path}: untranslated: {english!r}")
                    continue
                for what, pattern in (("fields", FIELD), ("numbers", NUMBER), ("comparisons", COMPARISON)):
                    kept = sorted if what == "fields" else list  # Chinese word order may move a named field
                    if kept(pattern.findall(english)) != kept(pattern.findall(entry.string)):
                        found.append(
                            f"{path}: the translation of {english!r} must keep its {what}: "
                            f"{pattern.findall(english)} in English, {pattern.findall(entry.string)} in it"
                        )
            mo = po_path(lang, domain).with_suffix(".mo")
            if not mo.exists():
                found.append(f"{path}: no .mo (run compile)")
            else:
                with mo.open("rb") as f:
                    compiled = {m.id: m.string for m in read_mo(f) if m.id}
                if compiled != {k: v.string for k, v in have.items() if v.string and not v.fuzzy}:
                    found.append(f"{path}: the .mo is not compiled from this .po (run compile)")
    return found


def compile_all() -> None:
    for domain in SOURCES:
        for lang in TRANSLATED:
            catalogue = read(lang, domain)
            with po_path(lang, domain).with_suffix(".mo").open("wb") as f:
                write_mo(f, catalogue, use_fuzzy=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("extract", "untranslated", "compile", "check"))
    command = parser.parse_args(argv).command
    if command == "extract":
        extract()
    elif command == "compile":
        compile_all()
    else:
        found = problems()
        if command == "untranslated":
            found = [line for line in found if "untranslated" in line or "not in the catalogue" in line]
        print("\n".join(found) if found else "no problems")
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
