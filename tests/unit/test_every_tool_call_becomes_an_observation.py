"""Toolbox.call turns every call, however malformed, into an observation; it never raises."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from fixloop.errors import TestRunError
from fixloop.tools import TOOL_NAMES, Tool, Toolbox, ToolResult, build_toolbox
from fixloop.tools.workspace import Workspace


@pytest.fixture()
def toolbox(tmp_path: Path) -> Toolbox:
    (tmp_path / "app.py").write_text("x = 1\n")
    return build_toolbox(Workspace(tmp_path), runner=None)


class Boom(Tool):
    name = "boom"
    description = "raises"
    brief = "raises"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}, "required": []}

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def run(self, **arguments: Any) -> ToolResult:
        raise self.error


class Loud(Tool):
    name = "loud"
    description = "prints a lot"
    brief = "prints a lot"
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}, "required": []}
    truncation_hint = "ask for less"

    async def run(self, **arguments: Any) -> ToolResult:
        return ToolResult("".join(f"row {n}\n" for n in range(1000)) + "\x00\x1b[31m")


def test_names_schemas_and_read_only(toolbox: Toolbox) -> None:
    assert toolbox.names == list(TOOL_NAMES)
    schemas = toolbox.schemas()
    assert [s["function"]["name"] for s in schemas] == list(TOOL_NAMES)
    assert all(s["type"] == "function" and s["function"]["parameters"]["type"] == "object" for s in schemas)
    edit = next(s for s in schemas if s["function"]["name"] == "edit_file")["function"]
    assert set(edit["parameters"]["properties"]) == {"path", "old_text", "new_text"}
    assert edit["parameters"]["required"] == ["path", "old_text", "new_text"]
    json.dumps(schemas)
    assert [n for n in toolbox.names if toolbox.is_read_only(n)] == ["read_file", "list_files", "search"]
    assert not toolbox.is_read_only("nope")
    assert toolbox.get("search") is not None and toolbox.get("nope") is None


def test_argument_names_are_the_contract(toolbox: Toolbox) -> None:
    functions = [schema["function"] for schema in toolbox.schemas()]
    props = {f["name"]: list(f["parameters"]["properties"]) for f in functions}
    assert props == {
        "read_file": ["path", "start_line", "end_line"],
        "list_files": ["path", "pattern"],
        "search": ["pattern", "path"],
        "run_tests": ["test_ids"],
        "edit_file": ["path", "old_text", "new_text"],
        "replace_function": ["path", "name", "code"],
        "write_file": ["path", "content"],
        "submit": ["summary"],
    }


def test_usage_and_text_descriptions(toolbox: Toolbox) -> None:
    assert toolbox.usage("edit_file") == 'edit_file {"path": "...", "old_text": "...", "new_text": "..."}'
    assert toolbox.usage("read_file") == (
        'read_file {"path": "..."} (optional: "start_line" (integer), "end_line" (integer))'
    )
    listing = toolbox.text_descriptions().splitlines()
    assert len(listing) == 8
    assert listing[0].startswith('- read_file {"path": "..."}')
    assert all(": " in line for line in listing)


async def test_unknown_tool_lists_the_tools_and_the_form(toolbox: Toolbox) -> None:
    result = await toolbox.call("edit", {"path": "app.py"})
    assert result.is_error
    assert result.text.startswith(
        "unknown tool 'edit'; the tools are: read_file, list_files, search, "
        "run_tests, edit_file, replace_function, write_file, submit."
    )
    assert 'Did you mean: edit_file {"path": "...", "old_text": "...", "new_text": "..."}' in result.text


async def test_prefixed_and_quoted_names_are_tolerated(toolbox: Toolbox) -> None:
    assert not (await toolbox.call("functions.read_file", {"path": "app.py"})).is_error
    assert not (await toolbox.call(" `read_file` ", {"path": "app.py"})).is_error


async def test_malformed_json_shows_the_expected_form(toolbox: Toolbox) -> None:
    result = await toolbox.call("read_file", '{"path": "app.py"')
    assert result.is_error
    assert result.text.startswith("the arguments are not valid JSON (")
    assert result.text.endswith(
        '; use: read_file {"path": "..."} (optional: "start_line" (integer), "end_line" (integer))'
    )


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "app.py"},
        '{"path": "app.py"}',
        json.dumps(json.dumps({"path": "app.py"})),
        '```json\n{"path": "app.py"}\n```',
        b'{"path": "app.py"}',
        {"path": "app.py", "start_line": None},
        '{"path": "app.py", "end_line": 1,\n "start_line": 1}',
    ],
)
async def test_arguments_as_dict_json_or_double_encoded(toolbox: Toolbox, arguments: Any) -> None:
    result = await toolbox.call("read_file", arguments)
    assert not result.is_error, result.text
    assert result.text.startswith("app.py (lines 1-1 of 1)")


@pytest.mark.parametrize("arguments", ["[1, 2]", '"just a string"', "42"])
async def test_non_object_arguments(toolbox: Toolbox, arguments: str) -> None:
    result = await toolbox.call("read_file", arguments)
    assert result.is_error and "the arguments must be a JSON object" in result.text
    assert 'use: read_file {"path": "..."}' in result.text


async def test_missing_required_argument(toolbox: Toolbox) -> None:
    result = await toolbox.call("edit_file", {"path": "app.py", "old_text": "x"})
    assert result.is_error
    assert result.text == (
        "edit_file is missing required argument 'new_text'; use: "
        'edit_file {"path": "...", "old_text": "...", "new_text": "..."}'
    )
    none = await toolbox.call("edit_file", None)
    assert "missing required arguments 'path', 'old_text', 'new_text'" in none.text


async def test_unknown_argument_suggests_the_right_one(toolbox: Toolbox) -> None:
    result = await toolbox.call("read_file", {"file_path": "app.py"})
    assert result.is_error
    assert (
        "read_file has no argument 'file_path' (did you mean 'path'?); its arguments are: path, "
        "start_line, end_line" in result.text
    )


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("read_file", {"path": 3}, "read_file argument 'path' must be a string, got 3"),
        ("read_file", {"path": "app.py", "start_line": "one"}, "'start_line' must be an integer"),
        ("read_file", {"path": "app.py", "start_line": True}, "'start_line' must be an integer"),
        ("run_tests", {"test_ids": [1]}, "'test_ids' must be a list of strings"),
    ],
)
async def test_wrong_types_show_the_usage(toolbox: Toolbox, name: str, arguments: Any, message: str) -> None:
    result = await toolbox.call(name, arguments)
    assert result.is_error
    assert message in result.text and "; use: " in result.text


async def test_integer_like_values_are_accepted(toolbox: Toolbox) -> None:
    result = await toolbox.call("read_file", {"path": "app.py", "start_line": 1.0, "end_line": "1"})
    assert not result.is_error


async def test_fixloop_error_becomes_its_message() -> None:
    toolbox = Toolbox([Boom(TestRunError("no such test 'tests/x.py::y'; use tests/x.py::test_y"))])
    result = await toolbox.call("boom", {})
    assert result == ToolResult("no such test 'tests/x.py::y'; use tests/x.py::test_y", is_error=True)


async def test_unexpected_exception_becomes_internal_error() -> None:
    result = await Toolbox([Boom(KeyError("k"))]).call("boom", "{}")
    assert result.is_error and result.text == "internal error in boom: KeyError: 'k'"


async def test_cancellation_propagates() -> None:
    with pytest.raises(asyncio.CancelledError):
        await Toolbox([Boom(asyncio.CancelledError())]).call("boom", {})


async def test_output_is_capped_with_a_notice_and_control_chars_removed() -> None:
    result = await Toolbox([Loud()], output_cap=500).call("loud", {})
    assert len(result.text.encode()) < 600
    assert result.text.endswith("more bytes not shown; ask for less]")
    assert result.text.splitlines()[-2].startswith("row ")  # cut at a line boundary
    short = await Toolbox([Loud()], output_cap=100_000).call("loud", {})
    assert "\x00" not in short.text and "\x1b" not in short.text
    assert short.text.endswith("row 999\n")  # the colour code went whole, not just its escape byte


async def test_search_and_run_tests_notices(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("".join(f"value = {n}  # {'x' * 50}\n" for n in range(50)))
    toolbox = build_toolbox(Workspace(tmp_path), runner=None, output_cap=400)
    result = await toolbox.call("search", {"pattern": "value"})
    assert result.text.endswith("narrow the pattern or path]")


async def test_submit_returns_the_summary(toolbox: Toolbox) -> None:
    result = await toolbox.call("submit", {"summary": "fixed the off-by-one in add()"})
    assert result == ToolResult("submitted for verification", submitted="fixed the off-by-one in add()")
    empty = await toolbox.call("submit", {"summary": " "})
    assert empty.submitted == "(no summary given)"


def test_duplicate_tool_names_are_a_bug() -> None:
    with pytest.raises(ValueError, match="two tools"):
        Toolbox([Loud(), Loud()])


async def test_raw_newlines_inside_json_strings_are_accepted(toolbox: Toolbox, tmp_path: Path) -> None:
    raw = '{"path": "app.py", "old_text": "x = 1\n", "new_text": "x = 2\n"}'
    result = await toolbox.call("edit_file", raw)
    assert not result.is_error, result.text
    assert (tmp_path / "app.py").read_text() == "x = 2\n"
