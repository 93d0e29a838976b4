"""Shared test settings: hypothesis is derandomized under CI so that a red run always reproduces; the longest
files start first.

Under ``pytest -n 2 --dist loadfile`` (pyproject.toml) every file runs whole on one worker, and a worker that
is nearly done takes the next file in collection order (``--no-loadscope-reorder``: xdist would otherwise
order files by their number of tests, which started the browser slider file, 11 tests and the longest file
of all, after hundreds of short ones). pytest_collection_modifyitems below puts the files that take longest
first, so that the many short files fill in at the end and neither worker stands idle while the other one
finishes a long file (longest-processing-time-first scheduling). A file's tests keep their order. This
conftest sees every collected item, the notebooks' cells included (testpaths: tests, notebooks).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import matplotlib
import pytest
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

settings.register_profile("dev", deadline=None, max_examples=60)
settings.register_profile(
    "ci", deadline=None, max_examples=60, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# Seconds each file took in a whole `pytest` run on the shared 2-core machine (2026-12-01, a loaded run of
# 978 s; per-test start and end times on each worker), rounded; files under 10 s are left out. Only the order
# matters. A Chinese notebook (notebooks/zh/) counts as its English one, a notebook missing here as
# NOTEBOOK_SECONDS (strict nbval of one takes 15-70 s), any other missing file as 0 s: it runs after these, in
# collection order. Refresh the table from `--durations=0` when a
# file's time changes a lot; a stale entry costs CI time, never a check.
FILE_SECONDS: dict[str, float] = {
    "tests/browser/test_notebooks_in_browser.py": 560,  # every notebook with a widget, run and moved in Chromium
    "tests/browser/test_book.py": 420,  # its book build (frames for 02 and 07, both editions) is ~70 s of it
    "tests/test_figures.py": 175,
    "tests/test_code_quality.py": 145,  # mypy without a cache: 110 s
    "tests/test_lab.py": 70,
    "tests/test_frames.py": 25,
    "tests/test_i18n.py": 15,
    "tests/test_exercise_i18n.py": 10,
    "notebooks/08_extrapolation_lab.ipynb": 70,
    "notebooks/10_learned_and_contextual_positions.ipynb": 47,
    "notebooks/03_sinusoidal.ipynb": 40,  # 28 before issue 43 trained seeds 0-9 in it (Run All 10.6 s -> 14.9 s)
    "notebooks/06_length_extrapolation.ipynb": 36,
    "notebooks/00_tour.ipynb": 31,
    "notebooks/02_learned_absolute.ipynb": 31,
    "notebooks/04_relative.ipynb": 31,
    "tests/test_viz.py": 30,
    "tests/test_viz_rope.py": 29,
    "notebooks/05_rope.ipynb": 22,
    "tests/test_viz_relative.py": 21,
    "tests/test_teaching_entropy.py": 19,
    "notebooks/07_alibi.ipynb": 17,
    "notebooks/09_rope_in_production.ipynb": 17,
    "tests/test_course_map.py": 17,
    "tests/test_planted_bugs.py": 17,
    "notebooks/01_why_position.ipynb": 16,
    "tests/browser/test_links.py": 14,
    "tests/test_reference.py": 12,
}
NOTEBOOK_SECONDS = 30.0


def _file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _seconds(path: str) -> float:
    # a Chinese notebook (notebooks/zh/) runs the same code as its English one: it takes as long
    if path not in FILE_SECONDS:
        path = path.replace("notebooks/zh/", "notebooks/")
    return FILE_SECONDS.get(path, NOTEBOOK_SECONDS if path.endswith(".ipynb") else 0.0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest files first (FILE_SECONDS); the rest in collection order; each file's tests in their own order."""
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        first.setdefault(_file_of(item), i)
    items.sort(key=lambda item: (-_seconds(_file_of(item)), first[_file_of(item)]))  # stable: a file stays in order


@pytest.fixture
def zh() -> Iterator[None]:
    """poslib writes Chinese for the test (poslib.set_language("zh")), then goes back to the default."""
    from poslib import language

    language.set_language("zh")
    yield
    language.set_language(None)


@pytest.fixture
def en() -> Iterator[None]:
    """poslib writes English for the test, whatever POSLIB_LANG says, then goes back to the default."""
    from poslib import language

    language.set_language("en")
    yield
    language.set_language(None)
