"""Call shapes: the JSON forms a tool call takes in text ({"name", "arguments"}, OpenAI's, lists)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from fixloop.agent.text_calls.loose_json import json_object, loads_loose, scan
from fixloop.tools.fences import unfence


@dataclass(frozen=True)
class ParsedCall:
    """One tool call found in text; ``arguments`` is the raw text when it could not be read as JSON."""

    name: str
    arguments: dict[str, Any] | str


Found = tuple[int, int, str, list[ParsedCall]]  # start, end, style, calls
CALL_START = re.compile(r"""\{(?=\s*["'}])|\[(?=\s*\{\s*["'}])""")
"""Where a call object (or a list of them) can begin: a brace before a key, or a bracket before one."""
_NAME_KEYS = ("name", "tool", "tool_name", "function", "action", "function_name", "tool_call")
_ARG_KEYS = (
    "arguments",
    "parameters",
    "args",
    "input",
    "action_input",
    "tool_input",
    "params",
    "kwargs",
    "argument",
)
NAME_KEY = r"""["']?(?:name|tool|tool_name|function|action|function_name)["']?\s*:\s*"""
"""The key that names a call's tool, up to its value (also read while a call streams)."""
_NAME_FALLBACK_RE = re.compile(NAME_KEY + r"""["']([^"'\n]+)["']""")
_ARGS_FALLBACK_RE = re.compile("[\"']?(?:" + "|".join(_ARG_KEYS) + ")[\"']?\\s*:\\s*")


def shapes_of(obj: Any) -> list[tuple[str, Any]] | None:
    """The (name, raw arguments) calls a parsed JSON value describes, or None if it is not a call."""
    if isinstance(obj, list):
        if not obj:
            return None
        out: list[tuple[str, Any]] = []
        for item in obj:
            one = shapes_of(item)
            if not one:
                return None
            out += one
        return out
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("tool_calls"), list):
        return shapes_of(obj["tool_calls"])
    fn = obj.get("function")
    if isinstance(fn, dict):
        inner = shapes_of(fn)
        if inner and len(inner) == 1:
            return inner
    for key in _NAME_KEYS:
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            name = value.strip()
            for arg_key in _ARG_KEYS:
                if arg_key in obj:
                    return [(name, obj[arg_key])]
            rest = {k: v for k, v in obj.items() if k not in (key, "type", "id")}
            return [(name, rest)]
    return None


def arguments_of(raw: Any) -> dict[str, Any] | str:
    """Arguments as a dict, or as text when they are not a JSON object."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        s = unfence(raw)
        if not s:
            return {}
        found = json_object(s)
        return raw if found is None else found
    return json.dumps(raw, ensure_ascii=False)


def calls_from_json(chunk: str, known: frozenset[str] | None) -> list[ParsedCall] | None:
    """Calls in one JSON chunk; ``known`` (when given) is the set every name must belong to.

    JSON that cannot be parsed still yields a call with text arguments when a tool name can
    be read from it, so the loop can show the model the correct form.
    """
    try:
        obj = loads_loose(chunk)
    except ValueError:
        m = _NAME_FALLBACK_RE.search(chunk)
        if m is None or (known is not None and m.group(1).strip() not in known):
            return None
        return [ParsedCall(m.group(1).strip(), _raw_arguments(chunk, m.end()))]
    shapes = shapes_of(obj)
    if not shapes:
        return None
    if known is not None and not all(name in known for name, _ in shapes):
        return None
    return [ParsedCall(name, arguments_of(raw)) for name, raw in shapes]


def _raw_arguments(chunk: str, after: int) -> str:
    m = _ARGS_FALLBACK_RE.search(chunk, after) or _ARGS_FALLBACK_RE.search(chunk)
    if m is None:
        return chunk.strip()
    start = m.end()
    if start < len(chunk) and chunk[start] in "{[":
        end, _ = scan(chunk, start)
        if end is not None:
            return chunk[start:end]
    rest = chunk[start:].rstrip()
    while rest.endswith("}"):  # the enclosing call object's closing braces
        rest = rest[:-1].rstrip()
    return rest or chunk.strip()


NAME_RE = re.compile(r"[A-Za-z_][\w.-]*")
