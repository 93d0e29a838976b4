"""The language the exercise checkers answer in, and their Chinese.

The Chinese notebooks (``notebooks/zh/``) run the English notebooks' code cells byte for byte, so the
language cannot come from the code: ``language()`` reads it from the environment variable ``POSLIB_LANG``
("en" or "zh") or, when that is unset, from the working directory (a kernel started for
``notebooks/zh/05_rope.ipynb`` runs in ``notebooks/zh``).

The Chinese is a catalogue, ``i18n/zh/exercises.md``: plain text, one block per English phrase::

    <!-- en: off by one: the offsets are 0 … 20 (21 values, the first one is 0) -->
    差一错误：偏移是 0 … 20（共 21 个值，第一个是 0）

A phrase is matched exactly, else with every number in it (``21``, ``0.5``, ``62,832``, ``1.01e9``) read as
a placeholder: the entry above also answers "the offsets are 0 … 30 (31 values, …)", with the numbers put back
in the order they come. The Chinese of an entry therefore holds the English numbers in the English order. An
entry whose English has fields in braces (``replace `answer = None` with {what}.``) is a template: the
checkers fill it with :func:`compose`, and :func:`translate_feedback` reads a finished English message back
into its template and fields to give the Chinese of a stored notebook output.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

LANGUAGES = ("en", "zh")
CATALOGUE = Path(__file__).resolve().parent.parent.parent / "i18n" / "zh" / "exercises.md"

# A number as the messages write it: 21, 0.5, 62,832, 1.01e9, 1.99e−4 (digits only: ₂ and ⁴ are not numbers).
NUMBER = re.compile(r"[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:e[−+-]?[0-9]+)?")
PLACEHOLDER = "{n}"
_BLOCK = re.compile(r"^<!-- en: (.*?) -->$", re.MULTILINE)
_FIELD = re.compile(r"\{(?!n\})([a-z_]+)\}")
# Template fields that hold a value (a shape, a number, a type's or an error's name), never translated; every
# other field holds a phrase, translated when the message is composed.
VALUE_FIELDS = frozenset({"got", "want", "type", "value", "ratio", "percent", "err", "entry", "axis", "shape"})
# Fields that hold a message composed from a template in its turn (read back recursively); the other phrase
# fields hold a catalogue phrase.
COMPOSED_FIELDS = frozenset({"message", "along", "also", "at"})
_CODE = re.compile(r"`[^`]*`")
# a number as written, with its sign and unit sign (−0.06, 16×, 5%), and superscript and subscript digits (2⁻⁸, r₂):
# dropping a minus, 2⁻⁸ → 2⁻⁶ or 16× → 16% keeps the plain digits in order
_NUMBER_FORM = re.compile(r"[−+-]?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?:e[−+-]?[0-9]+)?[×%°]?|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+|[₀-₉]+")
# an inequality's sign (the ">" of an arrow "->" too): a translation that turns "< 1e-9" into "> 1e-9" changes the claim
_COMPARISON = re.compile(r"[<>≤≥]")


__all__ = ["Catalogue", "compose", "language", "read_catalogue", "translate", "translate_feedback"]


def language() -> str:
    """The language the checkers answer in: "zh" or "en".

    ``POSLIB_LANG`` decides when it is set ("en" or "zh"; anything else is a ValueError). When it is unset
    (or empty), the answer is "zh" if the working directory lies in a folder ``zh`` directly under a folder
    ``notebooks`` (``…/notebooks/zh``, or below it), else "en".
    """
    chosen = os.environ.get("POSLIB_LANG", "")
    if chosen:
        if chosen not in LANGUAGES:
            raise ValueError(f"POSLIB_LANG must be one of {', '.join(LANGUAGES)} (or unset), got {chosen!r}")
        return chosen
    try:
        parts = Path.cwd().parts
    except OSError:  # the working directory was removed
        return "en"
    return "zh" if any(a == "notebooks" and b == "zh" for a, b in itertools.pairwise(parts)) else "en"


def _placeheld(text: str) -> list[str]:
    """The numbers and ``{n}`` placeholders of ``text``, in order."""
    return [m.group(0) for m in re.finditer(rf"{re.escape(PLACEHOLDER)}|{NUMBER.pattern}", text)]


def _shape(text: str) -> str:
    """``text`` with every number (and every ``{n}`` already there) replaced by ``{n}``."""
    return NUMBER.sub(PLACEHOLDER, text)


def read_catalogue(path: Path = CATALOGUE) -> dict[str, str]:
    """The catalogue file's entries, English → Chinese, checked: the Chinese keeps the English numbers (as written:
    signs, superscripts, ×, %) and comparison signs (<, >, ≤, ≥) in order.

    A missing file is an empty catalogue (the checkers then answer in English).
    """
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    markers = list(_BLOCK.finditer(text))
    entries: dict[str, str] = {}
    for k, marker in enumerate(markers):
        end = markers[k + 1].start() if k + 1 < len(markers) else len(text)
        english, chinese = marker.group(1), text[marker.end() : end].strip()
        if not chinese:
            raise ValueError(f"{path.name}: no Chinese for {english!r}")
        if english in entries:
            raise ValueError(f"{path.name}: {english!r} is listed twice")
        if _placeheld(english) != _placeheld(chinese):
            raise ValueError(
                f"{path.name}: the Chinese of {english!r} must keep its numbers in order: "
                f"{_placeheld(english)} in English, {_placeheld(chinese)} in Chinese"
            )
        if _NUMBER_FORM.findall(english) != _NUMBER_FORM.findall(chinese):
            raise ValueError(
                f"{path.name}: the Chinese of {english!r} must write its numbers as the English does (sign, "
                f"superscript, ×, %, °): {_NUMBER_FORM.findall(english)} in English, "
                f"{_NUMBER_FORM.findall(chinese)} in Chinese"
            )
        if _COMPARISON.findall(english) != _COMPARISON.findall(chinese):
            raise ValueError(
                f"{path.name}: the Chinese of {english!r} must keep its comparisons in order: "
                f"{_COMPARISON.findall(english)} in English, {_COMPARISON.findall(chinese)} in Chinese"
            )
        if sorted(_FIELD.findall(english)) != sorted(_FIELD.findall(chinese)):
            raise ValueError(f"{path.name}: the Chinese of {english!r} must keep its fields {_FIELD.findall(english)}")
        entries[english] = chinese
    return entries


def _plain_enough(text: str) -> bool:
    """No letter outside code spans: a piece such as "(16,)", "`q`" or "" needs no translation.

    (Chinese is letters too: a piece already in Chinese is not read as a value.)"""
    return not any(c.isalpha() for c in _CODE.sub("", text))


class Catalogue:
    """A catalogue file (the format above; or several, read as one) and its matching: a phrase exactly, with its
    numbers as placeholders, or as a template whose fields are filled with pieces read back in their turn.

    ``value_fields`` name the fields that hold a value, inserted as it is; ``composed_fields`` those read back as a
    message in their turn (``None``: every field that is not a value); the other fields hold a catalogue phrase.
    ``plain`` says whether a piece needs no translation at all (by default: no letter outside code spans);
    ``field_patterns`` hold fields to a form (a field named there takes only a value that matches its pattern
    whole, inserted as it is: a scheme name, a number), so that a template cannot read a sentence wrongly. The
    exercise checkers' catalogue is :data:`EXERCISES`; :mod:`poslib._i18n_outputs` holds the one of the notebooks'
    printed outputs.
    """

    def __init__(
        self,
        path: Path | tuple[Path, ...],
        value_fields: frozenset[str] = frozenset(),
        composed_fields: frozenset[str] | None = None,
        plain: Callable[[str], bool] | None = None,
        field_patterns: Mapping[str, re.Pattern[str]] | None = None,
    ) -> None:
        self.paths = path if isinstance(path, tuple) else (path,)
        self.value_fields = value_fields
        self.composed_fields = composed_fields
        self.plain = _plain_enough if plain is None else plain
        self.field_patterns = dict(field_patterns or {})
        self.to_chinese = functools.lru_cache(maxsize=4096)(self._to_chinese)

    @functools.cached_property
    def entries(self) -> tuple[dict[str, str], dict[str, str]]:
        """(exact English → Chinese, English with ``{n}`` for numbers → Chinese), loaded once."""
        exact: dict[str, str] = {}
        where: dict[str, str] = {}  # a shape → the file that gave it first
        shaped: dict[str, str] = {}
        for path in self.paths:  # one catalogue in several files: an entry may recur only with the same Chinese
            for english, chinese in read_catalogue(path).items():
                if exact.setdefault(english, chinese) != chinese:
                    raise ValueError(f"{path.name}: {english!r} has another Chinese in an earlier file")
                key = _shape(english)
                if shaped.setdefault(key, chinese) != chinese and _shape(shaped[key]) != _shape(chinese):
                    raise ValueError(
                        f"{path.name}: {english!r} reads as {key!r}, as an entry of {where[key]} with other Chinese"
                    )
                where.setdefault(key, path.name)
        return exact, shaped

    def find(self, text: str) -> str | None:
        """The Chinese of ``text`` (exact, else with its numbers as placeholders), or None."""
        exact, shaped = self.entries
        if text in exact:
            return exact[text]
        chinese = shaped.get(_shape(text))
        if chinese is None:
            return None
        numbers = iter(NUMBER.findall(text))
        return re.sub(rf"{re.escape(PLACEHOLDER)}|{NUMBER.pattern}", lambda _: next(numbers), chinese)

    @functools.cached_property
    def templates(self) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
        """The templates: (English, its literal parts, its fields), the longest literal text first."""
        found = []
        for english in self.entries[0]:
            fields = tuple(_FIELD.findall(english))
            if fields:
                found.append((english, tuple(_FIELD.split(english)[::2]), fields))
        return tuple(sorted(found, key=lambda t: -sum(map(len, t[1]))))

    def _composed(self, field: str) -> bool:
        return self.composed_fields is None or field in self.composed_fields

    def _to_chinese(self, text: str) -> str | None:
        """The Chinese of an English message: a catalogue phrase, or a template filled with known pieces; else None."""
        found = self.find(text)
        if found is not None:
            return found
        for english, literals, fields in self.templates:
            if not (text.startswith(literals[0]) and text.endswith(literals[-1])):
                continue
            # fields held to a form and catalogue phrases first: they are cheap and fix where a composed piece ends
            order = sorted(
                range(len(fields)), key=lambda k: (fields[k] not in self.field_patterns, self._composed(fields[k]))
            )
            for values in _splits(text, literals[1:], len(literals[0])):
                filled: dict[str, str] = {}
                for k in order:
                    field, value = fields[k], values[k]
                    if field in self.field_patterns:
                        piece: str | None = value if self.field_patterns[field].fullmatch(value) else None
                    elif field in self.value_fields or self.plain(value):
                        piece = value
                    else:
                        piece = self.to_chinese(value) if self._composed(field) else self.find(value)
                    if piece is None:
                        break
                    filled[field] = piece
                else:
                    return self.entries[0][english].format(**filled)
        return None


EXERCISES = Catalogue(CATALOGUE, VALUE_FIELDS, COMPOSED_FIELDS)


def _catalogue() -> tuple[dict[str, str], dict[str, str]]:
    """The checkers' catalogue, loaded once: (exact English → Chinese, English with ``{n}`` for numbers → Chinese)."""
    return EXERCISES.entries


def _find(text: str) -> str | None:
    """The Chinese of ``text`` from the catalogue (exact, else with its numbers as placeholders), or None."""
    return EXERCISES.find(text)


def translate(text: str, lang: str | None = None) -> str:
    """``text`` in ``lang`` (default :func:`language`): the catalogue's Chinese for an English phrase.

    The phrase is matched exactly, else with its numbers as placeholders (the numbers are put back in
    order). A phrase the catalogue lacks, and any phrase in English, comes back unchanged.
    """
    lang = language() if lang is None else lang
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {', '.join(LANGUAGES)}, got {lang!r}")
    if lang == "en" or not text:
        return text
    found = _find(text)
    return text if found is None else found


def compose(template: str, **fields: str) -> str:
    """``template`` filled with ``fields``, in the checkers' language.

    In Chinese the template is the catalogue's and each phrase field is translated (the fields named in
    ``VALUE_FIELDS``, values such as shapes and numbers, are inserted as they are); in English this is
    exactly ``template.format(**fields)``.
    """
    lang = language()
    if lang == "en":
        return template.format(**fields)
    filled = {k: v if k in VALUE_FIELDS else translate(v, lang) for k, v in fields.items()}
    return translate(template, lang).format(**filled)


def _templates() -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """The checkers' templates: (English, its literal parts, its fields), the longest literal text first."""
    return EXERCISES.templates


def _splits(text: str, literals: tuple[str, ...], start: int = 0) -> Iterator[list[str]]:
    """Every way to read ``text[start:]`` as field, literal, field, … (the first literal already matched)."""
    head, rest = literals[0], literals[1:]
    if not rest:
        if text.endswith(head) and len(text) - len(head) >= start:
            yield [text[start : len(text) - len(head)]]
        return
    at = text.find(head, start)
    while at >= 0:
        for tail in _splits(text, rest, at + len(head)):
            yield [text[start:at], *tail]
        at = text.find(head, at + 1)


def to_chinese(text: str) -> str | None:
    """The Chinese of an English message: a catalogue phrase, or a template filled with known pieces; else None."""
    return EXERCISES.to_chinese(text)


def translate_message(text: str, lang: str | None = None) -> str:
    """A checker's finished message in ``lang`` (default :func:`language`): read back into its catalogue
    phrase or template when it is English (unchanged when the catalogue cannot read it)."""
    lang = language() if lang is None else lang
    if lang == "en" or not text:
        return text
    found = to_chinese(text)
    return text if found is None else found


def translate_feedback(text: str) -> str:
    """A stored English exercise output (a ``Feedback`` repr such as "not answered yet: replace `answer =
    None` with a 2 × 2 matrix.") as the checker prints it in Chinese for the same answer."""
    return translate_message(text, "zh")
