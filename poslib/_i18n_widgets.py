"""The Chinese of the interactive figures' controls and of the book's texts around figures.

The Chinese notebooks (``notebooks/zh/``) run the English code, so a control's label and a figure's caption
are English where the code writes them. :func:`poslib.viz.interact` passes them through :func:`widget_text` when
:func:`poslib.exercises.i18n.language` is "zh" (labels, menu options, caption, reset button, tooltips);
``scripts/i18n.py build`` rewrites the widget state stored in the Chinese notebooks with :func:`localize_widgets`
(what a student sees before running); ``scripts/build_book.py`` takes the Chinese pages' control notes, alt and
aria texts from here too. In English nothing changes.

The catalogue is ``i18n/zh/widgets.md``, in the format of the checkers' ``i18n/zh/exercises.md`` and read by the
same :class:`poslib.exercises.i18n.Catalogue`: the English exactly as the code writes it (numbers read as
placeholders) and its Chinese; fields in braces (``{heading}``) are filled by the caller. Figures keep their English
labels (the frames are shared by both editions).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from poslib.exercises.i18n import LANGUAGES, Catalogue, language

__all__ = [
    "CATALOGUE",
    "LOOK",
    "WIDGETS",
    "MissingEntry",
    "caption_html",
    "english_words",
    "label_ch",
    "label_width",
    "localize_widgets",
    "punctuation",
    "widget_text",
]

CATALOGUE = Path(__file__).resolve().parent.parent / "i18n" / "zh" / "widgets.md"
WIDGETS = Catalogue(CATALOGUE)
LOOK = "What to look for:"  # the caption's lead, in italics

# Punctuation between the pieces the code joins, per language (not words: no catalogue entry).
_PUNCTUATION = {
    "en": {"list": ", ", "groups": "; ", "stop": ".", "colon": ": ", "space": " ", "open": " (", "close": ")"},
    "zh": {"list": "、", "groups": "；", "stop": "。", "colon": "：", "space": "", "open": "（", "close": "）"},
}

# Latin words a Chinese label or caption keeps: method, model and data names, notation and code names.
KEPT = frozenset(
    """
    RoPE ALiBi KERPLE NTK YaRN Llama-3 PI ReRoPE Leaky Self-Extend DCA Dual Chunk Attention PaTH Qwen2-VL Qwen3-VL
    all-MiniLM-L6-v2 PE T5 softmax log token JupyterLab leak
    """.split()
)
# code and notation: identifiers with an underscore (num_buckets, μ_p), file paths, HTML tags, fields in braces
_CODEISH = re.compile(r"<[^<>]*>|\{[a-z_]+\}|[\w.-]*_[\w.]*|[\w./-]+\.ipynb|\bnotebooks/[\w./-]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")


class MissingEntry(KeyError):
    """An English text the catalogue has no Chinese for (its message names the text and the file)."""

    def __str__(self) -> str:
        return str(self.args[0])


def english_words(text: str) -> list[str]:
    """The English words left in ``text``: Latin words of two letters or more that are not kept names (:data:`KEPT`),
    outside code names, tags and fields. One letter is a symbol (m, n, L, G)."""
    plain = _CODEISH.sub(" ", html.unescape(text))
    return [w for w in _WORD.findall(plain) if len(w) > 1 and w not in KEPT]


def _lang(lang: str | None) -> str:
    lang = language() if lang is None else lang
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    return lang


def widget_text(english: str, lang: str | None = None, *, strict: bool = False, **fields: Any) -> str:
    """``english`` in ``lang`` (default :func:`~poslib.exercises.i18n.language`), its ``fields`` filled.

    In English this is ``english`` (``english.format(**fields)`` when fields are given). In Chinese it is the
    catalogue's entry; a text the catalogue lacks stays as it is unless it holds English words and ``strict`` is set:
    then :class:`MissingEntry` names it. A text already in Chinese needs no entry.
    """
    lang = _lang(lang)
    found = None if lang == "en" or not english else WIDGETS.find(english)
    if found is None:
        if lang != "en" and strict and english_words(english.format(**fields) if fields else english):
            raise MissingEntry(f"{CATALOGUE.relative_to(CATALOGUE.parents[2])} has no entry for {english!r}")
        found = english
    return found.format(**fields) if fields else found


def punctuation(lang: str | None = None) -> dict[str, str]:
    """The punctuation the code puts between translated pieces: list and group separators, full stop, colon, …"""
    return _PUNCTUATION[_lang(lang)]


def caption_html(caption: str, lang: str | None = None, *, strict: bool = False) -> str:
    """The HTML of a figure's caption line: "<i>What to look for:</i> …" (in Chinese, no space after the colon)."""
    lang = _lang(lang)
    look, text = widget_text(LOOK, lang, strict=strict), widget_text(caption, lang, strict=strict)
    return f"<i>{look}</i>{punctuation(lang)['space']}{html.escape(text)}"


def label_width(labels: Iterable[str]) -> int:
    """How wide labels are in ``ch``: the longest one, a wide (CJK) character counted twice."""
    return max([sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s) for s in labels], default=0)


def label_ch(labels: Iterable[str]) -> int:
    """One description width for every control of a figure: the widest label (at least 4), plus room for the colon."""
    return max(label_width(labels), 4) + 2


# ----------------------------------------------------------------------------- a notebook's stored widgets

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_TEXT = "Interactive figure: run the notebook to move its controls."  # poslib.viz._live.WIDGET_TEXT
_LOOK_HTML = f"<i>{LOOK}</i> "


def _translated_caption(value: str, lang: str, strict: bool) -> str:
    if not value.startswith(_LOOK_HTML):
        return value
    return caption_html(html.unescape(value[len(_LOOK_HTML) :]), lang, strict=strict)


def _relabel_box(state: dict[str, Any], box: dict[str, Any]) -> None:
    """Widen one interact box's labels for its (translated) descriptions, as poslib.viz.interact would."""

    def model(ref: Any) -> dict[str, Any] | None:
        if isinstance(ref, str) and ref.startswith("IPY_MODEL_"):
            return state.get(ref[len("IPY_MODEL_") :])
        return None

    controls = []
    for child in box["state"].get("children", []):
        m = model(child)
        if m is not None and m["model_name"] == "HBoxModel":  # a fine slider: slider, number box, page buttons
            m = model(m["state"].get("children", [None])[0])
        if m is not None and "description" in m["state"] and m["model_name"] != "ButtonModel":
            controls.append(m)
    width = label_ch(c["state"]["description"] for c in controls)
    for c in controls:
        style, layout = model(c["state"].get("style")), model(c["state"].get("layout"))
        if style is not None and str(style["state"].get("description_width", "")).endswith("ch"):
            style["state"]["description_width"] = f"{width}ch"
        if layout is not None and str(layout["state"].get("width", "")).startswith("calc("):
            layout["state"]["width"] = re.sub(r"calc\(\d+ch", f"calc({width}ch", layout["state"]["width"])


def localize_widgets(nb: Any, lang: str, *, strict: bool = True) -> None:
    """A notebook's stored widgets in ``lang``, in place: every control's label and tooltip, the words among a menu's
    options, the caption line, and the text a widget output carries for a reader without widgets. Label widths
    follow the new labels. English changes nothing. ``strict``: a text with English words and no entry raises
    :class:`MissingEntry`."""
    if _lang(lang) == "en":
        return
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    changed = False
    for m in state.values():
        s = m.get("state", {})
        for key in ("description", "tooltip"):
            if s.get(key):
                new = widget_text(s[key], lang, strict=strict)
                changed |= new != s[key]
                s[key] = new
        if m.get("model_name") in ("DropdownModel", "RadioButtonsModel", "SelectModel", "ToggleButtonsModel"):
            s["_options_labels"] = [widget_text(o, lang, strict=strict) for o in s.get("_options_labels", [])]
        if m.get("model_name") == "HTMLModel" and isinstance(s.get("value"), str):
            s["value"] = _translated_caption(s["value"], lang, strict)
    if changed:
        for m in state.values():
            if m.get("model_name") == "VBoxModel" and any(
                (state.get(str(c)[len("IPY_MODEL_") :]) or {}).get("model_name") == "ButtonModel"
                for c in m["state"].get("children", [])
            ):
                _relabel_box(state, m)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and "text/plain" in data:
                text = "".join(data["text/plain"])
                data["text/plain"] = widget_text(text, lang, strict=strict)
