"""Code actions: quickfix on fixloop diagnostics, "Fix this test" under the cursor (context.only respected);
code lenses above failing tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import ADD_DEF, ADD_LINE, FIX, RUN_TESTS, TEST_FILE, command, open_document, uri
from lsprotocol import types


def at(line: int) -> types.Range:
    position = types.Position(line=line, character=4)
    return types.Range(start=position, end=position)


async def actions(client, doc: str, line: int, diagnostics=(), only=None) -> list[types.CodeAction]:
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc),
            range=at(line),
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
        )
    )
    return list(found or [])


@pytest.mark.asyncio
async def test_quickfix_on_a_failing_test_diagnostic(lsp, project: Path) -> None:
    client = await lsp(project)
    doc = open_document(client, project, TEST_FILE)
    await command(client, RUN_TESTS, {"uri": doc})
    diagnostic = next(d for d in client.diagnostics[doc] if d.data["testId"].endswith("::test_add"))
    found = await actions(client, doc, ADD_LINE - 1, [diagnostic])
    assert len(found) == 1
    (action,) = found
    assert action.title == "Fix failing test with fixloop"
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
    assert action.command.command == FIX
    assert list(action.command.arguments) == [
        {"testId": f"{TEST_FILE}::test_add", "uri": doc, "root": uri(project)}
    ]


@pytest.mark.asyncio
async def test_fix_this_test_under_the_cursor(lsp, project: Path) -> None:
    client = await lsp(project)
    doc = open_document(client, project, TEST_FILE)
    (action,) = await actions(client, doc, 13)  # inside test_mul (parametrized)
    assert action.title == "Fix this test with fixloop"
    assert list(action.command.arguments) == [
        {"testId": f"{TEST_FILE}::test_mul", "uri": doc, "root": uri(project)}
    ]
    assert await actions(client, doc, 0) == []  # not inside a test
    assert await actions(client, doc, 13, only=[types.CodeActionKind.QuickFix]) == []
    assert len(await actions(client, doc, 13, only=[types.CodeActionKind.Refactor])) == 1


@pytest.mark.asyncio
async def test_code_lens_above_each_failing_test(lsp, project: Path) -> None:
    client = await lsp(project)
    doc = open_document(client, project, TEST_FILE)
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc))
    assert not await client.text_document_code_lens_async(params)
    await command(client, RUN_TESTS, {"uri": doc})
    lenses = await client.text_document_code_lens_async(params)
    by_test = {lens.command.arguments[0]["testId"]: lens for lens in lenses}
    assert set(by_test) == {f"{TEST_FILE}::test_add", f"{TEST_FILE}::test_slow"}
    add = by_test[f"{TEST_FILE}::test_add"]
    assert add.range.start.line == ADD_DEF - 1
    assert add.command.command == FIX and "fix" in add.command.title
