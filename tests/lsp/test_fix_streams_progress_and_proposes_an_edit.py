"""fixFailingTest streams the loop as work-done progress and the trace as log messages, then proposes the
proven change as one workspace/applyEdit shaped by the client's capabilities."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import (
    ADD_LINE,
    CALC,
    FIX,
    FIXED_CALC,
    TEST_FILE,
    apply_text_edits,
    command,
    fix_turns,
    new_token,
    open_document,
    progress_values,
    uri,
)
from lsprotocol import types

TEST_ADD = f"{TEST_FILE}::test_add"


def check_progress(values: list, test_id: str = TEST_ADD) -> None:
    begin, *reports, end = values
    assert begin.kind == "begin" and begin.cancellable is True and begin.percentage == 0
    assert test_id in begin.title
    assert all(v.kind == "report" for v in reports) and end.kind == "end"
    percentages = [r.percentage for r in reports]
    assert None not in percentages and percentages == sorted(percentages) and max(percentages) < 100
    messages = [r.message for r in reports]
    assert "add subtracts; fixing the sign." in messages  # a thought, one line
    assert "→ edit_file calc.py" in messages  # an action: the tool and its file, never its JSON
    assert any(m.startswith("← run_tests") for m in messages)  # an observation
    assert any(m.startswith("✓ verified") for m in messages)  # the verdict
    assert all("\n" not in m and len(m) <= 100 for m in messages)
    assert end.message.startswith("fixed and applied")


@pytest.mark.asyncio
async def test_vscode_gets_a_versioned_annotated_edit(lsp, project: Path, scripted_model) -> None:
    model = scripted_model(fix_turns([TEST_ADD]))
    client = await lsp(project, base_url=model.base_url, capabilities="visual-studio-code")
    calc = open_document(client, project, "calc.py", version=7)
    result = await command(client, FIX, {"testId": TEST_ADD})
    assert result["status"] == "fixed", result
    assert result["applied"] is True and result["failureReason"] is None
    assert result["files"] == ["calc.py"] and "+    return a + b" in result["diff"]
    (params,) = client.edits
    assert params.label == f"fixloop: fix {TEST_ADD}"
    assert params.edit.changes is None
    (change,) = params.edit.document_changes
    assert change.text_document.uri == calc and change.text_document.version == 7
    assert all(isinstance(e, types.AnnotatedTextEdit) for e in change.edits)
    annotation = params.edit.change_annotations[change.edits[0].annotation_id]
    assert annotation.needs_confirmation is False  # source change; test-file changes need confirmation
    assert apply_text_edits(CALC, change.edits) == FIXED_CALC
    assert client.message_requests == []  # VS Code previews annotated edits itself
    check_progress(progress_values(client))
    trace = "\n".join(m.message for m in client.log_messages)
    assert "thought: add subtracts; fixing the sign." in trace and "action: edit_file" in trace
    assert any("fixed" in m.message and m.type == types.MessageType.Info for m in client.messages)
    assert (project / "calc.py").read_text() == CALC  # the user's file is only edited by the client


@pytest.mark.asyncio
async def test_neovim_is_asked_first_and_gets_plain_changes(lsp, project: Path, scripted_model) -> None:
    model = scripted_model(fix_turns([TEST_ADD]))
    client = await lsp(project, base_url=model.base_url, capabilities="neovim")
    result = await command(client, FIX, {"testId": TEST_ADD})
    assert result["status"] == "fixed" and result["applied"] is True
    (question,) = client.message_requests
    assert "Apply the change to calc.py?" in question.message
    assert [a.title for a in question.actions] == ["Apply", "Discard"]
    (params,) = client.edits
    assert params.edit.document_changes is None and params.edit.change_annotations is None
    (edits,) = params.edit.changes.values()
    assert list(params.edit.changes) == [uri(project / "calc.py")]
    assert apply_text_edits(CALC, edits) == FIXED_CALC
    check_progress(progress_values(client))


@pytest.mark.asyncio
async def test_discarding_in_neovim_sends_no_edit(lsp, project: Path, scripted_model) -> None:
    model = scripted_model(fix_turns([TEST_ADD]))
    client = await lsp(project, base_url=model.base_url, capabilities="neovim")
    client.message_answer = "Discard"
    result = await command(client, FIX, {"testId": TEST_ADD})
    assert result["status"] == "fixed"
    assert result["applied"] is False and result["failureReason"] == "discarded by the user"
    assert client.edits == []


@pytest.mark.asyncio
async def test_the_clients_token_and_unsaved_buffer_are_used(lsp, project: Path, scripted_model) -> None:
    buffer = "# unsaved edit\n" + CALC
    model = scripted_model(fix_turns([TEST_ADD]))
    client = await lsp(project, base_url=model.base_url)
    calc = open_document(client, project, "calc.py", text=buffer, version=3)
    token = new_token()
    result = await command(client, FIX, {"testId": TEST_ADD}, token=token)
    assert result["status"] == "fixed"
    check_progress(progress_values(client, token))
    assert not [t for t in client.progress_reports if t != token]  # no server-created token
    (params,) = client.edits
    (change,) = params.edit.document_changes
    assert change.text_document.uri == calc and change.text_document.version == 3
    assert apply_text_edits(buffer, change.edits) == "# unsaved edit\n" + FIXED_CALC


@pytest.mark.asyncio
async def test_a_rejected_edit_is_reported_not_assumed(lsp, project: Path, scripted_model) -> None:
    model = scripted_model(fix_turns([TEST_ADD]))
    client = await lsp(project, base_url=model.base_url)
    client.apply_answer = types.ApplyWorkspaceEditResult(applied=False, failure_reason="document is dirty")
    result = await command(client, FIX, {"testId": TEST_ADD})
    assert result["status"] == "fixed"
    assert result["applied"] is False and result["failureReason"] == "document is dirty"
    assert any("not applied: document is dirty" in m.message for m in client.messages)
    assert progress_values(client)[-1].message == "fixed, not applied: document is dirty"


@pytest.mark.asyncio
async def test_a_client_that_cannot_apply_edits_gets_the_diff(lsp, project: Path, scripted_model) -> None:
    model = scripted_model(fix_turns([TEST_ADD]))
    caps = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))
    client = await lsp(project, base_url=model.base_url, capabilities=caps)
    result = await command(client, FIX, {"testId": TEST_ADD})
    assert result["status"] == "fixed" and result["applied"] is False
    assert "cannot apply workspace edits" in result["failureReason"]
    assert "+    return a + b" in result["diff"]
    assert client.edits == []
    assert any("+    return a + b" in m.message for m in client.messages)


@pytest.mark.asyncio
async def test_the_test_under_the_cursor(lsp, project: Path, scripted_model) -> None:
    model = scripted_model(fix_turns([TEST_ADD]))
    client = await lsp(project, base_url=model.base_url)
    doc = open_document(client, project, TEST_FILE)
    result = await command(client, FIX, {"uri": doc, "position": {"line": ADD_LINE - 1, "character": 8}})
    assert result["status"] == "fixed" and result["testIds"] == [TEST_ADD]


@pytest.mark.asyncio
async def test_the_first_failing_test_of_a_file(lsp, project: Path, scripted_model) -> None:
    model = scripted_model(fix_turns([TEST_ADD]))
    client = await lsp(project, base_url=model.base_url)
    result = await command(client, FIX, {"uri": uri(project / TEST_FILE)})
    assert result["status"] == "fixed" and result["testIds"] == [TEST_ADD]
