"""The toolbox: tool schemas for the model, and `call`, which turns any tool call into an observation."""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from collections.abc import Sequence
from typing import Any

from fixloop.errors import FixloopError
from fixloop.tools.base import Tool, ToolResult
from fixloop.tools.fences import unfence

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class ArgumentError(FixloopError):
    """A tool call's arguments do not fit the tool's schema."""


class Toolbox:
    """The tools one run offers the model; `call` never raises (except on cancellation)."""

    def __init__(self, tools: Sequence[Tool], output_cap: int = 16 * 1024) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self.output_cap = output_cap

    @classmethod
    def describing(cls, tools: Sequence[type[Tool]]) -> Toolbox:
        """A toolbox that only describes tool classes (schemas, usage), for a prompt written before a run
        has a workspace: the descriptions are class attributes, the same for every project."""
        return cls(tools)  # type: ignore[arg-type]  # calling a tool class's `run` is never needed here

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def is_read_only(self, name: str) -> bool:
        tool = self._tools.get(name)
        return bool(tool and tool.read_only)

    # -- descriptions -------------------------------------------------------------------------------

    def schemas(self, compact: bool = False) -> list[dict[str, Any]]:
        """The tools in the OpenAI `tools=` format; `compact` (for small local models, whose chat template
        prints every schema into the prompt) uses the one-line briefs and drops argument descriptions."""
        if not compact:
            return [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in self._tools.values()
            ]
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.brief,
                    "parameters": _without_descriptions(t.parameters),
                },
            }
            for t in self._tools.values()
        ]

    def text_descriptions(self) -> str:
        """One line per tool for the text protocol: its JSON argument form, then what it does."""
        return "\n".join(f"- {self.usage(name)}: {tool.brief}" for name, tool in self._tools.items())

    def usage(self, name: str) -> str:
        """The correct call form, e.g. 'edit_file {"path": "...", "old_text": "...", "new_text": "..."}'."""
        tool = self._tools.get(name)
        if tool is None:
            return f"one of: {', '.join(self._tools)}"
        properties: dict[str, Any] = tool.parameters.get("properties", {})
        required = [key for key in properties if key in tool.parameters.get("required", [])]
        optional = [key for key in properties if key not in required]
        form = "{" + ", ".join(f'"{key}": {_placeholder(properties[key])}' for key in required) + "}"
        text = f"{name} {form}"
        if optional:
            described = ", ".join(f'"{key}" ({_type_name(properties[key])})' for key in optional)
            text += f" (optional: {described})"
        return text

    # -- calling ------------------------------------------------------------------------------------

    async def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolResult:
        """Run tool `name`; every failure (bad name or arguments, tool error, bug) becomes an error result."""
        try:
            tool = self._find(name)
            if tool is None:
                return ToolResult(self._unknown_tool_message(name), is_error=True)
            try:
                parsed = _parse_arguments(arguments)
                checked = _check_arguments(tool, parsed)
            except ArgumentError as error:
                return ToolResult(f"{error.message}; use: {self.usage(tool.name)}", is_error=True)
            try:
                result = await tool.run(**checked)
            except asyncio.CancelledError:
                raise
            except FixloopError as error:
                result = ToolResult(error.message, is_error=True)
            except Exception as error:  # a bug in a tool must not end the run
                result = ToolResult(
                    f"internal error in {tool.name}: {type(error).__name__}: {error}", is_error=True
                )
            return self._capped(tool, result)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # pragma: no cover - the toolbox itself failing
            return ToolResult(f"internal error in {name}: {type(error).__name__}: {error}", is_error=True)

    def _find(self, name: str) -> Tool | None:
        if not isinstance(name, str):
            return None
        cleaned = name.strip().strip("`'\"")
        tool = self._tools.get(cleaned)
        if tool is None and "." in cleaned:  # 'functions.read_file'
            tool = self._tools.get(cleaned.rsplit(".", 1)[-1])
        if tool is None:
            tool = self._tools.get(cleaned.removesuffix("()"))
        return tool

    def _unknown_tool_message(self, name: object) -> str:
        shown = name if isinstance(name, str) else repr(name)
        message = f"unknown tool {shown!r}; the tools are: {', '.join(self._tools)}"
        close = difflib.get_close_matches(str(name), list(self._tools), n=1, cutoff=0.5)
        if close:
            message += f". Did you mean: {self.usage(close[0])}"
        return message

    def _capped(self, tool: Tool, result: ToolResult) -> ToolResult:
        text = _CONTROL.sub("", _ANSI.sub("", result.text))
        data = text.encode("utf-8")
        if len(data) <= self.output_cap:
            return result if text == result.text else ToolResult(text, result.is_error, result.submitted)
        shown = data[: self.output_cap].decode("utf-8", errors="ignore")
        cut = shown.rfind("\n")
        if cut > len(shown) // 2:
            shown = shown[:cut]
        omitted = len(data) - len(shown.encode("utf-8"))
        notice = tool.truncation_notice(shown, omitted)
        return ToolResult(f"{shown}\n{notice}", result.is_error, result.submitted)


def _placeholder(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "integer":
        return "1"
    if kind == "array":
        return '["..."]'
    if kind == "boolean":
        return "true"
    return '"..."'


def _type_name(schema: dict[str, Any]) -> str:
    kind = schema.get("type", "string")
    if kind == "array":
        return f"list of {schema.get('items', {}).get('type', 'string')}s"
    return str(kind)


def _parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    if raw is None:
        return {}
    value: Any = raw
    if isinstance(value, bytes | bytearray):
        value = value.decode("utf-8", errors="replace")
    if isinstance(value, str):
        text = unfence(value)
        if not text:
            return {}
        try:
            value = json.loads(text, strict=False)  # raw newlines inside strings are common
        except json.JSONDecodeError as error:
            raise ArgumentError(
                f"the arguments are not valid JSON ({error.msg} at line {error.lineno} "
                f"column {error.colno}): {_clip(text)}"
            ) from None
        if isinstance(value, str):  # a JSON string holding the JSON object: unwrap once
            try:
                value = json.loads(value, strict=False)
            except json.JSONDecodeError:
                pass
    if not isinstance(value, dict):
        raise ArgumentError(f"the arguments must be a JSON object, got {_clip(json.dumps(value))}")
    return value


def _check_arguments(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = tool.parameters.get("properties", {})
    required: list[str] = tool.parameters.get("required", [])
    checked: dict[str, Any] = {}
    for key, value in arguments.items():
        if key not in properties:
            close = difflib.get_close_matches(str(key), list(properties), n=1, cutoff=0.5)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            allowed = ", ".join(properties) or "none"
            raise ArgumentError(f"{tool.name} has no argument {key!r}{hint}; its arguments are: {allowed}")
        if value is None:
            continue
        checked[key] = _coerce(tool.name, key, properties[key], value)
    missing = [key for key in required if key not in checked]
    if missing:
        names = ", ".join(repr(key) for key in missing)
        plural = "s" if len(missing) > 1 else ""
        raise ArgumentError(f"{tool.name} is missing required argument{plural} {names}")
    return checked


def _coerce(tool: str, key: str, schema: dict[str, Any], value: Any) -> Any:
    kind = schema.get("type", "string")
    wrong = ArgumentError(
        f"{tool} argument {key!r} must be {_article(_type_name(schema))}, "
        f"got {_clip(json.dumps(value, default=str))}"
    )
    if kind == "string":
        if isinstance(value, str):
            return value
        raise wrong
    if kind == "integer":
        if isinstance(value, bool):
            raise wrong
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            return int(value)
        raise wrong
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        raise wrong
    if kind == "array":
        if isinstance(value, str):  # one test id given bare
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise wrong
        return value
    return value


def _article(type_name: str) -> str:
    return ("an " if type_name[0] in "aeiou" else "a ") + type_name


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _without_descriptions(schema: dict[str, Any]) -> dict[str, Any]:
    properties = {
        name: {k: v for k, v in spec.items() if k != "description"}
        for name, spec in schema.get("properties", {}).items()
    }
    return {**schema, "properties": properties}
