"""Every relative link a reader can click resolves in JupyterLab started the way the README says.

The README's open command (the line of its first bash block marked ``# open``) is run, with the test's own
flags for port, token and settings only, in a temporary copy of the repository, so the server's root is
whatever that command makes it for a reader. Then JupyterLab's contents API (GET /api/contents/<path>) is
asked for the target of every relative link in every notebook's markdown cells, the README, CONTRIBUTING.md
and docs/*.md: glossary, notation, other notebooks, the API reference. A link with an anchor must also name
an id the target has, as JupyterLab makes them: an explicit ``<a id=…>`` or a heading's text with its spaces
turned into dashes, or in a notebook ``cell-id=<a cell's id>``. A link into another notebook must use that last
form (``unscrollable``): JupyterLab 4.6 lays out only the cells near the top of a notebook it opens, so a heading or
``<a id>`` fragment finds nothing and the notebook opens at its top, while ``#cell-id=`` is looked up in the
notebook's model (tests/browser/test_links_click.py clicks each one; the offline book gives every cell that id).
Issue 24: with ``jupyter lab notebooks/`` the root was notebooks/, and every header's
``../docs/glossary.md`` was a 404. One server answers every link (about 20 s to start).

Run only this: pytest tests/browser/test_links.py
"""

from __future__ import annotations

import html
import json
import posixpath
import re
import shutil
import urllib.error
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_harness import REPO, LabServer, open_command

# What a reader's checkout holds besides the course: tools' caches, environments, build outputs.
_NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv*", "build", "__pycache__", "*.egg-info", ".ipynb_checkpoints", ".*_cache", ".hypothesis", "mutants"
)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_MD_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_HTML_LINK = re.compile(r"""<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']""", re.I)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_EXPLICIT_ID = re.compile(r"""<[a-z][^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.M)


def documents(root: Path) -> Iterator[tuple[str, str]]:
    """(path relative to the root, markdown) of everything a reader opens and clicks links in."""
    for path in sorted((root / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        yield path.relative_to(root).as_posix(), text
    for path in [*sorted(root.glob("*.md")), *sorted((root / "docs").glob("*.md"))]:
        yield path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")


def links(markdown: str) -> list[str]:
    """Relative link targets in markdown prose (code blocks and code spans are code, not links)."""
    prose = _CODE_SPAN.sub(" ", _FENCE.sub(" ", markdown))
    found = [m.group(1) for m in _MD_LINK.finditer(prose)] + [m.group(1) for m in _HTML_LINK.finditer(prose)]
    return [html.unescape(t) for t in found if not _SCHEME.match(t) and not t.startswith("//")]


def anchor_ids(markdown: str) -> set[str]:
    """Ids a link's #fragment can reach in JupyterLab's rendering of this markdown.

    Explicit ``id``/``name`` attributes, and each heading's id, which JupyterLab sets to the heading's text
    content with every space replaced by a dash (rendermime's createHeaderId); math is still raw TeX then.
    """
    prose = _FENCE.sub(" ", markdown)
    ids = set(_EXPLICIT_ID.findall(prose))
    for heading in _ATX_HEADING.findall(prose):
        text = re.sub(r"<[^>]+>", "", heading)
        text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
        text = re.sub(r"(\*\*|__|`)", "", text)
        text = re.sub(r"(?<![\w\\])[*_](?=\S)|(?<=\S)[*_](?![\w])", "", text)  # emphasis, not subscripts
        ids.add(html.unescape(text).strip().replace(" ", "-"))
    return ids


def unscrollable(doc: str, path: str, fragment: str) -> bool:
    """Whether a link from ``doc`` to ``path#fragment`` opens another notebook without scrolling to its target."""
    return path.endswith(".ipynb") and path != doc and not fragment.startswith("cell-id=")


def contents(server: LabServer, path: str, *, content: bool) -> dict | None:
    """JupyterLab's contents API for ``path`` (None on 404 or 403), as the front end asks when a link is clicked."""
    query = "content=1&type=file&format=text" if content and not path.endswith(".ipynb") else f"content={int(content)}"
    try:
        return server.api("GET", f"/api/contents/{urllib.parse.quote(path)}?{query}")
    except urllib.error.HTTPError as err:
        if err.code in (403, 404):
            return None
        raise


def server_root(server: LabServer) -> Path:
    """The folder the running server serves, from the runtime file jupyter_server writes for its process."""
    assert server.proc is not None
    for info in (server.base / "jupyter-runtime").glob("jpserver-*.json"):
        data = json.loads(info.read_text())
        if data.get("pid") == server.proc.pid:
            return Path(data["root_dir"]).resolve()
    raise AssertionError("the server wrote no jpserver-<pid>.json runtime file")


def broken_links(server: LabServer, repo: Path) -> tuple[int, list[str]]:
    """(links checked, one line per link that does not resolve) over every document of the copy ``repo``.

    Paths are asked for relative to the server's own root, which the open command chose.
    """
    served = server_root(server)
    targets: dict[str, dict | None] = {}
    ids: dict[str, set[str]] = {}
    problems: list[str] = []
    checked = 0
    for name, markdown in documents(repo):
        try:
            doc = (repo / name).resolve().relative_to(served).as_posix()
        except ValueError:
            problems.append(f"{name}: outside the server's root {served.name}/, so none of its links can open")
            continue
        for link in links(markdown):
            checked += 1
            raw_path, _, fragment = link.partition("#")
            path = posixpath.normpath(posixpath.join(posixpath.dirname(doc), urllib.parse.unquote(raw_path)))
            if not raw_path:
                path = doc
            if path == ".." or path.startswith("../"):
                problems.append(f"{doc}: {link} leaves JupyterLab's root ({served.name}/)")
                continue
            if path not in targets:
                targets[path] = contents(server, "" if path == "." else path, content=False)
            if targets[path] is None:
                problems.append(f"{doc}: {link} → 404 GET /api/contents/{path}")
                continue
            if not fragment:
                continue
            if path not in ids:
                model = contents(server, path, content=True) or {}
                if path.endswith(".ipynb"):
                    cells = model.get("content", {}).get("cells", [])
                    text = "\n\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")
                    # JupyterLab 4 also scrolls a notebook to #cell-id=<a cell's id> (ASCII, so no encoding issue)
                    cell_ids = {f"cell-id={c['id']}" for c in cells if c.get("id")}
                else:
                    text, cell_ids = model.get("content") or "", set()
                ids[path] = anchor_ids(text) | cell_ids
            if urllib.parse.unquote(fragment) not in ids[path]:
                problems.append(f"{doc}: {link} → {path} has no id {fragment!r}")
            elif unscrollable(doc, path, fragment):
                problems.append(f"{doc}: {link} → JupyterLab opens {path} at its top; link to #cell-id=<the cell's id>")
    return checked, problems


@pytest.fixture(scope="module")
def readme_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LabServer, Path]]:
    """JupyterLab started with the README's open command in a temporary copy of the repository."""
    base = tmp_path_factory.mktemp("links")
    root = base / "repo"
    shutil.copytree(REPO, root, ignore=_NOT_COPIED)
    argv = open_command((REPO / "README.md").read_text(encoding="utf-8"))
    server = LabServer(root=root, base=base / "lab", argv=tuple(argv[2:]))
    server.start()
    try:
        yield server, root
    finally:
        server.stop()


def test_every_relative_link_resolves_under_the_readme_open_command(readme_lab: tuple[LabServer, Path]) -> None:
    server, root = readme_lab
    checked, problems = broken_links(server, root)
    assert checked > 100, f"only {checked} links found: is the link pattern still matching?"
    assert not problems, f"{len(problems)} of {checked} links do not resolve:\n  " + "\n  ".join(problems[:40])


def test_link_and_anchor_rules() -> None:
    # The parsing the test relies on, on hand-written cases (no server needed).
    md = (
        "See [the glossary](../docs/glossary.md) and [a section](05_rope.ipynb#going-further), "
        "`[not a link](x.md)`, [web](https://example.org), <a href='notation.md#top'>n</a>.\n\n"
        '```python\n[also code](y.md)\n```\n\n## 3. The $m-n$ property\n### <a id="gf-x"></a>**Bold** title'
    )
    assert links(md) == ["../docs/glossary.md", "05_rope.ipynb#going-further", "notation.md#top"]
    assert {"3.-The-$m-n$-property", "gf-x", "Bold-title"} <= anchor_ids(md)
    assert unscrollable("notebooks/05_rope.ipynb", "notebooks/01_why_position.ipynb", "notation")
    assert not unscrollable("notebooks/05_rope.ipynb", "notebooks/01_why_position.ipynb", "cell-id=notation")
    assert not unscrollable("notebooks/05_rope.ipynb", "notebooks/05_rope.ipynb", "going-further")  # same notebook
    assert not unscrollable("README.md", "docs/notation.md", "top")
    readme = "x\n```bash\npip install -r requirements.txt  # install\njupyter lab --notebook-dir=. a.ipynb  # open\n```"
    assert open_command(readme) == ["jupyter", "lab", "--notebook-dir=.", "a.ipynb"]
