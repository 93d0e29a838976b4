"""The translation check sees numbers in every form (issue 36): superscript exponents, signs in prose, Chinese
number, fraction and magnitude words, "×/倍/%" against the English's digits and words (scripts/i18n.py,
compare_numbers). Each kind of change a reviewer planted is caught in a real block, naming it; the block as
committed passes; Chinese words that only hold a numeral character (一些, 统一, 之一, 十分 "very") are no numbers.
"""

from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path

import pytest
from i18n_script import ROOT, i18n

# (notebook, cell, what the committed Chinese says, the planted change, the complaint)
PLANTS = [
    ("05_rope", "22496d58", "10⁴ 提高到 10⁶", "10⁴ 提高到 10⁵", "numbers differ"),  # superscript exponent
    ("05_rope", "b4f36d9b", "相差 8", "相差 -8", "numbers differ"),  # a sign in prose
    ("05_rope", "b4f36d9b", "相差 8", "相差 −8", "numbers differ"),  # the same with a minus sign
    ("06_length_extrapolation", "c4e7a1d2", "七分之一", "五分之一", "number words differ"),  # a fraction word
    ("05_rope", "0be81a67", "数千", "数百", "number words differ"),  # a magnitude word
    ("11_extending_a_trained_model", "three-ways-md", "十分之九", "十分之八", "number words differ"),
    ("10_learned_and_contextual_positions", "4de4bbf3", "的两倍", "的三倍", "number words differ"),  # 倍
]


def _block(notebook: str, cell: str) -> tuple[i18n.Unit, str]:
    path = ROOT / "notebooks" / f"{notebook}.ipynb"
    unit = next(u for u in i18n.english_units(path) if u.id == cell)
    return unit, i18n.read_blocks(i18n.translation_path(path, "zh"))[cell][1]


@pytest.mark.parametrize(("notebook", "cell", "old", "new", "complaint"), PLANTS, ids=lambda v: str(v))
def test_a_planted_number_change_fails_naming_the_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, notebook: str, cell: str, old: str, new: str, complaint: str
) -> None:
    unit, text = _block(notebook, cell)
    assert old in text, f"the committed block {cell} no longer says {old!r}: choose another block to plant in"
    assert i18n.compare_numbers(i18n._strip(unit.source)[3], i18n._strip(text)[3]) == [], "unplanted block fails"
    # the planted file, read by the check where it reads translations
    (tmp_path / "zh").mkdir()
    source = i18n.I18N / "zh" / f"{notebook}.md"
    planted = tmp_path / "zh" / source.name
    shutil.copy(source, planted)
    whole = planted.read_text(encoding="utf-8")
    planted.write_text(whole.replace(text, text.replace(old, new, 1), 1), encoding="utf-8")
    monkeypatch.setattr(i18n, "I18N", tmp_path)
    problems = i18n.problems_of(ROOT / "notebooks" / f"{notebook}.ipynb", "zh")
    assert any(f"cell {cell}: {complaint}" in p for p in problems), problems


@pytest.mark.parametrize(
    ("english", "translated"),
    [
        ("It grows to twice the length.", "它增长到两倍的长度。"),
        ("It grows to twice the length.", "它增长到 2 倍的长度。"),
        ("It grows 2× longer.", "它变长到两倍。"),
        ("The pair reaches a seventh of its arc.", "这一对走到其弧段的七分之一。"),
        ("The pair reaches one in seven of its arc.", "这一对走到其弧段的七分之一。"),
        ("The pair reaches 1/7 of its arc.", "这一对走到其弧段的七分之一。"),
        ("Nearly nine in ten pairs.", "将近十分之九的对。"),
        ("The fastest turn thousands of radians.", "最快的转过数千弧度。"),
        ("A few hundred steps of Adam.", "几百步 Adam。"),
        ("Base 10⁶ and offset −8.", "底数 10⁶，偏移 -8。"),
        ("Three seeds, 5 % of the keys.", "三个种子，百分之五的键。"),
        ("A million positions.", "一百万个位置。"),
        ("It takes about a quarter of an hour.", "大约要一刻钟。"),
        ("Pairs 2 and 3 turn; the rest are zeros.", "第 2 和第 3 对转动；其余都是零。"),
    ],
)
def test_the_same_number_in_another_form_passes(english: str, translated: str) -> None:
    assert i18n.compare_numbers(english, translated) == []


@pytest.mark.parametrize(
    ("english", "translated", "complaint"),
    [
        ("It grows to twice the length.", "它增长到三倍的长度。", "number words differ"),
        ("It grows to twice the length.", "它增长到 3 倍的长度。", "numbers differ"),
        ("The pair reaches a seventh of its arc.", "这一对走到其弧段的五分之一。", "number words differ"),
        ("The pair reaches a seventh of its arc.", "这一对走到其弧段。", "number words differ"),  # dropped
        ("The fastest turn thousands of radians.", "最快的转过数百弧度。", "number words differ"),
        ("Base 10⁶.", "底数 10⁵。", "numbers differ"),
        ("Base 10⁶.", "底数 10。", "numbers differ"),
        ("They differ by 8.", "它们相差-8。", "numbers differ"),
        ("Three seeds.", "四个种子。", "number words differ"),
        ("Take 5 % of the keys.", "取百分之六的键。", "numbers differ"),
    ],
)
def test_a_changed_number_in_any_form_is_caught(english: str, translated: str, complaint: str) -> None:
    problems = i18n.compare_numbers(english, translated)
    assert any(complaint in p for p in problems), problems


def test_a_hyphen_after_a_word_or_a_digit_is_no_sign():
    assert [f for f, _ in i18n.number_tokens("top-3, RoPE-2D, 1-5, x−1, (−3.1, 相差-8")] == [
        "3", "2", "1", "5", "1", "-3.1", "-8",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "words",
    ["一些", "一样", "统一", "唯一", "一起", "之一", "万一", "十分重要", "一致", "一般", "三角函数", "百分点", "一个"],
)
def test_chinese_words_that_are_not_numbers_are_not_read(words: str) -> None:
    assert i18n.zh_quantities(f"在这里{words}的位置") == []


def test_chinese_numbers_are_read_with_their_values():
    read = dict(i18n.zh_quantities("三个、十二篇、两千、一百万、七分之一、十分之九、百分之五、数千、几百、两倍、一半"))
    assert read == {
        "三": ("n", Fraction(3)),
        "十二": ("n", Fraction(12)),
        "两千": ("n", Fraction(2000)),
        "一百万": ("n", Fraction(10**6)),
        "七分之一": ("n", Fraction(1, 7)),
        "十分之九": ("n", Fraction(9, 10)),
        "百分之五": ("n", Fraction(5)),
        "数千": ("~", 1000),
        "几百": ("~", 100),
        "两倍": ("×", Fraction(2)),
        "一半": ("n", Fraction(1, 2)),
    }
    # 十分 is "very", except as a fraction; 之一 is "one of", except in one
    assert i18n.zh_quantities("十分之一是其中之一，十分小") == [("十分之一", ("n", Fraction(1, 10)))]
