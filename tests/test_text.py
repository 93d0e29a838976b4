"""poslib.text.pad: padding by display width (issue 46 item 4), so that a table's Chinese column lines up."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wcwidth import wcswidth

from poslib.text import display_width, pad

# printable text, wide CJK characters among it; no control characters (they have no width)
TEXT = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
        st.sampled_from("，。：；（）×≤≥−θΔ…"),
    ),
    max_size=20,
)


@given(TEXT, st.integers(0, 40), st.sampled_from("<>^"))
def test_the_result_takes_the_width_asked_or_the_texts_own(text, width, align):
    out = pad(text, width, align)
    assert wcswidth(out) == max(width, wcswidth(text)), (out, wcswidth(out), width, wcswidth(text))
    assert out.strip(" ") == text.strip(" ")


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20), st.integers(0, 30))
def test_ascii_text_is_padded_as_str_format_pads_it(text, width):
    for align in "<>^":
        assert pad(text, width, align) == format(text, f"{align}{width}")


def test_a_chinese_column_lines_up_with_a_latin_one():
    rows = [pad(name, 11) + "|" for name in ("rope", "外推", "位置插值 PI", "位置插值")]
    assert {display_width(r) for r in rows} == {12}, rows
    assert pad("外推", 6, ">") == "  外推" and pad("外推", 7, "^") == " 外推  "


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("x", -1), ValueError, r"width must be >= 0, got -1"),
        (("x", 2.0), TypeError, r"width must be an int, got float"),
        (("x", True), TypeError, r"width must be an int, got bool"),
        ((3, 2), TypeError, r"text must be a str, got int"),
        (("x", 2, "left"), ValueError, r"align must be one of '<', '>', '\^', got 'left'"),
        (("a\nb", 4), ValueError, r"control character '\\n'"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(args, error, match):
    with pytest.raises(error, match=match):
        pad(*args)
