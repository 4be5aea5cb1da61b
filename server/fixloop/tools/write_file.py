"""write_file: replace a small file whole (small models rewrite short files more reliably than they edit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from fixloop.tools.base import FILE_PATH, Tool, ToolResult
from fixloop.tools.edit_file import refuse_test_edit
from fixloop.tools.textfile import (
    FileToolError,
    TextFile,
    count_lines,
    describe_syntax_error,
    from_text,
    normalize_newlines,
    read_text,
    strip_code_fence,
    syntax_error,
)
from fixloop.tools.workspace import Workspace

DEFAULT_MAX_BYTES = 12_000
_DESCRIPTION = (
    "Write the complete new content of a file, replacing what is there (or creating the file). Only "
    "for small files (up to {limit} bytes); change larger files with edit_file. Content that would "
    "leave a Python file with a syntax error is refused."
)


class WriteFileTool(Tool):
    name = "write_file"
    brief = "replace a small file's whole content (or create it); for larger files use edit_file"
    description = _DESCRIPTION.format(limit=DEFAULT_MAX_BYTES)  # as a class attribute: the prompt prefix
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": FILE_PATH,
            "content": {"type": "string", "description": "the whole new content of the file"},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }
    read_only = False

    def __init__(
        self, workspace: Workspace, max_bytes: int = DEFAULT_MAX_BYTES, protect_tests: bool = False
    ) -> None:
        self.workspace = workspace
        self.protect_tests = protect_tests
        self.max_bytes = max_bytes
        if max_bytes != DEFAULT_MAX_BYTES:
            self.description = _DESCRIPTION.format(limit=max_bytes)  # type: ignore[misc]

    async def run(self, path: str, content: str) -> ToolResult:
        resolved = self.workspace.resolve_file(path, must_exist=False)
        rel = self.workspace.relative(resolved)
        refuse_test_edit(self.workspace, rel, self.protect_tests)
        existed = resolved.exists()
        current = None
        if existed:
            old_size = resolved.stat().st_size
            if old_size > self.max_bytes:
                raise FileToolError(
                    f"'{rel}' is {old_size} bytes, over write_file's limit of "
                    f"{self.max_bytes}; change it with edit_file instead"
                )
            current = read_text(resolved, rel)
        text = written_text(content, current, rel, self.max_bytes)
        data = (current or from_text("")).encode(text)
        resolved.parent.mkdir(parents=True, exist_ok=True)
        resolved.write_bytes(data)
        self.workspace.changed()
        lines = len(from_text(text).lines) if text else 0
        verb = "wrote" if existed else "created"
        return ToolResult(f"{verb} {rel} ({count_lines(lines)})")


def written_text(content: str, current: TextFile | None, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """The text write_file puts in `rel` ('\\n' newlines; `current` is what the file holds, None for a new
    file); FileToolError when it is too large or would break a Python file that parsed."""
    text = strip_code_fence(normalize_newlines(content), Path(rel))
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise FileToolError(
            f"content is {size} bytes; write_file takes at most {max_bytes} bytes, "
            f"so change '{rel}' with edit_file instead"
        )
    was_valid = current is None or syntax_error(Path(rel), current.text) is None
    if current is not None and current.ends_with_newline and text and not text.endswith("\n"):
        text += "\n"
    error = syntax_error(Path(rel), text)
    if error is not None and was_valid:
        raise FileToolError(
            f"write refused: '{rel}' would have a {describe_syntax_error(error, text)}\n"
            f"The file is unchanged; fix the content and try again."
        )
    return text
