"""Import analysis shared by the baseline and the proposal: which modules and files a source imports."""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

from fixloop.project import module_names
from fixloop.python_syntax import parse
from fixloop.result import FileChange


def imports_of(path: str, text: str) -> tuple[set[str], set[str]]:
    """(absolute dotted names, relative-import file stems as paths) that `text` imports."""
    names: set[str] = set()
    paths: set[str] = set()
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return names, paths
    package = PurePosixPath(path).parent
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                names.update(".".join(parts[: index + 1]) for index in range(len(parts)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.parent
                stem = base.joinpath(*node.module.split(".")) if node.module else base
                paths.add(stem.as_posix())
                paths.update((stem / alias.name).as_posix() for alias in node.names)
            elif node.module:
                parts = node.module.split(".")
                names.update(".".join(parts[: index + 1]) for index in range(len(parts)))
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module",
            "__import__",
        ):
            for argument in node.args[:1]:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    names.add(argument.value)
    return names, paths


def imported(change: FileChange, names: set[str], paths: set[str]) -> bool:
    stem = PurePosixPath(change.path).with_suffix("")
    if stem.name == "__init__":
        stem = stem.parent
    return bool(module_names(change.path) & names) or stem.as_posix() in paths
