"""read_file: a text file, whole or a line range, in a fenced block under a header with its line numbers."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from fixloop.tools.base import Tool, ToolResult
from fixloop.tools.fences import FENCE, opening_for
from fixloop.tools.textfile import FileToolError, read_text
from fixloop.tools.workspace import Workspace

_FIRST_LINE = re.compile(r"\A.*? \(lines (\d+)-\d+ of \d+\)")
_LOCATION = re.compile(r"^(?P<path>.+?)(?::(?P<line>\d+)(?::\d+)?|::[\w\[\]\-.:/ ]+)$")
AROUND = 15


class ReadFileTool(Tool):
    name = "read_file"
    brief = "show a text file, optionally only lines start_line..end_line"
    description = (
        "Read a text file of the project: a header with the line numbers shown, then the text as it is in "
        "the file. Paths are relative to the project root. Give start_line and end_line (1-based, "
        "inclusive) to read part of a long file."
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
            raise FileToolError(
                f"end_line {end} is before start_line {start}; give a range like "
                f"start_line={start}, end_line={min(total, start + 49)}"
            )
        end = min(end, total)
        header = f"{rel} (lines {start}-{end} of {total})"
        return ToolResult("\n".join([header, opening_for(rel), *lines[start - 1 : end], FENCE]))

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
        first = _FIRST_LINE.search(shown)
        if first is not None:
            # the header and fence take two lines; the last line shown may be cut: show it again
            following = int(first.group(1)) + max(0, shown.count("\n") - 2)
            return (
                f"[output truncated at line {following}; use start_line={following} (and end_line) "
                f"to read the rest]"
            )
        return super().truncation_notice(shown, omitted_bytes)
