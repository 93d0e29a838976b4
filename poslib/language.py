"""The language poslib writes its own words in, and the message catalogues that hold them.

Every sentence poslib itself prints (a checker's feedback, a lab verdict, a widget's label) is written where it is
made, by a gettext lookup: the English template is the message id, with named fields, and a catalogue gives each
other language's template with the same fields::

    from poslib.language import translator
    _ = translator("lab")
    print(_("{a} beats {b} at {length}").format(a="rope", b="nope", length="8×"))

The catalogues are standard gettext files, one per language and domain (``exercises``, ``lab``, ``widgets``):
``poslib/locale/<lang>/LC_MESSAGES/<domain>.po``, the text translators edit (Poedit, Babel, Weblate read it), and
beside it the compiled ``.mo`` that :mod:`gettext` reads. Both install with poslib. ``python scripts/catalogues.py``
extracts the templates from the code, lists what is untranslated and compiles the ``.mo`` files.

The language is an explicit setting, nothing is guessed: :func:`set_language` (a Chinese notebook's first cell calls
``poslib.set_language("zh")``), else the environment variable ``POSLIB_LANG``, else English. Importing poslib does
not load this module; it is loaded by the first lookup.
"""

from __future__ import annotations

import functools
import gettext
import os
from collections.abc import Callable
from pathlib import Path

LANGUAGES = ("en", "zh")
DOMAINS = ("exercises", "lab", "widgets")
LOCALE = Path(__file__).resolve().parent / "locale"

__all__ = ["DOMAINS", "LANGUAGES", "LOCALE", "language", "set_language", "translate", "translator"]

_chosen: str | None = None


def _checked(lang: str, where: str) -> str:
    if lang not in LANGUAGES:
        raise ValueError(f"{where} must be one of {', '.join(map(repr, LANGUAGES))}, got {lang!r}")
    return lang


def set_language(lang: str | None) -> None:
    """Make poslib write in ``lang`` ("en" or "zh") from now on; ``None`` goes back to ``POSLIB_LANG`` or English."""
    global _chosen
    _chosen = None if lang is None else _checked(lang, "set_language(lang)")


def language() -> str:
    """The language poslib writes in: the one :func:`set_language` chose, else ``POSLIB_LANG`` when set, else "en"."""
    if _chosen is not None:
        return _chosen
    from_env = os.environ.get("POSLIB_LANG", "")
    return _checked(from_env, "the environment variable POSLIB_LANG") if from_env else "en"


@functools.cache
def _catalogue(domain: str, lang: str) -> gettext.NullTranslations:
    """The compiled catalogue of ``domain`` in ``lang``; English needs none (its templates are the message ids)."""
    if domain not in DOMAINS:
        raise ValueError(f"domain must be one of {', '.join(map(repr, DOMAINS))}, got {domain!r}")
    if lang == "en":
        return gettext.NullTranslations()
    # a missing catalogue is an error, never a silent fall back to English (an install that lost its package data)
    return gettext.translation(domain, localedir=LOCALE, languages=[lang])


def translate(domain: str, template: str, lang: str | None = None) -> str:
    """``template`` (an English message id) in ``lang`` (default: the current language), from ``domain``'s catalogue.

    A template the catalogue lacks stays English, as gettext does; ``python scripts/catalogues.py untranslated`` lists
    every such template, and the tests hold the Chinese catalogues to have none. ``lang`` is for code that writes
    both languages in one run (the book's builder); poslib itself writes in the current language.
    """
    return _catalogue(domain, language() if lang is None else _checked(lang, "lang")).gettext(template)


def translator(domain: str) -> Callable[[str], str]:
    """The ``_`` of one domain: ``_(template)`` is :func:`translate` (domain, template) in the language of the call."""
    if domain not in DOMAINS:
        raise ValueError(f"domain must be one of {', '.join(map(repr, DOMAINS))}, got {domain!r}")
    return functools.partial(translate, domain)
