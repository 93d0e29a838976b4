"""Translations of the course, held to the English text: python scripts/i18n.py {status,skeleton,check,show} …

Every markdown cell of an English notebook has, per language, a block in ``i18n/<lang>/<notebook stem>.md``::

    <!-- cell 7fb01ea1 en 3f2a9c1b0d4e -->
    译文……

keyed by the English cell's id, with the first 12 hex digits of the SHA-256 of the English source it translates.
An edit to the English cell changes its hash, and ``check`` names the cell until the translation is brought up to
date (then its hash is updated with ``skeleton --update``). Markdown documents (the glossary, the notation page)
are cut into sections at their headings; section k has the id ``s<k>``.

``check`` also holds each block to its English cell: the same formulas ($…$ and $$…$$), code spans, link targets
and digits (as multisets: Chinese word order may move them), and some Chinese in it.

Commands:
  status                    per file: cells translated, missing, stale
  skeleton PATH [--update]  write the translation file for PATH with the English text in every missing block
                            (--update: also re-key stale blocks to the current English hash, keeping their text)
  check [PATH ...]          every problem, one line each; exit status 1 when there is one
  show PATH CELL            the English cell and its translation, one after the other
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
I18N = ROOT / "i18n"
LANGS = ("zh",)
DOCS = ("docs/glossary.md", "docs/notation.md")
GENERATED = {"course-map"}  # cells scripts/course_map.py writes: generated in each language, never translated
MARKER = re.compile(r"^<!-- cell (\S+) en ([0-9a-f]{12}) -->$", re.M)
HEADER = "<!-- Translation of {source} into {lang}: one block per English {unit}; python scripts/i18n.py -->"

_DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", re.S)
# one line break may sit inside $…$ (the English wraps long formulas); a blank line may not
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\\n]|\n(?![ \t]*\n))+?\$")
_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|\bhref=\"([^\"]+)\"")
_ANCHOR = re.compile(r"\bid=\"([^\"]+)\"")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def digest(text: str) -> str:
    """First 12 hex digits of the SHA-256 of an English source: what a translation block is keyed to."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass
class Unit:
    """One English cell (or document section) to translate."""

    id: str
    source: str

    @property
    def hash(self) -> str:
        return digest(self.source)


def english_units(path: Path) -> list[Unit]:
    """The markdown cells of a notebook (by cell id), or the heading sections of a markdown document."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        return [
            Unit(c["id"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
            for c in nb["cells"]
            if c["cell_type"] == "markdown" and c["id"] not in GENERATED
        ]
    return [Unit(f"s{k}", text) for k, text in enumerate(doc_sections(path.read_text(encoding="utf-8")))]


def doc_sections(text: str) -> list[str]:
    """A markdown document cut before each heading line (outside code fences); joined, they give the document."""
    sections: list[list[str]] = [[]]
    fenced = False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("#") and any(sections[-1]):
            sections.append([])
        sections[-1].append(line)
    return ["".join(s) for s in sections if s]


def translation_path(path: Path, lang: str) -> Path:
    return I18N / lang / f"{path.stem}.md"


def read_blocks(path: Path) -> dict[str, tuple[str, str]]:
    """cell id → (English hash it translates, text) of a translation file (empty when there is none)."""
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    marks = list(MARKER.finditer(text))
    blocks: dict[str, tuple[str, str]] = {}
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        if m.group(1) in blocks:
            raise ValueError(f"{path}: cell {m.group(1)} has two blocks")
        blocks[m.group(1)] = (m.group(2), text[m.end() : end].strip("\n"))
    return blocks


def write_blocks(path: Path, source: Path, lang: str, units: list[Unit], blocks: dict[str, tuple[str, str]]) -> None:
    unit = "markdown cell" if source.suffix == ".ipynb" else "section (cut at headings)"
    parts = [HEADER.format(source=source.relative_to(ROOT), lang=lang, unit=unit), ""]
    for u in units:
        h, text = blocks[u.id]
        parts += [f"<!-- cell {u.id} en {h} -->", text.rstrip("\n"), ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")


def _strip(text: str) -> tuple[list[str], list[str], list[str], str]:
    """(formulas, code spans, link targets, the rest) of a markdown text."""
    formulas: list[str] = []
    codes: list[str] = []

    def take(store: list[str]):
        def sub(m: re.Match[str]) -> str:
            store.append(m.group(0) if store is formulas else m.group(2))
            return " "

        return sub

    rest = _CODE.sub(take(codes), text)
    rest = _DISPLAY_MATH.sub(take(formulas), rest)
    rest = _INLINE_MATH.sub(take(formulas), rest)
    links = [a or b for a, b in _LINK.findall(rest)]
    rest = _LINK.sub(" ", rest)
    return [re.sub(r"\s+", " ", f).strip() for f in formulas], codes, links, rest


def compare(english: str, translated: str) -> list[str]:
    """What a translation changed that it must keep: formulas, code spans, link targets, digits; and Chinese in it."""
    problems = []
    ef, ec, el, er = _strip(english)
    tf, tc, tl, tr = _strip(translated)
    for what, a, b in (
        ("formulas", ef, tf),
        ("code spans", ec, tc),
        ("link targets", el, tl),
        ("anchors (id=)", _ANCHOR.findall(english), _ANCHOR.findall(translated)),
        ("numbers", _DIGITS.findall(er), _DIGITS.findall(tr)),
    ):
        ca, cb = collections.Counter(a), collections.Counter(b)
        if ca != cb:
            lost, added = list((ca - cb).elements()), list((cb - ca).elements())
            problems.append(f"{what} differ: English only {lost[:4]}, translation only {added[:4]}")
    if _CJK.search(er) is None and re.search(r"[A-Za-z]{3,}", er) is None:
        return problems  # nothing to translate (a formula or a table of numbers)
    if not _CJK.search(tr):
        problems.append("no Chinese in it (still the English text?)")
    return problems


def sources() -> list[Path]:
    """Everything that has a translation: the course's notebooks, then the documents."""
    return [*sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")), *(ROOT / d for d in DOCS)]


def problems_of(path: Path, lang: str) -> list[str]:
    """Every problem of one source's translation, each naming the cell."""
    units = english_units(path)
    blocks = read_blocks(translation_path(path, lang))
    out = []
    for u in units:
        first = u.source.strip().splitlines()[0][:60] if u.source.strip() else ""
        if u.id not in blocks:
            out.append(f"cell {u.id} has no translation ({first!r})")
            continue
        h, text = blocks[u.id]
        if h != u.hash:
            out.append(f"cell {u.id} changed since it was translated (English {u.hash}, translated {h}): {first!r}")
        out += [f"cell {u.id}: {p}" for p in compare(u.source, text)]
    extra = set(blocks) - {u.id for u in units}
    out += [f"block {i} translates no English cell (removed?)" for i in sorted(extra)]
    return [f"{path.relative_to(ROOT)} [{lang}]: {p}" for p in out]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["status", "skeleton", "check", "show"])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--lang", default="zh", choices=LANGS)
    parser.add_argument("--update", action="store_true", help="skeleton: re-key stale blocks, keeping their text")
    args = parser.parse_args()
    paths = [p.resolve() for p in args.paths] or sources()
    if args.command == "show":
        path, cell = args.paths[0].resolve(), str(args.paths[1])
        unit = next(u for u in english_units(path) if u.id == cell)
        print(
            unit.source, "\n---", read_blocks(translation_path(path, args.lang)).get(cell, ("", "(none)"))[1], sep="\n"
        )
        return 0
    if args.command == "skeleton":
        for path in paths:
            units = english_units(path)
            target = translation_path(path, args.lang)
            blocks = read_blocks(target)
            for u in units:
                if u.id not in blocks:
                    blocks[u.id] = (u.hash, u.source)
                elif args.update:
                    blocks[u.id] = (u.hash, blocks[u.id][1])
            write_blocks(target, path, args.lang, units, blocks)
            print(f"wrote {target.relative_to(ROOT)} ({len(units)} blocks)")
        return 0
    if args.command == "status":
        for path in paths:
            units, blocks = english_units(path), read_blocks(translation_path(path, args.lang))
            done = sum(
                u.id in blocks and blocks[u.id][0] == u.hash and not compare(u.source, blocks[u.id][1]) for u in units
            )
            print(f"{path.relative_to(ROOT)!s:55s} {done:3d}/{len(units)} blocks in order", flush=True)
        return 0
    found = [p for path in paths for p in problems_of(path, args.lang)]
    print("\n".join(found) if found else f"{len(paths)} files: every block matches its English cell")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
