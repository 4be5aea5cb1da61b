"""Map pytest node ids to source positions and back, by reading test files with `ast` (lines are 1-based)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from fixloop.python_syntax import parse

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class TestFunction:
    """A test pytest would collect: `test_x` or `TestC::test_m` (nested classes joined with '::')."""

    __test__ = False  # not a pytest test class

    test_id_suffix: str
    def_line: int  # the `def` line
    start_line: int  # first decorator line, or the `def` line
    end_line: int


def test_functions(source: str) -> list[TestFunction]:
    """Tests defined in a test module's source, in source order; [] when it does not parse."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[TestFunction] = []
    _collect(tree.body, "", found, {})
    return found


test_functions.__test__ = False  # type: ignore[attr-defined]  # a helper, not a pytest test


def _collect(
    body: list[ast.stmt], prefix: str, found: list[TestFunction], classes: dict[str, ast.ClassDef]
) -> None:
    for node in body:
        if isinstance(node, _FunctionNode) and node.name.startswith("test"):
            found.append(_test(prefix + node.name, node))
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
            if not _is_test_class(node):
                continue
            _collect(node.body, f"{prefix}{node.name}::", found, dict(classes))
            # Test methods inherited from a base class in the same module run under this class too.
            own = {n.name for n in node.body if isinstance(n, _FunctionNode)}
            for method in _inherited(node, classes, own):
                found.append(_test(f"{prefix}{node.name}::{method.name}", method))


def _test(suffix: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> TestFunction:
    return TestFunction(
        test_id_suffix=suffix,
        def_line=node.lineno,
        start_line=min([node.lineno, *(d.lineno for d in node.decorator_list)]),
        end_line=node.end_lineno or node.lineno,
    )


def _inherited(
    node: ast.ClassDef, classes: dict[str, ast.ClassDef], seen: set[str], depth: int = 0
) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    methods: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for base in node.bases:
        parent = classes.get(base.id) if isinstance(base, ast.Name) else None
        if parent is None or parent is node or depth > 5:
            continue
        for item in parent.body:
            if isinstance(item, _FunctionNode) and item.name.startswith("test") and item.name not in seen:
                seen.add(item.name)
                methods.append(item)
        methods += _inherited(parent, classes, seen, depth + 1)
    return methods


def _is_test_class(node: ast.ClassDef) -> bool:
    if node.name.startswith("Test"):
        # pytest skips (with a warning) a test class that has its own __init__.
        return not any(isinstance(n, _FunctionNode) and n.name == "__init__" for n in node.body)
    for base in node.bases:  # unittest.TestCase subclasses are collected whatever their name
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if name.endswith("TestCase"):
            return True
    return False


def test_id_at(root: Path, path: Path, line: int, source: str | None = None) -> str | None:
    """The node id of the test enclosing `line` of `path`, e.g. "tests/test_x.py::TestC::test_m"."""
    rel = _relative(root, path)
    if rel is None:
        return None
    if source is None:
        try:
            source = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    enclosing = [t for t in test_functions(source) if t.start_line <= line <= t.end_line]
    if not enclosing:
        return None
    innermost = max(enclosing, key=lambda t: t.start_line)
    return f"{rel}::{innermost.test_id_suffix}"


test_id_at.__test__ = False  # type: ignore[attr-defined]  # a helper, not a pytest test


def position_of(root: Path, test_id: str) -> tuple[Path, int] | None:
    """The file and `def` line of a node id (a parametrized "[...]" suffix is ignored); None if not found."""
    path_part, sep, rest = test_id.partition("::")
    if not sep or not rest:
        return None
    bracket = rest.find("[")
    if bracket >= 0:
        rest = rest[:bracket]
    path = Path(root) / path_part
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for test in test_functions(source):
        if test.test_id_suffix == rest:
            return path, test.def_line
    return None


def split_test_id(test_id: str) -> tuple[str, str, str]:
    """("tests/test_x.py", "TestC::test_m", "[1-2]") for "tests/test_x.py::TestC::test_m[1-2]"."""
    path_part, _, rest = test_id.partition("::")
    bracket = rest.find("[")
    if bracket >= 0:
        return path_part, rest[:bracket], rest[bracket:]
    return path_part, rest, ""


def _relative(root: Path, path: Path) -> str | None:
    path = Path(path)
    if not path.is_absolute():
        path = Path(root) / path
    try:
        return path.resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return None
