"""edit_file: replace the one occurrence of old_text in a file (old_text "" creates a new file)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from fixloop.errors import FixloopError
from fixloop.project import is_whole_test_config
from fixloop.tools.base import FILE_PATH, EditingTool, ToolResult
from fixloop.tools.matching import Replacement, replace_unique
from fixloop.tools.textfile import (
    FileToolError,
    TextFile,
    count_lines,
    describe_syntax_error,
    fenced,
    from_text,
    normalize_newlines,
    read_text,
    strip_code_fence,
    syntax_error,
)
from fixloop.tools.workspace import Workspace

CONTEXT = 2
MAX_SHOWN = 30


class EditFileTool(EditingTool):
    name = "edit_file"
    brief = 'replace old_text (must match exactly one place) with new_text; old_text "" creates a new file'
    description = (
        "Edit a file by replacing old_text with new_text. old_text must match exactly one place in the "
        "file: copy it from read_file's output without the line numbers, with enough lines to be unique. "
        "Differences in indentation and trailing spaces are tolerated. An edit that would leave a Python "
        'file with a syntax error is refused. With old_text "" a new file is created with new_text.'
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": FILE_PATH,
            "old_text": {"type": "string", "description": "the exact current text to replace"},
            "new_text": {"type": "string", "description": "the text to put in its place"},
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    }

    async def run(self, path: str, old_text: str, new_text: str) -> ToolResult:
        old = normalize_newlines(old_text)
        new = normalize_newlines(new_text)
        if old == "":
            return self._create(path, new)
        note = ""
        resolved = self.workspace.resolve_file(path, must_exist=False)
        protected = self.protect_tests and self.workspace.is_test_file(self.workspace.relative(resolved))
        if old.strip() and (not resolved.exists() or (protected and not self._holds(resolved, old))):
            # Small models guess folders ("src/x.py") or name the test file while quoting the code under
            # test: when exactly one project file holds old_text, that is the file they mean.
            found = self._one_file_with(old, None if resolved.exists() else resolved.name)
            resolved, note = self.redirected(path, resolved, found, "does not hold old_text", "edited")
        resolved = self.workspace.resolve_file(self.workspace.relative(resolved), must_exist=True)
        rel = self.workspace.relative(resolved)
        refuse_test_edit(self.workspace, rel, self.protect_tests)
        current = read_text(resolved, rel)
        edit = edit_text(current, old, new, rel)
        resolved.write_bytes(current.encode(edit.text))
        self.workspace.changed()
        replacement = edit.replacement
        region = _region(edit.text, replacement.new_first, replacement.new_last, rel)
        return ToolResult(f"{note}{_summary(replacement, rel)}:\n{region}{edit.warning}")

    def _holds(self, path: Path, old: str) -> bool:
        try:
            text = normalize_newlines(read_text(path, self.workspace.relative(path)).text)
        except FixloopError:
            return False
        return _stripped(old) in _stripped(text)

    def _one_file_with(self, old: str, name: str | None) -> Path | None:
        """The single project file (called `name`, or any non-test .py file) holding `old`, else None."""
        matches = []
        for rel in self.workspace.list_files(pattern=name or "*.py"):
            base = rel.rsplit("/", 1)[-1]
            if (name is not None and base != name) or (name is None and self.workspace.is_test_file(rel)):
                continue
            if self._holds(self.workspace.root / rel, old):
                matches.append(self.workspace.root / rel)
        return matches[0] if len(matches) == 1 else None

    def _create(self, path: str, content: str) -> ToolResult:
        resolved = self.workspace.resolve_file(path, must_exist=False)
        rel = self.workspace.relative(resolved)
        content = strip_code_fence(content, resolved)
        refuse_test_edit(self.workspace, rel, self.protect_tests)
        if resolved.exists():
            existing = read_text(resolved, rel)
            if existing.text.strip():
                raise FileToolError(
                    f"'{rel}' already exists and is not empty; give old_text to change part "
                    f"of it, or use write_file to replace it whole"
                )
        if not content.strip():
            raise FileToolError(
                "old_text and new_text are both empty; to create a file put its content in new_text"
            )
        error = syntax_error(resolved, content)
        if error is not None:
            problem = describe_syntax_error(error, content)
            raise FileToolError(
                f"edit refused: '{rel}' would have a {problem}\n"
                f"Nothing was written; fix new_text and try again."
            )
        resolved.parent.mkdir(parents=True, exist_ok=True)
        resolved.write_bytes(content.encode("utf-8"))
        self.workspace.changed()
        lines = from_text(content).lines
        return ToolResult(f"created {rel} ({count_lines(len(lines))})")


@dataclass(frozen=True)
class TextEdit:
    """An edit_file edit made to a file's text: the new text, where it changed, and a note when the file
    was broken Python before and still is."""

    text: str
    replacement: Replacement
    warning: str = ""


def edit_text(current: TextFile, old: str, new: str, rel: str) -> TextEdit:
    """`current` with the one place matching `old` replaced by `new` ('\\n' newlines); FileToolError when
    the edit cannot be made or would leave a Python file that parsed with a syntax error."""
    if not old.strip():
        raise FileToolError(
            'old_text is only whitespace; give the exact lines to replace (or "" to create a new file)'
        )
    if old == new:
        raise FileToolError(
            "old_text and new_text are the same, so nothing would change; put the corrected code in new_text"
        )
    replacement = replace_unique(current.text, old, new, rel)
    text = replacement.text
    if current.ends_with_newline and text and not text.endswith("\n"):
        text += "\n"
    error = syntax_error(Path(rel), text)
    if error is None:
        return TextEdit(text, replacement)
    if syntax_error(Path(rel), current.text) is None:
        raise FileToolError(
            f"edit refused: it would leave '{rel}' with a {describe_syntax_error(error, text)}\n"
            f"The file is unchanged; fix new_text and try again."
        )
    return TextEdit(text, replacement, f"\nnote: '{rel}' still has a {describe_syntax_error(error, text)}")


def _summary(replacement: Replacement, rel: str) -> str:
    if replacement.new_last < replacement.new_first:
        return f"edited {rel}: deleted lines {_span(replacement.old_first, replacement.old_last)}"
    how = (
        " (matched with different indentation; new_text was re-indented to fit)"
        if replacement.reindented
        else ""
    )
    old_span = _span(replacement.old_first, replacement.old_last)
    new_span = _span(replacement.new_first, replacement.new_last)
    return f"edited {rel}: replaced lines {old_span} with lines {new_span}{how}"


def refuse_test_edit(workspace: Workspace, rel: str, protect_tests: bool) -> None:
    """A FileToolError when this run may not change tests and `rel` is test code or test configuration
    (a pytest configuration file, conftest.py, an interpreter start-up hook)."""
    if protect_tests and workspace.is_test_file(rel):
        raise FileToolError(
            f"'{rel}' is a test file, and this run may not change tests; fix the code under test instead"
        )
    if protect_tests and is_whole_test_config(rel):
        raise FileToolError(
            f"'{rel}' is test configuration, and this run may not change how tests run; fix "
            f"the code under test instead"
        )


def _span(first: int, last: int) -> str:
    return str(first) if first >= last else f"{first}-{last}"


def _region(text: str, first: int, last: int, rel: str) -> str:
    """The changed lines with a little context, under a header with their numbers."""
    lines = from_text(text).lines
    start = max(1, first - CONTEXT)
    end = min(len(lines), max(last, first - 1) + CONTEXT)
    if end - start + 1 > MAX_SHOWN:
        end = start + MAX_SHOWN - 1
        return fenced(lines[start - 1 : end], start, rel) + f"\n… (read_file '{rel}' shows the rest)"
    if end < start:
        return "(the file is now empty)"
    return fenced(lines[start - 1 : end], start, rel)


def _stripped(text: str) -> str:
    """Text with each line's surrounding whitespace and blank lines removed, for lenient containment."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())
