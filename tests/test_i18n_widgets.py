"""The interactive figures' controls in Chinese (issue 36), from the catalogue i18n/zh/widgets.md.

Every control label and caption the English notebooks give ``interact`` has an entry (and a missing one is named);
``interact`` in a Chinese notebook shows Chinese labels, menu words, caption and reset button, and English ones,
byte for byte as before, elsewhere; the Chinese notebooks that ``scripts/i18n.py build`` writes store Chinese widget
labels and captions (what a student sees before running); the book's Chinese pages say their control notes, alt and
aria texts and live figures' words in Chinese, while the English pages read as before.
"""

from __future__ import annotations

import copy
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

from poslib._i18n_widgets import (
    LOOK,
    WIDGET_STATE,
    WIDGET_TEXT,
    WIDGETS,
    MissingEntry,
    english_words,
    label_ch,
    localize_widgets,
    widget_text,
)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
_LITERAL = re.compile(r"\b(description|caption)=\"([^\"]*)\"")


def _tool(name: str, path: Path):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


i18n = _tool("i18n_tool", ROOT / "scripts" / "i18n.py")
book = _tool("build_book", ROOT / "scripts" / "build_book.py")


def english_texts() -> dict[str, set[str]]:
    """Every text the English notebooks put on their controls: the description= and caption= literals of the code,
    and the labels, tooltips, menu options and captions stored in their widget state."""
    found: dict[str, set[str]] = {}
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        texts: set[str] = set()
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                texts |= {m.group(2) for m in _LITERAL.finditer("".join(cell["source"]))}
        state = nb["metadata"].get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
        for model in state.values():
            s = model["state"]
            texts |= {s[k] for k in ("description", "tooltip") if s.get(k)}
            if model["model_name"] == "DropdownModel":
                texts |= set(s.get("_options_labels", []))
            if model["model_name"] == "HTMLModel" and s.get("value", "").startswith(f"<i>{LOOK}</i> "):
                texts.add(html.unescape(s["value"][len(f"<i>{LOOK}</i> ") :]))
        found[path.name] = {t for t in texts if english_words(t)}
    return found


def missing_entries(texts: dict[str, set[str]]) -> list[str]:
    """The texts (with English words) the catalogue has no Chinese for, each with its notebook."""
    return [f"{name}: {t!r}" for name, found in texts.items() for t in sorted(found) if WIDGETS.find(t) is None]


def test_every_label_and_caption_of_the_notebooks_has_an_entry() -> None:
    texts = english_texts()
    assert sum(map(len, texts.values())) > 80, "the notebooks' labels and captions were found"
    missing = missing_entries(texts)
    assert not missing, "i18n/zh/widgets.md lacks (add an entry for each):\n" + "\n".join(missing)


def test_a_missing_entry_fails_naming_it(tmp_path: Path) -> None:
    planted = {"99_new.ipynb": {"a label nobody translated (tokens)", "query position m (tokens)"}}
    assert missing_entries(planted) == ["99_new.ipynb: 'a label nobody translated (tokens)'"]
    with pytest.raises(MissingEntry, match=re.escape("'a label nobody translated (tokens)'")):
        widget_text("a label nobody translated (tokens)", "zh", strict=True)
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    state = nb.metadata["widgets"][WIDGET_STATE]["state"]
    next(m for m in state.values() if m["model_name"] == "DropdownModel")["state"]["description"] = "a new menu"
    with pytest.raises(MissingEntry, match="'a new menu'") as raised:
        localize_widgets(nb, "zh")
    assert "i18n/zh/widgets.md" in str(raised.value)


def test_the_catalogue_keeps_numbers_and_symbols() -> None:
    assert widget_text("pair i (dimensions 2i and 2i+1)", "zh") == "第 i 对（维度 2i 和 2i+1）"
    assert widget_text("+1,024 (a page)", "zh") == "+1,024（翻一页）", "page sizes are numbers: one entry for all"
    assert widget_text("slope μ = −log f (every token)", "zh") == "斜率 μ = −log f（每个 token 相同）"
    assert widget_text("query position m (tokens)", "en") == "query position m (tokens)"
    assert widget_text("已经是中文", "zh", strict=True) == "已经是中文", "Chinese needs no entry"


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


def test_interact_in_a_chinese_notebook_shows_chinese_controls(monkeypatch: pytest.MonkeyPatch) -> None:
    widgets = pytest.importorskip("ipywidgets")
    monkeypatch.setenv("POSLIB_LANG", "zh")
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


def test_interact_in_english_is_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    widgets = pytest.importorskip("ipywidgets")
    monkeypatch.setenv("POSLIB_LANG", "en")
    box, menu, span, caption = _tour_box(widgets)
    assert (menu.description, span.description) == ("family", "distances shown")
    assert list(menu._options_labels) == ["sinusoidal", "RoPE", "T5 buckets", "ALiBi", "KERPLE"]
    reset = next(c for c in box.children if isinstance(c, widgets.Button))
    assert (reset.description, reset.tooltip) == ("reset", "back to the starting values")
    shown = next(c for c in box.children if isinstance(c, widgets.HTML)).value
    assert shown == f"<i>What to look for:</i> {html.escape(caption)}"
    assert span.style.description_width == f"{len('distances shown') + 2}ch"
    assert box._repr_mimebundle_()[0]["text/plain"] == WIDGET_TEXT


# ----------------------------------------------------------------------------- build: the stored Chinese notebooks


@pytest.fixture(scope="module")
def zh_notebooks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zh")
    i18n.build("zh", out, documents=False)
    return out


def _stored_texts(nb) -> list[str]:
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    texts = []
    for model in state.values():
        s = model["state"]
        texts += [s[k] for k in ("description", "tooltip") if s.get(k)]
        texts += list(s.get("_options_labels", [])) if model["model_name"] == "DropdownModel" else []
        texts += [s["value"]] if model["model_name"] == "HTMLModel" and s.get("value") else []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if book.WIDGET_VIEW in output.get("data", {}):
                texts.append("".join(output["data"].get("text/plain", "")))
    return texts


def test_the_chinese_notebooks_store_chinese_controls(zh_notebooks: Path) -> None:
    problems, captions = [], 0
    for path in NOTEBOOKS:
        english = nbformat.read(path, as_version=4)
        zh = nbformat.read(zh_notebooks / path.name, as_version=4)
        texts = _stored_texts(zh)
        captions += sum(t.startswith("<i>观察要点：</i>") for t in texts)
        captions -= sum(t.startswith(f"<i>{LOOK}</i> ") for t in _stored_texts(english))
        problems += [f"{path.name}: {t!r} ({', '.join(english_words(t))})" for t in texts if english_words(t)]
        assert len(texts) == len(_stored_texts(english))
        assert zh.metadata.get("widgets", {}).keys() == english.metadata.get("widgets", {}).keys()
    assert not problems, "English left in the stored widgets of the Chinese notebooks:\n" + "\n".join(problems)
    assert captions == 0, "every stored caption reads 观察要点："


def test_stored_label_widths_follow_the_chinese_labels(zh_notebooks: Path) -> None:
    zh = nbformat.read(zh_notebooks / "11_extending_a_trained_model.ipynb", as_version=4)
    state = zh.metadata["widgets"][WIDGET_STATE]["state"]
    labels = [m["state"]["description"] for m in state.values() if "SliderModel" in m["model_name"]]
    widths = {
        state[m["state"]["style"][len("IPY_MODEL_") :]]["state"]["description_width"]
        for m in state.values()
        if "SliderModel" in m["model_name"]
    }
    assert widths == {f"{label_ch([*labels, '方法'])}ch"}


def test_the_english_notebooks_are_untouched_by_localize() -> None:
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        before = copy.deepcopy(nb)
        localize_widgets(nb, "en")
        assert nb == before


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


def test_a_chinese_page_has_no_english_around_its_figures(zh_notebooks: Path) -> None:
    """The zh page of 07 as the book prepares it without frames: every alt text and widget note is Chinese."""
    nb = nbformat.read(zh_notebooks / "07_alibi.ipynb", as_version=4)
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
