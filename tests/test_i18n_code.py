"""The Chinese notebooks say what they print in their own code (issue 46 item 3).

Each code cell of the Chinese edition that prints words of its own is its English cell with only the string literals
and comments in Chinese, from its block in i18n/zh/code/<notebook stem>.md (scripts/i18n.py build applies it). Held
here: every block translates the English cell as it is now (a stale block is listed, naming the cell); the syntax
tree is the English one once every string constant and comment is blanked, with the same f-string fields (as a
multiset: Chinese word order may move one); the Chinese literals keep the numbers, follow the edition's typography
and its term table; and what the executed Chinese notebooks print has no English sentence left outside a named list.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from i18n_script import ROOT, i18n
from test_i18n_terms import TERMS

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CJK = re.compile(r"[\u4e00-\u9fff]")


def _blocks() -> list:
    """(notebook, cell id, English source, Chinese source) of every current block (the build uses no other; a stale
    one is named by test_every_block_translates_its_english_cell_as_it_is_now)."""
    out = []
    for notebook in NOTEBOOKS:
        cells = i18n.english_code_cells(notebook)
        for cid, (h, chinese) in i18n.read_code_blocks(i18n.code_translation_path(notebook, "zh")).items():
            if cid in cells and h == i18n.code_digest(cells[cid]):
                out.append(pytest.param(notebook, cid, cells[cid], chinese, id=f"{notebook.stem[:2]}-{cid}"))
    return out


BLOCKS = _blocks()


def test_every_block_translates_its_english_cell_as_it_is_now() -> None:
    """An English edit makes the cell's block stale: the build then runs the English cell, and this names it."""
    problems = [p for notebook in NOTEBOOKS for p in i18n.code_block_problems(notebook, "zh")]
    assert not problems, "\n".join(problems)


def test_a_stale_or_orphan_block_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = ROOT / "notebooks" / "05_rope.ipynb"
    cid, source = next(iter(i18n.english_code_cells(notebook).items()))
    (tmp_path / "zh" / "code").mkdir(parents=True)
    (tmp_path / "zh" / "code" / "05_rope.md").write_text(
        f"<!-- cell: {cid} en: 00000000 -->\n````python\n{source}\n````\n\n"
        f"<!-- cell: gone en: {i18n.code_digest(source)} -->\n````python\n{source}\n````\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(i18n, "I18N", tmp_path)
    problems = i18n.code_block_problems(notebook, "zh")
    assert any(f"code cell {cid} changed since it was translated" in p for p in problems), problems
    assert any("block gone translates no code cell" in p for p in problems), problems
    assert i18n.translated_code(notebook, "zh") == {}, "a stale block must not be built"


@pytest.mark.parametrize(("notebook", "cid", "english", "chinese"), BLOCKS)
def test_a_block_changes_only_strings_and_comments(notebook: Path, cid: str, english: str, chinese: str) -> None:
    en_tree, en_fields = i18n.code_shape(english)
    zh_tree, zh_fields = i18n.code_shape(chinese)
    assert zh_fields == en_fields, (
        f"f-string fields differ: English only {en_fields - zh_fields}, Chinese only {zh_fields - en_fields}"
    )
    assert zh_tree == en_tree, "the code differs beyond its string literals and comments"
    assert CJK.search(chinese), "no Chinese in the block (the English cell runs without one)"


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s.replace("print(", "print(1, ", 1),  # an argument added
        lambda s: re.sub(r"\b(\d+)\b", lambda m: str(int(m.group(1)) + 1), s, count=1),  # a number changed
        lambda s: s.replace(":.", ":>9.", 1) if ":." in s else s.replace("{", "{-", 1),  # a format spec or field
    ],
)
def test_the_shape_check_catches_a_changed_call_number_or_field(edit) -> None:
    english = 'x = 3\nprint(f"mean {x:.2f} over {x} seeds")  # why\n'
    chinese = 'x = 3\nprint(f"{x} 个种子的均值为 {x:.2f}")  # 原因\n'
    assert i18n.code_shape(english) == i18n.code_shape(chinese), "a faithful translation must pass"
    assert i18n.code_shape(edit(english)) != i18n.code_shape(chinese)


@pytest.mark.parametrize(("notebook", "cid", "english", "chinese"), BLOCKS)
def test_a_block_keeps_every_number(notebook: Path, cid: str, english: str, chinese: str) -> None:
    """Over the literals and comments the block translates (one left as written, "half" as a layout, is code)."""
    kept = set(i18n.code_literals(chinese)) & set(i18n.code_literals(english))
    said_en = "\n".join(s for s in i18n.code_literals(english) if s not in kept)
    said_zh = "\n".join(s for s in i18n.code_literals(chinese) if s not in kept)
    assert i18n.compare_numbers(said_en, said_zh) == []


_FIELD = re.compile(r"\{(?!\{)[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
# a number's field straight against a Chinese character (a field that may hold Chinese is left alone); a half-width
# punctuation mark straight between Chinese characters, or a half-width colon closing a Chinese label
_NUMBER_FIELD = r"\{[^{}]*:[^{}]*[dfge%,]\}"
_FIELD_TIGHT = re.compile(rf"[\u4e00-\u9fff]{_NUMBER_FIELD}|{_NUMBER_FIELD}[\u4e00-\u9fff]")
_HALF_WIDTH = re.compile(r"[\u4e00-\u9fff][,;:!?](?=[\u4e00-\u9fff])|[\u4e00-\u9fff]:(?=\s|$)")


@pytest.mark.parametrize(("notebook", "cid", "english", "chinese"), BLOCKS)
def test_a_blocks_chinese_follows_the_typography(notebook: Path, cid: str, english: str, chinese: str) -> None:
    problems = []
    for said in i18n.code_literals(chinese):
        if not CJK.search(said):
            continue
        text = (
            said.lstrip("#").strip()
            if said.startswith("#")
            else re.sub(r"^[rbfu]*(['\"]{1,3})|(['\"]{1,3})$", "", said)
        )
        text = text.replace("\\n", "\n")  # an escaped line break is one
        problems += [
            f"no space between Chinese and a number's field: …{m.group(0)}…" for m in _FIELD_TIGHT.finditer(text)
        ]
        problems += [f"half-width punctuation in Chinese: …{m.group(0)}…" for m in _HALF_WIDTH.finditer(text)]
        # a field is never looked into; * is multiplication in code, not emphasis
        problems += [p for p in i18n.typography_problems(_FIELD.sub("{x}", text)) if not p.startswith("emphasis")]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("notebook", "cid", "english", "chinese"), BLOCKS)
def test_a_blocks_chinese_uses_the_term_table(notebook: Path, cid: str, english: str, chinese: str) -> None:
    said = "\n".join(s for s in i18n.code_literals(chinese) if CJK.search(s))
    wrong = [
        f"{concept}: {m.group(0)!r} (the edition writes {one})"
        for concept, (one, other) in TERMS.items()
        for m in re.finditer(other, said)
    ]
    assert not wrong, "\n".join(wrong)


# --------------------------------------------------------------------- what the executed Chinese notebooks print
#
# A printed line "has English" when it holds three English words in a row (code names, scheme names and numbers
# between them do not count as words: rope+ft_yarn, apply_rope, L_train). The cells below print English on purpose
# or until their block is written; the list must be exactly the cells found, so a fixed cell leaves it too.
_WORD = r"(?<![\w+.-])[A-Za-z][a-z]{2,}(?![\w+(-])"
_PHRASE = re.compile(rf"{_WORD}(?:[ ,]+{_WORD}){{2,}}")
ENGLISH_LEFT: dict[str, str] = {
    # "<notebook stem> <cell id>": why its output still holds English
    "00_tour c791505c": "poslib's IndexError, printed as raised: poslib's error messages are English, like Python's",
    "02_learned_absolute bad207af": "poslib's IndexError, printed as raised (as in 00)",
}


def _printed(cell: dict) -> str:
    text = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            text.append("".join(output["text"]))
        for kind in ("text/plain", "text/markdown"):
            if kind in output.get("data", {}) and "application/vnd.jupyter.widget-view+json" not in output["data"]:
                text.append("".join(output["data"][kind]))
    return "\n".join(text)


def english_left() -> dict[str, str]:
    """ "<stem> <cell id>" → the first English phrase a code cell of a committed Chinese notebook prints."""
    found = {}
    for path in sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code" and (m := _PHRASE.search(_printed(cell))):
                found[f"{path.stem} {cell['id']}"] = m.group(0)
    return found


def test_what_the_chinese_notebooks_print_has_no_english_outside_the_named_cells() -> None:
    found = english_left()
    new = {k: v for k, v in found.items() if k not in ENGLISH_LEFT}
    gone = sorted(set(ENGLISH_LEFT) - set(found))
    assert not new, (
        "English printed by a Chinese notebook (translate the cell, or name it in ENGLISH_LEFT):\n"
        + "\n".join(f"{k}: {v!r}" for k, v in sorted(new.items()))
    )
    assert not gone, f"no English left in {gone}: remove them from ENGLISH_LEFT"


def test_the_english_phrase_finder_sees_a_sentence_and_not_code_names() -> None:
    assert _PHRASE.search("check: the score matches at every distance")
    assert not _PHRASE.search("检查：apply_rope 的分数与 rope+ft_yarn 在 L_train 处一致（max |Δ| < 1e-9）")
