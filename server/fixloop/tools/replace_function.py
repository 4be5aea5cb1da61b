"""replace_function: put a whole corrected function or method in place of the one of that name (by AST)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any, ClassVar

from fixloop.tools.base import FILE_PATH, EditingTool, ToolResult
from fixloop.tools.code_reply import CodeBlock, apply_code_blocks
from fixloop.tools.edit_file import refuse_test_edit
from fixloop.tools.textfile import FileToolError, read_text, strip_code_fence


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

    async def run(self, path: str, name: str, code: str) -> ToolResult:
        resolved = self.workspace.resolve_file(path, must_exist=True)
        rel = self.workspace.relative(resolved)
        refuse_test_edit(self.workspace, rel, self.protect_tests)
        current = read_text(resolved, rel)
        new_text, applied = replaced_function(current.text, rel, name, code)
        resolved.write_bytes(current.encode(new_text))
        self.workspace.changed()
        return ToolResult(f"{rel}: " + "; ".join(note.split(": ", 1)[-1] for note in applied))


def replaced_function(text: str, rel: str, name: str, code: str) -> tuple[str, tuple[str, ...]]:
    """`text` of `rel` with the function or method `name` replaced by `code`, and one line per change;
    FileToolError when the code is no valid definition of `name` or changes nothing."""
    code = textwrap.dedent(strip_code_fence(code, Path(rel)).replace("\r\n", "\n"))
    wanted = name.strip().rsplit(".", 1)[-1]
    try:
        tree = ast.parse(code)
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
    edit = apply_code_blocks([CodeBlock(_method_as_class(name, code), rel)], {rel: text})
    if rel not in edit.files:
        raise FileToolError("; ".join(edit.problems) or f"{name} is unchanged: put the corrected code")
    return edit.files[rel], edit.applied


def _method_as_class(name: str, code: str) -> str:
    """`Class.method` code placed in its class, so that the method of that class is the one replaced."""
    if "." not in name.strip():
        return code
    owner = name.strip().rsplit(".", 1)[0].rsplit(".", 1)[-1]
    body = "\n".join(("    " + line) if line.strip() else line for line in code.splitlines())
    return f"class {owner}:\n{body}\n"
