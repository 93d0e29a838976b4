"""The package's layers and its public surface.

* The scheme layer (``poslib/*.py``) imports nothing from the layers built on it: ``poslib.teaching``,
  ``poslib.viz``, ``poslib.lab`` (imports are read with ``ast``, relative ones resolved).
* Every public name is listed once in ``poslib.__all__`` and once in the README's API table, and
  both list the same names; every scheme module's own ``__all__`` is re-exported.
"""

import ast
import importlib
import pathlib
import re
import types

import pytest

import poslib as P

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEME_LAYER = sorted((ROOT / "poslib").glob("*.py"))
ABOVE = ("poslib.teaching", "poslib.viz", "poslib.lab")


def imported_modules(path: pathlib.Path) -> list[str]:
    """Every module ``path`` imports (absolute names), at any depth of the file (functions included)."""
    package = "poslib" if path.parent.name == "poslib" else f"poslib.{path.parent.name}"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append(module)
            found += [f"{module}.{alias.name}" for alias in node.names]  # from poslib import teaching
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            found += [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return found


@pytest.mark.parametrize("path", SCHEME_LAYER, ids=lambda p: p.name)
def test_the_scheme_layer_imports_nothing_above_it(path):
    bad = [m for m in imported_modules(path) if any(m == a or m.startswith(a + ".") for a in ABOVE)]
    assert not bad, f"{path.name} imports {bad}: the scheme layer must not depend on teaching, viz or lab"


def test_the_import_reader_sees_relative_absolute_and_dynamic_imports(tmp_path):
    probe = tmp_path / "poslib" / "probe.py"
    probe.parent.mkdir()
    probe.write_text(
        "from .teaching import toy\nfrom poslib.viz import x\nimport poslib.lab\n"
        "def f():\n    from . import teaching\n    importlib.import_module('poslib.lab.train')\n"
    )
    found = imported_modules(probe)
    for module in ("poslib.teaching", "poslib.viz", "poslib.lab", "poslib.teaching", "poslib.lab.train"):
        assert module in found, (module, found)


def test_all_lists_each_public_name_once_and_no_module():
    assert len(P.__all__) == len(set(P.__all__)), "a name is listed twice in poslib.__all__"
    modules = [n for n in P.__all__ if isinstance(getattr(P, n), types.ModuleType)]
    assert not modules, f"submodules in poslib.__all__: {modules}"
    for path in SCHEME_LAYER:
        if path.name.startswith("_"):
            continue
        module = importlib.import_module(f"poslib.{path.stem}")
        missing = sorted(set(module.__all__) - set(P.__all__))
        assert not missing, f"poslib.{path.stem}.__all__ names {missing}, which poslib.__all__ does not re-export"


def test_readme_api_table_lists_exactly_all():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## API at a glance") :]
    section = section[: section.index("\n## ")]
    names = re.findall(r"^\| `(\w+)", section, re.M)
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert set(names) == set(P.__all__), (
        f"in __all__ only: {sorted(set(P.__all__) - set(names))}; in README only: {sorted(set(names) - set(P.__all__))}"
    )
