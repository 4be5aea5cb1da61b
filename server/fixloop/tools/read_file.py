"""read_file: a text file with numbered lines, whole or a line range."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from fixloop.tools.base import Tool, ToolResult
from fixloop.tools.textfile import FileToolError, numbered, read_text
from fixloop.tools.workspace import Workspace

_LAST_NUMBER = re.compile(r"^\s*(\d+) \|", re.MULTILINE)
_LOCATION = re.compile(r"^(?P<path>.+?)(?::(?P<line>\d+)(?::\d+)?|::[\w\[\]\-.:/ ]+)$")
AROUND = 15


class ReadFileTool(Tool):
    name = "read_file"
    brief = "show a text file with line numbers, optionally only lines start_line..end_line"
    description = (
        "Read a text file of the project, shown with line numbers ('  12 | code'). Paths are relative to "
        "the project root. Give start_line and end_line (1-based, inclusive) to read part of a long file. "
        "The line numbers are not part of the file: leave them out of edit_file's old_text."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "path relative to the project root"},
            "start_line": {"type": "integer", "description": "first line to show (1-based)"},
            "end_line": {"type": "integer", "description": "last line to show (inclusive)"},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    read_only = True
    truncation_hint = "use start_line/end_line to read the rest"

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    async def run(self, path: str, start_line: int | None = None, end_line: int | None = None) -> ToolResult:
        path, start_line, end_line = self._location(path, start_line, end_line)
        resolved = self.workspace.resolve_file(path)
        rel = self.workspace.relative(resolved)
        lines = read_text(resolved, rel).lines
        total = len(lines)
        if total == 0:
            return ToolResult(f"{rel} is empty (0 lines)")
        start = 1 if start_line is None else start_line
        end = total if end_line is None else end_line
        if start < 1:
            raise FileToolError(f"start_line must be 1 or more, got {start}; '{rel}' has {total} lines")
        if start > total:
            raise FileToolError(f"start_line {start} is past the end of '{rel}', which has {total} lines")
        if end < start:
            raise FileToolError(f"end_line {end} is before start_line {start}; give a range like "
                                f"start_line={start}, end_line={min(total, start + 49)}")
        end = min(end, total)
        header = f"{rel} (lines {start}-{end} of {total})"
        return ToolResult(header + "\n" + numbered(lines[start - 1 : end], start))

    def _location(self, path: str, start: int | None, end: int | None) -> tuple[str, int | None, int | None]:
        """'src/app.py:12' (a traceback location) or 'tests/test_x.py::test_y' (a test id) read as a file."""
        found = _LOCATION.match(path.strip())
        if found is None or self.workspace.resolve(path).exists():
            return path, start, end
        line = found.group("line")
        if line is not None and start is None and end is None:
            return found.group("path"), max(1, int(line) - AROUND), int(line) + AROUND
        return found.group("path"), start, end

    def truncation_notice(self, shown: str, omitted_bytes: int) -> str:
        numbers = _LAST_NUMBER.findall(shown)
        if numbers:
            following = int(numbers[-1])  # the last line may be cut: show it again
            return (f"[output truncated at line {following}; use start_line={following} (and end_line) "
                    f"to read the rest]")
        return super().truncation_notice(shown, omitted_bytes)
