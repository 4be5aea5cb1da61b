"""search: a Python regex over the project's text files, as 'path:line: text' matches.

The matching runs in a child process with a time limit: Python's `re` backtracks, and a pattern like
`(a+)+$` can take longer than the universe on one line while holding the GIL (no Ctrl-C, no cancel).
The child is killed when the limit passes or the run is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Any, ClassVar

from fixloop.errors import FixloopError
from fixloop.tools.base import Tool, ToolResult
from fixloop.tools.textfile import BINARY_SNIFF, MAX_TEXT_BYTES
from fixloop.tools.workspace import Workspace

MAX_MATCHES = 100
MAX_LINE = 200
MAX_PATTERN = 1000  # characters
TIME_LIMIT = 10.0  # seconds per search
_WORKER = Path(__file__).with_name("search_worker.py")


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

    def __init__(
        self, workspace: Workspace, max_matches: int = MAX_MATCHES, time_limit: float = TIME_LIMIT
    ) -> None:
        self.workspace = workspace
        self.max_matches = max_matches
        self.time_limit = time_limit

    async def run(self, pattern: str, path: str = "") -> ToolResult:
        if not pattern:
            raise SearchError("pattern is empty; give a regular expression, e.g. 'def parse_date'")
        if len(pattern) > MAX_PATTERN:
            raise SearchError(
                f"pattern is {len(pattern)} characters long (at most {MAX_PATTERN}); "
                f"search for a shorter, distinctive part"
            )
        try:
            re.compile(pattern)
        except (re.error, RecursionError, OverflowError) as error:
            where = f" at position {error.pos}" if getattr(error, "pos", None) is not None else ""
            message = getattr(error, "msg", str(error))
            raise SearchError(
                f"invalid regular expression {pattern!r}: {message}{where}; escape special "
                f"characters like ( ) [ ] . * + ? with a backslash to match them"
            ) from None
        files = await asyncio.to_thread(self.workspace.list_files, path)
        found = await self._match(pattern, files)
        where = f" under {path.strip()}" if path.strip() not in ("", ".") else ""
        matches, total = found["matches"], found["total"]
        if not matches:
            return ToolResult(f"no matches for {pattern!r}{where} ({len(files)} files searched)")
        text = "\n".join(matches)
        if total > len(matches):
            text += (
                f"\n[{total - len(matches)} more matches not shown ({total} in all); narrow the "
                f"pattern or path]"
            )
        return ToolResult(text)

    async def _match(self, pattern: str, files: list[str]) -> dict[str, Any]:
        """Run the matcher child on `files` (already allowed by the resolver); kill it past the limit."""
        job = {
            "pattern": pattern,
            "files": [[rel, str(self.workspace.root / rel)] for rel in files],
            "max_matches": self.max_matches,
            "max_line": MAX_LINE,
            "max_bytes": MAX_TEXT_BYTES,
            "sniff": BINARY_SNIFF,
        }
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-S",
            str(_WORKER),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            data = json.dumps(job).encode("utf-8", "surrogateescape")
            async with asyncio.timeout(self.time_limit):
                out, err = await process.communicate(data)
        except TimeoutError:
            raise SearchError(
                f"search for {pattern!r} was stopped after {self.time_limit:g} s: the pattern "
                f"backtracks too much (nested repeats like (a+)+ or (.*)*); use a simpler "
                f"pattern or a narrower path"
            ) from None
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await asyncio.shield(process.wait())
        if process.returncode != 0:
            last = (err.decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]
            raise SearchError(f"search for {pattern!r} failed: {last[:200]}")
        return json.loads(out)
