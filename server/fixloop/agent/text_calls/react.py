"""The ReAct text format: Thought / Action / Action Input lines, and the text the loop writes back."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from fixloop.agent.text_calls.loose_json import JsonWords, as_json, json_object, loads_loose, scan, unquote
from fixloop.agent.text_calls.shapes import (
    NAME_RE,
    Found,
    ParsedCall,
    arguments_of,
    calls_from_json,
    shapes_of,
)
from fixloop.python_syntax import parse
from fixloop.tools.fences import FENCE

REACT_STOP: tuple[str, ...] = ("\nObservation:",)
"""Stop sequences for the text protocol: generation ends before the model invents an observation."""


def format_react_call(name: str, arguments: dict[str, Any]) -> str:
    """The text-protocol form of a call, as the loop writes it back into the history."""
    return f"Action: {name}\nAction Input: {json.dumps(arguments, ensure_ascii=False)}"


def format_observation(text: str) -> str:
    """The user-message text that carries a tool result back in the text protocol."""
    return f"Observation: {text.rstrip()}"


LABEL_LEAD = r"[ \t]*[*_#]*[ \t]*"  # a label may be indented, bold, italic or a heading
_ACTION = r"Action(?:[ \t]*\d+)?"
_INPUT = r"Action[ _]?Input(?:[ \t]*\d+)?"


def _label(words: str, at_line_start: bool = True) -> re.Pattern[str]:
    """`words` written as a label ("Action:", "**Action 1:**"); anywhere when not `at_line_start`."""
    lead = "^" if at_line_start else ""
    return re.compile(rf"{lead}{LABEL_LEAD}(?:{words})[*_]*[ \t]*:[*_]*[ \t]*", re.I | re.M)


_ACTION_RE = _label(_ACTION)
_INPUT_RE = _label(_INPUT)
ACTION_LABEL = _label(_ACTION, at_line_start=False)
"""An Action label where a match begins (a stream reads calls from an offset)."""
INPUT_LABEL = _label(_INPUT, at_line_start=False)
THOUGHT_RE = _label(r"Thought(?:[ \t]*\d+)?")
FINAL_RE = _label(r"Final[ _]?Answer")
OBSERVATION_RE = _label(r"Observation(?:[ \t]*\d+)?")
_ANY_LABEL_RE = _label(r"Thought|Action[ _]?Input|Action|Final[ _]?Answer|Observation")
_EMPTY_INPUTS = frozenset({"", "none", "null", "n/a", "nothing", "empty", "{}"})
_NO_ACTION = frozenset({"none", "n/a", "na", "nothing", "no action", "null"})


def react_calls(text: str, known: frozenset[str]) -> list[Found]:
    out: list[Found] = []
    pos = 0
    while (m := _ACTION_RE.search(text, pos)) is not None:
        found = _one_action(text, m.start(), m.end(), known)
        if found is None:
            pos = m.end()
            continue
        out.append(found)
        pos = max(found[1], m.end())
    return out


def _line_end(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl


def _one_action(text: str, start: int, body: int, known: frozenset[str]) -> Found | None:
    line_end = _line_end(text, body)
    rest = text[body:line_end]
    lead = len(rest) - len(rest.lstrip(" \t`'\"*"))
    p = body + lead
    stripped = text[p:line_end].strip()
    if not stripped:  # "Action:" then the name or a JSON action on the following lines
        return _action_below(text, start, p, known)
    if text.startswith(("{", "[", FENCE), p):
        return _json_action(text, start, p)
    nm = NAME_RE.match(text, p)
    if nm is not None and (called := _called_action(text, start, nm, line_end)) is not None:
        return called
    name = stripped.strip("`'\"*").rstrip(".,;:").strip("`'\"* ")
    explicit = True
    if not NAME_RE.fullmatch(name):
        first = name.split()[0].strip("`'\"*.,;:") if name.split() else ""
        if first in known:
            name = first
        else:
            explicit = False
    return _named_action(text, start, name, line_end, known, explicit=explicit)


def _action_below(text: str, start: int, p: int, known: frozenset[str]) -> Found | None:
    """An "Action:" line with nothing after it: the name or JSON action is on the next line."""
    q = p
    while q < len(text) and text[q].isspace():
        q += 1
    if q >= len(text) or _ANY_LABEL_RE.match(text, text.rfind("\n", 0, q) + 1):
        return None
    if text.startswith(("{", "[", FENCE), q):
        return _json_action(text, start, q)
    nxt_end = _line_end(text, q)
    name_line = text[q:nxt_end].strip().strip("`'\"*").rstrip(".,;:").strip()
    if not NAME_RE.fullmatch(name_line):
        return None
    return _named_action(text, start, name_line, nxt_end, known, explicit=True)


def _called_action(text: str, start: int, nm: re.Match[str], line_end: int) -> Found | None:
    """`Action: name(key="v")`, `name[v]` or `name: {...}` on the Action line itself."""
    after = nm.end()
    while after < line_end and text[after] in " \t":
        after += 1
    bracket = text[after] if after < line_end else ""
    if bracket in "([" and bracket:
        end, _ = scan(text, after)
        if end is None:
            close = text.rfind(")" if bracket == "(" else "]", after, line_end)
            end = close + 1 if close > after else line_end
        inner = text[after + 1 : end - 1] if text[end - 1] in ")]" else text[after + 1 : end]
        end = _skip_decoration(text, end)
        return (start, end, "react", [ParsedCall(nm.group(0), loose_call_args(inner, bracket))])
    if text.startswith(("{", ":", ","), after):
        q = after + 1 if text[after] in ":," else after
        while q < line_end and text[q] in " \t":
            q += 1
        if text.startswith("{", q):
            kind, value, end = _read_value(text, q)
            return (start, end, "react", [ParsedCall(nm.group(0), _value_args(kind, value))])
    return None


def _skip_decoration(text: str, end: int) -> int:
    line_end = _line_end(text, end)
    return line_end if not text[end:line_end].strip(" \t`'\"*.") else end


def _named_action(
    text: str, start: int, name: str, line_end: int, known: frozenset[str], explicit: bool
) -> Found | None:
    im = _INPUT_RE.search(text, line_end)
    if im is not None and not text[line_end : im.start()].strip():
        kind, value, end = _read_value(text, im.end())
        return (start, end, "react", [ParsedCall(name, _value_args(kind, value))])
    if not explicit or (name.lower() in _NO_ACTION and name not in known):
        return None
    return (start, line_end, "react", [ParsedCall(name, {})])


def _json_action(text: str, start: int, q: int) -> Found | None:
    kind, value, end = _read_value(text, q)
    if kind == "parsed":
        shapes = shapes_of(value)
        if shapes:
            return (start, end, "react", [ParsedCall(n, arguments_of(raw)) for n, raw in shapes])
        return None
    calls = calls_from_json(value, None) if kind == "broken" else None
    return (start, end, "react", calls) if calls else None


def _read_value(text: str, p: int) -> tuple[str, Any, int]:
    """Read an Action Input starting at ``p``: ``("parsed", value, end)`` for JSON (plain,
    across lines or fenced), ``("broken", raw, end)`` for JSON that cannot be read, or
    ``("bare", raw, end)`` for plain text running to the next label."""
    q = p
    while q < len(text) and text[q] in " \t":
        q += 1
    if q < len(text) and text[q] == "\n":  # value on the following lines
        r = q
        while r < len(text) and text[r].isspace():
            r += 1
        if text.startswith(("{", "[", FENCE), r):
            q = r
    if text.startswith(FENCE, q):
        body_start = _line_end(text, q) + 1
        close = text.find(FENCE, body_start)
        body_end = close if close >= 0 else len(text)
        end = min(len(text), close + len(FENCE)) if close >= 0 else len(text)
        body = text[body_start:body_end] if body_start <= body_end else ""
        return _json_value(body, end)
    if q < len(text) and text[q] in "{[":
        end, closers = scan(text, q)
        if end is not None:
            return _json_value(text[q:end], end)
        stop = _section_end(text, q)
        chunk = text[q:stop].rstrip()
        if closers:
            kind, value, _ = _json_value(chunk + closers, stop)
            if kind == "parsed":
                return kind, value, stop
        return "broken", chunk, stop
    stop = _section_end(text, q)
    raw = text[q:stop].strip()
    if raw[:1] in "\"'" and raw[-1:] == raw[:1] and len(raw) >= 2:
        return "bare", unquote(raw), stop
    return "bare", raw, stop


def _json_value(chunk: str, end: int) -> tuple[str, Any, int]:
    try:
        return "parsed", loads_loose(chunk), end
    except ValueError:
        return "broken", chunk.strip(), end


def _section_end(text: str, pos: int) -> int:
    m = _ANY_LABEL_RE.search(text, pos)
    return m.start() if m is not None else len(text)


def _value_args(kind: str, value: Any) -> dict[str, Any] | str:
    if kind == "parsed":
        if isinstance(value, dict):
            return value
        if isinstance(value, str):
            return value if value.strip() else {}
        return json.dumps(value, ensure_ascii=False)
    if kind == "bare":
        text = str(value).strip()
        return {} if text.lower() in _EMPTY_INPUTS else text
    return str(value)


def loose_call_args(inner: str, bracket: str) -> dict[str, Any] | str:
    """Arguments of ``tool[value]`` or ``tool(key="value", ...)``."""
    s = inner.strip()
    if not s:
        return {}
    if s[0] in "{[":
        found = json_object(s)
        return s if found is None else found
    if bracket == "(":
        try:
            call = parse(f"_f({s})", mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            call = None
        if isinstance(call, ast.Call) and not call.args and call.keywords:
            try:
                words = JsonWords()
                args = {kw.arg: as_json(ast.literal_eval(words.visit(kw.value))) for kw in call.keywords}
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return s
            if all(k is not None for k in args):
                return {str(k): v for k, v in args.items()}
            return s
    return unquote(s)
