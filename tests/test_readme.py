"""The README is a short front door whose course table is generated, whose commands are the ones CI runs, and
which names the sources by title; the developer material it used to hold lives in CONTRIBUTING.md and docs/."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import sys
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
REQUIREMENTS = ROOT / "requirements.txt"
MAX_LINES = 150


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_course", ROOT / "scripts" / "readme_course.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_course"] = module
    spec.loader.exec_module(module)
    return module


def start_here() -> str:
    """The README's "Start here" section."""
    text = README.read_text(encoding="utf-8")
    start = text.index("## Start here")
    return text[start : text.index("\n## ", start)]


def labelled(block: str) -> dict[str, str]:
    """{label: command} of a bash block's lines, from each line's `# label` comment."""
    found = {}
    for line in block.splitlines():
        command, _, comment = line.partition("#")
        if comment.strip():
            found[comment.split()[0].strip(",:;")] = command.strip()
    return found


def blocks() -> list[str]:
    """The ```bash blocks of the README's "Start here" section, in order."""
    found = re.findall(r"^```bash\n(.*?)^```", start_here(), re.M | re.S)
    assert found, "no ```bash block in the README's Start here"
    return found


def commands() -> dict[str, str]:
    """Every labelled command of "Start here": environment, install, open (the first block), test."""
    return {label: command for block in blocks() for label, command in labelled(block).items()}


def test_course_table_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert load_script().render(text) == text, "README.md's course table is stale: run python scripts/readme_course.py"


def test_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; developer material goes in CONTRIBUTING.md and docs/"
    for section in ("## Start here", "## The course", "## Shorter paths", "## Read without running", "## The sources"):
        assert section in text, section
    assert "(CONTRIBUTING.md)" in text and "(docs/api.md)" in text
    assert "git restore notebooks/" in text and "git checkout -- notebooks/" in text
    # the two sources, by title (shared/seeds 000 and 001)
    assert "「LLMs 位置编码篇」" in text and "大模型中的位置编码（rope详细讲解）" in text
    # the count of notebooks in the first paragraph is the folder's
    words = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen".split()
    n = len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    assert f"in {words[n]} Jupyter" in text.split("\n\n")[1], f"the README's first paragraph should say {words[n]}"


def test_commands_are_the_ones_ci_runs() -> None:
    # .ci/run runs the README's environment, install and test lines: the same strings, in the same order.
    found = commands()
    assert found.get("environment") == "python3 -m venv .venv && source .venv/bin/activate", found
    assert found.get("install") == "pip install -r requirements.txt", found
    assert found.get("test") == "pip install -r requirements-dev.txt && pytest", found
    assert found.get("open", "").startswith("jupyter lab"), found
    # The first block works as pasted: it makes the environment, installs and opens the course (the browser
    # tests read the open line from it); the tests are a line of their own, run after the course is closed.
    assert list(labelled(blocks()[0])) == ["environment", "install", "open"], blocks()[0]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    # CI's environment is the README's in its own folder, so running .ci/run leaves a developer's .venv alone.
    environment = found["environment"].replace(".venv", ".venv-ci")
    for command in (environment, found["install"], found["test"]):
        assert command in ci, f"the README's command {command!r} is not a line of .ci/run"
    assert ci.index(environment) < ci.index(found["install"]) < ci.index(found["test"]), "not in the README's order"
    assert "rm -rf .venv-ci" in ci[: ci.index(environment)], "CI's environment must be a fresh one"


def test_cpu_route_pins_the_same_torch() -> None:
    # The README's CPU-only route installs the torch that requirements.txt pins, from PyTorch's CPU index, so
    # that the install line then finds the pin satisfied (2.13.0+cpu satisfies ==2.13.0) and fetches no CUDA.
    pin = next(line for line in REQUIREMENTS.read_text().splitlines() if line.startswith("torch=="))
    cpu = f"pip install {pin} --index-url https://download.pytorch.org/whl/cpu"
    assert f"`{cpu}`" in start_here(), f"the README's CPU route should read `{cpu}`"
    conda = "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu"  # how CI takes the CPU build, conda too
    assert "environment.yml" in start_here() and conda in start_here()


def pins(path: pathlib.Path) -> dict[str, str]:
    """{package: pinned line} of a requirements file (comments, blank lines and `-e .` left out)."""
    lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    return {line.split("==")[0].lower(): line for line in lines if "==" in line}


def test_requirements_split_course_from_developer_tools() -> None:
    # requirements.txt is what the course and a student's `pytest` need; the developer's tools are apart.
    course, dev = pins(REQUIREMENTS), pins(ROOT / "requirements-dev.txt")
    assert "-e ." in REQUIREMENTS.read_text().splitlines(), "requirements.txt installs poslib itself"
    for needed in ("torch", "numpy", "matplotlib", "ipywidgets", "jupyterlab", "pytest", "nbval", "pytest-xdist",
                   "hypothesis", "nbconvert", "jupyter-server-mathjax"):  # fmt: skip
        assert needed in course, f"requirements.txt lacks {needed}"
    for tool in ("ruff", "mypy", "check-jsonschema", "pre-commit", "playwright", "mutmut"):
        assert tool in dev and tool not in course, f"{tool} belongs in requirements-dev.txt only"
    assert not set(course) & set(dev), "a package pinned in both files"
    # conda installs the same pins: environment.yml's pip section reads requirements.txt and nothing else
    env = (ROOT / "environment.yml").read_text()
    assert "- -r requirements.txt" in env and "==" not in env.split("pip:")[1], env


def test_reading_paths_link_to_real_sections() -> None:
    # The two short paths link each section as JupyterLab 4 scrolls to it, #cell-id=<the cell that opens it> (heading
    # ids hold "·" and "§", which the rendered link percent-encodes and JupyterLab does not decode). Each link's
    # "§N" must be a heading of that cell, so a moved section fails here; tests/browser/test_links.py opens them and
    # tests/browser/test_shorter_paths.py clicks each and measures where its heading lands.
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Shorter paths") : text.index("## Exercises")]
    for goal in ("**RoPE in 45 minutes.**", "**Extending a context window in 90 minutes**"):
        assert goal in section, goal
    found = re.findall(r"\[([^\]]+)\]\((notebooks/[^)#]+)#cell-id=([^)]+)\)", section)
    assert len(found) >= 16 and {f[1] for f in found} >= {"notebooks/05_rope.ipynb"}, found
    for label, path, cell_id in found:
        cells = {c["id"]: "".join(c["source"]) for c in json.loads((ROOT / path).read_text(encoding="utf-8"))["cells"]}
        assert cell_id in cells, f"{path} has no cell {cell_id} ({label})"
        number = re.match(r"§([\d.]+)", label)
        heading = rf"^#+ {re.escape(number.group(1))}[ ·]" if number else r"^## Takeaways$"
        assert re.search(heading, cells[cell_id], re.M), f"{path}#cell-id={cell_id} does not open {label!r}"


def test_developer_material_moved_not_lost() -> None:
    # What the README used to carry, each in one place now (tests/test_layers.py reads docs/api.md).
    places = {
        "CONTRIBUTING.md": (
            "Install size",
            "Tested in a real browser",
            "mypy",
            "run_notebooks.py",
            # the book's frame rule and its GitHub Pages set-up (issue 37: the README describes the book once)
            "all of them up to 40 frames",
            "LivePlot.frame_joint",
            "Source: GitHub Actions",
        ),
        "docs/verification.md": ("Reference vectors", "plant_bugs.py", "Mutation testing", "mutmut"),
        "docs/lab.md": ("passkey", "python -m poslib.lab", "results/lab_full.json"),
        "docs/benchmarks.md": ("benchmarks/rope.py", "benchmarks/sliders.py"),
        "docs/api.md": ("Contracts shared by every family",),
    }
    for name, phrases in places.items():
        text = (ROOT / name).read_text(encoding="utf-8")
        for phrase in phrases:
            assert phrase in text, f"{name} lacks {phrase!r}"
