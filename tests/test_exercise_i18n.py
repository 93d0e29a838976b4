"""The exercise checkers write in poslib's language (issue 46 item 2): every message is a gettext template with
named fields, looked up in the ``exercises`` catalogue (poslib/locale/zh/LC_MESSAGES/exercises.po) when it is
written. With ``set_language("zh")`` every verdict (right, wrong, unanswered, each diagnosis, each takeaway) is
Chinese with the English message's numbers; in English the checkers write exactly what the English notebooks store.
The catalogue keeps every field and number of its templates (scripts/catalogues.py check), the edition's terms and
its typography."""

from __future__ import annotations

import ast
import json
import pathlib
import re
import sys

import numpy as np
import pytest
from babel.messages.pofile import read_po

from poslib import exercises, language
from poslib.exercises import _base

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import catalogues  # noqa: E402

ALL = [(nb, ex) for nb in exercises.NOTEBOOKS for ex in exercises.exercises(nb)]
PO = ROOT / "poslib" / "locale" / "zh" / "LC_MESSAGES" / "exercises.po"

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
# a number as written, with its sign and unit (−0.06, 16×, 5%), superscripts (2⁻⁸) and comparison signs
_NUMBER = re.compile(r"[−+-]?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:e[−+-]?[0-9]+)?[×%°]?|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+|[<>≤≥]")


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


def branch_verdicts() -> list[_base.Feedback]:
    """The generic slips the exercises' typical mistakes do not all reach, one answer each."""
    check_array, check_int = _base.check_array, _base.check_int
    want = np.arange(12.0).reshape(3, 4) ** 2
    behind = np.roll(want, 1, axis=1)
    behind[:, 0] = -7.0
    wavelengths = 2 * np.pi * 1e4 ** (np.arange(8) / 8)
    geometric = 2.0 ** np.arange(6)
    what = _base._("a whole number")
    verdicts = [
        check_array(behind, want, what=what),  # shifted back, along an axis
        check_array(geometric[:-1], geometric[1:], what=what),  # shifted, and a constant factor
        check_array(wavelengths * 1.001, wavelengths, what=what),  # rounding
        check_array([1.0, np.inf], [1.0, 2.0], what=what),  # inf where finite
        check_array([1.0, 2.0, 3.5], [1.0, 2.0, 3.0], what=what),  # values, at an entry
        check_array(np.radians([10.0, 20.0]), [10.0, 20.0], what=what),  # radians for degrees
        check_array(np.degrees([1.0, 2.0]), [1.0, 2.0], what=what),  # degrees for radians
        check_array(np.ones((2, 3)), np.ones((3, 2)), what=what),  # axes in the wrong order
        check_array(np.ones((2, 3)), np.ones(6), what=what),  # arranged differently
        check_array(np.ones((2, 3)), np.ones((4, 5)), what=what),  # another shape
        check_array(np.ones((2, 4)), np.ones((2, 3)), what=what),  # one entry too many
        check_array(np.ones(7), np.arange(8.0), what=what),  # a length
        check_array(np.arange(7.0), np.arange(8.0), what=what),  # a range one short
        check_array(np.arange(1.0, 8.0), np.arange(8.0), what=what),  # one short at the start
        check_array(np.arange(9.0), np.arange(8.0), what=what),  # one too many at the end
        check_array(np.arange(-1.0, 8.0), np.arange(8.0), what=what),  # one too many at the start
        check_array(["1", "2"], [1.0, 2.0], what=what),  # strings in a list
        check_array("1", 1.0, what=what),  # a string
        check_array({1: 2}, 1.0, what=what),  # not numbers at all
        check_array(np.eye(3), np.eye(3)[[1, 2, 0]], what=what),  # the identity matrix
        check_array(np.arange(3), [1, 2, 0], what=what),  # the identity order
        check_array(want[::-1], want, what=what),  # reversed along an axis
        check_array([3.0, 2.0, 1.0], [2.0, 3.0, 1.0], what=what),  # sorted from largest
        check_array([1.0, 2.0, 3.0], [2.0, 3.0, 1.0], what=what),  # sorted from smallest
        check_array([2.0, 4.0, 1.0, 3.0], [1.0, 2.0, 3.0, 4.0], what=what),  # shuffled
        check_array(-want, want, what=what),  # sign
        check_array(want[:3, :3].T, want[:3, :3], what=what),  # transposed
        check_array(2 * want, want, what=what),  # a constant factor
        check_array(12.25, 3.5, what=what),  # the square
        check_array(np.sqrt([2.0, 3.0]), [2.0, 3.0], what=what),  # the square root
        check_int(4, 5, what=what),  # one fewer
        check_int(6, 5, what=what),  # one more
        check_int(9, 5, what=what),  # not the count
        check_int(2.0, 5, what=what),  # not a whole number
        check_int(None, 5, what=what),  # not answered
    ]
    nb05, nb10, nb11 = (exercises.module(n) for n in ("05", "10", "11"))

    def fails(v: np.ndarray) -> np.ndarray:
        raise ValueError("no")

    for to_half in (fails, lambda v: v[..., :2], lambda v: v, lambda v: v[::-1], lambda v: v * 0, 3):
        verdicts.append(nb05.check_to_half(to_half))
    for positions in ([0.5] * 8, [0, 1, 2], [0, 1, 2, 3, 4, 5, 6, 64], [1, 1, 2, 3, 4, 5, 6, 7], np.arange(8)):
        verdicts.append(nb10.check_random_positions(np.array(positions)))
    verdicts.append(nb10.check_random_positions(np.array([7, 6, 5, 4, 3, 2, 1, 0])))
    for group in (0, 16, 20, 21, 32, 1.5):
        verdicts.append(nb11.check_self_extend_group(group))
    for right, unit in (("natural log", "nats"), ("log₂", "bits"), ("log₁₀", "decimal digits")):
        verdicts.extend(_base.Feedback(False, e) for e, _ in _base.log_slips(2.0, right, _base._(unit)))
    return verdicts


def assert_chinese(text: str) -> None:
    assert _CJK.search(text) and not english_left(text), (text, english_left(text))


def test_every_verdict_is_chinese(zh: None) -> None:
    problems = []
    for answered, verdict in every_verdict():
        if not _CJK.search(verdict) or english_left(verdict):
            problems.append(f"{answered}\n    {verdict}\n    English left: {english_left(verdict)}")
    assert not problems, "\n".join(problems)


def test_the_branches_the_mistakes_do_not_reach_are_chinese(zh: None) -> None:
    for verdict in branch_verdicts():
        assert_chinese(repr(verdict))


def test_every_diagnosis_and_takeaway_is_chinese(zh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # The checkers list more slips than the tests' typical mistakes reach: each explanation they pass in.
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
        if ex.takeaway is not None:
            passed.append(ex.takeaway())
    assert len(passed) > 100
    for phrase in passed:
        assert_chinese(phrase)


def test_the_chinese_keeps_the_numbers_of_the_english_message() -> None:
    # The same answers in both languages: every number (sign, unit and comparison signs included) is in the Chinese.
    # Chinese word order may move a field, so a message's numbers are compared as a multiset.
    def both(verdicts: object) -> list[tuple[str, str]]:
        texts = []
        for lang in ("en", "zh"):
            language.set_language(lang)
            texts.append([v if isinstance(v, str) else repr(v) for v in verdicts()])  # type: ignore[operator]
        language.set_language(None)
        return list(zip(*texts, strict=True))

    pairs = both(lambda: [v for _, v in every_verdict()]) + both(branch_verdicts)
    assert len(pairs) > 250
    for english, chinese in pairs:
        assert sorted(_NUMBER.findall(english)) == sorted(_NUMBER.findall(chinese)), (english, chinese)


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


def test_english_is_byte_for_byte_what_the_checkers_always_wrote(en: None) -> None:
    nb03, nb05, nb11 = (exercises.module(n) for n in ("03", "05", "11"))
    assert repr(nb03.check_wavelengths(None)) == (
        "not answered yet: replace `answer = None` with an array of 8 wavelengths, in tokens."
    )
    assert (
        repr(nb05.check_rotated_pair([1.0, 2.0]))
        == "not yet: values: your answer differs from the expected value by up to 1.86 at entry 0"
    )
    assert repr(nb11.check_self_extend_group(16)) == (
        "not yet: G = 16 is L'/L_train = 1024/64 (PI's factor, not a group chosen for the bound), or the bound on "
        "⌊(L' − 1)/G⌋ without the shift w − ⌊w/G⌋ (= 15 at G = 16) that moves the grouped distances up to continue "
        "the neighbour window: with the shift, its largest distance is 78, beyond L_train − 1 = 63"
    )
    assert _base.check_int(6, 7, what="a count").message == (
        "off by one: your answer, 6, is one fewer than the expected count"
    )
    (never,) = [ex for ex in nb05.EXERCISES if ex.key == "never-turn-base"]
    assert never.takeaway is not None and never.takeaway() == (
        "So the base must be about 1.01e9, 1.01e5 times 10 000; at base 10 000 pair 20 turns 36.7 times by position "
        "4095. Which pairs never complete a turn is set by the base, the knob that NTK-aware scaling and Llama 3's "
        "base 500 000 turn."
    )


def test_the_language_is_the_one_set_when_the_message_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    # No guess from the working directory or a stream: set_language, else POSLIB_LANG, else English.
    monkeypatch.delenv("POSLIB_LANG", raising=False)
    monkeypatch.chdir(ROOT / "notebooks" / "zh")
    nb03 = exercises.module("03")
    try:
        assert repr(nb03.check_wavelengths(None)).startswith("not answered yet: ")
        language.set_language("zh")
        assert repr(nb03.check_wavelengths(None)) == (
            "尚未作答。请把 `answer = None` 换成你的答案：一个含 8 个波长（以 token 计）的数组。"
        )
        language.set_language(None)
        monkeypatch.setenv("POSLIB_LANG", "zh")
        assert repr(nb03.check_wavelengths(None)).startswith("尚未作答。")
        # a takeaway is written when the answer is checked, in the language of that moment
        (ex,) = [ex for ex in nb03.EXERCISES if ex.key == "wavelengths"]
        language.set_language("en")
        right = ex.check(run_answer("03", ex, ex.solution))
        assert right.message.startswith("your answer is right. So the wavelengths grow"), right
    finally:
        language.set_language(None)


def catalogue() -> dict[str, str]:
    with PO.open("rb") as f:
        return {m.id: m.string for m in read_po(f) if m.id}


def test_the_catalogue_holds_every_template_the_checkers_write_with_its_fields_and_numbers() -> None:
    # scripts/catalogues.py check, for this domain: nothing untranslated, every field, number and comparison kept
    problems = [p for p in catalogues.problems() if "/exercises.po" in p]
    assert not problems, "\n".join(problems)
    assert len(catalogue()) > 200


def test_a_translation_that_drops_or_reorders_a_number_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from babel.messages.catalog import Catalog

    wrong = {
        "off by one: the last row is 2κ − 1 = 7, not 2κ": "差一错误：最后一行是 2κ − 1 = 8，不是 2κ",
        "off by one: the offsets are 0 … 20 (21 values, the first one is 0)": (
            "差一错误：偏移是 0 … 20（共 0 个值，第一个是 21）"
        ),
        "{who} is right.": "{whom}正确。",
        "sign: a farther key gets a *smaller* score, −μ·(m − n) ≤ 0": "符号：越远的键得分越*小*，−μ·(m − n) ≥ 0",
    }
    bad = Catalog(locale="zh", domain="exercises")
    for english, chinese in catalogue().items():
        bad.add(english, wrong.get(english, chinese))
    read = catalogues.read
    monkeypatch.setattr(catalogues, "read", lambda lang, domain: bad if domain == "exercises" else read(lang, domain))
    problems = "\n".join(p for p in catalogues.problems() if "/exercises.po" in p)
    for english in wrong:
        assert repr(english) in problems, english


def test_the_catalogue_follows_the_term_table_and_the_typography() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from i18n_script import i18n
    from test_i18n_terms import TERMS

    chinese = catalogue()
    for english, text in chinese.items():
        assert not i18n.typography_problems(text), (english, text, i18n.typography_problems(text))
        for concept, (form, others) in TERMS.items():
            assert not re.search(others, text), f"{english!r}: {concept} (use {form}): {text}"
    # the glossary's words for the checkers' own terms
    assert chinese["off by one: the pairs start at i = 0 (θ_0 = 1), not i = 1"].startswith("差一错误：")
    assert "nat" in chinese["one number, in nats"]
