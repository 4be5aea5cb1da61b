"""A client that declares `experimental.fixloop.showsResults` (the VS Code extension) shows each command's
answer itself: the server sends it no window/showMessage repeating the outcome, only the other messages.
Clients that do not declare it (Neovim) get the outcome as a message, as before."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from lsp_harness import FIX, RUN_TESTS, TEST_FILE, command, fix_turns
from lsprotocol import types
from pytest_lsp import client_capabilities

TEST_ADD = f"{TEST_FILE}::test_add"
TRY_ANOTHER = "fixloop.server.tryAnotherFix"


def showing_results() -> types.ClientCapabilities:
    vscode = client_capabilities("visual-studio-code")
    return attrs.evolve(vscode, experimental={"other": 1, "fixloop": {"showsResults": True}})


@pytest.mark.asyncio
async def test_a_fix_is_answered_without_a_result_message_but_other_messages_still_come(
    lsp, project: Path, scripted_model
) -> None:
    model = scripted_model(fix_turns([TEST_ADD]))
    client = await lsp(
        project, base_url=model.base_url, capabilities=showing_results(), init_options={"maxSteps": "many"}
    )
    result = await command(client, FIX, {"testId": TEST_ADD})
    assert result["status"] == "fixed" and result["applied"] is True, result
    (warning,) = [m.message for m in client.messages]  # the bad setting, not the outcome
    assert "maxSteps" in warning and "using the default" in warning


@pytest.mark.asyncio
async def test_errors_ending_a_command_come_only_in_its_answer(lsp, project: Path) -> None:
    client = await lsp(project, capabilities=showing_results())
    no_run = await command(client, TRY_ANOTHER, {"runId": "gone"})
    bad_scope = await command(client, RUN_TESTS, {"uri": "file:///nowhere/test_x.py"})
    no_test = await command(
        client, FIX, {"uri": (project / "calc.py").as_uri(), "position": {"line": 0, "character": 0}}
    )
    assert [r["status"] for r in (no_run, bad_scope, no_test)] == ["error"] * 3, (no_run, bad_scope, no_test)
    assert client.messages == []


@pytest.mark.asyncio
async def test_without_the_declaration_the_outcome_is_also_a_message(lsp, project: Path) -> None:
    client = await lsp(project, capabilities="neovim@v0.7.0")
    answer = await command(client, TRY_ANOTHER, {"runId": "gone"})
    assert answer["status"] == "error"
    assert [m.message for m in client.messages] == [f"fixloop: {answer['summary']}"]
