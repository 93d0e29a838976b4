"""docs/faq.md and docs/zh/faq.md (issue 44 item 7): ten questions practitioners ask in issue trackers, each
with its thread and a link to the notebook cell that settles it by a check.

Held here: both pages ask the ten questions in the same order; every link into a notebook names a cell that
exists and checks (a code cell that asserts or calls check(), not prose), in the English notebooks for the
English page and in the Chinese notebooks (notebooks/zh/, whose cells keep the English ids: tests/test_i18n.py)
for the Chinese one, which links nothing else; for each question both pages link the same cells, cite the same
threads and name the same unit tests, and every unit test they name exists; each question cites the thread the
issue names, or says it is not confirmed; the Chinese page keeps the edition's terms and typography; both
READMEs link their page, and scripts/i18n.py localizes it.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import pytest
from i18n_script import ROOT

PAGES = {"en": ROOT / "docs" / "faq.md", "zh": ROOT / "docs" / "zh" / "faq.md"}
NOTEBOOK_LINK = {
    "en": re.compile(r"\.\./notebooks/(\d\d_[\w-]+\.ipynb)#cell-id=([\w-]+)$"),
    "zh": re.compile(r"\.\./\.\./notebooks/zh/(\d\d_[\w-]+\.ipynb)#cell-id=([\w-]+)$"),
}
LINK = re.compile(r"\[([^\[\]\n]+)\]\(([^)\s]+)\)")
QUESTION = re.compile(r"^## (\d+) · ", re.M)
THREAD = re.compile(r"https://github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)")
UNIT_TEST = re.compile(r"`tests/(test_\w+\.py)::(test_\w+)`")

# The thread issue 44 names for each question (repository, number), or None where the page must say it was
# not found (question 6: vllm #30384 and transformers #48242, which the issues search does not hold).
THREADS = {
    1: ("vllm-project/vllm", "28542"),
    2: ("NVIDIA/Megatron-LM", "1429"),
    3: ("huggingface/transformers", "25199"),
    4: ("huggingface/transformers", "29285"),
    5: ("vllm-project/vllm", "18728"),
    6: None,
    7: ("huggingface/transformers", "25104"),
    8: ("huggingface/transformers", "40490"),
    9: ("pytorch/executorch", "19235"),
    10: ("sgl-project/sglang", "13495"),
}
# (a thread confirmed, the named thread not found, the threads found instead confirmed)
CONFIRMED = {"en": ("Confirmed", "not confirmed", "Found and confirmed"), "zh": ("已核实", "未核实", "找到并已核实")}


def text(lang: str) -> str:
    return PAGES[lang].read_text(encoding="utf-8")


def questions(lang: str) -> dict[int, str]:
    """{question number: its heading and everything up to the next question}."""
    body = text(lang)
    starts = list(QUESTION.finditer(body))
    return {
        int(m.group(1)): body[m.start() : starts[k + 1].start() if k + 1 < len(starts) else len(body)]
        for k, m in enumerate(starts)
    }


@cache
def cells(name: str) -> dict[str, dict[str, Any]]:
    nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    return {c["id"]: c for c in nb["cells"] if c.get("id")}


def source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def notebook_links(lang: str, markdown: str) -> list[tuple[str, str]]:
    """(notebook file, cell id) of every link into a notebook; fails on a link in the other language's form."""
    found = []
    for _, target in LINK.findall(markdown):
        if ".ipynb" not in target:
            continue
        m = NOTEBOOK_LINK[lang].match(target)
        assert m, f"{PAGES[lang].relative_to(ROOT)}: {target} is not a {lang} notebook link (…#cell-id=<id>)"
        found.append((m.group(1), m.group(2)))
    return found


def link_problems(lang: str, markdown: str) -> tuple[int, list[str]]:
    """(links checked, one line per link that does not name an existing cell that checks)."""
    problems, checked = [], 0
    for name, cell_id in notebook_links(lang, markdown):
        checked += 1
        if not (ROOT / "notebooks" / name).is_file():
            problems.append(f"{name}: no such notebook")
            continue
        cell = cells(name).get(cell_id)
        if cell is None:
            problems.append(f"{name}#cell-id={cell_id}: no such cell")
        elif cell["cell_type"] != "code":
            problems.append(f"{name}#cell-id={cell_id}: a {cell['cell_type']} cell, not a check")
        elif not re.search(r"\bassert\b|\bcheck\(", source(cell)):
            problems.append(f"{name}#cell-id={cell_id}: a code cell that neither asserts nor calls check()")
    return checked, problems


def test_both_pages_ask_the_ten_questions_in_order() -> None:
    for lang in PAGES:
        assert list(questions(lang)) == list(range(1, 11)), f"{PAGES[lang].relative_to(ROOT)}: questions or order"


@pytest.mark.parametrize("lang", PAGES)
def test_every_link_names_a_cell_that_checks(lang: str) -> None:
    checked, problems = link_problems(lang, text(lang))
    assert checked >= 10, checked
    assert not problems, "\n".join(problems)


def test_the_link_check_catches_a_wrong_link() -> None:
    rope = "../notebooks/05_rope.ipynb#cell-id="
    for wrong in (
        f"[05 §8]({rope}no-such-cell)",
        f"[05 §8]({rope}82da6944)",  # the markdown cell that opens §8: prose, not a check
        f"[05 §8]({rope}bb306ed7)",  # a code cell that only draws a figure
        "[99](../notebooks/99_none.ipynb#cell-id=x)",
    ):
        checked, problems = link_problems("en", wrong)
        assert checked == 1 and len(problems) == 1, (wrong, problems)
    assert link_problems("zh", "[05 §8](../../notebooks/zh/05_rope.ipynb#cell-id=b456c8b8)") == (1, [])
    with pytest.raises(AssertionError, match="not a zh notebook link"):
        link_problems("zh", f"[05 §8]({rope}b456c8b8)")


def test_the_chinese_page_links_the_chinese_notebooks_only() -> None:
    zh = [t for _, t in LINK.findall(text("zh")) if ".ipynb" in t]
    assert zh and all(t.startswith("../../notebooks/zh/") for t in zh), zh
    en = [t for _, t in LINK.findall(text("en")) if ".ipynb" in t]
    assert en and all(t.startswith("../notebooks/") and "/zh/" not in t for t in en), en


def test_both_pages_say_the_same_for_each_question() -> None:
    en, zh = questions("en"), questions("zh")
    for k in en:
        en_cells, zh_cells = notebook_links("en", en[k]), notebook_links("zh", zh[k])
        assert en_cells == zh_cells, f"question {k}: the two pages link different cells"
        assert sorted(set(THREAD.findall(en[k]))) == sorted(set(THREAD.findall(zh[k]))), (
            f"question {k}: the two pages cite different threads"
        )
        assert UNIT_TEST.findall(en[k]) == UNIT_TEST.findall(zh[k]), f"question {k}: different unit tests named"
        assert en_cells or UNIT_TEST.findall(en[k]), f"question {k}: neither a checking cell nor a unit test"


def test_every_named_unit_test_exists() -> None:
    named = {m for lang in PAGES for m in UNIT_TEST.findall(text(lang))}
    assert named
    for file, name in sorted(named):
        path = ROOT / "tests" / file
        assert path.is_file(), f"tests/{file} does not exist"
        assert re.search(rf"^def {name}\(", path.read_text(encoding="utf-8"), re.M), f"tests/{file}::{name}"


@pytest.mark.parametrize("lang", PAGES)
def test_each_question_cites_its_thread_or_says_it_is_not_confirmed(lang: str) -> None:
    confirmed, not_confirmed, found_instead = CONFIRMED[lang]
    for k, answer in questions(lang).items():
        answer = " ".join(answer.split())  # a phrase may wrap across lines
        threads = set(THREAD.findall(answer))
        assert threads, f"question {k}: no thread"
        if THREADS[k] is None:
            assert not_confirmed in answer and found_instead in answer, f"question {k}: say what was not found"
            assert "#30384" in answer and "#48242" in answer, f"question {k}: name the threads not found"
        else:
            assert THREADS[k] in threads, f"question {k}: {THREADS[k]} is not cited"
            assert confirmed in answer, f"question {k}: the thread is not marked {confirmed!r}"
