"""The tool interface: a named, schema-described async action whose result is plain text for the model."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from pathlib import Path

    from fixloop.tools.workspace import Workspace

FILE_PATH: dict[str, str] = {"type": "string", "description": "file path relative to the project root"}


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returns: plain text for the model; `submitted` is set only by submit."""

    text: str
    is_error: bool = False
    submitted: str | None = None


class Tool(abc.ABC):
    """A model-facing tool. Subclasses set the class attributes and implement `run`.

    `description` is the full text for native tool schemas; `brief` is one short line for the text
    protocol (the toolbox adds the JSON argument form); `parameters` is a JSON schema object.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    brief: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]
    read_only: ClassVar[bool] = False
    # How to see more when the output is cut at the toolbox's cap.
    truncation_hint: ClassVar[str] = "ask for less output"

    @abc.abstractmethod
    async def run(self, **arguments: Any) -> ToolResult:
        """Do the action; raise a FixloopError for an expected failure (it becomes an error observation)."""

    def truncation_notice(self, shown: str, omitted_bytes: int) -> str:
        """The line appended when output is cut; tools may say precisely where to continue."""
        return f"[output truncated: {omitted_bytes} more bytes not shown; {self.truncation_hint}]"


class EditingTool(Tool):
    """A tool that changes one file of the shadow in place; with `protect_tests` test files are refused."""

    read_only = False
    truncation_hint = "read_file shows the rest"

    def __init__(self, workspace: Workspace, protect_tests: bool = False) -> None:
        self.workspace = workspace
        self.protect_tests = protect_tests

    def redirected(
        self, path: str, guessed: Path, found: Path | None, lacks: str, did: str
    ) -> tuple[Path, str]:
        """The file a call meant and the note that says so: `found`, the one project file holding what the
        call names, when the path it gave (`guessed`) lacks it; else `guessed` and no note."""
        if found is None:
            return guessed, ""
        where = self.workspace.relative(found)
        return found, f"note: '{path}' {lacks}; {did} '{where}', the one project file that does\n"
