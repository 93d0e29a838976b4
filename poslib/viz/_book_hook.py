"""The one thing the live figures need from the book at runtime: the hook through which the book's build records
each interactive figure's frames while it runs a notebook.

``python scripts/build_book.py --frames`` runs every notebook with the environment variable :data:`FRAMES_ENV`
naming a folder; :func:`~poslib.viz.interact` then calls :func:`record_for_book`, which hands the figure to the
book's frame recorder, ``scripts/book/book_frames.py`` (which values are drawn, which combinations, the encoding
and the manifest: the book's machinery, beside the book's script). In a student's kernel the variable is unset:
nothing is imported and nothing happens.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["FRAMES_ENV", "book_recorder", "record_for_book"]

FRAMES_ENV = "POSLIB_BOOK_FRAMES"  # a folder: interact() records frames into it (scripts/build_book.py --frames)
RECORDER = "book_frames"  # scripts/book/book_frames.py; the build puts scripts/book/ on the kernel's PYTHONPATH
BOOK_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "book"  # where it is in a checkout


def book_recorder() -> ModuleType:
    """scripts/book/book_frames.py as a module: from the path the build sets, else from this checkout's scripts/book/
    (tests draw frames in their own process)."""
    try:
        return importlib.import_module(RECORDER)
    except ModuleNotFoundError:
        if not (BOOK_SCRIPTS / f"{RECORDER}.py").is_file():
            raise ModuleNotFoundError(
                f"{FRAMES_ENV} is set but the book's frame recorder ({RECORDER}.py) is not importable: "
                "build the book from a checkout of the repository (python scripts/build_book.py --frames)"
            ) from None
        sys.path.insert(0, str(BOOK_SCRIPTS))
        return importlib.import_module(RECORDER)


def record_for_book(plot: Any, controls: dict[str, Any], caption: str) -> Path | None:
    """When :data:`FRAMES_ENV` names a folder, draw ``plot``'s frames for the book into it (the new subfolder);
    otherwise nothing (None)."""
    folder = os.environ.get(FRAMES_ENV)
    if not folder:
        return None
    return book_recorder().record_frames(plot, controls, caption, Path(folder))
