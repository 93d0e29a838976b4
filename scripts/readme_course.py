"""Write the README's course table from the notebooks' own course-map headers.

Run: python scripts/readme_course.py            (rewrite the table in README.md)
     python scripts/readme_course.py --check    (exit 1 if it is out of date; tests/test_readme.py)

The table sits between the markers ``<!-- course-table:start -->`` and ``<!-- course-table:end -->``. Titles and
times are read from the first cell of each notebook (id ``course-map``, written by scripts/course_map.py), so
after ``python scripts/course_map.py`` changes a header, rerun this script. What the script cannot read from a
notebook, the sections of the two sources each one follows and a one-line summary, is in COVERS below.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START, END = "<!-- course-table:start -->", "<!-- course-table:end -->"

# Per notebook number: the sections of 000 and 001 it follows (their numbering), and what it covers.
COVERS = {
    "00": ("—", "one cell per family of schemes, one picture each"),
    "01": (
        "000: 动机, 一, 二 · 001: 一",
        "attention without positions is permutation-equivariant; causal masks and NoPE",
    ),
    "02": ("000: 3.1 · 001: 二", "a trained position table, and why it stops at L_max"),
    "03": ("000: 3.2 · 001: 二", 'Vaswani\'s sinusoids, PE(p+Δ) = M_Δ·PE(p), what "extrapolates" means'),
    "04": ("000: 四 · 001: 三", "the four-term expansion, Transformer-XL/XLNet, T5 buckets, DeBERTa"),
    "05": ("000: 五 · 001: 四", "rotary embeddings from first principles, both memory layouts"),
    "06": ("000: 六", "PI, NTK-aware, dynamic NTK, YaRN, Llama-3, XPOS, KERPLE, Sandwich, log-n"),
    "07": ("000: 七 · 001: 三(1)", "linear biases, the paper's slopes, BLOOM's form"),
    "08": (
        "000: 六, 七.3",
        "small language models trained with each scheme: perplexity and passkey retrieval beyond the training length",
    ),
    "09": (
        "after the sources (001: 四, models)",
        "real `config.json` values (Llama 3.1/4, Qwen2.5, Gemma 3, DeepSeek-V3) checked by hand, partial rotary and "
        "p-RoPE, the base lower bound, MLA's decoupled RoPE, 2-D RoPE and M-RoPE, attention sinks",
    ),
    "10": (
        "after the sources",
        "FIRE's learned bias (exact copies of T5, ALiBi, KERPLE; progressive interpolation; the lab's learned "
        "functions), CoPE's counted positions on a word-recall task where token positions fail, randomized positions "
        "(Ruoss et al.), what a NoPE layer does with the 1/(m+1) signal and where it stops; the three new lab "
        "schemes over seeds",
    ),
    "11": (
        "000: 6.2 (and after the sources)",
        "ReRoPE, Leaky ReRoPE and Self-Extend distance maps; the lab's training-free scalings and remaps against short "
        'fine-tuning with PI, NTK and YaRN, over seeds; the verdict on 000\'s "NTK is strongest without fine-tuning", '
        "as a practitioner would test it and at a second model size",
    ),
    "12": (
        "after the sources",
        "FoX's forget gate (a data-dependent ALiBi), stick-breaking attention (recency without an index), PaTH's "
        "Householder reflections (RoPE's rotations chosen by the data); the lab's FoX, stick-breaking and RoPE/NoPE "
        "hybrid over seeds",
    ),
    "13": (
        "after the sources",
        "Gemma 4's proportional partial rotary against the rotated-dims convention, DeepSeek-V4's rotated values, "
        "rotations from commuting generators, PaTH as softmax over delta-rule-corrected queries and keys, how "
        "M-RoPE, VideoRoPE and HoPE share a head's frequencies; the lab's DroPE over three recalibration budgets",
    ),
}

_TITLE = re.compile(r"\*\*(\d\d) (.+?) ◀ you are here\*\*")
_MAIN = re.compile(r"\*\*Time:\*\* about (\d+) min")
_EXERCISES = re.compile(r"plus (\d+) exercises? at the end \(about (\d+) min\)")
_FURTHER = re.compile(r"Going further\]\(#going-further\) section \(about (\d+) min\)")


def header(path: pathlib.Path) -> str:
    """The text of a notebook's course-map cell."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    first = next((c for c in cells if c.get("id") == "course-map"), None)
    if first is None:
        raise SystemExit(f"{path.name} has no course-map cell: run python scripts/course_map.py")
    return "".join(first["source"])


def row(path: pathlib.Path) -> tuple[str, int, int, int]:
    """(table row, main-path minutes, exercise minutes, going-further minutes) of one notebook."""
    text = header(path)
    number = path.name[:2]
    title, main, exercises = _TITLE.search(text), _MAIN.search(text), _EXERCISES.search(text)
    if not (title and main and exercises):
        raise SystemExit(f"{path.name}: its course-map header has no title, time or exercises line")
    if number not in COVERS:
        raise SystemExit(f"{path.name}: add its sources and summary to COVERS in scripts/readme_course.py")
    further = _FURTHER.search(text)
    minutes, ex_minutes = int(main.group(1)), int(exercises.group(2))
    gf_minutes = int(further.group(1)) if further else 0
    time = f"{minutes} min · exercises {ex_minutes} min" + (f" · going further {gf_minutes} min" if further else "")
    sources, covers = COVERS[number]
    link = f"[{number} · {title.group(2)}](notebooks/{path.name})"
    return f"| {link} | {time} | {sources} | {covers} |", minutes, ex_minutes, gf_minutes


def table() -> str:
    """The Markdown between the markers: the table and its total."""
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    rows = [row(p) for p in paths]
    main, ex, gf = (sum(r[k] for r in rows) for k in (1, 2, 3))
    hours = f"{main // 60} h {main % 60} min" if main >= 60 else f"{main} min"
    return "\n".join(
        [
            "<!-- Generated by scripts/readme_course.py from each notebook's course-map header: do not edit. -->",
            "| notebook | time (careful first reading) | sources' sections | what it covers |",
            "|---|---|---|---|",
            *(r[0] for r in rows),
            "",
            f"In all: about {hours} for the {len(rows)} main paths, "
            f"{ex} min of exercises and {gf} min of optional “Going further” sections.",
        ]
    )


def render(readme: str) -> str:
    """``readme`` with the text between the markers replaced by the current table."""
    if readme.count(START) != 1 or readme.count(END) != 1:
        raise SystemExit(f"README.md needs one {START} and one {END} line")
    head, rest = readme.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{table()}\n{END}{tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the README's table is out of date")
    args = parser.parse_args()
    current = README.read_text(encoding="utf-8")
    new = render(current)
    if args.check:
        if new != current:
            sys.exit("README.md's course table is out of date: run python scripts/readme_course.py")
        return
    if new != current:
        README.write_text(new, encoding="utf-8")
    print(f"README.md course table {'updated' if new != current else 'unchanged'}")


if __name__ == "__main__":
    main()
