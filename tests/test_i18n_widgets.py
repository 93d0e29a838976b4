"""The interactive figures' words in either language (issue 46 item 2), from the widgets catalogue
(poslib/locale/zh/LC_MESSAGES/widgets.po).

``interact`` makes a widget's words when it builds it, in poslib's language: its own (reset button, page buttons,
the caption's lead) are templates of the catalogue, and the labels, menu options and captions a notebook passes in
are looked up there; every one the English notebooks show is extracted into the catalogue (scripts/catalogues.py)
and translated. English is byte for byte what it was; label widths follow the labels' display width (wcwidth). The
book's Chinese pages say their control notes, alt and aria texts and live figures' words in Chinese from the same
catalogue, while the English pages read as before.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.pyplot as plt
import nbformat
import pytest
from babel.messages.pofile import read_po

from poslib import language
from poslib.viz._live import WIDGET_TEXT, label_ch

ROOT = Path(__file__).resolve().parent.parent
PO = ROOT / "poslib" / "locale" / "zh" / "LC_MESSAGES" / "widgets.po"


def _tool(name: str, path: Path):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


book = _tool("build_book", ROOT / "scripts" / "build_book.py")
catalogues = _tool("catalogues", ROOT / "scripts" / "catalogues.py")
english_words = book.english_words


def catalogue() -> dict[str, str]:
    with PO.open("rb") as f:
        return {m.id: m.string for m in read_po(f) if m.id}


# ----------------------------------------------------------------------------- the catalogue


def test_every_label_menu_and_caption_of_the_notebooks_is_translated() -> None:
    texts = dict(catalogues.notebook_widget_texts())
    assert len(texts) > 80, "the notebooks' labels, menus and captions were found"
    chinese = catalogue()
    missing = [f"{where}: {t!r}" for t, where in texts.items() if not chinese.get(t)]
    assert not missing, "widgets.po lacks (python scripts/catalogues.py extract, then translate):\n" + "\n".join(
        missing
    )
    problems = [p for p in catalogues.problems() if "/widgets.po" in p]
    assert not problems, "\n".join(problems)


def test_a_missing_entry_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(book.MissingEntry, match=re.escape("'a label nobody translated (tokens)'")):
        book.widget_text("a label nobody translated (tokens)", "zh", strict=True)
    assert book.widget_text("已经是中文", "zh", strict=True) == "已经是中文", "Chinese needs no entry"
    # a label a notebook shows that the catalogue lacks is listed by scripts/catalogues.py check
    from babel.messages.catalog import Catalog

    short = Catalog(locale="zh", domain="widgets")
    for english, chinese in catalogue().items():
        if english != "query position m (tokens)":
            short.add(english, chinese)
    read = catalogues.read
    monkeypatch.setattr(catalogues, "read", lambda lang, domain: short if domain == "widgets" else read(lang, domain))
    assert any("'query position m (tokens)'" in p for p in catalogues.problems())


def test_the_catalogue_keeps_numbers_and_symbols_and_the_editions_rules() -> None:
    chinese = catalogue()
    assert chinese["pair i (dimensions 2i and 2i+1)"] == "第 i 对（维度 2i 和 2i+1）"
    assert chinese["slope μ = −log f (every token)"] == "斜率 μ = −log f（每个 token 相同）"
    assert language.translate("widgets", "query position m (tokens)", "en") == "query position m (tokens)"
    sys.path.insert(0, str(ROOT / "tests"))
    from i18n_script import i18n
    from test_i18n_terms import TERMS

    for english, text in chinese.items():
        assert not i18n.typography_problems(text), (english, text)
        for concept, (form, others) in TERMS.items():
            assert not re.search(others, text), f"{english!r}: {concept} (use {form}): {text}"
        if english != text:  # a name (RoPE, Self-Extend) is its own translation
            assert not english_words(text), (english, text)


# ----------------------------------------------------------------------------- live: poslib.viz.interact


def _tour_box(widgets):
    from poslib.viz import interact
    from poslib.viz.tour import TOUR_SCHEMES, SchemeTourPlot

    menu = widgets.Dropdown(options=list(TOUR_SCHEMES), value="sinusoidal", description="family")
    span = widgets.SelectionSlider(options=list(SchemeTourPlot.spans), value=256, description="distances shown")
    caption = "T5's bucket stops changing at 128; ALiBi's bias falls in a straight line; RoPE and sinusoidal wiggle"
    box = interact(SchemeTourPlot(), scheme=menu, span=span, caption=caption)
    plt.close("all")
    return box, menu, span, caption


def test_a_widget_built_in_chinese_shows_chinese_words(zh: None) -> None:
    widgets = pytest.importorskip("ipywidgets")
    box, menu, span, _ = _tour_box(widgets)
    assert (menu.description, span.description) == ("编码方式", "显示的距离范围")
    assert list(menu._options_labels) == ["三角函数式", "RoPE", "T5 桶", "ALiBi", "KERPLE"]
    assert menu.value == "sinusoidal", "the plot still gets the English value"
    menu.value = "T5 buckets"
    assert box.plot.params["scheme"] == "T5 buckets"
    reset = next(c for c in box.children if isinstance(c, widgets.Button))
    assert (reset.description, reset.tooltip) == ("复位", "回到初始值")
    caption = next(c for c in box.children if isinstance(c, widgets.HTML)).value
    assert caption == "<i>观察要点：</i>T5 的桶到 128 就不再变化；ALiBi 的偏置沿直线下降；RoPE 和三角函数式编码上下起伏"
    assert span.style.description_width == f"{label_ch(['显示的距离范围'])}ch" == "16ch", "a Chinese character is 2ch"
    labels = [menu.description, span.description, reset.description, reset.tooltip, caption]
    assert not [w for t in labels for w in english_words(t)]
    assert box._repr_mimebundle_()[0]["text/plain"] == "交互图：运行笔记本后才能拖动它的控件。"


def test_a_page_button_says_its_step_in_the_language_of_the_build(zh: None) -> None:
    widgets = pytest.importorskip("ipywidgets")
    from poslib.viz import interact
    from poslib.viz.rope import RotatingPairsPlot

    position = widgets.IntSlider(value=12, min=0, max=4096, description="query position m (tokens)")
    interact(RotatingPairsPlot(), position=position)
    plt.close("all")
    back, forward = position.page_buttons
    assert (back.tooltip, forward.tooltip) == ("−16（翻一页）", "+16（翻一页）")
    language.set_language("en")
    position = widgets.IntSlider(value=12, min=0, max=4096, description="query position m (tokens)")
    interact(RotatingPairsPlot(), position=position)
    plt.close("all")
    assert [b.tooltip for b in position.page_buttons] == ["−16 (a page)", "+16 (a page)"]


def test_a_widget_built_in_english_is_unchanged(en: None) -> None:
    widgets = pytest.importorskip("ipywidgets")
    box, menu, span, caption = _tour_box(widgets)
    assert (menu.description, span.description) == ("family", "distances shown")
    assert list(menu._options_labels) == ["sinusoidal", "RoPE", "T5 buckets", "ALiBi", "KERPLE"]
    reset = next(c for c in box.children if isinstance(c, widgets.Button))
    assert (reset.description, reset.tooltip) == ("reset", "back to the starting values")
    shown = next(c for c in box.children if isinstance(c, widgets.HTML)).value
    assert shown == f"<i>What to look for:</i> {html.escape(caption)}"
    assert span.style.description_width == f"{len('distances shown') + 2}ch"
    assert box._repr_mimebundle_()[0]["text/plain"] == WIDGET_TEXT


def test_label_widths_count_display_columns() -> None:
    assert label_ch(["base"]) == 6 and label_ch([]) == 6, "at least 4 columns, plus the colon's 2"
    assert label_ch(["offset m − n (tokens)"]) == len("offset m − n (tokens)") + 2
    assert label_ch(["底数", "位置 m（token）"]) == 2 * 4 + len(" m") + len("token") + 2


# ----------------------------------------------------------------------------- book: the Chinese pages' own words


class _Visible(HTMLParser):
    """The text a reader meets in an HTML fragment (outside <code> and <script>) and its alt, aria and title texts."""

    SKIP = {"code", "script", "pre"}

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.depth += 1
        self.texts += [v for k, v in attrs if k in ("alt", "data-alt", "aria-label", "title") and v]

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.texts.append(data)


def _english_in(fragment: str) -> list[str]:
    parser = _Visible()
    parser.feed(fragment)
    return [w for t in parser.texts for w in english_words(t)]


def test_chinese_alt_and_note_texts() -> None:
    alt = book._figure_alt("旋转位置编码", "每一对按自己的角度旋转。", "zh", 2, 3)
    assert alt == "“旋转位置编码”一节的图（第 2 幅，共 3 幅）：每一对按自己的角度旋转。"
    note = book._widget_note(["查询位置 m（token）", "复位"], True, "notebooks/zh/05_rope.ipynb", "zh")
    assert "交互单元格（查询位置 m（token）、复位）。" in note and not _english_in(note)
    assert not _english_in(book._widget_note([], False, "notebooks/zh/05_rope.ipynb", "zh"))


def test_english_alt_and_note_texts_are_unchanged() -> None:
    assert (
        book._figure_alt("Rotation", "Each pair turns.", "en", 2, 3)
        == "Figure for “Rotation” (figure 2 of 3): Each pair turns."
    )
    assert book._figure_alt("Rotation", "", "en") == "Figure for “Rotation”"
    note = book._widget_note(["base", "reset"], False, "notebooks/05_rope.ipynb")
    assert note == (
        '<div class="book-widget-note" role="note"><strong>Interactive cell (base, reset).</strong> Its output appears '
        "only when the notebook runs. The controls need a running kernel: open <code>notebooks/05_rope.ipynb</code> "
        "in JupyterLab and run it to move them.</div>"
    )


def test_chinese_alt_text_splits_at_chinese_sentence_ends() -> None:
    text = "每个头都有自己的斜率，斜率越陡，它看得越近；最后几个头能看到很远之前的 token。第二句不该进入替代文字。"
    assert book._lead_sentence(text, "zh") == text[: text.index("。") + 1]
    english = "Each head has its own slope, and the steeper it is the nearer it looks. A second sentence."
    assert book._lead_sentence(english) == "Each head has its own slope, and the steeper it is the nearer it looks."


def test_a_chinese_page_has_no_english_around_its_figures() -> None:
    """The zh page of 07 as the book prepares it without frames: every alt text and widget note is Chinese."""
    nb = nbformat.read(ROOT / "notebooks" / "zh" / "07_alibi.ipynb", as_version=4)
    page = book.Page("07_alibi", book._notebook_title(nb, "07_alibi"), nb, "notebooks/zh/07_alibi.ipynb")
    prepared = book.prepare(page, None, "zh")
    alts, notes = [], []
    for cell in prepared.cells:
        for out in cell.get("outputs", []):
            alts += (
                [out.get("metadata", {}).get("image/png", {}).get("alt", "")]
                if "image/png" in out.get("data", {})
                else []
            )
            notes += (
                [out["data"]["text/html"]] if "book-widget-note" in out.get("data", {}).get("text/html", "") else []
            )
    assert len(notes) == 2 and alts
    assert all("一节的图" in a and not a.startswith("Figure for") for a in alts)
    problems = [w for n in notes for w in _english_in(n)]
    assert not problems, notes
    nav = book._nav([page, page], 1, "zh") | {"live": False}
    body, _ = book._exporter("../").from_notebook_node(prepared, resources={"book": nav})
    assert re.findall(r'<nav[^>]*aria-label="([^"]*)"', body) == ["课程导航（页首）", "课程导航（页尾）"]
    assert not [s for s in ("Figure for", "Interactive", "What to look for", "(figure") if s in body]


def test_a_chinese_live_figure_speaks_chinese(tmp_path: Path) -> None:
    """A live figure's controls, caption, notes, aria and alt texts on a Chinese page (its frames stay English)."""
    widgets = pytest.importorskip("ipywidgets")
    from poslib.viz._book_hook import book_recorder
    from poslib.viz.tour import TOUR_SCHEMES, SchemeTourPlot

    plot = SchemeTourPlot()
    controls = {
        "scheme": widgets.Dropdown(options=list(TOUR_SCHEMES), value="sinusoidal", description="family"),
        "span": widgets.SelectionSlider(options=list(SchemeTourPlot.spans), value=256, description="distances shown"),
    }
    record_frames = book_recorder().record_frames
    folder = record_frames(plot, controls, "T5's bucket stops changing at 128; ALiBi's bias falls in a straight line; "
                           "RoPE and sinusoidal wiggle", tmp_path, budget=12)  # fmt: skip
    plot.close()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    zh = book.localized_manifest(manifest, "zh")
    assert [c["label"] for c in zh["controls"]] == ["编码方式", "显示的距离范围"]
    assert manifest["controls"][0]["label"] == "family", "the recorded manifest is not changed"
    fragment = book.live_figure(zh, book._figure_alt("看一看", "", "zh"), 600, "live-1", "zh")
    assert 'aria-label="交互图：“看一看”一节的图"' in fragment
    assert "<i>观察要点：</i>T5 的桶" in fragment and "复位" in fragment
    assert not _english_in(fragment), _english_in(fragment)
    data = json.loads(re.search(r'class="book-live-data">(.*?)</script>', fragment).group(1))
    assert data["words"]["values"] == "个取值" and "三角函数式" in data["controls"][0]["labels"]
    english = book.live_figure(manifest, "Figure for “See it”", 600, "live-1")
    assert 'aria-label="Interactive figure: Figure for “See it”"' in english and "words" not in english
    assert "<i>What to look for:</i> T5&#x27;s bucket" in english
