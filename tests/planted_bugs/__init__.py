"""Planted bugs: real classes of mistakes, patched into poslib in a running process, never in a file.

Each bug is a :class:`Bug` registered with :func:`bug`. ``scripts/plant_bugs.py`` runs, for every
bug, the unit tests and notebooks named by it in fresh processes where the bug is planted, and
reports which checks caught it. A bug that no notebook check catches is a claim without a real
check; one that no unit test catches is a hole in the tests.

How the bug gets into a process: ``scripts/plant_bugs.py`` puts ``tests/planted_bugs/site`` on
``PYTHONPATH`` and sets ``POSLIB_PLANT_BUG=<name>``; that folder's ``sitecustomize.py`` imports
poslib and calls :func:`plant` before anything else runs, in pytest and in a notebook's kernel
alike.

The catalogue is split by family (``absolute.py``, ``rope.py``, ``lab.py``, …); every module in
this package is imported by :func:`catalogue`.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

ENV = "POSLIB_PLANT_BUG"


@dataclass(frozen=True)
class Bug:
    """One planted mistake.

    ``apply`` patches poslib in this process (with :func:`swap`); ``tests`` are pytest arguments (files
    or node ids) expected to fail with the bug planted; ``notebooks`` are the notebooks whose checks
    are expected to raise; ``thread`` names the public thread or source where the mistake was made.
    ``unit_only`` says why no notebook can show the bug (a failure mode no notebook runs, such as torchrun);
    such a bug names no notebook and counts as caught by its unit tests alone.
    """

    name: str
    what: str
    apply: Callable[[], None]
    tests: tuple[str, ...]
    notebooks: tuple[str, ...]
    thread: str = ""
    extra_env: dict[str, str] = field(default_factory=dict)
    unit_only: str = ""


_BUGS: dict[str, Bug] = {}
PLANTED: str | None = None  # the bug planted in this process, set once its patch has applied


def bug(
    name: str,
    what: str,
    *,
    tests: tuple[str, ...],
    notebooks: tuple[str, ...],
    thread: str = "",
    unit_only: str = "",
) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register the decorated function as the patch that plants bug ``name`` (``unit_only``: see :class:`Bug`)."""

    def register(apply: Callable[[], None]) -> Callable[[], None]:
        if name in _BUGS:
            raise ValueError(f"planted bug {name!r} is registered twice")
        if bool(notebooks) == bool(unit_only):
            raise ValueError(f"planted bug {name!r}: name the notebooks that catch it, or say why none can")
        _BUGS[name] = Bug(name, what, apply, tests, notebooks, thread, unit_only=unit_only)
        return apply

    return register


def catalogue() -> dict[str, Bug]:
    """Every registered bug, by name (imports each module of this package once)."""
    for info in pkgutil.iter_modules(__path__):
        if info.name != "site":
            importlib.import_module(f"{__name__}.{info.name}")
    return dict(_BUGS)


def _poslib_modules() -> list[ModuleType]:
    return [m for name, m in list(sys.modules.items()) if (name == "poslib" or name.startswith("poslib.")) and m]


def swap(original: Any, replacement: Any) -> int:
    """Replace every reference to ``original`` in poslib's modules by ``replacement``.

    Module globals are scanned (so ``from .rope import apply_rope`` elsewhere sees the bug too), and
    so are dicts held in module globals (registries such as ``ROPE_SCALINGS``). Returns the number of
    references replaced; zero means the patch missed its target, which is an error.
    """
    count = 0
    for module in _poslib_modules():
        namespace = vars(module)
        for key, value in list(namespace.items()):
            if value is original:
                namespace[key] = replacement
                count += 1
            elif isinstance(value, dict):
                for k, v in list(value.items()):
                    if v is original:
                        value[k] = replacement
                        count += 1
    if count == 0:
        raise RuntimeError(f"planting failed: no reference to {original!r} in poslib")
    return count


def plant(name: str) -> Bug:
    """Import poslib (and the submodules notebooks use) and plant bug ``name`` in this process."""
    import poslib
    import poslib.lab
    import poslib.viz  # noqa: F401

    bugs = catalogue()
    if name not in bugs:
        raise KeyError(f"unknown planted bug {name!r}; known: {sorted(bugs)}")
    bugs[name].apply()
    global PLANTED
    PLANTED = name
    return bugs[name]
