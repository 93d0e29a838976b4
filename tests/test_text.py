"""poslib.text.pad: padding by display width (issue 46 item 4), so that a table's Chinese column lines up."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wcwidth import wcswidth

from poslib.text import display_width, pad, wrap

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


# --- wrap: Chinese paragraphs by display width, English exactly as textwrap.fill -----------------------------------

ENGLISH = [
    "second run, not: RoPE extrapolates well: at 8× L_train rope+ft_yarn is lower on 3 of 3 seeds (paired ratio "
    "×1.03, p = 0.05), and the PI fine-tune costs perplexity and retrieval at L_train.",
    "The best, rope+ft_yarn (not beaten by rope+ft_ntk), and the best training-free reading as deployed, "
    "rope+rerope_logn, beat neither one another.",
    "short",
    "a-very-long-unbreakable-token-that-is-wider-than-the-line-itself-by-far and then a few words",
]


@pytest.mark.parametrize("text", ENGLISH)
@pytest.mark.parametrize(("width", "indent"), [(110, "    "), (40, "    "), (30, ""), (12, "  ")])
def test_wrap_leaves_english_as_textwrap_fill_writes_it(text, width, indent):
    import textwrap

    assert wrap(text, width, indent) == textwrap.fill(text, width, subsequent_indent=indent)


CHINESE = (
    "第二次运行，不成立：rope+ft_yarn 在 8× L_train 处的困惑度比值 ×1.03（p = 0.05），3 个种子上都更低；"
    "未检查预训练是否已进入平台期（没有留出集曲线），"
    "PI 微调在 L_train 上让困惑度变差（t = −8.6），检索能力也下降 −2.88 %。"
)
LATIN_RUNS = ("rope+ft_yarn", "L_train", "×1.03", "p = 0.05", "8×", "−2.88 %", "t = −8.6")


@pytest.mark.parametrize("width", [24, 32, 40, 60, 110])
def test_wrap_keeps_chinese_lines_within_the_width_and_breaks_only_where_allowed(width):
    indent = "    "
    lines = wrap(CHINESE, width, indent).split("\n")
    assert all(display_width(line) <= width for line in lines), [(display_width(x), x) for x in lines]
    assert all(line.startswith(indent) for line in lines[1:])
    body = [lines[0]] + [line[len(indent) :] for line in lines[1:]]
    # nothing lost or added but the spaces at the breaks
    assert "".join(body).replace(" ", "") == CHINESE.replace(" ", "")
    for line in body[1:]:
        assert line[0] not in "，。；：、）", line  # never a line starting with closing punctuation
    for line, following in itertools.pairwise(body):
        assert line[-1] != "（", line  # nor one ending with an opening bracket
        assert not line.endswith(("=", " p", " t")), line  # "p = 0.05" stays whole
        assert not following.startswith(("%", "=")), following
    for previous, line in itertools.pairwise(body):
        joint = previous[-1:] + line[:1]
        # a break is at a space (dropped), or next to a wide character (after it, or before an opening bracket)
        wide_joint = display_width(previous[-1]) == 2 or display_width(line[0]) == 2
        assert wide_joint or CHINESE.find(previous[-1] + " " + line[0]) >= 0, joint
    for run in LATIN_RUNS:  # Latin runs are never split
        assert any(run in line for line in body), run


def test_wrap_fills_the_line_as_far_as_it_can():
    lines = wrap("一" * 25, 10).split("\n")
    assert lines == ["一" * 5] * 5


@pytest.mark.parametrize("width", [0, -3, 4])
def test_wrap_refuses_a_width_not_wider_than_the_indent(width):
    with pytest.raises(ValueError, match="width"):
        wrap("一二三", width, indent="    ")


def test_wrap_refuses_a_width_that_is_not_an_int():
    with pytest.raises(TypeError, match="width"):
        wrap("一二三", 10.0)
