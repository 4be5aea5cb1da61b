"""One-token changes to a line of code (the mutation operators of program repair), each a candidate fix.

A classic bug is often one token: `<` for `<=`, `and` for `or`, a missing `not`, `max` for `min`, an
off-by-one constant or index, two arguments swapped. These changes are tried on the suspect lines before
the model is asked (mutant_round.py): cheap to make, judged by the same gate. Each change keeps the file
valid Python, and none touches a test file (the caller only passes code under test).
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from fixloop.python_syntax import parse

# token -> its replacements, most likely first (a comparison's last: its negation, an inverted condition)
SWAPS: dict[str, tuple[str, ...]] = {
    "<": ("<=", ">", ">="),
    "<=": ("<", ">=", ">"),
    ">": (">=", "<", "<="),
    ">=": (">", "<=", "<"),
    "==": ("!=",),
    "!=": ("==",),
    "+": ("-",),
    "-": ("+",),
    "*": ("/", "//"),
    "/": ("//", "*"),
    "//": ("/",),
    "+=": ("-=", "*="),
    "-=": ("+=",),
    "*=": ("+=",),
    "and": ("or",),
    "or": ("and",),
    "True": ("False",),
    "False": ("True",),
    "min": ("max",),
    "max": ("min",),
    "any": ("all",),
    "all": ("any",),
    "break": ("continue",),
    "continue": ("break",),
    "is": ("is not",),
    "in": ("not in",),
}


@dataclass(frozen=True)
class Mutant:
    """One change of one line: what it is, and the whole file after it."""

    line: int
    said: str  # e.g. "line 12: `<` → `<=`"
    text: str


MOST_NAMES = 6  # other variables a read may become
COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
            ast.AsyncFunctionDef, ast.ClassDef, ast.Match)  # fmt: skip
Span = tuple[int, int, str]  # (start, end) offsets in the file, and the text that replaces them


def mutants(text: str, line: int, *, wide: bool = False) -> list[Mutant]:
    """The one-token changes of `line` (1-based) that leave `text` valid Python, in the order they are
    tried: operators and names, constants ±1, a bound ±1, a condition negated, two arguments swapped; with
    `wide` the others instead (tried after those of every line): a variable read for another of its
    function, the statement (a one-line guard `if` with it) left out."""
    lines = io.StringIO(text, newline="").readlines()  # split as Python's tokenizer does, ends kept
    if not 1 <= line <= len(lines) or not lines[line - 1].strip():
        return []
    starts = [0]
    for one in lines:
        starts.append(starts[-1] + len(one))
    found: list[Mutant] = []
    seen: set[str] = set()
    for said, spans in (_wide_changes if wide else _changes)(text, line, lines, starts):
        new = _apply(text, spans)
        if new == text or new in seen or not _parses(new):
            continue
        seen.add(new)
        found.append(Mutant(line, f"line {line}: {said}", new))
    return found


def _changes(text: str, line: int, lines: list[str], starts: list[int]) -> Iterator[tuple[str, list[Span]]]:
    yield from _token_changes(lines[line - 1], starts[line - 1])
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return
    where = _Where(text, lines, starts)
    nodes = [node for node in ast.walk(tree) if getattr(node, "lineno", 0) == line]
    yield from _bound_changes(nodes, where)
    yield from _negations(nodes, where)
    yield from _argument_swaps(nodes, where)


def _wide_changes(
    text: str, line: int, lines: list[str], starts: list[int]
) -> Iterator[tuple[str, list[Span]]]:
    try:
        tree = parse(text)
    except (SyntaxError, ValueError):
        return
    where = _Where(text, lines, starts)
    function = _innermost_function(tree, line)
    if function is not None:
        yield from _variable_changes(function, line, where)
    yield from _deletions(tree, line, where)


def body_around(text: str, line: int) -> range:
    """The body lines of the innermost function holding `line` (empty when none, or not Python)."""
    try:
        function = _innermost_function(parse(text), line)
    except (SyntaxError, ValueError):
        return range(0)
    if function is None:
        return range(0)
    return range(function.body[0].lineno, (function.end_lineno or function.lineno) + 1)


def _innermost_function(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            if node.body[0].lineno <= line <= (node.end_lineno or 0):
                if found is None or node.lineno > found.lineno:
                    found = node
    return found


def _variable_changes(
    function: ast.FunctionDef | ast.AsyncFunctionDef, line: int, where: _Where
) -> Iterator[tuple[str, list[Span]]]:
    """Each variable read on the line (a parameter or a local of its function) replaced by another."""
    arguments = function.args
    names = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
    local = [name for name in dict.fromkeys(names) if name not in ("self", "cls")]
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.lineno == line):
            continue
        span = where.span(node)
        if span is None or node.id not in local:
            continue
        for other in [name for name in local if name != node.id][:MOST_NAMES]:
            yield f"`{node.id}` → `{other}`", [(span[0], span[1], other)]


def _deletions(tree: ast.Module, line: int, where: _Where) -> Iterator[tuple[str, list[Span]]]:
    """The simple statement on the line, or a guard `if` (one statement, no else) that starts there, left
    out (`pass` in its place)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.lineno != line:
            continue
        guard = isinstance(node, ast.If) and len(node.body) == 1 and not node.orelse
        simple = not isinstance(node, (*COMPOUND, ast.Pass)) and node.end_lineno == line
        if not (guard or simple) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        source = where.statement(node)
        if source is not None:
            first = source[2].splitlines()[0]
            yield f"`{first.strip()}` left out", [(source[0], source[1], "pass")]


def _token_changes(source_line: str, offset: int) -> Iterator[tuple[str, list[Span]]]:
    """Swapped operators and names, `not` dropped, whole numbers ±1."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source_line).readline))
    except (tokenize.TokenError, SyntaxError):
        tokens = []
    for token in tokens:
        if token.start[0] != 1 or token.end[0] != 1:
            continue
        start, end = offset + token.start[1], offset + token.end[1]
        word = token.string
        if token.type in (tokenize.OP, tokenize.NAME):
            for other in SWAPS.get(word, ()):
                yield f"`{word}` → `{other}`", [(start, end, other)]
            if word == "not":
                gap = len(source_line[token.end[1] :]) - len(source_line[token.end[1] :].lstrip(" "))
                yield "`not` removed", [(start, end + gap, "")]
        elif token.type == tokenize.NUMBER and word.isdigit():
            value = int(word)
            for other in (value + 1, value - 1):
                if other >= 0:
                    yield f"`{word}` → `{other}`", [(start, end, str(other))]


class _Where:
    """File offsets of AST nodes (their columns are UTF-8 byte offsets within their lines)."""

    def __init__(self, text: str, lines: list[str], starts: list[int]) -> None:
        self.text, self.lines, self.starts = text, lines, starts

    def span(self, node: ast.AST) -> tuple[int, int] | None:
        first, last = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0)
        if not first or first != last:
            return None  # one line only
        raw = self.lines[first - 1].encode("utf-8")
        begin = len(raw[: node.col_offset].decode("utf-8", "replace"))  # type: ignore[attr-defined]
        end = len(raw[: node.end_col_offset].decode("utf-8", "replace"))  # type: ignore[attr-defined]
        return self.starts[first - 1] + begin, self.starts[first - 1] + end

    def statement(self, node: ast.stmt) -> tuple[int, int, str] | None:
        """(start, end, text) of a statement that begins its line: from its first token to the end of
        its last line (None for `b = 2` in `a = 1; b = 2`)."""
        first, last = node.lineno, node.end_lineno or node.lineno
        line = self.lines[first - 1]
        indent = len(line) - len(line.lstrip())
        if node.col_offset != indent:  # indentation is ASCII: its bytes are its characters
            return None
        start = self.starts[first - 1] + indent
        end = self.starts[last - 1] + len(self.lines[last - 1].rstrip("\r\n"))
        return start, end, self.text[start:end]

    def source(self, node: ast.AST) -> str:
        where = self.span(node)
        return self.text[where[0] : where[1]] if where else ""


def _bound_changes(nodes: list[ast.AST], where: _Where) -> Iterator[tuple[str, list[Span]]]:
    """An index, a slice bound, the last argument of range() or a len() ±1 (a constant already is)."""
    bounds: list[ast.expr] = []
    for node in nodes:
        if isinstance(node, ast.Subscript):
            index = node.slice
            parts = [index.lower, index.upper] if isinstance(index, ast.Slice) else [index]
            bounds += [part for part in parts if part is not None]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            bounds += node.args[-1:]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
            bounds.append(node)
    for bound in bounds:
        if isinstance(bound, ast.Constant) or isinstance(bound, ast.Tuple):
            continue
        span, source = where.span(bound), where.source(bound)
        if span is None or not source:
            continue
        for sign in ("+", "-"):
            yield f"`{source}` → `{source} {sign} 1`", [(span[0], span[1], f"{source} {sign} 1")]


def _negations(nodes: list[ast.AST], where: _Where) -> Iterator[tuple[str, list[Span]]]:
    """The condition of an `if`, `elif`, `while` or conditional expression negated."""
    for node in nodes:
        if not isinstance(node, ast.If | ast.While | ast.IfExp):
            continue
        test = node.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            continue  # dropping the `not` is tried already
        span, source = where.span(test), where.source(test)
        if span is None or not source:
            continue
        simple = isinstance(test, ast.Name | ast.Attribute | ast.Call | ast.Subscript)
        negated = f"not {source}" if simple else f"not ({source})"
        yield f"`{source}` → `{negated}`", [(span[0], span[1], negated)]


def _argument_swaps(nodes: list[ast.AST], where: _Where) -> Iterator[tuple[str, list[Span]]]:
    """Two neighbouring positional arguments of a call swapped."""
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        for left, right in zip(node.args, node.args[1:], strict=False):
            if isinstance(left, ast.Starred) or isinstance(right, ast.Starred):
                continue
            first, second = where.span(left), where.span(right)
            if first is None or second is None:
                continue
            a, b = where.source(left), where.source(right)
            if a == b:
                continue
            yield f"`{a}, {b}` → `{b}, {a}`", [(first[0], first[1], b), (second[0], second[1], a)]


def _apply(text: str, spans: list[Span]) -> str:
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _parses(text: str) -> bool:
    try:
        parse(text)
    except (SyntaxError, ValueError):
        return False
    return True
