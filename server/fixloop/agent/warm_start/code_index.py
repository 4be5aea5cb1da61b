"""The code index of the warm start: parsed project files and name resolution (imports, methods, callees)."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

from fixloop.agent.warm_start.source_file import (
    FunctionNode,
    SourceFile,
    method_of,
    ordered_walk,
    walk_defs,
)
from fixloop.project import is_source_dir, is_test_path, outside_sources, python_files
from fixloop.secret_files import refusal

MAX_FALLBACK_MATCHES = 2
MAX_SCAN_FILES = 3000
BUILTINS = frozenset(dir(builtins))
BUILTIN_METHODS = frozenset(name for kind in (list, dict, str) for name in dir(kind))


class CodeIndex:
    """The project's Python files, parsed on demand, and name resolution across them (imports, methods)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sources: dict[str, SourceFile | None] = {}
        self._project_files: list[str] | None = None

    def source(self, rel: str) -> SourceFile | None:
        if rel not in self.sources:
            path = self.root / rel
            if not self._may_read(path):
                self.sources[rel] = None
                return None
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                self.sources[rel] = None
            else:
                self.sources[rel] = SourceFile(path, rel, text)
        return self.sources[rel]

    def _may_read(self, path: Path) -> bool:
        """Whether the warm start may show this file: inside the project, not (a link to) a secret."""
        try:
            real = path.resolve().relative_to(self.root.resolve()).as_posix()
        except (ValueError, OSError):
            return False
        return refusal(real) is None and refusal(path.relative_to(self.root).as_posix()) is None

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

    def callees(
        self, source: SourceFile, func: ast.stmt, owner: ast.ClassDef | None
    ) -> list[tuple[SourceFile, ast.stmt, ast.ClassDef | None]]:
        """Project functions and classes that `func` calls, in source order, deduplicated."""
        local_classes: dict[str, tuple[SourceFile, ast.ClassDef]] = {}
        found: list[tuple[SourceFile, ast.stmt, ast.ClassDef | None]] = []
        keys: set[tuple[str, int]] = set()

        def add(target: tuple[SourceFile, ast.stmt, ast.ClassDef | None] | None) -> None:
            if target is None or is_test_path(target[0].rel):
                return
            key = (target[0].rel, target[1].lineno)
            if key not in keys and target[1] is not func:
                keys.add(key)
                found.append(target)

        for node in ordered_walk(func):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                cls = self.resolve_class(source, node.value.func, local_classes)
                for target in node.targets:
                    if isinstance(target, ast.Name) and cls is not None:
                        local_classes[target.id] = cls
            if isinstance(node, ast.Call):
                for match in self.called(source, node.func, local_classes, owner):
                    add(match)
        return found

    def called(
        self,
        source: SourceFile,
        callee: ast.expr,
        local_classes: dict[str, tuple[SourceFile, ast.ClassDef]],
        owner: ast.ClassDef | None,
    ) -> list[tuple[SourceFile, ast.stmt, ast.ClassDef | None]]:
        """What one call's callee may be: a resolved name, a method, or a project def found by name."""
        if isinstance(callee, ast.Attribute):
            return self.resolve_attribute(source, callee, local_classes, owner)
        if not isinstance(callee, ast.Name):
            return []
        resolved = self.resolve_name(source, callee.id)
        if resolved is None and callee.id not in BUILTINS and callee.id not in source.imports:
            return self.search_def(callee.id)
        if resolved is not None and isinstance(resolved[1], FunctionNode | ast.ClassDef):
            return [(resolved[0], resolved[1], None)]
        return []

    def resolve_attribute(
        self,
        source: SourceFile,
        callee: ast.Attribute,
        local_classes: dict[str, tuple[SourceFile, ast.ClassDef]],
        owner: ast.ClassDef | None,
    ) -> list[tuple[SourceFile, ast.stmt, ast.ClassDef | None]]:
        value, attr = callee.value, callee.attr
        if isinstance(value, ast.Name) and value.id in ("self", "cls") and owner is not None:
            method = method_of(owner, attr)
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
                if target is not None and isinstance(target[1], FunctionNode | ast.ClassDef):
                    return [(target[0], target[1], None)]
                return []
            if isinstance(base_node, ast.ClassDef):
                method = self.find_method(base_source, base_node, attr)
                return [method] if method is not None else []
            return []
        if isinstance(value, ast.Name) and (value.id in source.imports or value.id in BUILTINS):
            return []  # a library module or object: not project code
        if isinstance(value, ast.Constant):
            return []
        if attr in BUILTIN_METHODS:
            return []  # most likely a list, dict or str method: searching the project would mislead
        return self.search_def(attr)

    def resolve_class(
        self, source: SourceFile, func: ast.expr, local_classes: dict[str, tuple[SourceFile, ast.ClassDef]]
    ) -> tuple[SourceFile, ast.ClassDef] | None:
        resolved = self.resolve_expr(source, func)
        if resolved is not None and isinstance(resolved[1], ast.ClassDef):
            return resolved[0], resolved[1]
        return None

    def resolve_expr(self, source: SourceFile, expr: ast.expr) -> tuple[SourceFile, ast.stmt | None] | None:
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
                method = method_of(base[1], expr.attr)
                return (base[0], method) if method is not None else None
        return None

    def resolve_name(self, source: SourceFile, name: str) -> tuple[SourceFile, ast.stmt | None] | None:
        if name in source.defs:
            return source, source.defs[name]
        if name in source.imports:
            return self.resolve_import(source, *source.imports[name], depth=0)
        return None

    def resolve_import(
        self, source: SourceFile, module: str, level: int, attr: str | None, depth: int
    ) -> tuple[SourceFile, ast.stmt | None] | None:
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
        self, module: SourceFile, name: str, depth: int
    ) -> tuple[SourceFile, ast.stmt | None] | None:
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

    def module_source(self, source: SourceFile, module: str, level: int) -> SourceFile | None:
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

    def search_bases(self, source: SourceFile) -> list[Path]:
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
        self, source: SourceFile, cls: ast.ClassDef, name: str, depth: int = 0
    ) -> tuple[SourceFile, ast.stmt, ast.ClassDef | None] | None:
        method = method_of(cls, name)
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

    def search_def(self, name: str) -> list[tuple[SourceFile, ast.stmt, ast.ClassDef | None]]:
        """`def name` anywhere in the project's non-test code; nothing when the name is too common."""
        if name.startswith("__") or name in BUILTINS:
            return []
        matches: list[tuple[SourceFile, ast.stmt, ast.ClassDef | None]] = []
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
            for node, classes in walk_defs(source.tree):
                if node.name == name:
                    matches.append((source, node, classes[-1] if classes else None))
                    if len(matches) > MAX_FALLBACK_MATCHES:
                        return []
        return matches
