"""The whole editor flow: runTests -> diagnostic -> quickfix code action -> its command -> applyEdit,
for VS Code's and Neovim's capability sets (annotated documentChanges vs plain changes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import (
    ADD_LINE,
    CALC,
    FIXED_CALC,
    RUN_TESTS,
    TEST_FILE,
    apply_text_edits,
    command,
    fix_turns,
    uri,
)
from lsprotocol import types

TEST_ADD = f"{TEST_FILE}::test_add"


@pytest.mark.asyncio
@pytest.mark.parametrize("capabilities", ["visual-studio-code", "neovim"])
async def test_from_diagnostic_to_edit(lsp, project: Path, scripted_model, capabilities: str) -> None:
    model = scripted_model(fix_turns([TEST_ADD]))
    client = await lsp(project, base_url=model.base_url, capabilities=capabilities)
    doc = uri(project / TEST_FILE)
    await command(client, RUN_TESTS, {"uri": doc})
    diagnostic = next(d for d in client.diagnostics[doc] if d.data["testId"] == TEST_ADD)
    assert diagnostic.range.start.line == ADD_LINE - 1
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=[types.CodeActionKind.QuickFix]),
        )
    )
    (action,) = actions
    result = await command(client, action.command.command, *action.command.arguments)
    assert result["status"] == "fixed" and result["applied"] is True
    (params,) = client.edits
    if capabilities == "visual-studio-code":
        (change,) = params.edit.document_changes
        assert params.edit.change_annotations and change.text_document.version is None  # calc.py is not open
        edits = change.edits
        assert client.message_requests == []
    else:
        assert params.edit.document_changes is None
        (edits,) = params.edit.changes.values()
        assert len(client.message_requests) == 1
    assert apply_text_edits(CALC, edits) == FIXED_CALC
