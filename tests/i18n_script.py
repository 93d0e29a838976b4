"""scripts/i18n.py as a module (it is a script, not in a package), loaded once for every translation test."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if "i18n_tool" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("i18n_tool", ROOT / "scripts" / "i18n.py")
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["i18n_tool"] = _module
    _spec.loader.exec_module(_module)
i18n = sys.modules["i18n_tool"]
