"""replace_function: put a whole corrected function or method in place of the one of that name (by AST)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any, ClassVar

from fixloop.errors import FixloopError
from fixloop.python_syntax import parse
from fixloop.tools.base import FILE_PATH, EditingTool, ToolResult
from fixloop.tools.code_placement import PlacementHints, definitions, parsed
from fixloop.tools.code_reply import CodeBlock, apply_code_blocks
from fixloop.tools.edit_file import refuse_test_edit
from fixloop.tools.textfile import FileToolError, read_text, strip_code_fence
from fixloop.tools.workspace import Workspace


class ReplaceFunctionTool(EditingTool):
    name = "replace_function"
    brief = "replace a whole function or method (by name) with its corrected code"
    description = (
        "Replace a whole function or method of a file with corrected code: give the file's path, the "
        "function's name (Class.method for a method) and its complete new code, from its def line "
        "(decorators included) to its end. The rest of the file stays as it is. Safer than edit_file for "
        "changes of more than one line: no old_text to copy."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": FILE_PATH,
            "name": {"type": "string", "description": "the function's name, or Class.method"},
            "code": {"type": "string", "description": "the complete corrected function, def line included"},
        },
        "required": ["path", "name", "code"],
        "additionalProperties": False,
    }

    def __init__(
        self, workspace: Workspace, protect_tests: bool = False, hints: PlacementHints | None = None
    ) -> None:
        super().__init__(workspace, protect_tests)
        self.hints = hints  # the run's suspects: which of two definitions of one name is replaced

    async def run(self, path: str, name: str, code: str) -> ToolResult:
        resolved = self.workspace.resolve_file(path, must_exist=False)
        note = ""
        if not resolved.exists() or not self._defines(resolved, name):
            # Small models guess folders ("src/x.py"): when exactly one project file defines the function
            # (one of that file name first, else any code file), that is the file they mean.
            found = self._one_file_defining(name, resolved.name)
            resolved, note = self.redirected(
                path, resolved, found, f"does not define {name.strip()}", "replaced it in"
            )
        resolved = self.workspace.resolve_file(self.workspace.relative(resolved), must_exist=True)
        rel = self.workspace.relative(resolved)
        refuse_test_edit(self.workspace, rel, self.protect_tests)
        current = read_text(resolved, rel)
        new_text, applied = replaced_function(current.text, rel, name, code, self.hints)
        resolved.write_bytes(current.encode(new_text))
        self.workspace.changed()
        done = "; ".join(line.split(": ", 1)[-1] for line in applied)
        return ToolResult(f"{note}{rel}: {done}")

    def _defines(self, path: Path, name: str) -> bool:
        """Whether the file defines the function `name` (Class.method: that class's method) at any depth."""
        try:
            tree = parse(read_text(path, self.workspace.relative(path)).text)
        except (FixloopError, SyntaxError, ValueError):
            return False
        wanted = name.strip()
        return any(wanted in (found.qualname, found.shown, found.node.name) for found in definitions(tree))

    def _one_file_defining(self, name: str, file_name: str) -> Path | None:
        """The single project file named `file_name` defining `name`, else the single non-test .py file."""
        for pattern in (file_name, "*.py"):
            matches = []
            for rel in self.workspace.list_files(pattern=pattern):
                if not rel.endswith(".py") or self.workspace.is_test_file(rel):
                    continue
                if pattern != "*.py" and rel.rsplit("/", 1)[-1] != file_name:
                    continue
                if self._defines(self.workspace.root / rel, name):
                    matches.append(self.workspace.root / rel)
            if matches:
                return matches[0] if len(matches) == 1 else None
        return None


def replaced_function(
    text: str, rel: str, name: str, code: str, hints: PlacementHints | None = None
) -> tuple[str, tuple[str, ...]]:
    """`text` of `rel` with the function or method `name` replaced by `code`, and one line per change (and
    per choice between two definitions of the name, `hints` deciding); FileToolError when the code is no
    valid definition of `name` or changes nothing."""
    code = textwrap.dedent(strip_code_fence(code, Path(rel)).replace("\r\n", "\n"))
    wanted = name.strip().rsplit(".", 1)[-1]
    try:
        code, tree = parsed(code)  # a method copied at its class's indentation is moved left
    except SyntaxError as error:
        raise FileToolError(
            f"code is not valid Python (line {error.lineno}: {error.msg}); give the "
            f"whole function, from its def line to its end"
        ) from None
    functions = ast.FunctionDef | ast.AsyncFunctionDef
    defined = [node.name for node in tree.body if isinstance(node, functions)]
    if wanted not in defined:
        raise FileToolError(
            f"code does not define {wanted!r}; give the whole function, starting with 'def {wanted}('"
        )
    edit = apply_code_blocks([CodeBlock(_method_as_class(name, code), rel)], {rel: text}, hints)
    if rel not in edit.files:
        raise FileToolError("; ".join(edit.problems) or f"{name} is unchanged: put the corrected code")
    return edit.files[rel], (*edit.applied, *edit.choices)


def _method_as_class(name: str, code: str) -> str:
    """`Class.method` code placed in its class, so that the method of that class is the one replaced."""
    if "." not in name.strip():
        return code
    owner = name.strip().rsplit(".", 1)[0].rsplit(".", 1)[-1]
    body = "\n".join(("    " + line) if line.strip() else line for line in code.splitlines())
    return f"class {owner}:\n{body}\n"
