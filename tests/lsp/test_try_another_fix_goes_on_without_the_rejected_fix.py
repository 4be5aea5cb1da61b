"""fixloop.server.tryAnotherFix: after the user discards a proposed fix, the run's conversation goes on with
"the user rejected this fix" and the reason, and that exact fix is never proposed again."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import CALC, TEST_FILE, command, fix_turns

FIX = "fixloop.server.fixFailingTest"
TRY_ANOTHER = "fixloop.server.tryAnotherFix"
TEST_ADD = f"{TEST_FILE}::test_add"
SAME = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}
OTHER = {"path": "calc.py", "old_text": "return a + b", "new_text": "return b + a"}


def another_turns() -> list[dict]:
    return [
        {
            "content": "The same sign fix again.",
            "tool_calls": [{"name": "edit_file", "arguments": SAME}],
            "expect": {
                "messages_contain": [
                    "add subtracts; fixing the sign.",  # the first run's conversation
                    "The user rejected the fix you proposed",
                    "The user's reason: keep the operands in the order b, a",
                ]
            },
        },
        {"content": "Submitting.", "tool_calls": [{"name": "submit", "arguments": {"summary": "a + b"}}]},
        {
            "content": "Another way.",
            "tool_calls": [{"name": "edit_file", "arguments": OTHER}],
            "expect": {"last_message_contains": "the user rejected exactly this fix"},
        },
        {"content": "Submitting.", "tool_calls": [{"name": "submit", "arguments": {"summary": "b + a"}}]},
    ]


@pytest.mark.asyncio
async def test_a_discarded_fix_is_followed_by_a_different_one(lsp, project: Path, scripted_model) -> None:
    model = scripted_model([*fix_turns([TEST_ADD]), *another_turns()])
    client = await lsp(project, base_url=model.base_url, capabilities="neovim")
    client.message_answer = "Discard"  # the Apply question: the user discards the first fix
    first = await command(client, FIX, {"testId": TEST_ADD})
    assert first["status"] == "fixed" and first["applied"] is False
    assert "+    return a + b" in first["diff"]

    client.message_answer = "Apply"
    second = await command(
        client, TRY_ANOTHER, {"runId": first["runId"], "reason": "keep the operands in the order b, a"}
    )

    assert model.failures == []
    assert second["status"] == "fixed" and second["applied"] is True, second
    assert second["runId"] != first["runId"] and second["testIds"] == [TEST_ADD]
    assert "+    return b + a" in second["diff"] and "return a + b" not in second["diff"]
    assert second["attempts"] == 2  # the rejected fix came back once and was refused
    assert (project / "calc.py").read_text() == CALC  # the client applies edits; the server never writes


@pytest.mark.asyncio
async def test_an_unknown_run_is_one_clear_line(lsp, project: Path, scripted_model) -> None:
    client = await lsp(project, base_url=scripted_model([]).base_url)
    result = await command(client, TRY_ANOTHER, {"runId": "nope"})
    assert result["status"] == "error"
    assert result["summary"].startswith("run nope is not kept: fixloop keeps a run that proposed a fix")
    bad = await command(client, TRY_ANOTHER, {"reason": "no run"})
    assert bad["status"] == "error" and "tryAnotherFix takes" in bad["summary"]
