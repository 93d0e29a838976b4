"""The exercise checkers answer in the notebook's language (issue 28): in Chinese with POSLIB_LANG=zh or in a
``notebooks/zh`` working directory, every message Chinese with no English sentence left over; in English,
exactly the messages the English notebooks store. A stored English answer turns into the Chinese one the
checker gives (poslib.exercises.i18n.translate_feedback, which writes the Chinese notebooks' outputs)."""

from __future__ import annotations

import ast
import json
import pathlib
import re

import numpy as np
import pytest

from poslib import exercises
from poslib.exercises import i18n

ROOT = pathlib.Path(__file__).resolve().parent.parent
ALL = [(nb, ex) for nb in exercises.NOTEBOOKS for ex in exercises.exercises(nb)]

# Latin words a Chinese message may keep: names, units and symbols of formulas, code outside backticks.
KEPT = {
    "RoPE", "ReRoPE", "ALiBi", "DeBERTa", "CoPE", "FIRE", "PI", "NTK", "YaRN", "LLaMA", "Llama", "MiniLM",
    "LongLM", "README", "Self", "Extend", "Hugging", "Face", "T5", "aware", "bojone", "rerope",
}  # fmt: skip
# English words that never belong in a Chinese sentence, even alone.
FUNCTION_WORDS = {
    "the", "a", "an", "is", "are", "of", "to", "and", "or", "not", "that", "this", "your", "answer", "with",
    "for", "in", "on", "at", "by", "from", "it", "its", "be", "should", "got", "expected", "so", "but",
}  # fmt: skip
_CJK = re.compile(r"[\u4e00-\u9fff]")
_CODE = re.compile(r"`[^`]*`")
_WORDS = re.compile(r"[A-Za-z]{2,}(?: [A-Za-z]{2,})*")


def english_left(message: str) -> list[str]:
    """English left in a Chinese message: a run of three or more words, or a function word ("the", "is").

    Code spans, formulas written in plain text (ψ(max(L, m)), head_dim = hidden_size // …) and the names
    in KEPT are not English prose; identifiers with an underscore or a digit are code."""
    text = _CODE.sub(" ", message)
    text = re.sub(r"\S*[_0-9.(\[/^]\S*", " ", text)  # rope_theta, e^1.5, np.cos, max(1, …), 2^(−8h/n_h)
    left = []
    for run in _WORDS.findall(text):
        words = [w for w in run.split() if w not in KEPT]
        if len(words) >= 3 or any(w.lower() in FUNCTION_WORDS for w in words):
            left.append(run)
    return left


def run_answer(nb: str, ex: exercises.Exercise, code: str) -> object:
    namespace: dict[str, object] = {"np": np, f"nb{nb}": exercises.module(nb)}
    exec(ex.setup, namespace)
    exec(code, namespace)
    return namespace["answer"]


def every_verdict() -> list[tuple[str, str]]:
    """(what was answered, the checker's repr) for every solution, listed mistake, None and a wrong type."""
    found = []
    for nb, ex in ALL:
        for code in (ex.solution, ex.stub, *(m.code for m in ex.mistakes)):
            found.append((f"nb{nb} {ex.key}: {code}", repr(ex.check(run_answer(nb, ex, code)))))
        found.append((f"nb{nb} {ex.key}: 'forty-two'", repr(ex.check("forty-two"))))
    return found


@pytest.fixture
def zh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSLIB_LANG", "zh")


@pytest.fixture
def en(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POSLIB_LANG", "en")


def test_every_message_is_chinese(zh: None) -> None:
    problems = []
    for answered, verdict in every_verdict():
        if not _CJK.search(verdict) or english_left(verdict):
            problems.append(f"{answered}\n    {verdict}\n    English left: {english_left(verdict)}")
    assert not problems, "\n".join(problems)


def test_the_english_check_recognises_english() -> None:
    assert english_left("差一错误：你的答案 is one more than the expected count")
    assert not english_left("截断：ReRoPE 把它限制在 min(m − n, w)，`.clip(max=window)`，Hugging Face 中 head_dim = 2")


def exercise_cells() -> list[tuple[str, str, str]]:
    """(notebook, cell source, stored text/plain output) of every cell tagged exercise in the English notebooks."""
    cells = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if "exercise" in cell.get("metadata", {}).get("tags", []):
                (output,) = [o for o in cell["outputs"] if "text/plain" in o.get("data", {})]
                cells.append((path.name, "".join(cell["source"]), "".join(output["data"]["text/plain"])))
    return cells


def run_cell(source: str) -> str:
    """The repr a notebook shows for ``source``: its statements run, its last expression's value."""
    tree = ast.parse(source)
    last = tree.body.pop()
    assert isinstance(last, ast.Expr), source
    namespace: dict[str, object] = {"np": np}
    exec(compile(tree, "<cell>", "exec"), namespace)
    return repr(eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace))


def test_english_messages_are_the_stored_ones(en: None) -> None:
    cells = exercise_cells()
    assert len(cells) == len(ALL)
    for name, source, stored in cells:
        assert run_cell(source) == stored, name


def test_english_does_not_read_the_catalogue(en: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # English is the text as the checkers write it: with an empty catalogue every verdict is the same.
    before = every_verdict()
    monkeypatch.setattr(i18n, "_catalogue", lambda: ({}, {}))
    monkeypatch.setattr(i18n, "_templates", lambda: ())
    assert every_verdict() == before


def test_stored_answers_translate_to_what_the_checker_says_in_chinese(zh: None) -> None:
    for name, source, stored in exercise_cells():
        assert run_cell(source) == i18n.translate_feedback(stored), name


def test_every_english_verdict_reads_back_into_its_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    # translate_feedback reads any English verdict back into its template and pieces, not only "not answered yet".
    monkeypatch.setenv("POSLIB_LANG", "en")
    english = every_verdict()
    monkeypatch.setenv("POSLIB_LANG", "zh")
    chinese = every_verdict()
    for (answered, en_text), (_, zh_text) in zip(english, chinese, strict=True):
        assert i18n.translate_feedback(en_text) == zh_text, answered


def test_language_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POSLIB_LANG", raising=False)
    assert i18n.language() == "en"
    monkeypatch.setenv("POSLIB_LANG", "zh")
    assert i18n.language() == "zh"
    monkeypatch.setenv("POSLIB_LANG", "en")
    assert i18n.language() == "en"
    monkeypatch.setenv("POSLIB_LANG", "fr")
    with pytest.raises(ValueError, match="POSLIB_LANG"):
        i18n.language()
    with pytest.raises(ValueError, match="POSLIB_LANG"):
        exercises.module("03").check_wavelengths(None)


def test_language_from_the_working_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.delenv("POSLIB_LANG", raising=False)
    (tmp_path / "notebooks" / "zh" / "sub").mkdir(parents=True)
    (tmp_path / "zh").mkdir()
    (tmp_path / "notebooks" / "en").mkdir()
    for folder, lang in [("notebooks/zh", "zh"), ("notebooks/zh/sub", "zh"), ("zh", "en"), ("notebooks/en", "en")]:
        monkeypatch.chdir(tmp_path / folder)
        assert i18n.language() == lang, folder
    monkeypatch.chdir(tmp_path / "notebooks" / "zh")
    verdict = repr(exercises.module("03").check_wavelengths(None))
    assert verdict == "尚未作答。请把 `answer = None` 换成你的答案：一个含 8 个波长（以 token 计）的数组。"
    monkeypatch.setenv("POSLIB_LANG", "en")  # the variable wins over the folder
    assert i18n.language() == "en"


def test_numbers_are_placeholders() -> None:
    entry = "off by one: the offsets are 0 … 20 (21 values, the first one is 0)"
    assert i18n.translate(entry, "zh") == "差一错误：偏移是 0 … 20（共 21 个值，第一个是 0）"
    other = "off by one: the offsets are 0 … 30 (31 values, the first one is 0)"
    assert i18n.translate(other, "zh") == "差一错误：偏移是 0 … 30（共 31 个值，第一个是 0）"
    assert i18n.translate("an array of 1,024 dot products", "zh") == "一个含 1,024 个点积的数组"
    assert i18n.translate("an array of 8 wavelengths, in tokens", "en") == "an array of 8 wavelengths, in tokens"
    assert i18n.translate("a phrase no catalogue has", "zh") == "a phrase no catalogue has"


def test_the_catalogue_keeps_numbers_in_order(tmp_path: pathlib.Path) -> None:
    good = tmp_path / "good.md"
    good.write_text("<!-- en: {n} values, from {n} -->\n{n} 个值，从 {n} 起\n", encoding="utf-8")
    assert i18n.read_catalogue(good) == {"{n} values, from {n}": "{n} 个值，从 {n} 起"}
    bad = tmp_path / "bad.md"
    bad.write_text("<!-- en: 8 values from 0 -->\n从 0 起的 8 个值\n", encoding="utf-8")
    with pytest.raises(ValueError, match="numbers in order"):
        i18n.read_catalogue(bad)
    assert i18n.read_catalogue()  # the repository's catalogue passes the same check


def assert_chinese(verdict: object) -> None:
    text = repr(verdict)
    assert _CJK.search(text) and not english_left(text), (text, english_left(text))


def test_every_diagnosis_and_takeaway_is_in_the_catalogue(zh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # The checkers list more slips than the tests' typical mistakes reach: each explanation they pass in.
    from poslib.exercises import _base

    passed: list[str] = []

    def recording(check: object) -> object:
        def graded(answer: object, expected: object, **kw: object) -> object:
            passed.extend(e for e, _ in kw.get("diagnoses", ()))  # type: ignore[attr-defined]
            return check(answer, expected, **kw)  # type: ignore[operator]

        return graded

    for nb in exercises.NOTEBOOKS:
        for name in ("check_array", "check_int"):
            if hasattr(exercises.module(nb), name):
                monkeypatch.setattr(exercises.module(nb), name, recording(getattr(_base, name)))
    for nb, ex in ALL:
        ex.check(run_answer(nb, ex, ex.solution))
        if ex.takeaway:
            passed.append(ex.takeaway)
    assert len(passed) > 100
    for phrase in passed:
        assert_chinese(_base.Feedback(False, phrase))


def test_branches_the_mistakes_do_not_reach_are_chinese(zh: None) -> None:
    from poslib.exercises._base import check_array, check_int

    want = np.arange(12.0).reshape(3, 4) ** 2
    behind = np.roll(want, 1, axis=1)
    behind[:, 0] = -7.0
    wavelengths = 2 * np.pi * 1e4 ** (np.arange(8) / 8)
    for verdict in (
        check_array(behind, want, what="a 3 × 4 table"),  # shifted back, along an axis
        check_array(wavelengths * 1.001, wavelengths, what="x"),  # rounding
        check_array([1.0, np.inf], [1.0, 2.0], what="x"),  # inf where finite
        check_array([1.0, 2.0, 3.5], [1.0, 2.0, 3.0], what="x"),  # values, at an entry
        check_array(np.radians([10.0, 20.0]), [10.0, 20.0], what="x"),  # radians for degrees
        check_array(np.ones((2, 3)), np.ones((3, 2)), what="x"),  # axes in the wrong order
        check_array(np.ones((2, 3)), np.ones(6), what="x"),  # arranged differently
        check_array(np.ones(7), np.arange(8.0), what="x"),  # a length
        check_array(np.arange(7.0), np.arange(8.0), what="x"),  # a range one short
        check_array(np.arange(1.0, 8.0), np.arange(8.0), what="x"),  # one short at the start
        check_array(np.arange(9.0), np.arange(8.0), what="x"),  # one too many at the end
        check_array(np.arange(-1.0, 8.0), np.arange(8.0), what="x"),  # one too many at the start
        check_array(["1", "2"], [1.0, 2.0], what="x"),  # strings in a list
        check_array(np.eye(3), np.eye(3)[[1, 2, 0]], what="x"),  # the identity matrix
        check_array(np.arange(3), [1, 2, 0], what="x"),  # the identity order
        check_array(want[::-1], want, what="x"),  # reversed along an axis
        check_array([3.0, 2.0, 1.0], [2.0, 3.0, 1.0], what="x"),  # sorted from largest
        check_array([1.0, 2.0, 3.0], [2.0, 3.0, 1.0], what="x"),  # sorted from smallest
        check_array([2.0, 4.0, 1.0, 3.0], [1.0, 2.0, 3.0, 4.0], what="x"),  # shuffled
        check_array(12.25, 3.5, what="x"),  # the square
        check_array(np.sqrt([2.0, 3.0]), [2.0, 3.0], what="x"),  # the square root
        check_int(4, 5, what="x"),  # one fewer
        check_int(9, 5, what="x"),  # not the count
        check_int(2.0, 5, what="x"),
    ):
        assert_chinese(verdict)
    nb05, nb10, nb11 = (exercises.module(n) for n in ("05", "10", "11"))

    def fails(v: np.ndarray) -> np.ndarray:
        raise ValueError("no")

    for to_half in (fails, lambda v: v[..., :2], lambda v: v, lambda v: v[::-1], lambda v: v * 0):
        assert_chinese(nb05.check_to_half(to_half))
    for positions in ([0.5] * 8, [0, 1, 2], [0, 1, 2, 3, 4, 5, 6, 64], [1, 1, 2, 3, 4, 5, 6, 7], np.arange(8)):
        assert_chinese(nb10.check_random_positions(np.array(positions)))
    for group in (0, 16, 20, 21, 32, 1.5):
        assert_chinese(nb11.check_self_extend_group(group))
