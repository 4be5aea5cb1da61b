"""search: a Python regex over the project's text files, as 'path:line: text' matches."""

from __future__ import annotations

import asyncio
import re
from typing import Any, ClassVar

from fixloop.errors import FixloopError
from fixloop.tools.base import Tool, ToolResult
from fixloop.tools.textfile import MAX_TEXT_BYTES, is_binary
from fixloop.tools.workspace import Workspace

MAX_MATCHES = 100
MAX_LINE = 200


class SearchError(FixloopError):
    """A search pattern is not a valid regular expression."""


class SearchTool(Tool):
    name = "search"
    brief = "find a Python regex in the project's text files (optionally under a path); shows path:line: text"
    description = (
        "Search the project's text files for a Python regular expression, line by line. Shows each match "
        "as 'path:line: text'. Give path (a folder or file relative to the project root) to search less. "
        "Escape regex characters such as ( [ . * with a backslash to find them literally."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Python regular expression, e.g. 'def parse_date'"},
            "path": {"type": "string", "description": "folder or file to search; default: the whole project"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    read_only = True
    truncation_hint = "narrow the pattern or path"

    def __init__(self, workspace: Workspace, max_matches: int = MAX_MATCHES) -> None:
        self.workspace = workspace
        self.max_matches = max_matches

    async def run(self, pattern: str, path: str = "") -> ToolResult:
        if not pattern:
            raise SearchError("pattern is empty; give a regular expression, e.g. 'def parse_date'")
        try:
            regex = re.compile(pattern)
        except re.error as error:
            where = f" at position {error.pos}" if error.pos is not None else ""
            raise SearchError(f"invalid regular expression {pattern!r}: {error.msg}{where}; escape special "
                              f"characters like ( ) [ ] . * + ? with a backslash to match them") from None
        files = await asyncio.to_thread(self.workspace.list_files, path)
        return await asyncio.to_thread(self._search, regex, files, pattern, path)

    def _search(self, regex: re.Pattern[str], files: list[str], pattern: str, path: str) -> ToolResult:
        matches: list[str] = []
        total = 0
        for rel in files:
            full = self.workspace.root / rel
            try:
                if full.stat().st_size > MAX_TEXT_BYTES:
                    continue
                data = full.read_bytes()
            except OSError:
                continue
            if is_binary(data):
                continue
            text = data.decode("utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    total += 1
                    if len(matches) < self.max_matches:
                        shown = line.strip()
                        if len(shown) > MAX_LINE:
                            shown = shown[:MAX_LINE] + "…"
                        matches.append(f"{rel}:{number}: {shown}")
        where = f" under {path.strip()}" if path.strip() not in ("", ".") else ""
        if not matches:
            return ToolResult(f"no matches for {pattern!r}{where} ({len(files)} files searched)")
        text = "\n".join(matches)
        if total > len(matches):
            text += (f"\n[{total - len(matches)} more matches not shown ({total} in all); narrow the "
                     f"pattern or path]")
        return ToolResult(text)
