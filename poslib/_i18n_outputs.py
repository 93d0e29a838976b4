"""The Chinese of what the notebooks print: the lab's conclusions and the verdict words of check lines.

The Chinese notebooks keep the English code, so what a code cell prints is English; ``scripts/i18n.py build``
passes every stored text output through :func:`translate_output`, and the lab's report functions
(:mod:`poslib.lab.report`: takeaways, claim, extension and deployed verdicts, the comparison table) pass their
sentences through :func:`localized` when :func:`poslib.exercises.i18n.language` is "zh", so a student who re-runs a
Chinese notebook reads Chinese too. In English nothing changes.

The catalogue is ``i18n/zh/outputs.md``, in the format of the checkers' ``i18n/zh/exercises.md`` and read by the
same :class:`poslib.exercises.i18n.Catalogue`: an English phrase (numbers read as placeholders) or a template whose
fields (``{scale}``, ``{evidence}``, …) are read back in their turn: a piece that holds no English word (scheme
names, numbers, the names in :data:`KEPT`) goes in as it is, any other piece must be a catalogue phrase or template.

Output is read line by line (:func:`translate_output`): a line the catalogue knows becomes Chinese, a paragraph that
``textwrap.fill`` broke into indented lines is read as one line, a markdown bullet or table row is read piece by
piece, and in any other line only the verdict words of a check line (:data:`CHECK_WORDS`: ``ok``, ``FAIL``,
``check:``, ``measured``, ``bound``, ``illustration``) are translated; every other line stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from poslib.exercises.i18n import Catalogue, language

__all__ = [
    "CATALOGUE",
    "CHECK_WORDS",
    "KEPT",
    "OUTPUTS",
    "SCHEME",
    "check_words",
    "in_language",
    "latin_words",
    "localized",
    "to_chinese",
    "translate_line",
    "translate_output",
]

CATALOGUE = Path(__file__).resolve().parent.parent / "i18n" / "zh" / "outputs.md"

# The lab's scheme names: a base, then +variants (rope+ft_yarn, alibi+logn, fox+rope, rope_nope_hybrid).
_BASES = "nope|learned|sinusoidal|rope_nope_hybrid|rope|xpos|t5|alibi|kerple|sandwich|fire|cope|fox|stickbreaking"
_VARIANTS = (
    "random|pi_tuned|pi|ntk_tuned|ntk|dynamic_tuned|dynamic|yarn_tuned|yarn|logn|rerope_logn|rerope|"
    "leaky_rerope_fit|leaky_rerope|self_extend_fixed|self_extend|ft_pi|ft_ntk|ft_yarn|ft|dca|rope"
)
SCHEME = re.compile(rf"(?<![\w+])(?:{_BASES})(?:\+(?:{_VARIANTS}))*(?![\w+])")
# Latin words a Chinese output keeps: method and model names, notation, units, venues, data sets, authors.
KEPT = frozenset(
    """
    RoPE NTK NTK-RoPE ALiBi YaRN PI KERPLE FIRE CoPE xPos XPOS NoPE ReRoPE Self-Extend Leaky DCA FoX T5 APE SDPA
    L_train L G c k x m r₁ r₂ d_model scale_base softplus max log ppl M B MiB arXiv ICLR NeurIPS WikiText-103
    GPT-NeoX OpenWebText2 GitHub ArXiv Press Chi Li Kazemnejad Sun Rotary Sinusoidal poslib FireBias token CPU n_layers
    """.split()
)
# code-like tokens: paths and addresses (github.com/…, gpt2_model.py), calls (lab.disagreements)
_CODEISH = re.compile(r"`[^`]*`|\b[\w.-]+/[\w./-]+|\b\w+\.(?:py|json|pt)\b|\blab\.\w+")
_WORD = re.compile(r"(?<![\w+])[A-Za-z][\w'’-]*(?:\+\w+)*")


def latin_words(text: str) -> list[str]:
    """The English words of ``text``: Latin words outside code, scheme names and :data:`KEPT` ("116k" is a number)."""
    rest = SCHEME.sub(" ", _CODEISH.sub(" ", text))
    found = []
    for word in _WORD.findall(rest):
        bare = word.removesuffix("'s").removesuffix("’s").rstrip("-")
        if bare not in KEPT:
            found.append(word)
    return found


def _plain(text: str) -> bool:
    return not latin_words(text)


_NAMES = rf"{SCHEME.pattern}(?:, {SCHEME.pattern})*"
_NUMBERS = r"[0-9][0-9.,:% −+-]*"
# Fields held to a form (module docstring): a scheme name, a list of them, numbers.
FIELD_PATTERNS = {
    **dict.fromkeys(("scheme", "best", "winner", "who", "tuned", "free", "a", "b"), re.compile(SCHEME.pattern)),
    **dict.fromkeys(("names", "flat", "claims"), re.compile(_NAMES)),
    **dict.fromkeys(
        ("k", "values", "steps", "length", "v", "w", "r", "same", "all", "other", "l"), re.compile(_NUMBERS)
    ),
}
OUTPUTS = Catalogue(CATALOGUE, plain=_plain, field_patterns=FIELD_PATTERNS)
# no space next to Chinese punctuation (the pieces of a template may bring one)
_TIDY = re.compile(r" +(?=[，。；：（）、])|(?<=[，。；：（）、]) +")


def to_chinese(text: str) -> str | None:
    """The Chinese of one English output line or sentence (catalogue phrase or template), else None."""
    if not text.strip() or _plain(text):
        return None
    found = OUTPUTS.to_chinese(text)
    return None if found is None else _TIDY.sub("", found)


T = TypeVar("T")


def localized(value: T, lang: str | None = None) -> T:
    """``value`` (a sentence, or a list or dict of them) in ``lang`` (default: the notebooks' language).

    In English it is returned as it is; in Chinese each string the catalogue can read becomes its Chinese (any
    other stays English)."""
    if (language() if lang is None else lang) == "en":
        return value
    if isinstance(value, str):
        found = to_chinese(value)
        return found if found is not None else value  # type: ignore[return-value]
    if isinstance(value, list):
        return [localized(v, "zh") for v in value]  # type: ignore[return-value]
    if isinstance(value, dict):
        return {k: localized(v, "zh") for k, v in value.items()}  # type: ignore[return-value]
    return value


def in_language(function: Callable[..., T]) -> Callable[..., T]:
    """``function``, its result :func:`localized`; the English function stays reachable as ``__wrapped__``."""
    import functools

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        return localized(function(*args, **kwargs))

    return wrapper


# ---- check lines ----------------------------------------------------------------------------------------------------

# (pattern, English word): the verdict words of the notebooks' check lines; their Chinese is the catalogue's.
# "ok  " and "FAIL" open a check line at a width of four (the Chinese keeps the columns: two wide characters).
CHECK_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(\s*)ok  (?= )"), "ok"),
    (re.compile(r"^(\s*)FAIL(?= )"), "FAIL"),
    (re.compile(r"(?<=-> )ok$"), "ok"),
    (re.compile(r"(?<=-> )FAIL$"), "FAIL"),
    (re.compile(r"^(\s*)check(?=[:： ])"), "check"),
    (re.compile(r"^(\s*)illustration(?=[:,( ])"), "illustration"),
    (re.compile(r"(?<=[ (])measured(?= )"), "measured"),
    (re.compile(r"(?<=[(;,:] )bounds(?=[: ])|(?<=\()bounds(?=[: ])"), "bounds"),
    (re.compile(r"(?<=[(;,:] )bound(?=[: ])|(?<=\()bound(?=[: ])"), "bound"),
)


# A check line: opened by its verdict ("ok  ", "FAIL", "check:", "illustration") or closed by "-> ok" / "-> FAIL".
# Only there are "measured" and "bound" verdict words; elsewhere a lone 界限 would sit in an English sentence.
_CHECK_LINE = re.compile(r"^\s*(?:ok  |FAIL |check[: ]|illustration[:,( ])|-> (?:ok|FAIL)$")


def check_words(line: str) -> str:
    """``line`` with the verdict words of a check line in Chinese (the rest as it is); other lines unchanged."""
    if not _CHECK_LINE.search(line):
        return line
    line = re.sub(r"^(\s*)check: ?", r"\1check：", line)  # a Chinese colon after the Chinese word, no space
    for pattern, word in CHECK_WORDS:
        chinese = OUTPUTS.find(f"check word: {word}")
        if chinese is not None:

            def put(m: re.Match[str], zh: str = chinese) -> str:
                return (m.group(1) if m.groups() and m.group(1) else "") + zh

            line = pattern.sub(put, line)
    return line


# ---- stored outputs, line by line -----------------------------------------------------------------------------------

_TABLE_ROW = re.compile(r"^\|(.*)\|$")
# the columns of a line printed as aligned columns: cells apart by " | " or by two spaces or more
_COLUMN_GAP = re.compile(r"( *\| *| {2,})")
_CONTINUED = "    "  # textwrap.fill(..., subsequent_indent="    ") in notebook 11


def translate_line(line: str) -> str:
    """One output line in Chinese: the catalogue's line, a bullet or table row piece by piece, else its check words."""
    found = to_chinese(line)
    if found is not None:
        return found
    if line.startswith("- ") and (found := to_chinese(line[2:])) is not None:
        return "- " + found
    row = _TABLE_ROW.match(line)
    if row and not set(row.group(1)) <= set("|-: "):
        cells = row.group(1).split("|")
        out = []
        for cell in cells:
            text = cell.strip()
            zh = to_chinese(text) if text else None
            out.append(cell if zh is None else cell.replace(text, zh))
        return "|" + "|".join(out) + "|"
    found = _columns(line)
    return check_words(line) if found is None else found


def _columns(line: str) -> str | None:
    """``line`` printed as aligned columns (a scheme name, then its sentence), each cell in Chinese, else None."""
    parts = _COLUMN_GAP.split(line)
    if len(parts) < 3:
        return None
    out, changed = [], False
    for k, part in enumerate(parts):
        if k % 2 or not part or _plain(part):
            out.append(part)
            continue
        zh = to_chinese(part)
        if zh is None:
            return None
        out.append(zh)
        changed = True
    return "".join(out) if changed else None


def _unwrapped(lines: list[str]) -> list[str]:
    """The ways to join wrapped lines back: a space at a break, or none after a hyphen ("fine-" / "tuned")."""
    joined = [lines[0]]
    for line in lines[1:]:
        piece = line[len(_CONTINUED) :]
        joined = [j + sep + piece for j in joined for sep in ((" ", "") if j.endswith("-") else (" ",))]
    return joined


def translate_output(text: str) -> str:
    """A stored output (stream text, text/plain or text/markdown) in Chinese, line by line (module docstring)."""
    lines = text.split("\n")
    out: list[str] = []
    k = 0
    while k < len(lines):
        line = lines[k]
        end = k + 1
        while end < len(lines) and lines[end].startswith(_CONTINUED) and not line.startswith(" "):
            end += 1
        if end > k + 1:
            for whole in _unwrapped(lines[k:end]):
                found = to_chinese(whole)
                if found is not None:
                    out.append(found)
                    break
            else:
                out.extend(translate_line(x) for x in lines[k:end])
            k = end
            continue
        out.append(translate_line(line))
        k += 1
    return "\n".join(out)
