"""Confinement (Workspace.resolve) and the model-facing tools, assembled into a Toolbox by `build_toolbox`."""

from __future__ import annotations

from collections.abc import Sequence

from fixloop.pytest_runner import TestRun, TestRunner
from fixloop.tools.base import Tool, ToolResult
from fixloop.tools.code_placement import PlacementHints
from fixloop.tools.edit_file import EditFileTool
from fixloop.tools.list_files import ListFilesTool
from fixloop.tools.read_file import ReadFileTool
from fixloop.tools.replace_function import ReplaceFunctionTool
from fixloop.tools.run_tests import RunTestsTool, format_test_run
from fixloop.tools.search import SearchTool
from fixloop.tools.submit import SubmitTool
from fixloop.tools.toolbox import Toolbox
from fixloop.tools.workspace import Workspace
from fixloop.tools.write_file import WriteFileTool

TOOL_NAMES = (
    "read_file",
    "list_files",
    "search",
    "run_tests",
    "edit_file",
    "replace_function",
    "write_file",
    "submit",
)
TOOL_CLASSES: tuple[type[Tool], ...] = (
    ReadFileTool,
    ListFilesTool,
    SearchTool,
    RunTestsTool,
    EditFileTool,
    ReplaceFunctionTool,
    WriteFileTool,
    SubmitTool,
)


def tool_catalog() -> Toolbox:
    """The tools described, without a project: what `build_toolbox` offers, for the prompt prefix."""
    return Toolbox.describing(TOOL_CLASSES)


def build_toolbox(
    workspace: Workspace,
    runner: TestRunner,
    *,
    default_test_ids: Sequence[str] = (),
    output_cap: int = 16 * 1024,
    write_file_max_bytes: int = 12_000,
    protect_tests: bool = False,
    baseline: TestRun | None = None,
    show_inputs: bool = True,
    hints: PlacementHints | None = None,
) -> Toolbox:
    """The tools of a fix run, confined to `workspace`, testing with `runner`.

    With `protect_tests` (pass `not settings.allow_test_edits`) edit_file and write_file refuse test files
    up front, so the model learns it at once rather than from the verification gate. `baseline` (the
    targets' baseline run) answers a run_tests of the targets while no file has changed, when it timed out.
    `show_inputs` (the failingInputs setting): run_tests shows each failure's failing call. `hints` (the
    run's suspects): which of two definitions of one name replace_function replaces.
    """
    tools: list[Tool] = [
        ReadFileTool(workspace),
        ListFilesTool(workspace),
        SearchTool(workspace),
        RunTestsTool(runner, default_test_ids, workspace, baseline, show_inputs),
        EditFileTool(workspace, protect_tests),
        ReplaceFunctionTool(workspace, protect_tests, hints),
        WriteFileTool(workspace, write_file_max_bytes, protect_tests),
        SubmitTool(),
    ]
    return Toolbox(tools, output_cap=output_cap)


__all__ = [
    "TOOL_CLASSES",
    "TOOL_NAMES",
    "EditFileTool",
    "ListFilesTool",
    "ReadFileTool",
    "ReplaceFunctionTool",
    "RunTestsTool",
    "SearchTool",
    "SubmitTool",
    "Tool",
    "ToolResult",
    "Toolbox",
    "Workspace",
    "WriteFileTool",
    "build_toolbox",
    "format_test_run",
    "tool_catalog",
]
