"""list_files: the project's files as .gitignore keeps them, optionally under a folder or matching a glob."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from fixloop.tools.base import Tool, ToolResult
from fixloop.tools.workspace import Workspace

MAX_FILES = 300


class ListFilesTool(Tool):
    name = "list_files"
    brief = "list project files, optionally under a folder path and/or matching a glob pattern like '*.py'"
    description = (
        "List the project's files (paths relative to the project root; files ignored by .gitignore, "
        "virtualenvs and caches are left out). Give path to list one folder, pattern (a glob such as "
        "'*.py' or 'tests/test_*.py') to filter."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "folder relative to the project root (default: root)"},
            "pattern": {"type": "string", "description": "glob over paths or file names, e.g. '*.py'"},
        },
        "required": [],
        "additionalProperties": False,
    }
    read_only = True
    truncation_hint = "give a folder path or a narrower pattern"

    def __init__(self, workspace: Workspace, max_files: int = MAX_FILES) -> None:
        self.workspace = workspace
        self.max_files = max_files

    async def run(self, path: str = "", pattern: str | None = None) -> ToolResult:
        files = await asyncio.to_thread(self.workspace.list_files, path, pattern or None)
        where = f" under {path.strip()}" if path.strip() not in ("", ".") else ""
        matching = f" matching {pattern!r}" if pattern else ""
        if not files:
            return ToolResult(f"no files{where}{matching}")
        shown = files[: self.max_files]
        text = "\n".join(shown)
        if len(files) > len(shown):
            text += (
                f"\n[{len(files) - len(shown)} more files not shown ({len(files)} in all); "
                f"give a folder path or a narrower pattern]"
            )
        return ToolResult(text)
