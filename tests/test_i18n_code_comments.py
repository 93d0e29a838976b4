"""Code blocks in the Chinese edition: the code is the English's, its `#` comments may be Chinese (issue 36).

README.zh-CN.md's commands carry Chinese comments; scripts/i18n.py's check compares a fenced shell or Python
block line by line with each comment only marked (code_key), so a changed command, a dropped comment or a changed
number in a comment is still caught. An inline code span that the English wraps over two lines is the same span
on one line (markdown renders the break as a space).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from i18n_script import ROOT, i18n

CJK = re.compile(r"[\u4e00-\u9fff]")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)

ENGLISH = """Restore it:

```bash
git restore notebooks/05_rope.ipynb    # one notebook (older git: git checkout -- notebooks/05_rope.ipynb)
python -c "print('a # b')"             # a hash in quotes is code
```
"""
CHINESE = """恢复它：

```bash
git restore notebooks/05_rope.ipynb    # 恢复一个笔记本（旧版 git：git checkout -- notebooks/05_rope.ipynb）
python -c "print('a # b')"             # 引号里的井号是代码
```
"""


def _comments(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    out = []
    for lang, body in FENCE.findall(text):
        if lang in i18n.HASH_COMMENTS:
            out += [line[at:] for line in body.splitlines() if (at := i18n._comment_start(line)) is not None]
    return out


def test_readme_zh_comments_are_chinese_and_its_code_is_the_englishs() -> None:
    comments = _comments(ROOT / "README.zh-CN.md")
    assert len(comments) == len(_comments(ROOT / "README.md")) >= 8
    assert all(CJK.search(c) for c in comments), [c for c in comments if not CJK.search(c)]
    english = [
        i18n.code_key("```", f"{lang}\n{body}")[0]
        for lang, body in FENCE.findall(ROOT.joinpath("README.md").read_text())
    ]
    chinese = [
        i18n.code_key("```", f"{lang}\n{body}")[0]
        for lang, body in FENCE.findall(ROOT.joinpath("README.zh-CN.md").read_text())
    ]
    assert chinese == english


def test_a_translated_comment_passes() -> None:
    assert i18n.compare(ENGLISH, CHINESE) == []


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ("git restore notebooks/05_rope.ipynb ", "git restore notebooks/06_rope.ipynb ", "code spans differ"),
        ("print('a # b')", "print('a # c')", "code spans differ"),
        ("    # 恢复一个笔记本（旧版 git：git checkout -- notebooks/05_rope.ipynb）", "", "code spans differ"),
        ("git checkout -- notebooks/05_rope.ipynb）", "git checkout -- notebooks/06_rope.ipynb）", "numbers differ"),
    ],
)
def test_a_change_to_the_code_or_a_comments_number_is_caught(old: str, new: str, complaint: str) -> None:
    assert CHINESE.count(old) == 1
    problems = i18n.compare(ENGLISH, CHINESE.replace(old, new))
    assert any(complaint in p for p in problems), problems


def test_a_block_in_another_language_is_compared_whole() -> None:
    english = "Output:\n\n```text\nok  # measured\n```\n"
    assert i18n.compare(english, "输出：\n\n```text\nok  # 测得\n```\n")


def test_an_inline_code_span_wrapped_by_the_english_is_one_span() -> None:
    english = "Run `python -m poslib.lab --steps 1000\n--seeds 0,1,2` first."
    assert i18n.compare(english, "先运行 `python -m poslib.lab --steps 1000 --seeds 0,1,2`。") == []
    assert i18n.compare(english, "先运行 `python -m poslib.lab --steps 1000 --seeds 0,1`。")
