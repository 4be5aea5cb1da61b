"""A reply written as code (fenced ```python blocks of whole functions) turned into file edits by AST."""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from fixloop.python_syntax import parse
from fixloop.tools.code_placement import Definition, PlacementHints, choose, definitions, parsed
from fixloop.tools.fences import PATH_LINE, fence_language, reopens
from fixloop.tools.textfile import GUTTER

_PYTHON_TAGS = ("", "python", "python3", "py")
_PATH = re.compile(r"([\w./\\-]+\.py)\b")
_Def = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block of a reply, with the file path named just before it or in its first line."""

    code: str
    path: str | None = None


@dataclass(frozen=True)
class ReplyEdit:
    """What a code reply does to the files it was applied to: new texts, one line per change, problems."""

    files: dict[str, str] = field(default_factory=dict)  # changed files only: path -> new text
    applied: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()  # which of several definitions of one name was replaced, and why


@dataclass(frozen=True)
class _Splice:
    start: int  # 0-based line index where the replaced lines begin
    end: int  # 0-based index after the last replaced line (start == end: an insertion)
    lines: tuple[str, ...]
    order: int = 0


def code_blocks(reply: str) -> list[CodeBlock]:
    """The fenced Python blocks of `reply` (bare ``` fences too), each with its file path if named: on the
    line before the fence, on the block's first line (bare or as a comment), or between a fence and a
    second opening fence (small models write "```python / path.py / ```python"). A block the reply ends
    inside (a cut reply) counts too."""
    blocks: list[CodeBlock] = []
    lines = reply.splitlines(keepends=True)
    inside = False
    body: list[str] = []
    path: str | None = None
    for index, line in enumerate(lines):
        tag = fence_language(line)
        if tag is None:
            if inside:
                body.append(line)
            continue
        if not inside:
            inside, body = tag in _PYTHON_TAGS, []
            path = _named_path(lines[index - 1] if index else "")
            if not inside:  # another language's block: read past it
                lines[index + 1 :] = _past_block(lines[index + 1 :])
            continue
        written = [text for text in body if text.strip()]
        if reopens(tag, written):
            path = (_named_path(written[0]) if written else None) or path  # re-opened after a path line
            body = []
            continue
        blocks.append(_block(body, path))
        inside = False
    if inside and "".join(body).strip():
        blocks.append(_block(body, path))
    return blocks


def _block(body: list[str], path: str | None) -> CodeBlock:
    code = "".join(body)
    first = code.lstrip().split("\n", 1)[0]
    if (first.startswith("#") and _PATH.search(first)) or PATH_LINE.match(first):
        path = _named_path(first)
        if PATH_LINE.match(first):
            code = code.lstrip().split("\n", 1)[1] if "\n" in code.lstrip() else ""
    # a method given alone keeps its class's indentation: dedented, it is found by its name
    return CodeBlock(textwrap.dedent(_strip_gutter(code)), path)


def _named_path(line: str) -> str | None:
    named = _PATH.findall(line)
    return named[-1].replace("\\", "/").lstrip("./") if named else None


def _past_block(rest: list[str]) -> list[str]:
    """The lines after a non-Python block's closing fence (all of them blanked up to it)."""
    for offset, line in enumerate(rest):
        if fence_language(line) is not None:
            return ["\n"] * (offset + 1) + rest[offset + 1 :]
    return ["\n"] * len(rest)


def apply_code_reply(reply: str, files: Mapping[str, str]) -> ReplyEdit:
    """Apply the code blocks of `reply` to `files` (path -> text): see `apply_code_blocks`."""
    blocks = code_blocks(reply)
    if not blocks:
        return ReplyEdit(problems=("the reply has no ```python block with code",))
    return apply_code_blocks(blocks, files)


def apply_code_blocks(
    blocks: Sequence[CodeBlock], files: Mapping[str, str], hints: PlacementHints | None = None
) -> ReplyEdit:
    """Each block's functions, methods, classes and module constants replace those of the same name in
    its file (the one it names, else the one defining most of its names), wherever they are defined (a
    nested function or a method is replaced in place, re-indented; several of one name are told apart by
    `hints`); new functions and imports are added; everything else in the file stays byte for byte. A
    block written at a class's indentation is moved left first. Files outside `files` are never touched."""
    texts = dict(files)
    applied: list[str] = []
    problems: list[str] = []
    choices: list[str] = []
    anywhere = hints is None or hints.anywhere
    for number, block in enumerate(blocks, start=1):
        where = f"block {number}" if len(blocks) > 1 else "the code block"
        try:
            code, tree = parsed(block.code) if anywhere else (block.code, parse(block.code))
        except SyntaxError as error:
            problems.append(f"{where} is not valid Python (line {error.lineno}: {error.msg})")
            continue
        path = _target(block, tree, texts, anywhere)
        if path is None:
            names = ", ".join(_names(tree)) or "no function"
            problems.append(f"{where} ({names}) matches no function of the files shown")
            continue
        try:
            target = parse(texts[path])
        except SyntaxError:
            problems.append(f"{path} does not parse, so {where} cannot be placed in it")
            continue
        splices, notes, chosen = _splices(code, tree, texts[path], target, _Where(path, hints))
        new_text = _splice(texts[path], splices)
        if new_text == texts[path]:
            problems.append(f"{where} changes nothing in {path}")
            continue
        texts[path] = new_text
        applied.extend(f"{path}: {note}" for note in notes)
        choices.extend(f"{path}: {note}" for note in chosen)
    changed = {path: text for path, text in texts.items() if text != files.get(path)}
    return ReplyEdit(changed, tuple(applied), tuple(problems), tuple(choices))


@dataclass(frozen=True)
class _Where:
    path: str
    hints: PlacementHints | None


# -- which file a block belongs to ------------------------------------------------------------------


def _names(tree: ast.Module) -> list[str]:
    names = []
    for node in tree.body:
        if isinstance(node, _Def | ast.ClassDef):
            names.append(node.name)
    return names


def _defined(tree: ast.Module, anywhere: bool = True) -> set[str]:
    """The names a module defines: its functions at any depth (also as Class.method), its top-level classes
    and module-level assignments (`anywhere` off: top-level functions and classes' own methods only)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif _assigned(node) and anywhere:
            names.add(f"={_assigned(node)}")
    for found in definitions(tree):
        if anywhere or _shallow(found):
            names.update((found.node.name, found.qualname))
    return names


def _shallow(found: Definition) -> bool:
    """A top-level function or a method of a top-level class."""
    return found.top_level or (found.shown == found.qualname and found.shown.count(".") == 1)


def _target(block: CodeBlock, tree: ast.Module, texts: Mapping[str, str], anywhere: bool) -> str | None:
    """The file the block belongs to: the one it names, unless that file defines none of the block's names
    and another does (small models copy a path from the prompt's example); else the one defining most."""
    wanted = _defined(tree, anywhere)
    scores: dict[str, int] = {}
    for path, text in texts.items():
        try:
            scores[path] = len(wanted & _defined(parse(text), anywhere))
        except SyntaxError:
            continue
    best = max(scores, key=lambda path: scores[path], default=None)
    best = best if best is not None and scores[best] > 0 else None
    if block.path is not None:
        for path in texts:
            if path == block.path or PurePosixPath(path).match(block.path):
                return path if scores.get(path) or best is None else best
    return best


# -- what to replace ------------------------------------------------------------------------------


def _span(node: ast.stmt) -> tuple[int, int]:
    """0-based [start, end) lines of a statement, decorators included."""
    decorators = getattr(node, "decorator_list", None) or []
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return start - 1, node.end_lineno or node.lineno


def _source(code_lines: list[str], node: ast.stmt, indent: str) -> tuple[str, ...]:
    """The node's lines from the block, moved from its own indentation to `indent`."""
    start, end = _span(node)
    out = []
    for line in code_lines[start:end]:
        if not line.strip():
            out.append(line.lstrip(" \t"))
            continue
        leading = len(line) - len(line.lstrip(" \t"))
        out.append(indent + line[min(leading, node.col_offset) :])
    return tuple(out)


def _indent(lines: list[str], node: ast.stmt) -> str:
    line = lines[_span(node)[0]]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _assigned(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _key(node: ast.stmt) -> str | None:
    if isinstance(node, _Def | ast.ClassDef):
        return node.name
    name = _assigned(node)
    return f"={name}" if name else None


def _splices(
    code: str, tree: ast.Module, text: str, target: ast.Module, where: _Where
) -> tuple[list[_Splice], list[str], list[str]]:
    code_lines = (code if code.endswith("\n") else code + "\n").splitlines(True)
    lines = text.splitlines(True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    top = {_key(node): node for node in target.body if _key(node) and not isinstance(node, _Def)}
    anywhere = where.hints is None or where.hints.anywhere
    functions = [found for found in definitions(target) if anywhere or _shallow(found)]
    splices: list[_Splice] = []
    notes: list[str] = []
    chosen: list[str] = []
    end_of_file = len(lines)
    for node in tree.body:
        key = _key(node)
        old = top.get(key) if key else None
        named = [item for item in functions if item.node.name == node.name] if isinstance(node, _Def) else []
        if not anywhere:  # as before the setting: the top-level function, else the one method of the name
            named = [item for item in named if item.top_level] or (named if len(named) == 1 else [])
        if isinstance(node, ast.ClassDef) and isinstance(old, ast.ClassDef):
            more, more_notes = _class_splices(code_lines, node, lines, old)
            splices += more
            notes += more_notes
        elif old is not None:
            splices.append(_Splice(*_span(old), _source(code_lines, node, _indent(lines, old))))
            notes.append(f"replaced {_kind(node)} {_label(node)}")
        elif isinstance(node, _Def) and named:
            found, choice = choose(node, named, where.path, where.hints)
            splices.append(_Splice(*_span(found.node), _source(code_lines, node, _indent(lines, found.node))))
            notes.append(f"replaced {_place(found)} {found.shown}")
            chosen += [choice] if choice else []
        elif isinstance(node, _Def | ast.ClassDef):
            body = _source(code_lines, node, "")
            splices.append(_Splice(end_of_file, end_of_file, ("\n", "\n", *body), order=len(splices)))
            notes.append(f"added {_kind(node)} {node.name}")
        elif isinstance(node, ast.Import | ast.ImportFrom) and not _has_import(target, node):
            at = _import_line(target)
            splices.append(_Splice(at, at, _source(code_lines, node, ""), order=len(splices)))
            notes.append(f"added {ast.unparse(node)}")
    return [_newlines(splice, newline) for splice in _without_overlaps(splices)], notes, chosen


def _place(found: Definition) -> str:
    if found.top_level:
        return "function"
    return "method" if found.shown == found.qualname else "nested function"


def _class_splices(
    code_lines: list[str], new: ast.ClassDef, lines: list[str], old: ast.ClassDef
) -> tuple[list[_Splice], list[str]]:
    members = {_key(item): item for item in old.body if _key(item) and not isinstance(item, _Def)}
    methods = [found for found in definitions(ast.Module([old], [])) if found.shown.count(".") == 1]
    body_indent = _indent(lines, old.body[0]) if old.body else _indent(lines, old) + "    "
    splices, notes = [], []
    end = _span(old)[1]
    for item in new.body:
        key = _key(item)
        if key is None:
            continue
        current = members.get(key)
        same_name = [found for found in methods if isinstance(item, _Def) and found.node.name == item.name]
        if same_name and isinstance(item, _Def):
            current = choose(item, same_name, "", None)[0].node
        if current is not None:
            splices.append(_Splice(*_span(current), _source(code_lines, item, _indent(lines, current))))
            notes.append(f"replaced {_kind(item)} {new.name}.{_label(item)}")
        elif isinstance(item, _Def):
            body = _source(code_lines, item, body_indent)
            splices.append(_Splice(end, end, ("\n", *body), order=len(splices)))
            notes.append(f"added method {new.name}.{item.name}")
    return splices, notes


def _kind(node: ast.stmt) -> str:
    if isinstance(node, ast.ClassDef):
        return "class"
    return "function" if isinstance(node, _Def) else "assignment"


def _label(node: ast.stmt) -> str:
    return getattr(node, "name", None) or _assigned(node) or "?"


def _has_import(target: ast.Module, node: ast.Import | ast.ImportFrom) -> bool:
    wanted = ast.dump(node)
    return any(ast.dump(item) == wanted for item in target.body)


def _import_line(target: ast.Module) -> int:
    """Where a new import goes: after the last top-level import, else after the docstring."""
    at = 0
    for index, node in enumerate(target.body):
        if isinstance(node, ast.Import | ast.ImportFrom):
            at = node.end_lineno or node.lineno
        elif index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            at = node.end_lineno or node.lineno
    return at


def _newlines(splice: _Splice, newline: str) -> _Splice:
    if newline == "\n":
        return splice
    lines = tuple(
        line[:-1] + newline if line.endswith("\n") and not line.endswith("\r\n") else line
        for line in splice.lines
    )
    return _Splice(splice.start, splice.end, lines, splice.order)


def _without_overlaps(splices: list[_Splice]) -> list[_Splice]:
    """The first of two replacements of the same lines wins (a method given twice, say)."""
    kept: list[_Splice] = []
    for splice in splices:
        if splice.start == splice.end or not any(
            other.start < splice.end and splice.start < other.end for other in kept
        ):
            kept.append(splice)
    return kept


def _splice(text: str, splices: list[_Splice]) -> str:
    lines = text.splitlines(True)
    for splice in sorted(splices, key=lambda s: (s.start, s.end, s.order), reverse=True):
        lines[splice.start : splice.end] = list(splice.lines)
    return "".join(lines)


def _strip_gutter(code: str) -> str:
    lines = code.splitlines(True)
    numbered = [line for line in lines if line.strip()]
    if numbered and all(GUTTER.match(line) for line in numbered):
        return "".join(GUTTER.sub("", line, count=1) if line.strip() else line for line in lines)
    return code
