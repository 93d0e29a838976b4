"""The reference pages that have a Chinese twin (docs/X.md and docs/zh/X.md): the Chinese page keeps the edition's
terms and typography, and each page is linked from where a reader starts (the READMEs, or docs/lab.md).

Each page's own content (questions in the sources' order, threads, links to checking cells) is tested beside it:
tests/test_questions.py, tests/test_faq.py.
"""

from __future__ import annotations

import re

import pytest
from i18n_script import ROOT, i18n
from test_i18n_terms import TERMS, chinese_text

# page -> (where the English page is linked, where the Chinese page is linked)
PAGES = {
    "questions": ("README.md", "README.zh-CN.md"),
    "faq": ("README.md", "README.zh-CN.md"),
    "literature": ("docs/lab.md", None),  # docs/lab.md has no Chinese page yet (issue 46)
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_chinese_page_keeps_the_editions_terms_and_typography(page: str) -> None:
    path = ROOT / "docs" / "zh" / f"{page}.md"
    found = [f"{concept}: {m.group(0)!r} (use {form})" for concept, (form, others) in TERMS.items()
             for m in re.finditer(others, chinese_text(path))]  # fmt: skip
    assert not found, "\n".join(found)
    assert not i18n.typography_problems(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_page_is_linked_and_its_links_go_to_its_twin(page: str) -> None:
    english_home, chinese_home = PAGES[page]
    en = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
    zh = (ROOT / "docs" / "zh" / f"{page}.md").read_text(encoding="utf-8")
    home = ROOT / english_home
    target = f"docs/{page}.md" if home.parent == ROOT else f"{page}.md"
    assert f"]({target})" in home.read_text(encoding="utf-8"), f"{english_home} does not link {target}"
    if chinese_home is not None:
        assert f"](docs/zh/{page}.md)" in (ROOT / chinese_home).read_text(encoding="utf-8")
    assert f"{page}.md" in i18n.LOCALIZED
    assert i18n.localize_link(f"docs/{page}.md", "zh", "root") == f"docs/zh/{page}.md"
    if page != "literature":  # the two question pages link each other's language
        assert f"](zh/{page}.md)" in en and f"](../{page}.md)" in zh
