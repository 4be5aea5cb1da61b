"""A forgiving JSON reader: JSON as small models write it (single quotes, raw newlines, literals, cut off)."""

from __future__ import annotations

import ast
import json
from typing import Any

from fixloop.python_syntax import parse


def unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'`":
        try:
            value = loads_loose(s) if s[0] != "`" else s[1:-1]
        except ValueError:
            return s[1:-1]
        if isinstance(value, str):
            return value
    return s


_CLOSERS = {"{": "}", "[": "]", "(": ")"}
_STRING_STARTS = frozenset("{[(,:=")


class JsonScan:
    """Where the bracketed value opening at `start` ends, read incrementally as the text grows.

    A quote opens a string only where a value or key may begin, so apostrophes and the unescaped quotes
    models put in code do not derail the count. Parentheses count only in a value that opens with one
    (code outside a broken string has them).
    """

    def __init__(self, start: int, parens: bool = False) -> None:
        self.start = start
        self.parens = parens
        self._at = start
        self._stack: list[str] = []
        self._quote = ""
        self._prev = ""
        self.end: int | None = None  # the end once closed; -1 when the value is broken

    def advance(self, text: str) -> int | None:
        """Read what was added since the last call; the end, -1 when broken, None while still open."""
        i, n, stack, parens = self._at, len(text), self._stack, self.parens
        quote, prev, end = self._quote, self._prev, self.end
        while end is None and i < n:
            c = text[i]
            if quote:
                if c == "\\" and i + 1 >= n:
                    break  # the escaped character has not arrived yet
                i += 2 if c == "\\" else 1
                if c == quote:
                    quote, prev = "", c
                continue
            if c in "\"'" and (prev == "" or prev in _STRING_STARTS):
                quote = c
            elif c in _CLOSERS and (parens or c != "("):
                stack.append(_CLOSERS[c])
            elif c in ")]}" and (parens or c != ")"):
                if not stack or stack[-1] != c:
                    end = -1
                else:
                    stack.pop()
                    end = None if stack else i + 1
            if not c.isspace():
                prev = c
            i += 1
        self._at, self._quote, self._prev, self.end = i, quote, prev, end
        return end

    def closers(self) -> str:
        """What would complete a value cut off at the end of the text read ("" when nothing can)."""
        if self.end is not None or self._quote:
            return ""
        return "".join(reversed(self._stack))


def scan(text: str, start: int) -> tuple[int | None, str]:
    """Find the end of the bracketed value at ``start``, respecting strings (see `JsonScan`).

    Returns ``(end, "")`` for a balanced value, else ``(None, closers)`` where ``closers``
    would complete a value cut off at the end of the text (empty when it cannot be completed).
    """
    reading = JsonScan(start, parens=text[start] == "(")
    end = reading.advance(text)
    if end is not None:
        return (end, "") if end >= 0 else (None, "")
    return None, reading.closers()


def _closes_string(s: str, j: int) -> bool:
    """Whether a double quote just before ``j`` plausibly ends a JSON string."""
    n = len(s)
    while j < n and s[j] in " \t\n":
        j += 1
    if j >= n or s[j] in ":}]":
        return True
    if s[j] == ",":
        j += 1
        while j < n and s[j] in " \t\n":
            j += 1
        return j >= n or s[j] in "\"'}]{["
    return False


_HEX = frozenset("0123456789abcdefABCDEF")
_WORDS = {"True": "true", "False": "false", "None": "null"}


_IN_STRING = {'"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _repair(s: str, guess_quotes: bool = False) -> str:
    """Rewrite near-JSON as JSON: raw control characters and bad escapes inside strings,
    single-quoted strings, trailing commas, Python's True/False/None; with ``guess_quotes``
    also escape double quotes that do not look like the end of a string."""
    out: list[str] = []
    quote = ""
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if not quote:
            text, i = _outside_string(s, i)
            quote = c if c in "\"'" else ""
        elif c == "\\":
            text, i = _escape(s, i)
        elif c == quote and not (guess_quotes and quote == '"' and not _closes_string(s, i + 1)):
            text, i, quote = '"', i + 1, ""
        else:
            text, i = _IN_STRING.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 else c), i + 1
        out.append(text)
    return "".join(out)


def _escape(s: str, i: int) -> tuple[str, int]:
    """A backslash inside a string at `i`: a valid escape kept, \\' unescaped, any other doubled."""
    nxt = s[i + 1] if i + 1 < len(s) else ""
    if nxt == "'":
        return "'", i + 2
    if nxt == "u" and len(s) >= i + 6 and all(h in _HEX for h in s[i + 2 : i + 6]):
        return s[i : i + 6], i + 6
    if nxt and nxt in '"\\/bfnrt':
        return "\\" + nxt, i + 2
    return "\\\\", i + 1


def _outside_string(s: str, i: int) -> tuple[str, int]:
    """One step outside strings: a quote opens one, a trailing comma goes, Python's words become JSON's."""
    c, n = s[i], len(s)
    if c in "\"'":
        return '"', i + 1
    if c == ",":
        j = i + 1
        while j < n and s[j].isspace():
            j += 1
        if j < n and s[j] in "}]":
            return "", i + 1
    if c.isalpha() or c == "_":
        j = i
        while j < n and (s[j].isalnum() or s[j] == "_"):
            j += 1
        return _WORDS.get(s[i:j], s[i:j]), j
    return c, i + 1


class JsonWords(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        value = {"true": True, "false": False, "null": None}.get(node.id, node)
        return node if value is node else ast.copy_location(ast.Constant(value), node)


def _literal(s: str) -> Any:
    """A Python literal (JSON's true/false/null allowed) as JSON values; sets and bytes are refused."""
    tree = parse(s.strip(), mode="eval")
    return as_json(ast.literal_eval(JsonWords().visit(tree).body))


def as_json(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise ValueError(str(exc)) from None


def loads_loose(s: str) -> Any:
    """Parse JSON as models write it: strict JSON, then repaired JSON, then a Python literal."""
    s = s.strip()
    try:
        return json.loads(s, strict=False)
    except ValueError:
        pass
    try:
        return json.loads(_repair(s), strict=False)
    except ValueError:
        pass
    try:
        return _literal(s)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    try:
        return json.loads(_repair(s, guess_quotes=True), strict=False)
    except ValueError:
        raise ValueError("not JSON") from None


def json_object(text: str) -> dict[str, Any] | None:
    """`text` (starting with { or [) read forgivingly as a JSON object; None when it is not one."""
    if not text.startswith(("{", "[")):
        return None
    try:
        value = loads_loose(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
