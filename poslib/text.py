"""Text for fixed-width tables: padding by display width, so that a column whose cells hold Chinese lines up.

A Chinese character takes two columns of a terminal or a notebook's monospace output, a Latin letter one;
``f"{text:<12}"`` counts characters, so a column of Chinese words comes out too wide. :func:`pad` counts columns
(``wcwidth.wcswidth``, the display width that terminals and Jupyter's output area use)::

    >>> pad("rope", 6) + "|"
    'rope  |'
    >>> pad("外推", 6) + "|"
    '外推  |'
"""

from __future__ import annotations

import textwrap
import unicodedata

from wcwidth import wcswidth

__all__ = ["display_width", "pad", "wrap"]

_ALIGNS = ("<", ">", "^")


def display_width(text: str) -> int:
    """The number of columns ``text`` takes in a monospace output: 2 for each wide (CJK) character, 1 for most
    others, 0 for combining marks.

    Raises:
        TypeError: ``text`` is not a str.
        ValueError: ``text`` holds a control character (a newline, a tab), which has no width.
    """
    if not isinstance(text, str):
        raise TypeError(f"display_width(text): text must be a str, got {type(text).__name__}")
    width = wcswidth(text)
    if width < 0:
        bad = next(ch for ch in text if wcswidth(ch) < 0)
        raise ValueError(f"display_width(text): text holds the control character {bad!r}, which has no width")
    return width


def pad(text: str, width: int, align: str = "<") -> str:
    """``text`` padded with spaces to ``width`` display columns, like ``f"{text:<width}"`` but counting columns.

    Args:
        text: what to pad; a text wider than ``width`` is returned as it is (like str.format, never cut).
        width: the columns the result takes, at least.
        align: ``"<"`` left (spaces after), ``">"`` right (spaces before), ``"^"`` centred (an odd space after).

    Returns:
        The padded text: its display width is ``max(width, display_width(text))``. For text without wide
        characters it equals ``format(text, f"{align}{width}")``.

    Raises:
        TypeError: ``text`` is not a str or ``width`` not an int.
        ValueError: ``width`` is negative, ``align`` is not one of "<", ">", "^", or ``text`` holds a control
            character.
    """
    if not isinstance(width, int) or isinstance(width, bool):
        raise TypeError(f"pad(text, width): width must be an int, got {type(width).__name__}")
    if width < 0:
        raise ValueError(f"pad(text, width): width must be >= 0, got {width}")
    if align not in _ALIGNS:
        raise ValueError(f"pad(text, width, align): align must be one of '<', '>', '^', got {align!r}")
    if not isinstance(text, str):
        raise TypeError(f"pad(text, width): text must be a str, got {type(text).__name__}")
    missing = max(0, width - display_width(text))
    if align == "<":
        return text + " " * missing
    if align == ">":
        return " " * missing + text
    return " " * (missing // 2) + text + " " * (missing - missing // 2)


# full-width punctuation that closes a phrase: a line may not begin with it (the break goes before the character
# in front of it instead); an opening bracket may not end a line
_NO_LINE_START = frozenset("，。；：、）】》」』！？…”’")
_NO_LINE_END = frozenset("（【《「『“‘")


def _is_wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _break_after(text: str, i: int) -> bool:
    """Whether a line may end after ``text[i]`` (the next line starting at ``text[i + 1]``)."""
    ch, nxt = text[i], text[i + 1]
    if nxt in _NO_LINE_START or ch in _NO_LINE_END or " " in (ch, nxt):
        return False
    # a space is handled by the caller (the line ends before it); a wide character or full-width punctuation
    # ends a phrase unit, so a line may end after it; a Latin run ("×1.03", "p = 0.05") is never split inside
    return _is_wide(ch) or (_is_wide(nxt) and not ch.isspace())


def wrap(text: str, width: int, indent: str = "") -> str:
    """``text`` wrapped to lines of at most ``width`` display columns, the lines after the first starting with
    ``indent``.

    For text without wide characters it is exactly ``textwrap.fill(text, width, subsequent_indent=indent)``, so
    English output does not change. Text with wide (CJK) characters has no spaces between its words, and
    ``textwrap`` counts characters, not columns: here lines are measured with :func:`display_width` and may
    break at a space or after a wide character (a Chinese character or full-width punctuation), never before
    full-width closing punctuation (，。；：、）) or after an opening bracket (（), never inside a run of Latin
    letters, digits and signs such as ``×1.03``, and not at the spaces around ``=`` or before ``%`` (``p = 0.05``,
    ``−2.88 %`` stay on one line). A single unbreakable run wider than the line is kept whole on its own line.

    Args:
        text: one paragraph (no newlines or tabs).
        width: the most display columns a line takes, at least 1 more than ``indent`` takes.
        indent: what every line after the first starts with.

    Returns:
        The wrapped paragraph, lines joined by ``"\n"``.

    Raises:
        TypeError: ``text`` or ``indent`` is not a str, or ``width`` not an int.
        ValueError: ``width`` is not greater than the width of ``indent``, or ``text`` holds a control character.
    """
    if not isinstance(text, str):
        raise TypeError(f"wrap(text, width): text must be a str, got {type(text).__name__}")
    if not isinstance(indent, str):
        raise TypeError(f"wrap(text, width, indent): indent must be a str, got {type(indent).__name__}")
    if not isinstance(width, int) or isinstance(width, bool):
        raise TypeError(f"wrap(text, width): width must be an int, got {type(width).__name__}")
    if width <= display_width(indent):
        raise ValueError(
            f"wrap(text, width, indent): width must be greater than the width of indent "
            f"({display_width(indent)}), got {width}"
        )
    if not any(_is_wide(ch) for ch in text):
        return textwrap.fill(text, width, subsequent_indent=indent)
    display_width(text)  # a control character is an error, as in pad
    # the text as unbreakable pieces, each with the separator (a space or nothing) that a break would drop
    words: list[str] = []
    for word in text.split():
        # "p = 0.05", "−2.88 %": a sign or a unit stays on the line of what it belongs to
        if words and (word[0] in "=%" or words[-1].endswith("=")):
            words[-1] += " " + word
        else:
            words.append(word)
    pieces: list[tuple[str, str]] = []  # (piece, the separator in front of it)
    for w, word in enumerate(words):
        start = 0
        for i in range(len(word) - 1):
            if _break_after(word, i):
                pieces.append((word[start : i + 1], " " if w and start == 0 else ""))
                start = i + 1
        pieces.append((word[start:], " " if w and start == 0 else ""))
    lines: list[str] = []
    line = ""
    for piece, sep in pieces:
        if line and display_width(line + sep + piece) > width:
            lines.append(line)
            line = indent + piece
        else:
            line = line + sep + piece if line else piece
    lines.append(line)
    return "\n".join(lines)
