"""Calls embedded in text: <tool_call> tags (Qwen-style) and bare or fenced JSON objects naming a tool."""

from __future__ import annotations

import re

from fixloop.agent.text_calls.loose_json import loads_loose, scan
from fixloop.agent.text_calls.react import loose_call_args
from fixloop.agent.text_calls.shapes import (
    CALL_START,
    NAME_RE,
    Found,
    ParsedCall,
    arguments_of,
    calls_from_json,
    shapes_of,
)
from fixloop.tools.fences import CLOSING_AFTER, FENCE, OPENING_BEFORE, unfence

TAG_OPEN_RE = re.compile(r"<tool_call>", re.I)
_TAG_CLOSE_RE = re.compile(r"</tool_call\s*>", re.I)
_LEADING_NAME_RE = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*(?=[\n({\[])")


def tag_calls(text: str) -> list[Found]:
    out: list[Found] = []
    pos = 0
    while (m := TAG_OPEN_RE.search(text, pos)) is not None:
        close = _TAG_CLOSE_RE.search(text, m.end())
        nxt = TAG_OPEN_RE.search(text, m.end())
        if close is not None and (nxt is None or close.start() < nxt.start()):
            inner, end = text[m.end() : close.start()], close.end()
        else:
            stop = nxt.start() if nxt is not None else len(text)
            inner, end = text[m.end() : stop], stop
        pos = end
        calls = _tag_inner_calls(unfence(inner))
        if calls is not None:
            out.append((m.start(), end, "tool_call_tag", calls))
    return out


def _tag_inner_calls(inner: str) -> list[ParsedCall] | None:
    if not inner.strip():
        return None
    lead = _LEADING_NAME_RE.match(inner)
    if lead is not None and lead.group(1).lower() != "json":
        rest = inner[lead.end() :].strip()
        if rest.startswith(("(", "[")):
            end, _ = scan(rest, 0)
            return [ParsedCall(lead.group(1), loose_call_args(rest[1 : (end or len(rest)) - 1], rest[0]))]
        return [ParsedCall(lead.group(1), arguments_of(rest))]
    if NAME_RE.fullmatch(inner.strip()):
        return [ParsedCall(inner.strip(), {})]
    start = min((i for i in (inner.find("{"), inner.find("[")) if i >= 0), default=-1)
    if start < 0:
        return [ParsedCall("", inner.strip())]
    end, closers = scan(inner, start)
    chunk = inner[start:end] if end is not None else inner[start:].rstrip() + closers
    calls = calls_from_json(chunk, None)
    if calls is None and end is None:
        calls = calls_from_json(inner[start:], None)
    return calls if calls is not None else [ParsedCall("", inner.strip())]


_SCAN_BUDGET = 2_000_000  # characters scanned in all, so pathological text cannot stall the loop


def json_calls(masked: str, text: str, known: frozenset[str]) -> list[Found]:
    """Bare or fenced JSON objects (or lists of them) that name a known tool."""
    out: list[Found] = []
    if not any(f'"{name}"' in masked or f"'{name}'" in masked for name in known):
        return out
    budget = _SCAN_BUDGET
    pos = 0
    while budget > 0 and (m := CALL_START.search(masked, pos)) is not None:
        s = m.start()
        end, closers = scan(masked, s)
        budget -= (end or len(masked)) - s
        calls: list[ParsedCall] | None = None
        if end is not None:
            chunk = masked[s:end]
            calls = calls_from_json(chunk, known) if _names_known(chunk, known) else None
        elif closers:
            calls = _completed_calls(masked[s:], closers, known)
            end = len(masked) if calls else None
        if end is None:
            pos = s + 1
            continue
        if not calls:
            pos = _next_scan_pos(masked[s:end], s, end)
            continue
        fs, fe = s, end
        before = OPENING_BEFORE.search(text, 0, s)
        after = CLOSING_AFTER.match(text, end)
        if before is not None and (after is not None or not text[end:].strip()):
            fs, fe = before.start(), (after.end() if after is not None else end)
        out.append((fs, fe, "json", calls))
        pos = end
    return out


def _completed_calls(tail: str, closers: str, known: frozenset[str]) -> list[ParsedCall] | None:
    """The calls of a value cut off at the end of the text, completed by `closers`; only when it then
    parses and names known tools."""
    tail = tail.rstrip()
    chunk = (tail[: -len(FENCE)].rstrip() if tail.endswith(FENCE) else tail) + closers
    if not _names_known(chunk, known):
        return None
    try:
        shapes = shapes_of(loads_loose(chunk))
    except ValueError:
        return None
    if not shapes or not all(name in known for name, _ in shapes):
        return None
    return [ParsedCall(n, arguments_of(raw)) for n, raw in shapes]


def _names_known(chunk: str, known: frozenset[str]) -> bool:
    return any(name in chunk for name in known)


def _next_scan_pos(chunk: str, s: int, end: int) -> int:
    """After a JSON value that is not a call: skip it whole if it parsed, else look inside."""
    try:
        loads_loose(chunk)
    except ValueError:
        return s + 1
    return end
