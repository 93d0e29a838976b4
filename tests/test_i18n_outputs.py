"""The Chinese of what notebooks 08 and 11 conclude, and of check lines' verdict words (i18n/zh/outputs.md, read by
poslib._i18n_outputs): the stored outputs of the conclusion cells translate line by line with no English word left
and every number in order, the English notebooks are untouched, a catalogue entry with a changed number is refused,
and the lab's report functions answer in Chinese in a Chinese kernel (English unchanged)."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest
from i18n_script import i18n

from poslib import _i18n_outputs
from poslib.exercises.i18n import NUMBER, Catalogue, read_catalogue

ROOT = Path(__file__).resolve().parent.parent
# The cells whose stored outputs are the lab's conclusions (issue 36), by cell id: 08's departures from the papers,
# table of paper orderings and takeaways; 11's verdicts (plain and practitioner's), takeaways and departures.
CONCLUSIONS = {
    "08_extrapolation_lab.ipynb": ("departures", "pk-compare", "916684f9a58a4a2aa5f864670399430d"),
    "11_extending_a_trained_model.ipynb": (
        "verdict",
        "practice-verdict",
        "takeaways",
        "departures",
        "practice-curves",
        "practice-readoff",
        "scale2",
    ),
}
_CJK = re.compile(r"[\u4e00-\u9fff]")


def stored_texts(name: str, ids: tuple[str, ...]) -> list[tuple[str, str]]:
    """(cell id, text) of every stream and text/markdown output of the cells ``ids`` of notebook ``name``."""
    cells = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
    found = []
    for cell in cells:
        if cell.get("id") in ids:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream":
                    found.append((cell["id"], "".join(output["text"])))
                if "text/markdown" in output.get("data", {}):
                    found.append((cell["id"], "".join(output["data"]["text/markdown"])))
    assert {i for i, _ in found} == set(ids), f"{name}: a conclusion cell is missing or has no output"
    return found


@pytest.mark.parametrize("name", sorted(CONCLUSIONS))
def test_every_conclusion_line_is_chinese_with_its_numbers_in_order(name: str) -> None:
    for cell, english in stored_texts(name, CONCLUSIONS[name]):
        chinese = _i18n_outputs.translate_output(english)
        for line in chinese.split("\n"):
            if not line.strip() or set(line) <= set("|-: "):
                continue  # a blank line, a table's rule
            assert _CJK.search(line), f"{name} {cell}: left in English: {line!r}"
            assert not _i18n_outputs.latin_words(line), (
                f"{name} {cell}: English words {_i18n_outputs.latin_words(line)}"
            )
        assert NUMBER.findall(chinese) == NUMBER.findall(english), f"{name} {cell}: numbers changed or moved"


def test_the_allowed_latin_words() -> None:
    # code, scheme names, method names and units stay; an English word does not
    assert (
        _i18n_outputs.latin_words("rope+ft_yarn 与 rope+ntk 的 L_train，NTK-RoPE，116k，gpt2_model.py，`FireBias`")
        == []
    )
    assert _i18n_outputs.latin_words("rope+ntk is the best") == ["is", "the", "best"]


def test_check_lines_translate_their_verdict_words_only() -> None:
    # lines no catalogue knows (a check added without its Chinese): the verdict words still read Chinese
    line = "ok   Llama 9.1: a made-up factor: measured 1.000000 vs hand 1.000000  (bound: |Δ| < 1e-12)"
    assert _i18n_outputs.translate_output(line) == (
        "通过 Llama 9.1: a made-up factor: 实测 1.000000 vs hand 1.000000  (界限: |Δ| < 1e-12)"
    )
    assert _i18n_outputs.translate_output("check: a made-up layer, max |difference| < 1e-4, bound < 1e-4 -> ok") == (
        "检查：a made-up layer, max |difference| < 1e-4, 界限 < 1e-4 -> 通过"
    )
    assert _i18n_outputs.translate_output("illustration (a theorem): |score| ≤ bound at every distance") == (
        "示意 (a theorem): |score| ≤ bound at every distance"  # "≤ bound" is the bound itself, not the check's
    )
    unknown = "every made-up seed grows more than every other seed from 1× to 8×: True"
    assert _i18n_outputs.translate_output(unknown) == unknown


def test_a_changed_number_in_a_catalogue_entry_is_refused(tmp_path: Path) -> None:
    text = _i18n_outputs.CATALOGUE.read_text(encoding="utf-8")
    assert "配对比值 ×0.772（×0.694 至 ×0.900）" in text
    planted = tmp_path / "outputs.md"
    planted.write_text(text.replace("配对比值 ×0.772（", "配对比值 ×0.773（"), encoding="utf-8")
    with pytest.raises(ValueError, match="numbers in order"):
        read_catalogue(planted)
    assert Catalogue(_i18n_outputs.CATALOGUE).entries  # the file itself reads


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Chinese notebooks as ``scripts/i18n.py build`` writes them (built once), checking the English ones stay."""
    english = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in english}
    out = tmp_path_factory.mktemp("zh")
    i18n.build("zh", out, documents=False)
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in english} == before
    return out


def test_build_leaves_the_english_notebooks_alone(built: Path) -> None:
    zh = json.loads((built / "11_extending_a_trained_model.ipynb").read_text(encoding="utf-8"))
    verdict = next(c for c in zh["cells"] if c.get("id") == "verdict")
    assert "".join(verdict["outputs"][0]["text"]).startswith("000 §6.2：NTK-RoPE 是不微调时最强的方法")


# Printed lines the Chinese notebooks keep as printed: code and data, not sentences. (notebook, cell id, the whole
# line as a regular expression, why)
KEPT_LINES: tuple[tuple[str, str, str, str], ...] = (
    ("05_rope", "92eaa171", r"perm = \[[\d ]+\]", "an array"),
    ("08_extrapolation_lab", "3535f2b9", r".*", "a window of the corpus: Python source"),
    (
        "08_extrapolation_lab",
        "72eea5119410473aa328ad9291626812",
        r"(model|train|eval): \w+Config\([^()]*(\([^()]*\)[^()]*)*\)",
        "a repr",
    ),
    ("08_extrapolation_lab", "pk-load", r"PasskeyConfig\([^()]*(\([^()]*\)[^()]*)*\)", "a repr"),
    ("10_learned_and_contextual_positions", "58cafd78", r"(\S+:\d )+\S+:\d", "the toy sentence's word counts"),
)
# Latin words a Chinese line may keep in one cell: notation, a config's keys and values, a name. (notebook, cell id,
# the words, why)
KEPT_WORDS: tuple[tuple[str, str, frozenset[str], str], ...] = (
    ("01_why_position", "318e8456", frozenset({"mean"}), "mean f(ΠX), the formula's"),
    ("02_learned_absolute", "4eb28e6a", frozenset({"bert", "absolute"}), "config values as stored"),
    ("05_rope", "72022378", frozenset({"Code"}), "Code Llama"),
    ("08_extrapolation_lab", "35754a64", frozenset({"path"}), "crc32(path), the split's formula"),
    ("09_rope_in_production", "qwen-hf-factor-code", frozenset({"factor"}), "the config key factor"),
    ("09_rope_in_production", "f7ca9670", frozenset({"lllllGlllllGlllllGlllllGlllllGllll"}), "a letter a layer"),
    ("11_extending_a_trained_model", "group-check", frozenset({"leak"}), "Leaky ReRoPE's parameter, as in 11's text"),
    ("11_extending_a_trained_model", "lab-load", frozenset({"leak"}), "Leaky ReRoPE's parameter, as in 11's text"),
    ("11_extending_a_trained_model", "practice-load", frozenset({"leak"}), "Leaky ReRoPE's parameter, as in 11's text"),
    ("05_rope", "15fae859", frozenset({"perm", "layout"}), "the Python expressions compared"),
    (
        "10_learned_and_contextual_positions",
        "a9366f98",
        frozenset({"AgggggAggggggABddddddHfff", "BddddFfffffGffBfffffffC"}),
        "the task's strings",
    ),
    ("12_position_from_the_data", "sb-check", frozenset({"rest"}), "rest, the notebook's notation"),
)
# an English gloss after a Chinese term, as the glossary writes it: 逆频率（inverse frequency）
_GLOSS = re.compile(r"(?<=[\u4e00-\u9fff])（[A-Za-z][A-Za-z-]*(?: [A-Za-z-]+){0,2}）")  # a term: three words at most


def shown_texts(cell: dict) -> list[str]:
    """The text a reader sees of a code cell's outputs: streams, and the markdown or plain text of a result that
    is not a figure or a widget (those show their picture, not their text)."""
    texts = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output.get("output_type") == "stream":
            texts.append("".join(output["text"]))
        elif data and not {"image/png", "application/vnd.jupyter.widget-view+json"} & set(data):
            texts.append("".join(data.get("text/markdown") or data.get("text/plain") or ""))
    return texts


def test_every_printed_line_of_the_chinese_notebooks_is_chinese(built: Path) -> None:
    """What a student reads under a code cell of a Chinese notebook has no English sentence left (issue 36): every
    line is Chinese, numbers, names and notation, or one of the kept code and data lines above."""
    problems, kept_used = [], set()
    for path in sorted(built.glob("[0-9][0-9]_*.ipynb")):
        english_cells = json.loads((ROOT / "notebooks" / path.name).read_text(encoding="utf-8"))["cells"]
        printed = {c.get("id"): {x for t in shown_texts(c) for x in t.split("\n")} for c in english_cells}
        for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            here = (path.stem, cell.get("id"))
            for text in shown_texts(cell):
                for line in text.split("\n"):
                    words = set(_i18n_outputs.latin_words(_GLOSS.sub("", line)))
                    if not words:
                        continue
                    kept = [  # code and data: as the English notebook prints it, byte for byte
                        k
                        for k in KEPT_LINES
                        if k[:2] == here and re.fullmatch(k[2], line.strip()) and line in printed[here[1]]
                    ]
                    kept += [k for k in KEPT_WORDS if k[:2] == here and words <= k[2]]
                    kept_used.update(k[:2] for k in kept)
                    if not kept:
                        problems.append(f"{path.stem} cell {index} ({cell.get('id')}): {line.strip()[:150]!r}")
    assert not problems, f"{len(problems)} lines left in English (i18n/zh/prints/NN.md):\n" + "\n".join(problems)
    listed = {k[:2] for k in (*KEPT_LINES, *KEPT_WORDS)}
    assert kept_used == listed, f"kept lines and words no longer printed: {listed - kept_used}"


def test_the_report_functions_answer_in_the_notebooks_language(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from poslib import lab

    results = json.loads((lab.RESULTS_DIR / "lab.json").read_text(encoding="utf-8"))
    monkeypatch.setenv("POSLIB_LANG", "en")
    english = lab.takeaways(results)
    monkeypatch.setenv("POSLIB_LANG", "zh")
    chinese = lab.takeaways(results)
    assert len(chinese) == len(english)
    for line in chinese:
        assert _CJK.search(line) and not _i18n_outputs.latin_words(line), line
    assert [NUMBER.findall(x) for x in chinese] == [NUMBER.findall(x) for x in english]
    # the statuses come from the verdicts' enums, whatever the language of the sentences
    assert lab.scale_agreement(results, results, 8)["claims"][0]["verdict"] == "same at both scales"


def test_tables_printed_with_spaces_line_up_in_display_width() -> None:
    """A table whose cells became Chinese (two columns a character) is laid out again: left-aligned cells start, and
    right-aligned numbers end, at one display column; a table with no wide character is left byte for byte."""
    english = [
        "scheme       family            ppl 1×",
        "none         no positions        9.90",
        "learned      absolute           12.25",
    ]
    chinese = [
        "方案       家族            ppl 1×",
        "none         无位置信息的编码方式        9.90",
        "learned      绝对位置           12.25",
    ]
    lines = _i18n_outputs.realign(list(zip(english, chinese, strict=True)))
    width = _i18n_outputs.display_width

    starts = {width(line[: line.index(t)]) for line, t in zip(lines, ("家族", "无位置", "绝对"), strict=True)}
    assert starts == {13}, lines
    assert len({width(line) for line in lines}) == 1, lines  # "ppl 1×", 9.90 and 12.25 end together
    assert min(len(line) - len(line.rstrip("0123456789.×")) for line in lines) >= 1
    assert _i18n_outputs.realign([(e, e) for e in english]) == english  # no wide character: untouched
    bars = _i18n_outputs.realign([("holds         | same", "成立 | 相同"), ("does not hold | other", "不成立 | 其他")])
    assert len({width(line[: line.index("|")]) for line in bars}) == 1, bars  # a "|" is a column of its own


@pytest.mark.parametrize(
    ("name", "right", "planted", "refusal"),
    [
        (
            "09.md",
            "Llama 3.1：θ' 与手算值的最大相对误差：实测 <",
            "Llama 3.1：θ' 与手算值的最大相对误差：实测 >",
            "comparisons in order",
        ),
        ("06.md", "-0.060（σ = 3.5；", "0.060（σ = 3.5；", "numbers as the English does"),
        ("05.md", "误差 ≤ 2⁻⁸（", "误差 ≤ 2⁻⁶（", "numbers as the English does"),
        ("02.md", "初始长度的 16×（", "初始长度的 16%（", "numbers as the English does"),
    ],
)
def test_a_catalogue_entry_that_changes_a_claim_keeping_its_digits_is_refused(
    tmp_path: Path, name: str, right: str, planted: str, refusal: str
) -> None:
    """A turned sign ("< 1e-12" read as "> 1e-12"), a lost minus, another superscript, × read as %: each keeps the
    plain digits in order, so the loader compares comparisons and numbers as written too."""
    text = (ROOT / "i18n" / "zh" / "prints" / name).read_text(encoding="utf-8")
    assert text.count(right) == 1
    (tmp_path / name).write_text(text.replace(right, planted), encoding="utf-8")
    with pytest.raises(ValueError, match=refusal):
        read_catalogue(tmp_path / name)


def test_a_chinese_kernel_prints_its_lines_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    """A student who re-runs a Chinese notebook reads the stored outputs' Chinese: poslib's import routes the
    kernel's stdout through ChineseStdout, in a Chinese Jupyter kernel only."""
    import io
    import types

    out = io.StringIO()
    stream = _i18n_outputs.ChineseStdout(out)
    print("max |difference| between the two curves: < 1e-9 (bound 1e-9; float64 rounding)", file=stream)
    print("a line no catalogue knows", end="", file=stream)
    assert out.getvalue() == "两条曲线之差的最大绝对值：< 1e-9（界限 1e-9；float64 舍入误差）\n"
    stream.flush()  # an unfinished line goes out as it is when the cell ends
    assert out.getvalue().endswith("\na line no catalogue knows")
    assert stream.getvalue() == out.getvalue()  # anything else is the wrapped stream's

    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setenv("POSLIB_LANG", "zh")
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    assert not _i18n_outputs.chinese_stdout_in_a_chinese_kernel()  # a script, not a kernel
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    monkeypatch.setenv("POSLIB_LANG", "en")
    assert not _i18n_outputs.chinese_stdout_in_a_chinese_kernel()  # an English kernel
    assert isinstance(sys.stdout, io.StringIO)
    monkeypatch.setenv("POSLIB_LANG", "zh")
    assert _i18n_outputs.chinese_stdout_in_a_chinese_kernel()
    assert isinstance(sys.stdout, _i18n_outputs.ChineseStdout)
    assert _i18n_outputs.chinese_stdout_in_a_chinese_kernel()  # once: not wrapped twice
    assert isinstance(sys.stdout._stream, io.StringIO)


def test_a_line_hanging_under_a_label_hangs_under_the_chinese_label() -> None:
    """Notebook 02's two lines: the second sits under the text after "toy table: ", in Chinese after 玩具表：."""
    english = (
        "toy table: mean |cos| between different trained rows 0.30 (bound < 0.4)\n"
        "           mean similarity at distance 1 0.13 (bound < 0.5)"
    )
    lines = _i18n_outputs.translate_output(english).split("\n")
    assert lines[0].startswith("玩具表：")
    assert len(lines[1]) - len(lines[1].lstrip(" ")) == _i18n_outputs.display_width("玩具表：") == 8, lines
