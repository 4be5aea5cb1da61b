"""Writes the module map of docs/architecture.md from the tree, so that the page cannot go stale.

The layers come from the import-linter contracts in pyproject.toml ([tool.importlinter]), each module's
job from the first paragraph of its docstring. The generated part sits between two marker lines of the
page; everything else on the page is written by hand.

    python scripts/architecture.py            # rewrite the module map
    python scripts/architecture.py --check    # exit 1 when the page differs from what would be written
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "server" / "fixloop"
PAGE = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- BEGIN module map: written by `python scripts/architecture.py`; do not edit by hand -->"
END = "<!-- END module map -->"
REGENERATE = "python scripts/architecture.py"
# A code span (one or two backticks), kept as it is; everything between spans is escaped for Markdown.
CODE_SPAN = re.compile(r"(?<!`)(`{1,2})(?!`)(.+?)(?<!`)\1(?!`)")


def contracts() -> list[dict]:
    """The import-linter contracts of pyproject.toml."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def layer_lines() -> list[str]:
    """The layers contract, top to bottom, as written there without `fixloop.`."""
    (contract,) = [c for c in contracts() if c["type"] == "layers"]
    return [" ".join(layer.replace("fixloop.", "").split()) for layer in contract["layers"]]


def layers() -> list[list[str]]:
    """The layers, top to bottom, each as its module names."""
    return [[name.strip() for name in re.split(r"[|:]", line)] for line in layer_lines()]


def job(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line, as Markdown text."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not doc:
        return "*(no docstring: add a one-line one)*"
    first = " ".join(doc.strip().split("\n\n")[0].split())
    return markdown_text(first)


def markdown_text(text: str) -> str:
    """Text with its code spans kept and the rest escaped: no raw HTML, no stray fences or emphasis."""
    parts, last = [], 0
    for span in CODE_SPAN.finditer(text):
        parts.append(escape(text[last : span.start()]))
        parts.append(span.group(0))
        last = span.end()
    parts.append(escape(text[last:]))
    return "".join(parts)


def escape(text: str) -> str:
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("`", "&#96;").replace("*", "\\*")


def modules_of(name: str) -> list[Path]:
    """The files of one layer entry: a package's modules (subpackages after), or the one module."""
    folder = PACKAGE / name.replace(".", "/")
    if folder.is_dir():
        own = sorted(p for p in folder.glob("*.py") if p.name != "__init__.py")
        subpackages = sorted(p for p in folder.iterdir() if (p / "__init__.py").is_file())
        nested = [m for sub in subpackages for m in [sub / "__init__.py", *modules_of_folder(sub)]]
        return own + nested
    module = folder.with_suffix(".py")
    return [module] if module.is_file() else []


def modules_of_folder(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if p.name != "__init__.py")


def entry(path: Path) -> str:
    rel = path.relative_to(PACKAGE).as_posix()
    shown = rel.removesuffix("__init__.py") if path.name == "__init__.py" and rel != "__init__.py" else rel
    return f"- `{shown}` — {job(path)}"


def picture() -> list[str]:
    """The layers as a text picture, top to bottom."""
    lines = ["```text"]
    for depth, layer in enumerate(layer_lines()):
        if depth:
            lines.append("    │")
        lines.append(("    ▼ " if depth else "      ") + layer)
    return [*lines, "```"]


def render() -> str:
    """The generated part of the page, markers included."""
    stack = layers()
    out = [BEGIN, "", "## The layers", ""]
    out += [
        "Imports go down only: a module may import the layers below its own, never one above "
        "(import-linter checks it; `tests/unit/test_imports_keep_to_the_layers.py`). "
        "On one line, `|` separates independent siblings and `:` siblings that may import each other.",
        "",
        *picture(),
        "",
        "The other contracts:",
        "",
    ]
    out += [f"- {c['name']}" for c in contracts() if c["type"] != "layers"]
    out += ["", "## Modules by layer and package", ""]
    out += ["Every module of `server/fixloop/`, with the first paragraph of its docstring.", ""]
    top = PACKAGE / "__init__.py"
    placed: set[Path] = {top}
    out += [f"`__init__.py` — {job(top)}", ""]
    for number, layer in enumerate(stack, start=1):
        out += [f"### Layer {number}: " + ", ".join(f"`{name}`" for name in layer), ""]
        for name in layer:
            files = modules_of(name)
            placed.update(files)
            package = PACKAGE / name.replace(".", "/") / "__init__.py"
            if package.is_file():
                placed.add(package)
                out += [f"#### `{name}/`", "", job(package), ""]
            if not files and not package.is_file():
                out += [f"- `{name}` — *(named by the layers contract, not in the tree)*"]
            out += [entry(p) for p in files] + [""]
    rest = sorted(p for p in PACKAGE.rglob("*.py") if p not in placed)
    if rest:
        out += ["### Not in a layer contract", ""]
        out += ["Modules the layers contract does not name yet.", ""]
        out += [entry(p) for p in rest] + [""]
    return "\n".join([*out, END])


def page_with(generated: str, page: str) -> str:
    before, found, after = page.partition(BEGIN)
    _, found_end, rest = after.partition(END)
    if not found or not found_end:
        raise SystemExit(f"{PAGE.relative_to(ROOT)} has lost its markers ({BEGIN!r} ... {END!r})")
    return before + generated + rest


def main(argv: list[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    wanted = page_with(render(), page)
    if "--check" in argv:
        if wanted != page:
            print(f"{PAGE.relative_to(ROOT)} is out of date with the tree: run {REGENERATE}", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
