"""Write docs/api.md, the API reference, from the code: ``poslib.__all__``, signatures and docstrings.

Run: python scripts/api_reference.py            (rewrite docs/api.md)
     python scripts/api_reference.py --check    (exit 1 if docs/api.md is out of date; tests/test_api_reference.py)

No signature is written by hand. Every name of ``poslib.__all__`` gets one entry under the module that
defines it: its signature from ``inspect.signature`` (annotations as the source spells them: every
poslib module has ``from __future__ import annotations``, so they are strings), the first paragraph of
its docstring, and for a class its public methods. A constant has no docstring, so its entry shows its
declared type, the comment written above it in the source and its current value. Rerun the script after
adding or changing a public name; the test fails until docs/api.md matches.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import io
import pathlib
import re
import sys
import tokenize
from collections.abc import Callable
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import poslib  # noqa: E402  (the checkout's poslib, not an installed one)

OUT = ROOT / "docs" / "api.md"

# Modules in the order the course meets them; a module not listed here follows, alphabetically.
MODULE_ORDER = (
    "sinusoidal",
    "learned",
    "rope",
    "rope_scaling",
    "rope_configs",
    "rope_diagnostics",
    "mrope",
    "xpos",
    "alibi",
    "t5",
    "deberta",
    "transformer_xl",
    "kerple",
    "sandwich",
    "fire",
    "cope",
    "logn",
    "randomized",
    "nope",
    "attn",
)

# What a constant is, for the constants whose source has no comment above them (the comment wins when written).
CONSTANT_NOTES = {
    "ROPE_SCALINGS": "the registry of RoPE scalings by name: `register_rope_scaling` adds a variant, `rope_inv_freq` "
    "looks the `rope_type` up here",
    "ROPE_SCALING_KEYS": "per registered variant, the scaling keys it reads (filled by `register_rope_scaling`)",
}

PREAMBLE = """\
Everything below is importable from `poslib` and is listed once in `poslib.__all__`. This page is
written by `python scripts/api_reference.py` from the code (signatures by `inspect.signature`, the first
paragraph of each docstring); `tests/test_api_reference.py` fails when it is out of date, so no signature
here is typed by hand.

Functions that take arrays return the same kind (NumPy in, NumPy out; torch in, torch out, same device
and dtype); functions that build from sizes take `backend="numpy" | "torch"` and return float64. Mixing
NumPy and torch in one call is a `TypeError`. `Array` in a signature means a NumPy array or a torch
tensor.

Contracts shared by every family:

* **Bias builders** (`alibi_bias`, `kerple_bias`, `sandwich_bias`, `t5_bias`, `fire_bias`) take
  `(<scheme parameters>, q_len, k_len=None, *, causal=False, backend=None, device=None)` and return
  `(n_heads, q_len, k_len)`; `backend=None` follows the array parameters (NumPy when there are none).
  Their trainable modules (`KerpleBias`, `T5RelativeBias`, `FireBias`) take
  `forward(q_len, k_len=None, *, causal=False)`. (CoPE's bias depends on the queries' content, so
  `cope_bias(q, gate_logits, pos_emb)` has a signature of its own.)
* **Where queries sit**: with q_len < k_len the queries are the *last* q_len positions, query i at
  position k_len − q_len + i, as when decoding with a KV cache: one convention for every bias builder,
  `relative_distance`, `t5_relative_positions` and `deberta_relative_position`.
* **RoPE in two steps**: `rope_cos_sin(positions, inv_freq)` once per forward pass (float64 angles),
  then `rope_rotate(x, cos, sin, layout=, rotary_dim=)` for queries and keys; `apply_rope` does both.
  RoPE angles (position × frequency) are always formed in float64, whatever the input's dtype, so
  bfloat16/float16 inputs stay accurate at positions in the millions.
* **Score terms**: `absolute_score_terms`, `transformer_xl_score_terms` and `deberta_score_terms`
  return dicts keyed "<query side>-<key side>" ("content-content", "content-position", …).

Above the scheme layer, and imported by none of it: `poslib.teaching` (the seeded toy models of
notebooks 01–03 and 10, position-similarity matrices, MiniLM's real 512 × 384 position table shipped in
`poslib/data/`, the attention-entropy curve of notebook 06), `poslib.viz` (one module per notebook;
every slider drives a `LivePlot` updated in place) and `poslib.lab` (`python -m poslib.lab`: a small
decoder-only LM per scheme, trained short, evaluated long). They are not listed here.
"""


def module_of(name: str) -> str:
    """The poslib submodule (without the ``poslib.`` prefix) that defines the public ``name``."""
    obj = getattr(poslib, name)
    defined = getattr(obj, "__module__", None)
    if isinstance(defined, str) and defined.startswith("poslib.") and (inspect.isfunction(obj) or inspect.isclass(obj)):
        return defined.removeprefix("poslib.")
    # A constant has no __module__: it belongs to the submodule whose __all__ lists it.
    for path in sorted((ROOT / "poslib").glob("[a-z]*.py")):
        module = importlib.import_module(f"poslib.{path.stem}")
        if name in getattr(module, "__all__", ()) and getattr(module, name, None) is obj:
            return path.stem
    raise SystemExit(f"poslib.__all__ names {name!r}, which no poslib submodule's __all__ lists")


def clean_rst(text: str) -> str:
    """Docstring markup as Markdown: ``x`` and :role:`x` become `x`."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)
    return re.sub(r"``(.+?)``", r"`\1`", text)


def summary(obj: Any) -> str:
    """The first paragraph of ``obj``'s own docstring, on one line ("" when it has none).

    Its own: a ``forward`` without a docstring must not show the one it inherits from ``torch.nn.Module``.
    """
    doc = inspect.cleandoc(obj.__doc__ or "")
    first = doc.strip().split("\n\n")[0]
    return clean_rst(" ".join(line.strip() for line in first.splitlines()))


def annotation(value: Any) -> str:
    """An annotation as it reads in the source (a string under postponed evaluation), else formatted."""
    if isinstance(value, str):
        return value
    return inspect.formatannotation(value)


def default(value: Any) -> str:
    """A default value as Python source; an object without a readable repr is shown by its name."""
    text = repr(value)
    if " at 0x" in text or text.startswith("<"):
        return getattr(value, "__qualname__", type(value).__name__)
    return text


def signature(name: str, fn: Callable[..., Any], *, skip_self: bool = False) -> str:
    """``name(params) -> return`` with every annotation and default readable, as a ``def`` line would be.

    A class shows its constructor's parameters and no return annotation.
    """
    sig = inspect.signature(fn)
    parts: list[str] = []
    seen_keyword_only = False
    params = list(sig.parameters.values())
    if skip_self and params and params[0].name == "self":
        params = params[1:]
    for i, p in enumerate(params):
        if p.kind is p.KEYWORD_ONLY and not seen_keyword_only:
            parts.append("*")
        seen_keyword_only = seen_keyword_only or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        stars = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        text = stars + p.name
        if p.annotation is not p.empty:
            text += f": {annotation(p.annotation)}"
        if p.default is not p.empty:
            text += f" = {default(p.default)}" if p.annotation is not p.empty else f"={default(p.default)}"
        parts.append(text)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params) or params[i + 1].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    shown = sig.return_annotation is not sig.empty and not inspect.isclass(fn)
    returns = f" -> {annotation(sig.return_annotation)}" if shown else ""
    return f"{name}({', '.join(parts)}){returns}"


def constant_source(module: str, name: str) -> tuple[str, str]:
    """(declared type, comment above the assignment) of a module-level constant, read from the source."""
    source = (ROOT / "poslib" / f"{module}.py").read_text(encoding="utf-8")
    declared, line = "", 0
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            declared, line = ast.unparse(node.annotation), node.lineno
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            line = node.lineno
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and tok.line.lstrip().startswith("#"):
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    block: list[str] = []
    row = line - 1
    while row in comments:
        block.insert(0, comments[row])
        row -= 1
    return declared, clean_rst(" ".join(block))


def constant_value(value: Any) -> str:
    """A constant's current value in one line: a set's members, a registry's names (and what each holds)."""
    if isinstance(value, frozenset | set):
        return "{" + ", ".join(f"`{v}`" for v in sorted(value)) + "}"
    if isinstance(value, dict):
        if all(isinstance(v, frozenset | set) for v in value.values()):
            entries = "; ".join(f"`{k}`: {', '.join(sorted(v)) or '—'}" for k, v in value.items())
            return f"{len(value)} entries: {entries}"
        return f"{len(value)} entries: {', '.join(f'`{k}`' for k in value)}"
    return f"`{default(value)}`"


def anchor(name: str) -> str:
    return f'<a id="{name}"></a>'


def entry(name: str, module: str) -> list[str]:
    """The Markdown lines of one public name."""
    obj = getattr(poslib, name)
    lines = [f"### {anchor(name)}`{name}`", ""]
    if inspect.isfunction(obj) or inspect.isclass(obj):
        kind = "class " if inspect.isclass(obj) else ""
        lines += ["```python", f"{kind}{signature(name, obj)}", "```", "", summary(obj) or "(no docstring)", ""]
        if inspect.isclass(obj):
            for method, fn in vars(obj).items():
                if method.startswith("_") or not inspect.isfunction(fn):
                    continue
                doc = summary(fn)
                lines += [f"* `{signature(method, fn, skip_self=True)}`" + (f": {doc}" if doc else "")]
            if lines[-1] != "":
                lines.append("")
    else:
        declared, comment = constant_source(module, name)
        comment = comment or CONSTANT_NOTES.get(name, "")
        kind = declared or type(obj).__name__
        lines += [
            f"`{name}: {kind}`" + (f": {comment}" if comment else ""),
            "",
            f"Value: {constant_value(obj)}.",
            "",
        ]
    return lines


def render() -> str:
    """The whole of docs/api.md."""
    by_module: dict[str, list[str]] = {}
    for name in poslib.__all__:
        by_module.setdefault(module_of(name), []).append(name)
    order = [m for m in MODULE_ORDER if m in by_module] + sorted(set(by_module) - set(MODULE_ORDER))
    out = [
        "<!-- Generated by scripts/api_reference.py from poslib.__all__: do not edit by hand. -->",
        "# poslib API reference",
        "",
        PREAMBLE,
        f"## Contents ({len(poslib.__all__)} public names in {len(order)} modules)",
        "",
        "| module | names |",
        "|---|---|",
    ]
    for module in order:
        names = " · ".join(f"[`{n}`](#{n})" for n in sorted(by_module[module], key=str.lower))
        out.append(f"| [`{module}`](#module-{module}) | {names} |")
    out.append("")
    for module in order:
        mod = importlib.import_module(f"poslib.{module}")
        out += [f"## {anchor('module-' + module)}`poslib.{module}`", "", summary(mod), ""]
        for name in sorted(by_module[module], key=str.lower):
            out += entry(name, module)
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api.md is out of date")
    args = parser.parse_args()
    text = render()
    current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
    if args.check:
        if current != text:
            sys.exit("docs/api.md is out of date: run python scripts/api_reference.py")
        return
    if current != text:
        OUT.write_text(text, encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(poslib.__all__)} names, {'updated' if current != text else 'unchanged'}")


if __name__ == "__main__":
    main()
