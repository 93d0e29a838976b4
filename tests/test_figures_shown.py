"""Every code cell that builds a figure stores a picture of it (issue 34).

A figure built outside pyplot (``Figure()`` with its own canvas) is never shown by ``plt.show()``; the stored
notebook and a fresh run then show nothing, while the text describes the figure. nbval cannot notice: it
compares the outputs a cell stores with the outputs it makes, and both are empty. This test reads each stored
notebook and asks, for every code cell that builds a figure, for an ``image/png`` output.

"Builds a figure" is read from the cell's code (comments and string literals removed first):

* a call to a figure builder of poslib: every public function of ``poslib.viz`` and ``poslib.lab`` whose
  return annotation names ``Figure`` (found by introspection, so a new builder is covered without editing
  this file), except those that take an existing figure (``freeze_layout``);
* pyplot or axes drawing: ``plt.subplots``, ``plt.figure``, ``plt.subplot``, ``plt.plot`` and the like,
  ``.plot(``, ``.imshow(``, ``.semilogy(``, …;
* ``interact(``: its box stores the figure's PNG beside the widget;
* a LivePlot constructed in the cell (``plot = MropeGridPlot()``) counts as built in the cell that shows it:
  if a later cell of the notebook passes that name to ``interact(``, the picture is asked of that cell
  (which ``interact(`` already covers); otherwise of the constructing cell, unless that cell closes it
  (``plt.close(plot.fig)`` or ``plot.close()``: built for its numbers only).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import io
import json
import pathlib
import pkgutil
import re
import tokenize
from functools import cache

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

_DRAWING = re.compile(
    r"\bplt\.(?:subplots|subplot|figure|plot|imshow|matshow|semilogx|semilogy|loglog|scatter|bar|barh|hist|"
    r"contour|contourf|pcolormesh|stem|step|fill_between|errorbar)\s*\("
    r"|\.(?:plot|imshow|matshow|semilogx|semilogy|loglog|scatter|pcolormesh|contourf?|hist|bar|barh)\s*\("
    r"|\binteract\s*\("
)


@cache
def figure_builders() -> frozenset[str]:
    """Names of poslib's public figure builders: functions of poslib.viz / poslib.lab annotated to return a Figure."""
    import poslib.lab
    import poslib.viz

    names = set()
    for package in (poslib.viz, poslib.lab):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for name, obj in vars(module).items():
                if name.startswith("_") or not inspect.isfunction(obj):
                    continue
                returns = str(inspect.signature(obj).return_annotation)
                takes_figure = any("Figure" in str(p.annotation) for p in inspect.signature(obj).parameters.values())
                if "Figure" in returns and not takes_figure:  # freeze_layout(fig) returns the figure it was given
                    names.add(name)
    return frozenset(names)


@cache
def live_plot_names() -> frozenset[str]:
    """Class names of every LivePlot of poslib.viz."""
    from poslib.viz import all_live_plots

    return frozenset(cls.__name__ for cls in all_live_plots())


def code_only(source: str) -> str:
    """The source with comments and strings blanked: a builder named in a comment or a print does not count."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return re.sub(r"#.*", "", source)  # cell magics or a half-typed cell: drop comments only
    blanked = []
    for t in tokens:
        kind = tokenize.tok_name.get(t.type, "")
        if t.type == tokenize.COMMENT or kind == "FSTRING_MIDDLE":  # 3.12 splits f-strings; {…} parts stay code
            t = t._replace(string="")
        elif t.type == tokenize.STRING:
            t = t._replace(string='""')
        blanked.append(t)
    return tokenize.untokenize(blanked)


def builds_figure(code: str) -> bool:
    """Whether stripped cell code draws a figure (builder call, pyplot or axes drawing, interact)."""
    if _DRAWING.search(code):
        return True
    return any(re.search(rf"\b{re.escape(name)}\s*\(", code) for name in figure_builders())


def has_picture(cell: dict) -> bool:
    """Whether the stored cell has an image/png output."""
    return any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))


def cells_missing_a_picture(nb: dict) -> list[tuple[int, str]]:
    """(index, first line) of every code cell that builds a figure but stores no image/png output."""
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    codes = [code_only("".join(c["source"])) for c in cells]
    need = [builds_figure(code) for code in codes]
    plots = "|".join(sorted(live_plot_names()))
    for k, code in enumerate(codes):
        for var in re.findall(rf"\b(\w+)\s*=\s*(?:\w+\s*\.\s*)*(?:{plots})\s*\(", code) if plots else []:
            # shown by a later interact(var, ...)? then that cell is asked for the picture, not this one
            shown_later = any(re.search(rf"\binteract\s*\(\s*{re.escape(var)}\b", later) for later in codes[k + 1 :])
            # built for its numbers only and closed on purpose (04's DebertaPlot): no figure is meant to show
            v = re.escape(var)
            closed = re.search(rf"\bclose\s*\(\s*{v}\s*\.\s*fig\b|\b{v}\s*\.\s*close\s*\(", code)
            need[k] = need[k] or not (shown_later or closed)
    index = {id(c): i for i, c in enumerate(nb["cells"])}
    return [
        (index[id(c)], "".join(c["source"]).splitlines()[0] if c["source"] else "")
        for c, n in zip(cells, need, strict=True)
        if n and not has_picture(c)
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_cell_that_builds_a_figure_stores_a_picture(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    missing = cells_missing_a_picture(nb)
    assert not missing, (
        f"{path.name}: cells that build a figure but store no image/png (shown with plt.show() though pyplot does "
        f"not track the figure? display the returned figure): {missing}"
    )


# ---------------------------------------------------------------- the test can fail


def _notebook_09() -> dict:
    return json.loads((ROOT / "notebooks" / "09_rope_in_production.ipynb").read_text(encoding="utf-8"))


def _without_pictures(nb: dict, marker: str) -> dict:
    """A copy of ``nb`` whose code cell containing ``marker`` lost its image/png outputs (what d6af5a8 stored)."""
    nb = copy.deepcopy(nb)
    hits = [c for c in nb["cells"] if c["cell_type"] == "code" and marker in "".join(c["source"])]
    assert len(hits) == 1, f"{marker!r} in {len(hits)} code cells"
    hits[0]["outputs"] = [o for o in hits[0]["outputs"] if "image/png" not in o.get("data", {})]
    return nb


@pytest.mark.parametrize("marker", ["longrope_divisors_figure(PHI35_MINI)", "sink_mass_figure(lengths"])
def test_a_builder_whose_figure_is_not_shown_is_caught(marker):
    nb = _notebook_09()
    assert cells_missing_a_picture(nb) == []
    found = cells_missing_a_picture(_without_pictures(nb, marker))
    assert len(found) == 1 and marker in "".join(nb["cells"][found[0][0]]["source"]), found


def test_an_interact_cell_without_its_picture_is_caught():
    nb = _notebook_09()
    found = cells_missing_a_picture(_without_pictures(nb, "interact(\n    plot,\n    row="))
    assert len(found) == 1, found


def test_a_live_plot_never_handed_to_interact_must_show_itself():
    nb = _notebook_09()
    for cell in nb["cells"]:  # break the link from `plot = MropeGridPlot()` to its interact cell
        if cell["cell_type"] == "code" and "row=widgets.IntSlider" in "".join(cell["source"]):
            cell["source"] = ["pass\n"]
            cell["outputs"] = []
    found = [i for i, _ in cells_missing_a_picture(nb)]
    assert any("MropeGridPlot()" in "".join(nb["cells"][i]["source"]) for i in found), found


def test_names_in_comments_and_strings_do_not_count():
    assert not builds_figure(code_only('print("longrope_divisors_figure(config) draws it")  # plt.subplots()\n'))
    assert not builds_figure(code_only('x = f"{a}: ax.plot(y)"\n'))
    assert builds_figure(code_only("fig = sink_mass_figure(a, b, c, d)\n"))
    assert builds_figure(code_only("fig, ax = plt.subplots()\nax.plot([1, 2])\n"))
    assert {"longrope_divisors_figure", "sink_mass_figure", "heatmap_row", "new_figure"} <= figure_builders()
    assert "freeze_layout" not in figure_builders()
