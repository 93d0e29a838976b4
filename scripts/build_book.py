"""Build the course as a static HTML book that reads offline: python scripts/build_book.py [--out build/book]

The book is made from the notebooks as stored, with their outputs (nothing is executed), by nbconvert with the
template in scripts/book/. Pages, in course order: contents (index.html), every notebook of notebooks/ (NN_*.ipynb),
the glossary and the notation table (docs/glossary.md, docs/notation.md). Every page has previous/next links and
links to the contents, glossary and notation. The contents page states the counts and the size of the build it
belongs to, computed while building (nothing in it is typed by hand).

Nothing loads from the network: MathJax 2.7 is copied from jupyter-server-mathjax (pinned in requirements.txt)
into the book's mathjax/ folder; require.js, the widget manager and mermaid, which nbconvert would take from a CDN,
are left out. Live widgets cannot run without a kernel, so each widget output becomes a note that names its
controls; the static figure the notebook stores beside it stays. Every PNG gets alt text made from its cell's
context (the section heading and the sentence that introduces it). The pages follow the reader's light or dark
setting (prefers-color-scheme); figures sit on a light card, dimmed in dark mode, never wider than their column.

Known limit: Chromium refuses web fonts to pages opened from file: (a CORS rule), so there MathJax lays the math
out with the reader's installed fonts instead of its STIX web fonts (Firefox, or any page served over http,
uses STIX). Every formula is still typeset; blackboard-bold and similar alphabets then look plainer.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import copy
import html
import json
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbconvert import HTMLExporter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # poslib, when run as a script
from poslib.language import translate
from poslib.viz._book_hook import FRAMES_ENV, book_recorder

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
DOCS = ROOT / "docs"
TEMPLATES = ROOT / "scripts" / "book"
TEMPLATE_NAME = "poslib_book"

# The book's own words around figures, and the figures' labels, come from poslib's widgets catalogue
# (poslib/locale/<lang>/LC_MESSAGES/widgets.po; scripts/catalogues.py extracts the templates written here, the
# first argument of widget_text and of N_). Punctuation between the pieces the code joins, per language:
_PUNCTUATION = {
    "en": {"list": ", ", "groups": "; ", "stop": ".", "colon": ": ", "space": " ", "open": " (", "close": ")"},
    "zh": {"list": "、", "groups": "；", "stop": "。", "colon": "：", "space": "", "open": "（", "close": "）"},
}
# Latin words a Chinese label or caption keeps: method, model and data names, notation and code names.
KEPT = frozenset(
    """
    RoPE ALiBi KERPLE NTK YaRN Llama-3 PI ReRoPE Leaky Self-Extend DCA Dual Chunk Attention PaTH Qwen2-VL Qwen3-VL
    all-MiniLM-L6-v2 PE T5 softmax log token JupyterLab leak
    """.split()
)
# code and notation: identifiers with an underscore (num_buckets, μ_p), file paths, HTML tags, fields in braces
_CODEISH = re.compile(r"<[^<>]*>|\{[a-z_]+\}|[\w.-]*_[\w.]*|[\w./-]+\.ipynb|\bnotebooks/[\w./-]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")


class MissingEntry(KeyError):
    """An English text the widgets catalogue has no translation for (its message names the text)."""

    def __str__(self) -> str:
        return str(self.args[0])


def N_(template: str) -> str:
    """Marks a template of the widgets catalogue that is looked up where it is used."""
    return template


def english_words(text: str) -> list[str]:
    """The English words left in ``text``: Latin words of two letters or more that are not kept names (:data:`KEPT`),
    outside code names, tags and fields. One letter is a symbol (m, n, L, G)."""
    plain = _CODEISH.sub(" ", html.unescape(text))
    return [w for w in _WORD.findall(plain) if len(w) > 1 and w not in KEPT]


def widget_text(english: str, lang: str = "en", *, strict: bool = False, **fields: Any) -> str:
    """``english`` (a template of the widgets catalogue, or a notebook's label) in ``lang``, its ``fields`` filled.

    ``strict``: a text with English words that the catalogue lacks raises :class:`MissingEntry`, naming it."""
    found = translate("widgets", english, lang) if english else english
    if strict and lang != "en" and found == english and english_words(english.format(**fields) if fields else english):
        raise MissingEntry(f"poslib/locale/{lang}/LC_MESSAGES/widgets.po has no entry for {english!r}")
    return found.format(**fields) if fields else found


# the readouts scripts/book/book_frames.py writes for a checkbox, translated with the manifest's labels
CHECKBOX_STATES = (N_("off"), N_("on"))


def punctuation(lang: str = "en") -> dict[str, str]:
    """The punctuation the code puts between translated pieces: list and group separators, full stop, colon, …"""
    return _PUNCTUATION[lang]


DEFAULT_OUT = ROOT / "build" / "book"
FRAMES_DIR = "frames"  # the interactive figures' frames, one file per distinct picture, named by its hash
FRAMES_SCRIPT = TEMPLATES / "frames.js"  # swaps them when a control moves; copied beside the pages
# How the contents page tells a reader to run the notebooks: the README's open command (tests/browser/test_book.py
# holds them equal). Run in the repository's folder, it makes that folder JupyterLab's root, so the notebooks'
# links to ../docs/ resolve; `jupyter lab notebooks/…` alone would make notebooks/ the root.
OPEN_COMMAND = "jupyter lab --notebook-dir=. notebooks/00_tour.ipynb"

# MathJax's entry point inside the book and the combined configuration it loads (TeX input, HTML-CSS output)
# plus Safe (no javascript: links or styles from the TeX). Both config files must be in the copied folder.
MATHJAX_DIR = "mathjax"
MATHJAX_CONFIGS = ("TeX-AMS-MML_HTMLorMML-full", "Safe")
MATHJAX_URL = f"{MATHJAX_DIR}/MathJax.js?config={','.join(MATHJAX_CONFIGS)}"

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
# Widget models whose `description` is something a reader would move or tick.
_CONTROL_MODEL = re.compile(r"(Slider|Dropdown|Checkbox|ToggleButton|RadioButtons|Select|Text|Button|Play)\w*Model$")
_NOTEBOOK_LINK = re.compile(r'href="(?:\.\./notebooks/|notebooks/)?(\d\d_\w+)\.ipynb(#[^"]*)?"')
_DOC_LINK = re.compile(r'href="(?:\.\./)?(?:docs/)?(glossary|notation)\.md(#[^"]*)?"')
_PNG_IMG = re.compile(r'<img\b[^>]*\bsrc="data:image/png')  # nbconvert may reorder the attributes
_HEADING = re.compile(r'<h2 id="([^"]+)"[^>]*>(.*?)(?:<a class="anchor-link".*?)?</h2>', re.S)


@dataclass
class Page:
    """One page of the book: its output file name, its title, and the notebook it is made from."""

    slug: str
    title: str
    nb: Any  # nbformat.NotebookNode
    source: str  # repository path of what it is made from, shown in widget notes

    @property
    def href(self) -> str:
        return f"{self.slug}.html"


# ----------------------------------------------------------------------------- pages


def _markdown_page(slug: str, path: Path, text: str | None = None) -> Page:
    """A markdown file (or ``text`` made from it) as a one-cell notebook: same template, navigation and MathJax."""
    text = path.read_text(encoding="utf-8") if text is None else text
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), slug)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    return Page(slug, title, nb, str(path.relative_to(ROOT)))


def _notebook_title(nb: Any, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def course_notebooks(folder: Path = NOTEBOOKS) -> list[Path]:
    """The course's notebooks in reading order (their names start with the two-digit number)."""
    return sorted(folder.glob("[0-9][0-9]_*.ipynb"))


def page_slugs(notebooks: list[Path] | None = None) -> list[str]:
    """The book's pages in course order, as file stems: contents, the notebooks, glossary, notation."""
    stems = [p.stem for p in (course_notebooks() if notebooks is None else notebooks)]
    return ["index", *stems, "glossary", "notation"]


# ----------------------------------------------------------------------------- widgets and figures


def _widget_controls(state: dict[str, Any], model_id: str) -> list[str]:
    """Descriptions of the controls inside one widget view, in display order (depth-first through children)."""
    found: list[str] = []
    seen: set[str] = set()

    def walk(mid: str) -> None:
        if mid in seen or mid not in state:
            return
        seen.add(mid)
        model = state[mid]
        st = model.get("state", {})
        desc = str(st.get("description", "")).strip()
        if desc and _CONTROL_MODEL.search(model.get("model_name", "")):
            found.append(desc)
        for child in st.get("children", []):
            if isinstance(child, str) and child.startswith("IPY_MODEL_"):
                walk(child[len("IPY_MODEL_") :])

    walk(model_id)
    return found


def _widget_note(controls: list[str], figure_above: bool, source: str, lang: str = "en") -> str:
    """The note in place of a widget without frames: its controls, where its picture is, how to move them.

    The Chinese page's note is the widgets catalogue's, its controls' labels too."""
    p = punctuation(lang)
    listed = p["list"].join(html.escape(widget_text(c, lang, strict=True)) for c in controls)
    what = widget_text("Interactive cell ({controls})", lang, strict=True, controls=listed) if controls else ""
    what = what or widget_text("Interactive cell", lang, strict=True)
    if figure_above:
        shown = widget_text("The figure just above is its static picture at the default setting.", lang, strict=True)
    else:
        shown = widget_text("Its output appears only when the notebook runs.", lang, strict=True)
    code = f"<code>{html.escape(source)}</code>"
    run = widget_text(
        "The controls need a running kernel: open {source} in JupyterLab and run it to move them.",
        lang,
        strict=True,
        source=code,
    )
    return (
        f'<div class="book-widget-note" role="note"><strong>{what}{p["stop"]}</strong>{p["space"]}{shown}'
        f"{p['space']}{run}</div>"
    )


def _figure_alt(heading: str, lead: str, lang: str = "en", index: int = 0, total: int = 1) -> str:
    """A figure's alt text: the section it belongs to, which figure of the cell, the sentence that introduces it."""
    p = punctuation(lang)
    alt = widget_text("Figure for “{heading}”", lang, strict=True, heading=heading)
    if total > 1:
        alt += p["space"] + widget_text("(figure {index} of {total})", lang, strict=True, index=index, total=total)
    return alt + (f"{p['colon']}{lead}" if lead else "")


# TeX commands a screen reader should hear as the symbol they draw (the rest lose only their backslash).
_TEX_WORDS = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "Delta": "Δ",
    "zeta": "ζ",
    "theta": "θ",
    "Theta": "Θ",
    "lambda": "λ",
    "mu": "μ",
    "pi": "π",
    "Pi": "Π",
    "sigma": "σ",
    "omega": "ω",
    "sum": "Σ",
    "approx": "≈",
    "times": "×",
    "cdot": "·",
    "dots": "…",
    "ldots": "…",
    "le": "≤",
    "ge": "≥",
    "in": "∈",
    "to": "→",
    "infty": "∞",
    "top": "ᵀ",
    "max": "max",
    "ln": "ln",
    "log": "log",
    "cos": "cos",
    "sin": "sin",
    "quad": " ",
}


def _speakable_tex(tex: str) -> str:
    """Inline TeX as readable text: R_{\\Theta,m} → R_{Θ,m}; \\text{x}, \\mathrm{x} → x; spacing commands dropped."""
    tex = re.sub(r"\\(?:text|mathrm|mathbf|mathcal|operatorname|mathbb)\s*\{([^{}]*)\}", r"\1", tex)
    tex = re.sub(r"\\([A-Za-z]+)", lambda m: _TEX_WORDS.get(m.group(1), m.group(1)), tex)
    return re.sub(r"\\[,;:! ]", " ", tex)


def _plain(markdown: str) -> str:
    """Markdown as one line of plain text for alt attributes: no emphasis marks, links or code ticks; TeX spoken."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"\$\$?([^$]+)\$\$?", lambda m: _speakable_tex(m.group(1)), text)
    text = re.sub(r"(?<![\w}])_|_(?![\w{])|[*`#>]", "", text)  # emphasis underscores, not subscripts
    return re.sub(r"\s+", " ", text).strip()


# Where a sentence ends: English at ". " (and ":", "!", "?" before a space), Chinese at 。！？ (and "：").
_SENTENCE = {"en": re.compile(r".+?(?:[.:!?](?=\s|$)|$)"), "zh": re.compile(r".+?(?:[。！？：]|[.:!?](?=\s|$)|$)")}
_LEAD_MIN = {"en": 60, "zh": 30}  # characters: a Chinese sentence says in 30 what an English one says in 60


def _lead_sentence(markdown: str, lang: str = "en") -> str:
    """The last paragraph's opening sentences (at least 60 characters when there are that many, 30 in Chinese), at
    most 220."""
    paragraphs = [p for p in re.split(r"\n\s*\n", markdown) if p.strip() and not p.lstrip().startswith("#")]
    if not paragraphs:
        return ""
    lead = ""
    for sentence in _SENTENCE[lang].findall(_plain(paragraphs[-1])):
        sentence = sentence.strip()
        lead = f"{lead}{' ' if lead and lang == 'en' else ''}{sentence}" if sentence else lead
        if len(lead) >= _LEAD_MIN[lang]:
            break
    if len(lead) <= 220:
        return lead
    return (lead[:219].rsplit(" ", 1)[0] if lang == "en" else lead[:219]) + "…"


def prepare(page: Page, frames: list[FrameSet] | None = None, lang: str = "en") -> Any:
    """A copy of the page's notebook ready for nbconvert: widget outputs become notes, every PNG gets alt text.

    With ``frames`` (one per widget output, in order, from :func:`record_frames`), each widget output and the
    static picture saved with it become a :func:`live_figure` instead: the same controls, swapping frames.
    """
    nb = copy.deepcopy(page.nb)
    widget_index = 0
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    nb.metadata.pop("widgets", None)  # the template would otherwise load the widget manager from a CDN
    nb.metadata["title"] = page.title
    heading, lead = page.title, ""
    previous_had_figure = False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    heading = _plain(line)
            lead = _lead_sentence(cell.source, lang) or lead
            continue
        if cell.cell_type != "code":
            continue
        pngs = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        outputs = []
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                meta = out.setdefault("metadata", {}).setdefault("image/png", {})
                if not meta.get("alt"):  # a notebook may give its own; keep it
                    meta["alt"] = _figure_alt(heading, lead, lang, pngs.index(out) + 1, len(pngs))
            if WIDGET_VIEW in data and frames is not None:
                reset = {"reset", widget_text("reset", lang)}
                controls = [
                    widget_text(c, lang)
                    for c in _widget_controls(state, data[WIDGET_VIEW].get("model_id", ""))
                    if c not in reset
                ]
                if widget_index >= len(frames):
                    raise ValueError(f"{page.source}: more widget outputs than figures recorded; rerun the notebook")
                frame_set = frames[widget_index]
                widget_index += 1
                manifest = localized_manifest(frame_set.manifest, lang)
                recorded = [c["label"] for c in manifest["controls"]]
                if controls != recorded:
                    raise ValueError(
                        f"{page.source}: widget {widget_index} stores controls {controls}, the code draws {recorded}: "
                        "the stored notebook is stale (python scripts/run_notebooks.py)"
                    )
                width = out.get("metadata", {}).get("image/png", {}).get("width")
                alt = _figure_alt(heading, lead, lang)
                html_block = live_figure(manifest, alt, width, f"live-{widget_index}", lang)
                outputs.append(nbformat.v4.new_output("display_data", data={"text/html": html_block}))
                continue
            if WIDGET_VIEW in data:
                if "image/png" in data:  # poslib.viz.interact saves a picture of its figure beside the widget
                    picture = {"image/png": data["image/png"]}
                    outputs.append(nbformat.v4.new_output("display_data", data=picture, metadata=out["metadata"]))
                controls = _widget_controls(state, data[WIDGET_VIEW].get("model_id", ""))
                note = _widget_note(controls, previous_had_figure or bool(pngs), page.source, lang)
                outputs.append(nbformat.v4.new_output("display_data", data={"text/html": note}))
                continue
            outputs.append(out)
        cell.outputs = outputs
        previous_had_figure = bool(pngs)
    if frames is not None and widget_index != len(frames):
        raise ValueError(f"{page.source}: {len(frames)} figures recorded, {widget_index} widget outputs stored")
    return nb


# ----------------------------------------------------------------------------- frames (sliders without a kernel)


@dataclass
class FrameSet:
    """One interactive figure's frames, as the notebook's kernel recorded them (book_frames.record_frames)."""

    folder: Path
    manifest: dict[str, Any]


def record_frames(path: Path, folder: Path, budget: int | None = None, timeout: int = 900) -> list[FrameSet]:
    """Run a notebook top to bottom with :data:`~poslib.viz._book_hook.FRAMES_ENV` set; returns its figures' frames.

    Every ``interact`` the notebook calls then draws its LivePlot at the grid of scripts/book/book_frames.py into
    ``folder``; nothing is written to the notebook.
    """
    from nbclient import NotebookClient

    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, FRAMES_ENV: str(folder), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    recorder = str(Path(book_recorder().__file__).parent)  # scripts/book/: the kernel imports book_frames from it
    env["PYTHONPATH"] = os.pathsep.join(p for p in (recorder, env.get("PYTHONPATH", "")) if p)
    if budget is not None:
        env["POSLIB_BOOK_BUDGET"] = str(budget)
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(env=env)
    return [
        FrameSet(d, json.loads((d / "manifest.json").read_text(encoding="utf-8")))
        for d in sorted(folder.glob("figure-*"))
    ]


def has_interactive_figures(nb: Any) -> bool:
    """Whether a stored notebook has a widget output (an ``interact`` figure)."""
    return any(WIDGET_VIEW in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def _record_one(args: tuple[Path, Path, int | None]) -> tuple[str, list[FrameSet], float]:
    path, folder, budget = args
    start = time.perf_counter()
    return path.stem, record_frames(path, folder, budget), time.perf_counter() - start


def record_all_frames(
    paths: list[Path], folder: Path, budget: int | None = None, jobs: int = 1
) -> dict[str, list[FrameSet]]:
    """:func:`record_frames` for each notebook (``jobs`` at a time), with a line of progress per notebook."""
    work = [(p, folder / p.stem, budget) for p in paths]
    done: dict[str, list[FrameSet]] = {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        for stem, sets, seconds in pool.map(_record_one, work):
            n = sum(len(s.manifest["frames"]) for s in sets)
            print(f"  frames: {stem:40s} {len(sets)} figures, {n:4d} frames, {seconds:5.1f} s", flush=True)
            done[stem] = sets
    return done


def _json_for_script(value: Any) -> str:
    """JSON that is safe inside <script>: no "</" can close the element early."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


LIVE_TEXT = {
    "en": {
        "look": N_("What to look for:"),
        "reset": N_("reset"),
        "reset_title": N_("back to the starting values"),
        "values": N_("values"),
        "note": N_(
            "Drawn when the book was built: {n} distinct frames by the notebook's own code. Each slider jumps "
            "between its sampled values; the readout shows the value a frame was drawn at."
        ),
        "one": " " + N_("Sliders move one at a time: moving one returns the other sliders to their starting values."),
        "joint": " "
        + N_(
            "Sliders move one at a time, except {names}, drawn at every combination: moving one of them keeps "
            "the other where it is; moving any other slider returns the rest to their starting values."
        ),
        "and": " " + N_("and") + " ",
        "full": N_("open at full size"),
        "ticks": N_("tick marks: the sampled values"),
    },
}


def live_text(lang: str = "en") -> dict[str, str]:
    """The live figure's own words in ``lang``: :data:`LIVE_TEXT`, from the widgets catalogue (each English text
    without its surrounding spaces: Chinese puts none around them)."""
    if lang == "en":
        return LIVE_TEXT["en"]
    return {k: widget_text(v.strip(), lang, strict=True) for k, v in LIVE_TEXT["en"].items()}


def localized_manifest(manifest: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    """A figure's manifest with its words in ``lang``: control labels, menu options and checkbox states, the readouts
    of menus, the caption. The frames are the English notebook's (figures keep their English labels)."""
    if lang == "en":
        return manifest
    out = copy.deepcopy(manifest)
    out["caption"] = widget_text(manifest.get("caption", ""), lang, strict=True)
    menus = set()
    for j, control in enumerate(out["controls"]):
        control["label"] = widget_text(control["label"], lang, strict=True)
        control["labels"] = [widget_text(s, lang, strict=True) for s in control["labels"]]
        if control["labels"]:
            menus.add(j)
    for frame in out["frames"].values():
        frame[1] = [widget_text(s, lang, strict=True) if j in menus else s for j, s in enumerate(frame[1])]
    return out


def live_figure(manifest: dict[str, Any], alt: str, width: int | None, uid: str, lang: str = "en") -> str:
    """The HTML of one interactive figure without a kernel: controls as plain inputs, a reset button, the caption,
    the frame at the starting values, a note on how the frames were drawn, and the data frames.js reads."""
    start = [int(i) for i in manifest["start"].split(",")]
    context = ",".join(
        str(i) for i, c in zip(start, manifest["controls"], strict=True) if c["kind"] in ("dropdown", "checkbox")
    )
    first = manifest["frames"][manifest["start"]]
    text = live_text(lang)
    rows = []
    for j, (control, index) in enumerate(zip(manifest["controls"], start, strict=True)):
        cid = f"{uid}-{j}"
        label = html.escape(control["label"])
        name = html.escape(control["name"])
        if control["kind"] == "dropdown":
            options = "".join(
                f'<option value="{i}"{" selected" if i == index else ""}>{html.escape(t)}</option>'
                for i, t in enumerate(control["labels"])
            )
            rows.append(
                f'<div class="book-control" data-name="{name}"><label for="{cid}">{label}</label>'
                f'<select class="book-input" id="{cid}">{options}</select></div>'
            )
        elif control["kind"] == "checkbox":
            checked = " checked" if index else ""
            rows.append(
                f'<div class="book-control book-check" data-name="{name}">'
                f'<input class="book-input" type="checkbox" id="{cid}"{checked}>'
                f'<label for="{cid}">{label}</label></div>'
            )
        else:
            slider = manifest["contexts"][context][control["name"]]
            shown = html.escape(first[1][j])
            # tick marks on the track at every sampled value (frames.js rewrites them when a menu changes the list)
            ticks = "".join(f'<option value="{i}"></option>' for i in range(len(slider["labels"])))
            rows.append(
                f'<div class="book-control" data-name="{name}"><label for="{cid}">{label}</label>'
                f'<input class="book-input" type="range" id="{cid}" min="0" max="{len(slider["labels"]) - 1}" step="1" '
                f'value="{index}" aria-valuetext="{shown}" list="{cid}-ticks">'
                f'<datalist class="book-ticks" id="{cid}-ticks">{ticks}</datalist>'
                f'<output class="book-value" for="{cid}">{shown}</output>'
                f'<span class="book-range">{html.escape(slider["labels"][0])} … {html.escape(slider["labels"][-1])}, '
                f"{len(slider['labels'])} {text['values']}</span></div>"
            )
    rows.append(f'<button type="button" class="book-reset" title="{text["reset_title"]}">{text["reset"]}</button>')
    caption = manifest.get("caption", "")
    look = f"<i>{text['look']}</i>{punctuation(lang)['space']}"  # no space after a Chinese colon
    caption_html = f'<p class="book-caption">{look}{html.escape(caption)}</p>' if caption else ""
    one_at_a_time = manifest["grid"] != "product"
    joint = manifest.get("joint", [])
    labels = {c["name"]: c["label"] for c in manifest["controls"]}
    if one_at_a_time and joint:
        names = punctuation(lang)["groups"].join(text["and"].join(f"“{labels[n]}”" for n in group) for group in joint)
        how = text["joint"].format(names=names)
    else:
        how = text["one"] if one_at_a_time else ""
    note = text["note"].format(n=len(manifest["files"])) + how
    root = "" if lang == "en" else "../"
    size = f' width="{int(width)}"' if width else ""
    keys = ("plot", "params", "rebuildable", "controls", "contexts", "files", "frames", "start", "grid")
    data = {k: manifest[k] for k in keys}  # plot and params: tests/browser/test_book.py draws frames again
    data["joint"] = joint
    if lang != "en":  # frames.js writes the range's count and the alt text's values in these words (English: its own)
        p = punctuation(lang)
        data["words"] = {"values": text["values"], "open": p["open"], "sep": p["groups"], "close": p["close"]}
    src = f"{root}{FRAMES_DIR}/{html.escape(manifest['files'][first[0]])}"
    aria = widget_text("Interactive figure: {alt}", lang, alt=alt)
    return (
        f'<div class="book-live" id="{uid}" role="group" '
        f'aria-label="{html.escape(aria, quote=True)}">'
        f'<div class="book-live-controls">{"".join(rows)}</div>{caption_html}'
        f'<img class="book-live-frame" src="{src}"{size} '
        f'alt="{html.escape(alt, quote=True)}" data-alt="{html.escape(alt, quote=True)}">'
        # on a phone the figure shrinks to the column (its text to a few pixels): the frame's own file at full size
        f'<a class="book-full" href="{src}" target="_blank" rel="noopener">{text["full"]}</a>'
        f'<p class="book-live-note">{html.escape(note)}</p>'
        f'<script type="application/json" class="book-live-data">{_json_for_script(data)}</script></div>'
    )


# ----------------------------------------------------------------------------- rendering


def _exporter(root: str = "") -> HTMLExporter:
    exporter = HTMLExporter(
        template_name=TEMPLATE_NAME, extra_template_basedirs=[str(TEMPLATES)], mathjax_url=root + MATHJAX_URL
    )
    exporter.exclude_input_prompt = True  # "In [12]:" counts mean nothing to a reader of a book
    exporter.exclude_output_prompt = True
    return exporter


_ZH_LINK = re.compile(
    r'href="(?:\.\./\.\./notebooks/(?:zh/)?)?(\d\d_\w+)\.ipynb(#[^"]*)?"|href="(?:\.\./\.\./docs/zh/)?(glossary|notation)\.md(#[^"]*)?"'
)


# A static figure is a data: URL inside the page; browsers refuse to open a data: URL as a page, so the link turns it
# into a blob first (one line of script on the link itself: pages without live figures load no frames.js).
_STATIC_PNG = re.compile(r'<img\b[^>]*\bsrc="data:image/png[^"]*"[^>]*>')
_OPEN_FULL = (
    "fetch(this.previousElementSibling.src).then(r => r.blob())"
    ".then(b => window.open(window.URL.createObjectURL(b), '_blank'));return false;"  # URL alone: document.URL here
)


def full_size_links(body: str, lang: str = "en") -> str:
    """Every static figure followed by a link that opens it at full size (shown on narrow screens, as the live
    figures' links: on a 390 px phone a figure's 9 pt text shrinks to about 5 px)."""
    label = html.escape(live_text(lang)["full"])
    link = f'<a class="book-full book-full-static" href="#" onclick="{html.escape(_OPEN_FULL)}">{label}</a>'
    return _STATIC_PNG.sub(lambda m: m.group(0) + link, body)


def _rewrite_links(body: str, lang: str = "en") -> str:
    """Links between notebooks and to the docs point at the book's own pages (of the same edition)."""
    if lang == "zh":
        return _ZH_LINK.sub(lambda m: f'href="{m.group(1) or m.group(3)}.html{m.group(2) or m.group(4) or ""}"', body)
    body = _NOTEBOOK_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', body)
    return _DOC_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', body)


# The two editions: English at the book's root, Chinese in zh/ (scripts/i18n.py writes its notebooks and documents).
LANGS = ("en", "zh")
LABELS = {
    "en": {
        "contents": "Contents",
        "glossary": "Glossary",
        "notation": "Notation",
        "position": "({} of {})",
        "nav": "course navigation ({})",
    },
    "zh": {
        "contents": "目录",
        "glossary": "术语表",
        "notation": "记号表",
        "position": "（第 {} 页，共 {} 页）",
        "nav": "课程导航（{}）",
    },
}


def _nav(pages: list[Page], i: int, lang: str = "en") -> dict[str, Any]:
    def link(j: int) -> dict[str, str] | None:
        return {"href": pages[j].href, "title": pages[j].title} if 0 <= j < len(pages) else None

    href = pages[i].href
    switch = (
        {"href": f"zh/{href}", "lang": "zh-CN", "label": "中文"}
        if lang == "en"
        else {"href": f"../{href}", "lang": "en", "label": "English"}
    )
    return {
        "prev": link(i - 1),
        "next": link(i + 1),
        "position": i + 1,
        "count": len(pages),
        "root": "" if lang == "en" else "../",
        # the navigation's aria label names where it is: top, bottom (from the widgets catalogue on a Chinese page)
        "labels": LABELS[lang] | {"where": {w: widget_text(w, lang, strict=True) for w in (N_("top"), N_("bottom"))}},
        "switch": switch,
    }


@dataclass(frozen=True)
class BookSize:
    """What the contents page says about the build: pages, figures and bytes (MathJax's share apart)."""

    pages: int
    figures: int
    total_bytes: int
    mathjax_bytes: int
    live: int = 0  # interactive figures with working controls
    frame_files: int = 0
    editions: int = 1  # 2: the same pages again in Chinese, in zh/ (sharing figures' frames and MathJax)

    def sentence(self) -> str:
        mib = 2**20
        live = f", {self.live} of them with working controls ({self.frame_files} frames)" if self.live else ""
        both = " in each of two languages" if self.editions == 2 else ""
        return (
            f"This build: {self.pages} pages{both} with {self.figures} figures{live}, "
            f"{self.total_bytes / mib:.1f} MiB in all, of which {self.mathjax_bytes / mib:.1f} MiB is MathJax."
        )


def folder_bytes(folder: Path) -> int:
    """Bytes of every file under ``folder``."""
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _count_words(n: int) -> str:
    """A count as a reader says it: words up to twelve, digits above."""
    words = "zero one two three four five six seven eight nine ten eleven twelve".split()
    return words[n] if 0 <= n < len(words) else str(n)


def _contents_list(notebooks: list[Page], sections: dict[str, list[tuple[str, str]]]) -> list[str]:
    """The contents list, shared by both editions: each notebook, and its sections under it."""
    lines = []
    for page in notebooks:
        lines.append(f"- [{page.title}]({page.href})")
        lines.extend(f"    - [{title}]({page.href}#{anchor})" for anchor, title in sections.get(page.slug, []))
    return lines


def _contents_markdown(
    notebooks: list[Page], sections: dict[str, list[tuple[str, str]]], size: BookSize | None = None
) -> str:
    numbers = [p.slug[:2] for p in notebooks]
    span = f" ({numbers[0]}–{numbers[-1]})" if len(numbers) > 1 else ""
    lines = [
        "# Positional Encodings, Interactively",
        "",
        "How do Transformers and LLMs know where a token is? The course answers with derivations, figures and",
        f"checks in {_count_words(len(notebooks))} notebooks{span}, read in order. This book shows them as they",
        "were last run, with every figure; it needs no installation and no network.",
        *(
            [
                "Its sliders work without a kernel: each interactive figure swaps between frames that the notebook's",
                "own code drew when the book was built, at sampled values of its controls. To run the code yourself,",
            ]
            if size and size.live
            else ["The sliders need a running kernel: to move them,"]
        ),
        "install the project (`pip install -r requirements.txt`) and, in the repository's",
        f"folder, open the course with `{OPEN_COMMAND}`.",
        "",
        *([size.sentence(), ""] if size else []),
        "## Contents",
        "",
    ]
    lines += _contents_list(notebooks, sections)
    lines += [
        "",
        "## Reference",
        "",
        "- [Glossary: Chinese–English terms](glossary.html) (中英术语表)",
        "- [Notation: the symbols used across the notebooks](notation.html)",
    ]
    return "\n".join(lines) + "\n"


def _sections(body: str) -> list[tuple[str, str]]:
    """(anchor id, plain title) of each level-2 heading nbconvert wrote."""
    out = []
    for anchor, inner in _HEADING.findall(body):
        title = html.unescape(re.sub(r"<[^>]+>", "", inner)).strip().rstrip("¶").strip()
        out.append((urllib.parse.quote(html.unescape(anchor), safe="-_.:()',"), title))
    return out


def _lab_static(name: str) -> Path:
    """A file of nbconvert's lab template (installed under a Jupyter data folder)."""
    from jupyter_core.paths import jupyter_path

    for folder in jupyter_path("nbconvert", "templates"):
        path = Path(folder) / "lab" / "static" / name
        if path.is_file():
            return path
    raise FileNotFoundError(f"nbconvert's lab template has no static/{name}")


def copy_mathjax(out: Path) -> Path:
    """Copy MathJax 2.7 from jupyter-server-mathjax into the book; fail if a config file the URL names is missing."""
    import jupyter_server_mathjax

    src = Path(jupyter_server_mathjax.__file__).parent / "static"
    missing = [c for c in MATHJAX_CONFIGS if not (src / "config" / f"{c}.js").is_file()]
    if not (src / "MathJax.js").is_file() or missing:
        raise FileNotFoundError(f"MathJax in {src} lacks MathJax.js or config/{missing}.js")
    dest = out / MATHJAX_DIR
    shutil.copytree(src, dest)
    return dest


def build(
    out: Path = DEFAULT_OUT,
    notebooks: list[Path] | None = None,
    *,
    frames: bool | list[str] = False,
    budget: int | None = None,
    jobs: int = 1,
) -> list[Path]:
    """Build the book into ``out`` (emptied first); returns the written pages in course order.

    ``frames``: ``True`` runs every notebook that has interactive figures and gives each figure working controls
    (:func:`record_frames`); a list of notebook stems does that for those only; ``False`` (the default) executes
    nothing and leaves a note in place of each widget. ``budget`` is the frames per figure (default
    :data:`book_frames.DEFAULT_BUDGET` (scripts/book/)), ``jobs`` the notebooks run at once.
    """
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    copy_mathjax(out)
    dark = _lab_static("theme-dark.css").read_text(encoding="utf-8")
    css = (TEMPLATES / "book.css").read_text()
    (out / "book.css").write_text(f"{css}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n", encoding="utf-8")

    nb_pages = [
        Page(p.stem, "", nbformat.read(p, as_version=4), str(p.relative_to(ROOT)))
        for p in (course_notebooks() if notebooks is None else notebooks)
    ]
    for page in nb_pages:
        page.title = _notebook_title(page.nb, page.slug)
    live: dict[str, list[FrameSet]] = {}
    if frames:
        wanted = [p for p in nb_pages if has_interactive_figures(p.nb) and (frames is True or p.slug in frames)]
        start = time.perf_counter()
        (out / FRAMES_DIR).mkdir()
        with tempfile.TemporaryDirectory(prefix="book-frames-") as tmp:
            live = record_all_frames([ROOT / p.source for p in wanted], Path(tmp), budget, jobs)
            for sets in live.values():
                for frame_set in sets:
                    for name in frame_set.manifest["files"]:
                        target = out / FRAMES_DIR / name
                        if not target.exists():  # named by their hash: the same picture is stored once
                            shutil.copyfile(frame_set.folder / name, target)
        shutil.copyfile(FRAMES_SCRIPT, out / FRAMES_SCRIPT.name)
        print(f"  frames: {len(list((out / FRAMES_DIR).iterdir()))} files in {time.perf_counter() - start:.1f} s")
    index = Page("index", "Contents", nbformat.v4.new_notebook(), "the course")
    pages = [
        index,
        *nb_pages,
        _markdown_page("glossary", DOCS / "glossary.md"),
        _markdown_page("notation", DOCS / "notation.md"),
    ]

    exporter = _exporter()
    bodies: dict[str, str] = {}
    written = []
    for i, page in enumerate(pages):
        if page is index:
            continue  # written last, from the headings of the others and the size of everything else
        nav = _nav(pages, i) | {"live": page.slug in live}
        body, _ = exporter.from_notebook_node(prepare(page, live.get(page.slug)), resources={"book": nav})
        bodies[page.slug] = full_size_links(_rewrite_links(body))
        path = out / page.href
        path.write_text(bodies[page.slug], encoding="utf-8")
        written.append(path)
    written += write_chinese_edition(out, live)  # before the contents page, whose stated size counts it
    sections = {s: _sections(b) for s, b in bodies.items()}
    live_count = sum(b.count('class="book-live"') for b in bodies.values())
    figures = sum(len(_PNG_IMG.findall(b)) for b in bodies.values()) + live_count
    frame_files = len(list((out / FRAMES_DIR).iterdir())) if (out / FRAMES_DIR).is_dir() else 0
    rest, mathjax = folder_bytes(out), folder_bytes(out / MATHJAX_DIR)
    # The index counts itself: render it, measure it, and render again until the stated size is its own.
    index_bytes = 0
    for _ in range(4):
        editions = 2 if (out / "zh").is_dir() else 1
        size = BookSize(len(pages), figures, rest + index_bytes, mathjax, live_count, frame_files, editions)
        index.nb = nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_markdown_cell(_contents_markdown(nb_pages, sections, size))]
        )
        body, _ = exporter.from_notebook_node(prepare(index), resources={"book": _nav(pages, 0)})
        if len(body.encode("utf-8")) == index_bytes:
            break
        index_bytes = len(body.encode("utf-8"))
    (out / index.href).write_text(body, encoding="utf-8")
    return [out / index.href, *written]


def _i18n_tool() -> Any:
    """scripts/i18n.py as a module (it writes the Chinese notebooks and documents)."""
    import importlib.util

    if "i18n_tool" not in sys.modules:
        spec = importlib.util.spec_from_file_location("i18n_tool", ROOT / "scripts" / "i18n.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["i18n_tool"] = module
        spec.loader.exec_module(module)
    return sys.modules["i18n_tool"]


def _chinese_contents(notebooks: list[Page], sections: dict[str, list[tuple[str, str]]]) -> str:
    lines = [
        "# 位置编码：交互式课程（中文版）",
        "",
        "Transformer 和大语言模型怎样知道一个 token 在哪里？本课程用推导、图和检验来回答，共"
        f" {len(notebooks)} 篇笔记本，请按顺序阅读。本书呈现的是它们最近一次运行的结果和全部图；无需安装，也无需联网。"
        "公式、代码和图中的标签与英文版相同。要亲自运行代码：安装本项目（`pip install -r requirements.txt`），"
        "运行 `python scripts/i18n.py build` 生成中文笔记本，然后在仓库目录中执行"
        f" `{OPEN_COMMAND.replace('notebooks/00_tour', 'notebooks/zh/00_tour')}`。",
        "",
        "## 目录",
        "",
    ]
    lines += _contents_list(notebooks, sections)
    lines += ["", "## 参考", "", "- [中英术语表](glossary.html)", "- [记号表：各篇笔记本所用的记号](notation.html)"]
    return "\n".join(lines) + "\n"


def write_chinese_edition(out: Path, live: dict[str, list[FrameSet]]) -> list[Path]:
    """The Chinese pages in ``out``/zh/, from the committed Chinese notebooks and scripts/i18n.py's documents;
    frames shared.

    The Chinese notebooks are read as committed: their outputs come from executing them in the Chinese edition
    (``python scripts/i18n.py build --execute``), which a build into a scratch folder would not have, and
    tests/test_i18n.py holds their sources to the build.
    """
    tool = _i18n_tool()
    folder = out / "zh"
    folder.mkdir()
    nb_pages = [
        Page(p.stem, "", nbformat.read(p, as_version=4), f"notebooks/zh/{p.name}")
        for p in sorted((NOTEBOOKS / "zh").glob("[0-9][0-9]_*.ipynb"))
    ]
    for page in nb_pages:
        page.title = _notebook_title(page.nb, page.slug)
    index = Page("index", "目录", nbformat.v4.new_notebook(), "the course")
    docs = [
        _markdown_page(slug, DOCS / f"{slug}.md", tool.translated_document(DOCS / f"{slug}.md", "zh"))
        for slug in ("glossary", "notation")
    ]
    pages = [index, *nb_pages, *docs]
    exporter = _exporter("../")
    exporter.language_code = "zh-CN"  # <html lang>: screen readers and fonts pick Chinese
    bodies: dict[str, str] = {}
    for i, page in enumerate(pages):
        if page is index:
            continue
        nav = _nav(pages, i, "zh") | {"live": page.slug in live}
        body, _ = exporter.from_notebook_node(prepare(page, live.get(page.slug), "zh"), resources={"book": nav})
        bodies[page.slug] = full_size_links(_rewrite_links(body, "zh"), "zh")
    sections = {s: _sections(b) for s, b in bodies.items()}
    index.nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(_chinese_contents(nb_pages, sections))])
    body, _ = exporter.from_notebook_node(prepare(index, lang="zh"), resources={"book": _nav(pages, 0, "zh")})
    bodies["index"] = body
    written = []
    for slug, body in bodies.items():
        path = folder / f"{slug}.html"
        path.write_text(body, encoding="utf-8")
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (emptied first)")
    parser.add_argument(
        "--frames",
        nargs="*",
        metavar="NOTEBOOK",
        help="run the notebooks with interactive figures and give every figure working controls "
        "(all of them, or only the named notebook stems, e.g. 07_alibi); several minutes",
    )
    parser.add_argument("--budget", type=int, default=None, help="frames per figure (default: book_frames.py)")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks run at once for --frames")
    args = parser.parse_args()
    start = time.perf_counter()
    frames = False if args.frames is None else (args.frames or True)
    pages = build(args.out, frames=frames, budget=args.budget, jobs=args.jobs)
    size = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(
        f"{len(pages)} pages, {size / 2**20:.1f} MiB (MathJax included) in {time.perf_counter() - start:.1f} s: "
        f"open {(args.out / 'index.html').resolve()}"
    )


if __name__ == "__main__":
    sys.exit(main())
