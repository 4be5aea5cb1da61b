"""Where a code answer's definition goes: the one of its name at any depth, chosen by decorators and hints."""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from fixloop.python_syntax import parse

Def = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class PlacementHints:
    """What tells two definitions of one name apart: the suspects, best first ("Class.method" or
    "path::Class.method", as localization names them), and the lines the failing test runs, by file."""

    suspects: tuple[str, ...] = ()
    lines_run: Mapping[str, Collection[int]] = field(default_factory=dict)
    # False (the codeAnswerPlacement setting off, for ablations): only top-level functions and a method
    # whose name is unique are replaced, answers are parsed as written, assignments alone match no file
    anywhere: bool = True


@dataclass(frozen=True)
class Definition:
    """A function or method of a file, with the names it is known by."""

    node: Def
    qualname: str  # classes and name, as the suspects name it: Cart.count
    shown: str  # every enclosing class and function: outer.inner, Cart.count
    top_level: bool


def definitions(tree: ast.Module) -> Iterator[Definition]:
    """Every function of a module at any depth, in source order."""
    yield from _walk(tree, (), ())


def _walk(node: ast.AST, classes: tuple[str, ...], scopes: tuple[str, ...]) -> Iterator[Definition]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, Def):
            yield Definition(
                child, ".".join((*classes, child.name)), ".".join((*scopes, child.name)), not scopes
            )
            yield from _walk(child, classes, (*scopes, child.name))
        elif isinstance(child, ast.ClassDef):
            yield from _walk(child, (*classes, child.name), (*scopes, child.name))
        elif not isinstance(child, ast.expr):
            yield from _walk(child, classes, scopes)


def choose(
    new: Def, found: Sequence[Definition], path: str, hints: PlacementHints | None
) -> tuple[Definition, str | None]:
    """The definition `new` replaces among those of its name, and, when there was a choice, a note saying
    which one and why: same decorators, then the best suspect, then the one the failing test runs, then a
    method for a `self` answer (a function otherwise), then the first in the file."""
    if len(found) == 1:
        return found[0], None
    hints = hints or PlacementHints()
    pool, why = list(found), "the first in the file"
    same = [item for item in pool if _decorators(item.node) == _decorators(new)]
    if same and len(same) < len(pool):
        pool, why = same, "the one with the same decorators"
    for suspect in hints.suspects:
        named = [item for item in pool if _is(suspect, item, path)]
        if named and len(pool) > 1:
            pool, why = named[:1], "the suspect"
            break
    run = [item for item in pool if _runs(item.node, hints.lines_run.get(path, ()))]
    if run and len(run) < len(pool):
        pool, why = run, "the one the failing test runs"
    shaped = [item for item in pool if _is_method_shaped(new) == (item.qualname != item.node.name)]
    if shaped and len(shaped) < len(pool):
        pool, why = shaped, "the method" if _is_method_shaped(new) else "the function"
    chosen = pool[0]
    names = ", ".join(item.shown for item in found)
    return chosen, f"{new.name} is defined {len(found)} times ({names}): replaced {chosen.shown}, {why}"


def _decorators(node: Def) -> list[str]:
    return [ast.dump(item) for item in node.decorator_list]


def _is(suspect: str, item: Definition, path: str) -> bool:
    where, _, name = suspect.rpartition("::")
    return name in (item.qualname, item.shown) and (not where or where == path)


def _runs(node: Def, lines: Collection[int]) -> bool:
    first = node.body[0].lineno if node.body else node.lineno
    return any(line in lines for line in range(first, (node.end_lineno or node.lineno) + 1))


def _is_method_shaped(node: Def) -> bool:
    arguments = node.args.posonlyargs + node.args.args
    return bool(arguments) and arguments[0].arg in ("self", "cls")


def parsed(code: str) -> tuple[str, ast.Module]:
    """`code` parsed, moved left first when it is written at a class's indentation: the whole block (comment
    lines left of it do not count), or all but its first line (a method whose first line lost its
    indentation when copied). Raises the first SyntaxError when no reading parses."""
    try:
        return code, parse(code)
    except SyntaxError as error:
        first_error = error
    for moved in (_dedented(code, skip_first=False), _dedented(code, skip_first=True)):
        if moved != code:
            try:
                return moved, parse(moved)
            except SyntaxError:
                continue
    raise first_error


def _dedented(code: str, *, skip_first: bool) -> str:
    lines = code.splitlines(True)
    written = [
        index for index, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")
    ]
    measured = written[1:] if skip_first else written
    if not measured:
        return code
    margin = min(len(lines[index]) - len(lines[index].lstrip(" \t")) for index in measured)
    if margin == 0:
        return code
    out = []
    for line in lines:
        leading = len(line) - len(line.lstrip(" \t"))
        out.append(line[margin:] if leading >= margin else line.lstrip(" \t"))
    return "".join(out)
