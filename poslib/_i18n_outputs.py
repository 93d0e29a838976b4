"""The Chinese of what the notebooks print: the lab's conclusions and the verdict words of check lines.

The Chinese notebooks keep the English code, so what a code cell prints is English; ``scripts/i18n.py build``
passes every stored text output through :func:`translate_output`. The lab's own sentences are written in poslib's
language where they are made (:mod:`poslib.lab.wording`, through the ``lab`` gettext catalogue), so a student who
re-runs a Chinese notebook reads Chinese there too. In English nothing changes.

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

import io
import re
import unicodedata
from pathlib import Path
from typing import Any, TypeVar

from poslib.exercises.i18n import Catalogue, language

__all__ = [
    "CATALOGUE",
    "CHECK_WORDS",
    "KEPT",
    "OUTPUTS",
    "SCHEME",
    "ChineseStdout",
    "check_words",
    "chinese_stdout_in_a_chinese_kernel",
    "latin_words",
    "localized",
    "to_chinese",
    "translate_line",
    "translate_output",
]

CATALOGUE = Path(__file__).resolve().parent.parent / "i18n" / "zh" / "outputs.md"
# The lines the other cells print (checks, tables, measurements), one file per notebook: i18n/zh/prints/NN.md.
PRINTS = tuple(sorted((CATALOGUE.parent / "prints").glob("*.md")))

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
    GPT-NeoX OpenWebText2 GitHub ArXiv Press Chi Li Kazemnejad Sun Sinusoidal poslib FireBias token CPU n_layers
    Llama LLaMA Qwen Gemma DeepSeek Mistral GPT GPT-J Phi BERT DeBERTa Transformer-XL TUPE LongRoPE Sandwich PaTH MLA
    BOS EOS AdamW NumPy PyTorch torch numpy Python vLLM transformers HF VL JSON SHA-256 cos sin tan ln exp softmax
    sigmoid argmax argmin Re Im inf nan ReLU MLP GeLU min mscale M-RoPE p-RoPE rad logit nat nats
    one-hot MiniLM Instruct PE SGD lr py site-packages rope None CPD BLOOM NTK-aware NeoX cumsum sL yarn
    """.split()
)
# code-like tokens: paths and addresses (github.com/…, gpt2_model.py), calls (lab.disagreements)
_CODEISH = re.compile(r"`[^`]*`|'[\w.-]*'|\b[\w.-]+/[\w./-]+|\b\w+\.(?:py|json|pt)\b|\b(?:lab|np|torch)\.\w+")
_CAMEL = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z]+)+")
_WORD = re.compile(r"(?<![\w+])[A-Za-z][\w'’-]*(?:\+\w+)*")


def latin_words(text: str) -> list[str]:
    """The English words of ``text``: Latin words outside code, scheme names and :data:`KEPT`, of two letters or more,
    with no digit or underscore ("116k" is a number, W_qk and Qwen2 are names)."""
    rest = SCHEME.sub(" ", _CODEISH.sub(" ", text))
    found = []
    for match in _WORD.finditer(rest):
        word = match.group()
        bare = word.removesuffix("'s").removesuffix("’s").rstrip("-")
        # notation (q, N, L', m+Δ, cᵀ𝒦c: no two letters side by side), an identifier or a model id (W_qk, apply_rope,
        # Qwen2, V3): notation and code, not English
        if not re.search("[A-Za-z]{2}", bare) or "_" in bare or any(c.isdigit() for c in bare):
            continue
        if bare.endswith("Error") or rest.startswith("(", match.end()) or _CAMEL.fullmatch(bare):
            continue  # an exception's or a class's name (SinusoidalEmbedding); a function applied: round(…), ms(40, 1)
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
OUTPUTS = Catalogue((CATALOGUE, *PRINTS), plain=_plain, field_patterns=FIELD_PATTERNS)
_NAME_LIST = re.compile(rf"{SCHEME.pattern}(?:, {SCHEME.pattern})+")
# no space next to Chinese punctuation (the pieces of a template may bring one)
_TIDY = re.compile(r" +(?=[，。；：（）、])|(?<=[，。；：（）、]) +")


def to_chinese(text: str) -> str | None:
    """The Chinese of one English output line or sentence (catalogue phrase or template), else None."""
    if not text.strip():
        return None
    if _plain(text):  # no English word; but the catalogue may still name it ("KERPLE log (r₁ = 2)" → 对数形式)
        found = OUTPUTS.entries[0].get(text)
        return None if found is None else _TIDY.sub("", found)
    found = OUTPUTS.to_chinese(text)
    if found is None:
        return None
    # a list of scheme names takes the Chinese enumeration comma (rope、xpos、t5)
    found = _NAME_LIST.sub(lambda m: "、".join(m.group().split(", ")), found)
    return _TIDY.sub("", found)


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
_COLUMN_GAP = re.compile(r"( +\| +| {2,})")  # a bar between spaces, or two spaces; not the bars of |Δ|
_CONTINUED = "    "  # textwrap.fill(..., subsequent_indent="    ") in notebook 11


def translate_line(line: str) -> str:
    """One output line in Chinese: the catalogue's line, a bullet or table row piece by piece, else its check words."""
    body = line.lstrip(" ")
    found = to_chinese(body)
    if found is not None:
        return line[: len(line) - len(body)] + found  # the catalogue holds a line without its indentation
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
        if k % 2 or not part:
            out.append(part)
            continue
        zh = to_chinese(part)
        if zh is None and _plain(part):  # numbers, names: as they are
            out.append(part)
            continue
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
    """A stored output (stream text, text/plain or text/markdown) in Chinese, line by line (module docstring); the
    columns of a table printed with spaces realigned for the width of Chinese characters (:func:`realign`)."""
    lines = text.split("\n")
    pairs: list[tuple[str | None, str]] = []  # (the English line, its Chinese); None: a paragraph joined back
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
                    pairs.append((None, found))
                    break
            else:
                pairs.extend((x, translate_line(x)) for x in lines[k:end])
            k = end
            continue
        pairs.append((line, translate_line(line)))
        k += 1
    return "\n".join(_hang(pairs, realign(pairs)))


def _hang(pairs: list[tuple[str | None, str]], lines: list[str]) -> list[str]:
    """A line indented to sit under the text after the previous line's label ("toy table: …" / "           …")
    indented again to the Chinese label's display width (玩具表：)."""
    out = list(lines)
    for k in range(1, len(pairs)):
        (above, _), (english, _) = pairs[k - 1], pairs[k]
        if above is None or english is None or above.startswith(" ") or not english.startswith(" "):
            continue
        indent = len(english) - len(english.lstrip(" "))
        label = above.find(":")
        if label < 0 or len(above[:indent].rstrip()) != label + 1 or "：" not in out[k - 1]:
            continue  # not hanging under a label
        width = display_width(out[k - 1][: out[k - 1].index("：") + 1])
        out[k] = " " * width + out[k].lstrip(" ")
    return out


# ---- tables printed with spaces -------------------------------------------------------------------------------------

_ARRAY = re.compile(r"\[[^\[\]]*(?:\]|$)")  # a printed array, perhaps continued on the next line
_CELL_GAP = re.compile(r" +\| +| {2,}")  # a bar between spaces; not the bars of |Δ|


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: two for a wide (CJK) character, one for any other."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _cells(line: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each cell of ``line``: pieces apart by two spaces or more, a "|" a cell of its own,
    the indentation not a cell."""
    found, start = [], len(line) - len(line.lstrip(" "))
    inside = [range(*m.span()) for m in _ARRAY.finditer(line)]
    for gap in _CELL_GAP.finditer(line, start):
        if any(gap.start() in r for r in inside):
            continue  # the spaces that align a printed array's numbers ([0.5    0.25]) part no cells
        if gap.start() > start:
            found.append((start, gap.start(), line[start : gap.start()]))
        bar = gap.group().find("|")
        if bar >= 0:
            found.append((gap.start() + bar, gap.start() + bar + 1, "|"))
        start = gap.end()
    if start < len(line):
        found.append((start, len(line), line[start:]))
    return found


def realign(pairs: list[tuple[str | None, str]]) -> list[str]:
    """The Chinese lines, each run of table rows (lines of two cells or more, in English and in Chinese alike)
    laid out again so that its columns line up in display width (:func:`display_width`).

    A column is the span of English columns its cells cover together (overlapping cells make one). It takes the
    width of its widest cell (at least its English width where a cell keeps an offset), the gaps between columns
    stay the English ones; a cell that starts the column stays at its start,
    one that ends it stays at its end (numbers under a right-aligned heading), any other keeps its offset. A run
    with no wide character is returned as it is, so English output is never touched."""
    out = [zh for _, zh in pairs]
    k = 0
    while k < len(pairs):
        end = k
        while end < len(pairs) and (_is_row(*pairs[end]) or (end > k and _is_rule(pairs[end][0]))):
            end += 1
        rows = [i for i in range(k, end) if _is_row(*pairs[i])]  # a rule (-----) under a heading stays as it is
        if len(rows) >= 2 and any(display_width(pairs[i][1]) != len(pairs[i][1]) for i in rows):
            for i, line in zip(rows, _laid_out([(pairs[i][0] or "", pairs[i][1]) for i in rows]), strict=True):
                out[i] = line
        k = max(end, k + 1)
    return out


def _is_rule(english: str | None) -> bool:
    return english is not None and bool(english.strip()) and set(english.strip()) <= set("-=")


def _is_row(english: str | None, chinese: str) -> bool:
    return english is not None and len(_cells(english)) >= 2 and len(_cells(english)) == len(_cells(chinese))


def _laid_out(rows: list[tuple[str, str]]) -> list[str]:
    spans: list[list[int]] = []  # the columns: [start, end) in the English lines, left to right
    for start, end, _ in sorted(c for english, _ in rows for c in _cells(english)):
        if spans and start < spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    cells = [list(zip(_cells(english), [c[2] for c in _cells(chinese)], strict=True)) for english, chinese in rows]

    def column(start: int) -> int:
        return next(i for i, (a, b) in enumerate(spans) if a <= start < b)

    # a column whose cells all end together is right-aligned (a heading over numbers), one whose cells all start
    # together left-aligned; in any other a cell goes by its own start or end
    edges: dict[int, tuple[set[int], set[int]]] = {}
    for row in cells:
        for (start, end, _), _zh in row:
            starts, ends = edges.setdefault(column(start), (set(), set()))
            starts.add(start)
            ends.add(end)

    def anchor(start: int, end: int) -> str:
        g = column(start)
        starts, ends = edges[g]
        if (len(ends) == 1 and len(starts) > 1) or (start != spans[g][0] and end == spans[g][1]):
            return "right"
        return "left" if start == spans[g][0] else "offset"

    # as wide as its widest cell now (a Chinese label narrower than its English one), or as the English column
    # where a cell keeps its offset in it
    offsets = {column(start) for row in cells for (start, end, _), _zh in row if anchor(start, end) == "offset"}
    width = [end - start if g in offsets else 0 for g, (start, end) in enumerate(spans)]
    for row in cells:
        for (start, end, _), zh in row:
            g = column(start)
            offset = start - spans[g][0] if anchor(start, end) == "offset" else 0
            width[g] = max(width[g], offset + display_width(zh))
    begin = [spans[0][0]]
    for g in range(1, len(spans)):
        begin.append(begin[-1] + width[g - 1] + spans[g][0] - spans[g - 1][1])
    lines = []
    for row in cells:
        line, column_at = "", 0
        for (start, end, _), zh in row:
            g = column(start)
            side = anchor(start, end)
            if side == "left":
                at = begin[g]
            elif side == "right":
                at = begin[g] + width[g] - display_width(zh)
            else:
                at = begin[g] + start - spans[g][0]
            apart = 1 if "|" in (zh, line[-1:]) else 2  # the narrowest gap a row can be read with
            line += " " * max(at - column_at, apart if line else at)
            line += zh
            column_at = display_width(line)
        lines.append(line)
    return lines


# ---- a Chinese kernel's printed lines, live ----------------------------------------------------------------------


class ChineseStdout(io.TextIOBase):
    """``sys.stdout`` of a Chinese notebook's kernel: each finished line a cell prints goes out as
    :func:`translate_line` gives it, so a student who re-runs a Chinese notebook reads what its stored outputs say
    (the stored tables are realigned as well; a live one is not). Everything else is the wrapped stream's."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        if lines:
            self._stream.write("\n".join(map(_translated_or_kept, lines)) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending:  # a line the cell has not finished (print(..., end="")): as it is
            self._stream.write(self._pending)
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:  # set_parent, encoding, fileno, …: the kernel's stream answers
        return getattr(self._stream, name)


def _translated_or_kept(line: str) -> str:
    try:
        return translate_line(line)
    except Exception:  # a catalogue that cannot be read must never swallow what a cell printed
        return line


def chinese_stdout_in_a_chinese_kernel() -> bool:
    """In a Jupyter kernel whose language is Chinese (:func:`poslib.exercises.i18n.language`), route ``sys.stdout``
    through :class:`ChineseStdout` (once); anywhere else leave it. Returns whether it is routed now."""
    import sys

    if isinstance(sys.stdout, ChineseStdout):
        return True
    if "ipykernel" not in sys.modules or language() != "zh":
        return False
    sys.stdout = ChineseStdout(sys.stdout)
    return True
