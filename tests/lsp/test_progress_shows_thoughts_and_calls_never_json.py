"""The progress a user watches shows the model's prose as it streams and one `→ tool target` line per
call, never pieces of the call's JSON, whatever form the model writes calls in; the transcript keeps all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_harness import FIX, FIXED_CALC, TEST_FILE, command, progress_values

TEST_ADD = f"{TEST_FILE}::test_add"
PACE = {"chunk_chars": 3, "chunk_delay": 0.02}  # slow enough for progress reports while a call is written
AFTER = "\n\nThe test file says:\n  9 |     assert add(2, 3) == 5\n" + "and so on " * 20
JSON_PIECES = ("{", "}", '"name"', '"arguments"', '"path"', "old_text", "```", "<tool_call>", "Action Input")


def as_json(tool: str, arguments: dict) -> str:
    return json.dumps({"name": tool, "arguments": arguments})


def content_turns() -> list[dict]:
    edit = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}
    return [
        {
            "content": "The sum comes out negative,\nso add must subtract. I will\nfix the sign in calc.py.\n"
            "```json\n" + as_json("edit_file", edit) + "\n```" + AFTER,
            **PACE,
        },
        {
            "content": "Now the tests.\n<tool_call>\n" + as_json("run_tests", {}) + "\n</tool_call>" + AFTER,
            **PACE,
        },
        {
            "content": "Thought: they pass.\nAction: submit\nAction Input: "
            + json.dumps({"summary": "add adds"})
            + AFTER,
            **PACE,
        },
    ]


@pytest.mark.asyncio
async def test_no_progress_line_holds_a_piece_of_a_call(lsp, project: Path, scripted_model) -> None:
    model = scripted_model(content_turns())
    client = await lsp(project, base_url=model.base_url, capabilities="visual-studio-code")
    result = await command(client, FIX, {"testId": TEST_ADD})
    assert result["status"] == "fixed", result
    messages = [v.message for v in progress_values(client) if v.kind == "report" and v.message]
    assert [m for m in messages if any(piece in m for piece in JSON_PIECES)] == []
    assert "→ edit_file calc.py" in messages and "→ run_tests" in messages and "→ submit" in messages
    assert any("so add must subtract" in m for m in messages)  # the thought, as one line
    assert not any("and so on" in m for m in messages)  # what came after a call is never shown
    transcript = Path(result["transcript"]).read_text()
    assert '\\"old_text\\": \\"return a - b\\"' in transcript  # the transcript keeps the whole reply
    assert (project / "calc.py").read_text() == FIXED_CALC or result["applied"]
