"""docs/questions.md and docs/zh/questions.md (issue 43): every question of the two sources, in their order, each
answered with a link to the notebook section that derives and checks it.

Held here: both pages ask the same questions in the sources' order and link the same cells; every link names a
notebook cell that opens a section (a markdown heading), in the English notebooks for the English page and in
the Chinese notebooks (notebooks/zh/, built from i18n/zh/) for the Chinese one, which links nothing else; a
link's label names the section it opens ("05 §2.5" is a cell whose heading is §2.5, "05 · Models that use RoPE,
and their base" one with that heading, in the page's language); every number an answer states is written or
printed in a section it links (the Chinese page's numbers in the English sections and in the Chinese ones:
notebooks/zh/, in git); the Chinese page keeps the edition's terms; and both READMEs link their page.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from i18n_script import ROOT, i18n

PAGES = {"en": ROOT / "docs" / "questions.md", "zh": ROOT / "docs" / "zh" / "questions.md"}
NOTEBOOK_LINK = {
    "en": re.compile(r"\.\./notebooks/(\d\d_[\w-]+\.ipynb)#cell-id=([\w-]+)$"),
    "zh": re.compile(r"\.\./\.\./notebooks/zh/(\d\d_[\w-]+\.ipynb)#cell-id=([\w-]+)$"),
}
LINK = re.compile(r"\[([^\[\]\n]+)\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$")
QUESTION = re.compile(r"^### (00[01] §[^·]+?) · ", re.M)
SU_SECTION = '<a id="su-notation"></a>'

# Every question of the sources, in their order: 000's numbered sections, then 001's sections and tables.
QUESTIONS = [
    "000 §动机", "000 §一", "000 §二", "000 §三", "000 §3.1.1", "000 §3.1.2", "000 §3.1.3", "000 §3.1.4",
    "000 §3.2.1", "000 §3.2.2", "000 §四", "000 §5.1", "000 §5.2", "000 §5.3", "000 §5.4", "000 §6.1", "000 §6.2",
    "000 §7.1", "000 §7.2", "000 §7.3", "000 §7.4",
    "001 §一", "001 §二.1–3", "001 §二.4", "001 §三.1–2", "001 §三.3(1)", "001 §三.3(2)", "001 §三.3(3)",
    "001 §三.3(4)", "001 §三 总结对比表", "001 §三 绝对与相对对比", "001 §四.1", "001 §四.2–3", "001 §四.4",
    "001 §四 优势", "001 §四 应用",
]  # fmt: skip


def text(lang: str) -> str:
    return PAGES[lang].read_text(encoding="utf-8")


def questions(lang: str) -> dict[str, str]:
    """{question tag: its heading and answer, up to the next question} of a page's question part."""
    body = text(lang).split(SU_SECTION)[0]
    starts = list(QUESTION.finditer(body))
    return {
        m.group(1): body[m.start() : starts[k + 1].start() if k + 1 < len(starts) else len(body)]
        for k, m in enumerate(starts)
    }


def notebook_links(lang: str, markdown: str) -> list[tuple[str, str, str]]:
    """(label, notebook file, cell id) of every link into a notebook; fails on a link into a notebook in the
    other language's form."""
    found = []
    for label, target in LINK.findall(markdown):
        if ".ipynb" not in target:
            continue
        m = NOTEBOOK_LINK[lang].match(target)
        assert m, f"{PAGES[lang].relative_to(ROOT)}: {target} is not a {lang} notebook link (…#cell-id=<id>)"
        found.append((label, m.group(1), m.group(2)))
    return found


ENGLISH_NOTEBOOKS = ROOT / "notebooks"
CHINESE_NOTEBOOKS = ROOT / "notebooks" / "zh"  # python scripts/i18n.py build; in git


@cache
def cells(name: str, folder: Path = ENGLISH_NOTEBOOKS) -> list[dict[str, Any]]:
    return json.loads((folder / name).read_text(encoding="utf-8"))["cells"]


@cache
def chinese_markdown(name: str) -> dict[str, str]:
    """cell id → the markdown of the Chinese notebook as build writes it (translations, and 01's notation cell)."""
    out = dict(i18n.translated_markdown(ROOT / "notebooks" / name, "zh"))
    if name.startswith("01_"):
        out["notation"] = i18n.notation_cell("zh")
    return out


def headings(markdown: str) -> list[str]:
    found, fenced = [], False
    for line in markdown.splitlines():
        fenced ^= line.startswith("```")
        m = None if fenced else HEADING.match(line)
        if m:
            found.append(m.group(1))
    return found


def source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def section(name: str, cell_id: str, folder: Path = ENGLISH_NOTEBOOKS) -> str:
    """The section a cell opens: its cells up to the next markdown cell with a heading, code and outputs included
    (in the English notebooks, or in the notebooks of ``folder``)."""
    all_cells = cells(name, folder)
    start = next(k for k, c in enumerate(all_cells) if c.get("id") == cell_id)
    parts = []
    for k, c in enumerate(all_cells[start:]):
        if k and c["cell_type"] == "markdown" and headings(source(c)):
            break
        parts.append(source(c))
        for out in c.get("outputs", []):
            for value in (out.get("text"), out.get("data", {}).get("text/plain")):
                if value:
                    parts.append("".join(value) if isinstance(value, list) else value)
    return "\n".join(parts)


def numbers(answer: str) -> list[str]:
    """The numbers an answer states in its prose: not in formulas, code, link labels, headings, section
    references (§5.3), the sources' names (000, 001), notebook numbers or model names (MPT-7B, Qwen2.5)."""
    prose = "\n".join(line for line in answer.splitlines() if not line.startswith("#"))
    prose = re.sub(r"\$\$.+?\$\$|\$[^$]+\$|`[^`]*`", " ", prose, flags=re.S)
    prose = LINK.sub(" ", prose)
    prose = re.sub(r"§\s*[\w.()–-]+|\b00[01]\b|(?:[Nn]otebook|笔记本)\s*\d+|「[^」]*」", " ", prose)
    token = r"\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?(?:e-?\d+)?"
    return re.findall(rf"(?<![\w.\-/\d])(?:{token})(?![\w\d]|\.\d)", prose)


def test_both_pages_ask_every_question_in_the_sources_order() -> None:
    for lang in PAGES:
        assert list(questions(lang)) == QUESTIONS, f"{PAGES[lang].relative_to(ROOT)}: questions or their order"
        # 000 §5.3's first advantage, named as the source words it (issue 43)
        assert "通过绝对位置编码的方式实现了相对位置编码" in questions(lang)["000 §5.3"]


def link_problems(lang: str, markdown: str) -> tuple[int, list[str]]:
    """(links checked, one line per link that does not open the section its label names)."""
    problems, checked = [], 0
    for label, name, cell_id in notebook_links(lang, markdown):
        checked += 1
        by_id = {c["id"]: c for c in cells(name)}
        if cell_id not in by_id or by_id[cell_id]["cell_type"] != "markdown":
            problems.append(f"{name}#cell-id={cell_id}: no such markdown cell ({label})")
            continue
        markdown_text = source(by_id[cell_id]) if lang == "en" else chinese_markdown(name).get(cell_id, "")
        heads = headings(markdown_text)
        number = re.match(rf"{name[:2]} §([\d.]+)$", label)
        named = re.match(rf"{name[:2]} · (.+)$", label)
        if not heads:
            problems.append(f"{name}#cell-id={cell_id}: the cell opens no section in {lang} ({label})")
        elif not (number or named):
            problems.append(f"label {label!r}: write '{name[:2]} §N.N' or '{name[:2]} · <the heading>'")
        elif number and not any(re.match(rf"{re.escape(number.group(1))}[ ·]", h) for h in heads):
            problems.append(f"{name}#cell-id={cell_id} has no heading §{number.group(1)}: {heads}")
        elif named and named.group(1) not in heads:
            problems.append(f"{name}#cell-id={cell_id}: {named.group(1)!r} is not one of its headings {heads}")
    return checked, problems


@pytest.mark.parametrize("lang", PAGES)
def test_every_link_opens_a_notebook_section(lang: str) -> None:
    """Each notebook link names a cell that exists and opens a section, and its label names that section."""
    checked, problems = link_problems(lang, text(lang))
    assert checked > 60, checked
    assert not problems, "\n".join(problems)


def test_the_link_check_catches_a_wrong_link() -> None:
    rope = "../notebooks/05_rope.ipynb#cell-id="
    for wrong in (
        f"[05 §2.6]({rope}rope-deriv-rel)",  # the cell opens §2.5
        f"[05 · Takeaways]({rope}rope-deriv-rel)",  # not its heading
        f"[05 §2.5]({rope}no-such-cell)",
        f"[05 §2.5]({rope}c8497133)",  # a code cell
        f"[05 §4]({rope}fa0e223e)",  # a markdown cell inside §4 that opens no section
        f"[06 §2.5]({rope}rope-deriv-rel)",  # the label names another notebook
    ):
        checked, problems = link_problems("en", wrong)
        assert checked == 1 and len(problems) == 1, (wrong, problems)
    assert link_problems("zh", "[05 §2.5](../../notebooks/zh/05_rope.ipynb#cell-id=rope-deriv-rel)") == (1, [])
    with pytest.raises(AssertionError, match="not a zh notebook link"):
        link_problems("zh", f"[05 §2.5]({rope}rope-deriv-rel)")


def test_the_chinese_page_links_the_chinese_notebooks_only() -> None:
    targets = [t for _, t in LINK.findall(text("zh"))]
    notebooks = [t for t in targets if ".ipynb" in t]
    assert notebooks and all(t.startswith("../../notebooks/zh/") for t in notebooks), notebooks
    assert not [t for t in targets if t.startswith("../notebooks/") or "notebooks/0" in t.split("zh/")[0]]
    # and the English page links the English notebooks only
    assert all(t.startswith("../notebooks/") and "/zh/" not in t for _, t in LINK.findall(text("en")) if ".ipynb" in t)


def test_both_pages_link_the_same_sections_for_each_question() -> None:
    en, zh = questions("en"), questions("zh")
    for tag in QUESTIONS:
        en_cells = [(n, c) for _, n, c in notebook_links("en", en[tag])]
        zh_cells = [(n, c) for _, n, c in notebook_links("zh", zh[tag])]
        assert en_cells, f"{tag}: no link to the cell that derives and checks the answer"
        assert en_cells == zh_cells, f"{tag}: the two pages link different sections"
    su = [(n, c) for lang in PAGES for _, n, c in notebook_links(lang, text(lang).split(SU_SECTION)[1])]
    assert su[: len(su) // 2] == su[len(su) // 2 :], "the two Su tables link different sections"


def number_problems(lang: str, tag: str, answer: str, folder: Path = ENGLISH_NOTEBOOKS) -> tuple[int, list[str]]:
    """(numbers stated, one line per number that no section the answer links writes or prints), the sections
    read in the English notebooks or in those of ``folder``."""
    linked = "\n".join(section(n, c, folder) for _, n, c in notebook_links(lang, answer))
    stated = numbers(answer)
    missing = [n for n in stated if not re.search(rf"(?<![\d.]){re.escape(n)}(?![\d])", linked)]
    where = "" if folder == ENGLISH_NOTEBOOKS else f" of {folder.name}/"
    return len(stated), [f"{tag}: {n} is not in the sections{where} it links" for n in missing]


@pytest.mark.parametrize("lang", PAGES)
def test_every_number_is_in_a_section_the_answer_links(lang: str) -> None:
    stated, problems = 0, list[str]()
    for tag, answer in questions(lang).items():
        count, found = number_problems(lang, tag, answer)
        stated, problems = stated + count, problems + found
    assert stated > 100, stated
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def chinese_notebooks() -> Path:
    """The Chinese notebooks a reader of the Chinese page opens: notebooks/zh/, in git (tests/test_i18n.py holds
    it to what python scripts/i18n.py build writes now)."""
    return CHINESE_NOTEBOOKS


def test_every_number_of_the_chinese_page_is_in_the_chinese_sections_it_links(chinese_notebooks: Path) -> None:
    """The Chinese page links the Chinese notebooks: its numbers must be written or printed there too, in the
    translated markdown and the outputs as build stores them."""
    stated, problems = 0, list[str]()
    for tag, answer in questions("zh").items():
        count, found = number_problems("zh", tag, answer, chinese_notebooks)
        stated, problems = stated + count, problems + found
    assert stated > 100, stated
    assert not problems, "\n".join(problems)
    # and the check reads the Chinese sections: a number they do not state is caught
    verdicts = "[08 · 对原教程论断的结论](../../notebooks/zh/08_extrapolation_lab.ipynb#cell-id="
    verdicts += "504fb2a444614c0babb325280ed9130a)"
    assert number_problems("zh", "t", f"困惑度增长 ×2.47。{verdicts}", chinese_notebooks) == (1, [])
    assert number_problems("zh", "t", f"困惑度增长 ×2.93。{verdicts}", chinese_notebooks)[1]


def test_the_number_check_catches_a_number_the_section_does_not_state() -> None:
    verdicts = "[08 · Verdicts on the sources' claims](../notebooks/08_extrapolation_lab.ipynb#cell-id="
    verdicts += "504fb2a444614c0babb325280ed9130a)"
    assert number_problems("en", "t", f"RoPE's growth ×2.47 at 8× the length. {verdicts}") == (2, [])
    assert number_problems("en", "t", f"RoPE's growth ×2.93 at 8× the length. {verdicts}")[1]


def test_the_number_reader_skips_what_is_not_a_stated_number() -> None:
    answer = (
        "### 000 §5.3 · q\n\nAt 8× the length (§3.1.4, 000, notebook 06, MPT-7B, `gpt2` 1024) growth ×2.39 and "
        "$L = 512$; 12,880 pairs, 3.4e-04 beyond, [05 §7](x), 「有限桶 91」, 47,117 tokens.\n"
    )
    assert numbers(answer) == ["8", "1024", "2.39", "12,880", "3.4e-04", "47,117"]
