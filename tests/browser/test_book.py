"""The offline HTML book (scripts/build_book.py), read in headless Chromium with the network blocked.

The book is built once into pytest's temporary folder. Every page is opened from disk while a Playwright route
aborts every request that is not a file: URL, so a page that still needs a CDN shows it here. Each page must
have: no raw TeX left in its text once MathJax has typeset it, every <img> loaded and with alt text (as many as
the notebook stores PNG figures) and none wider than the column it sits in, every link to a book page pointing
at a file that exists (and at an anchor that exists), previous/next in course order, a note in place of each
widget, no request to the network and no console error. Served over http as GitHub Pages serves it, a page asks
for nothing the book lacks (MathJax's TeX fonts, a favicon). More tests: figures fit a narrow window too, the dark
mode (a dark page, figures on a dimmed card; screenshots of both modes go to pytest's temporary folder), and the
contents page's counts and size are those of the build it is in.

Run only these: pytest tests/browser/test_book.py
"""

from __future__ import annotations

import contextlib
import functools
import html
import http.server
import importlib.util
import json
import os
import random
import re
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest
from browser_harness import open_command

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("build_book", REPO / "scripts" / "build_book.py")
build_book = importlib.util.module_from_spec(_spec)
sys.modules["build_book"] = build_book  # dataclasses look their module up there
_spec.loader.exec_module(build_book)

SLUGS = build_book.page_slugs()
ZH_SLUGS = [f"zh/{s}" for s in SLUGS]  # the Chinese edition: the same pages in zh/
MATHJAX_MS = 30_000  # typesetting the longest page on the shared 2-core machine takes a few seconds

# Text nodes a reader sees in rendered prose (code and outputs keep their dollars: they are code).
_VISIBLE_TEXT_JS = """() => {
  const skip = 'code, pre, script, style, textarea, .jp-CodeCell .jp-InputArea, .jp-OutputArea-output pre, '
    + '.MathJax_Preview';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const parts = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    if (!el.getClientRects().length) continue;  // not displayed
    parts.push(n.nodeValue);
  }
  return parts.join('');
}"""
# Resolves once MathJax has started and its queue (the page's typesetting) has drained; never hangs.
_WAIT_MATHJAX_JS = """ms => new Promise(resolve => {
  const give_up = setTimeout(() => resolve('MathJax still typesetting after ' + ms + ' ms'), ms);
  const done = what => { clearTimeout(give_up); resolve(what); };
  const poll = () => {
    if (!window.MathJax || !MathJax.Hub) return done('MathJax did not load');
    if (!MathJax.isReady) return setTimeout(poll, 50);
    MathJax.Hub.Queue(() => done('typeset'));
  };
  poll();
})"""
_IMAGES_JS = """() => Array.from(document.images).map((img, i) => ({
  i, loaded: img.complete && img.naturalWidth > 0, alt: (img.getAttribute('alt') || '').trim(),
  src: img.currentSrc.slice(0, 60)}))"""
# Each figure against the boxes it must fit: its own container and the cell (content boxes, in CSS pixels).
_FIGURE_FIT_JS = """() => Array.from(document.images).map((img, i) => {
  const content = el => { const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return {left: r.left + parseFloat(s.paddingLeft) + parseFloat(s.borderLeftWidth),
            right: r.right - parseFloat(s.paddingRight) - parseFloat(s.borderRightWidth)}; };
  const r = img.getBoundingClientRect();
  const boxes = [['container', img.parentElement], ['cell', img.closest('.jp-Cell') || document.body],
                 ['page', document.body]];
  return {i, width: r.width, boxes: boxes.map(([name, el]) => {
    const c = content(el); return {name, width: c.right - c.left, over: r.right - c.right, under: c.left - r.left}; })};
})"""
_LINKS_JS = """() => Array.from(document.querySelectorAll('a[href]')).map(a => ({
  href: a.href, raw: a.getAttribute('href'), nav: !!a.closest('.book-nav'), rel: a.rel || ''}))"""
# $…$, $$…$$, \\(…\\), \\[…\\] or a TeX command left as text.
_RAW_TEX = re.compile(r"\$[^$\n]{1,200}\$|\\\(|\\\[|\\(?:frac|mathrm|mathbb|theta|sum|cdot|left|right|begin)\b")


# The suite builds frames for two quick notebooks at a small budget: sliders, a checkbox, a dropdown whose
# choice changes a slider's range (02), a selection slider, a range that depends on another slider (07), one
# slider at a time, and the one figure that cannot be rebuilt from its parameters (02). The full book
# (every figure, the default budget) is built and read by the same tests in .github/workflows/book.yml, with
# POSLIB_BOOK naming the built folder.
FRAME_NOTEBOOKS = ["02_learned_absolute", "07_alibi"]
FRAME_BUDGET = 12


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory, chromium_path: str) -> Path:
    """The book: $POSLIB_BOOK when set (a full build), else built with frames for FRAME_NOTEBOOKS (time printed)."""
    if os.environ.get("POSLIB_BOOK"):
        return Path(os.environ["POSLIB_BOOK"]).resolve()
    out = tmp_path_factory.mktemp("book") / "book"
    start = time.perf_counter()
    build_book.build(out, frames=FRAME_NOTEBOOKS, budget=FRAME_BUDGET, jobs=2)
    print(f"book built in {time.perf_counter() - start:.1f} s")
    return out


def _live_figures(path: Path) -> list[dict]:
    """The data of every interactive figure on a built page (what frames.js reads)."""
    text = path.read_text(encoding="utf-8")
    blobs = re.findall(r'<script\b[^>]*\bclass="book-live-data"[^>]*>(.*?)</script>', text, re.S)
    return [json.loads(b) for b in blobs]


def _expected_figures(slug: str) -> int:
    path = REPO / "notebooks" / f"{slug.removeprefix('zh/')}.ipynb"
    if not path.is_file():
        return 0
    nb = json.loads(path.read_text())
    return sum("image/png" in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))


def _expected_widgets(slug: str) -> int:
    path = REPO / "notebooks" / f"{slug.removeprefix('zh/')}.ipynb"
    if not path.is_file():
        return 0
    nb = json.loads(path.read_text())
    mime = build_book.WIDGET_VIEW
    return sum(mime in o.get("data", {}) for c in nb["cells"] for o in c.get("outputs", []))


def _open_offline(page, url: str) -> list[str]:
    """Open ``url`` with every non-file request aborted; returns the list the aborted URLs are appended to."""
    blocked: list[str] = []

    def handle(route) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", handle)
    page.goto(url, wait_until="load", timeout=60_000)
    return blocked


# One Chinese page is typeset and checked like the English ones; the others share its formulas (the check holds
# every formula to the English cell's) and get every other check without waiting for MathJax, which is most of a
# page's time on 2 cores.
ZH_TYPESET = "zh/05_rope"


@pytest.mark.parametrize("slug", [*SLUGS, ZH_TYPESET])
def test_page_reads_offline(book: Path, page, slug: str) -> None:
    problems = _page_problems(book, page, slug, typeset=True)
    assert not problems, f"{slug}.html:\n  " + "\n  ".join(problems)


def test_chinese_pages_read_offline(book: Path, page) -> None:
    """Every other page of the Chinese edition: figures, widgets, links, navigation, language switch, Chinese."""
    problems = []
    for slug in ZH_SLUGS:
        if slug != ZH_TYPESET:
            problems += [f"{slug}.html: {p}" for p in _page_problems(book, page, slug, typeset=False)]
    assert not problems, "\n".join(problems)


def _page_problems(book: Path, page, slug: str, *, typeset: bool) -> list[str]:
    path = book / f"{slug}.html"
    if not path.is_file():
        return [f"the build wrote no {path.name}"]
    page.console_errors.clear()
    blocked = _open_offline(page, path.as_uri())
    problems: list[str] = []

    # Math: MathJax (from the book's own folder) has typeset everything; no TeX is left as text.
    if typeset:
        status = page.evaluate(_WAIT_MATHJAX_JS, MATHJAX_MS)
    text = page.evaluate(_VISIBLE_TEXT_JS)
    raw = [m.group(0) for m in _RAW_TEX.finditer(text)] if typeset else []
    if raw:
        problems.append(f"raw TeX visible ({status}): {raw[:5]}")
    if typeset and page.locator(".MathJax_Error, .merror").count():
        problems.append("MathJax reported an error in some formula")

    # Figures: all loaded, all with alt text, none missing.
    images = page.evaluate(_IMAGES_JS)
    problems += [f"image {im['i']} did not load (src {im['src']!r})" for im in images if not im["loaded"]]
    problems += [f"image {im['i']} has no alt text" for im in images if not im["alt"]]
    if len(images) != _expected_figures(slug):
        problems.append(f"{len(images)} images on the page, the notebook stores {_expected_figures(slug)} figures")
    problems += _figures_too_wide(page)

    # Widgets: working controls (frames) or a note where each one was, never the text fallback.
    notes, live = page.locator(".book-widget-note").count(), page.locator(".book-live").count()
    if notes + live != _expected_widgets(slug) or (notes and live):
        problems.append(f"{live} live figures and {notes} notes, the notebook has {_expected_widgets(slug)} widgets")
    if "VBox(children=" in text or "HBox(children=" in text:
        problems.append("raw widget text on the page")

    # Links: every link inside the book resolves to a file, and to the anchor it names.
    links = page.evaluate(_LINKS_JS)
    for link in links:
        url = urllib.parse.urlsplit(link["href"])
        if url.scheme != "file":
            if link["nav"]:
                problems.append(f"navigation link leaves the book: {link['raw']}")
            continue
        target = Path(urllib.parse.unquote(url.path))
        if not target.is_file():
            problems.append(f"link {link['raw']!r} points at a missing file")
        elif url.fragment and target != path:
            anchor = urllib.parse.unquote(url.fragment)
            ids = {html.unescape(i) for i in re.findall(r'id="([^"]*)"', target.read_text(encoding="utf-8"))}
            if anchor not in ids:
                problems.append(f"link {link['raw']!r}: no id {anchor!r} in {target.name}")

    # Previous/next follow the course order, at the top and the bottom of the page; the language switch leads to
    # the same page in the other edition.
    order = ZH_SLUGS if slug.startswith("zh/") else SLUGS
    i = order.index(slug)
    for rel, j in (("prev", i - 1), ("next", i + 1)):
        hrefs = [link["raw"] for link in links if link["nav"] and rel in link["rel"]]
        want = [f"{SLUGS[j]}.html"] * 2 if 0 <= j < len(SLUGS) else []
        if hrefs != want:
            problems.append(f"{rel} links {hrefs}, expected {want}")

    other = f"../{slug[3:]}.html" if slug.startswith("zh/") else f"zh/{slug}.html"
    switches = page.evaluate(
        "() => Array.from(document.querySelectorAll('a.book-lang')).map(a => a.getAttribute('href'))"
    )
    if switches != [other, other]:
        problems.append(f"language switch links {switches}, expected {other} at the top and the bottom")
    chinese = len(re.findall(r"[\u4e00-\u9fff]", text))
    if slug.startswith("zh/") and chinese < 100:
        problems.append(f"a Chinese page with {chinese} Chinese characters")

    if blocked:
        problems.append(f"the page asked the network for {blocked[:3]}")
    # e.g. MathJax's test font MathJax_Blank, src about:blank: a CORS error on every page until the template
    # gave it no src
    if page.console_errors:
        problems.append(f"console errors: {page.console_errors[:3]}")
    return problems


@contextlib.contextmanager
def _served(folder: Path):
    """``folder`` served over http on 127.0.0.1 (a free port), as GitHub Pages serves the book; yields its URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


# Pages whose formulas use \mathbb (notation: \mathcal too): MathJax's NativeMML styles, in the page even with
# HTML-CSS output, gave its hidden MathML's [mathvariant] the TeX fonts (MathJax_AMS-Regular.otf,
# MathJax_Script-Regular.otf), which the book does not ship: a 404 each.
SERVED_PAGES = ["05_rope", "notation", "zh/05_rope"]


def test_served_pages_ask_for_nothing_the_book_lacks(book: Path, page) -> None:
    """Over http (GitHub Pages), once typeset: every request answered (fonts, favicon), no console error."""
    problems: list[str] = []
    failed: list[str] = []
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    page.on("requestfailed", lambda r: failed.append(f"{r.failure} {r.url}"))
    with _served(book) as base:
        for slug in SERVED_PAGES:
            failed.clear()
            page.console_errors.clear()
            page.goto(f"{base}/{slug}.html", wait_until="load", timeout=60_000)
            status = page.evaluate(_WAIT_MATHJAX_JS, MATHJAX_MS)
            if status != "typeset":
                problems.append(f"{slug}: {status}")
            if page.locator('[mathvariant="double-struck"]').count() == 0:
                problems.append(f"{slug}: no double-struck letter, so the page tests no variant font")
            page.wait_for_timeout(500)  # a font is fetched when text first uses it
            problems += [f"{slug}: request failed: {f}" for f in failed]
            problems += [f"{slug}: console error: {e}" for e in page.console_errors]
    assert not problems, "\n".join(problems)


def _figures_too_wide(page) -> list[str]:
    """One line per figure whose rendered box sticks out of its container, its cell or the page (0.5 px slack)."""
    problems = []
    for im in page.evaluate(_FIGURE_FIT_JS):
        for box in im["boxes"]:
            if box["over"] > 0.5 or box["under"] > 0.5:
                problems.append(
                    f"image {im['i']} is {im['width']:.0f} px wide in a {box['width']:.0f} px {box['name']} "
                    f"(sticks out {max(box['over'], box['under']):.0f} px)"
                )
    return problems


@pytest.mark.parametrize("width", [900, 480])
def test_figures_fit_a_narrow_window(book: Path, page, width: int) -> None:
    """07's slope plot was 1106 px in a 1090 px column; in narrower windows every figure must shrink with it."""
    page.set_viewport_size({"width": width, "height": 900})
    _open_offline(page, (book / "07_alibi.html").as_uri())
    assert page.evaluate("() => document.images.length") > 0
    problems = _figures_too_wide(page)
    assert not problems, f"07_alibi.html at {width} px:\n  " + "\n  ".join(problems)


def _luminance(css: str) -> float:
    r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_dark_mode(book: Path, page, screenshots: Path) -> None:
    """With the reader's dark setting the page turns dark and the white figures are dimmed to a soft card."""
    colours = {}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        _open_offline(page, (book / "03_sinusoidal.html").as_uri())
        page.evaluate("() => document.images[0].scrollIntoView()")
        page.screenshot(path=str(screenshots / f"book-03-{scheme}.png"))
        colours[scheme] = page.evaluate(
            """() => ({body: getComputedStyle(document.body).backgroundColor,
                       text: getComputedStyle(document.querySelector('.jp-RenderedMarkdown')).color,
                       card: getComputedStyle(document.images[0]).backgroundColor,
                       filter: getComputedStyle(document.images[0]).filter})"""
        )
    light, dark = colours["light"], colours["dark"]
    assert _luminance(dark["body"]) < 0.25, colours
    assert _luminance(dark["text"]) > 0.6, colours
    # A figure's white, as the reader sees it: the card's colour times the brightness filter.
    brightness = {
        scheme: float(m.group(1)) if (m := re.search(r"brightness\(([\d.]+)\)", c["filter"])) else 1.0
        for scheme, c in colours.items()
    }
    seen_light = _luminance(light["card"]) * brightness["light"]
    seen_dark = _luminance(dark["card"]) * brightness["dark"]
    assert seen_light > 0.95, colours  # light mode: figures exactly as drawn
    assert 0.7 < seen_dark < 0.9, (seen_dark, colours)  # dark mode: dimmed, still a light card for dark ink


def test_contents_page_counts_what_the_build_holds(book: Path) -> None:
    """The contents page's numbers are the build's: notebooks, pages, figures, MiB; its open command is the README's."""
    text = re.sub(r"<[^>]+>", " ", (book / "index.html").read_text(encoding="utf-8"))
    text = html.unescape(re.sub(r"\s+", " ", text))
    notebooks = build_book.course_notebooks()
    words = f"{build_book._count_words(len(notebooks))} notebooks ({notebooks[0].name[:2]}–{notebooks[-1].name[:2]})"
    assert words in text, words
    figures = sum(_expected_figures(p.stem) for p in notebooks)
    total, mathjax = build_book.folder_bytes(book), build_book.folder_bytes(book / build_book.MATHJAX_DIR)
    live = sum(len(_live_figures(book / f"{s}.html")) for s in SLUGS if (book / f"{s}.html").is_file())
    frames = len(list((book / build_book.FRAMES_DIR).iterdir())) if (book / build_book.FRAMES_DIR).is_dir() else 0
    editions = 2 if (book / "zh").is_dir() else 1
    stated = build_book.BookSize(len(SLUGS), figures, total, mathjax, live, frames, editions).sentence()
    assert stated in text, (stated, re.findall(r"This build:[^.]*\.[^.]*\.", text))
    readme_open = " ".join(open_command((REPO / "README.md").read_text(encoding="utf-8")))
    assert readme_open == build_book.OPEN_COMMAND, (readme_open, "the book's open command is not the README's")
    assert build_book.OPEN_COMMAND in text


def _pages_with_frames(book: Path, slugs: list[str] = SLUGS) -> list[str]:
    return [s for s in slugs if (book / f"{s}.html").is_file() and _live_figures(book / f"{s}.html")]


def _frame_problems(book: Path) -> tuple[int, list[str], list[str]]:
    """Draw a sample of every figure's frames again; returns (frames checked, plots not rebuildable, problems)."""
    import importlib

    from poslib.viz._book_hook import book_recorder

    F = book_recorder()  # scripts/book/book_frames.py

    rng = random.Random(0)
    checked, not_rebuildable, problems = 0, [], []
    for slug in _pages_with_frames(book):
        for k, data in enumerate(_live_figures(book / f"{slug}.html")):
            if not data["rebuildable"]:
                not_rebuildable.append(data["plot"])
                continue
            module, _, name = data["plot"].rpartition(".")
            plot = getattr(importlib.import_module(module), name)(
                **{p: F.decode_value(v) for p, v in data["params"].items()}
            )
            keys = list(data["frames"])
            sample = {data["start"], keys[0], keys[-1], *rng.sample(keys, min(3, len(keys)))}
            try:
                for key in sorted(sample):
                    file_index, _, values = data["frames"][key]
                    names = [c["name"] for c in data["controls"]]
                    png, _ = F.render_frame(plot, dict(zip(names, map(F.decode_value, values), strict=True)))
                    if png != (book / build_book.FRAMES_DIR / data["files"][file_index]).read_bytes():
                        problems.append(f"{slug} figure {k + 1}, frame {key}: the file is not what the code draws")
                    checked += 1
            finally:
                plot.close()
    return checked, not_rebuildable, problems


def test_frames_are_what_the_code_draws(book: Path) -> None:
    """A sample of every figure's frames, drawn again by a fresh LivePlot, is byte for byte the book's file.

    Per figure: the start, the first and the last frame and three more picked by a seeded draw. A figure whose
    plot holds data the notebook made (02's trained toy table) cannot be rebuilt from its parameters; the only
    such figure allowed is that one, and its frames are drawn by the notebook's own object at build time.
    """
    assert _pages_with_frames(book), "the build has no interactive figures with frames"
    checked, not_rebuildable, problems = _frame_problems(book)
    print(f"{checked} frames drawn again; not rebuildable: {not_rebuildable}")
    assert set(not_rebuildable) <= {"poslib.viz.learned.SimilarityRowPlot"}, not_rebuildable
    assert checked and not problems, "\n".join(problems)


_LIVE_STATE_JS = """root => {
  const data = JSON.parse(root.querySelector('script.book-live-data').textContent);
  const key = root.getAttribute('data-key');
  const rows = Array.from(root.querySelectorAll('.book-control'));
  return {key, src: root.querySelector('img.book-live-frame').getAttribute('src'),
          alt: root.querySelector('img.book-live-frame').getAttribute('alt'),
          values: rows.map(r => {
            const out = r.querySelector('.book-value'); const inp = r.querySelector('.book-input');
            return out ? out.textContent : (inp.type === 'checkbox' ? (inp.checked ? 'on' : 'off')
                                            : inp.options[inp.selectedIndex].text); }),
          ranges: rows.map(r => { const inp = r.querySelector('.book-input');
            return inp.type === 'range' ? {max: Number(inp.max), value: Number(inp.value),
              aria: inp.getAttribute('aria-valuetext'), text: r.querySelector('.book-range').textContent,
              ticks: inp.list ? inp.list.options.length : 0} : null; }),
          full: (root.querySelector('a.book-full') || {}).getAttribute ?
            root.querySelector('a.book-full').getAttribute('href') : null,
          frame: data.frames[key], files: data.files, start: data.start, controls: data.controls,
          contexts: data.contexts, joint: data.joint || []};
}"""


def _context(state: dict, key: str) -> dict:
    """The sliders' sampled values for the menu choice in ``key``."""
    menus = [i for i, c in enumerate(state["controls"]) if c["kind"] in ("dropdown", "checkbox")]
    return state["contexts"][",".join(key.split(",")[i] for i in menus)]


def _check_state(state: dict, where: str) -> list[str]:
    """The shown frame, readouts, slider ranges, aria text and alt text are those of the state's key."""
    problems = []
    if state["frame"] is None:
        return [f"{where}: no frame for key {state['key']}"]
    root = "../" if state["src"].startswith("../") else ""
    want_src = f"{root}{build_book.FRAMES_DIR}/{state['files'][state['frame'][0]]}"
    if state["src"] != want_src:
        problems.append(f"{where}: shows {state['src']}, the frame of {state['key']} is {want_src}")
    if state["values"] != state["frame"][1]:
        problems.append(f"{where}: readouts {state['values']}, the frame was drawn at {state['frame'][1]}")
    sliders = _context(state, state["key"])
    for control, box, shown in zip(state["controls"], state["ranges"], state["frame"][1], strict=True):
        if box is None:
            continue
        labels = sliders[control["name"]]["labels"]
        if box["max"] != len(labels) - 1:
            problems.append(f"{where}: {control['name']} goes to {box['max']}, it has {len(labels)} values")
        if box["ticks"] != len(labels):
            problems.append(f"{where}: {control['name']} has {box['ticks']} tick marks for {len(labels)} values")
        if box["aria"] != shown:
            problems.append(f"{where}: {control['name']} tells a screen reader {box['aria']!r}, it shows {shown!r}")
        if not (box["text"].startswith(labels[0]) and labels[-1] in box["text"]):
            problems.append(f"{where}: {control['name']}'s range reads {box['text']!r}, not {labels[0]} … {labels[-1]}")
    if state["full"] != state["src"]:
        problems.append(f"{where}: 'open at full size' goes to {state['full']}, the frame shown is {state['src']}")
    if not all(v in state["alt"] for v in state["frame"][1]):
        problems.append(f"{where}: the alt text {state['alt'][-80:]!r} does not name the values shown")
    return problems


def _after_menu_move(before: dict, after: dict, j: int) -> list[str]:
    """After menu j moved: each slider keeps the sampled value nearest to the one it showed (or, where that
    combination was not drawn, every slider is back at its start)."""
    old, new = before["key"].split(","), after["key"].split(",")
    ctx_old, ctx_new = _context(before, before["key"]), _context(after, after["key"])
    want = list(new)
    for i, c in enumerate(before["controls"]):
        if c["kind"] in ("dropdown", "checkbox"):
            continue
        numbers_old, numbers_new = ctx_old[c["name"]]["numbers"], ctx_new[c["name"]]["numbers"]
        if c["kind"] == "selection":
            want[i] = str(min(int(old[i]), len(numbers_new) - 1))
        else:
            x = numbers_old[int(old[i])]
            want[i] = str(min(range(len(numbers_new)), key=lambda k: (abs(numbers_new[k] - x), k)))
    if new != want:
        starts = [
            str(ctx_new[c["name"]]["start"]) if c["kind"] not in ("dropdown", "checkbox") else new[i]
            for i, c in enumerate(after["controls"])
        ]
        if new != starts:
            return [f"menu {j + 1}: sliders went from {before['key']} to {after['key']}, expected {','.join(want)}"]
    return []


def _control_problems(book: Path, page, slugs: list[str] = SLUGS) -> tuple[int, list[str]]:
    """Move every control of every figure with the keyboard, then reset; returns (moves, problems)."""
    problems: list[str] = []
    moves = 0
    for slug in _pages_with_frames(book, slugs):
        blocked = _open_offline(page, (book / f"{slug}.html").as_uri())
        roots = page.locator(".book-live")
        for k in range(roots.count()):
            root = roots.nth(k)
            where = f"{slug} figure {k + 1}"
            state = root.evaluate(_LIVE_STATE_JS)
            problems += _check_state(state, f"{where}, on opening")
            if state["key"] != state["start"]:
                problems.append(f"{where}: opens at {state['key']}, the notebook starts at {state['start']}")
            controls = root.locator(".book-control")
            # sliders before menus (reversed page order here), so a menu moves while a slider is off its start
            # and the nearest-value rule is put to work
            for j in reversed(range(controls.count())):
                control = controls.nth(j).locator(".book-input")
                kind = control.evaluate("e => e.tagName === 'SELECT' ? 'select' : e.type")
                control.focus()
                before = root.evaluate(_LIVE_STATE_JS)
                # a range input at its last value moves back; a select at its last option moves up
                at_end = control.evaluate(
                    "e => e.type === 'range' ? e.value === e.max : "
                    "e.tagName === 'SELECT' && e.selectedIndex === e.options.length - 1"
                )
                key = {"range": "ArrowLeft" if at_end else "ArrowRight", "select": "ArrowUp" if at_end else "ArrowDown",
                       "checkbox": "Space"}[kind]  # fmt: skip
                page.keyboard.press(key)
                after = root.evaluate(_LIVE_STATE_JS)
                moves += 1
                problems += _check_state(after, f"{where}, control {j + 1} ({kind}, {key})")
                if after["key"].split(",")[j] == before["key"].split(",")[j]:
                    problems.append(f"{where}: {key} on control {j + 1} did not change its value ({before['key']})")
                if kind in ("select", "checkbox"):
                    problems += [f"{where}: {p}" for p in _after_menu_move(before, after, j)]
                if kind == "range":  # a slider drawn jointly with others keeps them where they were
                    name = before["controls"][j]["name"]
                    names = [c["name"] for c in before["controls"]]
                    for group in before["joint"]:
                        for other in group if name in group else []:
                            i = names.index(other)
                            if other != name and after["key"].split(",")[i] != before["key"].split(",")[i]:
                                problems.append(f"{where}: moving {name} moved {other}, drawn jointly with it")
                if kind == "range":  # both ends of the track, ending at the far one (off the start)
                    for end, want in (("Home", 0), ("End", "max")):
                        page.keyboard.press(end)
                        state = root.evaluate(_LIVE_STATE_JS)
                        moves += 1
                        problems += _check_state(state, f"{where}, control {j + 1} ({end})")
                        box = state["ranges"][j]
                        if box["value"] != (box["max"] if want == "max" else 0):
                            problems.append(f"{where}: {end} left control {j + 1} at {box['value']}")
            root.locator(".book-reset").click()
            state = root.evaluate(_LIVE_STATE_JS)
            problems += _check_state(state, f"{where}, after reset")
            if state["key"] != state["start"]:
                problems.append(f"{where}: reset went to {state['key']}, not the start {state['start']}")
        if blocked:
            problems.append(f"{slug}: the page asked the network for {blocked[:3]}")
    return moves, problems


def test_controls_move_the_frames_offline(book: Path, page) -> None:
    """On every page with frames: each control, moved with the keyboard, shows the right frame and value; reset
    goes back to the start; nothing is asked of the network."""
    # every page of the English edition, and the first Chinese page with frames (the same script and data)
    zh = _pages_with_frames(book, ZH_SLUGS)[:1]
    moves, problems = _control_problems(book, page, SLUGS + zh)
    print(f"{moves} keyboard moves checked")
    assert moves, "no control was moved"
    assert not problems, "\n".join(problems)


def test_frame_grids_hold_the_sampling_rules(book: Path) -> None:
    """No long slider jumps more than a tenth of its track per key press (06's pair index, 05's 0 … 4096 had six
    values); a track with fewer steps has every value; sliders drawn jointly have every combination."""
    from itertools import pairwise, product

    problems, checked, joint = [], 0, 0
    for slug in _pages_with_frames(book):
        for k, data in enumerate(_live_figures(book / f"{slug}.html")):
            where = f"{slug} figure {k + 1}"
            for context, sliders in data["contexts"].items():
                for name, slider in sliders.items():
                    positions, steps = slider["positions"], slider["steps"]
                    gap = max((b - a for a, b in pairwise(positions)), default=0.0)
                    allowed = max(0.1, 1 / steps) if steps else 1.0  # a short track: every one of its positions
                    checked += 1
                    if gap > allowed + 1e-6:
                        jump = f"{len(positions)} values over {steps} steps, a jump of {gap:.3f}"
                        problems.append(f"{where} [{context}] {name}: {jump}")
            names = [c["name"] for c in data["controls"]]
            menus = [i for i, c in enumerate(data["controls"]) if c["kind"] in ("dropdown", "checkbox")]
            start = data["start"].split(",")
            for group in data.get("joint", []):
                joint += 1
                for context, sliders in data["contexts"].items():
                    for picks in product(*[range(len(sliders[g]["labels"])) for g in group]):
                        key = list(start)
                        for i, ctx in zip(menus, context.split(",") if context else [], strict=True):
                            key[i] = ctx
                        for name in names:
                            if name in sliders and name not in group:
                                key[names.index(name)] = str(sliders[name]["start"])
                        for g, pick in zip(group, picks, strict=True):
                            key[names.index(g)] = str(pick)
                        if ",".join(key) not in data["frames"]:
                            problems.append(f"{where} [{context}]: no frame for {dict(zip(group, picks, strict=True))}")
    print(f"{checked} slider tracks checked, {joint} joint groups")
    assert checked and not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("width", [390])
def test_a_figure_opens_at_full_size_on_a_phone(book: Path, page, width: int) -> None:
    """On a 390 px phone a 941 px figure shrinks to about 40 %, its 9 pt text to about 5 px: each interactive
    figure has a visible link to its frame's own file, which opens at full size."""
    slug = _pages_with_frames(book)[0]
    page.set_viewport_size({"width": width, "height": 844})
    _open_offline(page, (book / f"{slug}.html").as_uri())
    links = page.locator(".book-live a.book-full")
    assert links.count() == page.locator(".book-live").count() > 0
    for i in range(links.count()):
        link = links.nth(i)
        assert link.is_visible(), f"{slug}: figure {i + 1} has no visible full-size link at {width} px"
        href = link.get_attribute("href")
        target = (book / slug).parent / href
        assert target.is_file() and href.endswith(".png"), href
    page.set_viewport_size({"width": 1400, "height": 900})
    assert not links.first.is_visible(), "the link is for narrow screens; a wide one shows the figure at full size"


@pytest.mark.parametrize("width", [390])
def test_a_static_figure_opens_at_full_size_on_a_phone(book: Path, page, width: int) -> None:
    """The figures without controls too: each has a link, visible on a phone only, that opens its picture in a tab
    of its own at its full pixel width (a data: URL turned into a blob: browsers refuse to open data: as a page)."""
    _open_offline(page, (book / "00_tour.html").as_uri())
    page.set_viewport_size({"width": width, "height": 844})
    images = page.locator('img[src^="data:image/png"]')
    links = page.locator("a.book-full-static")
    assert links.count() == images.count() > 0
    link = links.first
    assert link.is_visible(), f"no visible full-size link at {width} px"
    with page.context.expect_page() as opened:
        link.click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab.url.startswith("blob:"), tab.url
    natural = tab.evaluate("() => document.images[0] && document.images[0].naturalWidth")
    assert natural and natural > width, natural
    tab.close()
    page.set_viewport_size({"width": 1400, "height": 900})
    assert not link.is_visible(), "the link is for narrow screens; a wide one shows the figure at full size"


def test_frame_checks_catch_planted_bugs(book: Path, page, tmp_path: Path) -> None:
    """The two checks above fail on a copy of the book with a bug planted: a frame file swapped for another
    (a stale or mislabelled frame), and frames.js showing the next file instead of the frame's own."""
    import shutil

    copy = tmp_path / "book"
    shutil.copytree(book, copy, ignore=shutil.ignore_patterns(build_book.MATHJAX_DIR))
    (copy / build_book.MATHJAX_DIR).symlink_to(book / build_book.MATHJAX_DIR)
    slug, data = next(  # a figure the exactness check can redraw (02's holds the notebook's data)
        (s, d) for s in _pages_with_frames(copy) for d in _live_figures(copy / f"{s}.html") if d["rebuildable"]
    )
    start_file = copy / build_book.FRAMES_DIR / data["files"][data["frames"][data["start"]][0]]
    other = next(f for f in data["files"] if (copy / build_book.FRAMES_DIR / f) != start_file)
    start_file.write_bytes((copy / build_book.FRAMES_DIR / other).read_bytes())
    _, _, problems = _frame_problems(copy)
    assert any("not what the code draws" in p for p in problems), problems

    script = copy / build_book.FRAMES_SCRIPT.name
    text = script.read_text(encoding="utf-8")
    wrong = text.replace("data.files[frame[0]]", "data.files[(frame[0] + 1) % data.files.length]")
    assert wrong != text, "the planted bug no longer matches frames.js"
    script.write_text(wrong, encoding="utf-8")
    _, problems = _control_problems(copy, page, [slug])
    assert any("the frame of" in p for p in problems), problems
