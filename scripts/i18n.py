"""Translations of the course, held to the English text: python scripts/i18n.py {status,skeleton,check,show} …

Every markdown cell of an English notebook has, per language, a block in ``i18n/<lang>/<notebook stem>.md``::

    <!-- cell 7fb01ea1 en 3f2a9c1b0d4e -->
    译文……

keyed by the English cell's id, with the first 12 hex digits of the SHA-256 of the English source it translates.
An edit to the English cell changes its hash, and ``check`` names the cell until the translation is brought up to
date (then its hash is updated with ``skeleton --update``). Markdown documents (the glossary, the notation page)
are cut into sections at their headings; section k has the id ``s<k>``.

``check`` also holds each block to its English cell: the same formulas ($…$ and $$…$$), code spans, link targets
and numbers (as multisets: Chinese word order may move them), and some Chinese in it. A fenced shell or Python
block may have its ``#`` comments in Chinese (code_key: the code must be the English's, each comment stays where
it is, and the numbers in comments count); an inline code span's line breaks are spaces. Each Chinese block is
also held to the edition's typography (typography_problems; the rules are in the Chinese glossary, 排版约定).
Numbers are seen in every form (compare_numbers): signs and superscript exponents in digits, Chinese number,
fraction and magnitude words (三, 七分之一, 数千, 两倍, 百分之五) against the English's digits and words ("a seventh",
"thousands", "twice", "2×").

Commands:
  status                    per file: cells translated, missing, stale
  skeleton PATH [--update]  write the translation file for PATH with the English text in every missing block
                            (--update: also re-key stale blocks to the current English hash, keeping their text)
  check [PATH ...]          every problem, one line each; exit status 1 when there is one
  show PATH CELL            the English cell and its translation, one after the other
  build [--out DIR]         write the Chinese notebooks (notebooks/zh/) and documents (docs/zh/, README.zh-CN.md),
                            all in git so that the Chinese pages' links work on GitHub; rebuild after every edit
                            of an English notebook or translation (tests/test_i18n.py fails on a stale one)
  typeset [FILE ...]        apply the Chinese edition's typography (typeset(): a space between Chinese and Latin,
                            none next to Chinese punctuation, no line break inside a paragraph) to i18n/zh/*.md
                            or the given files; check reports every block that does not follow it

A Chinese notebook is written from its English one: markdown from the translation above (links made to work one
folder deeper, each translated heading carrying the English heading's anchor, so links into a notebook
(05_rope.ipynb#The-decay-bound) land on the same place); each code cell that prints words of its own from its block
in i18n/<lang>/code/<stem>.md (the whole cell, only string literals and comments translated; tests/test_i18n_code.py
holds it to the English cell as a syntax tree); a first code cell (id "zh-language") that runs
``poslib.set_language("zh")``, so poslib's own words (check lines, lab verdicts, exercise feedback, widgets) come
out in Chinese. Nothing is translated after it is printed: the outputs are made by executing the notebook.

  build --execute [NAME ...]  after writing, execute (scripts/run_notebooks.py, a fresh kernel each, POSLIB_LANG
                              unset) the notebooks with a code cell changed or not run, or the ones named
                              (08_extrapolation_lab.ipynb); --all: every one (several minutes: each runs as
                              long as its English twin). A code cell whose source is
                              unchanged keeps its stored outputs until then; strict nbval (pytest) checks them.
"""

from __future__ import annotations

import argparse
import ast
import collections
import hashlib
import itertools
import json
import math
import os
import re
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
I18N = ROOT / "i18n"
LANGS = ("zh",)
DOCS = ("docs/glossary.md", "docs/notation.md")
# Documents with a page in docs/<lang>/: the translated DOCS, and docs/questions.md, literature.md, faq.md and
# lab.md, whose Chinese pages are written apart (they link the Chinese notebooks; tests/test_questions.py,
# tests/test_faq.py and tests/test_doc_pages.py hold each pair of pages together)
LOCALIZED = ("glossary.md", "notation.md", "questions.md", "literature.md", "faq.md", "lab.md")
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


# Fenced code blocks in these languages may have their `#` comments translated (README.zh-CN.md's commands)
HASH_COMMENTS = ("bash", "sh", "shell", "console", "python", "py", "python3", "toml", "yaml", "yml")


def _comment_start(line: str) -> int | None:
    """Where a `#` comment starts in a line of shell or Python (not in quotes, at the start or after a space)."""
    quote = None
    k = 0
    while k < len(line):
        c = line[k]
        if quote:
            if c == "\\":
                k += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (k == 0 or line[k - 1] in " \t"):
            return k
        k += 1
    return None


def code_key(ticks: str, code: str) -> tuple[str, list[str]]:
    """(what a translation must keep of a code span, the text of its comments). An inline span's line breaks are
    spaces (as markdown renders them); a fenced block is kept line by line, except that in a shell or Python
    block each `#` comment is only marked (" #"), so that it may be in Chinese; its text is returned for the
    numbers check."""
    if len(ticks) < 3 or "\n" not in code:
        return re.sub(r"[ \t]*\n[ \t]*", " ", code), []
    lang, _, body = code.partition("\n")
    if lang.strip().lower() not in HASH_COMMENTS:
        return code, []
    lines, comments = [], []
    for line in body.split("\n"):
        at = _comment_start(line)
        if at is None:
            lines.append(line)
        else:
            lines.append(line[:at].rstrip() + " #")
            comments.append(line[at + 1 :])
    return "\n".join([lang, *lines]), comments


def _strip(text: str) -> tuple[list[str], list[str], list[str], str]:
    """(formulas, code spans, link targets, the rest) of a markdown text; the rest holds the code's comments."""
    formulas: list[str] = []
    codes: list[str] = []
    comments: list[str] = []

    def take(store: list[str]):
        def sub(m: re.Match[str]) -> str:
            if store is formulas:
                store.append(m.group(0))
                return " "
            key, said = code_key(m.group(1), m.group(2))
            store.append(key)
            comments.extend(said)
            return " "

        return sub

    rest = _CODE.sub(take(codes), text)
    rest += "".join(f"\n{c}" for c in comments)
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
    ):
        ca, cb = collections.Counter(a), collections.Counter(b)
        if ca != cb:
            lost, added = list((ca - cb).elements()), list((cb - ca).elements())
            problems.append(f"{what} differ: English only {lost[:4]}, translation only {added[:4]}")
    problems += compare_numbers(er, tr)
    if _CJK.search(er) is None and re.search(r"[A-Za-z]{3,}", er) is None:
        return problems  # nothing to translate (a formula or a table of numbers)
    if not _CJK.search(tr):
        problems.append("no Chinese in it (still the English text?)")
    return problems


# ----------------------------------------------------------------------------- numbers in every form
#
# The digits of a block are compared with the English as strings (a multiset: Chinese word order may move them),
# with the sign before a number in prose and a superscript exponent as part of it ("−8", "10⁶" → "10^6") and a
# digit fraction as one number ("1/7"). Numbers in words are read on both sides into values, a quantity in words
# may stand for one in digits on the other side ("twice" / "2倍", "2×" / "两倍"), and
#   every Chinese number word (三, 两倍, 七分之一, 数千, 百分之五, 第三) must be a value the English has, in any
#   form (digits, words, ordinals, fractions, "×", "N times", "N%");
#   every English fraction, multiple or magnitude in words ("a seventh", "one in seven", "twice", "thousands")
#   must be a value the Chinese has.
# The value 1 of a plain word (一, "one") is never read: in both languages it is mostly an article ("一个", "a").
# A magnitude (数千 "thousands", 几百 "a few hundred") is a value of its own, ("~", 1000), equal to no number.

_SUPERSCRIPT = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+", strict=True))
_SUP = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_NUMBER = re.compile(
    # a sign before a number in prose: not after a letter (Latin, Greek), a digit or a bracket (top-3, x−1, 5-8)
    rf"(?:(?<![A-Za-z0-9_\u00c0-\u024f\u0370-\u03ff)\]}}.,{_SUP}])([-−+±]))?"
    rf"(\d+(?:[.,]\d+)*(?:/\d+(?:\.\d+)?)?)"  # digits; a fraction a/b is one number
    rf"([⁻⁺]?[{_SUP}]+)?"  # a superscript exponent: 10⁶
    rf"|([⁻⁺]?[{_SUP}]+)"  # superscript digits after a letter or bracket: n², (1 − β)⁶
)

# ("n", Fraction) for a number, ("×", Fraction) for a multiple (两倍, "twice"), ("~", 10**k) for a magnitude
# ("thousands", 数千) and ("~", "%") for "a few percent" (百分之几)
Quantity = tuple


def _value(digits: str) -> Fraction | None:
    """The value of a digit string as written in prose (47,000; 0.5; 1/7); None when it is not one number (1,2)."""
    if "/" in digits:
        a, b = (_value(p) for p in digits.split("/", 1))
        return a / b if a is not None and b else None
    if "," in digits:
        if not re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", digits):
            return None
        digits = digits.replace(",", "")
    try:
        return Fraction(digits)
    except (ValueError, ZeroDivisionError):
        return None


def number_tokens(text: str) -> list[tuple[str, Fraction | None]]:
    """Every number written in digits: (its normal form, its value). "−8" and "-8" are one form."""
    out = []
    for m in _NUMBER.finditer(text):
        sign, digits, exponent, alone = m.groups()
        if alone:
            exp = "".join(_SUPERSCRIPT[c] for c in alone)
            out.append((f"^{exp}", None))
            continue
        sign = {"−": "-"}.get(sign or "", sign or "")
        value = _value(digits)
        form = sign + digits
        if exponent:
            exp = "".join(_SUPERSCRIPT[c] for c in exponent)
            form += f"^{exp}"
            value = value ** int(exp) if value is not None and abs(int(exp)) <= 30 and value else None
        if value is not None and sign == "-":
            value = -value
        out.append((form, value))
    return out


# Chinese words that hold a numeral character and are not numbers
ZH_NOT_NUMBERS = (
    "一些", "一样", "统一", "唯一", "一起", "万一", "一致", "一般", "一直", "一旦", "一定", "一切",
    "一再", "同一", "逐一", "一一", "一下", "一点", "一方面", "一边", "一向", "一律", "一同", "一贯", "一味",
    "一时", "一番", "三角", "再三", "千万", "百科", "十足", "二进制", "不二", "独一无二", "一模一样",
    "五花八门", "乱七八糟", "四面八方", "七嘴八舌", "一五一十", "百分点", "百分比", "百川", "两者", "二者", "两边",
    "两端", "两半",
)  # fmt: skip
# and 之一 ("one of"), 十分 ("very"), 零点零几 ("a few hundredths"), except in a fraction: 七分之一, 十分之一
_ZH_NOT_NUMBER = re.compile(
    "|".join(sorted(ZH_NOT_NUMBERS, key=len, reverse=True)) + "|(?<!分)之一|十分(?!之)|零点[零几]+"
)
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_UNIT = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG = {"万": 10**4, "亿": 10**8}
_ZH_NUM = "[零〇一二两三四五六七八九十百千万亿]+"
_ZH_WORD = re.compile(
    rf"(?P<frac_d>{_ZH_NUM}|\d+)\s*分之\s*(?P<frac_n>{_ZH_NUM}|\d+|几)"  # 七分之一, 百分之五, 百分之几
    rf"|(?P<vague>[数几]|上(?=[百千万亿])|数以(?=[十百千万亿]+计))(?P<mag>[十百千万亿]+)"  # 数千, 几百, 上千, 数以百计
    rf"|(?P<quarter>一刻钟)"  # a quarter of an hour
    rf"|(?P<half>一半)"
    rf"|(?P<twice>[加翻]倍|双倍)"
    rf"|(?P<ord>第)?(?P<num>{_ZH_NUM})(?P<times>\s*倍(?!数))?"
)


def zh_numeral(word: str) -> int | None:
    """The value of a Chinese numeral (三, 十二, 两千, 一百万, 十亿); None for a run that is not one (三四)."""
    total, section, digit = 0, 0, None
    for ch in word:
        if ch in _ZH_DIGIT:
            if digit is not None:
                return None
            digit = _ZH_DIGIT[ch]
        elif ch in _ZH_UNIT:
            section += (1 if digit is None else digit) * _ZH_UNIT[ch]
            digit = None
        else:
            section += digit or 0
            total = (total + (section or (0 if total else 1))) * _ZH_BIG[ch]
            section, digit = 0, None
    return total + section + (digit or 0)


def zh_quantities(text: str) -> list[tuple[str, Quantity]]:
    """The numbers a Chinese text writes in words: (the words, their value). Words such as 一些, 统一, 之一, 十分
    ("very") are not numbers; a lone 一 is an article more often than a number and is not read."""
    text = _ZH_NOT_NUMBER.sub(lambda m: "□" * len(m.group(0)), text)
    out: list[tuple[str, Quantity]] = []
    for m in _ZH_WORD.finditer(text):
        g = m.groupdict()
        if g["frac_d"]:
            d = int(g["frac_d"]) if g["frac_d"].isdigit() else zh_numeral(g["frac_d"])
            if g["frac_n"] == "几":
                if d == 100:
                    out.append((m.group(0), ("~", "%")))
                continue
            n = int(g["frac_n"]) if g["frac_n"].isdigit() else zh_numeral(g["frac_n"])
            if d and n is not None:
                out.append((m.group(0), ("n", Fraction(n) if d == 100 else Fraction(n, d))))
        elif g["vague"]:
            v = zh_numeral(g["mag"])
            if v:
                out.append((m.group(0), ("~", v)))
        elif g["half"]:
            out.append((m.group(0), ("n", Fraction(1, 2))))
        elif g["quarter"]:
            out.append((m.group(0), ("n", Fraction(1, 4))))
        elif g["twice"]:
            out.append((m.group(0), ("×", Fraction(2))))
        else:
            v = zh_numeral(g["num"])
            if v is not None and (v != 1 or g["times"]):
                out.append((m.group(0), ("×" if g["times"] else "n", Fraction(v))))
    return out


_EN_CARDINAL = {
    w: k
    for k, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_EN_SCALE = {"dozen": 10, "hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_EN_ORDINAL = {
    w: k
    for k, w in enumerate("_ first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())
    if k
} | {"hundredth": 100, "thousandth": 1000, "millionth": 10**6}
_EN_FRACTION_NAME = (
    {"half": 2, "quarter": 4, "quarters": 4}
    | {w: k for w, k in _EN_ORDINAL.items() if k >= 3}
    | {w + "s": k for w, k in _EN_ORDINAL.items() if k >= 3}
)
_EN_PAIR = dict.fromkeys(("both", "either", "neither", "pair", "pairs", "halves"), 2)  # the two of them: 两, 二者
_EN_COUNT = "|".join([*_EN_CARDINAL, r"\d+", "a", "an"])
_EN_WORD = re.compile(
    rf"\b(?:(?P<fn>{_EN_COUNT})[\s-]+(?P<fd>{'|'.join(_EN_FRACTION_NAME)})\b"  # a seventh, two thirds, one half
    rf"|(?P<half>half|quarter)\b"
    rf"|(?<![\^\d.])(?P<in_n>{_EN_COUNT})\s+(?:in|out\s+of)\s+(?P<in_d>{'|'.join(_EN_CARDINAL)}|\d+)\b"  # one in seven
    rf"|(?:(?P<few>a\s+few|several|few|some)\s+)?(?P<mag>tens|dozens|hundreds|thousands|millions|billions)"
    rf"(?:\s+of\s+(?P<mag2>thousands|millions))?\b"
    rf"|(?P<fewscale>a\s+few|several|few)\s+(?P<scale>dozen|hundred|thousand|million|billion)\b"
    rf"|(?P<twice>twice|double[sd]?|doubling|thrice|triple[sd]?|quadruple[sd]?)\b"
    rf"|(?P<fold>{'|'.join(_EN_CARDINAL)}|\d+)-?fold\b"
    rf"|(?P<times>{'|'.join(_EN_CARDINAL)}|\d+)\s+times\b"
    rf"|(?P<zero>zeros|zeroes|vanish\w*)\b"  # "zeros elsewhere" 其余都是零, "a vanishing share" 趋于零
    rf"|(?P<word>{'|'.join([*_EN_CARDINAL, *_EN_SCALE, *_EN_ORDINAL, *_EN_PAIR])})\b)",
    re.I,
)
_MAGNITUDE = {"tens": 10, "dozens": 10, "hundreds": 100, "thousands": 1000, "millions": 10**6, "billions": 10**9}


def _en_count(word: str) -> int | None:
    word = word.lower()
    return 1 if word in ("a", "an") else int(word) if word.isdigit() else _EN_CARDINAL.get(word)


def en_quantities(text: str) -> tuple[list[tuple[str, Quantity]], set[Quantity]]:
    """(the fractions, multiples and magnitudes an English text writes in words, which the Chinese must have;
    every value the English names in words, in any reading: "third" is 3 and 1/3, "two hundred" 2, 100 and 200)."""
    strong: list[tuple[str, Quantity]] = []
    pool: set[Quantity] = set()
    words = list(_EN_WORD.finditer(text))
    for k, m in enumerate(words):
        g = {key: (v.lower() if v else v) for key, v in m.groupdict().items()}
        if g["fd"]:
            n, d = _en_count(g["fn"]), _EN_FRACTION_NAME[g["fd"]]
            strong.append((m.group(0), ("n", Fraction(n, d))))
            pool |= {("n", Fraction(n)), ("n", Fraction(d))}
        elif g["half"]:
            strong.append((m.group(0), ("n", Fraction(1, 2 if g["half"] == "half" else 4))))
        elif g["in_n"]:
            n, d = _en_count(g["in_n"]), _en_count(g["in_d"])
            if d:
                strong.append((m.group(0), ("n", Fraction(n, d))))
                pool |= {("n", Fraction(n)), ("n", Fraction(d))}
        elif g["mag"]:
            v = _MAGNITUDE[g["mag"]] * (_MAGNITUDE[g["mag2"]] if g["mag2"] else 1)
            strong.append((m.group(0), ("~", v)))
        elif g["fewscale"]:
            strong.append((m.group(0), ("~", _EN_SCALE[g["scale"]])))
        elif g["zero"]:
            pool.add(("n", Fraction(0)))
        elif g["twice"]:
            v = 2 if g["twice"].startswith(("twice", "doubl")) else 3 if g["twice"][:4] in ("thri", "trip") else 4
            strong.append((m.group(0), ("×", Fraction(v))))
            pool.add(("n", Fraction(v)))  # "twice" is also 两次
        elif g["fold"]:
            strong.append((m.group(0), ("×", Fraction(_en_count(g["fold"]) or 0))))
        elif g["times"]:
            pool |= {("×", Fraction(_en_count(g["times"]) or 0)), ("n", Fraction(_en_count(g["times"]) or 0))}
        else:
            w = g["word"]
            v = {**_EN_PAIR, **_EN_ORDINAL, **_EN_SCALE, "dozen": 12, **_EN_CARDINAL}[w]
            pool.add(("n", Fraction(v)))
            if w in _EN_ORDINAL and _EN_ORDINAL[w] >= 3:
                pool.add(("n", Fraction(1, _EN_ORDINAL[w])))
            if w in _EN_SCALE and k and words[k - 1].group("word") and words[k - 1].end() + 1 == m.start():
                prev = words[k - 1].group("word").lower()
                if prev in _EN_CARDINAL:
                    pool.add(("n", Fraction(_EN_CARDINAL[prev] * _EN_SCALE[w])))
    for m in re.finditer(r"(\d+(?:\.\d+)?)\s*×|×\s*(\d+(?:\.\d+)?)", text):  # 2×, ×2
        pool.add(("×", Fraction(m.group(1) or m.group(2))))
    for m in re.finditer(r"(\d+(?:\.\d+)?) ?(?:%|percent|per cent)", text):
        pool |= {("n", Fraction(m.group(1))), ("n", Fraction(m.group(1)) / 100)}
    if re.search(r"\b(?:a\s+few|several)\s+(?:percent|per\s+cent|percentage\s+points)", text):
        pool.add(("~", "%"))
    pool |= {q for _, q in strong} | {q for _, q in zh_quantities(text)}
    return strong, pool


def compare_numbers(english: str, translated: str) -> list[str]:
    """What a translation changed in the numbers of a text (its formulas, code and links taken out)."""
    problems = []
    en_tokens, zh_tokens = number_tokens(english), number_tokens(translated)
    en_strong, en_pool = en_quantities(english)
    zh_words = zh_quantities(translated)
    values = dict(en_tokens) | dict(zh_tokens)
    ca = collections.Counter(f for f, _ in en_tokens)
    cb = collections.Counter(f for f, _ in zh_tokens)
    lost, added = list((ca - cb).elements()), list((cb - ca).elements())

    def same(q: Quantity, value: Fraction | None) -> bool:
        return value is not None and q[0] in ("n", "×") and q[1] == value

    # a number in digits on one side may be in words on the other: 2× / 两倍, 1/7 / 七分之一, 10⁶ / 百万
    for form in list(lost):
        match = next((w for w in zh_words if same(w[1], values[form])), None)
        if match:
            lost.remove(form)
            zh_words.remove(match)
    for form in list(added):
        match = next((w for w in en_strong if same(w[1], values[form])), None)
        if match or any(same(q, values[form]) for q in en_pool):
            added.remove(form)
            if match:
                en_strong.remove(match)
    if lost or added:
        problems.append(f"numbers differ: English only {lost[:4]}, translation only {added[:4]}")
    en_values = en_pool | {("n", v) for _, v in en_tokens if v is not None}
    en_values |= {("n", v / 100) for f, v in en_tokens if v is not None}  # 50 % is 一半
    zh_values = {q for _, q in zh_words} | {("n", v) for _, v in zh_tokens if v is not None}
    zh_values |= {("×", Fraction(m.group(1))) for m in re.finditer(r"(\d+(?:\.\d+)?)\s*倍", translated)}  # 2 倍
    if "半" in translated:  # half-split 半分布局, half a token 半个 token, the second half 后半段
        zh_values.add(("n", Fraction(1, 2)))
    only_zh = [w for w, q in zh_words if q not in en_values]
    # "twice" may be 两次 as well as 两倍
    only_en = [w for w, q in en_strong if q not in zh_values and not (q[0] == "×" and ("n", q[1]) in zh_values)]
    if only_zh or only_en:
        problems.append(f"number words differ: English only {only_en[:4]}, translation only {only_zh[:4]}")
    return problems


# ----------------------------------------------------------------------------- Chinese typography
#
# Two rules for every Chinese text of the edition (stated in the Chinese glossary, i18n/zh/glossary.md, 排版约定):
#   spacing: one space between a Chinese character and a Latin letter, a digit (with its sign, %, ×, °), inline
#     code or inline math, on either side; no space between Chinese punctuation (，。：；（）“”) and the text next
#     to it. Emphasis markers and a link's brackets and target are looked through (**FoX** 把, 见 [docs/lab.md](…));
#     code spans, formulas, URLs, HTML tags and comments and template fields ({who}) are never looked into, and a
#     space next to an emphasis marker stays (**结论。** 正文: without it the bold does not close).
#   lines: a paragraph, or a list item, is one line. A break inside one renders as a stray space between Chinese
#     characters (and reaches the book's alt text); breaks stay between list items, in tables, display math,
#     code, headings, HTML and blockquote lines, and between paragraphs.
# typeset() applies both rules to a text (python scripts/i18n.py typeset); typography_problems() names each place
# that does not follow them (check reports them for every translation block).

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_CHAR = re.compile(f"[{_HAN}]")
_LATIN_CHAR = re.compile(r"[A-Za-z0-9\u00c0-\u024f\u0370-\u03ff\u2070-\u209f%×°′″]")
ZH_PUNCT = "，。、；：？！（）《》〈〉「」『』【】“”‘’"  # no space next to these ("·", "…", "—" are not among them)
_TYPO_TOKEN = re.compile(
    r"(?P<P><!--.*?-->|\$\$.+?\$\$|</?[A-Za-z][^<>\n]*>|\{[A-Za-z_][\w.]*\})"  # HTML, display math, {field}
    rf"|(?P<L>(?P<ticks>`+).+?(?P=ticks)|{_INLINE_MATH.pattern}|https?://[^\s)<>{_HAN}{ZH_PUNCT}]+)"
    r"|(?P<T>\]\([^)\s]*(?:\s+\"[^\"]*\")?\)|!?\[|\]|\*+)"  # a link's brackets and target, emphasis
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_BLOCK_START = ("#", "|", "<", ">")  # headings, tables, HTML, blockquotes: lines of their own


def _char_class(line: str, k: int) -> str:
    c = line[k]
    if _HAN_CHAR.match(c):
        return "H"
    if _LATIN_CHAR.match(c):
        return "L"
    if c in "-−+±§" and line[k + 1 : k + 2].isdigit():
        before = line[k - 1] if k else " "
        if c == "§" or before in " \t" or before in ZH_PUNCT or _HAN_CHAR.match(before):
            return "L"  # a sign before a number is part of it: 相差 −8, 见 §5
    if c in " \t":
        return "S"
    return "C" if c in ZH_PUNCT else "P"


def _atoms(line: str) -> list[tuple[int, int, str]]:
    """(start, end, class) of a line's pieces: H a Chinese character, L a Latin letter or digit (a code span, a
    formula, a URL: one piece), C Chinese punctuation, S a space, T looked through (emphasis, a link's brackets and
    target), P anything else."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for m in _TYPO_TOKEN.finditer(line):
        out += [(k, k + 1, _char_class(line, k)) for k in range(pos, m.start())]
        out.append((m.start(), m.end(), "P" if m.group("P") else "L" if m.group("L") else "T"))
        pos = m.end()
    return out + [(k, k + 1, _char_class(line, k)) for k in range(pos, len(line))]


def _closes(line: str, atom: tuple[int, int, str]) -> bool:
    """Whether a looked-through piece (emphasis, a link's bracket or target) ends a span rather than starting one:
    a link's "]" or "](…)", or an emphasis marker preceded by an odd number of the same marker in the line."""
    text = line[atom[0] : atom[1]]
    if text.startswith("]"):
        return True
    if text.startswith(("[", "![")):
        return False
    item = _LIST_ITEM.match(line)  # a list item's "* " is a bullet, not emphasis
    start = item.end() if item else 0
    before = [m for m in re.finditer(r"\*+", line[start : atom[0]]) if m.group(0) == text]
    return len(before) % 2 == 1


def spacing_edits(line: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) that make one line of Chinese text follow the spacing rule: a space inserted
    between Chinese and Latin, spaces removed between Chinese punctuation and the text next to it."""
    atoms = _atoms(line)
    seen = [a for a in atoms if a[2] != "T"]
    edits = []
    for a, b in itertools.pairwise(seen):
        if {a[2], b[2]} == {"H", "L"}:
            # outside the emphasis or the link: before a marker that opens (见 [docs/lab.md](…), RoPE *不*), after
            # one that closes (**胜过** b): a space inside a marker turns it into a literal asterisk
            between = [t for t in atoms if t[2] == "T" and a[1] <= t[0] and t[1] <= b[0]]
            at = b[0] if between and _closes(line, between[0]) else a[1]
            edits.append((at, at, " "))
    k = 0
    while k < len(atoms):
        j = k
        while atoms[k][2] == "S" and j + 1 < len(atoms) and atoms[j + 1][2] == "S":
            j += 1
        if atoms[k][2] == "S" and 0 < k and j + 1 < len(atoms):
            classes = {atoms[k - 1][2], atoms[j + 1][2]}
            indent = not line[: atoms[k][0]].strip() or _LIST_ITEM.fullmatch(line[: atoms[j][1]])
            if "C" in classes and classes <= {"C", "H", "L"} and not indent:
                edits.append((atoms[k][0], atoms[j][1], ""))
        k = j + 1
    return edits


def _apply(line: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, reverse=True):
        line = line[:start] + new + line[end:]
    return line


def _line_kinds(lines: list[str]) -> list[str]:
    """Per line: "verbatim" (code, display math, a comment of several lines), "blank", "block" (a heading, a table
    row, HTML, a blockquote, a rule, a formula line: never joined), "item" (a list item's first line) or "prose"
    (it continues the line before it, unless that one is verbatim, blank or a block)."""
    kinds = []
    fence = math = comment = False
    for line in lines:
        s = line.strip()
        if fence or math or comment:
            kinds.append("verbatim")
            fence = fence and not s.startswith("```")
            math = math and s.count("$$") % 2 == 0
            comment = comment and not s.endswith("-->")
        elif s.startswith("```"):
            kinds.append("verbatim")
            fence = True
        elif s.count("$$") % 2:
            kinds.append("verbatim")
            math = True
        elif s.startswith("<!--") and not s.endswith("-->"):
            kinds.append("verbatim")
            comment = True
        elif not s:
            kinds.append("blank")
        elif s.startswith(_BLOCK_START) or "$$" in s or re.fullmatch(r"(?:-{3,}|\*{3,}|_{3,})", s):
            kinds.append("block")
        else:
            kinds.append("item" if _LIST_ITEM.match(line) else "prose")
    return kinds


def _edge(text: str, last: bool) -> str:
    """The class of the last (first) piece of a line that a reader sees: H, L, C or P."""
    atoms = [a for a in _atoms(text) if a[2] not in "TS"]
    return (atoms[-1] if last else atoms[0])[2] if atoms else "P"


def _join(before: str, after: str) -> str:
    """Two lines of one paragraph as one: no space where the break sat between Chinese characters or next to
    Chinese punctuation, else one; one also where an emphasis marker needs it (**结论。** 正文: bold that ends in
    punctuation closes only before a space or punctuation)."""
    before, after = before.rstrip(), after.lstrip()
    left, right = _edge(before, last=True), _edge(after, last=False)
    tight = "C" in (left, right) or (left, right) == ("H", "H")
    closing = re.search(r"(\S)\*+$", before)
    opening = re.match(r"\*+(\S)", after)
    if (closing and closing.group(1) in ZH_PUNCT) or (opening and opening.group(1) in ZH_PUNCT):
        tight = False
    return before + ("" if tight else " ") + after


AS_QUOTED = "<!-- typeset: as quoted -->"  # a line holding it keeps its spacing (the glossary's rejected forms)


def _spaced(kind: str, line: str) -> bool:
    return kind in ("block", "item", "prose") and AS_QUOTED not in line


def typeset(text: str) -> tuple[str, int, int]:
    """(the text with both rules applied, how many line breaks were joined, how many spacing edits were made)."""
    lines = text.split("\n")
    out: list[str] = []
    joinable, joined = False, 0
    for line, kind in zip(lines, _line_kinds(lines), strict=True):
        if kind == "prose" and joinable:
            out[-1] = _join(out[-1], line)
            joined += 1
            continue
        out.append(line)
        joinable = kind in ("item", "prose")
    edits = 0
    for k, kind in enumerate(_line_kinds(out)):
        if _spaced(kind, out[k]):
            found = spacing_edits(out[k])
            edits += len(found)
            out[k] = _apply(out[k], found)
    return "\n".join(out), joined, edits


def typography_problems(text: str) -> list[str]:
    """Each place of a Chinese text that does not follow the edition's typography, quoted."""
    lines = text.split("\n")
    kinds = _line_kinds(lines)
    problems = []
    for k, (line, kind) in enumerate(zip(lines, kinds, strict=True)):
        if kind == "prose" and k and kinds[k - 1] in ("item", "prose"):
            problems.append(f"line break inside a paragraph: …{lines[k - 1][-16:]!r} ⏎ {line.lstrip()[:16]!r}…")
        if _spaced(kind, line):
            for start, end, new in spacing_edits(line):
                what = "no space between Chinese and Latin" if new else "a space next to Chinese punctuation"
                problems.append(f"{what}: …{line[max(0, start - 10) : end + 10]!r}…")
        if kind != "verbatim":
            problems += [f"emphasis broken by a space inside its marker: …{q!r}…" for q in _broken_emphasis(line)]
    return problems


def _broken_emphasis(line: str) -> list[str]:
    """Quotes of the emphasis markers a space sits inside ("a** 胜过 **b"): Markdown shows those as asterisks."""
    item = _LIST_ITEM.match(line)
    found = []
    for atom in _atoms(line):
        text = line[atom[0] : atom[1]]
        if atom[2] != "T" or not text.startswith("*") or (item and atom[1] <= item.end()):
            continue
        closing = _closes(line, atom)
        inner = line[atom[0] - 1 : atom[0]] if closing else line[atom[1] : atom[1] + 1]
        if inner == " ":
            found.append(line[max(0, atom[0] - 8) : atom[1] + 8])
    return found


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
        if lang == "zh":
            out += [f"cell {u.id}: {p}" for p in typography_problems(text)]
    extra = set(blocks) - {u.id for u in units}
    out += [f"block {i} translates no English cell (removed?)" for i in sorted(extra)]
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    code = code_block_problems(path, lang) if path.suffix == ".ipynb" else []
    return [f"{name} [{lang}]: {p}" for p in out] + code


# ----------------------------------------------------------------------------- generated editions

_MD_LINK = re.compile(r"(\]\(|\bhref=\")([^)\s\"]+)")


def localize_link(target: str, lang: str, where: str) -> str:
    """An English link target rewritten for a page one folder deeper (``where``: "notebooks" or "docs").

    From a generated notebook, links to other notebooks point at their translations (neighbours in
    notebooks/<lang>/) and links to the pages of LOCALIZED at theirs (docs/<lang>/); from a document
    (README.zh-CN.md, docs/<lang>/), links to a notebook point at its translation in notebooks/<lang>/, its anchor
    kept (each translated heading carries the English heading's anchor: with_english_anchors); everything else
    moves one folder up.
    """
    if re.match(r"^(?:[a-z]+:|#|/)", target):
        return target
    path, _, fragment = target.partition("#")
    tail = f"#{fragment}" if fragment else ""
    name = Path(path).name
    if where == "notebooks":
        if re.fullmatch(r"\d\d_[\w-]+\.ipynb", path):
            return target
        if path in [f"../docs/{d}" for d in LOCALIZED]:
            return f"../../docs/{lang}/{name}{tail}"
        return f"../{path}{tail}"
    # notebooks/<lang>/ is in git beside the English notebooks (tests/test_i18n.py holds it to the build), so the
    # Chinese documents link the Chinese notebooks; the book maps these links to its Chinese pages.
    if where == "root":
        if path in [f"docs/{d}" for d in LOCALIZED]:
            return f"docs/{lang}/{name}{tail}"
        if path == "README.zh-CN.md":
            return f"README.md{tail}"
        if re.fullmatch(r"notebooks/\d\d_[\w-]+\.ipynb", path):
            return f"notebooks/{lang}/{name}{tail}"
        return target
    if path in LOCALIZED:
        return target
    if re.fullmatch(r"\.\./notebooks/\d\d_[\w-]+\.ipynb", path):
        return f"../../notebooks/{lang}/{name}{tail}"
    return f"../{path}{tail}"


# A page of LOCALIZED named as a path in a code span (`docs/lab.md`: notebooks 11 and 12 cite the lab's page so)
_DOC_SPAN = re.compile(r"`docs/([\w-]+\.md)`")


def localize_links(text: str, lang: str, where: str) -> str:
    """Every link target of ``text`` rewritten by :func:`localize_link`, and every page of LOCALIZED that a code span
    names (`docs/lab.md`) named in ``lang`` (`docs/zh/lab.md`): the translation keeps the English's, the build
    writes the reader's language."""
    text = _MD_LINK.sub(lambda m: m.group(1) + localize_link(m.group(2), lang, where), text)
    return _DOC_SPAN.sub(lambda m: f"`docs/{lang}/{m.group(1)}`" if m.group(1) in LOCALIZED else m.group(0), text)


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
        f"{prev} · {nxt} · [中英术语表 glossary](../docs/glossary.md) · [记号表](../docs/notation.md) · "
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


# ----------------------------------------------------------------------------- the code cells' Chinese
#
# i18n/<lang>/code/<notebook stem>.md holds, for each code cell that prints words of its own, the whole cell with
# only its string literals and comments translated (the format: the file's header comment; tests/test_i18n_code.py
# holds every block to its English cell as a syntax tree with the strings and comments blanked). A cell without a
# block, or whose block is stale, runs as in English.

CODE_MARKER = re.compile(r"^<!-- cell: (\S+) en: ([0-9a-f]{8}) -->\n````python\n(.*?)\n````$", re.M | re.S)
LANGUAGE_CELL_ID = "zh-language"  # the generated notebook's first code cell: poslib writes its own words in Chinese
LANGUAGE_CELL = {
    "zh": "# poslib 自己的输出（检查结果、实验结论、练习反馈、控件文字）也用中文\n"
    "import poslib\n\n"
    'poslib.set_language("zh")'
}


def code_digest(source: str) -> str:
    """First 8 hex digits of the SHA-256 of an English code cell's source: what its Chinese block is keyed to."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:8]


def code_translation_path(notebook: Path, lang: str) -> Path:
    return I18N / lang / "code" / f"{notebook.stem}.md"


def read_code_blocks(path: Path) -> dict[str, tuple[str, str]]:
    """cell id → (English hash it translates, the translated cell source) of a code translation file."""
    if not path.is_file():
        return {}
    blocks: dict[str, tuple[str, str]] = {}
    for m in CODE_MARKER.finditer(path.read_text(encoding="utf-8")):
        if m.group(1) in blocks:
            raise ValueError(f"{path}: code cell {m.group(1)} has two blocks")
        blocks[m.group(1)] = (m.group(2), m.group(3))
    return blocks


def english_code_cells(notebook: Path) -> dict[str, str]:
    """cell id → source of every code cell of an English notebook."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return {
        c["id"]: "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code"
    }


def code_block_problems(notebook: Path, lang: str) -> list[str]:
    """A block for no code cell, or one whose English cell changed since it was translated (stale: the build
    leaves that cell in English until it is translated again)."""
    cells = english_code_cells(notebook)
    path = code_translation_path(notebook, lang)
    name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    out = []
    for cid, (h, _) in read_code_blocks(path).items():
        if cid not in cells:
            out.append(f"{name}: block {cid} translates no code cell (removed?)")
        elif h != code_digest(cells[cid]):
            out.append(
                f"{name}: code cell {cid} changed since it was translated "
                f"(English {code_digest(cells[cid])}, translated {h}): translate it again"
            )
    return out


def translated_code(notebook: Path, lang: str) -> dict[str, str]:
    """cell id → the Chinese source of each code cell whose block is current."""
    cells = english_code_cells(notebook)
    return {
        cid: text
        for cid, (h, text) in read_code_blocks(code_translation_path(notebook, lang)).items()
        if cid in cells and h == code_digest(cells[cid])
    }


class _Blanked(ast.NodeTransformer):
    """A syntax tree with every string constant blanked; each f-string becomes "" and its formatted values are
    collected (Chinese word order may move a field, so they are compared as a multiset)."""

    def __init__(self) -> None:
        self.fields: list[str] = []

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.copy_location(ast.Constant(""), node) if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                # the format spec as written (":.3f", ">9"): a translation keeps it
                spec = ast.dump(value.format_spec) if value.format_spec is not None else ""
                self.fields.append(f"{ast.dump(self.visit(value.value))} !{value.conversion} :{spec}")
        return ast.copy_location(ast.Constant(""), node)


def code_shape(source: str) -> tuple[str, collections.Counter[str]]:
    """What a translated code cell must keep of its English cell: the syntax tree with string constants and
    comments blanked (ast drops comments), and the multiset of f-string fields (expression, conversion, format
    spec). Identifiers, numbers, calls and control flow are in the tree."""
    blanked = _Blanked()
    tree = blanked.visit(ast.parse(source))
    return ast.dump(tree), collections.Counter(blanked.fields)


def code_literals(source: str) -> list[str]:
    """The string literals (f-strings whole) and comments of a code cell, as written: what a translation changes."""
    import io
    import tokenize

    kinds = {tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_START", -1)}
    out: list[str] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in kinds or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            out.append(tok.string)
    return out


GENERATED_LOG = ".generated.json"  # in the notebooks folder: file name → SHA-256 of the sources build wrote


def sources_digest(nb: Any) -> str:
    """SHA-256 of a notebook's cells (type, id, source), outputs left out: what build writes and the log records;
    executing the notebook does not change it, a student's edit does."""
    cells = [(c["cell_type"], c.get("id"), "".join(c["source"])) for c in nb["cells"]]
    return hashlib.sha256(json.dumps(cells, ensure_ascii=False).encode("utf-8")).hexdigest()


def build(lang: str, out: Path, documents: bool = True, force: bool = False) -> list[Path]:
    """Write the translated notebooks into ``out`` and (``documents``) the documents into docs/<lang>/ and the
    README beside the English one. Return the documents and the notebooks that need executing (a code cell changed,
    or did not run).

    A notebook's sources are written: translated markdown, code cells with their Chinese block (or the English
    code), and a first code cell that sets the language. Its outputs are made by executing it (``--execute``), never
    copied from English: a code cell whose source is what the notebook in ``out`` already holds keeps that cell's
    outputs, any other code cell is written without outputs.

    A notebook a student has changed since it was written (its sources differ from the ones recorded in
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
        target = out / path.name
        old = nbformat.read(target, as_version=4) if target.is_file() else None
        if old is not None and not force and path.name in log and sources_digest(old) != log[path.name]:
            print(f"kept {target.name}: changed since it was generated (--force overwrites it)")
            continue
        texts, code = translated_markdown(path, lang), translated_code(path, lang)
        ran = {c.get("id"): c for c in old.cells if c.cell_type == "code"} if old is not None else {}
        for cell in nb.cells:
            if cell.cell_type == "markdown" and cell.get("id") == "course-map":
                cell.source = localize_links(course_map_cell(index, nb, lang), lang, "notebooks")
            elif cell.cell_type == "markdown" and cell.get("id") == "notation" and zh_notation:
                cell.source = notation_cell(lang)
            elif cell.cell_type == "markdown" and cell.get("id") in texts:
                cell.source = texts[cell["id"]]
            elif cell.cell_type == "code":
                cell.source = code.get(cell.get("id"), cell.source)
        first = next(k for k, c in enumerate(nb.cells) if c.cell_type == "code")
        nb.cells.insert(first, nbformat.v4.new_code_cell(LANGUAGE_CELL[lang], id=LANGUAGE_CELL_ID))
        changed = False
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            before = ran.get(cell.get("id"))
            if before is not None and before.source == cell.source and before.execution_count is not None:
                cell.outputs, cell.execution_count = before.outputs, before.execution_count
            else:  # changed, or never run (a failed execution): to execute
                cell.outputs, cell.execution_count, changed = [], None, True
        nb.metadata["language"] = lang
        if old is not None:  # the kernel and widget metadata the last execution stored (scripts/run_notebooks.py)
            for key in ("kernelspec", "language_info", "widgets"):
                if key in old.metadata:
                    nb.metadata[key] = old.metadata[key]
                else:  # never the English notebook's: its widget state names the English run's models
                    nb.metadata.pop(key, None)
        nbformat.write(nb, target)
        log[path.name] = sources_digest(nb)
        if changed:
            written.append(target)
    log_path.write_text(json.dumps(log, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return written


def execute(notebooks: list[Path]) -> list[str]:
    """Run each notebook top to bottom in a fresh kernel and store its outputs (scripts/run_notebooks.py); the
    notebook's first cell sets its language, so POSLIB_LANG is not passed on. Returns the ones that failed."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import run_notebooks

    os.environ.pop("POSLIB_LANG", None)
    failed = []
    for path in notebooks:
        print(f"{path.relative_to(ROOT)!s:50s}", end=" ", flush=True)
        try:
            print(f"{run_notebooks.run(path, 900):6.1f} s", flush=True)
        except Exception as err:  # keep going so one broken notebook does not hide the others
            print(f"FAILED: {type(err).__name__}: …{str(err)[-600:]}", flush=True)  # the error is at the end
            failed.append(path.name)
    return failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["status", "skeleton", "check", "show", "build", "typeset"])
    parser.add_argument("--out", type=Path, default=ROOT / "notebooks" / "zh", help="build: notebooks folder")
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--lang", default="zh", choices=LANGS)
    parser.add_argument("--update", action="store_true", help="skeleton: re-key stale blocks, keeping their text")
    parser.add_argument("--force", action="store_true", help="build: overwrite notebooks changed since generated")
    parser.add_argument(
        "--execute",
        action="store_true",
        help="build: then execute the notebooks whose code changed, or the ones named (08_extrapolation_lab.ipynb)",
    )
    parser.add_argument("--all", action="store_true", help="build --execute: execute every generated notebook")
    args = parser.parse_intermixed_args()  # build --execute 08_extrapolation_lab.ipynb: options among the names
    if args.command == "typeset":
        for path in [p.resolve() for p in args.paths] or sorted((I18N / args.lang).rglob("*.md")):
            text, joined, edits = typeset(path.read_text(encoding="utf-8"))
            if joined or edits:
                path.write_text(text, encoding="utf-8")
                print(f"{path.relative_to(ROOT)}: {joined} line breaks joined, {edits} spacing edits")
        return 0
    paths = [p.resolve() for p in args.paths] or sources()
    if args.command == "build":
        out = args.out.resolve()
        written = build(args.lang, out, force=args.force)
        notebooks = [p for p in written if p.suffix == ".ipynb"]
        print(f"wrote the documents and notebooks; code changed in: {', '.join(p.name for p in notebooks) or 'none'}")
        if args.execute:
            if args.all:
                notebooks = sorted(out.glob("[0-9][0-9]_*.ipynb"))
            elif args.paths:
                notebooks = [out / p.name for p in args.paths]
            failed = execute(notebooks)
            if failed:
                print(f"failed: {', '.join(failed)}")
                return 1
        elif notebooks:
            print("their outputs are empty until they run: python scripts/i18n.py build --execute")
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
