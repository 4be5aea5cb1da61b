"""Scripts for the scripted model: what a script may say, checking it, and reading one from a file."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "scripted"


EXHAUSTED_SUMMARY = "script exhausted"


FAULTS = frozenset({"500", "429", "400_tools", "stall", "drop", "401", "404_model"})


TURN_KEYS = frozenset(
    {
        "content",
        "tool_calls",
        "refusal",
        "stream",
        "finish_reason",
        "fault",
        "retry_after",
        "seconds",
        "expect",
        "delay",
        "chunk_delay",
        "chunk_chars",
        "usage",
        "timings",
        "note",
        "choices",
        "together",
    }
)


EXPECT_KEYS = frozenset(
    {"last_message_contains", "messages_contain", "messages_not_contain", "last_role", "has_tools"}
)


ON_EXHAUSTED = frozenset({"submit", "error"})


class ScriptError(ValueError):
    """A script that cannot be served; the message names the turn and the problem."""


def normalize_script(script: list[dict[str, Any]] | dict[str, Any]) -> dict[str, Any]:
    """Return `{"model", "turns", "on_exhausted"}` from a turn list or a script object, validated."""
    if isinstance(script, list):
        script = {"turns": script}
    if not isinstance(script, dict):
        raise ScriptError(
            f"a script is a list of turns or an object with 'turns', not {type(script).__name__}"
        )
    unknown = set(script) - {"model", "turns", "on_exhausted", "note", "lines"}
    if unknown:
        raise ScriptError(
            f"unknown script keys {sorted(unknown)}; expected model, turns, on_exhausted, lines"
        )
    lines = script.get("lines")
    if lines is not None and not (
        isinstance(lines, list)
        and all(isinstance(one, dict) and set(one) == {"after", "text"} for one in lines)
    ):
        raise ScriptError("lines is a list of {after, text}: a text completion of a prompt ending in `after`")
    model = script.get("model", DEFAULT_MODEL)
    on_exhausted = script.get("on_exhausted", "submit")
    if on_exhausted not in ON_EXHAUSTED:
        raise ScriptError(f"on_exhausted must be 'submit' or 'error', not {on_exhausted!r}")
    turns = [validate_turn(turn, index) for index, turn in enumerate(script.get("turns", []))]
    return {"model": str(model), "turns": turns, "on_exhausted": on_exhausted, "lines": lines}


def validate_turn(turn: Any, index: int = 0) -> dict[str, Any]:
    """Check one turn and return it with tool calls in one shape; raise ScriptError naming the mistake."""
    where = f"turn {index}"
    if not isinstance(turn, dict):
        raise ScriptError(f"{where}: a turn is a JSON object, not {type(turn).__name__}")
    unknown = set(turn) - TURN_KEYS
    if unknown:
        raise ScriptError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(TURN_KEYS)}")
    fault = turn.get("fault")
    if fault is not None and str(fault) not in FAULTS:
        raise ScriptError(f"{where}: unknown fault {fault!r}; known: {sorted(FAULTS)}")
    expect = turn.get("expect")
    if expect is not None:
        if not isinstance(expect, dict) or set(expect) - EXPECT_KEYS:
            raise ScriptError(f"{where}: expect is an object with keys among {sorted(EXPECT_KEYS)}")
    normalized = dict(turn)
    if "choices" in turn:  # more choices of an answer (a request with `n`)
        if not isinstance(turn["choices"], list):
            raise ScriptError(f"{where}: choices is a list of turns (each with content or tool_calls)")
        normalized["choices"] = [validate_turn(choice, index) for choice in turn["choices"]]
    if fault is not None:
        normalized["fault"] = str(fault)
    if "tool_calls" in turn:
        calls = turn["tool_calls"]
        if not isinstance(calls, list):
            raise ScriptError(f"{where}: tool_calls is a list")
        normalized["tool_calls"] = [
            _normalize_call(call, f"{where} tool call {i}") for i, call in enumerate(calls)
        ]
    return normalized


def _normalize_call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, dict):
        raise ScriptError(f"{where}: a tool call is an object with name and arguments")
    if "function" in call:  # the OpenAI wire shape is accepted too
        function = call["function"]
        call = {
            "id": call.get("id"),
            "name": function.get("name"),
            "arguments": function.get("arguments", {}),
        }
    name = call.get("name")
    if not isinstance(name, str):
        raise ScriptError(f"{where}: tool call needs a string 'name'")
    arguments = call.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call.get("id"), "name": name, "arguments": arguments}


def message_text(message: Any) -> str:
    """All the text of one request message: content (string or parts), refusal and tool calls."""
    if not isinstance(message, dict):
        return str(message)
    parts: list[str] = []
    content = message.get("content")
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        parts.extend(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        parts.append(f"{function.get('name', '')}({function.get('arguments', '')})")
    if message.get("refusal"):
        parts.append(str(message["refusal"]))
    return "\n".join(parts)


def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def clip(text: str, limit: int = 300) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def check_expect(expect: dict[str, Any] | None, body: dict[str, Any]) -> str | None:
    """None when the request meets the turn's expectations, else what was expected and what came."""
    if not expect:
        return None
    messages = body.get("messages") or []
    texts = [message_text(m) for m in messages]
    last = texts[-1] if texts else ""
    problems: list[str] = []
    for needle in as_list(expect.get("last_message_contains")):
        if needle not in last:
            problems.append(f"the last message to contain {needle!r}; it was {clip(last)}")
    for needle in as_list(expect.get("messages_contain")):
        if not any(needle in text for text in texts):
            problems.append(f"some message to contain {needle!r}; none of the {len(texts)} messages does")
    for needle in as_list(expect.get("messages_not_contain")):
        if any(needle in text for text in texts):
            problems.append(f"no message to contain {needle!r}")
    if "last_role" in expect:
        role = messages[-1].get("role") if messages and isinstance(messages[-1], dict) else None
        if role != expect["last_role"]:
            problems.append(f"the last message's role to be {expect['last_role']!r}; it was {role!r}")
    if "has_tools" in expect and bool(body.get("tools")) != bool(expect["has_tools"]):
        problems.append(f"tools {'in' if expect['has_tools'] else 'absent from'} the request")
    return "; ".join(problems) or None


def describe_turn(turn: dict[str, Any]) -> str:
    if "fault" in turn:
        return f"fault {turn['fault']}"
    calls = ", ".join(c["name"] for c in turn.get("tool_calls", []))
    text = (turn.get("content") or turn.get("refusal") or "").replace("\n", " ")
    return f"tools [{calls}] {text[:60]}" if calls else f"text {text[:80]!r}"


def load_script(path: str) -> list[dict[str, Any]] | dict[str, Any]:
    """Read a JSON script from a file, or from stdin when path is '-'."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    return json.loads(text)
