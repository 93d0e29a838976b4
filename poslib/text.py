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

from wcwidth import wcswidth

__all__ = ["display_width", "pad"]

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
