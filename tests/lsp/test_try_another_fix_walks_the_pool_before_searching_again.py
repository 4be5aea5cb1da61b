"""The pool through the server: a one-token change and the model's own fix both verify; the model's is
proposed and the fix notification says where it came from and that another verified fix is pooled; when
the user discards it, tryAnotherFix proposes the pool's next fix (verified again) without a model turn."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import CALC, TEST_FILE, command, fix_turns

FIX = "fixloop.server.fixFailingTest"
TRY_ANOTHER = "fixloop.server.tryAnotherFix"
TEST_ADD = f"{TEST_FILE}::test_add"
POOLED = {"FIXLOOP_MUTANTS": "on", "FIXLOOP_POOL_SHARE": "0.25", "FIXLOOP_POOL_SIZE": "2"}


@pytest.mark.asyncio
async def test_another_fix_comes_from_the_pool_first(lsp, project: Path, scripted_model) -> None:
    model = scripted_model(fix_turns([TEST_ADD], new="return b + a"))
    client = await lsp(project, base_url=model.base_url, capabilities="neovim", env=POOLED)
    client.message_answer = "Discard"
    first = await command(client, FIX, {"testId": TEST_ADD}, token="first")

    assert first["status"] == "fixed" and first["applied"] is False, first
    assert "+    return b + a" in first["diff"]
    assert "— from the model's own tool turns (1 other verified fix(es) in the pool)" in first["summary"]
    assert [entry["mechanical"] for entry in first["pool"]] == [False, True]
    progress = " ".join(str(getattr(report, "message", "")) for report in client.progress_reports["first"])
    assert "verified fix 1 (a one-token change found by mechanical search, no model)" in progress
    asked = len(model.requests)

    client.message_answer = "Apply"
    second = await command(client, TRY_ANOTHER, {"runId": first["runId"], "reason": "not that one"})

    assert second["status"] == "fixed" and second["applied"] is True, second
    assert "+    return a + b" in second["diff"]
    assert second["summary"].startswith("passes the tests; check the logic — a one-token change")
    assert second["summary"].endswith("(the next fix of the pool, verified again)")
    assert len(model.requests) == asked  # no model turn: the pool had the next fix
    assert (project / "calc.py").read_text() == CALC  # the client applies edits; the server never writes
