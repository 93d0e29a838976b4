"""Write the course map at the top of every notebook and the exercises at the end, from one source of truth.

Run: python scripts/course_map.py            (update the notebooks in place)
     python scripts/course_map.py --check    (exit 1 if any notebook is out of date; tests/test_course_map.py)
     python scripts/course_map.py --report   (words, code lines and estimated minutes per notebook)
     python scripts/course_map.py --only 05 06   (only these notebooks, by number)

The source of truth is COURSE below (titles, objectives, measured run times) and poslib.exercises
(the exercises and their checkers). The script only touches the cells it owns, found by their ids:
``course-map`` (inserted first) and, at the end, ``exercises`` plus ``ex-<key>`` / ``ex-<key>-code``
for each exercise. Every other cell is left exactly as it is, so rerunning it is idempotent.

Estimated time = careful reading + exploring the interactive figures + running. Reading is measured on
the notebook's own cells (the course map and the exercises excluded; an optional "Going further" section,
from the cell with id ``going-further`` on, is counted apart). The rates are those of a student who works
through the text rather than skims it, calibrated on the times careful readers took in the 2026-12-01
review (CALIBRATION below; tests/test_course_map.py holds the estimate to them): prose at 130 words a
minute, derivations at 50 "words" a minute (one word per six characters of LaTeX), code at 15 lines a
minute, and 2 minutes per interactive figure (``interact(`` in a code cell) to turn its controls. Running is
the measured Run All time in COURSE (scripts/run_notebooks.py prints it). The total is rounded up to 5
minutes so a small edit elsewhere does not make every header stale.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import re
import sys
from dataclasses import dataclass

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from poslib import exercises  # noqa: E402  (the checkout's poslib, not an installed one)

# A careful first reading, not a skim: derivations and code are read slower than prose (see the docstring).
PROSE_WPM, MATH_WPM, MATH_CHARS_PER_WORD, CODE_LPM = 130, 50, 6, 15
MINUTES_PER_WIDGET = 2
MINUTES_PER_EXERCISE = 5
BUDGET_MINUTES = 45

# Minutes a careful reader took for the whole notebook (main path, "Going further" and the exercises), as
# observed in the 2026-12-01 review; the estimate must stay within CALIBRATION_TOLERANCE of each.
CALIBRATION = {"03_sinusoidal.ipynb": 55, "04_relative.ipynb": 70, "06_length_extrapolation.ipynb": 90}
CALIBRATION_TOLERANCE = 0.2


@dataclass(frozen=True)
class Notebook:
    file: str
    title: str
    objectives: tuple[str, ...]
    run_seconds: float  # Run All, measured with scripts/run_notebooks.py on the shared 2-core development machine


COURSE = (
    Notebook(
        "00_tour.ipynb",
        "A tour of poslib",
        (
            "name the four families of positional encoding and the poslib call for each",
            "read a sinusoidal table, RoPE's angles, a relative bias and an ALiBi bias as pictures",
            "pick the notebook to read next for a question you have",
        ),
        8,
    ),
    Notebook(
        "01_why_position.ipynb",
        "Why position matters",
        (
            "show that attention without positions is permutation-equivariant and its pooled output invariant",
            "explain why adding a position vector per slot breaks that symmetry",
            "explain how a causal mask alone leaks position (NoPE), and measure it",
        ),
        11,
    ),
    Notebook(
        "02_learned_absolute.ipynb",
        "Learned absolute positions",
        (
            "inject a learned table by addition and read its similarity matrix",
            "say what happens past $L_{\\max}$ and to rows that were never trained",
            "sort out which kind of absolute encoding the claim “can extrapolate” is about",
        ),
        21,
    ),
    Notebook(
        "03_sinusoidal.ipynb",
        "Sinusoidal positions",
        (
            "compute the sinusoidal table and every pair's wavelength",
            "prove that $\\mathrm{PE}(m)\\cdot\\mathrm{PE}(n)$ depends on $m-n$ and that a shift is a fixed linear map",
            "show why learned projections break the pure $m-n$ dependence",
        ),
        25,  # 18 before issue 43's check over seeds 0-9: Run All took 10.6 s, then 14.9 s, back to back
    ),
    Notebook(
        "04_relative.ipynb",
        "Relative position encodings",
        (
            "expand $q_m^\\top k_n$ into its four terms and see which carry position",
            "compute Transformer-XL scores, T5 buckets and DeBERTa's disentangled scores",
            "compare the relative schemes by parameters, extrapolation and cost",
        ),
        18,
    ),
    Notebook(
        "05_rope.ipynb",
        "RoPE: rotary position embedding",
        (
            "derive RoPE from the requirement that scores depend on $m-n$ only",
            "verify $R_{\\Theta,m}^\\top R_{\\Theta,n} = R_{\\Theta,n-m}$ and that three implementations agree",
            "tell the two memory layouts apart, and read the long-range decay bound honestly",
        ),
        17,
    ),
    Notebook(
        "06_length_extrapolation.ipynb",
        "Length extrapolation",
        (
            "see which RoPE angles are new beyond the training length",
            "compare PI, NTK-aware, dynamic NTK, YaRN and Llama-3 scaling on one figure",
            "explain log-n scaling, XPOS, KERPLE and Sandwich as fixes to the scores",
        ),
        15,
    ),
    Notebook(
        "07_alibi.ipynb",
        "ALiBi: attention with linear biases",
        (
            "compute ALiBi's slopes for any head count and its causal bias",
            "read each head's receptive field off its slope",
            "show that BLOOM's slope × key-index form gives the same attention",
        ),
        7,
    ),
    Notebook(
        "08_extrapolation_lab.ipynb",
        "The extrapolation lab",
        (
            "read perplexity and passkey retrieval against evaluation length, with their spread over seeds",
            "state the verdicts on the sources' extrapolation claims, with their evidence",
            "check that the committed results are what the code produces",
        ),
        52,
    ),
    Notebook(
        "09_rope_in_production.ipynb",
        "RoPE in production",
        (
            "turn a real config.json into inv_freq and an attention factor",
            "explain partial rotary, the base lower bound and M-RoPE's sections",
            "see where RoPE sits in MLA and in a streaming cache with attention sinks",
            "read 2025's variants: LongRoPE's per-pair factors, interleaved M-RoPE, learned attention sinks",
        ),
        16,
    ),
    Notebook(
        "10_learned_and_contextual_positions.ipynb",
        "Learned and contextual positions",
        (
            "show that FIRE can express T5, ALiBi and KERPLE biases",
            "compute CoPE's gated positions and see a task where token positions fail",
            "compare randomized positions and NoPE with the rest in the lab, over seeds",
        ),
        29,
    ),
    Notebook(
        "11_extending_a_trained_model.ipynb",
        "Extending a trained model",
        (
            "explain why distances beyond $L_{train}$ break a trained RoPE model, and count them",
            "draw and check ReRoPE's, Leaky ReRoPE's and Self-Extend's distance maps",
            "compare frequency scaling, distance remapping and short fine-tuning on the same trained models",
            "state the verdict on 000's “NTK is the strongest without fine-tuning” from results over seeds",
        ),
        24,
    ),
    Notebook(
        "12_position_from_the_data.ipynb",
        "Position from the data",
        (
            "show that a constant forget gate is ALiBi, and what a reset token does to the keys before it",
            "compute stick-breaking weights and explain why they need no position index",
            "build RoPE's rotation from reflections, as PaTH's data-chosen Householder factors can",
            "read the lab's FoX, stick-breaking and RoPE/NoPE-hybrid runs: perplexity and retrieval, over seeds",
        ),
        14,
    ),
    Notebook(
        "13_position_in_late_2026_models.ipynb",
        "Position in late-2026 models",
        (
            "read a partial-rotary config in both conventions (Gemma 4's proportional, Qwen3.5's rotated dims)",
            "show why DeepSeek-V4's rotated values depend on distance only, and what the turn back does",
            "tell when rotations from generators give a relative score, and write PaTH as softmax over "
            "delta-rule-corrected queries and keys",
            "say which frequency pairs time, height and width get in M-RoPE, VideoRoPE and HoPE",
        ),
        14,
    ),
)

HEADER_ID, EXERCISES_ID, FURTHER_ID = "course-map", "exercises", "going-further"
COURSE_TITLE = "Positional Encodings, Interactively"  # the book's title (scripts/build_book.py)
# TOOLBAR_CLEAR: the header's first paragraph ("Notebook 05 of 11 in …") is short and holds no link. JupyterLab 4 draws
# the active cell's toolbar (move, insert above/below, delete) over the top right of the cell, about 175 × 32 px, and
# hides it only when its check for overlapping text runs after the markdown is rendered; on a notebook just opened the
# check can run first, and a link under the toolbar then inserts a cell when clicked (issue 37). The links start on the
# second paragraph, below the toolbar; tests/browser/test_links_click.py measures it at 1280 × 800.
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.DOTALL)


def owned(cell_id: str) -> bool:
    """Whether this script writes the cell with this id."""
    return cell_id in (HEADER_ID, EXERCISES_ID) or cell_id.startswith("ex-")


@dataclass(frozen=True)
class Reading:
    prose_words: int
    math_words: int
    code_lines: int
    run_seconds: float
    further_minutes: float = 0.0  # the optional "Going further" section, read after the main path
    widgets: int = 0  # interactive figures on the main path

    @property
    def minutes(self) -> float:
        """Estimated minutes to read the main path of the notebook carefully, explore its figures and run it."""
        return reading_minutes(self.prose_words, self.math_words, self.code_lines, self.widgets) + self.run_seconds / 60


def reading_minutes(prose_words: int, math_words: int, code_lines: int, widgets: int = 0) -> float:
    """Minutes to read so many words of prose and of math and lines of code, and to turn so many figures' controls."""
    return prose_words / PROSE_WPM + math_words / MATH_WPM + code_lines / CODE_LPM + widgets * MINUTES_PER_WIDGET


def reading(nb: nbformat.NotebookNode, run_seconds: float) -> Reading:
    """Words and code lines of the notebook's own cells (not the ones this script writes).

    Cells from the one with id ``going-further`` on are optional: counted apart, in ``further_minutes``.
    """
    counts = {False: [0, 0, 0, 0], True: [0, 0, 0, 0]}  # [prose words, math characters, code lines, widgets]
    further = False
    for cell in nb.cells:
        cell_id = cell.get("id", "")
        further = further or cell_id == FURTHER_ID
        if owned(cell_id):
            continue
        count = counts[further]
        if cell.cell_type == "markdown":
            text = re.sub(r"<[^>]+>", " ", cell.source)
            count[1] += sum(len(m) for m in MATH.findall(text))
            count[0] += len(MATH.sub(" ", text).split())
        elif cell.cell_type == "code":
            count[2] += sum(1 for line in cell.source.splitlines() if line.strip())
            count[3] += "interact(" in cell.source
    (prose, math_chars, code, widgets), (f_prose, f_math, f_code, f_widgets) = counts[False], counts[True]
    extra = reading_minutes(f_prose, math.ceil(f_math / MATH_CHARS_PER_WORD), f_code, f_widgets)
    return Reading(prose, math.ceil(math_chars / MATH_CHARS_PER_WORD), code, run_seconds, extra, widgets)


def whole_minutes(index: int, nb: nbformat.NotebookNode) -> float:
    """Estimated minutes for all of notebook ``index``: main path, "Going further" and the exercises."""
    r = reading(nb, COURSE[index].run_seconds)
    return r.minutes + r.further_minutes + MINUTES_PER_EXERCISE * len(exercises.exercises(f"{index:02d}"))


def header(index: int, nb: nbformat.NotebookNode) -> str:
    """The course-map cell of notebook ``index``."""
    entry = COURSE[index]
    last = len(COURSE) - 1
    r = reading(nb, entry.run_seconds)
    n_ex = len(exercises.exercises(f"{index:02d}"))
    total = 5 * math.ceil(r.minutes / 5)
    links = []
    for i, other in enumerate(COURSE):
        label = f"{i:02d} {other.title}"
        links.append(f"**{label} ◀ you are here**" if i == index else f"[{label}]({other.file})")
    prev = f"[← {index - 1:02d} {COURSE[index - 1].title}]({COURSE[index - 1].file})" if index > 0 else "← start"
    nxt = f"[{index + 1:02d} {COURSE[index + 1].title} →]({COURSE[index + 1].file})" if index < last else "end →"
    objectives = "\n".join(f"- {o}" for o in entry.objectives)
    return (
        f'<a id="{HEADER_ID}"></a>\n'
        f"**Notebook {index:02d} of {last:02d}** in *{COURSE_TITLE}*\n\n"  # no link here: see TOOLBAR_CLEAR
        f"{prev} · {nxt} · [glossary 中英术语表](../docs/glossary.md) · [notation](../docs/notation.md) · "
        f"[exercises](#{EXERCISES_ID})\n\n"
        f"<details open><summary>Course map</summary>\n\n{' · '.join(links)}\n\n</details>\n\n"
        f"**After this notebook you can**\n\n{objectives}\n\n"
        f"**Time:** about {total} min for a careful first reading ({r.prose_words + r.math_words} words and "
        f"{r.code_lines} lines of code to work through"
        + (f", {r.widgets} interactive figure{'s' if r.widgets != 1 else ''} to explore" if r.widgets else "")
        + f", {entry.run_seconds:.0f} s to run), plus {n_ex} exercises at the end "
        f"(about {MINUTES_PER_EXERCISE * n_ex} min)"
        + (
            f" and an optional [Going further](#{FURTHER_ID}) section (about {math.ceil(r.further_minutes)} min)."
            if r.further_minutes
            else "."
        )
    )


def exercise_cells(index: int) -> list[tuple[str, str, str, list[str]]]:
    """(id, cell type, source, tags) of the exercise section of notebook ``index``."""
    number = f"{index:02d}"
    mod = f"nb{number}"
    cells = [
        (
            EXERCISES_ID,
            "markdown",
            f'<a id="{EXERCISES_ID}"></a>\n## Exercises\n\n'
            "Each cell below poses one exercise: replace `answer = None` with your answer and run the cell. "
            f"The checker (`poslib.exercises.{mod}`) says what is right, or what is wrong: shape, sign, layout, "
            "off by one, units. A hint and a solution are folded under each question.",
            [],
        )
    ]
    for k, ex in enumerate(exercises.exercises(number), start=1):
        md = (
            f"### Exercise {index}.{k} · {ex.title}\n\n{ex.prompt}\n\n"
            f"<details><summary>Hint</summary>\n\n{ex.hint}\n\n</details>\n\n"
            f"<details><summary>Solution</summary>\n\n```python\n{ex.solution}\n```\n\n</details>"
        )
        given = f"{ex.setup}\n" if ex.setup else ""
        code = f"from poslib.exercises import {mod}\n\n{given}{ex.stub}\n{mod}.{ex.check.__name__}(answer)"
        cells.append((f"ex-{ex.key}", "markdown", md, []))
        cells.append((f"ex-{ex.key}-code", "code", code, ["exercise"]))
    return cells


def update(index: int, nb: nbformat.NotebookNode) -> bool:
    """Bring the owned cells of notebook ``index`` up to date in place; True if anything changed."""
    changed = False
    by_id = {cell.get("id"): cell for cell in nb.cells}

    def put(cell_id: str, kind: str, source: str, tags: list[str], at: int | None) -> None:
        nonlocal changed
        cell = by_id.get(cell_id)
        if cell is None:
            maker = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
            cell = maker(source, id=cell_id)
            if tags:
                cell.metadata["tags"] = tags
            nb.cells.insert(len(nb.cells) if at is None else at, cell)
            by_id[cell_id] = cell
            changed = True
            return
        if cell.source != source:
            cell.source = source
            if kind == "code":
                cell.outputs, cell.execution_count = [], None
            changed = True
        if tags and cell.metadata.get("tags") != tags:
            cell.metadata["tags"] = tags
            changed = True

    put(HEADER_ID, "markdown", header(index, nb), [], 0)
    for cell_id, kind, source, tags in exercise_cells(index):
        put(cell_id, kind, source, tags, None)
    return changed


def notebook_paths() -> list[pathlib.Path]:
    """The notebooks of COURSE, checked against the folder so a new notebook cannot be forgotten."""
    found = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    listed = [entry.file for entry in COURSE]
    if found != listed:
        raise SystemExit(f"COURSE lists {listed}, notebooks/ holds {found}")
    return [ROOT / "notebooks" / name for name in listed]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a notebook is out of date")
    parser.add_argument("--report", action="store_true", help="print the reading measures")
    parser.add_argument(
        "--only", nargs="+", metavar="NN", help="touch only these notebooks, by number (e.g. --only 05 06)"
    )
    args = parser.parse_args()
    stale = []
    for index, path in enumerate(notebook_paths()):
        if args.only and path.name[:2] not in args.only:
            continue
        nb = nbformat.read(path, as_version=4)
        if args.report:
            r = reading(nb, COURSE[index].run_seconds)
            flag = "" if r.minutes <= BUDGET_MINUTES else f"  > {BUDGET_MINUTES} min"
            print(
                f"{path.name:45s} prose {r.prose_words:5d}  math {r.math_words:4d}  code {r.code_lines:4d} lines"
                f"  widgets {r.widgets}  run {r.run_seconds:3.0f} s  = {r.minutes:5.1f} min{flag}"
                f"  (+ going further {r.further_minutes:4.1f} min; all {whole_minutes(index, nb):5.1f})"
            )
            continue
        if update(index, nb):
            stale.append(path.name)
            if not args.check:
                nbformat.write(nb, path)
    if args.check and stale:
        sys.exit(f"out of date (run python scripts/course_map.py): {', '.join(stale)}")
    if not args.check and not args.report:
        print(f"updated: {', '.join(stale) or 'nothing'}")


if __name__ == "__main__":
    main()
