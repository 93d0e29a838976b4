"""Every notebook opens with its course map (number, previous/next, objectives, time) and ends with its
exercises, and both are what scripts/course_map.py writes from its one source of truth."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "course_map.py"


def load_script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("course_map", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["course_map"] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def test_headers_and_exercises_are_current() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_header_is_the_first_cell_and_links_glossary_and_notation() -> None:
    course_map = load_script()
    paths = course_map.notebook_paths()
    for index, path in enumerate(paths):
        first = json.loads(path.read_text())["cells"][0]
        text = "".join(first["source"])
        assert first["id"] == "course-map", path.name
        assert f"Notebook {index:02d} of {len(paths) - 1:02d}" in text and "you are here" in text, path.name
        assert "../docs/glossary.md" in text and "../docs/notation.md" in text, path.name
        assert "**Time:** about" in text and text.count("\n- ") >= 3, path.name
        # The first paragraph holds no link: JupyterLab's cell toolbar may cover its right end (TOOLBAR_CLEAR).
        assert "](" not in text.split("\n\n")[0] and "href" not in text.split("\n\n")[0], path.name
        nav = text.split("\n\n")[1].split("·")  # previous · next · glossary · notation · exercises
        if index > 0:
            assert f"]({paths[index - 1].name})" in nav[0], path.name
        if index < len(paths) - 1:
            assert f"]({paths[index + 1].name})" in nav[1], path.name


def test_reading_time_counts_words_math_code_and_widgets() -> None:
    # 390 prose words, 60 characters of math (10 "words"), 30 code lines and one interactive figure read, at a
    # careful 130 words, 50 math words and 15 lines a minute plus 2 minutes a figure, in 3 + 0.2 + 2 + 2 minutes.
    import nbformat

    course_map = load_script()
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(" ".join(["word"] * 390) + " $" + "x" * 58 + "$"),
            nbformat.v4.new_code_cell("\n".join(["x = 1"] * 29) + "\ninteract(plot)"),
            nbformat.v4.new_markdown_cell("ignored " * 500, id="course-map"),
        ]
    )
    r = course_map.reading(nb, run_seconds=0)
    assert (r.prose_words, r.math_words, r.code_lines, r.widgets) == (390, 10, 30, 1)
    assert abs(r.minutes - 7.2) < 1e-9


def test_estimated_times_match_what_careful_readers_took() -> None:
    # The 2026-12-01 review timed careful readers: 03 ~55 min, 04 ~70, 06 ~90 (main path, Going further and
    # exercises). The old measure (200 words a minute, code at 30 lines) said 40, 50 and 53.
    import nbformat

    course_map = load_script()
    names = [entry.file for entry in course_map.COURSE]
    assert course_map.CALIBRATION == {
        "03_sinusoidal.ipynb": 55,
        "04_relative.ipynb": 70,
        "06_length_extrapolation.ipynb": 90,
    }
    for name, observed in course_map.CALIBRATION.items():
        index = names.index(name)
        nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
        estimate = course_map.whole_minutes(index, nb)
        print(f"{name}: estimated {estimate:.0f} min, observed {observed} min")
        assert abs(estimate - observed) <= course_map.CALIBRATION_TOLERANCE * observed, (name, estimate, observed)


def test_glossary_has_the_issue_terms() -> None:
    glossary = (ROOT / "docs" / "glossary.md").read_text()
    for term in ("位置编码", "外推", "偏置", "桶", "解耦", "内积", "周期性", "远程衰减"):
        assert f"| {term}" in glossary, term
