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
  build [--out DIR]         write the Chinese notebooks (notebooks/zh/, not in git: generated) and documents
                            (docs/zh/, in git so that README.zh-CN.md's links work on GitHub)

The Chinese notebooks keep the English notebooks' code cells and stored outputs byte for byte (the outputs of
exercise cells are the checkers' Chinese answers, poslib.exercises.i18n.translate_feedback); their markdown is the
translation with its links made to work one folder deeper, and each translated heading carries the English
heading's anchor, so links into a notebook (05_rope.ipynb#The-decay-bound) land on the same place.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
I18N = ROOT / "i18n"
LANGS = ("zh",)
DOCS = ("docs/glossary.md", "docs/notation.md")
FRONT = "README.md"  # its translation is README.zh-CN.md, beside it (the Chinese front door, in git)
# Cells generated in each language, never translated: the course map (scripts/course_map.py) and 01's notation
# table (scripts/notation.py, from docs/notation.md, whose translation is i18n/<lang>/notation.md).
GENERATED = {"course-map", "notation"}
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
    if path == COURSE_SOURCE:
        return course_units()
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
    return I18N / lang / ("course.md" if path == COURSE_SOURCE else f"{path.stem}.md")  # README.md → README.md


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
    """Everything that has a translation: the course's notebooks, the documents, the course map's entries."""
    docs = [ROOT / d for d in (*DOCS, FRONT)]
    return [*sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")), *docs, COURSE_SOURCE]


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
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    return [f"{name} [{lang}]: {p}" for p in out]


# ----------------------------------------------------------------------------- generated editions

_MD_LINK = re.compile(r"(\]\(|\bhref=\")([^)\s\"]+)")


def localize_link(target: str, lang: str, where: str) -> str:
    """An English link target rewritten for a page one folder deeper (``where``: "notebooks" or "docs").

    From a generated notebook, links to other notebooks point at their translations (neighbours in
    notebooks/<lang>/) and links to the glossary and the notation page at theirs (docs/<lang>/); from a
    document in git, notebook links stay on the English notebooks (in git); everything else moves one folder up.
    """
    if re.match(r"^(?:[a-z]+:|#|/)", target):
        return target
    path, _, fragment = target.partition("#")
    tail = f"#{fragment}" if fragment else ""
    name = Path(path).name
    if where == "notebooks":
        if re.fullmatch(r"\d\d_[\w-]+\.ipynb", path):
            return target
        if path in ("../docs/glossary.md", "../docs/notation.md"):
            return f"../../docs/{lang}/{name}{tail}"
        return f"../{path}{tail}"
    # Files in git (README.zh-CN.md, docs/zh/) link only to files in git: the English notebooks, since the
    # Chinese ones are generated (notebooks/zh/ is not committed). The book maps these links to its Chinese pages.
    if where == "root":
        if path in ("docs/glossary.md", "docs/notation.md"):
            return f"docs/{lang}/{name}{tail}"
        if path == "README.zh-CN.md":
            return f"README.md{tail}"
        return target
    if path in ("glossary.md", "notation.md"):
        return target
    return f"../{path}{tail}"


def localize_links(text: str, lang: str, where: str) -> str:
    return _MD_LINK.sub(lambda m: m.group(1) + localize_link(m.group(2), lang, where), text)


def heading_anchor(line: str) -> str:
    """The id JupyterLab gives a markdown heading: its text, spaces as hyphens (what links to it use)."""
    text = re.sub(r"^#+\s*", "", line).strip()
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace(" ", "-")


def with_english_anchors(english: str, translated: str) -> str:
    """Each translated heading preceded by an anchor with the English heading's id (k-th heading for k-th)."""

    def headings(text: str) -> list[int]:
        out, fenced = [], False
        lines = text.splitlines()
        for k, line in enumerate(lines):
            fenced ^= line.startswith("```")
            if not fenced and re.match(r"^#{1,6}\s", line):
                out.append(k)
        return out

    en_lines, zh_lines = english.splitlines(), translated.splitlines()
    en_heads, zh_heads = headings(english), headings(translated)
    anchors = [f'<a id="{heading_anchor(en_lines[k])}"></a>' for k in en_heads]
    if len(en_heads) != len(zh_heads):
        return "\n".join([*anchors, translated]) if anchors else translated
    for k, anchor in sorted(zip(zh_heads, anchors, strict=True), reverse=True):
        zh_lines.insert(k, anchor)
    return "\n".join(zh_lines)


def translated_markdown(path: Path, lang: str) -> dict[str, str]:
    """cell id → the translated markdown of a notebook, ready for notebooks/<lang>/ (links, anchors)."""
    blocks = read_blocks(translation_path(path, lang))
    out = {}
    for u in english_units(path):
        if u.id in blocks:
            out[u.id] = localize_links(with_english_anchors(u.source, blocks[u.id][1]), lang, "notebooks")
    return out


def translated_document(path: Path, lang: str) -> str:
    """A markdown document's translation, joined from its sections, with links for where it is written."""
    blocks = read_blocks(translation_path(path, lang))
    parts = [blocks[u.id][1] if u.id in blocks else u.source for u in english_units(path)]
    where = "root" if path == ROOT / FRONT else "docs"
    return localize_links("\n\n".join(p.strip("\n") for p in parts) + "\n", lang, where)


FRONT_DOORS = {"zh": "README.zh-CN.md"}


def front_door_path(lang: str) -> Path:
    """The translated README, beside the English one."""
    return ROOT / FRONT_DOORS[lang]


COURSE_TITLE_ZH = "位置编码：交互式课程"  # course_map.COURSE_TITLE; the Chinese book's title without "（中文版）"
COURSE_SOURCE = ROOT / "scripts" / "course_map.py"  # its COURSE list: each notebook's title and objectives


def course_units() -> list[Unit]:
    """One unit per notebook of the course map: its title, a blank line, its objectives as a list."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import course_map

    return [
        Unit(entry.file[:2], "\n".join([entry.title, "", *(f"- {o}" for o in entry.objectives)]))
        for entry in course_map.COURSE
    ]


def course_translation(lang: str) -> list[tuple[str, list[str]]]:
    """(title, objectives) of every notebook in ``lang`` (English where a block is missing)."""
    blocks = read_blocks(translation_path(COURSE_SOURCE, lang))
    out = []
    for u in course_units():
        text = blocks[u.id][1] if u.id in blocks else u.source
        title, _, rest = text.partition("\n")
        out.append((title.strip(), [line[2:].strip() for line in rest.splitlines() if line.startswith("- ")]))
    return out


def course_map_cell(index: int, nb: Any, lang: str) -> str:
    """Notebook ``index``'s course-map cell in Chinese: scripts/course_map.header's content, its numbers included.

    Its reading time and counts are those of the English notebook (the estimate is made from English words).
    """
    sys.path.insert(0, str(ROOT / "scripts"))
    import course_map

    course = course_translation(lang)
    entry, last = course_map.COURSE[index], len(course_map.COURSE) - 1
    r = course_map.reading(nb, entry.run_seconds)
    n_ex = len(course_map.exercises.exercises(f"{index:02d}"))
    total = 5 * math.ceil(r.minutes / 5)
    files = [e.file for e in course_map.COURSE]
    links = [
        f"**{i:02d} {title} ◀ 你在这里**" if i == index else f"[{i:02d} {title}]({files[i]})"
        for i, (title, _) in enumerate(course)
    ]
    prev = f"[← {index - 1:02d} {course[index - 1][0]}]({files[index - 1]})" if index > 0 else "← 起点"
    nxt = f"[{index + 1:02d} {course[index + 1][0]} →]({files[index + 1]})" if index < last else "终点 →"
    objectives = "\n".join(f"- {o}" for o in course[index][1])
    extras = [f"{r.widgets} 个交互图"] if r.widgets else []
    further = (
        f"，以及可选的[延伸阅读](#{course_map.FURTHER_ID})（约 {math.ceil(r.further_minutes)} 分钟）"
        if r.further_minutes
        else ""
    )
    return (
        f'<a id="{course_map.HEADER_ID}"></a>\n'
        f"**笔记本 {index:02d} / {last:02d}**，出自《{COURSE_TITLE_ZH}》\n\n"  # no link: course_map.TOOLBAR_CLEAR
        f"{prev} · {nxt} · [中英术语表 glossary](../docs/glossary.md) · [记号](../docs/notation.md) · "
        f"[练习](#{course_map.EXERCISES_ID})\n\n"
        f"<details open><summary>课程地图</summary>\n\n{' · '.join(links)}\n\n</details>\n\n"
        f"**学完本篇，你能够**\n\n{objectives}\n\n"
        f"**时间**：仔细读一遍约 {total} 分钟（按英文版估算：{r.prose_words + r.math_words} 个词、"
        f"{r.code_lines} 行代码、" + "".join(f"{e}、" for e in extras) + f"运行约 {entry.run_seconds:.0f} 秒），"
        f"外加 {n_ex} 道练习（约 {course_map.MINUTES_PER_EXERCISE * n_ex} 分钟）{further}。"
    )


def notation_cell(lang: str) -> str:
    """01's notation cell in ``lang``: scripts/notation.cell_source of the translated notation page."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import notation

    blocks = read_blocks(translation_path(ROOT / "docs" / "notation.md", lang))
    units = english_units(ROOT / "docs" / "notation.md")
    text = "\n\n".join((blocks[u.id][1] if u.id in blocks else u.source).strip("\n") for u in units)
    cell = notation.cell_source(text).replace(notation.HEADING, "## 每篇笔记本通用的记号", 1)
    english = notation.cell_source((ROOT / "docs" / "notation.md").read_text(encoding="utf-8"))
    return localize_links(with_english_anchors(english, cell), lang, "notebooks")


def translate_exercise_outputs(cell: Any) -> None:
    """An exercise cell's stored answer ("not answered yet: …") as its checker gives it in Chinese."""
    try:
        from poslib.exercises.i18n import translate_feedback
    except ImportError:  # the checkers' Chinese is not in yet: the stored English answer stays
        return
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "text/plain" in data:
            data["text/plain"] = translate_feedback("".join(data["text/plain"]))


GENERATED_LOG = ".generated.json"  # in the notebooks folder: file name → SHA-256 of what build wrote


def build(lang: str, out: Path, documents: bool = True, force: bool = False) -> list[Path]:
    """Write the translated notebooks into ``out`` and (``documents``) the documents into docs/<lang>/ and the
    README beside the English one.

    A notebook a student has changed since it was written (its bytes differ from the ones recorded in
    ``out/.generated.json``) is kept, with a message, unless ``force``: rebuilding after ``git pull`` must not
    wipe someone's answers to the exercises.
    """
    import nbformat

    written = []
    if documents:
        docs = ROOT / "docs" / lang
        docs.mkdir(parents=True, exist_ok=True)
        for doc in DOCS:
            target = docs / Path(doc).name
            target.write_text(translated_document(ROOT / doc, lang), encoding="utf-8")
            written.append(target)
        front = front_door_path(lang)
        front.write_text(translated_document(ROOT / FRONT, lang), encoding="utf-8")
        written.append(front)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / GENERATED_LOG
    log: dict[str, str] = json.loads(log_path.read_text(encoding="utf-8")) if log_path.is_file() else {}
    zh_notation = read_blocks(translation_path(ROOT / "docs" / "notation.md", lang))
    for index, path in enumerate(sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))):
        nb = nbformat.read(path, as_version=4)
        texts = translated_markdown(path, lang)
        for cell in nb.cells:
            if cell.cell_type == "markdown" and cell.get("id") == "course-map":
                cell.source = localize_links(course_map_cell(index, nb, lang), lang, "notebooks")
            elif cell.cell_type == "markdown" and cell.get("id") == "notation" and zh_notation:
                cell.source = notation_cell(lang)
            elif cell.cell_type == "markdown" and cell.get("id") in texts:
                cell.source = texts[cell["id"]]
            elif cell.cell_type == "code" and "exercise" in cell.metadata.get("tags", []):
                translate_exercise_outputs(cell)
        nb.metadata["language"] = lang
        target = out / path.name
        if target.is_file() and not force and path.name in log:
            if hashlib.sha256(target.read_bytes()).hexdigest() != log[path.name]:
                print(f"kept {target.name}: changed since it was generated (--force overwrites it)")
                continue
        nbformat.write(nb, target)
        log[path.name] = hashlib.sha256(target.read_bytes()).hexdigest()
        written.append(target)
    log_path.write_text(json.dumps(log, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["status", "skeleton", "check", "show", "build"])
    parser.add_argument("--out", type=Path, default=ROOT / "notebooks" / "zh", help="build: notebooks folder")
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--lang", default="zh", choices=LANGS)
    parser.add_argument("--update", action="store_true", help="skeleton: re-key stale blocks, keeping their text")
    parser.add_argument("--force", action="store_true", help="build: overwrite notebooks changed since generated")
    args = parser.parse_args()
    paths = [p.resolve() for p in args.paths] or sources()
    if args.command == "build":
        written = build(args.lang, args.out.resolve(), force=args.force)
        print(f"wrote {len(written)} files: {', '.join(str(p.relative_to(ROOT)) for p in written[:3])} …")
        return 0
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
