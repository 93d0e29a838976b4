"""The README is a short front door whose course table is generated, whose commands are the ones CI runs, and
which names the sources by title; the developer material it used to hold lives in CONTRIBUTING.md and docs/."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import sys
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_LINES = 150


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_course", ROOT / "scripts" / "readme_course.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_course"] = module
    spec.loader.exec_module(module)
    return module


def commands() -> dict[str, str]:
    """The README's first ```bash block, as {label: command} from each line's `# label` comment."""
    block = re.search(r"^```bash\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)
    assert block, "no ```bash block in the README"
    found = {}
    for line in block.group(1).splitlines():
        command, _, comment = line.partition("#")
        if comment.strip():
            found[comment.split()[0].strip(",:;")] = command.strip()
    return found


def test_course_table_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert load_script().render(text) == text, "README.md's course table is stale: run python scripts/readme_course.py"


def test_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; developer material goes in CONTRIBUTING.md and docs/"
    for section in ("## Start here", "## The course", "## Read without running anything", "## The sources"):
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
    # .ci/run runs "the README's install command" and "the README's test command": the same strings.
    found = commands()
    assert found.get("install") == "pip install -r requirements.txt", found
    assert found.get("test") == "pytest", found
    assert found.get("open", "").startswith("jupyter lab"), found
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert found["install"] in ci and found["test"] in ci, "the README's commands are not the ones .ci/run runs"


def test_developer_material_moved_not_lost() -> None:
    # What the README used to carry, each in one place now (tests/test_layers.py reads docs/api.md).
    places = {
        "CONTRIBUTING.md": ("Install size", "Tested in a real browser", "mypy", "run_notebooks.py"),
        "docs/verification.md": ("Reference vectors", "plant_bugs.py", "Mutation testing", "mutmut"),
        "docs/lab.md": ("passkey", "python -m poslib.lab", "results/lab_full.json"),
        "docs/benchmarks.md": ("benchmarks/rope.py", "benchmarks/sliders.py"),
        "docs/api.md": ("Contracts shared by every family",),
    }
    for name, phrases in places.items():
        text = (ROOT / name).read_text(encoding="utf-8")
        for phrase in phrases:
            assert phrase in text, f"{name} lacks {phrase!r}"
