"""submit: the model's claim that the fix is done; the loop verifies it."""

from __future__ import annotations

from typing import Any, ClassVar

from fixloop.tools.base import Tool, ToolResult


class SubmitTool(Tool):
    name = "submit"
    brief = "finish: claim the failing tests are fixed, with a one-paragraph summary of the change"
    description = (
        "Call when you have fixed the code and the failing tests pass. Give a short summary of the cause and "
        "the change. The fix is then verified: the target tests must pass and no other test may break."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"summary": {"type": "string", "description": "what was wrong and what you changed"}},
        "required": ["summary"],
        "additionalProperties": False,
    }
    read_only = False

    async def run(self, summary: str) -> ToolResult:
        return ToolResult("submitted for verification", submitted=summary.strip() or "(no summary given)")
