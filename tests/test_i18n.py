"""The Chinese edition is held to the English text (scripts/i18n.py; issue 28).

Every markdown cell of every notebook (and every section of the glossary, the notation page, the README and the
course map's entries) has a translation keyed by the cell's id and the hash of the English it translates; an
edit to the English without its translation fails, naming the cell. Each translation keeps the English cell's
formulas, code spans, link targets, anchors and digits. The generated notebooks have the English cells in the same
order, after a first code cell that sets the language; their code is the English code or its Chinese block
(tests/test_i18n_code.py), and every link in them resolves. They are in git (notebooks/zh/): their sources are what
the build writes now, their outputs what executing them prints (strict nbval, like the English notebooks'), and the
Chinese pages in git (README.zh-CN.md, docs/zh/) link them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from i18n_script import ROOT, i18n

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("path", i18n.sources(), ids=lambda p: p.name)
def test_every_block_matches_its_english_cell(path: Path) -> None:
    problems = i18n.problems_of(path, "zh")
    assert not problems, "\n".join(problems)


def test_an_english_edit_without_its_translation_fails_naming_the_cell(tmp_path: Path) -> None:
    source = ROOT / "notebooks" / "03_sinusoidal.ipynb"
    nb = json.loads(source.read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c["cell_type"] == "markdown" and c["id"] == "ef122b51")
    cell["source"] = "".join(cell["source"]) + " One more English sentence."
    edited = tmp_path / source.name
    edited.write_text(json.dumps(nb), encoding="utf-8")
    problems = i18n.problems_of(edited, "zh")
    assert any("cell ef122b51 changed since it was translated" in p for p in problems), problems
    assert len(problems) == 1, problems


@pytest.mark.parametrize(
    ("english", "translated", "complaint"),
    [
        ("With $m\\theta_i$ the pair turns.", "这一对转过 $m\\theta$。", "formulas differ"),
        ("Pair 31 turns once in 47,000 tokens.", "第 31 对每 47,001 个 token 转一圈。", "numbers differ"),
        ("See [notebook 05](05_rope.ipynb#notation).", "见[笔记本 05](05_rope.ipynb)。", "link targets differ"),
        ("Call `poslib.apply_rope` here.", "在这里调用 `poslib.rope`。", "code spans differ"),
        ('<a id="exercises"></a> Exercises', '<a id="练习"></a> 练习', "anchors (id=) differ"),
        ("The score depends on the offset only.", "The score depends on the offset only.", "no Chinese"),
    ],
)
def test_a_translation_that_changes_what_it_must_keep_is_caught(english: str, translated: str, complaint: str):
    problems = i18n.compare(english, translated)
    assert any(complaint in p for p in problems), problems


def test_a_faithful_translation_passes_and_a_wrapped_formula_is_a_formula():
    english = "The pair $0 \\le m - n\n\\le m$ turns, and 16,384 tokens fit in `rope_theta`."
    translated = "这一对 $0 \\le m - n \\le m$ 会转动，`rope_theta` 中能放下 16,384 个 token。"
    assert i18n.compare(english, translated) == []


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Chinese notebooks, generated into a temporary folder (docs/zh/ and README.zh-CN.md are rewritten)."""
    out = tmp_path_factory.mktemp("zh")
    i18n.build("zh", out, documents=False)  # compare the committed documents below, never rewrite them
    return out


def _english_notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_code_cells_do_not_depend_on_the_notebooks_folder():
    """A generated notebook runs from notebooks/zh/, one folder deeper, with the same code: no code cell may
    reach a file through a path relative to the working directory (08, 10 and 11 read ../results/ and crashed
    there; they use poslib.lab.RESULTS_DIR now)."""
    relative = re.compile(r"""(["'])\.\.?/|Path\(\s*["']\.\.?["']\s*\)""")
    found = []
    for path in _english_notebooks():
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code" and relative.search("".join(cell["source"])):
                found.append(f"{path.name} cell {cell['id']}")
    assert not found, found


@pytest.mark.parametrize("english", _english_notebooks(), ids=lambda p: p.stem[:2])
def test_generated_notebook_has_the_english_cells_after_the_language_cell(built: Path, english: Path) -> None:
    """Same cells in the same order after the first code cell, which sets the language; each code cell is the
    English one or its current Chinese block; no output is copied from English (they come from executing it)."""
    en = json.loads(english.read_text(encoding="utf-8"))
    zh = json.loads((built / english.name).read_text(encoding="utf-8"))
    language = next(k for k, c in enumerate(zh["cells"]) if c["cell_type"] == "code")
    assert zh["cells"][language]["id"] == i18n.LANGUAGE_CELL_ID
    assert 'poslib.set_language("zh")' in "".join(zh["cells"][language]["source"])
    cells = zh["cells"][:language] + zh["cells"][language + 1 :]
    assert [(c["id"], c["cell_type"]) for c in cells] == [(c["id"], c["cell_type"]) for c in en["cells"]]
    blocks = i18n.translated_code(english, "zh")
    for a, b in zip(en["cells"], cells, strict=True):
        if a["cell_type"] == "code":
            assert "".join(b["source"]) == blocks.get(a["id"], "".join(a["source"])), f"code cell {a['id']}"
            assert b["outputs"] == [], f"code cell {a['id']}: build copied outputs"
        elif a["cell_type"] == "markdown":
            text = "".join(b["source"])
            assert CJK.search(text) or not re.search(r"[A-Za-z]{4,}", "".join(a["source"])), (
                f"markdown cell {a['id']} of {english.name} has no Chinese"
            )


def test_build_leaves_the_english_notebooks_alone(tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in _english_notebooks()}
    i18n.build("zh", tmp_path, documents=False)
    assert {p.name: p.read_bytes() for p in _english_notebooks()} == before


def _anchors(nb: dict) -> set[str]:
    ids = {f"cell-id={c['id']}" for c in nb["cells"] if c.get("id")}  # JupyterLab 4's #cell-id=… fragments
    for c in nb["cells"]:
        if c["cell_type"] != "markdown":
            continue
        text = "".join(c["source"])
        ids |= set(re.findall(r'\bid="([^"]+)"', text))
        ids |= {i18n.heading_anchor(line) for line in text.splitlines() if re.match(r"^#{1,6}\s", line)}
    return ids


def test_every_link_of_the_chinese_edition_resolves(built: Path) -> None:
    """Relative links from notebooks/zh/, docs/zh/ and README.zh-CN.md name files that exist, and anchors in them."""
    problems = []
    pages: list[tuple[Path, str, Path]] = []  # (where it will live, its text, the file read)
    for path in sorted(built.glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        pages.append((ROOT / "notebooks" / "zh" / path.name, text, path))
    for path in [*(ROOT / "docs" / "zh").glob("*.md"), ROOT / "README.zh-CN.md"]:
        if path.is_file():
            pages.append((path, path.read_text(encoding="utf-8"), path))
    checked = 0
    for home, text, _ in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^(?:[a-z]+:|/)", target):
                continue
            file, _, anchor = target.partition("#")
            dest = home if not file else (home.parent / file).resolve()
            if dest.parent == ROOT / "notebooks" / "zh":
                dest = built / dest.name  # the generated copy stands in for notebooks/zh/
            checked += 1
            if not dest.exists():
                problems.append(f"{home.relative_to(ROOT)}: {target} → no such file")
            elif anchor and dest.suffix == ".ipynb" and anchor not in _anchors(json.loads(dest.read_text())):
                problems.append(f"{home.relative_to(ROOT)}: {target} → no anchor {anchor!r}")
    print(f"{checked} links checked")
    assert checked > 100 and not problems, "\n".join(problems[:30])


def test_committed_chinese_documents_are_the_generated_ones(built: Path) -> None:
    """docs/zh/*.md and README.zh-CN.md are in git (their links work on GitHub): they must be what build writes."""
    for doc in (*i18n.DOCS, i18n.FRONT):
        source = ROOT / doc
        target = i18n.front_door_path("zh") if doc == i18n.FRONT else ROOT / "docs" / "zh" / source.name
        assert target.is_file(), f"{target.relative_to(ROOT)} is missing: python scripts/i18n.py build"
        assert target.read_text(encoding="utf-8") == i18n.translated_document(source, "zh"), (
            f"{target.relative_to(ROOT)} is stale: python scripts/i18n.py build"
        )


CHINESE_NOTEBOOKS = ROOT / "notebooks" / "zh"  # in git, so that the Chinese pages' links work on GitHub


def test_committed_chinese_notebooks_are_the_generated_ones(built: Path) -> None:
    """notebooks/zh/ is in git (README.zh-CN.md and docs/zh/ link it): its sources (cells, their ids and text) are
    what build writes now, and its .generated.json records them (a rebuild then overwrites them, and keeps one a
    student has changed). Its outputs are what executing it prints: strict nbval holds them, as the English ones."""
    rebuild = (
        "python scripts/i18n.py build --execute (after every edit of an English notebook or of i18n/zh/; "
        "it executes the notebooks whose code changed)"
    )
    want = sorted(p.name for p in built.glob("*.ipynb"))
    have = sorted(p.name for p in CHINESE_NOTEBOOKS.glob("*.ipynb"))
    assert have == want, f"notebooks/zh/ holds {sorted(set(have) ^ set(want))} wrongly: {rebuild}"

    def sources(path: Path) -> list:
        nb = json.loads(path.read_text(encoding="utf-8"))
        return [(c["cell_type"], c.get("id"), "".join(c["source"])) for c in nb["cells"]]

    stale = [name for name in want if sources(CHINESE_NOTEBOOKS / name) != sources(built / name)]
    assert not stale, f"notebooks/zh/ is stale: {', '.join(stale)} differ from what build writes now: {rebuild}"
    unrun = [
        f"{name} cell {c['id']}"
        for name in want
        for c in json.loads((CHINESE_NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "code" and c["execution_count"] is None
    ]
    assert not unrun, f"not executed since it was built: {unrun[:5]}: {rebuild}"
    log = json.loads((CHINESE_NOTEBOOKS / i18n.GENERATED_LOG).read_text(encoding="utf-8"))
    for name in want:
        nb = json.loads((CHINESE_NOTEBOOKS / name).read_text(encoding="utf-8"))
        assert log.get(name) == i18n.sources_digest(nb), (
            f"notebooks/zh/{i18n.GENERATED_LOG} does not record {name}: {rebuild}"
        )


def notebook_link_problems(page: Path, text: str, notebooks: Path = CHINESE_NOTEBOOKS) -> tuple[int, list[str]]:
    """(links into a notebook, one line per link that is not into an existing Chinese notebook at an anchor it has)
    of a Chinese page in git (README.zh-CN.md, docs/zh/*.md); ``notebooks`` stands in for notebooks/zh/."""
    checked, problems = 0, []
    for target in re.findall(r"\]\(([^)\s]+)\)|\bhref=\"([^\"]+)\"", text):
        target = target[0] or target[1]
        file, _, anchor = target.partition("#")
        if not file.endswith(".ipynb") or re.match(r"^[a-z]+:", target):
            continue
        checked += 1
        dest = (page.parent / file).resolve()
        if dest.parent != CHINESE_NOTEBOOKS:
            problems.append(f"{page.relative_to(ROOT)}: {target} is not a Chinese notebook (notebooks/zh/)")
        elif not (notebooks / dest.name).is_file():
            problems.append(f"{page.relative_to(ROOT)}: {target} → no such notebook")
        elif anchor and anchor not in _anchors(json.loads((notebooks / dest.name).read_text(encoding="utf-8"))):
            problems.append(f"{page.relative_to(ROOT)}: {target} → no anchor {anchor!r} in the Chinese notebook")
    return checked, problems


def test_the_chinese_pages_link_the_chinese_notebooks() -> None:
    """Every link from README.zh-CN.md and docs/zh/*.md into a notebook opens the Chinese notebook (notebooks/zh/,
    in git) at an anchor it has: the translated headings carry the English anchors (with_english_anchors)."""
    checked, problems = 0, []
    for page in [ROOT / "README.zh-CN.md", *sorted((ROOT / "docs" / "zh").glob("*.md"))]:
        n, found = notebook_link_problems(page, page.read_text(encoding="utf-8"))
        checked, problems = checked + n, problems + found
    assert checked > 300 and not problems, "\n".join(problems[:30])


def test_the_chinese_link_check_catches_an_english_notebook_or_a_missing_anchor() -> None:
    glossary = ROOT / "docs" / "zh" / "glossary.md"
    for wrong in (
        "[05](../../notebooks/05_rope.ipynb#The-decay-bound)",  # the English notebook
        "[05](../../notebooks/zh/05_rope.ipynb#No-such-heading)",
        "[99](../../notebooks/zh/99_none.ipynb)",
    ):
        assert notebook_link_problems(glossary, wrong)[0] == 1 and notebook_link_problems(glossary, wrong)[1], wrong
    heading = next(
        i18n.heading_anchor(line)
        for line in (ROOT / "i18n" / "zh" / "05_rope.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("## ")
    )  # a Chinese heading: the Chinese notebook has it too
    english = i18n.heading_anchor(
        next(
            line
            for c in json.loads((ROOT / "notebooks" / "05_rope.ipynb").read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "markdown"
            for line in "".join(c["source"]).splitlines()
            if line.startswith("## ")
        )
    )
    for anchor in (english, heading):
        assert notebook_link_problems(glossary, f"[05](../../notebooks/zh/05_rope.ipynb#{anchor})") == (1, [])


def test_rebuilding_keeps_a_notebook_the_student_changed(tmp_path: Path) -> None:
    i18n.build("zh", tmp_path, documents=False)
    mine = tmp_path / "07_alibi.ipynb"
    mine.write_text(mine.read_text(encoding="utf-8").replace("answer = None", "answer = 42", 1), encoding="utf-8")
    untouched = (tmp_path / "03_sinusoidal.ipynb").read_bytes()
    i18n.build("zh", tmp_path, documents=False)
    assert "answer = 42" in mine.read_text(encoding="utf-8"), "a rebuild wiped the student's answer"
    assert (tmp_path / "03_sinusoidal.ipynb").read_bytes() == untouched
    i18n.build("zh", tmp_path, documents=False, force=True)
    assert "answer = 42" not in mine.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.stem)
def test_a_chinese_notebooks_widget_outputs_name_its_own_widget_state(path: Path) -> None:
    """The stored widget state is the Chinese run's (the book reads its controls), not the English notebook's."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    state = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    views = [
        out["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
        for cell in nb["cells"]
        if cell["cell_type"] == "code"
        for out in cell.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
    ]
    missing = [view for view in views if view not in state]
    assert not missing, f"{path.name}: widget outputs {missing} are not in its widget state (re-execute it)"
