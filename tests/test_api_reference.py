"""docs/api.md is what scripts/api_reference.py writes from the code, lists every public name once, and
every signature in it reads as Python (no annotation cut in half, no stray quotes)."""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import re
import sys
from types import ModuleType

import poslib as P

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "api_reference.py"
API = ROOT / "docs" / "api.md"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("api_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["api_reference"] = module
    spec.loader.exec_module(module)
    return module


def test_api_reference_is_current() -> None:
    # The same comparison as `python scripts/api_reference.py --check`, in this process (poslib is imported).
    assert API.read_text(encoding="utf-8") == load_script().render(), (
        "docs/api.md is out of date: run python scripts/api_reference.py"
    )


def test_every_public_name_has_one_entry() -> None:
    text = API.read_text(encoding="utf-8")
    entries = re.findall(r'^### <a id="(\w+)"></a>`(\w+)`$', text, re.M)
    assert all(a == b for a, b in entries), entries
    names = [a for a, _ in entries]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    only_all, only_doc = sorted(set(P.__all__) - set(names)), sorted(set(names) - set(P.__all__))
    assert not only_all and not only_doc, f"in __all__ only: {only_all}; in docs/api.md only: {only_doc}"
    for name in P.__all__:  # and the contents table links each one
        assert f"[`{name}`](#{name})" in text, name


def test_every_signature_parses_as_a_def_line() -> None:
    text = API.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.+?)\n```$", text, re.M | re.S)
    methods = re.findall(r"^\* `(\w+\(.*\).*?)`(?::|$)", text, re.M)
    assert len(blocks) >= len(P.__all__) - 5, len(blocks)  # every function and class (constants have no block)
    for sig in blocks + methods:
        assert "\n" not in sig, sig
        line = re.sub(r"^class ", "", sig)
        ast.parse(f"def {line}: pass")  # a garbled annotation (cut quotes, unbalanced brackets) is a SyntaxError
        assert "'" not in re.sub(r"= '[^']*'", "", line), f"a quoted annotation: {sig}"
