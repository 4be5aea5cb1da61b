"""Warm start: the failing tests, their failures and the code they reach, gathered before the first turn.

Deterministic (same project and run, same text) and within a character budget, most relevant first: each
failure and its test's source, then the project code at the traceback's frames (innermost first), then the
project functions the test calls (resolved through its imports), then what those call, then fixtures.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixloop.project import is_source_dir, is_test_path, outside_sources, python_files
from fixloop.pytest_runner.locate import split_test_id, test_functions
from fixloop.pytest_runner.results import TestOutcome, TestRun

HEADER = (
    "Context gathered before your first turn. "
    "Line numbers are for reference only: quote code without them."
)
TRACEBACK_CAP = 1500
MAX_LINE = 400
WINDOW = 6  # lines either side of the focus line when a function is too long for the budget
MAX_FALLBACK_MATCHES = 2
MAX_SCAN_FILES = 3000
MAX_CALL_DEPTH = 3  # the test's callees, theirs, and theirs
MAX_PER_LEVEL = 12
MAX_EXPANDED = 10  # failing tests shown for one module or class id
_BUILTINS = frozenset(dir(builtins))
_BUILTIN_METHODS = frozenset(name for kind in (list, dict, str) for name in dir(kind))
_SYNTAX_AT = re.compile(r'File "([^"]+)", line (\d+)')
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+(?=>)")  # object reprs differ from run to run
_Def = ast.FunctionDef | ast.AsyncFunctionDef


def build_warm_start(root: Path, run: TestRun, test_ids: Sequence[str], budget_chars: int = 6000) -> str:
    """The warm-start text for `test_ids` after `run`; "" when there is nothing to say."""
    builder = _Builder(Path(root).resolve(), run)
    blocks = builder.blocks(list(dict.fromkeys(test_ids)))
    return _assemble(blocks, budget_chars)[: max(0, budget_chars)]


@dataclass(frozen=True)
class _Snippet:
    """Lines of one project file to show: a few ranges (a class line and a method, say)."""

    path: str  # relative to the root, '/' separators
    ranges: tuple[tuple[int, int], ...]
    note: str
    focus: int | None = None  # the line that matters most (raised here, failing assertion)


@dataclass(frozen=True)
class _Block:
    text: str
    shorter: str | None = None  # a smaller form to use when `text` does not fit
    essential: bool = False  # trimmed to fit rather than left out
    label: str = ""  # how to name it when left out


class _Source:
    """One parsed project file: lines, tree, imports and top-level definitions."""

    def __init__(self, path: Path, rel: str, text: str) -> None:
        self.path = path
        self.rel = rel
        self.lines = text.splitlines()
        try:
            self.tree: ast.Module | None = ast.parse(text)
        except (SyntaxError, ValueError):
            self.tree = None
        self.imports: dict[str, tuple[str, int, str | None]] = {}  # name -> (module, level, attribute)
        self.defs: dict[str, ast.stmt] = {}
        if self.tree is None:
            return
        for node in self.tree.body:
            self._index(node)

    def _index(self, node: ast.stmt) -> None:
        if isinstance(node, _Def | ast.ClassDef):
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


class _Builder:
    def __init__(self, root: Path, run: TestRun) -> None:
        self.root = root
        self.run = run
        self.sources: dict[str, _Source | None] = {}
        self._project_files: list[str] | None = None

    # ---- files --------------------------------------------------------------------------------------

    def source(self, rel: str) -> _Source | None:
        if rel not in self.sources:
            path = self.root / rel
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                self.sources[rel] = None
            else:
                self.sources[rel] = _Source(path, rel, text)
        return self.sources[rel]

    def rel(self, path: Path) -> str | None:
        try:
            rel = path.resolve().relative_to(self.root)
        except (ValueError, OSError):
            return None
        return None if outside_sources(rel.as_posix()) else rel.as_posix()

    def project_files(self) -> list[str]:
        """Project .py files that are not tests, sorted (the project model's walk over the sources)."""
        if self._project_files is None:
            files = python_files(self.root, limit=MAX_SCAN_FILES)
            self._project_files = [rel for rel in files if not is_test_path(rel)]
        return self._project_files

    # ---- blocks -------------------------------------------------------------------------------------

    def blocks(self, test_ids: list[str]) -> list[_Block]:
        """Blocks, most relevant first: per failure its test and the code it reaches, then the rest."""
        groups: dict[object, list[str]] = {}
        for test_id in self.expand(test_ids):
            outcome = self.run.outcome(test_id)
            key: object = (outcome.message, outcome.location) if outcome and outcome.failing else test_id
            groups.setdefault(key, []).append(test_id)

        blocks: list[_Block] = []
        shown: list[_Snippet] = []
        seen_texts: set[str] = set()
        later: list[list[_Snippet]] = [[], []]  # calls of calls and constructors, then fixtures
        seen_tests: set[tuple[str, str]] = set()
        failed_at: set[tuple[str, str, str | None]] = set()

        def add_snippets(snippets: list[_Snippet]) -> None:
            for snippet in snippets:
                if any(_covers(other, snippet) for other in shown):
                    continue
                shown.append(snippet)
                block = self.code_block(snippet)
                if block.text not in seen_texts:
                    seen_texts.add(block.text)
                    blocks.append(block)

        for index, members in enumerate(groups.values()):
            lead = members[0]
            outcome = self.run.outcome(lead)
            path, name, _ = split_test_id(lead)
            # A second parametrized case failing on the same line needs no second traceback.
            where = (path, name, outcome.location if outcome else None)
            brief = where in failed_at
            blocks.append(self.failure_block(lead, members[1:], outcome, brief=brief, first=not index))
            failed_at.add(where)
            for test_id in members:
                test_key = split_test_id(test_id)[:2]
                if test_key in seen_tests:
                    continue
                seen_tests.add(test_key)
                test = self.test_snippet(test_id, self.run.outcome(test_id))
                if test is not None:
                    shown.append(test)
                    blocks.append(self.code_block(test, essential=not index))
            try:
                frames, calls, deeper, fixtures = self.related(lead, outcome)
            except (RecursionError, ValueError, OSError):  # best effort: a strange file costs its code only
                frames, calls, deeper, fixtures = [], [], [], []
            add_snippets(frames)
            add_snippets(calls)
            later[0] += deeper
            later[1] += fixtures
        for tier in later:
            add_snippets(tier)
        return blocks

    def expand(self, test_ids: list[str]) -> list[str]:
        """Module and class ids ("tests/test_x.py", "...::TestC") stand for their failing tests."""
        expanded: list[str] = []
        for test_id in test_ids:
            if test_id in self.run.results:
                expanded.append(test_id)
                continue
            inside = [
                tid
                for tid, outcome in self.run.results.items()
                if outcome.failing and tid.startswith((test_id + "::", test_id + "["))
            ]
            expanded += inside[:MAX_EXPANDED] if inside else [test_id]
        return list(dict.fromkeys(expanded))

    def failure_block(
        self, test_id: str, same: list[str], outcome: TestOutcome | None, brief: bool, first: bool
    ) -> _Block:
        lines = [f"## Failing test: {test_id}"]
        if same:
            lines.append(f"(fails the same way: {', '.join(same)})")
        if outcome is None:
            lines.append("No result in the last run.")
            lines += [f"Collection error: {error}" for error in self.run.errors]
            if self.run.timed_out:
                hung = f" while {self.run.hung_test} was running" if self.run.hung_test else ""
                lines.append(f"The run timed out{hung}.")
        else:
            where = f" (in {outcome.when})" if outcome.when not in ("call", "") else ""
            message = f": {outcome.message}" if outcome.message else ""
            lines.append(f"Outcome: {outcome.outcome}{where}{message}")
            if outcome.traceback and not brief:
                lines.append("Traceback:")
                lines.append(_clip_traceback(_ADDRESS.sub("", outcome.traceback), TRACEBACK_CAP))
        text = "\n".join(lines)
        short = "\n".join(lines[: 3 if same else 2])
        return _Block(text, shorter=short, essential=first, label=f"failure of {test_id}")

    def code_block(self, snippet: _Snippet, essential: bool = False) -> _Block:
        source = self.source(snippet.path)
        lines = source.lines if source else []
        text = _render(snippet, lines)
        shorter = None
        if snippet.focus is not None:
            window = _window(snippet, lines)
            if window != snippet:
                shorter = _render(window, lines)
        label = f"{snippet.path} lines {_ranges_text(snippet.ranges)}"
        return _Block(text, shorter=shorter, essential=essential, label=label)

    # ---- the test ------------------------------------------------------------------------------------

    def test_snippet(self, test_id: str, outcome: TestOutcome | None) -> _Snippet | None:
        path, name, _ = split_test_id(test_id)
        source = self.source(path)
        if source is None or source.tree is None or not name:
            return None
        found = self.find_test(source, name)
        if found is None:
            return None
        node, classes = found
        ranges = [(c.lineno, c.lineno) for c in classes] + [(_start(node), node.end_lineno or node.lineno)]
        focus = None
        if outcome is not None:
            frame = outcome.frame_in(path)
            if frame is not None and ranges[-1][0] <= frame.line <= ranges[-1][1]:
                focus = frame.line
        return _Snippet(path, _merge(ranges), "the test", focus)

    def find_test(self, source: _Source, name: str) -> tuple[ast.stmt, list[ast.ClassDef]] | None:
        """The test's def and enclosing classes; an inherited test method is found in its base class."""
        assert source.tree is not None
        found = _find_qualified(source.tree, name.split("::"))
        if found is not None:
            return found
        tests = test_functions("\n".join(source.lines))
        wanted = next((t.def_line for t in tests if t.test_id_suffix == name), None)
        for node, classes in _walk_defs(source.tree):
            if node.lineno == wanted:
                return node, classes
        return None

    # ---- related code --------------------------------------------------------------------------------

    def related(
        self, test_id: str, outcome: TestOutcome | None
    ) -> tuple[list[_Snippet], list[_Snippet], list[_Snippet], list[_Snippet]]:
        path, name, _ = split_test_id(test_id)
        frames: list[_Snippet] = []
        if outcome is not None and outcome.failing:
            bad_syntax = self.syntax_error(outcome)
            if bad_syntax is not None:
                frames.append(bad_syntax)
            innermost = bad_syntax is None
            timeout = outcome.message.startswith("Timeout:")
            for frame in reversed(outcome.frames):
                note = ("stopped here" if timeout else "raised here") if innermost else "in the traceback"
                snippet = self.enclosing(frame.path, frame.line, note)
                innermost = False
                if snippet is not None:
                    frames.append(snippet)
        source = self.source(path)
        calls: list[_Snippet] = []
        deeper: list[_Snippet] = []
        fixtures: list[_Snippet] = []
        if source is None or source.tree is None or not name:
            return frames, calls, deeper, fixtures
        found = self.find_test(source, name)
        if found is None:
            return frames, calls, deeper, fixtures
        node, classes = found
        first_level = self.callees(source, node, classes[-1] if classes else None)
        for target_source, target, owner in first_level:
            # Constructors matter less than the functions and methods the test calls.
            tier = deeper if isinstance(target, ast.ClassDef) else calls
            tier.append(self.def_snippet(target_source, target, owner, "called by the test"))
        # Breadth first through what those call, a few levels down: the bug is often in a helper.
        visited = {(t[0].rel, t[1].lineno) for t in first_level}
        level = [t for t in first_level if isinstance(t[1], _Def)]
        for _ in range(MAX_CALL_DEPTH - 1):
            following: list[tuple[_Source, ast.stmt, ast.ClassDef | None]] = []
            for target_source, target, owner in level:
                assert isinstance(target, _Def)
                note = f"called by {target.name}"
                for inner in self.callees(target_source, target, owner):
                    key = (inner[0].rel, inner[1].lineno)
                    if key in visited or len(following) >= MAX_PER_LEVEL:
                        continue
                    visited.add(key)
                    deeper.append(self.def_snippet(*inner, note))
                    if isinstance(inner[1], _Def):
                        following.append(inner)
            level = following
        if isinstance(node, _Def):
            fixtures = self.fixtures(source, node)
        return frames, calls, deeper, fixtures

    def syntax_error(self, outcome: TestOutcome) -> _Snippet | None:
        """The lines around a syntax error in a project file: it is no frame, pytest only names it."""
        if not outcome.message.startswith(("SyntaxError", "IndentationError", "TabError")):
            return None
        match = _SYNTAX_AT.search(outcome.traceback)
        if match is None:
            return None
        path = Path(match.group(1))
        rel = self.rel(path if path.is_absolute() else self.root / path)
        return self.enclosing(rel, int(match.group(2)), "syntax error here") if rel else None

    def enclosing(self, rel: str, line: int, note: str) -> _Snippet | None:
        source = self.source(rel)
        if source is None or not source.lines:
            return None
        best: tuple[_Def, list[ast.ClassDef]] | None = None
        if source.tree is not None:
            for node, classes in _walk_defs(source.tree):
                if _start(node) <= line <= (node.end_lineno or node.lineno) and (
                    best is None or node.lineno >= best[0].lineno
                ):
                    best = (node, classes)
        if best is None:
            low, high = max(1, line - 3), min(len(source.lines), line + 3)
            return _Snippet(rel, ((low, high),), f"{note}: line {line}", line)
        node, classes = best
        ranges = [(c.lineno, c.lineno) for c in classes[-1:]]
        ranges.append((_start(node), node.end_lineno or node.lineno))
        return _Snippet(rel, _merge(ranges), f"{_qualname(node, classes)}, {note}: line {line}", line)

    def def_snippet(self, source: _Source, node: ast.stmt, owner: ast.ClassDef | None, note: str) -> _Snippet:
        if isinstance(node, ast.ClassDef):
            # The constructor: __init__ with its class line, else the class body up to the first method
            # (the fields of a dataclass, say).
            init = next((n for n in node.body if isinstance(n, _Def) and n.name == "__init__"), None)
            if init is not None:
                ranges = [(node.lineno, node.lineno), (_start(init), init.end_lineno or init.lineno)]
                return _Snippet(source.rel, _merge(ranges), f"{node.name}.__init__, {note}")
            first_def = next((n for n in node.body if isinstance(n, _Def)), None)
            end = _start(first_def) - 1 if first_def is not None else node.end_lineno or node.lineno
            while end > node.lineno and not source.lines[end - 1].strip():
                end -= 1
            return _Snippet(source.rel, ((_start(node), end),), f"class {node.name}, {note}")
        assert isinstance(node, _Def)
        ranges = [(owner.lineno, owner.lineno)] if owner is not None else []
        ranges.append((_start(node), node.end_lineno or node.lineno))
        name = f"{owner.name}.{node.name}" if owner is not None else node.name
        return _Snippet(source.rel, _merge(ranges), f"{name}, {note}")

    def callees(
        self, source: _Source, func: ast.stmt, owner: ast.ClassDef | None
    ) -> list[tuple[_Source, ast.stmt, ast.ClassDef | None]]:
        """Project functions and classes that `func` calls, in source order, deduplicated."""
        local_classes: dict[str, tuple[_Source, ast.ClassDef]] = {}
        found: list[tuple[_Source, ast.stmt, ast.ClassDef | None]] = []
        keys: set[tuple[str, int]] = set()

        def add(target: tuple[_Source, ast.stmt, ast.ClassDef | None] | None) -> None:
            if target is None or is_test_path(target[0].rel):
                return
            key = (target[0].rel, target[1].lineno)
            if key not in keys and target[1] is not func:
                keys.add(key)
                found.append(target)

        for node in _ordered_walk(func):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                cls = self.resolve_class(source, node.value.func, local_classes)
                for target in node.targets:
                    if isinstance(target, ast.Name) and cls is not None:
                        local_classes[target.id] = cls
            if not isinstance(node, ast.Call):
                continue
            callee = node.func
            if isinstance(callee, ast.Name):
                resolved = self.resolve_name(source, callee.id)
                if resolved is None and callee.id not in _BUILTINS and callee.id not in source.imports:
                    for match in self.search_def(callee.id):
                        add(match)
                    continue
                if resolved is not None and isinstance(resolved[1], _Def | ast.ClassDef):
                    add((resolved[0], resolved[1], None))
            elif isinstance(callee, ast.Attribute):
                for match in self.resolve_attribute(source, callee, local_classes, owner):
                    add(match)
        return found

    def resolve_attribute(
        self,
        source: _Source,
        callee: ast.Attribute,
        local_classes: dict[str, tuple[_Source, ast.ClassDef]],
        owner: ast.ClassDef | None,
    ) -> list[tuple[_Source, ast.stmt, ast.ClassDef | None]]:
        value, attr = callee.value, callee.attr
        if isinstance(value, ast.Name) and value.id in ("self", "cls") and owner is not None:
            method = _method(owner, attr)
            return [(source, method, owner)] if method is not None else []
        if isinstance(value, ast.Name) and value.id in local_classes:
            cls_source, cls = local_classes[value.id]
            method = self.find_method(cls_source, cls, attr)
            return [method] if method is not None else []
        if isinstance(value, ast.Call):
            cls_ref = self.resolve_class(source, value.func, local_classes)
            if cls_ref is not None:
                method = self.find_method(cls_ref[0], cls_ref[1], attr)
                return [method] if method is not None else []
            return []
        base = self.resolve_expr(source, value)
        if base is not None:
            base_source, base_node = base
            if base_node is None:  # a module
                target = self.resolve_in_module(base_source, attr, 0)
                if target is not None and isinstance(target[1], _Def | ast.ClassDef):
                    return [(target[0], target[1], None)]
                return []
            if isinstance(base_node, ast.ClassDef):
                method = self.find_method(base_source, base_node, attr)
                return [method] if method is not None else []
            return []
        if isinstance(value, ast.Name) and (value.id in source.imports or value.id in _BUILTINS):
            return []  # a library module or object: not project code
        if isinstance(value, ast.Constant):
            return []
        if attr in _BUILTIN_METHODS:
            return []  # most likely a list, dict or str method: searching the project would mislead
        return self.search_def(attr)

    def resolve_class(
        self, source: _Source, func: ast.expr, local_classes: dict[str, tuple[_Source, ast.ClassDef]]
    ) -> tuple[_Source, ast.ClassDef] | None:
        resolved = self.resolve_expr(source, func)
        if resolved is not None and isinstance(resolved[1], ast.ClassDef):
            return resolved[0], resolved[1]
        return None

    def resolve_expr(self, source: _Source, expr: ast.expr) -> tuple[_Source, ast.stmt | None] | None:
        """A Name or dotted Attribute in `source` -> (file, definition), definition None for a module."""
        if isinstance(expr, ast.Name):
            return self.resolve_name(source, expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.resolve_expr(source, expr.value)
            if base is None:
                return None
            if base[1] is None:
                return self.resolve_in_module(base[0], expr.attr, 0)
            if isinstance(base[1], ast.ClassDef):
                method = _method(base[1], expr.attr)
                return (base[0], method) if method is not None else None
        return None

    def resolve_name(self, source: _Source, name: str) -> tuple[_Source, ast.stmt | None] | None:
        if name in source.defs:
            return source, source.defs[name]
        if name in source.imports:
            return self.resolve_import(source, *source.imports[name], depth=0)
        return None

    def resolve_import(
        self, source: _Source, module: str, level: int, attr: str | None, depth: int
    ) -> tuple[_Source, ast.stmt | None] | None:
        if attr is None:
            target = self.module_source(source, module, level)
            return (target, None) if target is not None else None
        submodule = self.module_source(source, f"{module}.{attr}" if module else attr, level)
        package = self.module_source(source, module, level) if module or level else None
        if package is not None:
            found = self.resolve_in_module(package, attr, depth + 1)
            if found is not None:
                return found
        if submodule is not None:
            return submodule, None
        return None

    def resolve_in_module(
        self, module: _Source, name: str, depth: int
    ) -> tuple[_Source, ast.stmt | None] | None:
        if depth > 4:
            return None
        if name in module.defs:
            return module, module.defs[name]
        if name in module.imports:
            return self.resolve_import(module, *module.imports[name], depth=depth + 1)
        if module.path.name == "__init__.py":
            sub = module.path.parent / name
            for candidate in (sub.with_suffix(".py"), sub / "__init__.py"):
                rel = self.rel(candidate) if candidate.is_file() else None
                if rel is not None:
                    found = self.source(rel)
                    if found is not None:
                        return found, None
        return None

    def module_source(self, source: _Source, module: str, level: int) -> _Source | None:
        parts = [p for p in module.split(".") if p]
        if level:
            base = source.path.parent
            for _ in range(level - 1):
                base = base.parent
            bases = [base]
        else:
            bases = self.search_bases(source)
        for base in bases:
            target = base.joinpath(*parts)
            for candidate in (target.with_suffix(".py") if parts else None, target / "__init__.py"):
                if candidate is not None and candidate.is_file():
                    rel = self.rel(candidate)
                    if rel is not None:
                        return self.source(rel)
        return None

    def search_bases(self, source: _Source) -> list[Path]:
        bases = [self.root / "src", self.root]
        parent = source.path.parent
        while parent != self.root and self.root in parent.parents:
            bases.append(parent)
            parent = parent.parent
        try:
            children = sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError:
            children = []
        bases += [p for p in children if is_source_dir(p.name) and p not in bases]
        return list(dict.fromkeys(bases))

    def find_method(
        self, source: _Source, cls: ast.ClassDef, name: str, depth: int = 0
    ) -> tuple[_Source, ast.stmt, ast.ClassDef | None] | None:
        method = _method(cls, name)
        if method is not None:
            return source, method, cls
        if depth > 3:
            return None
        for base in cls.bases:
            resolved = self.resolve_expr(source, base)
            if resolved is not None and isinstance(resolved[1], ast.ClassDef):
                found = self.find_method(resolved[0], resolved[1], name, depth + 1)
                if found is not None:
                    return found
        return None

    def search_def(self, name: str) -> list[tuple[_Source, ast.stmt, ast.ClassDef | None]]:
        """`def name` anywhere in the project's non-test code; nothing when the name is too common."""
        if name.startswith("__") or name in _BUILTINS:
            return []
        matches: list[tuple[_Source, ast.stmt, ast.ClassDef | None]] = []
        pattern = re.compile(rf"\bdef\s+{re.escape(name)}\s*\(")
        for rel in self.project_files():
            if rel not in self.sources:  # a cheap text check before parsing a file nobody needed yet
                try:
                    text = (self.root / rel).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if not pattern.search(text):
                    continue
            source = self.source(rel)
            if source is None or source.tree is None:
                continue
            for node, classes in _walk_defs(source.tree):
                if node.name == name:
                    matches.append((source, node, classes[-1] if classes else None))
                    if len(matches) > MAX_FALLBACK_MATCHES:
                        return []
        return matches

    def fixtures(self, source: _Source, func: _Def) -> list[_Snippet]:
        names = [a.arg for a in func.args.args + func.args.kwonlyargs if a.arg not in ("self", "cls")]
        modules = [source]
        directory = source.path.parent
        while True:
            rel = self.rel(directory / "conftest.py")
            if rel is not None and (directory / "conftest.py").is_file():
                conftest = self.source(rel)
                if conftest is not None:
                    modules.append(conftest)
            if directory == self.root or self.root not in directory.parents:
                break
            directory = directory.parent
        found: list[_Snippet] = []
        for name in names:
            for module in modules:
                node = _fixture(module, name)
                if node is not None:
                    ranges = ((_start(node), node.end_lineno or node.lineno),)
                    found.append(_Snippet(module.rel, ranges, f"fixture {name}"))
                    break
        return found


# ---- ast helpers --------------------------------------------------------------------------------------


def _start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _walk_defs(
    tree: ast.AST, classes: tuple[ast.ClassDef, ...] = ()
) -> Iterator[tuple[_Def, list[ast.ClassDef]]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, _Def):
            yield node, list(classes)
            yield from _walk_defs(node, classes)
        elif isinstance(node, ast.ClassDef):
            yield from _walk_defs(node, (*classes, node))
        else:
            yield from _walk_defs(node, classes)


def _ordered_walk(node: ast.AST) -> Iterator[ast.AST]:
    """Nodes in source order (ast.walk is breadth-first)."""
    for child in ast.iter_child_nodes(node):
        yield child
        yield from _ordered_walk(child)


def _find_qualified(tree: ast.Module, names: list[str]) -> tuple[ast.stmt, list[ast.ClassDef]] | None:
    body: list[ast.stmt] = tree.body
    classes: list[ast.ClassDef] = []
    for index, name in enumerate(names):
        last = index == len(names) - 1
        match = None
        for node in body:
            if last and isinstance(node, _Def) and node.name == name:
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


def _method(cls: ast.ClassDef, name: str) -> _Def | None:
    found = None
    for node in cls.body:
        if isinstance(node, _Def) and node.name == name:
            found = node  # the last definition wins, as at runtime
    return found


def _fixture(module: _Source, name: str) -> _Def | None:
    if module.tree is None:
        return None
    for node in module.tree.body:
        if not isinstance(node, _Def):
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


def _qualname(node: _Def, classes: list[ast.ClassDef]) -> str:
    return ".".join([c.name for c in classes] + [node.name])


# ---- rendering and budget ----------------------------------------------------------------------------


def _merge(ranges: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


def _covers(shown: _Snippet, snippet: _Snippet) -> bool:
    if shown.path != snippet.path:
        return False
    return all(any(lo <= low and high <= hi for lo, hi in shown.ranges) for low, high in snippet.ranges)


def _ranges_text(ranges: Sequence[tuple[int, int]]) -> str:
    return ", ".join(str(low) if low == high else f"{low}-{high}" for low, high in ranges)


def _render(snippet: _Snippet, lines: list[str]) -> str:
    width = max(4, len(str(snippet.ranges[-1][1])))
    out = [f"### {snippet.path} (lines {_ranges_text(snippet.ranges)}) {snippet.note}"]
    for index, (low, high) in enumerate(snippet.ranges):
        if index:
            out.append(f"{'':>{width}} | ...")
        for number in range(low, min(high, len(lines)) + 1):
            line = lines[number - 1].rstrip()
            if len(line) > MAX_LINE:  # generated data or minified code: the start says enough
                line = line[:MAX_LINE] + " ... (line cut)"
            out.append(f"{number:>{width}} | {line}".rstrip())
    return "\n".join(out)


def _window(snippet: _Snippet, lines: list[str]) -> _Snippet:
    """The snippet cut to the focus line's neighbourhood, keeping the ranges' first lines (class, def)."""
    assert snippet.focus is not None
    focus = snippet.focus
    ranges = [(low, low) for low, _ in snippet.ranges]
    ranges.append((max(1, focus - WINDOW), min(len(lines), focus + WINDOW)))
    return _Snippet(snippet.path, _merge(ranges), snippet.note, focus)


def _clip_traceback(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    size = 0
    for line in reversed(lines):  # the end (the E lines) matters most
        if size + len(line) + 1 > cap - 40:
            break
        kept.append(line)
        size += len(line) + 1
    return "... (traceback trimmed)\n" + "\n".join(reversed(kept))


def _assemble(blocks: list[_Block], budget: int) -> str:
    if not blocks:
        return ""
    parts = [HEADER]
    used = len(HEADER)
    left_out: list[str] = []
    reserve = 160
    for block in blocks:
        room = budget - used - reserve - 2
        for text in (block.text, block.shorter):
            if text is not None and len(text) <= room:
                parts.append(text)
                used += len(text) + 2
                break
        else:
            if block.essential and room > 200:
                text = block.text[: room - 20].rsplit("\n", 1)[0] + "\n... (cut for space)"
                parts.append(text)
                used += len(text) + 2
            elif block.label:
                left_out.append(block.label)
    if left_out:
        note = "Left out for space (read_file them if needed): " + "; ".join(left_out)
        room = budget - used - 2
        if len(note) > room:
            note = note[: max(0, room - 3)] + "..."
        if note.strip("."):
            parts.append(note)
    return "\n\n".join(parts)
