"""One parsed project file (lines, tree, imports, top-level definitions) and the ast helpers that read it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from fixloop.python_syntax import parse

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


class SourceFile:
    """One parsed project file: lines, tree, imports and top-level definitions."""

    def __init__(self, path: Path, rel: str, text: str) -> None:
        self.path = path
        self.rel = rel
        self.lines = text.splitlines()
        try:
            self.tree: ast.Module | None = parse(text)
        except (SyntaxError, ValueError):
            self.tree = None
        self.imports: dict[str, tuple[str, int, str | None]] = {}  # name -> (module, level, attribute)
        self.defs: dict[str, ast.stmt] = {}
        if self.tree is None:
            return
        for node in self.tree.body:
            self._index(node)

    def _index(self, node: ast.stmt) -> None:
        if isinstance(node, FunctionNode | ast.ClassDef):
            self.defs[node.name] = node
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.imports[alias.asname] = (alias.name, 0, None)
                else:
                    first = alias.name.split(".")[0]
                    self.imports.setdefault(first, (first, 0, None))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    self.imports[alias.asname or alias.name] = (node.module or "", node.level, alias.name)
        elif isinstance(node, ast.If | ast.Try):  # `try: from x import y` and `if TYPE_CHECKING:` blocks
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    self._index(child)


def def_start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def walk_defs(
    tree: ast.AST, classes: tuple[ast.ClassDef, ...] = ()
) -> Iterator[tuple[FunctionNode, list[ast.ClassDef]]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, FunctionNode):
            yield node, list(classes)
            yield from walk_defs(node, classes)
        elif isinstance(node, ast.ClassDef):
            yield from walk_defs(node, (*classes, node))
        else:
            yield from walk_defs(node, classes)


def ordered_walk(node: ast.AST) -> Iterator[ast.AST]:
    """Nodes in source order (ast.walk is breadth-first)."""
    for child in ast.iter_child_nodes(node):
        yield child
        yield from ordered_walk(child)


def find_qualified(tree: ast.Module, names: list[str]) -> tuple[ast.stmt, list[ast.ClassDef]] | None:
    body: list[ast.stmt] = tree.body
    classes: list[ast.ClassDef] = []
    for index, name in enumerate(names):
        last = index == len(names) - 1
        match = None
        for node in body:
            if last and isinstance(node, FunctionNode) and node.name == name:
                match = node
            elif not last and isinstance(node, ast.ClassDef) and node.name == name:
                match = node
        if match is None:
            return None
        if last:
            return match, classes
        assert isinstance(match, ast.ClassDef)
        classes.append(match)
        body = match.body
    return None


def method_of(cls: ast.ClassDef, name: str) -> FunctionNode | None:
    found = None
    for node in cls.body:
        if isinstance(node, FunctionNode) and node.name == name:
            found = node  # the last definition wins, as at runtime
    return found


def fixture_of(module: SourceFile, name: str) -> FunctionNode | None:
    if module.tree is None:
        return None
    for node in module.tree.body:
        if not isinstance(node, FunctionNode):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            is_fixture = (isinstance(target, ast.Attribute) and target.attr == "fixture") or (
                isinstance(target, ast.Name) and target.id == "fixture"
            )
            if not is_fixture:
                continue
            alias = None
            if isinstance(decorator, ast.Call):
                for keyword in decorator.keywords:
                    if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                        alias = keyword.value.value
            if (alias or node.name) == name:
                return node
    return None


def qualname(node: FunctionNode, classes: list[ast.ClassDef]) -> str:
    return ".".join([c.name for c in classes] + [node.name])
